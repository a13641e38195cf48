"""canisters.html: the page's structure, its escaping and what it embeds (read
with an HTML parser; tests/test_html_browser.py opens the pages in Chromium)."""

from __future__ import annotations

import base64
import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import canisters
from canisters import (
    Assistant,
    Conversation,
    ErrorInfo,
    File,
    Image,
    Invocation,
    Result,
    Text,
    User,
    html,
    storage,
)

from . import strategies
from .budget import examples
from .html_support import PDF, SVG_SCRIPT, Page, hostile, png, sample, wav


def _classes(element_attributes: dict[str, str]) -> set[str]:
    return set(element_attributes.get("class", "").split())


def test_a_page_is_self_contained_and_forbids_scripts() -> None:
    page = Page(html.render(sample(), title="run 42"))
    policy = [
        e.attributes["content"]
        for e in page.all("meta")
        if e.attributes.get("http-equiv") == "Content-Security-Policy"
    ]
    assert len(policy) == 1
    assert "default-src 'none'" in policy[0]
    assert "script-src" not in policy[0]  # falls back to default-src: none
    assert "img-src data:" in policy[0] and "media-src data:" in policy[0]
    assert not page.all("script") and not page.all("link") and not page.all("iframe")
    # Every resource the page names is inside it.
    for element in page.elements:
        for name in ("src", "srcset", "poster", "data"):
            if name in element.attributes:
                assert element.attributes[name].startswith("data:"), element
    assert page.all("title")[0] and "run 42" in page.text


def test_roles_steps_and_pairs() -> None:
    conversation = sample()
    page = Page(html.render(conversation))
    roles = [
        e.attributes["data-role"] for e in page.elements if "data-role" in e.attributes
    ]
    assert set(roles) == {
        "supervisor",
        "document",
        "user",
        "assistant",
        "invocation",
        "result",
    }
    assert len(roles) == len(conversation)  # each canister once
    steps = [e.attributes["data-step"] for e in page.all("section")]
    assert steps == ["1", "2"]
    pairs = [e for e in page.elements if "cv-pair" in _classes(e.attributes)]
    ids = [p.attributes["data-invocation-id"] for p in pairs]
    assert ids == [i.invocation_id for i in conversation.invocations()]
    # Every call is followed, inside its pair, by its result or a pending mark.
    order = page.elements
    for pair in pairs:
        start = order.index(pair)
        inner = [
            e
            for e in order[start + 1 : start + 30]
            if "data-role" in e.attributes or "cv-pending" in _classes(e.attributes)
        ]
        assert inner[0].attributes["data-role"] == "invocation"
        second = inner[1]
        assert second.attributes.get(
            "data-role"
        ) == "result" or "cv-pending" in _classes(second.attributes)
    errors = [
        e for e in page.elements if {"cv-result", "cv-error"} <= _classes(e.attributes)
    ]
    assert len(errors) == 1
    assert "NOT_FOUND" in page.text and "no record 7" in page.text
    assert "pending" in page.text and "no invocation" in page.text  # the orphan
    assert "handbook.pdf" in page.text and "application/pdf" in page.text
    assert f"{len(PDF)} B" in page.text
    # Usage totals: 320 in, 40 out.
    assert "320" in page.text and "360" in page.text


def test_reasoning_and_envelopes_are_folded() -> None:
    conversation = sample()
    page = Page(html.render(conversation))
    details = page.all("details")
    reasoning = [d for d in details if "cv-reasoning" in _classes(d.attributes)]
    envelopes = [d for d in details if "cv-envelope" in _classes(d.attributes)]
    assert len(reasoning) == 1 and "open" not in reasoning[0].attributes
    assert len(envelopes) == len(conversation)
    assert all("open" not in d.attributes for d in envelopes)
    for canister in conversation:
        assert canister.id in page.text  # the envelope holds the id


