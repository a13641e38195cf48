"""Serialization: the cattrs converter, JSON and JSONL documents, registration.

Canisters unstructure to dicts tagged by ``"role"``, content parts to dicts tagged
by ``"type"``; bytes become base64, timestamps ISO 8601 with their offset, and
fields left at their defaults are omitted. The built-in classes have hooks written
once per class (no generic union dispatch per value); application classes added
with :func:`register_canister` / :func:`register_content` get hooks that cattrs
generates for them once, at registration.

Every document carries its format and version::

    {"format": "canisters.conversation", "version": 2, "canisters": [...]}
    {"format": "canisters.canister", "version": 2, "canister": {...}}
    {"format": "canisters.content", "version": 2, "content": {...}}
    {"format": "canisters.request", "version": 2, "request": {...}}

JSONL puts the document's header on the first line and one canister per line
after it. Documents written by an older version are upgraded on load by the
migrations registered with :func:`register_migration`.

Reading is fastest for the documents this release writes with the built-in
classes: msgspec decodes them straight into typed structs. Any other document
(registered classes, older versions, malformed input) is read by the hooks,
with the same result or the same error.
"""

from __future__ import annotations

import binascii
import gc
import json
import re
from collections.abc import Callable, Iterable, Mapping
from datetime import datetime, timedelta, timezone
from typing import TYPE_CHECKING, Any, Final, Protocol, TypeVar, get_args, get_origin

import attrs
import cattrs
from cattrs.gen import make_dict_structure_fn, make_dict_unstructure_fn

from . import _base64, _formats
from ._compat import fromisoformat
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
from .content import Audio, File, Image, Media, Reasoning, Text, Video, inline
from .conversation import Conversation
from .exceptions import CanistersError, ModelError, SerializationError, _excerpt
from .protocols import (
    AssistantCanister,
    AudioContent,
    Canister,
    Content,
    DocumentCanister,
    FileContent,
    ImageContent,
    InvocationCanister,
    MediaContent,
    ReasoningContent,
    ResultCanister,
    Role,
    SupervisorCanister,
    TextualContent,
    UserCanister,
    VideoContent,
)
from .requests import (
    CacheConfig,
    Generation,
    OutputFormat,
    ProviderTool,
    ReasoningConfig,
    Request,
    Tool,
    ToolChoice,
)

if TYPE_CHECKING:
    from ._wire import _Fast

__all__ = [
    "FORMAT_VERSION",
    "MAX_DEPTH",
    "converter",
    "from_json",
    "from_jsonl",
    "make_converter",
    "migrate",
    "register_canister",
    "register_content",
    "register_migration",
    "structure_canister",
    "structure_content",
    "to_json",
    "to_jsonl",
    "unstructure_canister",
    "unstructure_content",
]

FORMAT_VERSION: Final = _formats.FORMAT_VERSION
"""The version of the document format this release writes."""

CONVERSATION_FORMAT: Final = _formats.CONVERSATION_FORMAT
CANISTER_FORMAT: Final = _formats.CANISTER_FORMAT
CONTENT_FORMAT: Final = _formats.CONTENT_FORMAT
REQUEST_FORMAT: Final = _formats.REQUEST_FORMAT

MAX_DEPTH: Final = _formats.MAX_DEPTH
"""The deepest nesting of arrays and objects a value may have, counted in the
conversation document that holds it, on every Python version.

Every form is held to the same place: a canister document's record sits one
level higher than in a conversation document (so it may nest 499 levels below
its root), a content document's part three (497), a JSONL line's record two
(498); a snapshot holds the conversation document one level lower (501). Deeper
input raises :class:`~canisters.SerializationError` ("nested too deeply"), and
:func:`to_json` / :func:`to_jsonl` refuse to write it, so that whatever is
written is read back. Provider bodies are bounded likewise (see the reliability
page).
"""

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


def _content_out(parts: tuple[Content, ...], add: _Add | None = None) -> list[Record]:
    table = _CONTENT_OUT
    out = []
    for part in parts:
        # Most parts are plain text: build those without a hook call.
        if (
            type(part) is Text
            and part.mime_type == "text/plain"
            and part.id is None
            and not part.extras
        ):
            out.append({"type": "text", "text": part.text})
            continue
        entry = table.get(type(part))
        if entry is None:
            return [unstructure_content(part) for part in parts]
        hook = entry[1]
        if add is None:
            out.append(hook(part))
        elif hook in _COLLECTING:
            out.append(hook(part, add))  # type: ignore[call-arg]
        else:
            record = hook(part)
            add(record)
            out.append(record)
    return out


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


# --------------------------------------------------------------------------- #
# Canister hooks


def _envelope_in(record: Mapping[str, Any], cls: type) -> tuple[Any, ...]:
    """Read and check the envelope: the values of the first eight fields, in order.

    The checks are those of the canisters' constructors, which the trusted
    constructors skip; failures read the same.
    """
    identifier = record["id"]
    if type(identifier) is not str:
        _check_type(identifier, str, "id")
    if not identifier:
        raise ModelError(
            f"{cls.__name__}.id must be a non-empty string, got {_excerpt(identifier)}",
            field="id",
        )
    timestamp = _time_in(record["timestamp"])
    parent_id = record.get("parent_id")
    if parent_id is not None and type(parent_id) is not str:
        _check_type(parent_id, str, "parent_id")
    # Traces and policies are shared by many canisters: keep one copy of each.
    trace_id = record.get("trace_id")
    if trace_id is not None:
        if type(trace_id) is not str:
            _check_type(trace_id, str, "trace_id")
        if type(trace_id) is str:
            trace_id = _share(trace_id)
    policy = record.get("policy")
    if policy is not None:
        if type(policy) is not str:
            _check_type(policy, str, "policy")
        if type(policy) is str:
            policy = _share(policy)
    step = record.get("step")
    if step is not None:
        if type(step) is not int:
            _check_type(step, int, "step")
        if step < 0:
            raise ModelError(
                f"{cls.__name__}.step must be a non-negative int, got {_excerpt(step)}",
                field="step",
            )
    metadata = record.get("metadata")
    if metadata is not None:
        metadata = _metadata_in(metadata)
    extras = _mapping(record, "extras") if record.get("extras") else EMPTY
    return (identifier, timestamp, parent_id, trace_id, policy, step, metadata, extras)


