"""A FIFO (or another file that is not a regular one) planted in a file store
in place of a blob, a log, its head or its fork note hangs no reader: what
reads it is refused with ``IntegrityError``, at once.

Someone allowed to write into the store (the threat the reliability page
describes) plants it; a reader that opened it blocking would wait forever for
a writer that never comes. Each operation runs in a thread that the test
unblocks (by opening the FIFO for writing) if it has not finished in time.
"""

from __future__ import annotations

import contextlib
import os
import subprocess
import sys
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

import canisters as c
from canisters import html, storage
from canisters.storage import open_store

PNG = b"\x89PNG\r\n\x1a\n" + bytes(range(256))
WAIT = 20.0

pytestmark = pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="POSIX FIFOs")


def _finishes(action: Callable[[], Any], fifo: Path) -> BaseException | None:
    """Run ``action``; return what it raised (``None`` when it returned). A
    hung reader is set free by a writer opening ``fifo``, and the test fails."""
    outcome: list[BaseException | None] = []

    def run() -> None:
        try:
            action()
        except BaseException as error:
            outcome.append(error)
        else:
            outcome.append(None)

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    thread.join(WAIT)
    if thread.is_alive():
        for _ in range(3):  # set the reader free, once per open it may retry
            with contextlib.suppress(OSError):
                os.close(os.open(fifo, os.O_WRONLY | os.O_NONBLOCK))
        thread.join(WAIT)
        pytest.fail(f"{action} blocked on the FIFO {fifo.name}")
    return outcome[0]


def _plant_fifo(path: Path) -> Path:
    path.unlink()
    os.mkfifo(path)
    return path


def _stored(tmp_path: Path) -> tuple[Path, str]:
    root = tmp_path / "store"
    with open_store(root) as store:
        image = c.Image(content_id=store.content.put(PNG), mime_type="image/png")
        store.append("chat", c.User(content=(c.Text("look"), image)))
        fork = store.fork("chat", store.load("chat")[0].id)
    return root, fork


def _refused(error: BaseException | None) -> None:
    assert isinstance(error, c.IntegrityError), repr(error)
    assert "not a regular file" in str(error)


def test_a_fifo_in_place_of_a_blob_is_refused(tmp_path: Path) -> None:
    root, _fork = _stored(tmp_path)
    with open_store(root, read_only=True) as store:
        assert isinstance(store, storage.FileStore)
        content_id = store.load("chat")[0].content[1].content_id
        fifo = _plant_fifo(store.content.path(content_id))
        _refused(_finishes(lambda: store.content.get(content_id), fifo))
        rendered: list[str] = []

        def render() -> None:
            rendered.append(html.render(store.load("chat"), store=store))

        assert _finishes(render, fifo) is None
        assert "not a regular file" in rendered[0]


@pytest.mark.parametrize("name", ["messages.jsonl", "head.json"])
def test_a_fifo_in_place_of_a_log_or_its_head_is_refused(
    tmp_path: Path, name: str
) -> None:
    root, _fork = _stored(tmp_path)
    fifo = _plant_fifo(root / "conversations" / "chat" / name)
    with open_store(root, read_only=True) as store:
        for action in (
            lambda: store.load("chat"),
            lambda: store.verify("chat"),
            lambda: store.head("chat"),
        ):
            error = _finishes(action, fifo)
            if error is not None or name == "messages.jsonl":
                _refused(error)


def test_a_fifo_in_place_of_a_fork_note_blocks_no_listing(tmp_path: Path) -> None:
    root, fork = _stored(tmp_path)
    fifo = _plant_fifo(root / "conversations" / fork / "fork.json")

    def listing() -> None:
        out = subprocess.run(
            [sys.executable, "-m", "canisters", "store", "list", str(root)],
            capture_output=True,
            text=True,
            timeout=WAIT,
            check=False,
        )
        assert "chat" in out.stdout, out

    assert _finishes(listing, fifo) is None
    with open_store(root, read_only=True) as store:
        _refused(_finishes(lambda: store.load(fork), fifo))
