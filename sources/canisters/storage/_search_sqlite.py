"""Search in the SQLite backend: an FTS5 table kept by the append's transaction.

Tables (beside those of :mod:`.sqlite`)::

    search_rows(id INTEGER PRIMARY KEY, conversation TEXT, seq INTEGER,
                canister TEXT, kind TEXT, text TEXT)     -- one row per canister
    search                                               -- FTS5 over its text

``search`` is an external-content FTS5 table over ``search_rows``. An append
writes its rows to ``search_rows`` in its own transaction; the FTS table takes
them in batches (one statement for many rows, where one FTS write per append
cost more than the append): the rows up to the meta key ``search_indexed`` are
in it, and a search reads the rows past it directly. Each batch moves the mark
in the transaction that fills the FTS table, and a trigger takes a deleted row
out of the FTS table in the transaction that deletes it, so a crash leaves the
two in step. The meta key ``search`` records that every record is in
``search_rows`` (a store made before search is indexed once, when first opened
for writing).
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
# Rows past the mark after which an append fills the FTS table.
_PENDING: Final = 256
_MARK: Final = "SELECT CAST(value AS INTEGER) FROM meta WHERE key = 'search_indexed'"
_PENDING_ROWS: Final = (
    "SELECT r.conversation, r.seq, r.canister, r.kind, r.text "
    "FROM search_rows AS r WHERE r.id > ?"
)
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
            if _ready(connection) and not _older(connection):
                return
        with self._database.write() as connection:
            if _older(connection):  # its triggers indexed every row
                connection.execute(
                    "INSERT INTO meta (key, value) VALUES ('search_indexed', "
                    "(SELECT CAST(coalesce(max(id), 0) AS TEXT) FROM search_rows)) "
                    "ON CONFLICT (key) DO UPDATE SET value = excluded.value"
                )
                _create(connection)
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
        catch_up(connection)
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
        if _insert(connection, rows):
            pending = connection.execute(
                "SELECT (SELECT coalesce(max(id), 0) FROM search_rows) - "
                "CAST(value AS INTEGER) FROM meta WHERE key = 'search_indexed'"
            ).fetchone()
            if pending is None or pending[0] >= _PENDING:
                catch_up(connection)

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
            if not self._read_only:
                with self._database.lock:
                    waiting = _waiting(self._database.connection)
                if waiting:
                    with self._database.write() as connection:
                        catch_up(connection)
            with self._database.lock:
                connection = self._database.connection
                _check_ready(connection)
                row = connection.execute(_MARK).fetchone()
                mark = row[0] if row is not None else 0

                def pending(clause: str, extra: tuple[Any, ...]) -> list[Any]:
                    """The rows past the mark that hold every term."""
                    found = connection.execute(
                        _PENDING_ROWS + sql + clause, (mark, *params[1:], *extra)
                    ).fetchall()
                    return [row for row in found if _search.matches(terms, row[4])]

                if within is None:
                    rows = connection.execute(
                        _first(connection, params[0]) + sql + _ORDER,
                        (*params, limit),
                    ).fetchall()
                    rows = _merged(rows, pending("", ()))
                    rows.sort(key=lambda row: (row[0], row[1]))
                    return [
                        _search.hit(terms, row[0], row[2], row[3], row[4])
                        for row in rows[:limit]
                    ]
                return _within(
                    terms,
                    within,
                    lineage_stops(self._lineage(connection, within)),
                    lambda clause, extra: _merged(
                        connection.execute(
                            _BY_MATCH + sql + clause, (*params, *extra)
                        ).fetchall(),
                        pending(clause, extra),
                    ),
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
                connection.execute("DELETE FROM meta WHERE key = 'search_indexed'")
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


def catch_up(connection: sqlite3.Connection) -> None:
    """Put the rows past the mark into the FTS table, in one statement, and move
    the mark to the last row (in the caller's transaction)."""
    row = connection.execute(_MARK).fetchone()
    mark = row[0] if row is not None else 0
    connection.execute(
        "INSERT INTO search (rowid, text) SELECT id, text FROM search_rows "
        "WHERE id > ?",
        (mark,),
    )
    connection.execute(
        "INSERT INTO meta (key, value) VALUES ('search_indexed', "
        "(SELECT CAST(max(?, coalesce(max(id), 0)) AS TEXT) FROM search_rows)) "
        "ON CONFLICT (key) DO UPDATE SET value = excluded.value",
        (mark,),
    )


def _waiting(connection: sqlite3.Connection) -> bool:
    """Whether rows past the mark wait for the FTS table."""
    row = connection.execute(
        "SELECT EXISTS (SELECT 1 FROM search_rows WHERE id > "
        "coalesce((" + _MARK + "), 0))"
    ).fetchone()
    return bool(row[0])


def _older(connection: sqlite3.Connection) -> bool:
    """Whether the search tables have the older form, a trigger per written row."""
    return (
        connection.execute(
            "SELECT 1 FROM sqlite_master WHERE type = 'trigger' "
            "AND name = 'search_rows_added'"
        ).fetchone()
        is not None
    )


def _merged(indexed: list[Any], pending: list[Any]) -> list[Any]:
    """The rows of both lists, each once (a batch may have moved rows from one
    to the other between the two reads)."""
    seen = {(row[0], row[1]) for row in indexed}
    return indexed + [row for row in pending if (row[0], row[1]) not in seen]


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
