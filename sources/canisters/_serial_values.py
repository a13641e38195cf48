"""The records of parts and envelope values, and the tables the hooks are
dispatched by (part of :mod:`canisters.serialization`)."""

from __future__ import annotations

import binascii
import re
from collections.abc import Callable, Mapping
from datetime import datetime, timedelta, timezone
from typing import Any, Final, Protocol, TypeVar

import attrs

from . import _base64
from ._compat import fromisoformat
from ._formats import (
    CANISTER_FORMAT,
    CONTENT_FORMAT,
    CONVERSATION_FORMAT,
    REQUEST_FORMAT,
)
from ._frozen import EMPTY, FrozenDict, freeze
from ._trusted import _trusted
from .canisters import (
    Assistant,
    Document,
    ErrorInfo,
    Invocation,
    Metadata,
    Result,
    Supervisor,
    Usage,
    User,
)
from .content import File, Media, Reasoning, Text, inline
from .exceptions import CanistersError, SerializationError, _excerpt
from .protocols import Content, Role

# How much higher than in a conversation document each form holds its values
# (see MAX_DEPTH): the bound of each form is MAX_DEPTH minus its shift.
# A request document holds its canisters one level lower than a conversation
# document does (under "request"), like a snapshot.
_SHIFTS: Final = {
    CONVERSATION_FORMAT: 0,
    CANISTER_FORMAT: 1,
    CONTENT_FORMAT: 3,
    REQUEST_FORMAT: -1,
}
_LINE_SHIFT: Final = 2  # a JSONL line holds one record

T = TypeVar("T")
Record = dict[str, Any]

_Unstructure = Callable[[Any], Record]
_Structure = Callable[[Mapping[str, Any]], Any]
_Add = Callable[[Any], None]


class _OutHook(Protocol):
    """A built-in class's out hook: see :data:`_COLLECTING`."""

    def __call__(self, value: Any, add: _Add | None = None, /) -> Record: ...


# Dispatch tables: exact class -> (tag, hook) and tag -> hook.
_CONTENT_OUT: dict[type, tuple[str, _Unstructure]] = {}
_CONTENT_IN: dict[str, _Structure] = {}
_CANISTER_OUT: dict[type, tuple[str, _Unstructure]] = {}
_CANISTER_IN: dict[str, tuple[Role, _Structure]] = {}


# --------------------------------------------------------------------------- #
# Trusted constructors (see canisters._trusted)


_ENVELOPE: Final = (
    "id",
    "timestamp",
    "parent_id",
    "trace_id",
    "policy",
    "step",
    "metadata",
    "extras",
)
for _cls in (User, Assistant, Supervisor, Document, Invocation, Result):
    assert tuple(f.name for f in attrs.fields(_cls))[:8] == _ENVELOPE, _cls

_new_text = _trusted(Text)
_new_metadata = _trusted(Metadata)
_new_usage = _trusted(Usage)
_new_user = _trusted(User)
_new_assistant = _trusted(Assistant)
_new_supervisor = _trusted(Supervisor)
_new_document = _trusted(Document)
_new_invocation = _trusted(Invocation)
_new_result = _trusted(Result)
_UTC: Final = timezone.utc

# Short strings that recur across canisters (tool names, model names, finish
# reasons, trace ids, policies) are shared as they are read: one object for all
# the canisters naming the same one. sys.intern did this until CPython 3.12
# made interned strings immortal: there, every trace id and tool name ever read
# stayed for the life of the process, and a server reading documents with a
# fresh trace id each grew without end. This table is bounded in the length of
# what it holds and in its size (emptied when full), so it keeps at most a few
# hundred kilobytes alive however many documents are read.
_SHARED: Final[dict[str, str]] = {}
_SHARED_LENGTH: Final = 64
_SHARED_LIMIT: Final = 4096


def _share(value: str) -> str:
    """``value``, or the equal string read before it (short strings only)."""
    if len(value) > _SHARED_LENGTH:
        return value
    shared = _SHARED.setdefault(value, value)
    if len(_SHARED) > _SHARED_LIMIT:
        _SHARED.clear()
    return shared


# --------------------------------------------------------------------------- #
# Scalars


def _b64(data: bytes) -> str:
    return _base64.encode(data)


def _unb64(text: object, key: str) -> bytes:
    if not isinstance(text, str):
        raise SerializationError(
            f"expected base64 text, got {type(text).__name__}", f"$.{key}"
        )
    try:
        return _base64.decode(text)
    except (binascii.Error, ValueError) as error:
        raise SerializationError(f"invalid base64: {error}", f"$.{key}") from error


