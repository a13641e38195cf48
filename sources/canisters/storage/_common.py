"""Logic shared by the storage backends.

Identifier checks, the hybrid inline / by-hash policy (dehydrating canisters on
the way in, hydrating them through a bounded cache on the way out), the record
format of a conversation log and its hash chain, and the value types the stores
return. Nothing here touches a file or a database.

A record is one line of JSON::

    {"seq":0,"prev":"","v":2,"canister":{...},"digest":"<64 hex>"}

``digest`` is the SHA-256 of the line without its ``,"digest":"..."`` member
(the bytes before it, closed by ``}``), and ``prev`` is the ``digest`` of the
record before it (empty for the first record of a conversation that is not a
fork). Parts stored by hash lose the field the store keeps for them and gain
``"$stored": {"<field>": "sha256:..."}`` naming that field and its blob.
"""

from __future__ import annotations

import base64
import hashlib
import json
import logging
import re
import time
from collections import OrderedDict
from collections.abc import Callable, Iterable, Iterator
from typing import Any, Final, Literal

import attrs
import orjson

from .._wire import HELD, check_held, new_memo
from .._wire import fast as _fast
from ..content import Media, is_content_id
from ..exceptions import (
    CanistersError,
    DuplicateCanister,
    IntegrityError,
    ModelError,
    SerializationError,
    StorageError,
    _excerpt,
)
from ..protocols import Canister, Role
from ..serialization import (
    _TOO_DEEP,
    FORMAT_VERSION,
    MAX_DEPTH,
    _encode_json,
    _may_nest_deeper,
    _nests_deeper,
    migrate,
    structure_canister,
    unstructure_canister,
)
from ._tombstone import REDACTED, read_tombstone
from ._values import (
    GarbageReport,
    IntegrityProblem,
    Redaction,
    StoreStats,
    Verification,
)

__all__ = [
    "SidecarBase",
    "Durability",
    "GarbageReport",
    "IntegrityProblem",
    "InvalidIdentifier",
    "Progress",
    "StoragePolicy",
    "StoreStats",
    "Verification",
]

logger: Final = logging.getLogger("canisters.storage")

Durability = Literal["fsync", "flush"]
"""How far an append goes before it returns.

``"fsync"`` (the default) forces the data to stable storage: an append that
returned survives a power loss. ``"flush"`` hands it to the operating system
only: it survives the process being killed, not the machine losing power, and
is many times faster on real disks.
"""

Progress = Callable[[int, int], None]
"""Called with ``(done, total)`` as a long maintenance operation advances."""

DURABILITIES: Final = ("fsync", "flush")
MAX_ID_LENGTH: Final = 128
_ID_PATTERN: Final = re.compile(r"[A-Za-z0-9_][A-Za-z0-9._\-]*")
STORED: Final = "$stored"
STORED_MARK: Final = b'"$stored"'
_MEDIA_TAGS: Final = frozenset(("image", "audio", "video", "file"))
_DIGEST_SUFFIX: Final = b',"digest":"'
_SUFFIX_START: Final = len(_DIGEST_SUFFIX)
_SUFFIX_LENGTH: Final = _SUFFIX_START + 64 + 2  # ,"digest":"<hex>"}
# Records holding integers beyond 64 bits start with this member; they are read
# with the standard library, which keeps such integers exact (orjson would not).
_BIGINT: Final = b'{"bigint":1,'
# The members every record starts with: its place in the chain.
_LINK: Final = re.compile(
    rb'\{(?:"bigint":1,)?"seq":(0|[1-9][0-9]{0,17}),"prev":"((?:[0-9a-f]{64})?)"'
)
CONTENT_REFERENCE: Final = re.compile(rb"sha256:[0-9a-f]{64}")
"""Finds every content id a raw record or side-file line mentions."""


# --------------------------------------------------------------------------- #
# Identifiers


class InvalidIdentifier(StorageError, ValueError):
    """A conversation id, content id or side-file name was refused.

    Ids become file names, so only letters, digits, ``.``, ``_`` and ``-`` are
    accepted (not first ``.`` or ``-``), at most 128 characters; content ids are
    ``sha256:`` and 64 lowercase hex digits.
    """

    def __init__(self, kind: str, value: object, reason: str) -> None:
        self.kind = kind
        self.value = value
        self.reason = reason
        shown = repr(value) if type(value) is str and len(value) <= 256 else None
        super().__init__(f"invalid {kind} {shown or _excerpt(value)}: {reason}")