# The unstructure hooks of the built-in canisters are generated from one
# template: a canister with no lineage, trace, policy or extras (most of them)
# gets its record written as one dict display (one of four, as it has a step
# and metadata or not), any other gets its envelope key by key and the class's
# own fields after it; the keys come in the same order either way. A UTC
# timestamp stays a datetime: orjson writes it exactly as isoformat() would,
# much faster (unstructure_canister() turns it into text for callers).
# ``prepare`` computes the class's own values first, ``fields`` names them (key,
# expression), ``finish`` adds the optional ones at the end.
_OUT_TEMPLATE: Final = """\
def unstructure(canister, add=None):
{prepare}
    if (
        canister.parent_id is None
        and canister.trace_id is None
        and canister.policy is None
        and not canister.extras
    ):
        moment = canister.timestamp
        if moment.tzinfo is not _UTC:
            moment = moment.isoformat()
        step = canister.step
        metadata = canister.metadata
        if metadata is None:
            if step is None:
                record = {{{head}, {fields}}}
            else:
                record = {{{head}, "step": step, {fields}}}
        else:
            # Metadata naming only a model is the common case.
            if (
                metadata.finish_reason is None
                and metadata.usage is None
                and metadata.latency_ms is None
                and metadata.cache_hit is None
                and metadata.retries is None
                and metadata.quality is None
                and not metadata.custom
                and type(model := metadata.model) is str
            ):
                metadata = {{"model": model}}
            else:
                metadata = _metadata_out(metadata, add)
            if step is None:
                record = {{{head}, "metadata": metadata, {fields}}}
            else:
                record = {{{head}, "step": step, "metadata": metadata, {fields}}}
    else:
        # The envelope key by key; a value the constructors do not check is
        # handed to ``add`` unless it is a str.
        moment = canister.timestamp
        if moment.tzinfo is not _UTC:
            moment = moment.isoformat()
        record = {{{head}}}
{unchecked}        value = canister.step
        if value is not None:
            record["step"] = value
        value = canister.metadata
        if value is not None:
            record["metadata"] = _metadata_out(value, add)
        value = canister.extras
        if value:
            record["extras"] = value
            if add is not None:
                add(value)
{assign}
{finish}
    return record
"""


def _unchecked(names: tuple[str, ...], indent: str) -> str:
    """Generated code writing the optional fields ``names``, typed str but not
    checked by the constructors: set ones only, and to ``add`` unless a str."""
    return "".join(
        f"""\
{indent}value = canister.{name}
{indent}if value is not None:
{indent}    record["{name}"] = value
{indent}    if add is not None and type(value) is not str:
{indent}        add(value)
"""
        for name in names
    )


# The envelope's.
_UNCHECKED: Final = _unchecked(("parent_id", "trace_id", "policy"), " " * 8)
# The content of a canister, into ``parts``: a lone plain text part (the
# commonest content) is written without a call.
_CONTENT_PREPARE: Final = """\
    content = canister.content
    if (
        len(content) == 1
        and type(part := content[0]) is Text
        and part.mime_type == "text/plain"
        and part.id is None
        and not part.extras
    ):
        parts = [{"type": "text", "text": part.text}]
    else:
        parts = _content_out(content, add)"""
_CALL_FIELDS: Final = (
    ("invocation_id", "canister.invocation_id"),
    ("name", "canister.name"),
)


def _canister_out(
    tag: str, fields: tuple[tuple[str, str], ...], prepare: str, finish: str = ""
) -> _OutHook:
    source = _OUT_TEMPLATE.format(
        unchecked=_UNCHECKED,
        prepare=prepare,
        head=f'"role": {tag!r}, "id": canister.id, "timestamp": moment',
        fields=", ".join(f"{key!r}: {value}" for key, value in fields),
        assign="\n".join(f"        record[{key!r}] = {value}" for key, value in fields),
        finish=finish,
    )
    namespace: dict[str, Any] = {}
    exec(source, globals(), namespace)
    hook: _OutHook = namespace["unstructure"]
    return hook


def _with_content_out(tag: str) -> _OutHook:
    return _canister_out(tag, (("content", "parts"),), _CONTENT_PREPARE)


def _with_content_in(
    cls: type[User] | type[Assistant] | type[Supervisor],
) -> _Structure:
    build = {User: _new_user, Assistant: _new_assistant, Supervisor: _new_supervisor}[
        cls
    ]

    def structure(record: Mapping[str, Any]) -> Any:
        content = _content_in(record.get("content", ()))
        return build(*_envelope_in(record, cls), content)

    return structure


_document_out: Final = _canister_out(
    "document",
    (("content", "parts"),),
    _CONTENT_PREPARE,
    _unchecked(("title", "document_id"), " " * 4),
)


def _document_in(record: Mapping[str, Any]) -> Document:
    content = _content_in(record.get("content", ()))
    title = _opt_str(record, "title")
    document_id = _opt_str(record, "document_id")
    return _new_document(*_envelope_in(record, Document), content, title, document_id)


_invocation_out: Final = _canister_out(
    "invocation",
    (*_CALL_FIELDS, ("arguments", "arguments")),
    """\
    arguments = canister.arguments
    if add is not None and arguments:
        add(arguments)""",
)


def _call_in(record: Mapping[str, Any]) -> tuple[str, str]:
    """The ``invocation_id`` and ``name`` of an invocation or a result, checked.

    A handful of tool names repeat across a conversation, and a result repeats
    the id of its invocation: one copy of each is kept (see :func:`_share`).
    """
    invocation_id, name = record["invocation_id"], record["name"]
    if type(invocation_id) is str:
        invocation_id = _share(invocation_id)
    else:
        _check_type(invocation_id, str, "invocation_id")
    if type(name) is str:
        name = _share(name)
    else:
        _check_type(name, str, "name")
    return invocation_id, name


def _invocation_in(record: Mapping[str, Any]) -> Invocation:
    invocation_id, name = _call_in(record)
    arguments = _mapping(record, "arguments")
    return _new_invocation(
        *_envelope_in(record, Invocation), name, arguments, invocation_id
    )


_result_out: Final = _canister_out(
    "result",
    (*_CALL_FIELDS, ("content", "parts")),
    _CONTENT_PREPARE,
    """\
    error = canister.error
    if error is not None:
        record["error"] = error = _error_out(error)
        if add is not None:
            add(error)""",
)


def _result_in(record: Mapping[str, Any]) -> Result:
    invocation_id, name = _call_in(record)
    content = _content_in(record.get("content", ()))
    error = record.get("error")
    if error is not None:
        error = _error_in(error)
    return _new_result(
        *_envelope_in(record, Result), invocation_id, name, content, error
    )


def unstructure_canister(canister: Canister) -> Record:
    """Return ``canister`` as a JSON-compatible dict tagged by ``"role"``."""
    record = _record(canister)
    moment = record.get("timestamp")
    if type(moment) is datetime:
        record["timestamp"] = moment.isoformat()
    return record


def _records(canisters: Iterable[Canister], add: _Add | None = None) -> list[Record]:
    """:func:`_record` of each canister, dispatching through the table directly;
    with ``add``, each value that may hold a float is handed to it (see
    :data:`_COLLECTING`)."""
    table = _CANISTER_OUT
    records = []
    if add is None:
        for canister in canisters:
            entry = table.get(type(canister))
            records.append(_record(canister) if entry is None else entry[1](canister))
        return records
    collecting = _COLLECTING
    for canister in canisters:
        entry = table.get(type(canister))
        if entry is None:
            records.append(_record(canister))  # raises
        elif entry[1] in collecting:
            records.append(entry[1](canister, add))  # type: ignore[call-arg]
        else:
            record = entry[1](canister)
            add(record)
            records.append(record)
    return records


def _record(canister: Canister) -> Record:
    """Like :func:`unstructure_canister`, but a UTC timestamp may stay a datetime
    (for orjson, which writes it as ``isoformat()`` does)."""
    entry = _CANISTER_OUT.get(type(canister))
    if entry is None:
        raise _unregistered(canister, "register_canister")
    return entry[1](canister)


def structure_canister(record: object) -> Canister:
    """Build a canister from a dict tagged by ``"role"``."""
    tag, entry = _tagged(record, "role", _CANISTER_IN, "canister", "role")
    canister: Canister = _guarded(entry[1], record, f"{tag} canister")
    return canister


