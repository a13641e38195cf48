"""What differs between the Python versions canisters supports, in one place.

``fromisoformat`` reads ISO 8601 timestamps as Python 3.11's
:meth:`datetime.datetime.fromisoformat` does (``Z``, any number of fractional
digits, basic formats, ``+HHMM`` offsets, week dates) on every supported
version: on 3.10 through the ``backports-datetime-fromisoformat`` package, a
dependency there only, so that a document readable on one version is readable,
with the same value and the same kind of offset (a :class:`datetime.timezone`),
on all of them.
"""

from __future__ import annotations

import sys
from datetime import datetime, timezone

__all__ = ["fromisoformat"]

if sys.version_info >= (3, 11):
    fromisoformat = datetime.fromisoformat
else:
    from backports.datetime_fromisoformat import (  # type: ignore[import-untyped,import-not-found,unused-ignore]
        datetime_fromisoformat as _fromisoformat,
    )

    _UTC = timezone.utc

    def fromisoformat(text: str) -> datetime:
        """Python 3.11's ``datetime.fromisoformat``, backported: an offset is a
        :class:`datetime.timezone` (``timezone.utc`` for zero), as 3.11 gives
        and msgspec reads, not the backport's own class."""
        moment: datetime = _fromisoformat(text)
        zone = moment.tzinfo
        if zone is not None:
            offset = zone.utcoffset(moment)
            moment = moment.replace(tzinfo=timezone(offset) if offset else _UTC)
        return moment