def check_id(value: object, kind: str = "conversation id") -> str:
    """Return ``value`` when it is safe to use as a file name, else raise."""
    if (
        type(value) is str
        and len(value) <= MAX_ID_LENGTH
        and _ID_PATTERN.fullmatch(value) is not None
    ):
        return value
    if not isinstance(value, str):
        raise InvalidIdentifier(kind, value, f"expected a str, not {type(value)}")
    if not value:
        raise InvalidIdentifier(kind, value, "it is empty")
    if "\x00" in value:
        raise InvalidIdentifier(kind, value, "it contains a NUL byte")
    if value.startswith(("/", "\\")) or (len(value) > 1 and value[1] == ":"):
        raise InvalidIdentifier(kind, value, "it is an absolute path")
    if ".." in value or "/" in value or "\\" in value:
        raise InvalidIdentifier(kind, value, "it contains a path separator or '..'")
    if len(value) > MAX_ID_LENGTH:
        raise InvalidIdentifier(
            kind, value, f"it is longer than {MAX_ID_LENGTH} characters"
        )
    raise InvalidIdentifier(
        kind,
        value,
        "use letters, digits, '.', '_' and '-' only, not starting with '.' or '-'",
    )


def check_content_id(value: object) -> str:
    """Return ``value`` when it is a well-formed ``sha256:`` content id, else raise."""
    if is_content_id(value):
        return value  # type: ignore[return-value]
    raise InvalidIdentifier(
        "content id", value, "expected 'sha256:' and 64 lowercase hex digits"
    )


def content_id_of(data: bytes) -> str:
    """Return the ``sha256:`` content id of ``data``."""
    return "sha256:" + hashlib.sha256(data).hexdigest()


def check_bytes(data: object) -> bytes:
    """Return ``data`` as bytes, refusing anything else."""
    if type(data) is bytes:
        return data
    if isinstance(data, (bytearray, memoryview)):
        return bytes(data)
    raise ModelError(f"content must be bytes, not {type(data).__name__}")


def check_line(line: object) -> str:
    """Return ``line`` when it is text every backend writes as it is, else raise
    :class:`~canisters.ModelError`: a str holding no line break, no NUL
    (PostgreSQL's text cannot hold it) and no lone surrogate (UTF-8 cannot).

    Every backend checks each side-file line with it before writing anything.
    """
    if not isinstance(line, str):
        raise ModelError(f"a side-file line is a str, not {type(line).__name__}")
    if "\n" in line or "\r" in line:
        raise ModelError("a side-file line must not contain a line break")
    if "\x00" in line:
        raise ModelError("a side-file line must not contain a NUL character")
    if not line.isascii():
        try:
            line.encode("utf-8")
        except UnicodeEncodeError as error:
            raise ModelError(
                "a side-file line must be text UTF-8 can write: it holds a lone "
                f"surrogate ({line[error.start]!r} at index {error.start})"
            ) from None
    return line


def link_error(path: object) -> IntegrityError:
    """The error of a backend that found a symbolic link where it reads or writes."""
    return IntegrityError(
        f"{path} is a symbolic link: the store follows no links "
        "(one planted in it could turn it against files elsewhere)"
    )


def check_durability(value: object) -> Durability:
    """Return ``value`` when it names a durability level, else raise."""
    if value not in DURABILITIES:
        raise ModelError(
            f"durability must be one of {', '.join(DURABILITIES)}, "
            f"got {_excerpt(value)}"
        )
    return value


# --------------------------------------------------------------------------- #
# Value types


@attrs.frozen
class StoragePolicy:
    """Which content parts a store keeps by hash instead of inline.

    The defaults are the hybrid policy: text under 1 KiB (UTF-8) inline; larger
    text, every binary media part (``data``) and every supervisor prompt stored
    once in the content store and referenced by id.
    """

    inline_text_limit: int = 1024
    """Text of this many UTF-8 bytes or more is stored by hash."""
    supervisor_by_hash: bool = True
    """Store every text part of a supervisor canister by hash, whatever its size."""
    media_by_hash: bool = True
    """Store the ``data`` of every image, audio, video and file part by hash."""
    cache_bytes: int = 64 * 1024 * 1024
    """Upper bound of the cache of hydrated blobs, in bytes (0 disables it)."""
    retention_days: float | None = None
    """How long :meth:`~canisters.storage.Store.expire` keeps a conversation
    after its last canister when called without ``before`` (``None``: it must
    be given)."""
    retention_action: Literal["delete", "redact"] = "delete"
    """What :meth:`~canisters.storage.Store.expire` does to an expired
    conversation: delete it, or redact every canister, keeping the skeleton."""


