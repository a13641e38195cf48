"""Search in the SQLite backend: an FTS5 table kept by the append's transaction.

Tables (beside those of :mod:`.sqlite`)::

    search_rows(id INTEGER PRIMARY KEY, conversation TEXT, seq INTEGER,
                canister TEXT, kind TEXT, text TEXT)     -- one row per canister
    search                                               -- FTS5 over its text

``search`` is an external-content FTS5 table over ``search_rows``; triggers keep
it in step, so a row written or deleted in a transaction changes the index in
that same transaction. The meta key ``search`` records that every record is in
the index (a store made before search is indexed once, when first opened for
writing).
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable, Iterable
from typing import Any, Final

from ..exceptions import StorageError
from . import _search
from ._common import Progress
from ._forks import fork_stops
from ._search import SearchHit

__all__ = ["SQLiteSearch", "lineage_stops"]

# Rows written per statement while rebuilding.
_BATCH: Final = 1000
# Matches past which a search walks the rows in order instead of sorting them.
_MANY: Final = 2000
_BY_MATCH: Final = (
    "SELECT r.conversation, r.seq, r.canister, r.kind, r.text "
    "FROM search JOIN search_rows AS r ON r.id = search.rowid WHERE search MATCH ?"
)
_BY_PLACE: Final = (
    "SELECT r.conversation, r.seq, r.canister, r.kind, r.text "
    "FROM search_rows AS r INDEXED BY search_rows_place "
    "WHERE r.id IN (SELECT rowid FROM search WHERE search MATCH ?)"
)
_ORDER: Final = " ORDER BY r.conversation, r.seq LIMIT ?"


def lineage_stops(lineage: list[tuple[str, int, str]]) -> list[tuple[str, int | None]]:
    """The logs that make the last conversation of a lineage (root first), each
    with the record its part ends before (``None``: the whole log)."""
    return [
        (lineage[index][0], stop)
        for index, stop in fork_stops([start for _id, start, _head in lineage])
    ]


class SQLiteSearch:
    """The search methods of :class:`~canisters.storage.SQLiteStore`."""

    __slots__ = ()

    _database: Any
    _codec: Any
    _content: Any
    _read_only: bool

    def _lineage(
        self, connection: sqlite3.Connection, conversation_id: str
    ) -> list[tuple[str, int, str]]:
        raise NotImplementedError  # pragma: no cover

    def _prepare_search(self) -> None:
        """Create the search tables when missing; index what the store holds."""
        if self._read_only:
            return
        with self._database.lock:
            connection = self._database.connection
            # Deleted and redacted records leave no bytes in freed pages.
            connection.execute("PRAGMA secure_delete = ON")
            if _ready(connection):
                return
        with self._database.write() as connection:
            if not _ready(connection):  # another process may have indexed it
                _create(connection)
                self._index_all(connection, None)

    def _index_all(
        self, connection: sqlite3.Connection, progress: Progress | None
    ) -> int:
        """Index every record (the search tables being empty)."""
        total = connection.execute("SELECT count(*) FROM records").fetchone()[0]
        count = 0
        batch: list[tuple[str, int, str, str, str]] = []
        fetch = self._content.get
        cursor = connection.execute(
            "SELECT conversation, seq, CAST(line AS BLOB) FROM records "
            "ORDER BY conversation, seq"
        )
        for done, (conversation_id, seq, line) in enumerate(cursor, 1):
            record = _search.line_record(line if type(line) is bytes else b"")
            found = _search.entry(seq, record, fetch) if record is not None else None
            if found is not None:
                batch.append((conversation_id, *found))
            if len(batch) >= _BATCH:
                count += _insert(connection, batch)
                batch = []
                if progress is not None:
                    progress(done, total)
        count += _insert(connection, batch)
        connection.execute(
            "INSERT INTO meta (key, value) VALUES ('search', '1') "
            "ON CONFLICT (key) DO UPDATE SET value = excluded.value"
        )
        if progress is not None:
            progress(total, total)
        return count

    def _index_search(
        self,
        connection: sqlite3.Connection,
        conversation_id: str,
        start: int,
        records: list[dict[str, Any]],
        blobs: Iterable[tuple[str, bytes]],
    ) -> None:
        """Index the records an append writes, in its transaction."""
        fetch = _search.fetcher(blobs, self._content.get)
        rows = []
        for offset, record in enumerate(records):
            found = _search.entry(start + offset, record, fetch)
            if found is not None:
                rows.append((conversation_id, *found))
        _insert(connection, rows)

    def search(
        self,
        query: str,
        *,
        limit: int = 20,
        conversation: str | None = None,
        kinds: Iterable[str] | None = None,
    ) -> list[SearchHit]:
        """Find canisters whose text holds every word of ``query`` (FTS5)."""
        terms, limit, wanted, within = _search.check_search(
            query, limit, conversation, kinds
        )
        sql = ""
        params: list[Any] = [_search.fts5_query(terms)]
        if wanted is not None:
            sql += f" AND r.kind IN ({', '.join('?' * len(wanted))})"
            params.extend(wanted)
        try:
            with self._database.lock:
                connection = self._database.connection
                _check_ready(connection)
                if within is None:
                    rows = connection.execute(
                        _first(connection, params[0]) + sql + _ORDER,
                        (*params, limit),
                    ).fetchall()
                    return [
                        _search.hit(terms, row[0], row[2], row[3], row[4])
                        for row in rows
                    ]
                return _within(
                    terms,
                    within,
                    lineage_stops(self._lineage(connection, within)),
                    lambda clause, extra: connection.execute(
                        _BY_MATCH + sql + clause, (*params, *extra)
                    ).fetchall(),
                    limit,
                )
        except sqlite3.Error as error:
            raise StorageError(f"search failed: {error}") from error

    def rebuild_search_index(self, *, progress: Progress | None = None) -> int:
        """Drop the search index and index every record again; return how many
        canisters it holds."""
        try:
            with self._database.write() as connection:
                for table in ("search", "search_rows"):
                    connection.execute(f"DROP TABLE IF EXISTS {table}")
                _create(connection)
                count = self._index_all(connection, progress)
                connection.execute("INSERT INTO search (search) VALUES ('optimize')")
            return count
        except sqlite3.Error as error:
            raise StorageError(f"rebuild_search_index failed: {error}") from error


def _first(connection: sqlite3.Connection, match: str) -> str:
    """The start of the statement reading the first hits in order: sorting the
    matches when they are few, else walking the rows in order until enough
    match (a frequent word would otherwise sort much of the store)."""
    many = connection.execute(
        "SELECT count(*) FROM (SELECT rowid FROM search WHERE search MATCH ? LIMIT ?)",
        (match, _MANY),
    ).fetchone()[0]
    return _BY_MATCH if many < _MANY else _BY_PLACE


def _create(connection: sqlite3.Connection) -> None:
    for statement in _search.SQLITE_SCHEMA:
        connection.execute(statement)


def _ready(connection: sqlite3.Connection) -> bool:
    row = connection.execute("SELECT value FROM meta WHERE key = 'search'").fetchone()
    return row is not None and row[0] == "1"


def _check_ready(connection: sqlite3.Connection) -> None:
    if not _ready(connection):
        raise StorageError(
            "the store has no search index yet: open it once for writing, or run "
            "'canisters store reindex'"
        )


def _insert(
    connection: sqlite3.Connection, rows: list[tuple[str, int, str, str, str]]
) -> int:
    if rows:
        connection.executemany(
            "INSERT INTO search_rows (conversation, seq, canister, kind, text) "
            "VALUES (?, ?, ?, ?, ?)",
            rows,
        )
    return len(rows)


def _within(
    terms: tuple[_search.Term, ...],
    conversation_id: str,
    stops: list[tuple[str, int | None]],
    select: Callable[[str, tuple[Any, ...]], list[Any]],
    limit: int,
) -> list[SearchHit]:
    """The hits of a search limited to one conversation and what it shares with
    its ancestors, in the conversation's order."""
    clauses = []
    extra: list[Any] = []
    for current, stop in stops:
        if stop is None:
            clauses.append("r.conversation = ?")
            extra.append(current)
        else:
            clauses.append("(r.conversation = ? AND r.seq < ?)")
            extra.extend((current, stop))
    rows = select(f" AND ({' OR '.join(clauses)})", tuple(extra))
    place = {current: index for index, (current, _stop) in enumerate(stops)}
    rows.sort(key=lambda row: (place[row[0]], row[1]))
    return [
        _search.hit(terms, conversation_id, row[2], row[3], row[4])
        for row in rows[:limit]
    ]
