"""Redaction and retention: erasing a canister's content, expiring conversations.

:meth:`redact` finds the log that holds the canister (a fork's shared prefix is
its ancestor's log, so every fork sharing it sees the tombstone), replaces the
record by its tombstone (:mod:`._tombstone`), removes it from the search index
and records the decision in the conversation's audit trail, in one transaction
where the backend has them. Each backend then removes what it can of the old
bytes (see ``documentation/storage.rst``: SQLite's secure delete and checkpoint,
the file backend's overwrite, PostgreSQL's dead tuples until ``VACUUM``).

:meth:`expire` is written once over the public API, as steps that a synchronous
or an asyncio store runs (:func:`run_steps`, :func:`run_steps_async`).
"""

from __future__ import annotations

import fcntl
import os
import sqlite3
from collections.abc import Generator, Iterator
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any, Final, Literal

import attrs
import orjson

from ..canisters import new_id
from ..exceptions import CanisterNotFound, StorageError
from ._chain import record_link
from ._common import Progress
from ._retries import index_key, line_id
from ._search_sqlite import lineage_stops
from ._tombstone import (
    REDACTED,
    line_document,
    read_tombstone,
    redaction_of,
    tombstone,
)
from ._values import Redaction

__all__ = ["ExpiryReport", "FileRedaction", "SQLiteRedaction"]

AUDIT: Final = "audit"
"""The side file of a conversation's audit trail (``canisters.audit.AUDIT_FILE``)."""
MAX_REASON: Final = 1000
Action = Literal["delete", "redact"]


def check_reason(reason: object) -> str:
    """Return ``reason`` when it is a non-empty string of at most 1000 characters."""
    if type(reason) is not str or not reason.strip():
        raise StorageError(
            f"a redaction needs a reason (a non-empty string), got {reason!r}"
        )
    if len(reason) > MAX_REASON or "\n" in reason or "\x00" in reason:
        raise StorageError(
            f"a redaction's reason is one line of at most {MAX_REASON} characters"
        )
    return reason


def audit_line(conversation_id: str, note: Redaction) -> str:
    """The audit entry of a redaction, as ``canisters.audit`` writes entries."""
    return orjson.dumps(
        {
            "id": new_id(),
            "timestamp": note.at.isoformat(),
            "canister_id": note.canister_id,
            "decision": "canister_redacted",
            "details": {
                "reason": note.reason,
                "kind": note.kind,
                "log": note.conversation_id,
                "record": note.seq,
                "digest": note.digest,
                "conversation": conversation_id,
            },
        }
    ).decode("utf-8")


def redact_line(
    holder: str, line: bytes, reason: str, at: datetime
) -> tuple[bytes | None, Redaction]:
    """Return the tombstone of a stored line (``None`` when it is one already)
    and what it says."""
    try:
        document = line_document(line) if REDACTED.encode() in line else None
    except ValueError:
        document = None
    if type(document) is dict and REDACTED in document:
        note = read_tombstone(holder, line, document)
        if isinstance(note, Redaction):
            return None, note
    try:
        new = tombstone(line, reason, at)
    except (ValueError, StorageError) as error:
        raise StorageError(
            f"record of {holder!r} cannot be redacted: {error}"
        ) from None
    found = read_tombstone(holder, new, line_document(new))
    assert isinstance(found, Redaction)
    return new, found


def _now() -> datetime:
    return datetime.now(timezone.utc)


# --------------------------------------------------------------------------- #
# SQLite


