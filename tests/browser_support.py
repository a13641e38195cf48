"""A real headless Chromium for the page tests, through Playwright.

Playwright drives the system's Chromium (Debian's ``chromium`` package, or the
executable named by ``CANISTERS_CHROMIUM``); its own browser download is not
used. Without a Chromium the browser tests are skipped, except in CI (the
``CI`` environment variable set), where they must run and fail instead.

One browser serves every test of a module (the browser tests live in one
module, so one browser a session). Not longer: while Playwright's sync API is
started, an asyncio loop runs on the main thread, and every later test calling
``asyncio.run`` would fail.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from typing import Any

import pytest

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
"""Chromium's switches: headless, and making no request of its own."""


def find_chromium() -> str | None:
    """The Chromium executable to drive, or ``None``."""
    for candidate in (
        os.environ.get("CANISTERS_CHROMIUM"),
        shutil.which("chromium"),
        shutil.which("chromium-browser"),
        "/usr/bin/chromium",
    ):
        if candidate and os.path.isfile(candidate) and os.access(candidate, os.X_OK):
            return candidate
    return None


def _unavailable(reason: str) -> None:
    if os.environ.get("CI"):
        pytest.fail(f"CI must run the browser tests, but {reason}")
    pytest.skip(reason)


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    """A headless Chromium, shared by the module's tests."""
    executable = find_chromium()
    if executable is None:
        _unavailable(
            "no Chromium found (apt-get install chromium, or set CANISTERS_CHROMIUM)"
        )
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        _unavailable("playwright is not installed (the test extra installs it)")
    with sync_playwright() as playwright:
        launched = playwright.chromium.launch(executable_path=executable, args=ARGS)
        try:
            yield launched
        finally:
            launched.close()


class Watched:
    """A browser page whose every request is recorded."""

    def __init__(self, page: Any) -> None:
        self.page = page
        self.requests: list[str] = []
        page.on("request", lambda request: self.requests.append(request.url))

    def requests_besides(self, *allowed_prefixes: str) -> list[str]:
        """The requests made to anything but ``allowed_prefixes``."""
        return [url for url in self.requests if not url.startswith(allowed_prefixes)]


@pytest.fixture
def browser_page(browser: Any) -> Iterator[Watched]:
    """A fresh page (its own context) whose requests are recorded."""
    context = browser.new_context(viewport={"width": 1000, "height": 800})
    try:
        yield Watched(context.new_page())
    finally:
        context.close()