def _canisters_in(records: object, key: str = "canisters") -> tuple[Canister, ...]:
    if not isinstance(records, list):
        raise SerializationError(
            f"expected a list of canisters, got {type(records).__name__}", f"$.{key}"
        )
    table = _CANISTER_IN
    try:
        # Well-formed input takes the direct route: one hook call per canister.
        return tuple([table[record["role"]][1](record) for record in records])
    except Exception:  # redone below, part by part, for a located error
        pass
    items = []
    for index, record in enumerate(records):
        try:
            items.append(structure_canister(record))
        except SerializationError as error:
            raise error.within(f"[{index}]").within(key) from error.__cause__
    return tuple(items)


# --------------------------------------------------------------------------- #
# Registration


def _register_content(cls: type, tag: str, out: _Unstructure, into: _Structure) -> None:
    _CONTENT_OUT[cls] = (tag, out)
    _CONTENT_IN[tag] = into


def _register_canister(
    cls: type, role: Role, tag: str, out: _Unstructure, into: _Structure
) -> None:
    _CANISTER_OUT[cls] = (tag, out)
    _CANISTER_IN[tag] = (role, into)


_register_content(Text, "text", _text_out, _text_in)
for _media in (Image, Audio, Video, File):
    _register_content(_media, _media.type, _media_out(_media.type), _media_in(_media))
_register_content(Reasoning, "reasoning", _reasoning_out, _reasoning_in)
for _cls, _role in (
    (User, Role.User),
    (Assistant, Role.Assistant),
    (Supervisor, Role.Supervisor),
):
    _register_canister(
        _cls, _role, _role.value, _with_content_out(_role.value), _with_content_in(_cls)
    )
_register_canister(Document, Role.Document, "document", _document_out, _document_in)
_register_canister(
    Invocation, Role.Invocation, "invocation", _invocation_out, _invocation_in
)
_register_canister(Result, Role.Result, "result", _result_out, _result_in)
# The built-in classes' out hooks, which take a collector: ``add(value)`` for
# each value the record holds that may be (or hold) a float, so that to_json()
# and to_jsonl() look for NaN and the infinities (which orjson writes as null)
# in those values only, never in the texts. Every value a built-in class does
# not check to be a string, an int, a bool, bytes or a datetime is handed over.
# Any other hook (an application's, or one replacing a built-in class's) hands
# over its whole record.
_COLLECTING: Final[frozenset[Callable[..., Record]]] = frozenset(
    out for _tag, out in (*_CONTENT_OUT.values(), *_CANISTER_OUT.values())
)
_BUILTIN_TAGS: Final = frozenset(_CANISTER_IN) | frozenset(_CONTENT_IN)


def _check_tag(tag: object, cls: type, owners: Mapping[type, tuple[str, Any]]) -> str:
    if not isinstance(tag, str) or not tag:
        raise SerializationError(
            f"a tag must be a non-empty string, got {_excerpt(tag)}"
        )
    for owner, (owned, _hook) in owners.items():
        if owned == tag and owner is not cls:
            raise SerializationError(
                f"tag {_excerpt(tag)} is already registered for {owner.__qualname__}"
            )
    return tag


def _generated_hooks(
    cls: type, tag_key: str, tag: str
) -> tuple[_Unstructure, _Structure]:
    if not attrs.has(cls):
        raise SerializationError(
            f"{cls.__qualname__} is not an attrs class; pass unstructure= and "
            "structure= hooks to register it"
        )
    unstructure_fields = make_dict_unstructure_fn(
        cls, converter, _cattrs_omit_if_default=True
    )
    structure_fields = make_dict_structure_fn(cls, converter)

    def unstructure(obj: Any) -> Record:
        record = {tag_key: tag}
        record.update(unstructure_fields(obj))
        return record

    required = ("id", "timestamp") if tag_key == "role" else ()

    def structure(record: Mapping[str, Any]) -> Any:
        for key in required:
            if key not in record:
                raise SerializationError(f"missing field {_excerpt(key)}", f"$.{key}")
        try:
            return structure_fields(dict(record), cls)
        except SerializationError:
            raise
        except (cattrs.BaseValidationError, KeyError, TypeError, ValueError) as error:
            raise _from_cattrs(error) from error

    return unstructure, structure


def _from_cattrs(error: Exception) -> SerializationError:
    if isinstance(error, cattrs.BaseValidationError):
        for message in cattrs.transform_error(error, format_exception=_describe):
            text, _, path = message.partition(" @ ")
            return SerializationError(text, path or "$")
    if isinstance(error, KeyError):
        return SerializationError(
            f"missing field {_excerpt(error.args[0])}", f"$.{error.args[0]}"
        )
    return SerializationError(str(error))


def _describe(error: BaseException, _kind: Any) -> str:
    if isinstance(error, KeyError):
        return "missing field"
    if isinstance(error, SerializationError):
        return error.reason
    return str(error)


def register_canister(
    cls: type[T],
    tag: str,
    *,
    unstructure: Callable[[T], Mapping[str, Any]] | None = None,
    structure: Callable[[Mapping[str, Any]], T] | None = None,
) -> type[T]:
    """Make ``cls`` serialize as itself, tagged ``"role": tag``.

    ``cls`` is an attrs class with a :class:`~canisters.Role` as its ``role``: a
    subclass of a built-in canister, or any attrs class satisfying a canister
    Protocol. Hooks are generated once, here; pass ``unstructure`` and
    ``structure`` to use your own (for classes that are not attrs classes).
    Returns ``cls``.
    """
    role = getattr(cls, "role", None)
    if not isinstance(role, Role):
        raise SerializationError(
            f"{getattr(cls, '__qualname__', cls)!r} has no Role in its 'role' attribute"
        )
    _register_canister(
        cls, role, tag, *_hooks(cls, "role", tag, _CANISTER_OUT, unstructure, structure)
    )
    return cls


def _hooks(
    cls: type[Any],
    key: str,
    tag: str,
    table: Mapping[type, tuple[str, _Unstructure]],
    unstructure: Callable[[Any], Mapping[str, Any]] | None,
    structure: Callable[[Mapping[str, Any]], Any] | None,
) -> tuple[_Unstructure, _Structure]:
    """The hooks :func:`register_canister` and :func:`register_content` register
    for ``cls`` under ``tag`` (the value of ``key``), after checking the tag
    against ``table``, the registered classes of its kind."""
    _check_tag(tag, cls, table)
    if tag in _BUILTIN_TAGS:
        if table.get(cls, ("",))[0] != tag:
            raise SerializationError(
                f"tag {_excerpt(tag)} is reserved for a built-in class"
            )
        _disable_fast()  # new hooks for a built-in class
    if unstructure is None or structure is None:
        generated_out, generated_in = _generated_hooks(cls, key, tag)
    out: _Unstructure = (
        generated_out
        if unstructure is None
        else (lambda obj: {key: tag, **unstructure(obj)})
    )
    into: _Structure = generated_in if structure is None else structure
    return out, into


