"""The canister-id index of the file backend's logs.

Beside each ``messages.jsonl`` the file backend keeps ``ids.jsonl``: one line
``[seq, "canister id", start, end]`` per record, naming the bytes of the log that
hold it. An append looks the ids it brings up in it (a dict, once the file is
read) instead of reading the log, so that appending a canister the conversation
holds already records nothing whatever the log's length.

The index follows the log and is never trusted beyond it: every writer holds
the log's exclusive lock while it reads and extends the index, and what the log
holds that the index lacks (a crash between the two writes, records written by
a version of the library without it) is indexed from the log before any lookup;
an index naming bytes the log no longer holds, or whose last entry is not the
record it names, is rebuilt from the log. It is written without ``fsync``: the
log alone is what must survive, and the index is made again from it.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Callable, Iterator
from typing import Final

import orjson

from ._chain import record_link
from ._retries import line_id

INDEX_NAME: Final = "ids.jsonl"
_BLOCK: Final = 1 << 20

# An entry: the record's seq and the log bytes [start, end) holding it.
Entry = tuple[int, int, int]


def records(fd: int, start: int, stop: int) -> Iterator[tuple[int, int, bytes]]:
    """Yield ``(start, end, line)`` of each complete line of the file ``fd``
    between the offsets ``start`` and ``stop``."""
    position = start
    pending = b""
    while position < stop:
        block = os.pread(fd, min(_BLOCK, stop - position), position)
        if not block:
            return
        position += len(block)
        data = pending + block
        offset = position - len(data)
        begin = 0
        while (newline := data.find(b"\n", begin)) >= 0:
            yield offset + begin, offset + newline + 1, data[begin : newline + 1]
            begin = newline + 1
        pending = data[begin:]


def _entry(line: bytes) -> tuple[str, Entry] | None:
    """Decode one index line (``None`` when it is not one)."""
    try:
        seq, canister_id, start, end = orjson.loads(line)
    except (ValueError, TypeError):
        return None
    if (
        type(seq) is not int
        or type(canister_id) is not str
        or type(start) is not int
        or type(end) is not int
        or not 0 <= start < end
    ):
        return None
    return canister_id, (seq, start, end)


def _names(line: bytes, canister_id: str, seq: int) -> bool:
    """Whether the log line holds record ``seq`` of canister ``canister_id``."""
    link = record_link(line)
    return link is not None and link[0] == seq and line_id(line) == canister_id


class IdIndex:
    """The open ``ids.jsonl`` of one log and what this process read of it."""

    __slots__ = ("end", "fd", "ids", "size")

    def __init__(self, fd: int) -> None:
        self.fd = fd
        self.ids: dict[str, Entry] = {}
        self.size = 0  # bytes of the index read
        self.end = 0  # offset in the log after the last record indexed
        self._read()

    def _read(self) -> bool:
        """Read the entries other writers added; ``False`` when the index is not
        one (a line that is no entry)."""
        size = os.fstat(self.fd).st_size
        if size == self.size:
            return True
        if size < self.size:
            return False
        data = os.pread(self.fd, size - self.size, self.size)
        complete = data.rfind(b"\n") + 1
        for line in data[:complete].splitlines():
            entry = _entry(line)
            if entry is None:
                return False
            canister_id, found = entry
            self.ids.setdefault(canister_id, found)
            self.end = max(self.end, found[2])
        self.size += complete
        if complete < len(data):  # a write cut short: dropped before appending
            os.ftruncate(self.fd, self.size)
        return True

    def _reset(self) -> None:
        os.ftruncate(self.fd, 0)
        self.ids.clear()
        self.size = self.end = 0

    def sync(self, log: int, size: int, fresh: bool) -> None:
        """Bring the index up to the log ``log`` of ``size`` bytes (its complete
        records), under the log's exclusive lock; ``fresh`` when this process
        has not checked the index against the log yet."""
        if not self._read() or self.end > size:
            self._reset()
        if fresh and self.ids and not self._check_last(log):
            self._reset()
        if self.end < size:
            self.add(
                [
                    (link[0], canister_id, start, end)
                    for start, end, line in records(log, self.end, size)
                    if (link := record_link(line)) is not None
                    and (canister_id := line_id(line)) is not None
                ],
                size,
            )

    def _check_last(self, log: int) -> bool:
        found = max(self.ids.items(), key=lambda item: item[1][2])
        canister_id, (seq, start, end) = found
        return _names(os.pread(log, end - start, start), canister_id, seq)

    def add(self, entries: list[tuple[int, str, int, int]], end: int) -> None:
        """Index records just written (``(seq, id, start, end)``), the log now
        holding ``end`` bytes of complete records."""
        if entries:
            data = b"".join(orjson.dumps(entry) + b"\n" for entry in entries)
            view = memoryview(data)
            while view:
                view = view[os.write(self.fd, view) :]
            self.size += len(data)
            for seq, canister_id, start, stop in entries:
                self.ids.setdefault(canister_id, (seq, start, stop))
        self.end = max(self.end, end)

    def held(
        self, log: int, wanted: list[str], where: Callable[[int], str]
    ) -> dict[str, tuple[str, bytes]]:
        """Return ``(where, line)`` of each canister of ``wanted`` the log holds."""
        found: dict[str, tuple[str, bytes]] = {}
        for canister_id in wanted:
            entry = self.ids.get(canister_id)
            if entry is not None:
                seq, start, end = entry
                found[canister_id] = (where(seq), os.pread(log, end - start, start))
        return found

    def close(self) -> None:
        """Close the index file."""
        with contextlib.suppress(OSError):
            os.close(self.fd)


def prefix_ids(
    ancestors: list[tuple[str, int]],
    open_file: Callable[[str, str], int | None],
) -> dict[str, tuple[str, Entry]]:
    """Return the canister ids of a fork's prefix: for each ``(ancestor, limit)``
    (the fork's parent first), its records before ``limit`` as ``id ->
    (ancestor, entry)``, read from its index and, for what that lacks, its log.

    ``open_file(ancestor, name)`` opens one of an ancestor's files read-only
    (``None`` when it is missing). The prefix never changes, so a fork reads
    this once.
    """
    found: dict[str, tuple[str, Entry]] = {}
    for ancestor, limit in ancestors:
        log = open_file(ancestor, "messages.jsonl")
        if log is None:
            continue
        try:
            entries: dict[str, Entry] = {}
            end = 0
            index = open_file(ancestor, INDEX_NAME)
            if index is not None:
                try:
                    data = os.pread(index, os.fstat(index).st_size, 0)
                finally:
                    os.close(index)
                for line in data[: data.rfind(b"\n") + 1].splitlines():
                    decoded = _entry(line)
                    if decoded is None:
                        entries, end = {}, 0
                        break
                    entries.setdefault(*decoded)
                    end = max(end, decoded[1][2])
                last = max(entries.items(), key=lambda item: item[1][2], default=None)
                if last is not None and not _names(
                    os.pread(log, last[1][2] - last[1][1], last[1][1]),
                    last[0],
                    last[1][0],
                ):
                    entries, end = {}, 0
            size = os.fstat(log).st_size
            if end > size:  # names bytes the log no longer holds
                entries, end = {}, 0
            for start, stop, line in records(log, end, size):
                link = record_link(line)
                if link is None or link[0] >= limit:
                    break
                canister_id = line_id(line)
                if canister_id is not None:
                    entries.setdefault(canister_id, (link[0], start, stop))
            for canister_id, held in entries.items():
                if held[0] < limit:
                    found.setdefault(canister_id, (ancestor, held))
        finally:
            os.close(log)
    return found
