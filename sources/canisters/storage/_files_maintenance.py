"""Maintenance in the file backend: the references the logs and side files
hold, garbage collection under the store's exclusive lock, and statistics."""

from __future__ import annotations

import contextlib
import fcntl
import os
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from .._files import open_regular as _open
from ._common import GarbageReport, Progress, StoreStats, references, sweep
from ._files_parts import (
    LOG_NAME,
    FileContentStore,
    Locks,
    _check_directory,
    _os_errors,
)
from .s3 import S3ContentStore

__all__ = ["FileMaintenance"]


class FileMaintenance:
    """The maintenance methods of :class:`~canisters.storage.FileStore`."""

    __slots__ = ()

    _content: Any
    _external: S3ContentStore | None
    _locks: Locks
    _root: Path

    def conversations(self) -> list[str]:
        raise NotImplementedError  # pragma: no cover

    def _directory(self, conversation_id: str) -> Path:
        raise NotImplementedError  # pragma: no cover

    def _log_paths(self) -> Iterator[Path]:
        for conversation_id in self.conversations():
            directory = self._directory(conversation_id)
            yield directory / LOG_NAME
            sidecars = directory / "sidecars"
            _check_directory(sidecars)
            if sidecars.is_dir():
                yield from sidecars.iterdir()

    @_os_errors
    def referenced_content(self) -> set[str]:
        """Return every content id a conversation log or side file mentions."""
        return self._references(list(self._log_paths()), lambda: None)

    @staticmethod
    def _references(paths: list[Path], tick: Callable[[], None]) -> set[str]:
        found: set[str] = set()
        for path in paths:
            with open(_open(path, os.O_RDONLY), "rb") as handle:
                for line in handle:
                    if b"sha256:" in line:
                        found |= references(line)
            tick()
        return found

    @_os_errors
    def collect_garbage(
        self,
        *,
        dry_run: bool = False,
        older_than: float = 0.0,
        progress: Progress | None = None,
    ) -> GarbageReport:
        """Remove unreferenced blobs while holding the store's exclusive gc lock."""
        locks = self._locks
        if not dry_run:
            locks.writing()
        removed: list[str] = []
        freed = kept = 0
        with locks.thread:
            locks.lock(fcntl.LOCK_EX)
            try:
                paths = list(self._log_paths())
                if self._external is not None:
                    referenced = self._references(paths, _ticker(progress, len(paths)))
                    return sweep(
                        self._external.entries(),
                        referenced,
                        older_than=older_than,
                        dry_run=dry_run,
                        delete=self._external.delete,
                    )
                content = self._content
                assert isinstance(content, FileContentStore)
                blobs = list(content.ids())
                tick = _ticker(progress, len(paths) + len(blobs))
                referenced = self._references(paths, tick)
                limit = time.time() - older_than
                for content_id in blobs:
                    tick()
                    path = content.path(content_id)
                    status = path.lstat()
                    if content_id in referenced or (
                        older_than > 0 and status.st_mtime > limit
                    ):
                        kept += 1
                        continue
                    removed.append(content_id)
                    freed += status.st_size
                    if not dry_run:
                        path.unlink()
                if not dry_run:
                    temporary = self._root / "blobs" / "tmp"
                    _check_directory(self._root / "blobs")
                    _check_directory(temporary)
                    for leftover in temporary.iterdir():
                        leftover.unlink(missing_ok=True)
            finally:
                locks.lock(fcntl.LOCK_UN)
        return GarbageReport(tuple(sorted(removed)), freed, kept)

    @_os_errors
    def stats(self, *, progress: Progress | None = None) -> StoreStats:
        """Count conversations, records, blobs and references, and their bytes."""
        conversations = self.conversations()
        content = self._content
        if isinstance(content, FileContentStore):
            ids = list(content.ids())
            tick = _ticker(progress, len(ids) + len(conversations))
            sizes: dict[str, int] = {}
            for content_id in ids:
                with contextlib.suppress(FileNotFoundError):  # removed by a gc
                    sizes[content_id] = content.path(content_id).lstat().st_size
                tick()
        else:
            sizes = {key: size for key, size, _ in content.entries()}
            tick = _ticker(progress, len(conversations))
        records = log_bytes = count = referenced = 0
        for conversation_id in conversations:
            path = self._directory(conversation_id) / LOG_NAME
            with open(_open(path, os.O_RDONLY), "rb") as handle:
                for line in handle:
                    records += line.endswith(b"\n")
                    log_bytes += len(line)
                    if b"sha256:" in line:
                        for content_id in references(line):
                            size = sizes.get(content_id)
                            if size is not None:
                                count += 1
                                referenced += size
            tick()
        return StoreStats(
            len(conversations),
            records,
            log_bytes,
            len(sizes),
            sum(sizes.values()),
            count,
            referenced,
        )


def _ticker(progress: Progress | None, total: int) -> Callable[[], None]:
    """Return a function reporting one more unit of ``total`` done to ``progress``."""
    if progress is None:
        return lambda: None
    done = 0
    progress(0, total)

    def tick() -> None:
        nonlocal done
        done += 1
        progress(done, total)

    return tick
