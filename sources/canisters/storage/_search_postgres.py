"""Search in the PostgreSQL backend: a ``tsvector`` column with a GIN index.

Table (beside those of :mod:`.postgres`)::

    canisters_search(conversation TEXT, seq BIGINT, canister TEXT, kind TEXT,
                     text TEXT, words TSVECTOR)   -- one row per canister
                                                  -- GIN index on words

``words`` holds the distinct words of the text as Python reads them (lower-cased,
without positions: ``array_to_tsvector``), so that the server's text-search
parser and dictionaries, which read URLs, numbers and hyphens their own way,
never make PostgreSQL find other canisters than SQLite and the file backend.
Rows are written by the append's transaction (its last round trip).
"""

from __future__ import annotations

from collections.abc import Awaitable, Iterable
from typing import Any, Final, TypeVar

from ..exceptions import StorageError
from . import _postgres as plans
from . import _search
from ._common import STORED, STORED_MARK, Progress
from ._postgres import Backend, Plan, Query
from ._search import SearchHit
from ._search_sqlite import lineage_stops

__all__ = ["AsyncPostgresSearch", "PostgresSearch"]

T = TypeVar("T")

SCHEMA: Final = (
    # Ids in the "C" collation, as conversations() sorts them: the primary key
    # is then in the order of the hits, and the planner may read a frequent
    # word's first hits through it rather than sort every match.
    'CREATE TABLE IF NOT EXISTS canisters_search (conversation TEXT COLLATE "C" '
    "NOT NULL, "
    "seq BIGINT NOT NULL, canister TEXT NOT NULL, kind TEXT NOT NULL, "
    "text TEXT NOT NULL, words TSVECTOR NOT NULL, PRIMARY KEY (conversation, seq))",
    "CREATE INDEX IF NOT EXISTS canisters_search_words "
    "ON canisters_search USING GIN (words)",
)
# Matches past which a search reads the rows in order instead of sorting them.
_MANY: Final = 2000
_SELECT: Final = (
    "SELECT conversation, seq, canister, kind, text FROM canisters_search "
    "WHERE words @@ %s::tsquery"
)


def create_schema() -> Plan[None]:
    """Create the search table when missing; index what the store holds once."""
    yield Query("SELECT pg_advisory_xact_lock(%s)", (plans._SCHEMA_LOCK,))
    for statement in SCHEMA:
        yield Query(statement)
    rows = yield Query("SELECT value FROM canisters_meta WHERE key = 'search'")
    if not rows or rows[0][0] != "1":
        yield from _index_all(None, None)


def _stored_texts(record: dict[str, Any]) -> list[str]:
    found = []
    parts = record.get("content")
    for part in parts if type(parts) is list else ():
        stored = part.get(STORED) if type(part) is dict else None
        if type(stored) is dict and type(stored.get("text")) is str:
            found.append(stored["text"])
    return found


def _index_all(backend: Backend | None, progress: Progress | None) -> Plan[int]:
    """Index every record (the table being empty), streaming the logs."""
    rows = yield Query("SELECT count(*) FROM canisters_records")
    total, done, count = rows[0][0], 0, 0
    yield plans._declare(
        "reindex",
        "SELECT conversation, seq, line FROM canisters_records "
        "ORDER BY conversation, seq",
    )
    while batch := (yield plans._next("reindex")):
        by_conversation: dict[str, list[tuple[int, str, str, str]]] = {}
        decoded = []
        wanted: list[str] = []
        for conversation_id, seq, line in batch:
            data = bytes(line)
            record = _search.line_record(data)
            if record is not None:
                decoded.append((conversation_id, seq, record))
                if STORED_MARK in data:
                    wanted.extend(_stored_texts(record))
        supply: dict[str, bytes | StorageError] = {}
        if wanted:
            if backend is None:  # opening: the database's own blobs
                found = yield Query(
                    "SELECT id, data FROM canisters_blobs WHERE id = ANY(%s)",
                    (list(dict.fromkeys(wanted)),),
                    binary=True,
                )
                supply = {key: bytes(data) for key, data in found}
            else:
                supply = yield from plans._fetch(backend, list(dict.fromkeys(wanted)))
        fetch = plans._supplier(supply, None)
        for conversation_id, seq, record in decoded:
            try:
                found_entry = _search.entry(seq, record, fetch)
            except StorageError:  # a blob missing: its text is left out
                continue
            if found_entry is not None:
                by_conversation.setdefault(conversation_id, []).append(found_entry)
        for conversation_id, entries in by_conversation.items():
            yield Query(*_search.postgres_insert(conversation_id, entries))
            count += len(entries)
        done += len(batch)
        if progress is not None:
            progress(done, total)
    yield Query(
        "INSERT INTO canisters_meta (key, value) VALUES ('search', '1') "
        "ON CONFLICT (key) DO UPDATE SET value = excluded.value"
    )
    return count