def register_content(
    cls: type[T],
    tag: str,
    *,
    unstructure: Callable[[T], Mapping[str, Any]] | None = None,
    structure: Callable[[Mapping[str, Any]], T] | None = None,
) -> type[T]:
    """Make the content class ``cls`` serialize as itself, tagged ``"type": tag``.

    Works like :func:`register_canister`.
    """
    if not isinstance(getattr(cls, "type", None), str):
        raise SerializationError(
            f"{getattr(cls, '__qualname__', cls)!r} has no 'type' attribute"
        )
    _register_content(
        cls, tag, *_hooks(cls, "type", tag, _CONTENT_OUT, unstructure, structure)
    )
    return cls


# --------------------------------------------------------------------------- #
# The converter


_CANISTER_PROTOCOLS: Final[dict[type, Role | None]] = {
    Canister: None,
    UserCanister: Role.User,
    AssistantCanister: Role.Assistant,
    SupervisorCanister: Role.Supervisor,
    DocumentCanister: Role.Document,
    InvocationCanister: Role.Invocation,
    ResultCanister: Role.Result,
}
_CONTENT_PROTOCOLS: Final = (
    Content,
    TextualContent,
    MediaContent,
    ImageContent,
    AudioContent,
    VideoContent,
    FileContent,
    ReasoningContent,
)


def _is_content_tuple(kind: Any) -> bool:
    if get_origin(kind) is not tuple:
        return False
    args = get_args(kind)
    return len(args) == 2 and args[1] is Ellipsis and args[0] in _CONTENT_PROTOCOLS


def make_converter() -> cattrs.Converter:
    """Build a cattrs converter that knows every canister and content class.

    Canister and content Protocols structure through the tagged unions (so a field
    typed ``UserCanister`` works); concrete classes use their registered hooks.
    The module-level :data:`converter` is one such converter; build your own to
    add hooks without touching it.
    """
    made = cattrs.Converter()

    def canister_in(data: Any, kind: Any) -> Canister:
        canister = structure_canister(data)
        expected = _CANISTER_PROTOCOLS.get(kind)
        if expected is not None and canister.role is not expected:
            raise SerializationError(
                f"expected a {expected.value} canister, got {canister.role.value}",
                "$.role",
            )
        return canister

    for protocol in _CANISTER_PROTOCOLS:
        made.register_structure_hook(protocol, canister_in)
        made.register_unstructure_hook(protocol, unstructure_canister)
    for protocol in _CONTENT_PROTOCOLS:
        made.register_structure_hook(
            protocol, lambda data, _kind: structure_content(data)
        )
        made.register_unstructure_hook(protocol, unstructure_content)
    made.register_structure_hook_func(
        _is_content_tuple, lambda data, _kind: _content_in(data)
    )
    made.register_unstructure_hook_func(_is_content_tuple, _content_out)

    def canister_class(kind: Any) -> bool:
        return isinstance(kind, type) and kind in _CANISTER_OUT

    def content_class(kind: Any) -> bool:
        return isinstance(kind, type) and kind in _CONTENT_OUT

    made.register_unstructure_hook_func(canister_class, unstructure_canister)
    made.register_structure_hook_func(
        canister_class,
        lambda data, kind: _structure_exact(data, kind, structure_canister),
    )
    made.register_unstructure_hook_func(
        content_class, lambda obj: _CONTENT_OUT[type(obj)][1](obj)
    )
    made.register_structure_hook_func(
        content_class,
        lambda data, kind: _structure_exact(data, kind, structure_content),
    )
    for scalar in (str, int, float, bool):
        made.register_structure_hook(scalar, _strict(scalar))
    made.register_unstructure_hook(datetime, _time_out)
    made.register_structure_hook(datetime, lambda data, _kind: _time_in(data))
    made.register_unstructure_hook(bytes, _b64)
    made.register_structure_hook(bytes, lambda data, _kind: _unb64(data, "data"))
    made.register_unstructure_hook(Metadata, _metadata_out)
    made.register_structure_hook(Metadata, lambda data, _kind: _metadata_in(data))
    made.register_unstructure_hook(ErrorInfo, _error_out)
    made.register_structure_hook(ErrorInfo, lambda data, _kind: _error_in(data))
    made.register_unstructure_hook(Usage, _usage_out)
    made.register_structure_hook(Usage, lambda data, _kind: _usage_in(data))
    made.register_unstructure_hook(FrozenDict, lambda value: value)
    made.register_unstructure_hook(
        Conversation, lambda value: [unstructure_canister(c) for c in value]
    )
    made.register_structure_hook(
        Conversation, lambda data, _kind: Conversation(_canisters_in(data, "canisters"))
    )

    def is_mapping(kind: Any) -> bool:
        return get_origin(kind) is Mapping or kind is Mapping

    made.register_structure_hook_func(
        is_mapping, lambda data, _kind: _frozen_mapping(data)
    )
    return made


def _strict(kind: type[T]) -> Callable[[Any, Any], T]:
    """Structure a JSON scalar without coercion (cattrs would turn 5 into "5")."""
    allowed: tuple[type, ...] = (int, float) if kind is float else (kind,)

    def structure(data: Any, _kind: Any) -> T:
        if not isinstance(data, allowed) or (
            isinstance(data, bool) and kind is not bool
        ):
            raise SerializationError(
                f"expected {kind.__name__}, got {type(data).__name__}"
            )
        return kind(data)  # type: ignore[call-arg]

    return structure


def _frozen_mapping(data: object) -> FrozenDict[Any, Any]:
    if not isinstance(data, Mapping):
        raise SerializationError(f"expected an object, got {type(data).__name__}")
    return freeze(data)


def _structure_exact(data: Any, kind: type, structure: Callable[[Any], Any]) -> Any:
    value = structure(data)
    if type(value) is not kind:
        raise SerializationError(
            f"expected {kind.__qualname__}, got {type(value).__qualname__}"
        )
    return value


converter: Final[cattrs.Converter] = make_converter()
"""The library's converter (``converter.unstructure(x)``, ``.structure(d, T)``)."""


# --------------------------------------------------------------------------- #
# Migrations


_MIGRATIONS: dict[int, Callable[[Record], Record]] = {}


def register_migration(
    from_version: int,
) -> Callable[[Callable[[Record], Record]], Callable[[Record], Record]]:
    """Register a function that upgrades a document from ``from_version``.

    The function receives the whole document (a dict with ``format``,
    ``version`` and its payload) and returns it in the next version's shape; the
    version number is updated for it.
    """

    def decorator(migration: Callable[[Record], Record]) -> Callable[[Record], Record]:
        _MIGRATIONS[from_version] = migration
        return migration

    return decorator


def migrate(document: Record) -> Record:
    """Upgrade ``document`` to :data:`FORMAT_VERSION` through registered migrations.

    A document a migration cannot read raises
    :class:`~canisters.SerializationError` naming the path of the bad field.
    """
    if not isinstance(document, dict):
        raise SerializationError(
            f"expected a document object, got {type(document).__name__}"
        )
    version = document.get("version")
    if type(version) is not int:
        raise SerializationError(
            f"expected an integer format version, got {_excerpt(version)}", "$.version"
        )
    if version > FORMAT_VERSION:
        raise SerializationError(
            f"document version {version} is newer than this library's "
            f"({FORMAT_VERSION}); upgrade canisters",
            "$.version",
        )
    while version < FORMAT_VERSION:
        migration = _MIGRATIONS.get(version)
        if migration is None:
            raise SerializationError(
                f"no migration from document version {version}", "$.version"
            )
        try:
            document = migration(document)
        except SerializationError:
            raise
        except Exception as error:  # an application's migration, say
            raise SerializationError(
                f"migration from version {version} failed: "
                f"{type(error).__name__}: {_excerpt(str(error))}"
            ) from error
        if not isinstance(document, dict):
            raise SerializationError(
                f"migration from version {version} returned "
                f"{type(document).__name__}, not a document object"
            )
        version += 1
        document["version"] = version
    return document


