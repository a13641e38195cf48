"""Maintenance in the SQLite backend: the references the logs and side files
hold, garbage collection in a write transaction, and statistics."""

from __future__ import annotations

import sqlite3
import time
from collections.abc import Callable

from ._common import (
    GarbageReport,
    Progress,
    StoreStats,
    references,
    sweep,
)
from ._sqlite_parts import (
    Database,
    _bytes,
    _sqlite_errors,
)
from .s3 import S3ContentStore

__all__ = ["SQLiteMaintenance"]


class SQLiteMaintenance:
    """The maintenance methods of :class:`~canisters.storage.SQLiteStore`."""

    __slots__ = ()

    _database: Database
    _external: S3ContentStore | None

    def _references(self, connection: sqlite3.Connection) -> set[str]:
        found: set[str] = set()
        for (line,) in connection.execute("SELECT CAST(line AS BLOB) FROM records"):
            data = _bytes(line)
            if b"sha256:" in data:
                found |= references(data)
        for (line,) in connection.execute("SELECT CAST(line AS BLOB) FROM sidecars"):
            data = _bytes(line)
            if b"sha256:" in data:
                found |= references(data)
        return found

    @_sqlite_errors
    def referenced_content(self) -> set[str]:
        """Return every content id a conversation log or side file mentions."""
        with self._database.lock:
            return self._references(self._database.connection)

    @_sqlite_errors
    def collect_garbage(
        self,
        *,
        dry_run: bool = False,
        older_than: float = 0.0,
        progress: Progress | None = None,
    ) -> GarbageReport:
        """Remove unreferenced blobs inside one write transaction."""
        if progress is not None:
            progress(0, 2)
        database = self._database
        with (
            database.read() if dry_run and database.read_only else database.write()
        ) as connection:
            referenced = self._references(connection)
            if progress is not None:
                progress(1, 2)
            delete: Callable[[list[str]], None]
            if self._external is not None:
                entries = self._external.entries()
                delete = self._external.delete
            else:
                entries = connection.execute(
                    "SELECT id, length(data), created FROM blobs"
                ).fetchall()

                def delete(removed: list[str]) -> None:
                    connection.executemany(
                        "DELETE FROM blobs WHERE id = ?", [(i,) for i in removed]
                    )

            report = sweep(
                entries,
                referenced,
                older_than=older_than,
                dry_run=dry_run,
                delete=delete,
            )
            if self._external is not None and report.removed and not dry_run:
                # Appends upload blobs before they take the write lock: those
                # whose upload began before this time store theirs again.
                connection.execute(
                    "INSERT INTO meta (key, value) VALUES ('gc', ?) "
                    "ON CONFLICT (key) DO UPDATE SET value = excluded.value",
                    (repr(time.time()),),
                )
        if progress is not None:
            progress(2, 2)
        return report

    @_sqlite_errors
    def stats(self, *, progress: Progress | None = None) -> StoreStats:
        """Count conversations, records, blobs and references, and their bytes."""
        if progress is not None:
            progress(0, 2)
        with self._database.lock:
            connection = self._database.connection
            conversations = connection.execute(
                "SELECT count(*) FROM conversations"
            ).fetchone()[0]
            records, log_bytes = connection.execute(
                "SELECT count(*), coalesce(sum(length(line)) + count(*), 0) "
                "FROM records"
            ).fetchone()
            sizes: dict[str, int] = (
                {key: size for key, size, _ in self._external.entries()}
                if self._external is not None
                else dict(connection.execute("SELECT id, length(data) FROM blobs"))
            )
            blobs, blob_bytes = len(sizes), sum(sizes.values())
            if progress is not None:
                progress(1, 2)
            count = referenced = 0
            for (line,) in connection.execute(
                "SELECT CAST(line AS BLOB) FROM records WHERE instr(line, ?) > 0",
                (b"sha256:",),
            ):
                for content_id in references(_bytes(line)):
                    size = sizes.get(content_id)
                    if size is not None:
                        count += 1
                        referenced += size
        if progress is not None:
            progress(2, 2)
        return StoreStats(
            conversations, records, log_bytes, blobs, blob_bytes, count, referenced
        )
