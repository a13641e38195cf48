"""The open logs of the file backend: a log is opened once and kept open
between appends (up to a bound, the least recently used closed first), its end
and last record learnt from memory when no other writer touched the file since,
else from the file's tail."""

from __future__ import annotations

import contextlib
import fcntl
import os
from collections import OrderedDict
from pathlib import Path

from .._files import open_regular as _open
from ..exceptions import (
    IntegrityError,
)
from ._chain import (
    encode_head,
    follows,
    record_link,
)
from ._common import (
    logger,
)
from ._files_parts import (
    _OPEN_LOGS,
    HEAD_NAME,
    LOG_NAME,
    _complete_end,
    _last_line,
    _Log,
    _make_directory,
    _sync,
    _sync_directory,
    _write_all,
)

__all__ = ["FileLogs"]


class FileLogs:
    """The log handling of :class:`~canisters.storage.FileStore`."""

    __slots__ = ()

    _conversations: Path
    _durable: bool
    _logs: OrderedDict[str, _Log]

    def _directory(self, conversation_id: str) -> Path:
        raise NotImplementedError  # pragma: no cover

    def _fork_info(self, directory: Path) -> tuple[str, int, str] | None:
        raise NotImplementedError  # pragma: no cover

    def _open_file(self, conversation_id: str, name: str) -> int | None:
        """Open a file of a conversation's directory read-only (``None``: missing)."""
        try:
            return _open(self._directory(conversation_id) / name, os.O_RDONLY)
        except FileNotFoundError:
            return None

    def _open_log(self, conversation_id: str) -> _Log:
        """Return the open log of a (checked) conversation id, opening it if needed."""
        logs = self._logs
        log = logs.get(conversation_id)
        if log is not None:
            logs.move_to_end(conversation_id)
            return log
        directory = self._directory(conversation_id)
        path = directory / LOG_NAME
        try:
            fd = _open(path, os.O_RDWR | os.O_APPEND)
        except FileNotFoundError:
            _make_directory(directory)
            # The kept head first: a log never exists without one.
            with contextlib.suppress(FileExistsError):
                head = _open(
                    directory / HEAD_NAME, os.O_WRONLY | os.O_CREAT | os.O_EXCL
                )
                try:
                    _write_all(head, encode_head(0, ""))
                    if self._durable:
                        os.fsync(head)
                finally:
                    os.close(head)
            fd = _open(path, os.O_RDWR | os.O_APPEND | os.O_CREAT)
            if self._durable:
                _sync_directory(directory)
                _sync_directory(self._conversations)
        log = _Log(fd, directory, os.fspath(path))
        logs[conversation_id] = log
        while len(logs) > _OPEN_LOGS:
            _id, oldest = logs.popitem(last=False)
            oldest.close()
        return log

    def _current(self, conversation_id: str, log: _Log) -> _Log:
        """Return ``log`` locked, reopened first if the file was replaced."""
        while True:
            try:
                inode = os.lstat(log.path).st_ino
            except FileNotFoundError:
                inode = -1
            if inode == log.inode:
                return log
            # Deleted (and maybe recreated) by another process: start over.
            fcntl.flock(log.fd, fcntl.LOCK_UN)
            self._forget(conversation_id)
            log = self._open_log(conversation_id)
            fcntl.flock(log.fd, fcntl.LOCK_EX)

    def _refresh(self, conversation_id: str, log: _Log, size: int) -> None:
        """Learn the end of a log another writer (or a crash) changed."""
        fd = log.fd
        end, seq, prev, whole = self._end(conversation_id, fd, size, log.directory)
        if whole:
            logger.warning(
                "adding the newline the last record of %s lacks", conversation_id
            )
            _write_all(fd, b"\n")
            if self._durable:
                _sync(fd)
            end = size + 1
        elif end != size:
            logger.warning(
                "removing an unfinished final record of %s (a crash during an "
                "append) before appending",
                conversation_id,
            )
            os.ftruncate(fd, end)
        log.seq, log.prev = seq, prev
        log.size = end

    def _end(
        self, conversation_id: str, fd: int, size: int, directory: Path
    ) -> tuple[int, int, str, bool]:
        """Return where a log's records end and the chain's state there.

        ``(end, seq, prev, whole)``: the offset after the last complete line, the
        next record's number and the last digest; ``whole`` tells that the bytes
        after ``end`` are an intact record lacking only its newline, which
        ``seq`` and ``prev`` then count.
        """
        end = _complete_end(fd, size) if size else 0
        if end == 0:
            fork = self._fork_info(directory)
            seq, prev = (0, "") if fork is None else (fork[1], fork[2])
        else:
            link = record_link(_last_line(fd, end))
            if link is None:
                raise IntegrityError(
                    f"the last record of {conversation_id!r} is unreadable; "
                    "verify the conversation"
                )
            seq, prev = link[0] + 1, link[2]
        if end != size:
            digest = follows(os.pread(fd, size - end, end), seq, prev)
            if digest is not None:
                return end, seq + 1, digest, True
        return end, seq, prev, False

    def _forget(self, conversation_id: str) -> None:
        log = self._logs.pop(conversation_id, None)
        if log is not None:
            log.close()

    # Reading -------------------------------------------------------------------
