"""Take the screenshots of documentation/viewing.rst.

Run: ``python .auxiliary/scripts/screenshots.py`` (needs the ``view`` and
``test`` extras and a Chromium: Debian's ``chromium``, or the executable named
by ``CANISTERS_CHROMIUM``). It stores the example conversation
(``documentation/examples/store_example.py``) in a temporary store, then
photographs, into ``documentation/_static/``:

- ``viewing-page.png``: the page ``canisters show --html`` writes, its
  reasoning unfolded (the postcard, the tool call beside its result);
- ``viewing-list.png``: ``canisters view``'s list of conversations;
- ``viewing-conversation.png``: ``canisters view``'s page of the conversation,
  with its verification and its fork;
- ``viewing-citations.png``: the page of Anthropic's documented web search
  answer (``tests/data/providers/anthropic/docs-web-search-history-request.json``),
  the search the provider ran unfolded beside what it found, the answer's
  citation numbered under it.
"""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
STATIC = ROOT / "documentation" / "_static"
CITED = ROOT / "tests/data/providers/anthropic/docs-web-search-history-request.json"
SHOTS = (
    "viewing-page.png",
    "viewing-list.png",
    "viewing-conversation.png",
    "viewing-citations.png",
)
ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--hide-scrollbars",
]


def chromium() -> str:
    for candidate in (
        os.environ.get("CANISTERS_CHROMIUM"),
        shutil.which("chromium"),
        shutil.which("chromium-browser"),
    ):
        if candidate:
            return candidate
    raise SystemExit("no Chromium found: apt-get install chromium")


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def whole(page: object, path: Path) -> None:
    """Photograph the whole page: the window made as tall as the page first,
    since the browser draws only the messages near the window."""
    height = page.evaluate("document.documentElement.scrollHeight")  # type: ignore[attr-defined]
    page.set_viewport_size({"width": 980, "height": height})  # type: ignore[attr-defined]
    page.wait_for_timeout(200)  # type: ignore[attr-defined]
    page.screenshot(path=str(path))  # type: ignore[attr-defined]
    page.set_viewport_size({"width": 980, "height": 760})  # type: ignore[attr-defined]


def main() -> None:
    from playwright.sync_api import sync_playwright

    STATIC.mkdir(parents=True, exist_ok=True)
    work = Path(tempfile.mkdtemp(prefix="canisters-shots-"))
    store = "example-store"  # relative: the list page's title
    canisters = [sys.executable, "-m", "canisters"]
    example = ROOT / "documentation" / "examples" / "store_example.py"
    subprocess.run([sys.executable, str(example), store], check=True, cwd=work)
    page_file = work / "postcard.html"
    subprocess.run(
        [*canisters, "show", "--html", store, "postcard", "-o", str(page_file)],
        check=True,
        cwd=work,
    )
    cited = work / "web-search.json"
    cited.write_text(json.dumps(json.loads(CITED.read_text())["payload"]))
    cited_page = work / "web-search.html"
    show = [*canisters, "show", "--html", "--from", "anthropic"]
    subprocess.run(
        [*show, cited.name, "-o", cited_page.name],  # relative: the page's title
        check=True,
        cwd=work,
    )
    port = free_port()
    server = subprocess.Popen(
        [*canisters, "view", store, "--port", str(port)],
        stdout=subprocess.PIPE,
        text=True,
        cwd=work,
    )
    try:
        assert server.stdout is not None
        line = server.stdout.readline()
        assert "serving" in line, line
        base = f"http://127.0.0.1:{port}"
        with sync_playwright() as playwright:
            browser = playwright.chromium.launch(executable_path=chromium(), args=ARGS)
            context = browser.new_context(
                viewport={"width": 980, "height": 760}, device_scale_factor=1
            )
            page = context.new_page()
            page.goto(page_file.as_uri())
            page.click("details.cv-reasoning > summary")
            whole(page, STATIC / "viewing-page.png")
            page.goto(base + "/")
            page.screenshot(
                path=str(STATIC / "viewing-list.png"),
                clip={"x": 0, "y": 0, "width": 980, "height": 200},
            )
            page.goto(base + "/c/postcard")
            whole(page, STATIC / "viewing-conversation.png")
            page.goto(cited_page.as_uri())
            page.click("details.cv-provided > summary")
            whole(page, STATIC / "viewing-citations.png")
            browser.close()
    finally:
        server.terminate()
        server.wait(timeout=20)
        shutil.rmtree(work)
    for name in SHOTS:
        print(STATIC / name, f"{(STATIC / name).stat().st_size:,} bytes")


if __name__ == "__main__":
    main()
