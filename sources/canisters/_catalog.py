"""What the viewer and ``canisters store list`` know of a store's conversations.

Their lengths and heads come through the :class:`~canisters.storage.Store`
protocol. Which conversation is a fork of which is kept by each backend in its
own place (the file backend's ``fork.json``, the ``parent`` and ``fork_at``
columns of the SQL backends' conversations table); it is read from there,
read-only, and a store of another kind shows no forks.
"""

from __future__ import annotations

import contextlib
import json
import os
import sqlite3
import threading
import urllib.parse
from collections.abc import Iterable
from datetime import datetime
from pathlib import Path
from typing import Any

import attrs

from ._files import open_regular as open_file
from .exceptions import CanistersError
from .storage import FileStore, SQLiteStore, Store


@attrs.frozen
class Fork:
    """Where a conversation was forked from."""

    parent: str
    """The conversation it was forked from."""
    at: str | None
    """The id of the last canister it shares with ``parent``."""


def fork_origins(store: Store, location: str | None = None) -> dict[str, Fork]:
    """Return each fork's origin, keyed by the fork's id (``{}`` when unknown).

    ``location`` is the store's URL, needed for PostgreSQL.
    """
    try:
        if isinstance(store, FileStore):
            return _file_forks(store)
        if isinstance(store, SQLiteStore):
            return _sqlite_forks(store.path)
        if location is not None and location.startswith(
            ("postgresql://", "postgres://")
        ):
            return _postgres_forks(location)
    except (OSError, sqlite3.Error, ValueError):
        return {}
    return {}


def _file_forks(store: FileStore) -> dict[str, Fork]:
    found: dict[str, Fork] = {}
    base = store.root / "conversations"
    for cid in store.conversations():
        path = base / cid / "fork.json"
        try:
            fd = open_file(path, os.O_RDONLY)
        except OSError:  # missing, a link, a FIFO: no fork shown
            continue
        with open(fd, "rb") as handle:
            try:
                document = json.loads(handle.read(1024 * 1024))
            except ValueError:
                continue
        if isinstance(document, dict) and isinstance(document.get("parent"), str):
            at = document.get("at")
            found[cid] = Fork(document["parent"], at if isinstance(at, str) else None)
    return found


def _sqlite_forks(path: str) -> dict[str, Fork]:
    uri = f"file:{urllib.parse.quote(str(Path(path).resolve()))}?mode=ro"
    with contextlib.closing(sqlite3.connect(uri, uri=True)) as connection:
        rows = connection.execute(
            "SELECT id, parent, fork_at FROM conversations WHERE parent IS NOT NULL"
        ).fetchall()
    return _forks(rows)


def _postgres_forks(location: str) -> dict[str, Fork]:
    try:
        import psycopg
    except ImportError:
        return {}
    try:
        with psycopg.connect(location) as connection:
            rows = connection.execute(
                "SELECT id, parent, fork_at FROM canisters_conversations "
                "WHERE parent IS NOT NULL"
            ).fetchall()
    except psycopg.Error:
        return {}
    return _forks(rows)


def _forks(rows: Iterable[Any]) -> dict[str, Fork]:
    return {
        str(cid): Fork(str(parent), at if isinstance(at, str) else None)
        for cid, parent, at in rows
        if isinstance(cid, str) and isinstance(parent, str)
    }


def children(origins: dict[str, Fork], conversation_id: str) -> list[tuple[str, Fork]]:
    """Return the forks of ``conversation_id``, sorted by id."""
    return sorted(
        (cid, fork) for cid, fork in origins.items() if fork.parent == conversation_id
    )


@attrs.frozen
class Row:
    """One conversation of a store, as listed."""

    id: str
    """The conversation id."""
    records: int | None
    """How many records its chain holds (``None``: unreadable)."""
    latest: datetime | None
    """The timestamp of its last canister, when known."""
    problem: str | None = None
    """Why it could not be read."""


class Catalog:
    """The conversations of a store with their last timestamps, cached by head.

    A conversation is loaded once to learn its last timestamp, then again only
    when its head changes.
    """

    def __init__(self, store: Store) -> None:
        self.store = store
        self._latest: dict[str, tuple[str, datetime | None]] = {}
        self._lock = threading.Lock()

    def rows(self) -> list[Row]:
        """Every conversation, newest first (unreadable and empty ones last)."""
        rows: list[Row] = []
        with self._lock:
            for cid in self.store.conversations():
                try:
                    records, head = self.store.head(cid)
                    cached = self._latest.get(cid)
                    if cached is not None and cached[0] == head:
                        latest = cached[1]
                    else:
                        conversation = self.store.load(cid, salvage=True)
                        latest = conversation[-1].timestamp if conversation else None
                        self._latest[cid] = (head, latest)
                except CanistersError as error:
                    rows.append(Row(cid, None, None, str(error)))
                    continue
                rows.append(Row(cid, records, latest))
        rows.sort(key=lambda row: row.id)
        rows.sort(
            key=lambda row: row.latest.timestamp() if row.latest else float("-inf"),
            reverse=True,
        )
        return rows
