"""The pages in a real headless Chromium: what shows, what folds, that nothing
from the content runs and that no request leaves the page (see
tests/browser_support.py for the browser)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from canisters import html

from .browser_support import Watched
from .html_support import hostile, sample
from .view_support import fill, viewing


def _open(watched: Watched, tmp_path: Path, text: str, name: str = "page.html") -> str:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    url = path.as_uri()
    watched.page.goto(url)
    return url


def test_the_page_shows_every_role_pair_and_medium(
    browser_page: Watched, tmp_path: Path
) -> None:
    conversation = sample()
    url = _open(browser_page, tmp_path, html.render(conversation, title="sample"))
    page: Any = browser_page.page
    roles = page.eval_on_selector_all(
        "[data-role]", "nodes => nodes.map(n => n.dataset.role)"
    )
    assert sorted(set(roles)) == [
        "assistant",
        "document",
        "invocation",
        "result",
        "supervisor",
        "user",
    ]
    # Each call beside its result: in one pair, side by side on a wide page.
    pairs = page.eval_on_selector_all(
        ".cv-pair",
        """pairs => pairs.map(p => {
            const [left, right] = p.children;
            const a = left.getBoundingClientRect(), b = right.getBoundingClientRect();
            return {id: p.dataset.invocationId, left: left.dataset.role,
                    right: right.dataset.role || right.className,
                    beside: Math.abs(a.top - b.top) < 2 && b.left > a.right,
                    error: right.classList.contains('cv-error')};
        })""",
    )
    expected = [i.invocation_id for i in conversation.invocations()]
    assert [p["id"] for p in pairs] == expected
    assert all(p["left"] == "invocation" and p["beside"] for p in pairs), pairs
    assert [p["right"] for p in pairs] == ["result", "result", "cv-pending"]
    assert [p["error"] for p in pairs] == [False, True, False]
    # The image is decoded and drawn; the audio is playable; the remote video
    # is a link.
    image = page.eval_on_selector(
        "img", "i => ({w: i.naturalWidth, h: i.naturalHeight, alt: i.alt})"
    )
    assert image == {"w": 64, "h": 48, "alt": "a red square"}
    assert page.eval_on_selector("audio", "a => a.src.startsWith('data:audio/wav')")
    assert page.locator("video").count() == 0
    assert page.locator("a[href='https://example.com/clip.mp4']").count() == 1
    assert page.locator("text=handbook.pdf").count() == 1
    # Reasoning is folded until clicked.
    thinking = page.locator("details.cv-reasoning .cv-text")
    assert not thinking.is_visible()
    page.click("details.cv-reasoning > summary")
    assert thinking.is_visible()
    assert "weather tool" in thinking.inner_text()
    # The envelope is one click away.
    envelope = page.locator("details.cv-envelope").first
    assert not envelope.locator("dl").is_visible()
    envelope.locator("summary").click()
    assert conversation[0].id in envelope.locator("dl").inner_text()
    assert browser_page.requests_besides(url) == []


def test_nothing_from_hostile_content_runs_or_loads(
    browser_page: Watched, tmp_path: Path
) -> None:
    page: Any = browser_page.page
    messages: list[str] = []
    page.on("console", lambda message: messages.append(message.text))
    url = _open(browser_page, tmp_path, html.render(hostile(), title="hostile"))
    # Give anything that could run a chance to: open every fold, hover, click.
    for summary in page.locator("summary").all():
        summary.click()
    page.mouse.move(200, 200)
    page.wait_for_timeout(200)
    assert page.evaluate("window.__pwned") is None
    assert page.title() == "hostile"
    assert page.url == url  # nothing navigated away
    assert page.locator("script").count() == 0
    assert page.locator("iframe").count() == 0
    shown = page.text_content("main")
    assert "<script>window.__pwned=1;document.title='pwned'</script>" in shown
    sources = page.eval_on_selector_all("img", "images => images.map(i => i.src)")
    assert all(src.startswith("data:image/png") for src in sources)
    assert browser_page.requests_besides(url) == []
    # Even a script the escaping let through would be refused by the policy.
    policy = page.eval_on_selector(
        "meta[http-equiv='Content-Security-Policy']", "m => m.content"
    )
    assert "default-src 'none'" in policy


def test_the_notebook_display_loads(browser_page: Watched, tmp_path: Path) -> None:
    conversation = sample().extend(hostile())
    fragment = conversation._repr_html_()
    # As a notebook front end does: the fragment inside a page of its own.
    url = _open(
        browser_page,
        tmp_path,
        f"<!DOCTYPE html><html><head><title>notebook</title></head><body>"
        f"<div class='output'>{fragment}</div></body></html>",
    )
    page: Any = browser_page.page
    assert page.locator("[data-role]").count() == len(conversation)
    assert page.locator(".cv-pair").count() == len(conversation.invocations())
    assert page.eval_on_selector("img", "i => i.naturalWidth") == 64
    # The fragment's style sheet applies (roles coloured apart).
    colours = page.eval_on_selector_all(
        "[data-role] .cv-role", "labels => labels.map(l => getComputedStyle(l).color)"
    )
    assert len(set(colours)) >= 5
    page.wait_for_timeout(100)
    assert page.evaluate("window.__pwned") is None
    assert page.title() == "notebook"
    assert browser_page.requests_besides(url) == []


def test_the_viewer_in_the_browser(browser_page: Watched, tmp_path: Path) -> None:
    location = str(tmp_path / "store")
    fork = fill(location, fillers=3)
    page: Any = browser_page.page
    with viewing(location) as base:
        page.goto(base + "/")
        first = page.locator("td.cv-id a").first
        assert first.inner_text() in ("chat", fork)  # newest first
        page.fill("input[name=q]", "cha")
        page.click("button")
        page.wait_for_url(base + "/?q=cha")
        assert page.locator("td.cv-id a").all_inner_texts() == ["chat"]
        page.click("text=chat")
        page.wait_for_url(base + "/c/chat")
        assert page.locator(".cv-verified").inner_text().startswith("hash chain intact")
        assert page.eval_on_selector("img", "i => i.naturalWidth") == 64
        assert page.locator(".cv-pair").count() == 3
        assert fork in page.locator(".cv-forks").inner_text()
        with page.expect_download() as download:
            page.click("text=download the document")
        saved = Path(download.value.path())
        assert json.loads(saved.read_bytes())["format"].startswith("canisters.")
        page.click(f"text={fork}")
        page.wait_for_url(f"{base}/c/{fork}")
        assert "forked from chat" in page.locator(".cv-forks").inner_text()
        assert page.locator("text=a different road").count() == 1
    assert browser_page.requests_besides(base) == []