def _checked_b64(text: object, key: str) -> bytes | _base64.Encoded:
    """Base64 ``text`` as :func:`_unb64` reads it, checked but left undecoded."""
    if not isinstance(text, str):
        raise SerializationError(
            f"expected base64 text, got {type(text).__name__}", f"$.{key}"
        )
    try:
        return _base64.check(text)
    except (binascii.Error, ValueError) as error:
        raise SerializationError(f"invalid base64: {error}", f"$.{key}") from error


def _time_out(moment: datetime) -> str:
    return moment.isoformat()


def _time_in(text: object, key: str = "timestamp") -> datetime:
    if not isinstance(text, str):
        raise SerializationError(
            f"expected an ISO 8601 timestamp, got {type(text).__name__}", f"$.{key}"
        )
    try:
        try:  # the writers' form, and "Z"
            moment = fromisoformat(text)
        except ValueError:  # "z", or a refusal
            if not text.endswith(("Z", "z")):
                raise
            moment = fromisoformat(text[:-1] + "+00:00")
    except ValueError as error:
        raise SerializationError(
            f"invalid ISO 8601 timestamp {_excerpt(text)}", f"$.{key}"
        ) from error
    if moment.tzinfo is None:
        raise SerializationError(
            f"timestamp {_excerpt(text)} has no timezone offset", f"$.{key}"
        )
    if _HALF_MICROSECOND_OR_MORE(text) is not None:
        # fromisoformat keeps the first six fractional digits; the model holds
        # microseconds, rounded half up, as msgspec reads them on the fast path.
        try:
            moment += _ONE_MICROSECOND
        except OverflowError as error:
            raise SerializationError(
                f"invalid ISO 8601 timestamp {_excerpt(text)}", f"$.{key}"
            ) from error
    return moment


# A fraction of a second of more than six digits whose seventh is 5 or more (the
# first fraction of the text: an offset's own fraction takes six digits at most).
_HALF_MICROSECOND_OR_MORE: Final = re.compile(r"[.,][0-9]{6}[5-9]").search
_ONE_MICROSECOND: Final = timedelta(microseconds=1)


def _check_type(value: object, expected: type | tuple[type, ...], key: str) -> None:
    if not isinstance(value, expected) or (isinstance(value, bool) and expected is int):
        names = (
            " or ".join(t.__name__ for t in expected)
            if isinstance(expected, tuple)
            else expected.__name__
        )
        raise SerializationError(
            f"expected {names}, got {type(value).__name__}", f"$.{key}" if key else "$"
        )


def _opt_str(record: Mapping[str, Any], key: str) -> str | None:
    value = record.get(key)
    if value is not None and type(value) is not str:
        _check_type(value, str, key)
    return value


def _mapping(record: Mapping[str, Any], key: str) -> FrozenDict[str, Any]:
    value = record.get(key)
    if value is None:
        return EMPTY
    if type(value) is not dict and not isinstance(value, Mapping):
        _check_type(value, dict, key)
    return freeze(value)


# --------------------------------------------------------------------------- #
# Content hooks


def _text_out(part: Text, add: _Add | None = None) -> Record:
    record: Record = {"type": "text", "text": part.text}
    if part.mime_type != "text/plain":
        record["mime_type"] = part.mime_type
    if part.id is not None:
        record["id"] = part.id
    if part.extras:
        record["extras"] = part.extras
    if add is not None:
        add((part.mime_type, part.id, part.extras))
    return record


def _text_in(record: Mapping[str, Any]) -> Text:
    text = record["text"]
    if type(text) is not str:
        _check_type(text, str, "text")
    if len(record) == 2:
        # Only "type" and "text": the common plain-text part.
        return _new_text(text, "text/plain", None, EMPTY)
    mime_type = record.get("mime_type", "text/plain")
    if type(mime_type) is not str:
        _check_type(mime_type, str, "mime_type")
    return _new_text(
        text, mime_type, _opt_str(record, "id"), _mapping(record, "extras")
    )


def _media_out(tag: str) -> _OutHook:
    def unstructure(part: Media, add: _Add | None = None) -> Record:
        record: Record = {"type": tag}
        data = inline(part)
        if add is not None:
            # Written by to_json or to_jsonl (``add``): a mark, which the base64
            # replaces in the text (see canisters._base64.Splicer): as it was
            # read, or encoded once.
            if data is not None:
                record["data"] = _base64.Spliced(data)
        elif isinstance(data, _base64.Encoded):
            record["data"] = data.text  # as it was read: no copy
        elif data is not None:
            record["data"] = _b64(data)
        if part.url is not None:
            record["url"] = part.url
        if part.content_id is not None:
            record["content_id"] = part.content_id
        if part.refs:
            record["refs"] = part.refs
        if part.mime_type is not None:
            record["mime_type"] = part.mime_type
        if part.hint is not None:
            record["hint"] = part.hint
        if part.id is not None:
            record["id"] = part.id
        filename = getattr(part, "filename", None)
        if filename is not None:
            record["filename"] = filename
        if part.extras:
            record["extras"] = part.extras
        if add is not None:
            # data, url, content_id and refs are checked to be bytes and strings
            add((part.mime_type, part.hint, part.id, filename, part.extras))
        return record

    return unstructure