class SQLiteRedaction:
    """The redaction of :class:`~canisters.storage.SQLiteStore`."""

    __slots__ = ()

    _database: Any

    def _lineage(
        self, connection: sqlite3.Connection, conversation_id: str
    ) -> list[tuple[str, int, str]]:
        raise NotImplementedError  # pragma: no cover

    def redact(
        self, conversation_id: str, canister_id: str, *, reason: str
    ) -> Redaction:
        """Replace a canister's record by its tombstone (see :meth:`Store.redact`)."""
        reason = check_reason(reason)
        key = index_key(canister_id)
        database = self._database
        try:
            with database.write() as connection:
                connection.execute("PRAGMA secure_delete = ON")
                holder, seq, line = self._find(connection, conversation_id, key)
                new, note = redact_line(holder, line, reason, _now())
                if new is not None:
                    connection.execute(
                        "UPDATE records SET line = ? "
                        "WHERE conversation = ? AND seq = ?",
                        (new[:-1], holder, seq),
                    )
                    connection.execute(
                        "DELETE FROM search_rows WHERE conversation = ? AND seq = ?",
                        (holder, seq),
                    )
                    connection.execute(
                        "INSERT INTO sidecars (conversation, name, n, line) VALUES "
                        "(?, ?, (SELECT coalesce(max(n) + 1, 0) FROM sidecars "
                        "WHERE conversation = ? AND name = ?), ?)",
                        (
                            conversation_id,
                            AUDIT,
                            conversation_id,
                            AUDIT,
                            audit_line(conversation_id, note),
                        ),
                    )
            if new is not None:
                # The index's segments still hold the words until merged; the
                # write-ahead log holds the old pages until checkpointed.
                with database.write() as connection:
                    connection.execute(
                        "INSERT INTO search (search) VALUES ('optimize')"
                    )
                with database.lock:
                    database.connection.execute("PRAGMA wal_checkpoint(TRUNCATE)")
            return note
        except sqlite3.Error as error:
            raise StorageError(f"redact failed: {error}") from error

    def _find(
        self, connection: sqlite3.Connection, conversation_id: str, key: str
    ) -> tuple[str, int, bytes]:
        """The log, number and line of the record of canister ``key`` in the
        conversation (its own log first, then its ancestors' shared parts)."""
        stops = lineage_stops(self._lineage(connection, conversation_id))
        for current, stop in reversed(stops):
            row = connection.execute(
                "SELECT seq FROM canister_ids WHERE conversation = ? AND canister = ?",
                (current, key),
            ).fetchone()
            rows = (
                [row]
                if row is not None
                else connection.execute(
                    "SELECT seq FROM records WHERE conversation = ? AND "
                    "instr(line, ?) > 0",
                    (current, key.encode("utf-8", "replace")),
                ).fetchall()
            )
            for (seq,) in rows:
                if stop is not None and seq >= stop:
                    continue
                found = connection.execute(
                    "SELECT CAST(line AS BLOB) FROM records "
                    "WHERE conversation = ? AND seq = ?",
                    (current, seq),
                ).fetchone()
                if found is not None and (
                    line_id(found[0]) == key or REDACTED.encode() in found[0]
                ):
                    return current, seq, bytes(found[0])
        raise CanisterNotFound(key)


# --------------------------------------------------------------------------- #
# Files


