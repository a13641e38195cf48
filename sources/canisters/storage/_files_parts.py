"""The file backend's parts below the store: file I/O that follows no symbolic
link and syncs what it must, the locks, the content store (one file per blob)
open logs and side files. :class:`FileContentStore`, :class:`FileSidecar` and
:class:`Locks` are public through :mod:`canisters.storage.files`.
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import functools
import os
import stat
import threading
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import Final, Literal, ParamSpec, TypeVar

from .._files import not_a_file as _not_a_file
from .._files import open_regular as _open
from ..canisters import new_id
from ..exceptions import (
    ContentNotFound,
    IntegrityError,
    StorageError,
)
from ._chain import (
    decode_lines,
)
from ._common import (
    SidecarBase,
    check_bytes,
    check_content_id,
    check_line,
    content_id_of,
    link_error,
    logger,
)
from ._logindex import IdIndex

P = ParamSpec("P")
T = TypeVar("T")


STORE_FORMAT: Final = "canisters.store"
STORE_VERSION: Final = 1
LOG_NAME: Final = "messages.jsonl"
FORK_NAME: Final = "fork.json"
HEAD_NAME: Final = "head.json"
_OPEN_LOGS: Final = 64
_BLOCK: Final = 65536
_sync: Callable[[int], None] = getattr(os, "fdatasync", os.fsync)


def _os_errors(method: Callable[P, T]) -> Callable[P, T]:
    """Turn a bare ``OSError`` of the filesystem into a :class:`StorageError`."""

    @functools.wraps(method)
    def wrapper(*args: P.args, **kwargs: P.kwargs) -> T:
        try:
            return method(*args, **kwargs)
        except StorageError:
            raise
        except OSError as error:
            raise StorageError(f"{method.__name__} failed: {error}") from error

    return wrapper


def _read(path: str | Path) -> bytes:
    """Return the bytes of the file at ``path`` (not a link)."""
    fd = _open(path, os.O_RDONLY)
    try:
        with open(fd, "rb", closefd=False) as handle:
            return handle.read()
    finally:
        os.close(fd)


def _check_directory(path: str | Path) -> None:
    """Refuse ``path`` when it is a symbolic link (a missing path is fine)."""
    try:
        mode = os.lstat(path).st_mode
    except (FileNotFoundError, NotADirectoryError):
        return
    if stat.S_ISLNK(mode):
        raise link_error(path)


def _check_directories(paths: Iterable[str | Path]) -> None:
    """Refuse the first of ``paths`` that is a symbolic link (given top down)."""
    for path in paths:
        _check_directory(path)


def _make_directory(path: Path) -> Path:
    """Create the directory ``path`` if missing; refuse it when it is a link."""
    with contextlib.suppress(FileExistsError):
        os.mkdir(path)
    _check_directory(path)
    return path


def _sync_directory(path: str | Path) -> None:
    try:
        fd = os.open(path, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC)
    except OSError as error:
        if error.errno == errno.ELOOP:
            raise link_error(path) from None
        raise
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        written = os.write(fd, view)
        view = view[written:]


def _write_atomically(path: Path, data: bytes, durable: bool) -> None:
    temporary = path.with_name(f".{path.name}.{new_id()}.tmp")
    fd = _open(temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL)
    try:
        _write_all(fd, data)
        if durable:
            os.fsync(fd)
    finally:
        os.close(fd)
    os.replace(temporary, path)
    if durable:
        _sync_directory(path.parent)


class Locks:
    """The locks a file store shares with its content store.

    ``thread`` serializes writers of one process; ``gc_fd`` is ``gc.lock``, held
    shared by writers storing blobs and exclusively by garbage collection.
    """

    __slots__ = ("gc_fd", "read_only", "thread")

    def __init__(self, path: Path, read_only: bool = False) -> None:
        self.thread = threading.RLock()
        self.read_only = read_only
        if not read_only:
            self.gc_fd = _open(path, os.O_RDWR | os.O_CREAT)
            return
        try:
            self.gc_fd = _open(path, os.O_RDONLY)  # flock needs no write access
        except FileNotFoundError:
            self.gc_fd = -1

    def writing(self) -> None:
        """Refuse to go on when the store was opened read-only."""
        if self.read_only:
            raise StorageError("the store was opened read-only")

    def lock(self, operation: int) -> None:
        """``flock`` the gc lock (nothing to lock when read-only without one)."""
        if self.gc_fd >= 0:
            fcntl.flock(self.gc_fd, operation)


def _complete_end(fd: int, size: int) -> int:
    """Return the offset just after the last newline of the file (0 if none)."""
    position = size
    while position > 0:
        start = max(0, position - _BLOCK)
        block = os.pread(fd, position - start, start)
        index = block.rfind(b"\n")
        if index >= 0:
            return start + index + 1
        position = start
    return 0


# --------------------------------------------------------------------------- #
# Logs


def _last_line(fd: int, end: int) -> bytes:
    """Return the complete line that ends at ``end`` (just after its newline)."""
    start = _complete_end(fd, end - 1)
    return os.pread(fd, end - start, start)


class _Log:
    """An open conversation log and what this process knows of its end."""

    __slots__ = (
        "directory",
        "fd",
        "index",
        "inode",
        "path",
        "prefix",
        "prev",
        "seq",
        "size",
    )

    def __init__(self, fd: int, directory: Path, path: str) -> None:
        self.fd = fd
        self.directory = directory
        self.path = path
        self.inode = os.fstat(fd).st_ino
        self.size = -1
        self.seq = 0
        self.prev = ""
        # The canister ids of the log (opened by the first append) and, for a
        # fork, of the prefix it shares (read once: it never changes).
        self.index: IdIndex | None = None
        self.prefix: dict[str, tuple[str, tuple[int, int, int]]] | None = None

    def close(self) -> None:
        """Close the log and its index."""
        os.close(self.fd)
        if self.index is not None:
            self.index.close()


# --------------------------------------------------------------------------- #
# Content store


class FileContentStore:
    """Blobs as files ``blobs/sha256/<2 hex>/<64 hex>``, verified on every read.

    Opened in either mode, and again before each read or write, it refuses a
    symbolic link in place of ``blobs``, ``blobs/sha256``, the shard directory
    or the blob file.
    """

    __slots__ = (
        "_durable",
        "_locks",
        "_parents",
        "_root",
        "_shards",
        "_temporary",
        "_tmp",
    )

    def __init__(
        self, root: Path, locks: Locks, durability: Literal["fsync", "flush"]
    ) -> None:
        self._root = root / "sha256"
        self._temporary = root / "tmp"
        self._locks = locks
        self._durable = durability == "fsync"
        # The directories above every shard, top down.
        self._parents = (os.fspath(root), os.fspath(self._root))
        if locks.read_only:
            _check_directories((root, self._root, self._temporary))
        else:
            _make_directory(root)
            _make_directory(self._root)
            _make_directory(self._temporary)
        # Appends build blob paths as strings: pathlib costs more than the rest
        # of storing a blob already present.
        self._shards = os.fspath(self._root) + os.sep
        self._tmp = os.fspath(self._temporary) + os.sep

    def path(self, content_id: str) -> Path:
        """Return the file of ``content_id`` (checked; it need not exist)."""
        digest = check_content_id(content_id)[7:]
        return self._root / digest[:2] / digest

    @_os_errors
    def put(self, data: bytes) -> str:
        """Store ``data`` once and return its ``sha256:`` id."""
        data = check_bytes(data)
        self._locks.writing()
        content_id = content_id_of(data)
        with self._locks.thread:
            fcntl.flock(self._locks.gc_fd, fcntl.LOCK_SH)
            try:
                if not self.store(content_id, data):
                    os.utime(self.path(content_id), follow_symlinks=False)
            finally:
                fcntl.flock(self._locks.gc_fd, fcntl.LOCK_UN)
        return content_id

    def store(self, content_id: str, data: bytes) -> bool:
        """Write ``data`` under ``content_id`` unless present; tell if it wrote.

        The caller holds the garbage-collection lock (shared).
        """
        digest = check_content_id(content_id)[7:]
        shard = self._shards + digest[:2]
        target = f"{shard}{os.sep}{digest}"
        _check_directories(self._parents)
        _check_directory(shard)
        try:
            if stat.S_ISLNK(os.lstat(target).st_mode):
                raise link_error(target)
            return False
        except (FileNotFoundError, NotADirectoryError):
            pass
        _check_directories((self._parents[0], self._temporary))
        temporary = f"{self._tmp}{digest}.{new_id()}"
        fd = _open(temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL)
        try:
            _write_all(fd, data)
            if self._durable:
                os.fsync(fd)
        finally:
            os.close(fd)
        try:
            os.replace(temporary, target)
        except FileNotFoundError:
            with contextlib.suppress(FileExistsError):
                os.mkdir(shard)
            _check_directory(shard)
            os.replace(temporary, target)
            if self._durable:
                _sync_directory(self._root)
        if self._durable:
            _sync_directory(shard)
        return True

    @_os_errors
    def get(self, content_id: str) -> bytes:
        """Return the bytes of ``content_id``, checking them against the id."""
        path = self.path(content_id)
        _check_directories(self._parents)
        _check_directory(path.parent)
        try:
            data = _read(path)
        except FileNotFoundError:
            raise ContentNotFound(content_id) from None
        if content_id_of(data) != content_id:
            raise IntegrityError(
                f"blob {content_id} no longer matches its id (tampered or corrupt)"
            )
        return data

    def has(self, content_id: str) -> bool:
        """Tell whether the blob is stored."""
        path = self.path(content_id)
        _check_directories(self._parents)
        _check_directory(path.parent)
        try:
            mode = os.lstat(path).st_mode
        except (FileNotFoundError, NotADirectoryError):
            return False
        if stat.S_ISLNK(mode):
            raise link_error(path)
        if not stat.S_ISREG(mode):
            raise _not_a_file(path)
        return True

    def ids(self) -> Iterator[str]:
        """Yield the id of every stored blob (refusing links among them)."""
        _check_directories(self._parents)
        if not self._root.is_dir():  # a store opened read-only before any blob
            return
        for shard in sorted(self._root.iterdir()):
            if shard.is_symlink():
                raise link_error(shard)
            if not shard.is_dir():
                continue
            for blob in shard.iterdir():
                if len(blob.name) == 64 and blob.name.startswith(shard.name):
                    if blob.is_symlink():
                        raise link_error(blob)
                    yield "sha256:" + blob.name


# --------------------------------------------------------------------------- #
# Side files


class FileSidecar(SidecarBase):
    """A side file: ``conversations/<id>/sidecars/<name>.log``."""

    __slots__ = ("_durable", "_locks", "_path")

    def __init__(
        self, path: Path, conversation_id: str, name: str, durable: bool, locks: Locks
    ) -> None:
        super().__init__(conversation_id, name)
        self._path = path
        self._locks = locks
        self._durable = durable

    def _check(self) -> None:
        """Refuse links among the directories above the side file."""
        sidecars = self._path.parent
        _check_directory(sidecars.parent.parent)
        _check_directory(sidecars.parent)
        _check_directory(sidecars)

    @_os_errors
    def append_line(self, line: str) -> None:
        """Append one line durably, under an exclusive lock."""
        data = check_line(line).encode("utf-8") + b"\n"
        self._locks.writing()
        self._check()
        try:
            fd = _open(self._path, os.O_RDWR | os.O_APPEND | os.O_CREAT)
        except FileNotFoundError:
            _make_directory(self._path.parent.parent)
            _make_directory(self._path.parent)
            fd = _open(self._path, os.O_RDWR | os.O_APPEND | os.O_CREAT)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)
            size = os.fstat(fd).st_size
            if size:
                end = _complete_end(fd, size)
                if end != size:
                    logger.warning(
                        "dropping an unfinished final line of side file %s of %s",
                        self._name,
                        self._conversation_id,
                    )
                    os.ftruncate(fd, end)
            _write_all(fd, data)
            if self._durable:
                _sync(fd)
        finally:
            os.close(fd)

    @_os_errors
    def read_lines(self) -> list[str]:
        """Return every complete line, oldest first."""
        self._check()
        try:
            fd = _open(self._path, os.O_RDONLY)
        except FileNotFoundError:
            return []
        try:
            fcntl.flock(fd, fcntl.LOCK_SH)
            with open(fd, "rb", closefd=False) as handle:
                data = handle.read()
        finally:
            os.close(fd)
        lines = data.split(b"\n")
        if lines[-1]:
            logger.warning(
                "ignoring an unfinished final line of side file %s of %s",
                self._name,
                self._conversation_id,
            )
        return decode_lines(lines[:-1], os.fspath(self._path))
