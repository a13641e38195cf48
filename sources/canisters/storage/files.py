"""The file backend: one append-only JSONL log per conversation, sharded blobs.

The layout under the store's directory::

    store.json                          {"format": "canisters.store", "version": 1}
    gc.lock                             writers hold it shared, gc exclusive
    blobs/sha256/<2 hex>/<64 hex>       one file per blob, named by its digest
    blobs/tmp/                          blobs being written (renamed into place)
    conversations/<id>/messages.jsonl   the log: one record per line
    conversations/<id>/head.json        the log's head (count, last digest), kept apart
    conversations/<id>/fork.json        a fork's parent, fork point and its digest
    conversations/<id>/forks/<child>    one empty file per fork of this one
    conversations/<id>/sidecars/<name>.log    side files (audit, recording)
    conversations/<id>/attachments/<name>     files kept beside the conversation

Appends take an exclusive ``flock`` on ``messages.jsonl``; blobs are written to
``blobs/tmp`` and renamed into place before the record naming them is appended.
Locks are advisory and POSIX-only (``fcntl``).

The store follows no symbolic link below its directory, whether opened for
writing or read-only: files are opened with ``O_NOFOLLOW`` and every directory
it enters is checked first (``conversations``, ``blobs``, ``blobs/sha256`` and
``blobs/tmp`` when it opens, and each directory again on the way to every file
it reads or writes), so that a link planted there (by someone allowed to write
only the store) cannot make it read, list, write or delete files elsewhere. A
link found raises :class:`~canisters.IntegrityError` naming it. The store's own
directory may be a link.
"""

from __future__ import annotations

import fcntl
import functools
import os
import shutil
import stat
from collections import OrderedDict
from collections.abc import Generator, Iterable, Iterator
from pathlib import Path
from typing import Any, Literal, ParamSpec, TypeVar

import orjson

from .._files import not_a_file as _not_a_file
from .._files import open_regular as _open
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
from ._chain import (
    Chain,
    decode_head,
    encode_head,
    encode_record,
    record_link,
)
from ._common import (
    Codec,
    StoragePolicy,
    Verification,
    check_durability,
    check_id,
    link_error,
)
from ._files_logs import FileLogs
from ._files_maintenance import FileMaintenance
from ._files_parts import (
    FORK_NAME,
    HEAD_NAME,
    LOG_NAME,
    STORE_FORMAT,
    STORE_VERSION,
    FileContentStore,
    FileSidecar,
    Locks,
    _check_directory,
    _Log,
    _make_directory,
    _os_errors,
    _read,
    _sync,
    _sync_directory,
    _write_all,
    _write_atomically,
)
from ._forks import Fork, fork_stops, make_fork
from ._logindex import INDEX_NAME, IdIndex, prefix_ids
from ._redaction import Expiry, FileRedaction
from ._retries import record_id, screen
from ._search_files import FileSearch
from .s3 import S3ContentStore, open_blobs

__all__ = ["FileContentStore", "FileSidecar", "FileStore", "Locks"]

P = ParamSpec("P")
T = TypeVar("T")