_V1_ROLES = {"system": "supervisor", "user": "user", "assistant": "assistant"}


def _v1_part(part: Any) -> Any:
    if not isinstance(part, dict):
        return part  # the structure hooks say what is wrong, and where
    part = dict(part)
    kind = part.pop("kind", None)
    if kind == "text":
        part["type"] = "text"
    elif kind == "media":
        modality = part.pop("modality", None)
        part["type"] = "file" if modality == "document" else modality
        for old, new in (("mime", "mime_type"), ("prompt_hint", "hint")):
            if old in part:
                part[new] = part.pop(old)
    return part


def _v1_canister(record: Any) -> Any:
    """Upgrade one version-1 (pre-release) message record."""
    if not isinstance(record, dict):
        return record
    record = dict(record)
    for old, new in (("step_num", "step"), ("actor", "policy")):
        if old in record:
            record[new] = record.pop(old)
    kind = record.pop("kind", None)
    if kind == "parts":
        hint = record.pop("role_hint_for_llm", None) or "user"
        record["role"] = _V1_ROLES.get(hint, hint) if isinstance(hint, str) else hint
        parts = record.pop("parts", [])
        if not isinstance(parts, list):
            raise SerializationError(
                f"expected a list of parts, got {type(parts).__name__}", "$.parts"
            )
        record["content"] = [_v1_part(part) for part in parts]
    elif kind == "option_call":
        record["role"] = "invocation"
        record["name"] = record.pop("option_name", None)
    elif kind == "option_result":
        record["role"] = "result"
        record["name"] = record.pop("option_name", None)
        value = record.pop("result", None)
        if record.pop("is_error", False):
            record["error"] = {
                "code": record.pop("error_type", None) or "UNKNOWN",
                "message": record.pop("error_message", None) or "",
                "retryable": bool(record.pop("retryable", False)),
            }
        for stale in ("error_type", "error_message", "retryable"):
            record.pop(stale, None)
        if value is None:
            record["content"] = []
        elif isinstance(value, str):
            record["content"] = [{"type": "text", "text": value}]
        else:
            record["content"] = [
                {
                    "type": "text",
                    "text": _dumps(value),
                    "mime_type": "application/json",
                }
            ]
    return record


@register_migration(1)
def _from_version_1(document: Record) -> Record:
    """Version 1 (pre-release) had other names for the message kinds, and
    ``step_num`` and ``actor`` fields."""
    if "canisters" in document:
        records = document["canisters"]
        if not isinstance(records, list):
            raise SerializationError(
                f"expected a list of canisters, got {type(records).__name__}",
                "$.canisters",
            )
        upgraded = []
        for index, record in enumerate(records):
            try:
                upgraded.append(_v1_canister(record))
            except SerializationError as error:
                raise error.within(f"[{index}]").within("canisters") from error
        document["canisters"] = upgraded
    if "canister" in document:
        try:
            document["canister"] = _v1_canister(document["canister"])
        except SerializationError as error:
            raise error.within("canister") from error
    if "content" in document:
        document["content"] = _v1_part(document["content"])
    return document


# --------------------------------------------------------------------------- #
# The fast path (``canisters._wire``, loaded with msgspec on the first read)


def _fast() -> _Fast | None:
    """The fast path's decoders, or ``None`` where it cannot serve."""
    if not _WIRE:
        # Loaded on the first read, then kept: an import statement in a
        # function resolves the package again on every call (half a
        # microsecond, a tenth of reading a one-message document).
        from . import _wire

        _WIRE.append(_wire)
    return _WIRE[0].fast()  # type: ignore[no-any-return]


_WIRE: list[Any] = []


def _disable_fast() -> None:
    """Send every document through the hooks: a built-in tag's hook was replaced."""
    from . import _wire

    _wire.disable()


def _read_fast(text: object, reader: str) -> Any:
    """What the fast path's ``reader`` (``"from_json"`` or ``"from_jsonl"``) reads
    from ``text``; ``None`` when it does not serve or refuses the text, which the
    hooks then read again, for the located error."""
    fast = _fast()
    if fast is None or not (type(text) is bytes or type(text) is str):
        return None
    # The collector is paused as _paused pauses it, inline (a call fewer).
    running = _gc_enabled()
    if running:
        _gc_disable()
    try:
        return getattr(fast, reader)(text)
    except Exception:
        return None
    finally:
        if running:
            _gc_enable()


def _paused(function: Callable[..., T], *arguments: Any) -> T:
    """``function(*arguments)``, with the cyclic garbage collector paused.

    Reading and writing a document make thousands of containers (canisters and
    parts, or the records written), which hold no cycles and set off
    collection after collection, each walking what was just made: a sixth of
    reading a conversation of short messages, a tenth of writing one as JSONL.
    Rendering and reading provider bodies are paused the same way (see
    :mod:`canisters.providers`): a tenth to a sixth of rendering an agent run to
    OpenAI Chat and of reading OpenAI Chat and Anthropic requests. Collection
    goes on afterwards, as it would have. A collector paused already (by the
    application) is left so.
    """
    running = _gc_enabled()
    if running:
        _gc_disable()
    try:
        return function(*arguments)
    finally:
        if running:
            _gc_enable()


_gc_enabled: Final = gc.isenabled
_gc_disable: Final = gc.disable
_gc_enable: Final = gc.enable


# --------------------------------------------------------------------------- #
# JSON and JSONL


# orjson holds integers to 64 bits: it refuses larger ones when writing and
# reads them as floats. Such documents go through the standard library instead,
# which keeps integers exact. A number of 19 digits or more may be such an
# integer; it starts the document or follows one of ``:,[-`` or whitespace, which
# a run of digits inside a string (a hex id) rarely does. The search maps digits
# to "0", those characters to ":" and every other byte to a space: two passes in
# C, an order of magnitude faster than a regular expression.
_NUMBER_SHAPES: Final = bytes(
    48 if 48 <= code <= 57 else 58 if code in b":,[- \t\r\n" else 32
    for code in range(256)
)
_LONG_RUN: Final = b"0" * 19
_LONG_NUMBER: Final = b":" + _LONG_RUN


def _may_hold_long_integer(raw: bytes) -> bool:
    shapes = raw.translate(_NUMBER_SHAPES)
    return _LONG_NUMBER in shapes or shapes.startswith(_LONG_RUN)


# What orjson refuses to write: integers beyond 64 bits, strings holding lone
# surrogates, nesting beyond 254 levels. The standard library writes them.
_ORJSON_REFUSALS: Final = ("64-bit", "surrogates", "Recursion limit")