# --------------------------------------------------------------------------- #
# Cache and codec


class SidecarBase:
    """What every backend's side file holds: the conversation it belongs to and
    its name (the backends add where its lines live)."""

    __slots__ = ("_conversation_id", "_name")

    def __init__(self, conversation_id: str, name: str) -> None:
        self._conversation_id = conversation_id
        self._name = name

    @property
    def conversation_id(self) -> str:
        """The conversation this side file belongs to."""
        return self._conversation_id

    @property
    def name(self) -> str:
        """The side file's name."""
        return self._name


class BlobCache:
    """A least-recently-used cache of hydrated values, bounded in bytes."""

    __slots__ = ("_entries", "_limit", "_size")

    def __init__(self, limit: int) -> None:
        self._entries: OrderedDict[tuple[str, str], str | bytes] = OrderedDict()
        self._limit = limit
        self._size = 0

    def get(self, key: tuple[str, str]) -> str | bytes | None:
        value = self._entries.get(key)
        if value is not None:
            self._entries.move_to_end(key)
        return value

    def put(self, key: tuple[str, str], value: str | bytes) -> None:
        size = len(value)
        if size > self._limit // 4:
            return
        if key in self._entries:
            return
        self._entries[key] = value
        self._size += size
        while self._size > self._limit:
            _key, dropped = self._entries.popitem(last=False)
            self._size -= len(dropped)


class Codec:
    """Turns canisters into log records and back under a :class:`StoragePolicy`.

    ``fetch`` reads a blob by content id (verifying it); hydrated values are
    kept in a bounded cache.
    """

    __slots__ = ("_cache", "_fetch", "_limit", "_media", "_quarter", "_supervisor")

    def __init__(self, policy: StoragePolicy, fetch: Callable[[str], bytes]) -> None:
        self._limit = policy.inline_text_limit
        self._quarter = policy.inline_text_limit // 4
        self._supervisor = policy.supervisor_by_hash
        self._media = policy.media_by_hash
        self._fetch = fetch
        self._cache = BlobCache(policy.cache_bytes) if policy.cache_bytes > 0 else None

    # Writing -------------------------------------------------------------------

    def dehydrate(
        self, canister: Canister
    ) -> tuple[dict[str, Any], list[tuple[str, bytes]]]:
        """Return the record of ``canister`` and the blobs it references.

        Media bytes are hashed and stored as they are: the canister is
        unstructured with each such part naming its blob by ``content_id``, so
        the bytes are never base64-encoded (and decoded again) on the way.
        """
        media = _by_id(canister) if self._media else None
        if media is not None:
            canister, by_id = media
        record = unstructure_canister(canister)
        parts = record.get("content")
        blobs: list[tuple[str, bytes]] = []
        if not parts:
            return record, blobs
        every_text = self._supervisor and canister.role is Role.Supervisor
        objects = getattr(canister, "content", ())
        for index, part in enumerate(parts):
            kind = part.get("type")
            if kind == "text":
                text = part.get("text")
                if type(text) is not str:
                    continue
                if not every_text and len(text) < self._quarter:
                    continue
                try:
                    data = text.encode("utf-8")
                except UnicodeEncodeError:
                    # A lone surrogate: UTF-8 cannot hold it as a blob, the
                    # record keeps it exactly (its \uXXXX escape), as documents do.
                    continue
                if not every_text and len(data) < self._limit:
                    continue
                field = "text"
            elif media is not None and index in by_id:
                content_id, data = by_id[index]
                del part["content_id"]
                part[STORED] = {"data": content_id}
                blobs.append((content_id, data))
                continue
            elif kind in _MEDIA_TAGS and self._media and "data" in part:
                source = objects[index] if index < len(objects) else None
                raw = getattr(source, "data", None)
                data = raw if type(raw) is bytes else base64.b64decode(part["data"])
                field = "data"
            else:
                continue
            content_id = content_id_of(data)
            del part[field]
            part[STORED] = {field: content_id}
            blobs.append((content_id, data))
        return record, blobs

    # Reading -------------------------------------------------------------------

    def hydrate(
        self,
        record: dict[str, Any],
        memo: dict[tuple[str, str], str | bytes] | None = None,
        fetch: Callable[[str], bytes] | None = None,
        fresh: set[str] | None = None,
    ) -> None:
        """Put the stored fields of ``record``'s parts back in place.

        Text comes back as ``str`` and media ``data`` as ``bytes`` (which the
        structure hooks take as they are). ``memo`` maps ``(field, content_id)``
        to the value already hydrated during one load, so that every part naming
        one blob shares one object whatever the cache keeps. ``fetch`` reads a
        blob the cache lacks instead of the codec's own (blobs a backend fetched
        ahead, several per round trip). With ``fresh`` (what ``verify`` passes)
        the cache serves only the blobs whose ids it holds, those read from the
        store since it was made, and gains every blob read: each blob is then
        read from the store at least once, whatever the cache kept before.
        """
        parts = record.get("content")
        if type(parts) is not list:
            return
        for part in parts:
            if type(part) is not dict:
                continue
            stored = part.pop(STORED, None)
            if stored is None:
                continue
            if type(stored) is not dict:
                raise SerializationError("expected an object", f"$.{STORED}")
            for field, content_id in stored.items():
                check_content_id(content_id)
                key = (field, content_id)
                value = memo.get(key) if memo is not None else None
                if value is None:
                    value = self._value(key, fetch or self._fetch, fresh)
                    if memo is not None:
                        memo[key] = value
                part[field] = value

    def cached(self, content_id: str) -> bytes | None:
        """Return the bytes of ``content_id`` when the cache holds its value."""
        cache = self._cache
        if cache is None:
            return None
        data = cache.get(("data", content_id))
        if type(data) is bytes:
            return data
        text = cache.get(("text", content_id))
        return text.encode("utf-8") if type(text) is str else None

    def _value(
        self,
        key: tuple[str, str],
        fetch: Callable[[str], bytes],
        fresh: set[str] | None = None,
    ) -> str | bytes:
        """Return the hydrated value of ``(field, content_id)``, through the cache
        (only for the ids in ``fresh`` when it is given: see :meth:`hydrate`)."""
        cache = self._cache
        field, content_id = key
        if cache is not None and (fresh is None or content_id in fresh):
            value = cache.get(key)
            if value is not None:
                return value
        data = fetch(content_id)
        if fresh is not None:
            fresh.add(content_id)
        if field == "text":
            try:
                value = data.decode("utf-8")
            except UnicodeDecodeError as error:
                raise IntegrityError(
                    f"stored text {content_id} is not UTF-8"
                ) from error
        elif field == "data":
            value = data
        else:
            value = base64.b64encode(data).decode("ascii")
        if cache is not None:
            cache.put(key, value)
        return value