class FileStore(FileLogs, FileMaintenance, FileSearch, FileRedaction, Expiry):
    """The file backend (see the module documentation for the layout)."""

    def __init__(
        self,
        root: str | os.PathLike[str],
        *,
        policy: StoragePolicy | None = None,
        durability: Literal["fsync", "flush"] = "fsync",
        blobs: str | S3ContentStore | None = None,
        read_only: bool = False,
    ) -> None:
        self._external = open_blobs(blobs) if blobs is not None else None
        self._root = Path(root)
        self._policy = policy if policy is not None else StoragePolicy()
        self._durability = check_durability(durability)
        self._durable = durability == "fsync"
        self._read_only = read_only
        try:
            if not read_only:
                self._root.mkdir(parents=True, exist_ok=True)
            self._check_marker()
            self._conversations = self._root / "conversations"
            if read_only:
                _check_directory(self._conversations)
            else:
                _make_directory(self._conversations)
            self._locks = Locks(self._root / "gc.lock", read_only)
            self._content: FileContentStore | S3ContentStore = (
                self._external
                if self._external is not None
                else FileContentStore(
                    self._root / "blobs", self._locks, self._durability
                )
            )
        except OSError as error:
            if isinstance(error, StorageError):
                raise
            raise StorageError(f"cannot open store at {root}: {error}") from error
        self._codec = Codec(self._policy, self._content.get)
        self._logs: OrderedDict[str, _Log] = OrderedDict()

    def _check_marker(self) -> None:
        marker = self._root / "store.json"
        try:
            document = orjson.loads(_read(marker))
        except FileNotFoundError:
            if self._read_only:
                raise StorageError(f"{self._root} is not a canisters store") from None
            _write_atomically(
                marker,
                orjson.dumps({"format": STORE_FORMAT, "version": STORE_VERSION}),
                self._durable,
            )
            return
        except orjson.JSONDecodeError as error:
            raise StorageError(f"{marker} is not a store marker: {error}") from error
        if not isinstance(document, dict) or document.get("format") != STORE_FORMAT:
            raise StorageError(f"{self._root} is not a canisters store")
        if document.get("version") != STORE_VERSION:
            raise StorageError(
                f"store layout version {_excerpt(document.get('version'))} "
                "is not supported "
                f"(this library reads version {STORE_VERSION})"
            )

    # Properties ----------------------------------------------------------------

    @property
    def root(self) -> Path:
        """The store's directory."""
        return self._root

    @property
    def content(self) -> FileContentStore | S3ContentStore:
        """The content store."""
        return self._content

    @property
    def policy(self) -> StoragePolicy:
        """Which parts are stored by hash."""
        return self._policy

    @property
    def durability(self) -> Literal["fsync", "flush"]:
        """How far an append goes before it returns."""
        return self._durability

    @property
    def read_only(self) -> bool:
        """Whether the store was opened only to read (it creates nothing)."""
        return self._read_only

    def _directory(self, conversation_id: str) -> Path:
        """Return a conversation's directory (checked: not a link; it may not exist)."""
        directory = self._conversations / check_id(conversation_id)
        _check_directory(self._conversations)
        _check_directory(directory)
        return directory

    # Writing -------------------------------------------------------------------

    def append(self, conversation_id: str, canister: Canister) -> None:
        """Append one canister durably, creating the conversation when new."""
        self.extend(conversation_id, (canister,))

    @_os_errors
    def extend(self, conversation_id: str, canisters: Iterable[Canister]) -> None:
        """Append canisters durably in one write, creating the conversation."""
        check_id(conversation_id)
        self._locks.writing()
        dehydrate = self._codec.dehydrate
        records = []
        blobs: list[tuple[str, bytes]] = []
        for canister in canisters:
            record, found = dehydrate(canister)
            records.append(record)
            if found:
                blobs.extend(found)
        if (
            records
            and conversation_id not in self._logs
            and not self.exists(conversation_id)
        ):
            # An append refused creates nothing: what refuses an append to a
            # new conversation (a canister id twice, with two contents) is found
            # before the log is made.
            screen(conversation_id, records, lambda _wanted: {})
        locks = self._locks
        with locks.thread:
            if blobs:
                fcntl.flock(locks.gc_fd, fcntl.LOCK_SH)
            try:
                for content_id, data in blobs:
                    self._content.store(content_id, data)
                self._write(conversation_id, records)
            finally:
                if blobs:
                    fcntl.flock(locks.gc_fd, fcntl.LOCK_UN)

    def _write(self, conversation_id: str, records: list[dict[str, Any]]) -> None:
        log = self._open_log(conversation_id)
        fd = log.fd
        fcntl.flock(fd, fcntl.LOCK_EX)
        try:
            log = self._current(conversation_id, log)
            fd = log.fd
            size = os.fstat(fd).st_size
            if size != log.size:
                self._refresh(conversation_id, log, size)
            records = self._screen(conversation_id, log, records)
            seq, prev = log.seq, log.prev
            lines = []
            entries = []
            offset = log.size
            for record in records:
                line, prev = encode_record(seq, prev, record)
                lines.append(line)
                canister_id = record_id(record)
                if canister_id is not None:
                    entries.append((seq, canister_id, offset, offset + len(line)))
                offset += len(line)
                seq += 1
            data = b"".join(lines)
            if data:
                _write_all(fd, data)
                if self._durable:
                    _sync(fd)
            log.size += len(data)
            log.seq, log.prev = seq, prev
            if log.index is not None:
                log.index.add(entries, log.size)
            # After the log (and its sync): a crash leaves the kept head behind
            # the log, never ahead of it. It only grows, so writing over it in
            # place leaves no stale bytes; readers take the log's lock.
            head = _open(log.directory / HEAD_NAME, os.O_WRONLY | os.O_CREAT)
            try:
                os.pwrite(head, encode_head(seq, prev), 0)
            finally:
                os.close(head)
        finally:
            fcntl.flock(fd, fcntl.LOCK_UN)

    def _screen(
        self, conversation_id: str, log: _Log, records: list[dict[str, Any]]
    ) -> list[dict[str, Any]]:
        """The records of an append the log (and a fork's prefix) lacks, looked
        up in its ``ids.jsonl``, under the log's exclusive lock."""
        if not records:
            return records
        fresh = log.index is None
        if log.index is None:
            log.index = IdIndex(
                _open(log.directory / INDEX_NAME, os.O_RDWR | os.O_APPEND | os.O_CREAT)
            )
        index = log.index
        index.sync(log.fd, log.size, fresh)

        def held(wanted: list[str]) -> dict[str, tuple[str, bytes]]:
            found = index.held(
                log.fd, wanted, functools.partial(_record, conversation_id)
            )
            if log.prefix is None or log.prefix:  # unknown yet, or a fork's
                found.update(self._held_above(conversation_id, log, wanted, found))
            return found

        return screen(conversation_id, records, held)

    def _held_above(
        self,
        conversation_id: str,
        log: _Log,
        wanted: list[str],
        found: dict[str, tuple[str, bytes]],
        again: bool = False,
    ) -> dict[str, tuple[str, bytes]]:
        """The canisters of ``wanted`` a fork's prefix holds (not in ``found``)."""
        if log.prefix is None:
            lineage = self._lineage(conversation_id)
            parts = fork_stops([seq for _id, seq, _head in lineage])
            ancestors = [
                (lineage[index][0], stop)
                for index, stop in reversed(parts)
                if stop is not None
            ]
            log.prefix = prefix_ids(ancestors, self._open_file)
        above: dict[str, tuple[str, bytes]] = {}
        for canister_id in wanted:
            entry = log.prefix.get(canister_id)
            if entry is None or canister_id in found:
                continue
            ancestor, (seq, start, end) = entry
            fd = self._open_file(ancestor, LOG_NAME)
            if fd is None:
                continue
            try:
                line = os.pread(fd, end - start, start)
            finally:
                os.close(fd)
            link = record_link(line)
            if not again and (link is None or link[0] != seq):
                log.prefix = None  # the ancestor's log was written again: redacted
                return self._held_above(conversation_id, log, wanted, found, True)
            above[canister_id] = (_record(ancestor, seq), line)
        return above

    def _fork_document(self, directory: Path) -> dict[str, Any] | None:
        """Return a conversation's ``fork.json`` (``None``: not a fork)."""
        try:
            document = orjson.loads(_read(directory / FORK_NAME))
        except FileNotFoundError:
            return None
        except orjson.JSONDecodeError as error:
            raise IntegrityError(f"{directory.name}: unreadable fork.json") from error
        if not isinstance(document, dict):
            raise IntegrityError(f"{directory.name}: fork.json is not an object")
        return document

    def _fork_info(self, directory: Path) -> tuple[str, int, str] | None:
        document = self._fork_document(directory)
        if document is None:
            return None
        parent, seq, head = (
            document.get("parent"),
            document.get("seq"),
            document.get("head"),
        )
        if type(parent) is not str or type(seq) is not int or type(head) is not str:
            raise IntegrityError(f"{directory.name}: malformed fork.json")
        return check_id(parent), seq, head

    def _lineage(self, conversation_id: str) -> list[tuple[str, int, str]]:
        """Return the conversations whose logs make this one, root first.

        Each entry is (id, seq of its first record, digest before it).
        """
        lineage: list[tuple[str, int, str]] = []
        current: str | None = conversation_id
        seen: set[str] = set()
        while current is not None:
            if current in seen:
                raise IntegrityError(f"{conversation_id!r}: forks form a cycle")
            seen.add(current)
            directory = self._directory(current)
            if not self.exists(current):
                raise ConversationNotFound(current)
            fork = self._fork_info(directory)
            if fork is None:
                lineage.append((current, 0, ""))
                current = None
            else:
                lineage.append((current, fork[1], fork[2]))
                current = fork[0]
        lineage.reverse()
        return lineage

    def _lines(self, conversation_id: str) -> Iterator[bytes]:
        """Yield the lines of a log as they were when reading began."""
        fd = _open(self._directory(conversation_id) / LOG_NAME, os.O_RDONLY)
        with open(fd, "rb") as handle:
            fcntl.flock(handle.fileno(), fcntl.LOCK_SH)
            remaining = os.fstat(handle.fileno()).st_size
            fcntl.flock(handle.fileno(), fcntl.LOCK_UN)
            for line in handle:
                if remaining <= 0:
                    return
                if len(line) > remaining:
                    line = line[:remaining]
                remaining -= len(line)
                yield line

    def _walk(
        self, chain: Chain, conversation_id: str
    ) -> Generator[Canister, None, None]:
        lineage = self._lineage(conversation_id)
        for index, stop in fork_stops([seq for _id, seq, _head in lineage]):
            current, seq, head = lineage[index]
            if index:
                chain.fork_point(f"{current} fork.json", seq, head)
            yield from chain.walk(
                self._lines(current),
                functools.partial(_label, current),
                stop=stop,
            )
            if stop is not None and chain.seq < stop:
                chain.problem(
                    f"{current} line end",
                    "fork-point",
                    f"the log ends after record {chain.seq - 1}, before its "
                    f"fork point at record {stop}",
                )

    @_os_errors
    def load(self, conversation_id: str, *, salvage: bool = False) -> Conversation:
        """Return the hydrated conversation, checking its hash chain."""
        chain = Chain(
            check_id(conversation_id), self._codec, "salvage" if salvage else "strict"
        )
        return Conversation(tuple(self._walk(chain, conversation_id)))

    @_os_errors
    def verify(self, conversation_id: str) -> Verification:
        """Check the hash chain, every referenced blob and the kept head."""
        chain = Chain(check_id(conversation_id), self._codec, "verify")
        directory = self._directory(conversation_id)
        where = f"{conversation_id} {HEAD_NAME}"
        chain.keep(self._kept_head(conversation_id, directory), where)
        for _canister in self._walk(chain, conversation_id):
            pass
        chain.reach(where)
        return chain.verification()

    @_os_errors
    def head(self, conversation_id: str) -> tuple[int, str]:
        """Return the number of records and the digest of the last one."""
        directory = self._directory(conversation_id)
        try:
            fd = _open(directory / LOG_NAME, os.O_RDONLY)
        except FileNotFoundError:
            raise ConversationNotFound(conversation_id) from None
        try:
            fcntl.flock(fd, fcntl.LOCK_SH)
            _end, seq, prev, _whole = self._end(
                conversation_id, fd, os.fstat(fd).st_size, directory
            )
        finally:
            os.close(fd)
        return seq, prev

    def _kept_head(
        self, conversation_id: str, directory: Path
    ) -> tuple[int, str] | None:
        """Return the head kept apart from the log, read under the log's lock."""
        try:
            fd = _open(directory / LOG_NAME, os.O_RDONLY)
        except FileNotFoundError:
            raise ConversationNotFound(conversation_id) from None
        try:
            fcntl.flock(fd, fcntl.LOCK_SH)
            return decode_head(_read(directory / HEAD_NAME))
        except FileNotFoundError:
            return None
        finally:
            os.close(fd)

    def exists(self, conversation_id: str) -> bool:
        """Tell whether the conversation exists."""
        path = self._directory(conversation_id) / LOG_NAME
        try:
            mode = os.lstat(path).st_mode
        except (FileNotFoundError, NotADirectoryError):
            return False
        if stat.S_ISLNK(mode):
            raise link_error(path)
        if not stat.S_ISREG(mode):
            raise _not_a_file(path)
        return True

    @_os_errors
    def conversations(self) -> list[str]:
        """Return the id of every conversation, sorted."""
        found: list[str] = []
        _check_directory(self._conversations)
        if self._read_only and not self._conversations.is_dir():
            return found
        with os.scandir(self._conversations) as entries:
            for entry in entries:
                if entry.name.startswith("."):
                    continue
                # A link in place of a conversation or its log is listed, never
                # followed: reading that conversation raises IntegrityError.
                if entry.is_symlink():
                    found.append(entry.name)
                    continue
                if not entry.is_dir(follow_symlinks=False):
                    continue
                try:
                    mode = os.lstat(os.path.join(entry.path, LOG_NAME)).st_mode
                except FileNotFoundError:
                    continue
                if stat.S_ISREG(mode) or stat.S_ISLNK(mode):
                    found.append(entry.name)
        found.sort()
        return found

    # Forks and deletion --------------------------------------------------------

    @_os_errors
    def fork(self, conversation_id: str, at: str) -> str:
        """Start a new conversation sharing the prefix up to canister ``at``."""
        self._locks.writing()
        parent = self._directory(conversation_id)
        chain = Chain(conversation_id, self._codec, "strict")
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
        directory = self._directory(child)
        os.mkdir(directory)
        document = {
            "format": "canisters.fork",
            "parent": conversation_id,
            "at": at,
            "seq": chain.seq,
            "head": chain.prev,
        }
        _write_atomically(directory / FORK_NAME, orjson.dumps(document), self._durable)
        _write_atomically(
            directory / HEAD_NAME, encode_head(chain.seq, chain.prev), self._durable
        )
        forks = _make_directory(parent / "forks")
        os.close(_open(forks / child, os.O_WRONLY | os.O_CREAT))
        os.close(_open(directory / LOG_NAME, os.O_WRONLY | os.O_CREAT))
        if self._durable:
            _sync_directory(forks)
            _sync_directory(directory)
            _sync_directory(self._conversations)
        return child

    @_os_errors
    def origin(self, conversation_id: str) -> Fork | None:
        """Return where the conversation was forked (``None``: not a fork)."""
        directory = self._directory(conversation_id)
        if not self.exists(conversation_id):
            raise ConversationNotFound(conversation_id)
        return self._origin(conversation_id, directory)

    def _origin(self, conversation_id: str, directory: Path) -> Fork | None:
        document = self._fork_document(directory)
        if document is None:
            return None
        fork = make_fork(
            conversation_id,
            document.get("parent"),
            document.get("at"),
            document.get("seq"),
        )
        check_id(fork.parent)
        return fork

    @_os_errors
    def forks(self, conversation_id: str) -> list[Fork]:
        """Return the forks made of the conversation, sorted by id."""
        directory = self._directory(conversation_id)
        if not self.exists(conversation_id):
            raise ConversationNotFound(conversation_id)
        marks = directory / "forks"
        _check_directory(marks)
        try:
            with os.scandir(marks) as entries:
                names = sorted(entry.name for entry in entries)
        except FileNotFoundError:
            return []
        found: list[Fork] = []
        for name in names:
            # A mark outlives its fork when a deletion was cut short.
            if not self.exists(name):
                continue
            fork = self._origin(name, self._directory(name))
            if fork is not None and fork.parent == conversation_id:
                found.append(fork)
        return found

    @_os_errors
    def delete(self, conversation_id: str) -> None:
        """Delete the conversation and its side files; refused while forks exist."""
        self._locks.writing()
        directory = self._directory(conversation_id)
        if not self.exists(conversation_id):
            raise ConversationNotFound(conversation_id)
        forks = directory / "forks"
        _check_directory(forks)
        if forks.is_dir():
            children = sorted(
                entry.name for entry in forks.iterdir() if self.exists(entry.name)
            )
            if children:
                raise StorageError(
                    f"conversation {conversation_id!r} has forks "
                    f"({', '.join(children)}); delete them first"
                )
        fork = self._fork_info(directory)
        with self._locks.thread:
            self._forget(conversation_id)
            trash = self._conversations / f".deleted-{new_id()}"
            os.rename(directory, trash)
            if fork is not None:
                forks = self._directory(fork[0]) / "forks"
                _check_directory(forks)
                (forks / conversation_id).unlink(missing_ok=True)
            if self._durable:
                _sync_directory(self._conversations)
            shutil.rmtree(trash, ignore_errors=True)

    # Side files ----------------------------------------------------------------

    def sidecar(self, conversation_id: str, name: str) -> FileSidecar:
        """Return the side file ``name`` of the conversation."""
        name = check_id(name, "side-file name")
        path = self._directory(conversation_id) / "sidecars" / f"{name}.log"
        return FileSidecar(path, conversation_id, name, self._durable, self._locks)

    @_os_errors
    def sidecar_names(self, conversation_id: str) -> list[str]:
        """Return the name of every side file of the conversation, sorted."""
        directory = self._directory(conversation_id) / "sidecars"
        _check_directory(directory)
        if not directory.is_dir():
            return []
        # A link in place of a side file is listed, never followed: reading it
        # raises IntegrityError.
        return sorted(
            path.name[:-4] for path in directory.iterdir() if path.name.endswith(".log")
        )

    def attachment_path(self, conversation_id: str, name: str) -> Path:
        """Return the path of a file kept beside the conversation (file backend only).

        ``conversations/<id>/attachments/<name>``; the directory is created, the
        file is the caller's to write (it is deleted with the conversation). A
        link in its place, or in place of a directory above it, raises
        :class:`~canisters.IntegrityError`: the path returned lies in the store.
        """
        name = check_id(name, "attachment name")
        self._locks.writing()
        conversation = self._directory(conversation_id)
        _make_directory(conversation)
        directory = _make_directory(conversation / "attachments")
        path = directory / name
        _check_directory(path)
        return path

    # Maintenance ---------------------------------------------------------------

    def close(self) -> None:
        """Close every open log and the lock file."""
        with self._locks.thread:
            while self._logs:
                _id, log = self._logs.popitem()
                log.close()
            if self._locks.gc_fd >= 0:
                os.close(self._locks.gc_fd)
                self._locks.gc_fd = -1

    def __enter__(self) -> FileStore:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"FileStore({str(self._root)!r}, durability={self._durability!r})"


def _label(conversation_id: str, number: int) -> str:
    return f"{conversation_id} line {number}"


def _record(conversation_id: str, seq: int) -> str:
    return f"record {seq} of {conversation_id}"
