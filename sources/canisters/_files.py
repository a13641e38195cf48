"""Opening a store's files: only regular files, never through a link.

Shared by the file backend (:mod:`canisters.storage.files`) and the catalog of
a store's forks (:mod:`canisters._catalog`), which reads the backend's notes.
"""

from __future__ import annotations

import errno
import os
import stat
from pathlib import Path

from .exceptions import IntegrityError

__all__ = ["link_error", "not_a_file", "open_regular"]


def link_error(path: object) -> IntegrityError:
    """The error of a backend that found a symbolic link where it reads or writes."""
    return IntegrityError(
        f"{path} is a symbolic link: the store follows no links "
        "(one planted in it could turn it against files elsewhere)"
    )


def open_regular(path: str | Path, flags: int, mode: int = 0o644) -> int:
    """``os.open`` of a regular file, refusing anything else at ``path`` with
    :class:`IntegrityError`: a symbolic link as its last part, and a FIFO, a
    device, a socket or a directory (opened without blocking, so that a FIFO
    planted in the store cannot hang its reader)."""
    try:
        fd = os.open(path, flags | os.O_NOFOLLOW | os.O_CLOEXEC | os.O_NONBLOCK, mode)
    except OSError as error:
        if error.errno == errno.ELOOP:
            raise link_error(path) from None
        if error.errno in (errno.ENXIO, errno.EISDIR):  # a FIFO, a directory
            raise not_a_file(path) from None
        raise
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise not_a_file(path)
        os.set_blocking(fd, True)
    except BaseException:
        os.close(fd)
        raise
    return fd


def not_a_file(path: str | Path) -> IntegrityError:
    """The error of a backend that found something else than a file at ``path``."""
    return IntegrityError(
        f"{path} is not a regular file: the store reads and writes only files "
        "(a FIFO or device planted in it could hang or turn it against others)"
    )