def _encode_json(
    value: Any,
    limit: int = MAX_DEPTH,
    floats: list[Any] | None = None,
    default: Callable[[Any], Any] | None = None,
) -> tuple[bytes, bool]:
    """Return the JSON bytes of ``value``, and whether the standard library wrote
    them; a value nesting more than ``limit`` levels (which the readers would
    refuse) raises :class:`SerializationError`. ``floats``: every value within
    ``value`` that may be or hold a float, where the search for NaN and the
    infinities then looks instead of the whole output (see
    :data:`_COLLECTING`). ``default``: orjson's (a
    :class:`~canisters._base64.Splicer`, for the media of to_json and
    to_jsonl); the standard library writes such media's base64 in place.

    orjson writes almost everything; the standard library takes over where
    orjson cannot be exact (see "Inputs" on the reliability page): integers
    beyond 64 bits, lone surrogates (written as ``\\ud800`` escapes), NaN and
    the infinities (written as ``NaN``, ``Infinity`` and ``-Infinity``, which
    orjson would write as ``null``: an output holding ``null`` is searched for
    them), and nesting beyond orjson's 254 levels.
    """
    import orjson  # on first use: it takes a fair share of `import canisters`

    try:
        encoded = orjson.dumps(value, default=default)
    except TypeError as error:
        message = str(error)
        if not any(refusal in message for refusal in _ORJSON_REFUSALS):
            raise SerializationError(
                f"value is not JSON-serializable: {message}"
            ) from error
    else:
        if floats is None:
            exact = b"null" not in encoded or not _holds_non_finite(value, len(encoded))
        else:
            exact = not _collected_non_finite(floats)
        if exact:
            return encoded, False
        del encoded
    # orjson writes 254 levels at most, fewer than any bound: only here can the
    # value be too deep.
    _check_depth(value, limit)
    try:
        text = json.dumps(
            value, ensure_ascii=False, separators=(",", ":"), default=_json_default
        )
    except RecursionError as error:
        raise SerializationError(_TOO_DEEP) from error
    except (TypeError, ValueError) as error:
        raise SerializationError(f"value is not JSON-serializable: {error}") from error
    if not text.isascii() and _SPLIT_PAIR.search(text) is not None:
        raise SerializationError(
            "a string holds a surrogate pair as two code points, which JSON "
            "cannot tell from the character the pair encodes"
        )
    # A lone surrogate can only be inside a string: its \\uXXXX escape is what
    # backslashreplace writes, and the standard library reads it back.
    return text.encode("utf-8", "backslashreplace"), True


_RECORD_PATH: Final = re.compile(r"\$\.canisters\[(\d+)\](.*)")
_SPLIT_PAIR: Final = re.compile("[\ud800-\udbff][\udc00-\udfff]")


_NESTED: Final = _formats.NESTED
_nests_deeper: Final = _formats.nests_deeper
_utf8: Final = _formats.utf8
_JSONL_HEADER: Final = _formats.JSONL_HEADER

_TOO_DEEP: Final = (
    f"nested too deeply (more than {MAX_DEPTH} levels of arrays and objects)"
)


def _deep_steps(value: Any, limit: int) -> tuple[Any, ...]:
    """The keys and indexes leading to a container nested more than ``limit``
    levels deep in ``value`` (``()`` when there is none); iterative."""
    stack: list[tuple[Any, tuple[Any, ...]]] = [(value, ())]
    while stack:
        container, steps = stack.pop()
        if not isinstance(container, _NESTED):
            continue
        if len(steps) >= limit:
            return steps
        items = (
            container.items() if isinstance(container, dict) else enumerate(container)
        )
        stack.extend((item, (*steps, key)) for key, item in items)
    return ()


def _may_nest_deeper(text: str | bytes, limit: int) -> bool:
    """Whether JSON ``text`` may nest more than ``limit`` levels: it cannot when
    it is too short to hold that many brackets."""
    return len(text) > 2 * limit


def _check_depth(value: Any, limit: int, where: str | None = None) -> None:
    """Raise :class:`SerializationError` if ``value`` nests more than ``limit``
    levels: as JSON read at ``where``, else as a value to write."""
    if _nests_deeper(value, limit):
        if where is None:
            raise SerializationError(_TOO_DEEP)
        raise SerializationError(f"not JSON: {_TOO_DEEP}", where)


def _holds_non_finite(value: Any, size: int) -> bool:
    """Whether a NaN or an infinity is anywhere in ``value``, whose JSON takes
    ``size`` bytes.

    MessagePack keeps every float as its 8 IEEE bytes after the marker ``0xcb``,
    where a non-finite one starts with ``7ff`` or ``fff``: msgspec writes it
    several times faster than Python walks the values, so a document without
    such bytes is settled at once. Large documents (media) and those holding
    the bytes are walked, without recursion.
    """
    if size < _PACK_AT_MOST:
        try:
            import msgspec

            if not _packed_non_finite(msgspec.msgpack.encode(value)):
                return False
        except Exception:  # a type MessagePack lacks: walk instead
            pass
    stack = [value]
    pop, extend = stack.pop, stack.extend
    while stack:
        item = pop()
        kind = type(item)
        if kind is str:
            continue
        if kind is dict or kind is FrozenDict:
            extend(item.values())
        elif kind is list or kind is tuple:
            extend(item)
        elif kind is float:
            if item - item != 0.0:  # NaN for NaN and the infinities
                return True
        elif isinstance(item, dict):
            extend(item.values())
        elif isinstance(item, (list, tuple)):
            extend(item)
        elif isinstance(item, float) and item - item != 0.0:
            return True
    return False


def _collected_non_finite(floats: list[Any]) -> bool:
    """Whether a NaN or an infinity is within the values collected while the
    records were made (see :data:`_COLLECTING`): packed a slice at a time,
    whatever the size of the document, as they never hold media's bytes."""
    for start in range(0, len(floats), _PACKED_SLICE):
        if _holds_non_finite(floats[start : start + _PACKED_SLICE], 0):
            return True
    return False


_PACKED_SLICE: Final = 256
_PACK_AT_MOST: Final = 1 << 20


def _packed_non_finite(packed: bytes) -> bool:
    """Whether MessagePack ``packed`` may hold a NaN or an infinity: a float
    marker (``0xcb``) followed by ``7ff`` or ``fff``. The markers are found by
    ``bytes.find`` (memchr), several times faster than a regular expression
    steps through the bytes; the marker's bytes inside an integer may answer
    yes, which the walk then settles (UTF-8 text cannot hold them)."""
    find = packed.find
    at = find(b"\xcb")
    while at >= 0:
        if (
            packed[at + 1 : at + 2] in (b"\x7f", b"\xff")
            and packed[at + 2 : at + 3] >= b"\xf0"
        ):
            return True
        at = find(b"\xcb", at + 1)
    return False


def _dumps(value: Any, limit: int = MAX_DEPTH, floats: list[Any] | None = None) -> str:
    """The JSON text of ``value``, which the caller hands over: it is released
    before the bytes become text, so that the base64 of a large media part
    exists twice at most (see "Memory" on the reliability page). ``limit`` and
    ``floats``: as for :func:`_encode_json`."""
    encoded = _encode_json(value, limit, floats)[0]
    del value, floats
    return encoded.decode()


def _json_default(value: object) -> str:
    if isinstance(value, datetime):
        return value.isoformat()
    import orjson

    if type(value) is _base64.Spliced:  # media's base64: see _media_out
        return _base64.text_of(value.data)
    if type(value) is orjson.Fragment:
        text: str = orjson.loads(orjson.dumps(value))
        return text
    raise TypeError(f"Object of type {type(value).__name__} is not JSON serializable")