def _media_in(cls: type[Media]) -> Callable[[Mapping[str, Any]], Media]:
    with_filename = cls is File or issubclass(cls, File)

    def structure(record: Mapping[str, Any]) -> Media:
        data = record.get("data")
        extra: dict[str, Any] = {}
        if with_filename:
            extra["filename"] = _opt_str(record, "filename")
        return cls(
            # bytes: already decoded (storage hydrates stored blobs so, sharing one
            # bytes object between every part naming the same blob)
            data=data
            if data is None or type(data) is bytes
            else _checked_b64(data, "data"),
            url=_opt_str(record, "url"),
            content_id=_opt_str(record, "content_id"),
            refs=_mapping(record, "refs"),
            mime_type=_opt_str(record, "mime_type"),
            hint=_opt_str(record, "hint"),
            id=_opt_str(record, "id"),
            extras=_mapping(record, "extras"),
            **extra,
        )

    return structure


def _reasoning_out(part: Reasoning, add: _Add | None = None) -> Record:
    record: Record = {"type": "reasoning", "text": part.text}
    if part.signature is not None:
        record["signature"] = part.signature
    if part.redacted is not None:
        record["redacted"] = part.redacted
    if part.provider is not None:
        record["provider"] = part.provider
    if part.id is not None:
        record["id"] = part.id
    if part.extras:
        record["extras"] = part.extras
    if add is not None:
        add((part.signature, part.redacted, part.provider, part.id, part.extras))
    return record


def _reasoning_in(record: Mapping[str, Any]) -> Reasoning:
    text = record.get("text", "")
    if type(text) is not str:
        _check_type(text, str, "text")
    provider = _opt_str(record, "provider")
    return Reasoning(
        text,
        _opt_str(record, "signature"),
        _opt_str(record, "redacted"),
        None if provider is None else _share(provider),
        id=_opt_str(record, "id"),
        extras=_mapping(record, "extras"),
    )


def _unregistered(value: object, register: str) -> SerializationError:
    return SerializationError(
        f"{type(value).__qualname__} is not registered; "
        f"call canisters.{register}(cls, tag)"
    )


def _tagged(
    record: object, key: str, table: Mapping[str, T], noun: str, label: str
) -> tuple[str, T]:
    """Find the hook for the tag under ``key``, or say what is wrong and where."""
    if type(record) is not dict and not isinstance(record, Mapping):
        raise SerializationError(
            f"expected a {noun} object, got {type(record).__name__}"
        )
    tag = record.get(key)
    entry = table.get(tag) if isinstance(tag, str) else None
    if entry is None or not isinstance(tag, str):
        known = ", ".join(sorted(table))
        raise SerializationError(
            f"unknown {label} {_excerpt(tag)} (known: {known})", f"$.{key}"
        )
    return tag, entry


def unstructure_content(part: Content) -> Record:
    """Return ``part`` as a JSON-compatible dict tagged by ``"type"``."""
    entry = _CONTENT_OUT.get(type(part))
    if entry is None:
        raise _unregistered(part, "register_content")
    return entry[1](part)


def structure_content(record: object) -> Content:
    """Build a content part from a dict tagged by ``"type"``."""
    tag, hook = _tagged(record, "type", _CONTENT_IN, "content", "content type")
    part: Content = _guarded(hook, record, f"{tag} content")
    return part


def _guarded(hook: _Structure, record: Any, what: str) -> Any:
    """Run a structure hook, turning any failure into a located SerializationError."""
    try:
        return hook(record)
    except SerializationError:
        raise
    except KeyError as error:
        raise SerializationError(
            f"missing field {_excerpt(error.args[0])}", f"$.{error.args[0]}"
        ) from error
    except CanistersError as error:
        field = getattr(error, "field", None)  # a ModelError's
        raise SerializationError(str(error), f"$.{field}" if field else "$") from error
    except (TypeError, ValueError, AttributeError) as error:
        raise SerializationError(f"invalid {what}: {error}") from error


