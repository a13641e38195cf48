"""Forks: where one was made (:class:`Fork`) and which logs make a fork's chain."""

from __future__ import annotations

from collections.abc import Sequence

import attrs

from ..exceptions import IntegrityError

__all__ = ["Fork", "fork_stops", "make_fork"]


@attrs.frozen
class Fork:
    """Where a fork was made: what :meth:`~canisters.storage.Store.origin`
    returns for a fork, and :meth:`~canisters.storage.Store.forks` for each fork
    of a conversation."""

    conversation_id: str
    """The fork's id."""
    parent: str
    """The conversation it was forked from."""
    at: str
    """The id of the canister it was forked at: the last one it shares with
    ``parent``."""
    records: int
    """How many records it shares with ``parent`` (its chain continues from
    there)."""


def make_fork(
    conversation_id: str, parent: object, at: object, records: object
) -> Fork:
    """Return the :class:`Fork` a backend keeps, or raise ``IntegrityError``
    naming the conversation when what it keeps is not one."""
    if type(parent) is not str or type(at) is not str or type(records) is not int:
        raise IntegrityError(
            f"{conversation_id!r}: malformed fork point (parent, canister, records)"
        )
    return Fork(conversation_id, parent, at, records)


def fork_stops(starts: Sequence[int]) -> list[tuple[int, int | None]]:
    """Say which logs of a lineage make a conversation, and where each stops.

    ``starts`` holds the number of the first record of each log of the lineage,
    root first and the conversation itself last (a fork's fork point). A fork
    of a fork may fork inside what its parent inherited, before the parent's
    own first record: each ancestor then stops at the smallest fork point among
    its descendants, and one whose records all come after it adds nothing.
    Returns ``(index, stop)`` for each log that adds records, root first
    (``stop`` is ``None`` for the conversation itself).
    """
    kept: list[tuple[int, int | None]] = []
    stop: int | None = None
    for index in range(len(starts) - 1, -1, -1):
        if stop is None or starts[index] < stop:
            kept.append((index, stop))
            stop = starts[index]
    kept.reverse()
    return kept
