"""The files SQLite keeps beside a database, checked before it opens them."""

from __future__ import annotations

import os
import stat
from typing import Final

from ._common import link_error

COMPANIONS: Final = ("-wal", "-shm", "-journal")


def check_companions(path: str) -> None:
    """Refuse a symbolic link in place of a file SQLite keeps beside the database.

    SQLite itself opens them without following links (``O_NOFOLLOW``) and then
    fails with a bare "unable to open database file", or, read-only, reads the
    database without its write-ahead log: this names the link instead. The
    database's own path may be a link (they then lie beside its target).
    """
    for base in dict.fromkeys((path, os.path.realpath(path))):
        for suffix in COMPANIONS:
            companion = base + suffix
            try:
                mode = os.lstat(companion).st_mode
            except OSError:  # missing, or not for this reader to see: SQLite says
                continue
            if stat.S_ISLNK(mode):
                raise link_error(companion)