def test_media_are_embedded_only_as_what_a_page_may_embed() -> None:
    page = Page(html.render(sample()))
    images = [e.attributes["src"] for e in page.all("img")]
    assert images == ["data:image/png;base64," + base64.b64encode(png()).decode()]
    audio = [e.attributes["src"] for e in page.all("audio")]
    assert audio == ["data:audio/wav;base64," + base64.b64encode(wav()).decode()]
    # The remote video is a link, never loaded.
    assert not page.all("video")
    links = [e.attributes["href"] for e in page.all("a")]
    assert links == ["https://example.com/clip.mp4"]
    remote = Page(html.render(sample(), remote_media=True))
    assert [e.attributes["src"] for e in remote.all("video")] == [
        "https://example.com/clip.mp4"
    ]


@pytest.mark.parametrize(
    "part",
    [
        Image(data=SVG_SCRIPT, mime_type="image/svg+xml"),
        Image(data=SVG_SCRIPT, mime_type="image/png"),
        Image(url="data:image/svg+xml;base64," + base64.b64encode(SVG_SCRIPT).decode()),
        Image(url="data:image/png;base64," + base64.b64encode(SVG_SCRIPT).decode()),
        Image(data=b"<html><script>window.__pwned=1</script>", mime_type="image/gif"),
        Image(data=b"no known format at all", mime_type="image/png"),
        File(data=PDF, mime_type="application/pdf"),
    ],
    ids=["svg", "svg-as-png", "svg-url", "svg-url-as-png", "html", "unknown", "pdf"],
)
def test_what_a_page_may_not_embed_is_a_card(part: object) -> None:
    page = Page(html.render(User((part,))))  # type: ignore[arg-type]
    assert not page.all("img") and not page.all("object") and not page.all("embed")
    assert "svg" not in "".join(e.attributes.get("src", "") for e in page.elements)


def test_a_data_url_image_is_embedded_as_its_bytes() -> None:
    url = "data:image/png;base64," + base64.b64encode(png(4, 4)).decode()
    page = Page(html.render(User((Image(url=url),))))
    assert [e.attributes["src"] for e in page.all("img")] == [url]


def test_hostile_content_is_escaped() -> None:
    text = html.render(hostile())
    page = Page(text)
    assert not page.all("script") and not page.all("iframe") and not page.all("svg")
    assert not page.all("link") and not page.all("style")[1:]  # the page's own only
    for element in page.elements:
        for name, value in element.attributes.items():
            assert not name.startswith("on"), element
            if name in ("href", "src"):
                assert value.startswith(("data:image/png", "https://", "http://")), (
                    element
                )
                assert not value.lower().startswith("javascript:")
    assert [
        e for e in page.all("meta") if e.attributes.get("http-equiv") == "refresh"
    ] == []
    # The hostile strings are there, as text.
    assert "<script>window.__pwned=1;document.title='pwned'</script>" in page.text
    assert "javascript:window.__pwned=1" in page.text
    # The huge text is folded and cut, not dropped silently.
    assert "show all 200,033 characters" in page.text


def test_huge_texts_are_cut_at_max_text() -> None:
    page = Page(html.render(User("y" * 50_000), max_text=10_000))
    runs = [len(run) for run in re.findall("y{100,}", page.text)]
    assert sum(runs) == 10_000  # the first part, then the folded rest
    assert "40,000 more characters not shown" in page.text


def test_media_held_by_a_store_are_inlined(tmp_path: object) -> None:
    with storage.open_store(str(tmp_path)) as store:
        content_id = store.content.put(png(8, 8))
        conversation = Conversation(
            [User((Image(content_id=content_id, mime_type="image/png"),))]
        )
        without = Page(html.render(conversation))
        assert not without.all("img") and "content store" in without.text
        for given in (store, store.content):
            page = Page(html.render(conversation, store=given))
            assert [e.attributes["src"] for e in page.all("img")] == [
                "data:image/png;base64," + base64.b64encode(png(8, 8)).decode()
            ]
        missing = Conversation([User((Image(content_id="sha256:" + "0" * 64),))])
        assert "unavailable" in Page(html.render(missing, store=store)).text


def test_one_canister_or_a_list_renders() -> None:
    canister = Assistant("hello")
    for value in (canister, [canister], (canister,)):
        assert 'data-role="assistant"' in html.render(value)