def rebuild(backend: Backend, progress: Progress | None) -> Plan[int]:
    """Empty the index and index every record again."""
    yield Query("TRUNCATE canisters_search")
    return (yield from _index_all(backend, progress))


def search(
    query: str,
    limit: int,
    conversation: str | None,
    kinds: Iterable[str] | None,
) -> Plan[list[SearchHit]]:
    terms, limit, wanted, within = _search.check_search(
        query, limit, conversation, kinds
    )
    sql = _SELECT
    params: list[Any] = [_search.tsquery(terms)]
    if wanted is not None:
        sql += " AND kind = ANY(%s)"
        params.append(list(wanted))
    if within is None:
        counted = yield Query(
            f"SELECT count(*) FROM ({sql} LIMIT {_MANY}) AS matches",
            tuple(params),
            planned=False,
        )
        if counted[0][0] >= _MANY:
            # A frequent word: read the rows in the order of the hits (the
            # primary key) until enough match, rather than sort every match.
            yield Query("SET LOCAL enable_bitmapscan = off")
            yield Query("SET LOCAL enable_seqscan = off")
        rows = yield Query(
            sql + " ORDER BY conversation, seq LIMIT %s",
            (*params, limit),
            planned=False,
        )
        return [_search.hit(terms, row[0], row[2], row[3], row[4]) for row in rows]
    lineage = yield from plans._lineage(within)
    stops = lineage_stops([(each[0], each[1], each[2]) for each in lineage])
    clauses = []
    for current, stop in stops:
        params.append(current)
        if stop is None:
            clauses.append("conversation = %s")
        else:
            clauses.append("(conversation = %s AND seq < %s)")
            params.append(stop)
    rows = yield Query(
        sql + f" AND ({' OR '.join(clauses)})", tuple(params), planned=False
    )
    place = {current: index for index, (current, _stop) in enumerate(stops)}
    ordered = sorted(rows, key=lambda row: (place[row[0]], row[1]))
    return [
        _search.hit(terms, within, row[2], row[3], row[4]) for row in ordered[:limit]
    ]


class PostgresSearch:
    """The search methods of :class:`~canisters.storage.postgres.PostgresStore`."""

    __slots__ = ()

    _plans: Backend

    def _call(self, plan: Plan[T]) -> T:
        raise NotImplementedError  # pragma: no cover

    def search(
        self,
        query: str,
        *,
        limit: int = 20,
        conversation: str | None = None,
        kinds: Iterable[str] | None = None,
    ) -> list[SearchHit]:
        """Find canisters whose text holds every word of ``query`` (GIN index)."""
        return self._call(search(query, limit, conversation, kinds))

    def rebuild_search_index(self, *, progress: Progress | None = None) -> int:
        """Empty the search index and index every record again (one transaction)."""
        return self._call(rebuild(self._plans, progress))


class AsyncPostgresSearch:
    """The search methods of the asyncio PostgreSQL store."""

    __slots__ = ()

    _plans: Backend

    def _call(self, plan: Plan[T]) -> Awaitable[T]:
        raise NotImplementedError  # pragma: no cover

    async def search(
        self,
        query: str,
        *,
        limit: int = 20,
        conversation: str | None = None,
        kinds: Iterable[str] | None = None,
    ) -> list[SearchHit]:
        """Find canisters whose text holds every word of ``query`` (GIN index)."""
        return await self._call(search(query, limit, conversation, kinds))

    async def rebuild_search_index(self, *, progress: Progress | None = None) -> int:
        """Empty the search index and index every record again (one transaction)."""
        return await self._call(rebuild(self._plans, progress))