def _content_in(value: object) -> tuple[Content, ...]:
    if type(value) is not list and not isinstance(value, (list, tuple)):
        raise SerializationError(
            f"expected a list of content parts, got {type(value).__name__}",
            "$.content",
        )
    table = _CONTENT_IN
    try:
        # Well-formed input takes the direct route: one hook call per part.
        return tuple([table[record["type"]](record) for record in value])
    except Exception:  # redone below, part by part, for a located error
        pass
    parts = []
    for index, record in enumerate(value):
        try:
            parts.append(structure_content(record))
        except SerializationError as error:
            raise error.within(f"[{index}]").within("content") from error.__cause__
    return tuple(parts)


# --------------------------------------------------------------------------- #
# Envelope values


def _usage_out(usage: Usage) -> Record:
    # Every assistant turn of a recorded run carries usage: written field by
    # field, without looking the fields up (zeros are left out).
    record: Record = {}
    if value := usage.input_tokens:
        record["input_tokens"] = value
    if value := usage.output_tokens:
        record["output_tokens"] = value
    if value := usage.cached_tokens:
        record["cached_tokens"] = value
    if value := usage.cache_write_tokens:
        record["cache_write_tokens"] = value
    if value := usage.reasoning_tokens:
        record["reasoning_tokens"] = value
    return record


def _int(record: Mapping[str, Any], key: str) -> int:
    value = record.get(key, 0)
    if type(value) is not int:
        _check_type(value, int, key)
    return int(value)


def _usage_in(record: Mapping[str, Any]) -> Usage:
    _check_type(record, Mapping, "")
    return _new_usage(
        _int(record, "input_tokens"),
        _int(record, "output_tokens"),
        _int(record, "cached_tokens"),
        _int(record, "cache_write_tokens"),
        _int(record, "reasoning_tokens"),
    )


def _metadata_out(metadata: Metadata, add: _Add | None = None) -> Record:
    # The canisters' hooks write metadata naming only a model themselves.
    record: Record = {}
    if metadata.model is not None:
        record["model"] = metadata.model
    if metadata.latency_ms is not None:
        record["latency_ms"] = metadata.latency_ms
    if metadata.cache_hit is not None:
        record["cache_hit"] = metadata.cache_hit
    if metadata.retries is not None:
        record["retries"] = metadata.retries
    if metadata.quality is not None:
        record["quality"] = metadata.quality
    if metadata.usage is not None:
        record["usage"] = _usage_out(metadata.usage)
    if metadata.finish_reason is not None:
        record["finish_reason"] = metadata.finish_reason
    if metadata.custom:
        record["custom"] = metadata.custom
    if add is not None:
        add(record)
    return record


_METADATA_TYPES: dict[str, type | tuple[type, ...]] = {
    "model": str,
    "latency_ms": (int, float),
    "cache_hit": bool,
    "retries": int,
    "quality": (int, float),
    "finish_reason": str,
}


def _metadata_in(record: object) -> Metadata:
    if type(record) is not dict and not isinstance(record, Mapping):
        raise SerializationError(
            f"expected an object, got {type(record).__name__}", "$.metadata"
        )
    get = record.get
    values: list[Any] = []
    for name, expected in _METADATA_TYPES.items():
        value = get(name)
        if value is not None:
            _check_type(value, expected, f"metadata.{name}")
        values.append(value)
    model, latency_ms, cache_hit, retries, quality, finish_reason = values
    # Model names and finish reasons repeat on every turn: keep one copy of each.
    if type(model) is str:
        model = _share(model)
    if type(finish_reason) is str:
        finish_reason = _share(finish_reason)
    usage = get("usage")
    if usage is not None:
        try:
            usage = _usage_in(usage)
        except SerializationError as error:
            raise error.within("usage").within("metadata") from error.__cause__
    custom = get("custom")
    if custom is None:
        custom = EMPTY
    else:
        _check_type(custom, Mapping, "metadata.custom")
        custom = freeze(custom)
    return _new_metadata(
        model, latency_ms, usage, cache_hit, retries, quality, finish_reason, custom
    )


def _error_out(error: ErrorInfo) -> Record:
    record: Record = {"code": error.code, "message": error.message}
    if error.retryable:
        record["retryable"] = True
    if error.details is not None:
        record["details"] = error.details
    return record


def _error_in(record: object) -> ErrorInfo:
    if not isinstance(record, Mapping):
        raise SerializationError(
            f"expected an object, got {type(record).__name__}", "$.error"
        )
    code, message = record.get("code"), record.get("message")
    _check_type(code, str, "error.code")
    _check_type(message, str, "error.message")
    retryable = record.get("retryable", False)
    _check_type(retryable, bool, "error.retryable")
    details = record.get("details")
    if details is not None:
        _check_type(details, Mapping, "error.details")
    return ErrorInfo(code, message, retryable, details)  # type: ignore[arg-type]