class FileRedaction:
    """The redaction of :class:`~canisters.storage.FileStore`."""

    __slots__ = ()

    _durable: bool
    _logs: Any
    _locks: Any

    def _lineage(self, conversation_id: str) -> list[tuple[str, int, str]]:
        raise NotImplementedError  # pragma: no cover

    def _lines(self, conversation_id: str) -> Iterator[bytes]:
        raise NotImplementedError  # pragma: no cover

    def _open_log(self, conversation_id: str) -> Any:
        raise NotImplementedError  # pragma: no cover

    def _current(self, conversation_id: str, log: Any) -> Any:
        raise NotImplementedError  # pragma: no cover

    def _forget(self, conversation_id: str) -> None:
        raise NotImplementedError  # pragma: no cover

    def sidecar(self, conversation_id: str, name: str) -> Any:
        raise NotImplementedError  # pragma: no cover

    def redact(
        self, conversation_id: str, canister_id: str, *, reason: str
    ) -> Redaction:
        """Replace a canister's record by its tombstone (see :meth:`Store.redact`)."""
        self._locks.writing()
        reason = check_reason(reason)
        key = index_key(canister_id)
        holder, seq = self._find(conversation_id, key)
        log = self._open_log(holder)
        fcntl.flock(log.fd, fcntl.LOCK_EX)
        try:
            log = self._current(holder, log)
            new, note = self._rewrite(holder, log, seq, key, reason)
        finally:
            fcntl.flock(log.fd, fcntl.LOCK_UN)
            self._forget(holder)
            for other in self._logs.values():  # fork prefixes name old offsets
                other.prefix = None
        if new is not None:
            self.sidecar(conversation_id, AUDIT).append_line(
                audit_line(conversation_id, note)
            )
        return note

    def _find(self, conversation_id: str, key: str) -> tuple[str, int]:
        stops = lineage_stops(self._lineage(conversation_id))
        for current, stop in reversed(stops):
            for line in self._lines(current):
                link = record_link(line)
                if link is None:
                    continue
                if stop is not None and link[0] >= stop:
                    break
                if line_id(line) == key:
                    return current, link[0]
        raise CanisterNotFound(key)

    def _rewrite(
        self, holder: str, log: Any, seq: int, key: str, reason: str
    ) -> tuple[bytes | None, Redaction]:
        """Write the log again with the tombstone in place of record ``seq``,
        after overwriting the old record's bytes where they lie."""
        path = Path(log.path)
        data = path.read_bytes()
        offset = 0
        for line in data.splitlines(keepends=True):
            link = record_link(line)
            if link is not None and link[0] == seq and line_id(line) == key:
                break
            offset += len(line)
        else:
            raise CanisterNotFound(key)
        new, note = redact_line(holder, line.rstrip(b"\n"), reason, _now())
        if new is None:
            return None, note
        if not line.endswith(b"\n"):
            new = new[:-1]
        replaced = data[:offset] + new + data[offset + len(line) :]
        temporary = path.with_name(f".{path.name}.{new_id()}")
        fd = os.open(
            temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o644
        )
        try:
            os.write(fd, replaced)
            os.fsync(fd)
        finally:
            os.close(fd)
        old = os.open(path, os.O_WRONLY | os.O_NOFOLLOW)
        try:  # over the old bytes, where they lie (a file system that writes
            # in place overwrites them; one that copies on write keeps them)
            os.pwrite(old, b"\0" * len(line), offset)
            os.fsync(old)
        finally:
            os.close(old)
        # The offsets of the id index no longer hold: it is made again (removed
        # first, while writers of the old log wait for its lock).
        (path.parent / "ids.jsonl").unlink(missing_ok=True)
        os.replace(temporary, path)
        directory = os.open(path.parent, os.O_RDONLY)
        try:
            os.fsync(directory)
        finally:
            os.close(directory)
        return new, note


# --------------------------------------------------------------------------- #
# Retention, written once over the public API


@attrs.frozen
class ExpiryReport:
    """What :meth:`~canisters.storage.Store.expire` did (or would do)."""

    expired: tuple[str, ...]
    """The conversations past the limit, forks before their parents."""
    action: str
    """``"delete"`` (they were deleted) or ``"redact"`` (their canisters were)."""
    redacted: int = 0
    """Canisters redacted (``"redact"``)."""
    kept: int = 0
    """Conversations kept (newer than the limit, or with newer forks)."""
    dry_run: bool = False
    """Whether nothing was changed (a report of what would be)."""


Step = tuple[str, tuple[Any, ...], dict[str, Any]]


def _limit(before: object, policy: Any) -> datetime:
    if before is None:
        days = getattr(policy, "retention_days", None)
        if days is None:
            raise StorageError(
                "expire needs 'before' or a store policy with retention_days"
            )
        if type(days) not in (int, float) or not 0 <= days < 1e6:
            raise StorageError(
                f"the policy's retention_days is a number of days, got {days!r}"
            )
        return _now() - timedelta(days=days)
    if isinstance(before, timedelta):
        return _now() - before
    if not isinstance(before, datetime) or before.tzinfo is None:
        raise StorageError(
            "expire's 'before' is a timezone-aware datetime or a timedelta, "
            f"got {before!r}"
        )
    return before