def _loads(text: str | bytes, where: str = "$", limit: int = MAX_DEPTH) -> Any:
    """Read one JSON value: what the standard library's :func:`json.loads` reads
    from UTF-8 (JSON with ``NaN``, ``Infinity``, ``-Infinity`` and lone surrogate
    escapes, integers of any size up to 4,300 digits), through msgspec (or orjson)
    where they can read it, which is almost always; nesting more than ``limit``
    levels raises :class:`SerializationError`, on every Python version."""
    value = _decode(text, where)
    if _may_nest_deeper(text, limit):
        _check_depth(value, limit, where)
    return value


def _decode(text: str | bytes, where: str) -> Any:
    fast = _fast()
    if fast is not None and (type(text) is bytes or type(text) is str):
        try:
            # msgspec keeps integers beyond 64 bits exact; what it refuses, the
            # standard library reads or refuses below.
            return fast.any(_utf8(text))
        except Exception:  # redone below
            pass
    if isinstance(text, (memoryview, bytearray)):
        text = bytes(text)
    if type(text) is not bytes and not isinstance(text, str):
        raise SerializationError(
            f"expected str or bytes, got {type(text).__name__}", where
        )
    if fast is None:
        import orjson  # on first use, as in _dumps

        try:
            if not _may_hold_long_integer(
                text if isinstance(text, bytes) else text.encode("utf-8", "replace")
            ):
                return orjson.loads(text)
        except ValueError:  # redone below
            pass
    try:
        if isinstance(text, bytes):
            text = text.decode("utf-8")
        return json.loads(text)
    except RecursionError as error:
        raise SerializationError(f"not JSON: {_TOO_DEEP}", where) from error
    # json.JSONDecodeError is a ValueError, as are UnicodeError and the
    # refusal of an integer of more than 4,300 digits.
    except ValueError as error:
        raise SerializationError(f"not JSON: {error}", where) from error


def to_json(value: Conversation | Canister | Content | Request) -> str:
    """Serialize a conversation, a canister, a content part or a whole
    :class:`~canisters.Request` to a JSON document."""
    return _paused(_to_json, value)


def _to_json(value: Conversation | Canister | Content | Request) -> str:
    if isinstance(value, Request):
        written: Record = {
            "format": REQUEST_FORMAT,
            "version": FORMAT_VERSION,
            "request": _request_out(value),
        }
        return _encode_json(written, MAX_DEPTH - _SHIFTS[REQUEST_FORMAT])[0].decode()
    floats: list[Any] = []
    document = _document(value, floats.append)
    splicer = _base64.Splicer()
    encoded, standard = _encode_json(
        document, MAX_DEPTH - _SHIFTS[document["format"]], floats, splicer
    )
    # The document goes before the bytes become text: see "Memory" on the
    # reliability page.
    del document, floats
    return encoded.decode() if standard else _spliced(splicer, encoded)


def _spliced(splicer: _base64.Splicer, encoded: bytes) -> str:
    """The text of ``encoded``, the base64 of its media in place."""
    try:
        return splicer.text(encoded)
    except ValueError as error:  # a raw NUL: a fragment in extras
        raise SerializationError(f"value is not JSON: {error}") from None


def _document(
    value: Conversation | Canister | Content, add: _Add | None = None
) -> Record:
    """The document :func:`to_json` writes for ``value``; ``add``: as for
    :func:`_records`."""
    if isinstance(value, Conversation):
        document: Record = {
            "format": CONVERSATION_FORMAT,
            "version": FORMAT_VERSION,
            "canisters": _records(value.canisters, add),
        }
    elif type(value) in _CANISTER_OUT or isinstance(getattr(value, "role", None), Role):
        document = {
            "format": CANISTER_FORMAT,
            "version": FORMAT_VERSION,
            "canister": _records((value,), add)[0],  # type: ignore[arg-type]
        }
    elif type(value) in _CONTENT_OUT or isinstance(getattr(value, "type", None), str):
        content = unstructure_content(value)  # type: ignore[arg-type]
        if add is not None:
            add(content)
        document = {
            "format": CONTENT_FORMAT,
            "version": FORMAT_VERSION,
            "content": content,
        }
    else:
        raise SerializationError(
            f"cannot serialize {type(value).__qualname__}: expected a conversation, "
            "a canister or a content part"
        )
    return document


def from_json(text: str | bytes) -> Conversation | Canister | Content | Request:
    """Read a document written by :func:`to_json` (or by an older version)."""
    read = _read_fast(text, "from_json")
    if read is not None:
        return read  # type: ignore[no-any-return]
    document = _loads(text)
    if not isinstance(document, dict):
        raise SerializationError(
            f"expected a document object, got {type(document).__name__}"
        )
    kind = document.get("format")
    if kind not in (
        CONVERSATION_FORMAT,
        CANISTER_FORMAT,
        CONTENT_FORMAT,
        REQUEST_FORMAT,
    ):
        raise SerializationError(
            f"unknown document format {_excerpt(kind)}", "$.format"
        )
    limit = MAX_DEPTH - _SHIFTS[kind]
    if limit < MAX_DEPTH and _may_nest_deeper(text, limit):
        _check_depth(document, limit, "$")
    if document.get("version") != FORMAT_VERSION:
        document = migrate(document)
    if kind == CONVERSATION_FORMAT:
        return Conversation(_canisters_in(document.get("canisters")))
    if kind == REQUEST_FORMAT:
        if "request" not in document:
            raise SerializationError("missing field 'request'", "$.request")
        return _request_in(document["request"], "$.request")
    key = "canister" if kind == CANISTER_FORMAT else "content"
    if key not in document:
        raise SerializationError(f"missing field {_excerpt(key)}", f"$.{key}")
    try:
        if kind == CANISTER_FORMAT:
            return structure_canister(document[key])
        return structure_content(document[key])
    except SerializationError as error:
        raise error.within(key) from error.__cause__


def to_jsonl(conversation: Iterable[Canister]) -> str:
    """Serialize a conversation as JSONL: a header line, then one canister per line."""
    return _paused(_to_jsonl, conversation)


def _to_jsonl(conversation: Iterable[Canister]) -> str:
    floats: list[Any] = []
    records = _records(conversation, floats.append)
    # NaN and the infinities, which orjson would write as null: every line goes
    # through _encode_json, which writes them as the standard library does.
    exact = not _collected_non_finite(floats)
    del floats
    splicer = _base64.Splicer()
    encoded = _lines(_JSONL_HEADER, records, MAX_DEPTH - _LINE_SHIFT, exact, splicer)
    # _lines emptied the records as it wrote them: only the bytes are left to
    # become text (see "Memory" on the reliability page).
    del records
    return _spliced(splicer, encoded)


_BATCH: Final = 64