def _by_id(
    canister: Canister,
) -> tuple[Canister, dict[int, tuple[str, bytes]]] | None:
    """Return ``canister`` with each media part holding bytes naming them by
    ``content_id`` instead, and those parts' ids and bytes by position; ``None``
    when it holds none (or is not an attrs class that can be copied so)."""
    parts = getattr(canister, "content", None)
    if type(parts) is not tuple:
        return None
    found: dict[int, tuple[str, bytes]] = {}
    replaced = list(parts)
    try:
        for index, part in enumerate(parts):
            if isinstance(part, Media) and type(part.data) is bytes:
                content_id = content_id_of(part.data)
                replaced[index] = attrs.evolve(part, data=None, content_id=content_id)
                found[index] = (content_id, part.data)
        if not found:
            return None
        return attrs.evolve(canister, content=tuple(replaced)), found  # type: ignore[misc]
    except Exception:  # a class evolve cannot copy: the general way serves it
        return None


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


# --------------------------------------------------------------------------- #
# Appends safe to retry: a canister id names one canister in a conversation


def index_key(canister_id: str) -> str:
    """The key the backends' canister-id indexes hold ``canister_id`` under.

    The id itself, unless it cannot be written as UTF-8 text (a lone surrogate,
    which a document keeps), holds a NUL (which PostgreSQL text cannot hold) or
    starts with U+0001: then U+0001 followed by its ASCII JSON form. Every id
    has one key and no two ids share one.
    """
    if "\x00" in canister_id or canister_id.startswith("\x01"):
        return "\x01" + json.dumps(canister_id)
    try:
        canister_id.encode("utf-8")
    except UnicodeEncodeError:
        return "\x01" + json.dumps(canister_id)
    return canister_id


def record_id(record: dict[str, Any]) -> str | None:
    """Return the index key (:func:`index_key`) of the canister id a dehydrated
    record holds (``None`` if none)."""
    found = record.get("id")
    return index_key(found) if type(found) is str else None


