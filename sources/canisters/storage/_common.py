"""Logic shared by the storage backends.

Identifier checks, the hybrid inline / by-hash policy (dehydrating canisters on
the way in, hydrating them through a bounded cache on the way out), and the
value types the stores return. Nothing here touches a file or a database. The
record format and its hash chain are in :mod:`._chain`, the checks that make an
append safe to retry in :mod:`._retries`.

Parts stored by hash lose the field the store keeps for them and gain
``"$stored": {"<field>": "sha256:..."}`` naming that field and its blob.
"""

from __future__ import annotations

import base64
import hashlib
import logging
import re
import time
from collections import OrderedDict
from collections.abc import Callable, Iterable
from typing import Any, Final, Literal

import attrs
import orjson

from .._files import link_error
from .._identifiers import MAX_ID_LENGTH, InvalidIdentifier, check_id, check_line
from ..content import Media, is_content_id
from ..exceptions import (
    IntegrityError,
    ModelError,
    SerializationError,
    _excerpt,
)
from ..protocols import Canister, Role
from ..serialization import (
    unstructure_canister,
)
from ._values import (
    GarbageReport,
    IntegrityProblem,
    StoreStats,
    Verification,
)

__all__ = [
    "SidecarBase",
    "Durability",
    "GarbageReport",
    "IntegrityProblem",
    "InvalidIdentifier",
    "MAX_ID_LENGTH",
    "Progress",
    "StoragePolicy",
    "StoreStats",
    "Verification",
    "check_id",
    "check_line",
    "link_error",
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
STORED: Final = "$stored"
STORED_MARK: Final = b'"$stored"'
_MEDIA_TAGS: Final = frozenset(("image", "audio", "video", "file"))
_TEXT_TAGS: Final = frozenset(("text", "cited_text"))
_RESULT_TEXTS: Final = ("code", "stdout", "stderr")
"""The text fields of a provider's tool result stored by hash when large."""
_RESULT_VALUES: Final = ("output", "hits", "opaque")
"""Its JSON fields stored by hash when large (as their compact JSON)."""
_TEXT_FIELDS: Final = frozenset(("text", *_RESULT_TEXTS))
_JSON_FIELDS: Final = frozenset(_RESULT_VALUES)
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
            if kind == "provider_tool_result":
                self._large_result(part, blobs)
                continue
            if kind in _TEXT_TAGS:
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

    def _large_result(
        self, part: dict[str, Any], blobs: list[tuple[str, bytes]]
    ) -> None:
        """Store by hash each field of a provider's tool result (what a web
        search or fetch found, code's output, the provider's item) of
        ``inline_text_limit`` bytes or more."""
        stored: dict[str, str] = {}
        for field in (*_RESULT_TEXTS, *_RESULT_VALUES):
            value = part.get(field)
            if value is None or value == () or value == [] or value == {}:
                continue
            try:
                if field in _TEXT_FIELDS:
                    if type(value) is not str or len(value) < self._quarter:
                        continue
                    data = value.encode("utf-8")
                else:
                    data = orjson.dumps(value)
            except (UnicodeEncodeError, TypeError, orjson.JSONEncodeError):
                continue  # what a blob cannot hold exactly stays in the record
            if len(data) < self._limit:
                continue
            content_id = content_id_of(data)
            del part[field]
            stored[field] = content_id
            blobs.append((content_id, data))
        if stored:
            part[STORED] = stored

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
                if field in _JSON_FIELDS:
                    try:
                        part[field] = orjson.loads(value)
                    except orjson.JSONDecodeError as error:
                        raise IntegrityError(
                            f"stored {field} {content_id} is not JSON"
                        ) from error
                    continue
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
        if field in _TEXT_FIELDS or field in _JSON_FIELDS:
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
