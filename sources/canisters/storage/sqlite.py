"""The SQLite backend (``sqlite:///path/to.db``): one database file, WAL mode.

Tables::

    blobs(id TEXT PRIMARY KEY, data BLOB, created REAL)
    conversations(id TEXT PRIMARY KEY, parent TEXT, fork_seq INTEGER,
                  fork_head TEXT, fork_at TEXT, head_seq INTEGER, head TEXT,
                  indexed INTEGER)
    records(conversation TEXT, seq INTEGER, line BLOB)      -- the log records
    canister_ids(conversation TEXT, canister TEXT, seq INTEGER)  -- their ids
    sidecars(conversation TEXT, name TEXT, n INTEGER, line TEXT)

``conversations.head_seq`` and ``head`` keep each log's head (its number of
records and last digest) apart from the ``records`` table, so that records
deleted from its end, or the whole table dropped, are seen by ``verify``.
``records.line`` holds exactly the record a line of the file backend's
``messages.jsonl`` holds (without the newline), so both backends share one
record format and hash chain. Values are read back as blobs (``CAST``), so a
value someone changed to another SQLite type reads as its bytes and fails its
digest instead of raising a bare ``TypeError``. Every append is one ``BEGIN IMMEDIATE``
transaction holding its blobs and its records: concurrent writers, in threads
or processes, are serialized by SQLite's write lock, and a blob can never be
missing for a record that committed.
"""

from __future__ import annotations

import functools
import os
import sqlite3
import time
import urllib.parse
from collections.abc import Generator, Iterable
from typing import Final, Literal, ParamSpec, TypeVar

from ..canisters import new_id
from ..conversation import Conversation
from ..exceptions import (
    CanisterNotFound,
    ConversationNotFound,
    IntegrityError,
    StorageError,
    _excerpt,
)
from ..protocols import Canister
from ._chain import Chain, encode_record, record_link
from ._common import (
    Codec,
    StoragePolicy,
    Verification,
    check_durability,
    check_id,
    earlier,
)
from ._forks import Fork, fork_stops, make_fork
from ._redaction import Expiry, SQLiteRedaction
from ._retries import line_id, record_id, screen
from ._search_sqlite import SQLiteSearch
from ._sqlite_maintenance import SQLiteMaintenance
from ._sqlite_parts import (
    Database,
    SQLiteContentStore,
    SQLiteSidecar,
    Transaction,
    _bytes,
    _insert_blob,
    _sqlite_errors,
)
from ._sqlite_paths import check_companions
from .s3 import S3ContentStore, open_blobs

__all__ = [
    "Database",
    "SQLiteContentStore",
    "SQLiteSidecar",
    "SQLiteStore",
    "Transaction",
]

P = ParamSpec("P")
T = TypeVar("T")