def expiry(
    before: object,
    dry_run: bool,
    policy: Any,
    progress: Progress | None,
    action: Action | None = None,
) -> Generator[Step, Any, ExpiryReport]:
    """The steps of :meth:`expire`: the store's calls to make, in order."""
    limit = _limit(before, policy)
    if action is None:
        action = getattr(policy, "retention_action", "delete")
    if action not in ("delete", "redact"):
        raise StorageError(f"expire's action is 'delete' or 'redact', got {action!r}")
    ids: list[str] = yield ("conversations", (), {})
    last: dict[str, datetime | None] = {}
    parent: dict[str, str | None] = {}
    for done, cid in enumerate(ids):
        conversation = yield ("load", (cid,), {"salvage": True})
        last[cid] = max((x.timestamp for x in conversation), default=None)
        origin = yield ("origin", (cid,), {})
        parent[cid] = origin.parent if origin is not None else None
        if progress is not None:
            progress(done + 1, len(ids) * 2)
    children: dict[str, list[str]] = {}
    for cid, above in parent.items():
        if above is not None:
            children.setdefault(above, []).append(cid)
    expired: list[str] = []
    old: dict[str, bool] = {}

    def visit(cid: str) -> bool:  # forks first, then the conversation
        young = False
        for child in sorted(children.get(cid, ())):
            young |= not visit(child)
        stamp = last[cid]
        old[cid] = not young and stamp is not None and stamp < limit
        if old[cid]:
            expired.append(cid)
        return old[cid]

    for cid in ids:
        if parent[cid] is None or parent[cid] not in last:
            visit(cid)
    redacted = 0
    for done, cid in enumerate(expired):
        if not dry_run and action == "delete":
            yield ("delete", (cid,), {})
        elif action == "redact":
            origin = yield ("origin", (cid,), {})
            conversation = yield ("load", (cid,), {"salvage": True})
            for canister in list(conversation)[origin.records if origin else 0 :]:
                if redaction_of(canister) is None:
                    redacted += 1
                    if not dry_run:
                        yield (
                            "redact",
                            (cid, canister.id),
                            {"reason": "retention"},
                        )
        if progress is not None:
            progress(
                len(ids) + (done + 1) * len(ids) // max(len(expired), 1), len(ids) * 2
            )
    if progress is not None:
        progress(len(ids) * 2, len(ids) * 2)
    return ExpiryReport(
        tuple(expired), action, redacted, len(ids) - len(expired), dry_run
    )


def run_steps(store: Any, steps: Generator[Step, Any, ExpiryReport]) -> ExpiryReport:
    """Run the steps of :func:`expiry` on a synchronous store."""
    result: Any = None
    try:
        while True:
            name, args, kwargs = steps.send(result)
            result = getattr(store, name)(*args, **kwargs)
    except StopIteration as done:
        report: ExpiryReport = done.value
        return report


async def run_steps_async(
    store: Any, steps: Generator[Step, Any, ExpiryReport]
) -> ExpiryReport:
    """Run the steps of :func:`expiry` on an asyncio store."""
    result: Any = None
    try:
        while True:
            name, args, kwargs = steps.send(result)
            result = await getattr(store, name)(*args, **kwargs)
    except StopIteration as done:
        report: ExpiryReport = done.value
        return report


class Expiry:
    """The retention of a synchronous store."""

    __slots__ = ()

    def expire(
        self,
        before: datetime | timedelta | None = None,
        *,
        dry_run: bool = False,
        action: Action | None = None,
        progress: Progress | None = None,
    ) -> ExpiryReport:
        """Expire the conversations older than ``before`` (see :meth:`Store.expire`)."""
        policy = getattr(self, "policy", None)
        return run_steps(self, expiry(before, dry_run, policy, progress, action))


class AsyncExpiry:
    """The retention of an asyncio store."""

    __slots__ = ()

    async def expire(
        self,
        before: datetime | timedelta | None = None,
        *,
        dry_run: bool = False,
        action: Action | None = None,
        progress: Progress | None = None,
    ) -> ExpiryReport:
        """Expire the conversations older than ``before`` (see :meth:`Store.expire`)."""
        policy = getattr(self, "policy", None)
        return await run_steps_async(
            self, expiry(before, dry_run, policy, progress, action)
        )
