"""Search in the file backend: a scan of the logs, no index.

Each log is read whole; one that lacks a word of the query (ASCII words are
looked for in its bytes, whatever their case) is passed over, and in the others
a line is parsed only when its bytes could hold every word (or it names text
stored by hash), so that most of a store is passed over as bytes. The
benchmark (``.auxiliary/benchmarks``) measures what a scan costs: it grows with
the size of the store, where the databases' indexes grow with the hits.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

from ..exceptions import ConversationNotFound
from . import _search
from ._chain import record_link
from ._common import STORED_MARK, Progress
from ._search import SearchHit
from ._search_sqlite import lineage_stops

__all__ = ["FileSearch"]


class FileSearch:
    """The search methods of :class:`~canisters.storage.FileStore`."""

    __slots__ = ()

    _content: Any

    def conversations(self) -> list[str]:
        raise NotImplementedError  # pragma: no cover

    def _directory(self, conversation_id: str) -> Path:
        raise NotImplementedError  # pragma: no cover

    def _fork_info(self, directory: Path) -> tuple[str, int, str] | None:
        raise NotImplementedError  # pragma: no cover

    def _lineage(self, conversation_id: str) -> list[tuple[str, int, str]]:
        raise NotImplementedError  # pragma: no cover

    def _lines(self, conversation_id: str) -> Iterator[bytes]:
        raise NotImplementedError  # pragma: no cover

    def _numbered(
        self, conversation_id: str, stop: int | None
    ) -> Iterator[tuple[int, bytes]]:
        """Yield each line of a log with its record number, up to ``stop``."""
        for line in self._lines(conversation_id):
            link = record_link(line)
            seq = link[0] if link is not None else -1
            if stop is not None and seq >= stop:
                return
            yield seq, line

    def search(
        self,
        query: str,
        *,
        limit: int = 20,
        conversation: str | None = None,
        kinds: Iterable[str] | None = None,
    ) -> list[SearchHit]:
        """Find canisters whose text holds every word of ``query`` (a scan)."""
        terms, limit, wanted, within = _search.check_search(
            query, limit, conversation, kinds
        )
        fetch = self._content.get
        hits: list[SearchHit] = []
        if within is not None:
            sources = lineage_stops(self._lineage(within))
        else:
            sources = [(found, None) for found in self.conversations()]
        needles = [
            re.compile(re.escape(word.encode("ascii")), re.IGNORECASE)
            for word, _prefix in terms
            if word.isascii()
        ]
        for current, stop in sources:
            try:
                lines = list(self._numbered(current, stop))
                data = b"".join(line for _seq, line in lines)
                if STORED_MARK not in data and not all(
                    needle.search(data) for needle in needles
                ):
                    continue  # the whole log lacks a word: no line is read
                for key, kind, text in _search.scan_lines(terms, lines, fetch, wanted):
                    hits.append(_search.hit(terms, within or current, key, kind, text))
                    if len(hits) >= limit:
                        return hits
            except (ConversationNotFound, FileNotFoundError):
                if within is not None:  # pragma: no cover - deleted meanwhile
                    raise
        return hits

    def rebuild_search_index(self, *, progress: Progress | None = None) -> int:
        """Do nothing: the file backend keeps no index (it scans); return 0."""
        if progress is not None:
            progress(1, 1)
        return 0
