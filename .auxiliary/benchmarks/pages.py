"""Pages of large conversations: writing them, and opening and scrolling them in
a browser.

Run: ``python .auxiliary/benchmarks/pages.py [--sizes 1000,10000] [--repeat 3]``
(needs ``playwright`` and a Chromium: Debian's ``chromium``, or the executable
named by ``CANISTERS_CHROMIUM``).

The conversation is the agent corpus (:mod:`corpus`: tool calls with nested
arguments and their results, long pasted texts, images as bytes and as URLs),
with a reasoning part of about 400 characters added to every assistant reply.
For each size it prints:

- ``render``: :func:`canisters.html.render`, median of the repeats, and the
  page's size;
- ``open``: the browser's navigation to the page's file, until its ``load``
  event, as the page's own Navigation Timing reports it (``responseStart`` to
  ``domContentLoadedEventEnd`` and to ``loadEventEnd``), and its first
  contentful paint;
- ``scroll``: the page scrolled from top to bottom in steps of one window
  height (at most 400 steps, evenly spread), each step timed until the browser
  has drawn two frames after it: median, 95th percentile and worst step;
- ``jump``: a jump to the very end and back to the top, each until drawn;
- ``unfold``: opening the reasoning fold nearest the middle of the page, until
  drawn.

A step that takes well under 50 ms is not felt; a page "stalls" when steps
take hundreds of milliseconds.
"""

from __future__ import annotations

import argparse
import functools
import os
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

import attrs

sys.path.insert(0, str(Path(__file__).resolve().parent))

import corpus
import peers

from canisters import Conversation, Reasoning, Role, html

print = functools.partial(print, flush=True)

ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]

_DRAWN = "() => new Promise(r => requestAnimationFrame(() => requestAnimationFrame(r)))"
_STEP = """async (y) => {
    const start = performance.now();
    window.scrollTo(0, y);
    await new Promise(r => requestAnimationFrame(() => requestAnimationFrame(r)));
    return performance.now() - start;
}"""
_UNFOLD = """async () => {
    const folds = document.querySelectorAll('details.cv-reasoning');
    const fold = folds[Math.floor(folds.length / 2)];
    fold.scrollIntoView();
    await new Promise(r => requestAnimationFrame(() => requestAnimationFrame(r)));
    const start = performance.now();
    fold.open = true;
    await new Promise(r => requestAnimationFrame(() => requestAnimationFrame(r)));
    return performance.now() - start;
}"""
_TIMING = """() => {
    const n = performance.getEntriesByType('navigation')[0];
    const paint = performance.getEntriesByName('first-contentful-paint')[0];
    return {dom: n.domContentLoadedEventEnd - n.responseStart,
            load: n.loadEventEnd - n.responseStart,
            paint: paint ? paint.startTime - n.responseStart : null,
            height: document.documentElement.scrollHeight,
            inner: window.innerHeight};
}"""


def conversation(size: int) -> Conversation:
    """The agent corpus of ``size`` messages, each reply with its reasoning."""
    base = peers.canisters_from_specs(corpus.conversation(size, seed=0))
    thought = Reasoning(
        "Let me think about what the user needs here. " * 9,
        signature="c2lnbmF0dXJl",
        provider="anthropic",
    )
    items = [
        attrs.evolve(c, content=(thought, *c.content))  # type: ignore[attr-defined]
        if c.role is Role.Assistant
        else c
        for c in base
    ]
    return Conversation(items)


def find_chromium() -> str:
    for candidate in (
        os.environ.get("CANISTERS_CHROMIUM"),
        shutil.which("chromium"),
        shutil.which("chromium-browser"),
    ):
        if candidate:
            return candidate
    raise SystemExit("no Chromium found: apt-get install chromium")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="1000,10000")
    parser.add_argument("--repeat", type=int, default=3)
    options = parser.parse_args()
    sizes = [int(s) for s in options.sizes.split(",")]
    from playwright.sync_api import sync_playwright

    directory = Path(tempfile.mkdtemp(prefix="canisters-html-"))
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=find_chromium(), args=ARGS)
        version = browser.version
        for size in sizes:
            chat = conversation(size)
            times = []
            for _ in range(options.repeat):
                start = time.perf_counter()
                text = html.render(chat, title=f"{size} messages")
                times.append(time.perf_counter() - start)
            path = directory / f"page-{size}.html"
            path.write_text(text, encoding="utf-8")
            images = text.count("<img ")
            print(
                f"{size:>6,} messages  render {statistics.median(times) * 1000:7.0f} ms"
                f"  page {len(text.encode()) / 1e6:5.1f} MB ({images} images inline)"
            )
            opened, steps, jumps, unfolds, requests = [], [], [], [], []
            for _ in range(options.repeat):
                context = browser.new_context(viewport={"width": 1200, "height": 900})
                page = context.new_page()
                page.on("request", lambda r, seen=requests: seen.append(r.url))
                page.goto(path.as_uri(), wait_until="load")
                page.evaluate(_DRAWN)
                timing = page.evaluate(_TIMING)
                opened.append(timing)
                height, inner = timing["height"], timing["inner"]
                count = min(400, max(1, height // inner))
                for n in range(1, count + 1):
                    steps.append(page.evaluate(_STEP, int(height * n / count)))
                page.evaluate(_STEP, 0)
                jumps.append(page.evaluate(_STEP, height))
                jumps.append(page.evaluate(_STEP, 0))
                unfolds.append(page.evaluate(_UNFOLD))
                context.close()
            dom = statistics.median(t["dom"] for t in opened)
            load = statistics.median(t["load"] for t in opened)
            paints = [t["paint"] for t in opened if t["paint"] is not None]
            paint = f"{statistics.median(paints):.0f} ms" if paints else "n/a"
            steps.sort()
            p95 = steps[int(len(steps) * 0.95) - 1] if len(steps) > 1 else steps[0]
            print(
                f"{'':>15}open    DOM ready {dom:6.0f} ms, load {load:6.0f} ms, "
                f"first paint {paint}; page height {opened[0]['height']:,} px"
            )
            print(
                f"{'':>15}scroll  {len(steps)} steps: median "
                f"{statistics.median(steps):5.1f} ms, p95 {p95:5.1f} ms, "
                f"worst {steps[-1]:5.1f} ms"
            )
            print(
                f"{'':>15}jump    to the end and back: worst {max(jumps):5.1f} ms; "
                f"unfold reasoning: worst {max(unfolds):5.1f} ms"
            )
            outside = [u for u in requests if not u.startswith("file://")]
            print(f"{'':>15}requests beyond the page's file: {len(outside)}")
        browser.close()
    print(
        f"Chromium {version}, CPython {sys.version.split()[0]}, "
        f"{os.cpu_count()} CPUs; command: python .auxiliary/benchmarks/pages.py "
        + " ".join(sys.argv[1:])
    )
    shutil.rmtree(directory)


if __name__ == "__main__":
    main()