@pytest.mark.parametrize(
    ("value", "options", "message"),
    [
        ("not a conversation", {}, "takes a conversation"),
        (42, {}, "takes a conversation"),
        ([1, 2], {}, "item 0 is not a canister"),
        (Conversation(), {"max_text": 0}, "max_text"),
        (Conversation(), {"title": 5}, "title"),
        (Conversation(), {"store": "a string"}, "store"),
    ],
)
def test_bad_arguments_raise_the_library_error(
    value: object, options: dict[str, object], message: str
) -> None:
    with pytest.raises(canisters.ModelError, match=message):
        html.render(value, **options)  # type: ignore[arg-type]


def test_notebook_display_is_bounded() -> None:
    picture = png(400, 400)
    big = Conversation(
        [
            User((Text("z" * 100_000), Image(data=picture, mime_type="image/png")))
            for _ in range(html.NOTEBOOK_LIMIT + 50)
        ]
    )
    shown = big._repr_html_()
    assert len(shown) < 12 * 1024 * 1024
    page = Page(shown)
    roles = [e for e in page.elements if "data-role" in e.attributes]
    assert len(roles) == html.NOTEBOOK_LIMIT
    assert "50 more canisters not shown" in page.text
    assert len(page.all("img")) * len(picture) <= 4 * 1024 * 1024
    assert not page.all("script") and not page.all("html")  # a fragment


def test_every_canister_displays_in_a_notebook() -> None:
    for canister in sample():
        shown = canister._repr_html_()  # type: ignore[attr-defined]
        assert f'data-id="{canister.id}"' in shown
        assert shown.startswith("<style>")


def test_a_lone_surrogate_becomes_a_replacement_character() -> None:
    page = html.render(User("kept from a body: \ud800 here"), title="odd \udfff")
    assert page.encode("utf-8")  # writable as UTF-8
    assert "kept from a body: \ufffd here" in page and "odd \ufffd" in page


_MARKUP = st.lists(
    st.sampled_from(
        [
            "<",
            ">",
            '"',
            "'",
            "&",
            "/",
            "=",
            " ",
            "script",
            "img",
            "svg",
            "on",
            "error",
            "load",
            "javascript:",
            "style",
            "iframe",
            "\u2028",
            "\ud800",
        ]
    ),
    max_size=20,
).map("".join)
_TAGS = {
    "html",
    "head",
    "meta",
    "title",
    "style",
    "body",
    "div",
    "h1",
    "h2",
    "p",
    "b",
    "span",
    "main",
    "section",
    "article",
    "time",
    "details",
    "summary",
    "dl",
    "dt",
    "dd",
    "figure",
    "figcaption",
    "img",
    "audio",
    "video",
    "a",
    "code",
    "ol",
    "li",
}


@settings(max_examples=examples(60), deadline=None)
@given(strategies.conversations, _MARKUP, _MARKUP)
def test_no_content_becomes_markup(
    conversation: Conversation, text: str, name: str
) -> None:
    """Whatever a conversation holds, a page and a notebook display hold only
    the writer's own elements, no handler attribute and no link or source the
    page may not have."""
    call = Invocation(name, {text: text}, invocation_id=text, policy=text)
    extra = [
        User((Text(text), Text(text, mime_type="text/html")), id=text or "x"),
        call,
        Result(call.invocation_id, name, text, error=ErrorInfo(text, text)),
    ]
    whole = conversation.extend(extra)
    for written in (html.render(whole, title=text), whole._repr_html_()):
        written.encode("utf-8")
        page = Page(written)
        assert {e.tag for e in page.elements} <= _TAGS
        for element in page.elements:
            for attribute, value in element.attributes.items():
                assert not attribute.startswith("on"), element
                if attribute == "src":
                    assert value.startswith(
                        ("data:image/", "data:audio/", "data:video/")
                    )
                if attribute == "href":
                    assert value.startswith(("http://", "https://")), element
        assert text.replace("\ud800", "\ufffd") in page.text