SCHEMA_VERSION: Final = 1
# Canister ids looked up per statement (SQLite's bound on parameters is 999 in
# old versions).
_ID_CHUNK: Final = 500
_SCHEMA: Final = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS blobs (
    id TEXT PRIMARY KEY, data BLOB NOT NULL, created REAL NOT NULL
);
CREATE TABLE IF NOT EXISTS conversations (
    id TEXT PRIMARY KEY, parent TEXT, fork_seq INTEGER, fork_head TEXT, fork_at TEXT,
    head_seq INTEGER, head TEXT, indexed INTEGER
);
CREATE INDEX IF NOT EXISTS conversations_parent ON conversations (parent);
CREATE TABLE IF NOT EXISTS records (
    conversation TEXT NOT NULL, seq INTEGER NOT NULL, line BLOB NOT NULL,
    PRIMARY KEY (conversation, seq)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS canister_ids (
    conversation TEXT NOT NULL, canister TEXT NOT NULL, seq INTEGER NOT NULL,
    PRIMARY KEY (conversation, canister)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS sidecars (
    conversation TEXT NOT NULL, name TEXT NOT NULL, n INTEGER NOT NULL,
    line TEXT NOT NULL,
    PRIMARY KEY (conversation, name, n)
) WITHOUT ROWID;
"""


class SQLiteStore(SQLiteSearch, SQLiteRedaction, SQLiteMaintenance, Expiry):
    """The SQLite backend: every conversation and blob in one database file."""

    def __init__(
        self,
        path: str | os.PathLike[str],
        *,
        policy: StoragePolicy | None = None,
        durability: Literal["fsync", "flush"] = "fsync",
        timeout: float = 60.0,
        blobs: str | S3ContentStore | None = None,
        read_only: bool = False,
    ) -> None:
        self._external = open_blobs(blobs) if blobs is not None else None
        self._path = os.fspath(path)
        self._policy = policy if policy is not None else StoragePolicy()
        self._durability = check_durability(durability)
        self._read_only = read_only
        check_companions(self._path)
        try:
            if read_only:
                self._database = Database(self._connect_read_only(timeout), True)
            else:
                self._create(timeout, durability)
        except sqlite3.Error as error:
            raise StorageError(f"cannot open store {self._path}: {error}") from error
        self._content: SQLiteContentStore | S3ContentStore = (
            self._external
            if self._external is not None
            else SQLiteContentStore(self._database)
        )
        self._codec = Codec(self._policy, self._content.get)
        self._prepare_search()

    def _create(self, timeout: float, durability: str) -> None:
        """Open the database for writing, creating its tables when missing."""
        connection = sqlite3.connect(
            self._path,
            timeout=timeout,
            isolation_level=None,
            check_same_thread=False,
        )
        connection.execute("PRAGMA journal_mode = WAL")
        connection.execute(
            "PRAGMA synchronous = " + ("FULL" if durability == "fsync" else "NORMAL")
        )
        self._database = Database(connection)
        with self._database.write() as writing:
            for statement in _SCHEMA.split(";"):
                if statement.strip():
                    writing.execute(statement)
            row = writing.execute(
                "SELECT value FROM meta WHERE key = 'schema'"
            ).fetchone()
            if row is None:
                writing.execute(
                    "INSERT INTO meta (key, value) VALUES ('schema', ?)",
                    (str(SCHEMA_VERSION),),
                )
            elif row[0] != str(SCHEMA_VERSION):
                raise StorageError(
                    f"store schema version {row[0]} is not supported "
                    f"(this library reads version {SCHEMA_VERSION})"
                )
            columns = {
                column[1]
                for column in writing.execute("PRAGMA table_info(conversations)")
            }
            for column, kind in (
                ("head_seq", "INTEGER"),
                ("head", "TEXT"),
                ("indexed", "INTEGER"),
            ):
                if column not in columns:  # a store made before kept heads
                    writing.execute(
                        f"ALTER TABLE conversations ADD COLUMN {column} {kind}"
                    )

    def _connect_read_only(self, timeout: float) -> sqlite3.Connection:
        """Open the existing database without writing to it (``mode=ro``)."""
        if not os.path.isfile(self._path):
            raise StorageError(f"cannot open store {self._path}: no such database")
        uri = "file:" + urllib.parse.quote(os.path.abspath(self._path)) + "?mode=ro"
        try:
            connection = _connect(uri, timeout)
            row = connection.execute(
                "SELECT value FROM meta WHERE key = 'schema'"
            ).fetchone()
        except sqlite3.OperationalError:
            # In a directory the reader cannot write, SQLite cannot make the
            # -shm file WAL reading needs: read the file as it stands (what a
            # live writer still holds in its WAL is not seen).
            connection = _connect(uri + "&immutable=1", timeout)
            row = connection.execute(
                "SELECT value FROM meta WHERE key = 'schema'"
            ).fetchone()
        if row is None or row[0] != str(SCHEMA_VERSION):
            connection.close()
            raise StorageError(
                f"store schema version {row and row[0]} is not supported "
                f"(this library reads version {SCHEMA_VERSION})"
            )
        return connection

    # Properties ----------------------------------------------------------------

    @property
    def path(self) -> str:
        """The database file."""
        return self._path

    @property
    def read_only(self) -> bool:
        """Whether the store was opened only to read (``mode=ro``)."""
        return self._read_only

    @property
    def content(self) -> SQLiteContentStore | S3ContentStore:
        """The content store (the bucket's when ``blobs`` names one)."""
        return self._content

    @property
    def policy(self) -> StoragePolicy:
        """Which parts are stored by hash."""
        return self._policy

    @property
    def durability(self) -> Literal["fsync", "flush"]:
        """How far an append goes before it returns."""
        return self._durability

    # Writing -------------------------------------------------------------------

    def append(self, conversation_id: str, canister: Canister) -> None:
        """Append one canister in one transaction, creating the conversation."""
        self.extend(conversation_id, (canister,))

    @_sqlite_errors
    def extend(self, conversation_id: str, canisters: Iterable[Canister]) -> None:
        """Append canisters in one transaction, creating the conversation."""
        check_id(conversation_id)
        dehydrate = self._codec.dehydrate
        records = []
        blobs: list[tuple[str, bytes]] = []
        for canister in canisters:
            record, found = dehydrate(canister)
            records.append(record)
            if found:
                blobs.extend(found)
        external = self._external
        uploaded = 0.0
        if blobs and external is not None:
            # Before the write lock: a slow bucket delays this append only.
            self._database.writing()
            uploaded = time.time()
            for content_id, data in blobs:
                external.store(content_id, data)
        now = time.time()
        with self._database.write() as connection:
            if uploaded:
                assert external is not None
                row = connection.execute(
                    "SELECT value FROM meta WHERE key = 'gc'"
                ).fetchone()
                if row is not None and not earlier(row[0], uploaded - _GC_MARGIN):
                    # A garbage collection removed blobs since: store them
                    # again, under the write lock garbage collection takes.
                    for content_id, data in blobs:
                        external.store(content_id, data)
            else:
                for content_id, data in blobs:
                    _insert_blob(connection, content_id, data, now)
            row = connection.execute(
                "SELECT parent, indexed FROM conversations WHERE id = ?",
                (conversation_id,),
            ).fetchone()
            if row is None:
                connection.execute(
                    "INSERT INTO conversations (id) VALUES (?)", (conversation_id,)
                )
                row = (None, 0)
            seq, prev = self._head(connection, conversation_id)
            self._index(connection, conversation_id, row[1], seq)
            fresh = screen(
                conversation_id,
                records,
                functools.partial(
                    self._held, connection, conversation_id, row[0] is None, seq
                ),
            )
            if records and not fresh:  # every one held already
                return
            records = fresh
            rows = []
            ids = []
            for record in records:
                line, digest = encode_record(seq, prev, record)
                rows.append((conversation_id, seq, line[:-1]))
                canister_id = record_id(record)
                if canister_id is not None:
                    ids.append((conversation_id, canister_id, seq))
                seq, prev = seq + 1, digest
            connection.executemany(
                "INSERT INTO records (conversation, seq, line) VALUES (?, ?, ?)", rows
            )
            connection.executemany(
                "INSERT OR IGNORE INTO canister_ids (conversation, canister, seq) "
                "VALUES (?, ?, ?)",
                ids,
            )
            self._index_search(
                connection, conversation_id, seq - len(records), records, blobs
            )
            connection.execute(
                "UPDATE conversations SET head_seq = ?, head = ?, indexed = ? "
                "WHERE id = ?",
                (seq, prev, seq, conversation_id),
            )

    @staticmethod
    def _index(
        connection: sqlite3.Connection, conversation_id: str, indexed: object, end: int
    ) -> None:
        """Bring the canister ids of a log's records before ``end`` into the
        ``canister_ids`` index (records written before it, or by a version of
        the library without it); ``indexed`` is how far it reached."""
        start = indexed if type(indexed) is int else 0
        if start >= end:
            return
        found = []
        for seq, line in connection.execute(
            "SELECT seq, CAST(line AS BLOB) FROM records "
            "WHERE conversation = ? AND seq >= ? AND seq < ? ORDER BY seq",
            (conversation_id, start, end),
        ):
            canister_id = line_id(_bytes(line))
            if canister_id is not None and type(seq) is int:
                found.append((conversation_id, canister_id, seq))
        connection.executemany(
            "INSERT OR IGNORE INTO canister_ids (conversation, canister, seq) "
            "VALUES (?, ?, ?)",
            found,
        )
        connection.execute(
            "UPDATE conversations SET indexed = ? WHERE id = ?", (end, conversation_id)
        )

    def _held(
        self,
        connection: sqlite3.Connection,
        conversation_id: str,
        root: bool,
        length: int,
        wanted: list[str],
    ) -> dict[str, tuple[str, bytes]]:
        """Return ``(where, line)`` of each canister of ``wanted`` the
        conversation holds (a fork's prefix included), looked up in the index."""
        lineage = (
            [(conversation_id, 0, "")]
            if root
            else self._lineage(connection, conversation_id)
        )
        found: dict[str, tuple[str, bytes]] = {}
        parts = fork_stops([start for _id, start, _head in lineage])
        for index, stop in reversed(parts):
            current = lineage[index][0]
            end = length if stop is None else stop
            if stop is not None:
                row = connection.execute(
                    "SELECT indexed FROM conversations WHERE id = ?", (current,)
                ).fetchone()
                self._index(connection, current, row[0], end)
            for chunk in range(0, len(wanted), _ID_CHUNK):
                some = wanted[chunk : chunk + _ID_CHUNK]
                for canister_id, seq, line in connection.execute(
                    "SELECT i.canister, i.seq, CAST(r.line AS BLOB) "
                    "FROM canister_ids i JOIN records r "
                    "ON r.conversation = i.conversation AND r.seq = i.seq "
                    "WHERE i.conversation = ? AND i.seq < ? AND i.canister IN "
                    f"({', '.join('?' * len(some))})",
                    (current, end, *some),
                ):
                    found.setdefault(
                        canister_id, (f"record {seq} of {current}", _bytes(line))
                    )
        return found

    # Reading -------------------------------------------------------------------

    def _lineage(
        self, connection: sqlite3.Connection, conversation_id: str
    ) -> list[tuple[str, int, str]]:
        lineage: list[tuple[str, int, str]] = []
        current: str | None = conversation_id
        seen: set[str] = set()
        while current is not None:
            if current in seen:
                raise IntegrityError(f"{conversation_id!r}: forks form a cycle")
            seen.add(current)
            row = connection.execute(
                "SELECT parent, fork_seq, fork_head FROM conversations WHERE id = ?",
                (current,),
            ).fetchone()
            if row is None:
                raise ConversationNotFound(current)
            parent, seq, head = row
            seq, head = seq or 0, head or ""
            if (
                (parent is not None and type(parent) is not str)
                or type(seq) is not int
                or type(head) is not str
            ):
                raise IntegrityError(
                    f"{current!r}: malformed fork point in the conversations table"
                )
            lineage.append((current, seq, head))
            current = parent
        lineage.reverse()
        return lineage

    def _walk(
        self, chain: Chain, conversation_id: str
    ) -> Generator[Canister, None, None]:
        connection = self._database.connection
        lineage = self._lineage(connection, conversation_id)
        for index, stop in fork_stops([seq for _id, seq, _head in lineage]):
            current, seq, head = lineage[index]
            if index:
                chain.fork_point(f"{current} fork point", seq, head)
            cursor = connection.execute(
                "SELECT seq, CAST(line AS BLOB) FROM records WHERE conversation = ? "
                "ORDER BY seq",
                (current,),
            )
            label = functools.partial(_label, current)
            lines = chain.numbered(((seq, _bytes(line)) for seq, line in cursor), label)
            yield from chain.walk(
                lines,
                label,
                stop=stop,
                terminated=False,
            )
            if stop is not None and chain.seq < stop:
                chain.problem(
                    f"{current} end",
                    "fork-point",
                    f"the log ends after record {chain.seq - 1}, before its "
                    f"fork point at record {stop}",
                )

    @_sqlite_errors
    def load(self, conversation_id: str, *, salvage: bool = False) -> Conversation:
        """Return the hydrated conversation, checking its hash chain."""
        chain = Chain(
            check_id(conversation_id), self._codec, "salvage" if salvage else "strict"
        )
        with self._database.lock:
            return Conversation(tuple(self._walk(chain, conversation_id)))

    @_sqlite_errors
    def verify(self, conversation_id: str) -> Verification:
        """Check the hash chain, every referenced blob and the kept head."""
        chain = Chain(check_id(conversation_id), self._codec, "verify")
        where = f"{conversation_id} kept head"
        with self._database.lock:
            row = self._database.connection.execute(
                "SELECT head_seq, head FROM conversations WHERE id = ?",
                (conversation_id,),
            ).fetchone()
            if row is None:
                raise ConversationNotFound(conversation_id)
            kept = (
                (row[0], row[1])
                if type(row[0]) is int and type(row[1]) is str
                else None
            )
            chain.keep(kept, where)
            for _canister in self._walk(chain, conversation_id):
                pass
            chain.reach(where)
        return chain.verification()

    @_sqlite_errors
    def head(self, conversation_id: str) -> tuple[int, str]:
        """Return the number of records and the digest of the last one."""
        check_id(conversation_id)
        with self._database.lock:
            connection = self._database.connection
            if not connection.execute(
                "SELECT 1 FROM conversations WHERE id = ?", (conversation_id,)
            ).fetchone():
                raise ConversationNotFound(conversation_id)
            return self._head(connection, conversation_id)

    def _head(
        self, connection: sqlite3.Connection, conversation_id: str
    ) -> tuple[int, str]:
        """Return the next record's number and the last digest of a conversation.

        The last row's ``seq`` must be the one its record holds: a row renumbered
        by hand would otherwise make the next append break the chain.
        """
        row = connection.execute(
            "SELECT seq, CAST(line AS BLOB) FROM records WHERE conversation = ? "
            "ORDER BY seq DESC LIMIT 1",
            (conversation_id,),
        ).fetchone()
        if row is None:
            fork = self._lineage(connection, conversation_id)[-1]
            return fork[1], fork[2]
        link = record_link(_bytes(row[1]))
        if link is None or type(row[0]) is not int or link[0] != row[0]:
            raise IntegrityError(
                f"the last record of {conversation_id!r} (seq {_excerpt(row[0])}) is "
                "unreadable or misnumbered; verify the conversation"
            )
        return link[0] + 1, link[2]

    @_sqlite_errors
    def exists(self, conversation_id: str) -> bool:
        """Tell whether the conversation exists."""
        check_id(conversation_id)
        with self._database.lock:
            row = self._database.connection.execute(
                "SELECT 1 FROM conversations WHERE id = ?", (conversation_id,)
            ).fetchone()
        return row is not None

    @_sqlite_errors
    def conversations(self) -> list[str]:
        """Return the id of every conversation, sorted."""
        with self._database.lock:
            rows = self._database.connection.execute(
                "SELECT id FROM conversations ORDER BY id"
            ).fetchall()
        return [conversation_id for (conversation_id,) in rows]

    # Forks and deletion --------------------------------------------------------

    @_sqlite_errors
    def fork(self, conversation_id: str, at: str) -> str:
        """Start a new conversation sharing the prefix up to canister ``at``."""
        chain = Chain(check_id(conversation_id), self._codec, "strict")
        with self._database.lock:
            walker = self._walk(chain, conversation_id)
            try:
                for canister in walker:
                    if canister.id == at:
                        break
                else:
                    raise CanisterNotFound(at)
            finally:
                walker.close()
            child = new_id()
            with self._database.write() as connection:
                connection.execute(
                    "INSERT INTO conversations (id, parent, fork_seq, fork_head, "
                    "fork_at, head_seq, head, indexed) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                    (
                        child,
                        conversation_id,
                        chain.seq,
                        chain.prev,
                        at,
                        chain.seq,
                        chain.prev,
                        chain.seq,
                    ),
                )
        return child

    @_sqlite_errors
    def origin(self, conversation_id: str) -> Fork | None:
        """Return where the conversation was forked (``None``: not a fork)."""
        check_id(conversation_id)
        with self._database.lock:
            row = self._database.connection.execute(
                "SELECT parent, fork_at, fork_seq FROM conversations WHERE id = ?",
                (conversation_id,),
            ).fetchone()
        if row is None:
            raise ConversationNotFound(conversation_id)
        return None if row[0] is None else make_fork(conversation_id, *row)

    @_sqlite_errors
    def forks(self, conversation_id: str) -> list[Fork]:
        """Return the forks made of the conversation, sorted by id."""
        check_id(conversation_id)
        with self._database.lock:
            connection = self._database.connection
            if not connection.execute(
                "SELECT 1 FROM conversations WHERE id = ?", (conversation_id,)
            ).fetchone():
                raise ConversationNotFound(conversation_id)
            rows = connection.execute(
                "SELECT id, fork_at, fork_seq FROM conversations WHERE parent = ? "
                "ORDER BY id",
                (conversation_id,),
            ).fetchall()
        return [make_fork(child, conversation_id, at, seq) for child, at, seq in rows]

    @_sqlite_errors
    def delete(self, conversation_id: str) -> None:
        """Delete the conversation and its side files; refused while forks exist."""
        check_id(conversation_id)
        with self._database.write() as connection:
            if (
                connection.execute(
                    "SELECT 1 FROM conversations WHERE id = ?", (conversation_id,)
                ).fetchone()
                is None
            ):
                raise ConversationNotFound(conversation_id)
            children = [
                child
                for (child,) in connection.execute(
                    "SELECT id FROM conversations WHERE parent = ? ORDER BY id",
                    (conversation_id,),
                )
            ]
            if children:
                raise StorageError(
                    f"conversation {conversation_id!r} has forks "
                    f"({', '.join(children)}); delete them first"
                )
            for table, column in (
                ("records", "conversation"),
                ("canister_ids", "conversation"),
                ("sidecars", "conversation"),
                ("search_rows", "conversation"),
                ("conversations", "id"),
            ):
                connection.execute(
                    f"DELETE FROM {table} WHERE {column} = ?", (conversation_id,)
                )

    # Side files ----------------------------------------------------------------

    def sidecar(self, conversation_id: str, name: str) -> SQLiteSidecar:
        """Return the side file ``name`` of the conversation."""
        return SQLiteSidecar(
            self._database,
            check_id(conversation_id),
            check_id(name, "side-file name"),
        )

    @_sqlite_errors
    def sidecar_names(self, conversation_id: str) -> list[str]:
        """Return the name of every side file of the conversation, sorted."""
        check_id(conversation_id)
        with self._database.lock:
            rows = self._database.connection.execute(
                "SELECT DISTINCT name FROM sidecars WHERE conversation = ? "
                "ORDER BY name",
                (conversation_id,),
            ).fetchall()
        return [name for (name,) in rows]

    # Maintenance ---------------------------------------------------------------

    def close(self) -> None:
        """Close the connection."""
        with self._database.lock:
            self._database.connection.close()

    def __enter__(self) -> SQLiteStore:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"SQLiteStore({self._path!r}, durability={self._durability!r})"


# A garbage collection that removed blobs from the bucket and ended after an
# upload began, less this margin, makes the append store its blobs again.
_GC_MARGIN: Final = 300.0


def _connect(uri: str, timeout: float) -> sqlite3.Connection:
    return sqlite3.connect(
        uri, uri=True, timeout=timeout, isolation_level=None, check_same_thread=False
    )


def _label(conversation_id: str, number: int) -> str:
    return f"{conversation_id} record {number}"
