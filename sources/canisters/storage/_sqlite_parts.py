"""The SQLite backend's parts below the store: its connection and transactions
(:class:`Database`, :class:`Transaction`), the content store (blobs in the
``blobs`` table) and side files. Public through :mod:`canisters.storage.sqlite`.
"""

from __future__ import annotations

import functools
import sqlite3
import threading
import time
from collections.abc import Callable, Iterator
from typing import Any, Final, ParamSpec, TypeVar

from ..exceptions import (
    ContentNotFound,
    IntegrityError,
    StorageError,
)
from ._chain import decode_lines
from ._common import (
    SidecarBase,
    check_bytes,
    check_content_id,
    check_line,
    content_id_of,
)

P = ParamSpec("P")
T = TypeVar("T")
_BLOB_IO: Final = hasattr(sqlite3.Connection, "blobopen")  # Python 3.11+


def _insert_blob(
    connection: sqlite3.Connection, content_id: str, data: bytes, now: float
) -> bool:
    """Insert a blob unless present; tell whether it was inserted."""
    cursor = connection.execute(
        "INSERT OR IGNORE INTO blobs (id, data, created) VALUES (?, ?, ?)",
        (content_id, data, now),
    )
    return cursor.rowcount > 0


def _blob(connection: sqlite3.Connection, rowid: object, readonly: bool) -> Any:
    """Open ``blobs.data`` of row ``rowid`` for blob I/O (Python 3.11+)."""
    return connection.blobopen(  # type: ignore[attr-defined,unused-ignore]
        "blobs", "data", rowid, readonly=readonly
    )


def _bytes(value: object) -> bytes:
    """A value read through ``CAST(... AS BLOB)`` as bytes (NULL as empty)."""
    return value if type(value) is bytes else b""


def _sqlite_errors(method: Callable[P, T]) -> Callable[P, T]:
    """Turn a ``sqlite3.Error`` into a :class:`StorageError`."""

    @functools.wraps(method)
    def wrapper(*args: P.args, **kwargs: P.kwargs) -> T:
        try:
            return method(*args, **kwargs)
        except sqlite3.Error as error:
            raise StorageError(f"{method.__name__} failed: {error}") from error

    return wrapper


class Database:
    """A connection and the lock that serializes its use by threads."""

    __slots__ = ("connection", "lock", "read_only")

    def __init__(self, connection: sqlite3.Connection, read_only: bool = False) -> None:
        self.connection = connection
        self.lock = threading.RLock()
        self.read_only = read_only

    def writing(self) -> None:
        """Refuse to go on when the store was opened read-only."""
        if self.read_only:
            raise StorageError("the store was opened read-only")

    def write(self) -> Transaction:
        """Return a write transaction (``BEGIN IMMEDIATE``) to use with ``with``."""
        self.writing()
        return Transaction(self, "BEGIN IMMEDIATE")

    def read(self) -> Transaction:
        """Return a read transaction (one snapshot) to use with ``with``."""
        return Transaction(self, "BEGIN")


class Transaction:
    """A write transaction: committed on success, rolled back on an exception."""

    __slots__ = ("_begin", "_database")

    def __init__(self, database: Database, begin: str) -> None:
        self._database = database
        self._begin = begin

    def __enter__(self) -> sqlite3.Connection:
        self._database.lock.acquire()
        try:
            self._database.connection.execute(self._begin)
        except BaseException:
            self._database.lock.release()
            raise
        return self._database.connection

    def __exit__(self, kind: object, *rest: object) -> None:
        try:
            self._database.connection.execute("COMMIT" if kind is None else "ROLLBACK")
        finally:
            self._database.lock.release()


class SQLiteContentStore:
    """Blobs in the ``blobs`` table, verified on every read."""

    __slots__ = ("_database",)

    def __init__(self, database: Database) -> None:
        self._database = database

    @_sqlite_errors
    def put(self, data: bytes) -> str:
        """Store ``data`` once and return its ``sha256:`` id."""
        data = check_bytes(data)
        content_id = content_id_of(data)
        now = time.time()
        with self._database.write() as connection:
            if not _insert_blob(connection, content_id, data, now):
                connection.execute(
                    "UPDATE blobs SET created = ? WHERE id = ?", (now, content_id)
                )
        return content_id

    @_sqlite_errors
    def get(self, content_id: str) -> bytes:
        """Return the bytes of ``content_id``, checking them against the id."""
        check_content_id(content_id)
        with self._database.lock:
            connection = self._database.connection
            row = connection.execute(
                "SELECT rowid, typeof(data) = 'blob' FROM blobs WHERE id = ?",
                (content_id,),
            ).fetchone()
            if row is None:
                raise ContentNotFound(content_id)
            if row[1] and _BLOB_IO:
                # Read straight into one bytes object: a plain SELECT holds the
                # value twice (SQLite's copy and Python's).
                with _blob(connection, row[0], readonly=True) as blob:
                    data = bytes(blob.read())
            else:
                data = _bytes(
                    connection.execute(
                        "SELECT CAST(data AS BLOB) FROM blobs WHERE rowid = ?",
                        (row[0],),
                    ).fetchone()[0]
                )
        if content_id_of(data) != content_id:
            raise IntegrityError(
                f"blob {content_id} no longer matches its id (tampered or corrupt)"
            )
        return data

    @_sqlite_errors
    def has(self, content_id: str) -> bool:
        """Tell whether the blob is stored."""
        check_content_id(content_id)
        with self._database.lock:
            row = self._database.connection.execute(
                "SELECT 1 FROM blobs WHERE id = ?", (content_id,)
            ).fetchone()
        return row is not None

    def ids(self) -> Iterator[str]:
        """Yield the id of every stored blob."""
        with self._database.lock:
            rows = self._database.connection.execute("SELECT id FROM blobs").fetchall()
        for (content_id,) in rows:
            yield content_id


class SQLiteSidecar(SidecarBase):
    """A side file: rows of the ``sidecars`` table."""

    __slots__ = ("_database",)

    def __init__(self, database: Database, conversation_id: str, name: str) -> None:
        super().__init__(conversation_id, name)
        self._database = database

    @_sqlite_errors
    def append_line(self, line: str) -> None:
        """Append one line in its own transaction."""
        check_line(line)
        with self._database.write() as connection:
            connection.execute(
                "INSERT INTO sidecars (conversation, name, n, line) VALUES (?, ?, "
                "(SELECT coalesce(max(n) + 1, 0) FROM sidecars "
                "WHERE conversation = ? AND name = ?), ?)",
                (
                    self._conversation_id,
                    self._name,
                    self._conversation_id,
                    self._name,
                    line,
                ),
            )

    @_sqlite_errors
    def read_lines(self) -> list[str]:
        """Return every line, oldest first."""
        with self._database.lock:
            rows = self._database.connection.execute(
                "SELECT CAST(line AS BLOB) FROM sidecars "
                "WHERE conversation = ? AND name = ? ORDER BY n",
                (self._conversation_id, self._name),
            ).fetchall()
        return decode_lines(
            (_bytes(line) for (line,) in rows),
            f"side file {self._name} of {self._conversation_id}",
        )
