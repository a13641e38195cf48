"""Stores for the viewer and ``store verify`` / ``store list`` tests, tampering by
backend, and ``canisters view`` run for real in a subprocess."""

from __future__ import annotations

import contextlib
import http.client
import select
import socket
import sqlite3
import subprocess
import sys
from collections.abc import Iterator
from datetime import datetime, timedelta, timezone
from pathlib import Path

from canisters import Assistant, User, storage

from .html_support import sample

BACKENDS = ["files", "sqlite", "postgres"]

FILLERS = 60
"""Conversations besides the sample ones (more than one page of the list)."""


def location_of(backend: str, tmp_path: Path, postgres: str | None = None) -> str:
    if backend == "files":
        return str(tmp_path / "store")
    if backend == "sqlite":
        return f"sqlite:///{tmp_path / 'store.db'}"
    assert postgres is not None
    return postgres


def fill(location: str, *, fillers: int = FILLERS, blobs: str | None = None) -> str:
    """Store the sample as ``chat``, a fork of it, ``damaged`` (three user
    messages, to tamper with) and ``fillers`` older conversations; return the
    fork's id."""
    options = {"blobs": blobs} if blobs else {}
    conversation = sample()
    old = datetime(2020, 1, 1, tzinfo=timezone.utc)
    with storage.open_store(location, **options) as store:
        for number in range(fillers):
            when = old + timedelta(days=number)
            store.extend(
                f"old-{number:03d}", [User(f"filler {number}", timestamp=when)]
            )
        store.extend("damaged", [User(f"message {n}") for n in range(3)])
        store.extend("chat", conversation)
        fork = store.fork("chat", conversation[3].id)  # after the first reply
        store.append(fork, Assistant("a different road"))
    return fork


def tamper(backend: str, location: str, conversation_id: str = "damaged") -> None:
    """Change ``message 1`` of the conversation's log behind the store's back."""
    if backend == "files":
        log = Path(location) / "conversations" / conversation_id / "messages.jsonl"
        data = log.read_bytes()
        assert b"message 1" in data
        log.write_bytes(data.replace(b"message 1", b"message X"))
    elif backend == "sqlite":
        path = location[len("sqlite:///") :]
        with contextlib.closing(sqlite3.connect(path)) as connection, connection:
            changed = connection.execute(
                "UPDATE records SET line = CAST(replace(CAST(line AS TEXT), "
                "'message 1', 'message X') AS BLOB) WHERE conversation = ?",
                (conversation_id,),
            ).rowcount
        assert changed
    else:
        import psycopg

        with psycopg.connect(location, autocommit=True) as connection:
            changed = connection.execute(
                "UPDATE canisters_records SET line = overlay(line placing 'X'::bytea "
                "from position('message 1'::bytea in line) + 8) "
                "WHERE conversation = %s AND position('message 1'::bytea in line) > 0",
                (conversation_id,),
            ).rowcount
        assert changed


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@contextlib.contextmanager
def viewing(location: str, *options: str) -> Iterator[str]:
    """Run ``canisters view LOCATION`` and yield its base URL while it serves."""
    port = free_port()
    process = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "canisters",
            "view",
            location,
            "--port",
            str(port),
            *options,
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert process.stdout is not None
        ready, _, _ = select.select([process.stdout], [], [], 60)
        line = process.stdout.readline() if ready else ""
        if "serving" not in line:
            process.kill()
            raise AssertionError(
                f"canisters view did not start: {line!r} {process.communicate()}"
            )
        yield f"http://127.0.0.1:{port}"
    finally:
        process.terminate()
        try:
            process.wait(timeout=20)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


def get(
    base: str, path: str, *, host: str | None = None, method: str = "GET"
) -> tuple[int, dict[str, str], bytes]:
    """Request ``path`` (sent as written, unnormalised) with an optional Host."""
    address = base.removeprefix("http://")
    name, port = address.rsplit(":", 1)
    connection = http.client.HTTPConnection(name, int(port), timeout=60)
    try:
        connection.putrequest(method, path, skip_host=host is not None)
        if host is not None:
            connection.putheader("Host", host)
        connection.endheaders()
        response = connection.getresponse()
        return (
            response.status,
            {k.lower(): v for k, v in response.getheaders()},
            response.read(),
        )
    finally:
        connection.close()
