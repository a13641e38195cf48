"""Redaction in the PostgreSQL backend: one transaction that rewrites a record.

The row's old version stays in the table's heap as a dead tuple until
``VACUUM`` (or autovacuum) marks its space free, and in the write-ahead log and
any backup or replica until they are recycled: see the storage documentation.
"""

from __future__ import annotations

from collections.abc import Awaitable
from typing import TypeVar

from ..exceptions import CanisterNotFound
from . import _postgres as plans
from ._postgres import Plan, Query
from ._redaction import AUDIT, _now, audit_line, check_reason, redact_line
from ._retries import index_key, line_id
from ._search_sqlite import lineage_stops
from ._tombstone import REDACTED
from ._values import Redaction

__all__ = ["AsyncPostgresRedaction", "PostgresRedaction"]

T = TypeVar("T")


def redact(conversation_id: str, canister_id: str, reason: str) -> Plan[Redaction]:
    reason = check_reason(reason)
    key = index_key(canister_id)
    lineage = yield from plans._lineage(conversation_id)
    stops = lineage_stops([(each[0], each[1], each[2]) for each in lineage])
    for current, stop in reversed(stops):
        rows = yield Query(
            "SELECT indexed, length FROM canisters_conversations WHERE id = %s "
            "FOR UPDATE",
            (current,),
        )
        if rows and rows[0][0] < rows[0][1]:
            yield from plans._index(current, rows[0][0], rows[0][1])
        rows = yield Query(
            "SELECT i.seq, r.line FROM canisters_ids AS i JOIN canisters_records "
            "AS r ON r.conversation = i.conversation AND r.seq = i.seq "
            "WHERE i.conversation = %s AND i.canister = %s",
            (current, key),
            binary=True,
        )
        for seq, stored in rows:
            line = bytes(stored)
            if stop is not None and seq >= stop:
                continue
            if line_id(line) != key and REDACTED.encode() not in line:
                continue
            new, note = redact_line(current, line, reason, _now())
            if new is None:
                return note
            yield Query(
                "UPDATE canisters_records SET line = %s "
                "WHERE conversation = %s AND seq = %s",
                (new[:-1], current, seq),
            )
            yield Query(
                "DELETE FROM canisters_search WHERE conversation = %s AND seq = %s",
                (current, seq),
            )
            yield from plans.append_line(
                conversation_id, AUDIT, audit_line(conversation_id, note)
            )
            return note
    raise CanisterNotFound(canister_id)


class PostgresRedaction:
    """The redaction of :class:`~canisters.storage.postgres.PostgresStore`."""

    __slots__ = ()

    def _call(self, plan: Plan[T]) -> T:
        raise NotImplementedError  # pragma: no cover

    def redact(
        self, conversation_id: str, canister_id: str, *, reason: str
    ) -> Redaction:
        """Replace a canister's record by its tombstone (see ``Store.redact``)."""
        return self._call(redact(conversation_id, canister_id, reason))


class AsyncPostgresRedaction:
    """The redaction of the asyncio PostgreSQL store."""

    __slots__ = ()

    def _call(self, plan: Plan[T]) -> Awaitable[T]:
        raise NotImplementedError  # pragma: no cover

    async def redact(
        self, conversation_id: str, canister_id: str, *, reason: str
    ) -> Redaction:
        """Replace a canister's record by its tombstone (see ``Store.redact``)."""
        return await self._call(redact(conversation_id, canister_id, reason))
