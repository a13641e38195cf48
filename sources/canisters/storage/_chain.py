"""The record format of a conversation log and its hash chain, shared by the
backends: encoding a record, checking a line's digest and link, and the walk
(:class:`Chain`) that loads, salvages or verifies a log.

A record is one line of JSON::

    {"seq":0,"prev":"","v":2,"canister":{...},"digest":"<64 hex>"}

``digest`` is the SHA-256 of the line without its ``,"digest":"..."`` member
(the bytes before it, closed by ``}``), and ``prev`` is the ``digest`` of the
record before it (empty for the first record of a conversation that is not a
fork).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Iterable, Iterator
from typing import Any, Final, Literal

import orjson

from .._wire import HELD, check_held, new_memo
from .._wire import fast as _fast
from ..exceptions import (
    IntegrityError,
    SerializationError,
    StorageError,
    _excerpt,
)
from ..protocols import Canister
from ..serialization import (
    _TOO_DEEP,
    FORMAT_VERSION,
    MAX_DEPTH,
    _encode_json,
    _may_nest_deeper,
    _nests_deeper,
    migrate,
    structure_canister,
)
from ._common import (
    _BIGINT,
    _DIGEST_SUFFIX,
    _LINK,
    _SUFFIX_LENGTH,
    _SUFFIX_START,
    STORED_MARK,
    Codec,
    logger,
)
from ._tombstone import REDACTED, read_tombstone
from ._values import (
    IntegrityProblem,
    Redaction,
    Verification,
)

# --------------------------------------------------------------------------- #
# Records and the hash chain


# A log line holds its record one level below its root, one level higher than a
# conversation document does (see serialization.MAX_DEPTH).
_LINE_DEPTH: Final = MAX_DEPTH - 1


def encode_record(seq: int, prev: str, record: dict[str, Any]) -> tuple[bytes, str]:
    """Return the log line (with its newline) of ``record`` and its digest."""
    document = {"seq": seq, "prev": prev, "v": FORMAT_VERSION, "canister": record}
    body, exact = _encode_json(document, _LINE_DEPTH)
    if exact:
        # Integers beyond 64 bits: the leading member tells readers to parse the
        # line with the standard library too, which keeps them exact.
        body, _ = _encode_json({"bigint": 1, **document}, _LINE_DEPTH)
    digest = hashlib.sha256(body).hexdigest()
    return b"".join(
        (body[:-1], _DIGEST_SUFFIX, digest.encode("ascii"), b'"}\n')
    ), digest


def line_digest(line: bytes) -> str | None:
    """Return the digest a complete line claims, or ``None`` when it has none."""
    end = len(line)
    if end > 0 and line[end - 1] == 0x0A:
        end -= 1
    start = end - _SUFFIX_LENGTH
    if start < 0 or line[start : start + len(_DIGEST_SUFFIX)] != _DIGEST_SUFFIX:
        return None
    return line[end - 66 : end - 2].decode("ascii", "replace")


def record_link(line: bytes) -> tuple[int, str, str] | None:
    """Return the ``(seq, prev, digest)`` a line claims, ``None`` when it has none.

    Only the line's shape is read (its leading members and trailing digest),
    not its JSON: the end of a log is found without parsing whole records.
    """
    match = _LINK.match(line)
    digest = line_digest(line)
    if match is None or digest is None:
        return None
    return int(match[1]), match[2].decode("ascii"), digest


def intact_digest(line: bytes) -> str | None:
    """Return the digest of a line whose bytes match it, else ``None``."""
    end = len(line)
    if end and line[end - 1] == 0x0A:
        end -= 1
    start = end - _SUFFIX_LENGTH
    claimed = line_digest(line)
    if claimed is None or start < 1:
        return None
    hasher = hashlib.sha256(memoryview(line)[:start])
    hasher.update(b"}")
    return claimed if hasher.hexdigest() == claimed else None


def follows(line: bytes, seq: int, prev: str) -> str | None:
    """Return the digest of ``line`` when it is an intact record ``seq`` after
    ``prev``, else ``None``.

    A final line without its newline that passes this is a whole record that
    lost only the newline (a hand edit, a copy), not a torn write: it is kept.
    """
    link = record_link(line)
    if link is None or link[0] != seq or link[1] != prev:
        return None
    return intact_digest(line)


def encode_head(seq: int, digest: str) -> bytes:
    """Return the kept head of a conversation as stored apart from its log."""
    return b'{"seq":%d,"digest":"%s"}' % (seq, digest.encode("ascii"))


def decode_head(data: bytes) -> tuple[int, str] | None:
    """Return the ``(seq, digest)`` :func:`encode_head` wrote, ``None`` if it is
    unreadable."""
    try:
        document = orjson.loads(data)
    except orjson.JSONDecodeError:
        return None
    if type(document) is not dict:
        return None
    seq, digest = document.get("seq"), document.get("digest")
    if type(seq) is not int or seq < 0 or type(digest) is not str:
        return None
    return seq, digest


def decode_lines(lines: Iterable[bytes], where: str) -> list[str]:
    """Decode side-file lines, refusing bytes that are not UTF-8."""
    decoded = []
    for number, line in enumerate(lines, 1):
        try:
            decoded.append(line.decode("utf-8"))
        except UnicodeDecodeError as error:
            raise IntegrityError(
                f"{where} line {number} is not UTF-8 text (byte {error.start})"
            ) from None
    return decoded


Mode = Literal["strict", "salvage", "verify"]


class Chain:
    """Walks the records of one conversation, checking digests and links.

    In ``strict`` mode the first problem raises :class:`IntegrityError`; in
    ``salvage`` mode problems are logged and the record skipped when it cannot
    be trusted or read; in ``verify`` mode they are collected in
    :attr:`problems`.
    """

    __slots__ = (
        "codec",
        "conversation_id",
        "count",
        "fetch",
        "fresh",
        "kept",
        "label",
        "memo",
        "mode",
        "prev",
        "problems",
        "redactions",
        "seq",
        "shared",
        "torn",
    )

    def __init__(self, conversation_id: str, codec: Codec, mode: Mode) -> None:
        self.conversation_id = conversation_id
        self.codec = codec
        self.mode = mode
        self.prev = ""
        self.seq = 0
        self.count = 0
        self.problems: list[IntegrityProblem] = []
        self.redactions: list[Redaction] = []
        self.torn = False
        self.kept: tuple[int, str] | None = None
        self.label: Callable[[int], str] = str
        # Reads the blobs the codec's cache lacks (None: the codec's own fetch).
        self.fetch: Callable[[str], bytes] | None = None
        # The values hydrated so far, shared by every part naming the same blob.
        # What load returns holds them anyway; verify keeps nothing.
        self.memo: dict[tuple[str, str], str | bytes] | None = (
            None if mode == "verify" else {}
        )
        # verify reads every blob from the store, whatever the cache holds:
        # the ids of those read so far, which the cache may then serve.
        self.fresh: set[str] | None = set() if mode == "verify" else None
        # Strings and metadata the records' canisters share (serialization's
        # fast path: a result's invocation id is its invocation's).
        self.shared: dict[Any, Any] | None = None if mode == "verify" else new_memo()

    def walk(
        self,
        lines: Iterable[bytes],
        label: Callable[[int], str],
        *,
        stop: int | None = None,
        terminated: bool = True,
    ) -> Iterator[Canister]:
        """Read ``lines`` in order, yielding their canisters.

        ``label`` names a line from its 1-based number; reading stops once the
        chain holds ``stop`` records (a fork's prefix). With ``terminated``
        every line must end with a newline: a final line without one is the
        trace of a crash mid-append, ignored and reported through logging.
        """
        read = self.read
        self.label = label
        for number, line in enumerate(lines, 1):
            if stop is not None and self.seq >= stop:
                return
            if (
                terminated
                and not line.endswith(b"\n")
                and (not line or follows(line, self.seq, self.prev) is None)
            ):
                if line:
                    self.torn = True
                    logger.warning(
                        "ignoring an unfinished final record at %s of %s "
                        "(a crash during an append)",
                        label(number),
                        self.conversation_id,
                    )
                return
            canister = read(number, line)
            kept = self.kept
            if kept is not None and self.seq == kept[0] and self.prev != kept[1]:
                self.problem(
                    number,
                    "head",
                    f"record {kept[0] - 1} is not the one the kept head names "
                    f"({kept[1][:12]}...): the log was rewritten from there",
                )
            if canister is not None:
                yield canister

    def numbered(
        self, rows: Iterable[tuple[object, bytes]], label: Callable[[int], str]
    ) -> Iterator[bytes]:
        """Yield the lines of a database's ``(seq, line)`` rows, reporting a row
        whose ``seq`` is not the one its record holds (a row renumbered by hand
        reads in place but misleads appends and ordering)."""
        for number, (seq, line) in enumerate(rows, 1):
            link = record_link(line)
            if link is not None and link[0] != seq:
                self.problem(
                    label(number),
                    "chain",
                    f"the row is numbered {_excerpt(seq)} but holds record {link[0]}",
                )
            yield line

    def verification(self) -> Verification:
        """What the walk found, as :meth:`Store.verify` returns it."""
        return Verification(
            self.conversation_id,
            self.seq,
            self.prev,
            tuple(self.problems),
            self.torn,
            tuple(self.redactions),
        )

    def problem(self, where: int | str, code: str, message: str) -> None:
        """Report a problem as the mode says (``where``: a line number or a label)."""
        if type(where) is int:
            where = self.label(where)
        found = IntegrityProblem(self.conversation_id, str(where), code, message)
        if self.mode == "strict":
            raise IntegrityError(f"{found}; load with salvage=True to recover")
        if self.mode == "salvage":
            logger.warning("salvaging %s", found)
        self.problems.append(found)

    def keep(self, head: tuple[int, str] | None, where: str) -> None:
        """Compare the chain with the head the store keeps apart from the log.

        Call it before walking (the walk then checks the record at the kept
        head) with what the store holds, ``None`` when it holds no head, and
        :meth:`reach` after the walk.
        """
        if head is None:
            self.problem(
                where,
                "head",
                "the store keeps no head for this conversation (deleted or "
                "unreadable), so records cut from its end would go unseen",
            )
        self.kept = head

    def reach(self, where: str) -> None:
        """Report a log that ends before the kept head (see :meth:`keep`)."""
        kept = self.kept
        if kept is not None and self.seq < kept[0]:
            self.problem(
                where,
                "head",
                f"the log ends after {self.seq} records but the store's kept head "
                f"says {kept[0]}: records were removed from its end",
            )

    def fork_point(self, where: str, seq: int, head: str) -> None:
        """Check that the chain so far ends where a fork says it forked."""
        if self.seq != seq or self.prev != head:
            self.problem(
                where,
                "fork-point",
                f"the fork starts after record {seq} with digest {head[:12]}..., "
                f"its parent's chain has {self.seq} records ending in "
                f"{self.prev[:12] or 'nothing'}",
            )
            self.seq, self.prev = seq, head

    def read(self, where: int, line: bytes) -> Canister | None:
        """Check one complete line and return its canister (``None`` if skipped)."""
        end = len(line)
        if end and line[end - 1] == 0x0A:
            end -= 1
        start = end - _SUFFIX_LENGTH
        claimed = (
            line[end - 66 : end - 2].decode("ascii", "replace")
            if start >= 0 and line[start : start + _SUFFIX_START] == _DIGEST_SUFFIX
            else None
        )
        if (
            claimed is not None
            and start > 0
            and STORED_MARK not in line
            and not line.startswith(_BIGINT)
        ):
            fast = _fast()
            if fast is not None:
                canister = self._fast_read(fast.log_record, line, start, claimed)
                if canister is not None:
                    return canister
        try:
            if line.startswith(_BIGINT):
                document = json.loads(line)
            else:
                document = orjson.loads(line)
        except (ValueError, RecursionError):
            document = None
        if _may_nest_deeper(line, _LINE_DEPTH) and _nests_deeper(document, _LINE_DEPTH):
            self.problem(where, "unreadable", f"the record is {_TOO_DEEP}")
            if claimed is not None:
                self.prev = claimed
            return None
        if type(document) is not dict or claimed is None:
            self.problem(where, "unreadable", "the record is not a log record")
            if claimed is not None:
                self.prev = claimed
            return None
        if start < 1:
            computed = None
        else:
            hasher = hashlib.sha256(memoryview(line)[:start])
            hasher.update(b"}")
            computed = hasher.hexdigest()
        wrong = "the record does not match its digest (edited)"
        if computed != claimed and REDACTED in document:
            note = read_tombstone(self.conversation_id, line, document)
            if isinstance(note, Redaction):
                self.redactions.append(note)
                computed = claimed
            else:
                wrong = str(note)
        if computed != claimed:
            self.problem(where, "digest", wrong)
            self.prev = claimed
            self.seq = (
                document["seq"] + 1 if type(document.get("seq")) is int else self.seq
            )
            return None
        seq, prev = document.get("seq"), document.get("prev")
        if seq != self.seq or prev != self.prev:
            self.problem(
                where,
                "chain",
                f"expected record {self.seq} after {self.prev[:12] or 'the start'}, "
                f"found record {seq} after {str(prev)[:12] or 'the start'} "
                "(a record was removed, inserted or reordered)",
            )
        self.prev = claimed
        self.seq = seq + 1 if type(seq) is int else self.seq + 1
        self.count += 1
        return self._canister(where, line, document)

    def _fast_read(
        self, decode: Callable[[bytes], Any], line: bytes, start: int, claimed: str
    ) -> Canister | None:
        """Read the common line through serialization's fast path: a current,
        intact record next in the chain, of built-in classes in their usual
        shapes, with no stored content. ``None`` leaves the line to the general
        path, which reads the same canister or reports what is wrong."""
        try:
            wire = decode(line)
        except Exception:  # read again by the general path
            return None
        if wire.seq != self.seq or wire.prev != self.prev:
            return None
        hasher = hashlib.sha256(memoryview(line)[:start])
        hasher.update(b"}")
        if hasher.hexdigest() != claimed:
            return None
        shared = self.shared
        memo = new_memo() if shared is None else shared
        memo[HELD].clear()  # the JSON values this record's canister sets
        try:
            canister: Canister = wire.canister.build(memo)
            check_held(memo)
        except Exception:  # read again by the general path (too deep, perhaps)
            return None
        self.prev = claimed
        self.seq += 1
        self.count += 1
        return canister

    def _canister(
        self, where: int, line: bytes, document: dict[str, Any]
    ) -> Canister | None:
        version = document.get("v")
        record = document.get("canister")
        try:
            if version != FORMAT_VERSION:
                record = migrate(
                    {
                        "format": "canisters.canister",
                        "version": version,
                        "canister": record,
                    }
                )["canister"]
            if type(record) is not dict:
                raise SerializationError("expected a canister object", "$.canister")
            if STORED_MARK in line:
                self.codec.hydrate(record, self.memo, self.fetch, self.fresh)
            return structure_canister(record)
        except (IntegrityError, LookupError) as error:
            if self.mode == "strict":
                raise
            self.problem(where, "content", _skipped(record, error))
        except (SerializationError, StorageError) as error:
            if self.mode == "strict":
                raise
            self.problem(where, "canister", _skipped(record, error))
        return None


def _skipped(record: object, error: Exception) -> str:
    """Say which canister a record holds (when it tells) and what is wrong."""
    found = record.get("id") if type(record) is dict else None
    if type(found) is str:
        return f"canister {found[:128]!r}: {error}"
    return str(error)
