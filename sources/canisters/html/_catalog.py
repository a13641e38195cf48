"""What the viewer and ``canisters store list`` know of a store's conversations.

Their lengths, heads and forks come through the
:class:`~canisters.storage.Store` protocol.
"""

from __future__ import annotations

import threading
from datetime import datetime

import attrs

from ..exceptions import CanistersError
from ..storage import Fork, Store


def origin(store: Store, conversation_id: str) -> Fork | None:
    """Return where the conversation was forked (``None``: not a fork, or its
    fork point cannot be read; the conversation's own page says why)."""
    try:
        return store.origin(conversation_id)
    except CanistersError:
        return None


def forks(store: Store, conversation_id: str) -> list[Fork]:
    """Return the forks of the conversation (none when they cannot be read)."""
    try:
        return store.forks(conversation_id)
    except CanistersError:
        return []


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