def _lines(
    header: bytes,
    records: list[Record],
    limit: int,
    exact: bool,
    splicer: _base64.Splicer | None = None,
) -> bytes:
    """``header`` and the JSON of each record, each on a line of its own.

    ``records`` is emptied as the lines are written: a record holding a large
    media part is released once its line is written, before the lines are
    joined. One orjson call per line (``exact``: no record holds a NaN or an
    infinity); a batch orjson refuses, or every line when not ``exact``, goes
    line by line through :func:`_encode_json`, which writes it as it always
    did (``limit``: the depth a line's record may nest). ``splicer``: as
    :func:`_encode_json` takes it (a line the standard library writes holds
    its media's base64, the others marks).

    orjson holds about 4 KB for each text it returns, however short: thousands
    of lines alive at once cost far more in memory traffic than writing them.
    The lines of a long conversation are joined 64 at a time, so that few are
    alive at once. The empty last item gives the final newline without copying
    the whole text again.
    """
    import orjson  # on first use, as in _encode_json

    dumps = orjson.dumps

    def write(batch: list[Record]) -> list[bytes]:
        if exact:
            try:
                return [dumps(record, default=splicer) for record in batch]
            except TypeError:  # what orjson refuses or cannot write exactly
                pass
        return [_encode_json(record, limit, None, splicer)[0] for record in batch]

    if len(records) <= _BATCH:
        written = write(records)
        records.clear()
        return b"\n".join([header, *written, b""])
    lines = [header]
    for start in range(0, len(records), _BATCH):
        end = start + _BATCH
        batch = records[start:end]
        records[start:end] = [None] * len(batch)  # type: ignore[list-item]
        written = write(batch)
        del batch
        lines.append(b"\n".join(written))
        del written
    records.clear()
    lines.append(b"")
    return b"\n".join(lines)


def from_jsonl(text: str | bytes) -> Conversation:
    """Read JSONL written by :func:`to_jsonl`; blank lines are ignored."""
    read = _read_fast(text, "from_jsonl")
    if read is not None:
        return read  # type: ignore[no-any-return]
    if isinstance(text, bytes):
        try:
            text = text.decode("utf-8")
        except UnicodeDecodeError as error:
            raise SerializationError(f"not UTF-8: {error}") from error
    if not isinstance(text, str):
        raise SerializationError(f"expected str or bytes, got {type(text).__name__}")
    lines = [(n, line) for n, line in enumerate(text.split("\n"), 1) if line.strip()]
    if not lines:
        raise SerializationError("empty JSONL document: no header line", "line 1")
    number, first = lines[0]
    limit = MAX_DEPTH - _LINE_SHIFT
    header = _loads(first, f"line {number}", limit)
    if not isinstance(header, dict) or header.get("format") != CONVERSATION_FORMAT:
        raise SerializationError(
            f'the first line must be the header {{"format": "{CONVERSATION_FORMAT}", '
            '"version": ...}',
            f"line {number}",
        )
    records = []
    for number, line in lines[1:]:
        record = _loads(line, f"line {number}", limit)
        records.append(record)
    document = {**header, "canisters": records}
    if header.get("version") != FORMAT_VERSION:
        try:
            document = migrate(document)
        except SerializationError as error:
            found = _RECORD_PATH.match(error.path)
            if found is None:
                raise SerializationError(
                    error.reason, f"line {lines[0][0]}: {error.path}"
                ) from error
            number = lines[1 + int(found[1])][0]
            raise SerializationError(
                error.reason, f"line {number}: ${found[2]}"
            ) from error
        if not isinstance(document.get("canisters"), list) or len(
            document["canisters"]
        ) != len(records):
            raise SerializationError(
                "the migration did not keep one record per line", f"line {lines[0][0]}"
            )
    canisters = []
    for (number, _line), record in zip(lines[1:], document["canisters"], strict=True):
        try:
            canisters.append(structure_canister(record))
        except SerializationError as error:
            raise SerializationError(
                error.reason, f"line {number}: {error.path}"
            ) from error.__cause__
    return Conversation(tuple(canisters))


# --------------------------------------------------------------------------- #
# Requests

_REQUEST_PARTS: Final[dict[str, type]] = {
    "tool_choice": ToolChoice,
    "output": OutputFormat,
    "generation": Generation,
    "reasoning": ReasoningConfig,
    "cache": CacheConfig,
}
_REQUEST_PLAIN: Final = (
    "model",
    "user",
    "metadata",
    "service_tier",
    "stream",
    "extras",
)


def _fields_out(value: Any) -> Record:
    """The fields of an attrs value that differ from their defaults (none of
    the request's parts has a factory default)."""
    record: Record = {}
    for field in attrs.fields(type(value)):
        item = getattr(value, field.name)
        default = field.default
        if item == default and type(item) is type(default):
            continue
        record[field.name] = list(item) if isinstance(item, tuple) else item
    return record


def _request_out(request: Request) -> Record:
    """The record of a request document."""
    record: Record = {}
    if request.conversation:
        record["canisters"] = _records(request.conversation.canisters)
    for name in ("model", "tools", *_REQUEST_PARTS, *_REQUEST_PLAIN[1:]):
        value = getattr(request, name)
        if name == "tools":
            if value:
                record[name] = [_tool_out(tool) for tool in value]
        elif name in _REQUEST_PARTS:
            if value is not None:
                part = _fields_out(value)
                if part or name != "generation":
                    record[name] = part
        elif value is not None and (value or name != "extras"):
            record[name] = value
    return record


def _tool_out(tool: Tool | ProviderTool) -> Record:
    if isinstance(tool, ProviderTool):
        return {"type": "provider", "provider": tool.provider, "body": tool.body}
    return {"type": "function", **_fields_out(tool)}


def _built(kind: type[T], data: Any, path: str) -> T:
    """``kind(**data)`` for a record of its fields, refusals at ``path``."""
    if not isinstance(data, dict):
        raise SerializationError(f"expected an object, got {type(data).__name__}", path)
    known = {field.name for field in attrs.fields(kind)}  # type: ignore[arg-type]
    for key in data:
        if key not in known:
            raise SerializationError(f"unknown field {_excerpt(key)}", f"{path}.{key}")
    try:
        return kind(**data)
    except ModelError as error:
        where = f"{path}.{error.field}" if error.field else path
        raise SerializationError(str(error), where) from None
    except (TypeError, ValueError) as error:
        raise SerializationError(str(error), path) from None


def _tool_in(data: Any, path: str) -> Tool | ProviderTool:
    if not isinstance(data, dict):
        raise SerializationError(f"expected an object, got {type(data).__name__}", path)
    fields = dict(data)
    kind = fields.pop("type", None)
    if kind == "provider":
        return _built(ProviderTool, fields, path)
    if kind == "function":
        return _built(Tool, fields, path)
    raise SerializationError(f"unknown tool type {_excerpt(kind)}", f"{path}.type")


def _request_in(data: Any, path: str) -> Request:
    """The request of a request document's record."""
    if not isinstance(data, dict):
        raise SerializationError(f"expected an object, got {type(data).__name__}", path)
    fields: dict[str, Any] = {}
    for key, value in data.items():
        where = f"{path}.{key}"
        if key == "canisters":
            try:
                fields["conversation"] = Conversation(_canisters_in(value))
            except SerializationError as error:
                raise error.within("request") from error.__cause__
        elif key == "tools":
            if not isinstance(value, list):
                raise SerializationError("expected an array", where)
            fields[key] = tuple(
                _tool_in(item, f"{where}[{index}]") for index, item in enumerate(value)
            )
        elif key in _REQUEST_PARTS:
            fields[key] = _built(_REQUEST_PARTS[key], value, where)
        elif key in _REQUEST_PLAIN:
            fields[key] = value
        else:
            raise SerializationError(f"unknown field {_excerpt(key)}", where)
    try:
        return Request(**fields)
    except ModelError as error:
        where = f"{path}.{error.field}" if error.field else path
        raise SerializationError(str(error), where) from None