def line_id(line: bytes) -> str | None:
    """Return the index key (:func:`index_key`) of the canister id a stored log
    line holds (``None`` if unreadable)."""
    try:
        document = json.loads(line) if line.startswith(_BIGINT) else orjson.loads(line)
    except (ValueError, RecursionError):
        # orjson refuses the escaped lone surrogates a document may hold.
        try:
            document = json.loads(line)
        except (ValueError, RecursionError):
            return None
    canister = document.get("canister") if type(document) is dict else None
    return record_id(canister) if type(canister) is dict else None


def _stored_canister(line: bytes) -> Any:
    """The canister member of a stored line, migrated to the current format."""
    try:
        document = json.loads(line)
        if type(document) is not dict:
            return None
        record = document.get("canister")
        version = document.get("v")
        if version != FORMAT_VERSION:
            record = migrate(
                {"format": "canisters.canister", "version": version, "canister": record}
            )["canister"]
        return record
    except (ValueError, RecursionError, CanistersError):
        return None


def same_record(line: bytes, record: dict[str, Any]) -> bool:
    """Tell whether the stored ``line`` records the canister of ``record``.

    The record is encoded where the line sits (its ``seq`` and ``prev``) and the
    bytes compared; a line of an older format is compared as JSON values after
    migration.
    """
    line = line.rstrip(b"\n")
    link = record_link(line)
    if link is not None:
        encoded, _ = encode_record(link[0], link[1], record)
        if encoded[:-1] == line:
            return True
    stored = _stored_canister(line)
    if stored is None:
        return False
    encoded, _ = encode_record(0, "", record)
    return bool(stored == json.loads(encoded)["canister"])


def screen(
    conversation_id: str,
    records: list[dict[str, Any]],
    stored: Callable[[list[str]], dict[str, tuple[str, bytes]]],
) -> list[dict[str, Any]]:
    """Return the records of an append that the conversation does not hold yet.

    ``stored`` maps the canister ids asked for to ``(where, line)`` of the
    record holding each in the conversation (its fork prefix included), found
    through the backend's index. A record whose canister is there already, or
    earlier in the same append, is dropped; one whose id is taken by a different
    canister raises :class:`~canisters.DuplicateCanister`, before anything is
    written.
    """
    wanted = [found for found in map(record_id, records) if found is not None]
    if not wanted:
        return records
    held = stored(list(dict.fromkeys(wanted)))
    fresh: list[dict[str, Any]] = []
    batch: dict[str, dict[str, Any]] = {}
    for record in records:
        canister_id = record_id(record)
        if canister_id is None:
            fresh.append(record)
            continue
        found = held.get(canister_id)
        if found is not None:
            if not same_record(found[1], record):
                raise DuplicateCanister(conversation_id, canister_id, found[0])
            continue
        earlier = batch.get(canister_id)
        if earlier is not None:
            if encode_record(0, "", earlier)[0] != encode_record(0, "", record)[0]:
                raise DuplicateCanister(
                    conversation_id, canister_id, "earlier in the same append"
                )
            continue
        batch[canister_id] = record
        fresh.append(record)
    return fresh


def earlier(value: object, moment: float) -> bool:
    """Whether a time a store keeps as text (``repr`` of ``time.time()``) is
    before ``moment``; ``False`` when it is unreadable."""
    try:
        return float(value) < moment  # type: ignore[arg-type]
    except (TypeError, ValueError):
        return False


def references(line: bytes) -> set[str]:
    """Return every content id ``line`` mentions."""
    return {match.decode("ascii") for match in CONTENT_REFERENCE.findall(line)}


# --------------------------------------------------------------------------- #
# Blobs kept outside the backend (``blobs="s3://..."``)


def sweep(
    entries: Iterable[tuple[str, int, float]],
    referenced: set[str],
    *,
    older_than: float,
    dry_run: bool,
    delete: Callable[[list[str]], None],
) -> GarbageReport:
    """Remove the blobs of ``entries`` (``(content_id, size, stored_at)``) that
    ``referenced`` does not hold and that are not newer than ``older_than``
    seconds; the caller holds its store's garbage-collection lock."""
    limit = time.time() - older_than
    removed: list[str] = []
    freed = kept = 0
    for content_id, size, stored_at in entries:
        if content_id in referenced or (older_than > 0 and stored_at > limit):
            kept += 1
            continue
        removed.append(content_id)
        freed += size
    if removed and not dry_run:
        delete(removed)
    return GarbageReport(tuple(sorted(removed)), freed, kept)
