"""pydantic-ai message histories to canisters and back (extra ``pydantic-ai``).

::

    from canisters.interop import pydantic_ai

    conversation = pydantic_ai.to_canisters(result.all_messages())
    messages = pydantic_ai.from_canisters(conversation)   # == result.all_messages()

The mapping works on pydantic-ai's own JSON form (``ModelMessagesTypeAdapter``):

- a ``ModelRequest``'s ``instructions`` and ``SystemPromptPart`` become
  :class:`~canisters.Supervisor` canisters, a ``UserPromptPart`` a
  :class:`~canisters.User` (text, ``TextContent``, ``BinaryContent``,
  ``ImageUrl``, ``AudioUrl``, ``VideoUrl``, ``DocumentUrl`` and uploaded files as
  content parts), a tool return a :class:`~canisters.Result` (a retried, failed,
  denied or interrupted one, and a ``RetryPromptPart``, with an
  :class:`~canisters.ErrorInfo`);
- a ``ModelResponse`` becomes :class:`~canisters.Assistant` canisters (text,
  files, ``ThinkingPart`` as :class:`~canisters.Reasoning` with its signature and
  provider) and an :class:`~canisters.Invocation` per tool call; its model name,
  usage and finish reason become the first canister's
  :class:`~canisters.Metadata`, its timestamp every canister's timestamp.

Everything pydantic-ai holds beyond the neutral fields rides in
``extras["pydantic-ai"]``, so ``from_canisters(to_canisters(m)) == m`` for the
histories pydantic-ai's agents write and for ``ModelMessagesTypeAdapter`` JSON
(hand-built deprecated parts come back as pydantic-ai itself reads them back:
a ``RetryPromptPart`` as a retried ``ToolReturnPart``). What a conversation holds
that pydantic-ai cannot (canister ids and lineage, documents' titles, hints,
content ids, other providers' extras, ...) is listed in ``report``.
"""

from __future__ import annotations

import functools
import inspect
import json
from collections.abc import Callable, Iterable, Mapping, Sequence
from datetime import datetime
from typing import TYPE_CHECKING, Any, TypeVar

import attrs

from ..canisters import (
    Assistant,
    ErrorCode,
    ErrorInfo,
    Invocation,
    Metadata,
    Result,
    Supervisor,
    Usage,
    User,
)
from ..content import Audio, File, Image, Media, Reasoning, Text, Video
from ..conversation import Conversation, canisters_in
from ..exceptions import MalformedPayload, SerializationError, _excerpt
from ..protocols import Canister, Content, Role
from ..provided import Compaction, ProviderToolCall, ProviderToolResult
from ..providers.kit import (
    Report,
    b64decode_exact,
    b64encode,
    guarded,
    media_mime,
    mine,
)
from ._common import refused, report_losses, require
from ._pydantic_parts import (
    NAME,
    PROVIDED_KINDS,
    read_provided,
    write_provided,
)
from ._pydantic_parts import (
    extras_of as _extras,
)
from ._pydantic_parts import (
    rest_of as _rest,
)

if TYPE_CHECKING:
    from pydantic_ai.messages import ModelMessage

__all__ = ["NAME", "from_canisters", "from_json", "to_canisters", "to_json"]

_USAGE = {
    "input_tokens": "input_tokens",
    "output_tokens": "output_tokens",
    "cache_read_tokens": "cached_tokens",
    "cache_write_tokens": "cache_write_tokens",
    "output_reasoning_tokens": "reasoning_tokens",
}
_URL_KINDS: Mapping[str, type[Media]] = {
    "image-url": Image,
    "audio-url": Audio,
    "video-url": Video,
    "document-url": File,
}
_KIND_OF_URL = {Image: "image-url", Audio: "audio-url", Video: "video-url"}
_ERROR_OUTCOMES = {
    "retried": (ErrorCode.VALIDATION_ERROR.value, True),
    "failed": (ErrorCode.TOOL_ERROR.value, False),
    "denied": ("DENIED", False),
    "interrupted": (ErrorCode.INTERRUPTED.value, False),
}
_FINISH_REASONS = frozenset(("stop", "length", "content_filter", "tool_call", "error"))
_FINISH_IN = {"tool_call": "tool_calls"}
_FINISH_OUT = {"tool_calls": "tool_call"}
# The providers pydantic-ai's UploadedFile accepts.
_UPLOAD_PROVIDERS = frozenset(
    [
        "anthropic",
        "openai",
        "google",
        "google-cloud",
        "google-gla",
        "google-vertex",
        "bedrock",
        "xai",
    ]
)
_OUTCOME_OF_CODE = {code: outcome for outcome, (code, _) in _ERROR_OUTCOMES.items()}


def _adapter() -> Any:
    messages = require("pydantic_ai.messages", "pydantic-ai")
    return messages.ModelMessagesTypeAdapter


@functools.cache
def _has_retried_outcome() -> bool:
    """Whether the installed pydantic-ai has a tool return ``outcome`` of
    ``"retried"`` (newer releases); older ones send retry feedback as a
    ``RetryPromptPart``."""
    messages = require("pydantic_ai.messages", "pydantic-ai")
    for cls in messages.ToolReturnPart.__mro__:
        outcome = inspect.get_annotations(cls).get("outcome")
        if outcome is not None:
            return "retried" in str(outcome)
    return False


def _message_types() -> tuple[type, ...]:
    messages = require("pydantic_ai.messages", "pydantic-ai")
    return (messages.ModelRequest, messages.ModelResponse)


def _time(value: object, path: str) -> datetime:
    if isinstance(value, datetime):
        return value
    if isinstance(value, str):
        try:
            return datetime.fromisoformat(value.replace("Z", "+00:00"))
        except ValueError:
            pass
    raise MalformedPayload(f"expected a timestamp, got {_excerpt(value)}", path)


# pydantic-ai -> canisters ------------------------------------------------------------


def to_canisters(messages: Sequence[ModelMessage]) -> Conversation:
    """Convert a pydantic-ai message history into a :class:`~canisters.Conversation`.

    ``messages`` are ``ModelRequest`` / ``ModelResponse`` objects (as
    ``result.all_messages()`` gives them). Raises
    :class:`~canisters.exceptions.MissingExtra` when pydantic-ai is not installed and
    :class:`~canisters.MalformedPayload` for anything that is not a history.
    """
    adapter = _adapter()
    items = list(messages)
    for index, message in enumerate(items):
        if not isinstance(message, _message_types()):
            raise MalformedPayload(
                "expected a ModelRequest or ModelResponse, got "
                f"{type(message).__name__}",
                f"$[{index}]",
            )
    try:
        dumped = adapter.dump_python(items, mode="json")
    except Exception as error:  # pydantic's errors are not ours to leak
        raise refused("a pydantic-ai message history", error) from None
    return Conversation(_read_messages(dumped))


def from_json(data: str | bytes) -> Conversation:
    """Read pydantic-ai's JSON form of a history (``ModelMessagesTypeAdapter``)."""
    adapter = _adapter()
    try:
        messages = adapter.validate_json(data)
    except Exception as error:
        raise refused("a pydantic-ai message history", error) from None
    return to_canisters(messages)


@guarded
def _read_messages(messages: Sequence[Mapping[str, Any]]) -> list[Canister]:
    out: list[Canister] = []
    for index, message in enumerate(messages):
        path = f"$[{index}]"
        start = len(out)
        kind = message.get("kind")
        if kind == "request":
            _read_request(message, path, out)
        elif kind == "response":
            _read_response(message, path, out)
        else:
            raise MalformedPayload(
                f"unknown message kind {_excerpt(kind)}", f"{path}.kind"
            )
        if len(out) == start:
            # A message without parts still marks its place.
            if kind == "request":
                out.append(User())
            else:
                out.append(Assistant(timestamp=_time(message["timestamp"], path)))
        first = out[start]
        envelope = _rest(message, ("parts", "usage", "model_name", "finish_reason"))
        if kind == "response":
            envelope.pop("timestamp", None)
        if kind == "request" and message.get("instructions") is not None:
            envelope.pop("instructions", None)
        own = dict(mine(first, NAME))
        own["message"] = envelope
        out[start] = _evolve(first, extras={**first.extras, NAME: own})
    return out


def _evolve(canister: Canister, **changes: Any) -> Canister:
    return attrs.evolve(canister, **changes)  # type: ignore[misc]


def _read_request(message: Mapping[str, Any], path: str, out: list[Canister]) -> None:
    instructions = message.get("instructions")
    if instructions is not None:
        stamp = message.get("timestamp")
        out.append(
            Supervisor(
                (Text(instructions),),
                extras={NAME: {"instructions": True}},
                **({"timestamp": _time(stamp, path)} if stamp else {}),  # type: ignore[arg-type]
            )
        )
    for index, part in enumerate(message["parts"]):
        where = f"{path}.parts[{index}]"
        kind = part.get("part_kind")
        stamp = part.get("timestamp")
        envelope: dict[str, Any] = (
            {"timestamp": _time(stamp, f"{where}.timestamp")} if stamp else {}
        )
        if kind == "system-prompt":
            rest = _rest(part, ("content", "timestamp", "part_kind"))
            out.append(Supervisor(part["content"], extras=_extras(rest), **envelope))
        elif kind == "user-prompt":
            content, shape = _read_user_content(part["content"], f"{where}.content")
            rest = _rest(part, ("content", "timestamp", "part_kind"))
            if shape:
                rest["shape"] = shape
            out.append(User(content, extras=_extras(rest), **envelope))
        elif (
            part.get("tool_name") is not None
            and "content" in part
            and part.get("tool_call_id")
        ):
            out.append(_pair(_read_return(part, where, envelope), out))
        else:
            # A part without neutral meaning (retry feedback without a tool,
            # instruction deltas, speech, ...): kept whole, its text (the
            # feedback the model reads) as the user's.
            said = part.get("content")
            if said is not None and not isinstance(said, str):
                said = json.dumps(said, ensure_ascii=False, default=str)
            content = (Text(said),) if said else ()
            out.append(User(content, extras={NAME: {"part": dict(part)}}, **envelope))


_GENERATED = "pyd_ai_"  # how pydantic-ai's generated tool call ids start


def _pair(result: Result, out: Sequence[Canister]) -> Result:
    """``result`` answering its call: a tool return built without a
    ``tool_call_id`` has one pydantic-ai generated, which no call has; it
    answers the oldest unanswered call of its tool (its own id is kept)."""
    call_id = result.invocation_id
    for canister in reversed(out):
        if canister.role is Role.Invocation and canister.invocation_id == call_id:  # type: ignore[attr-defined]
            return result
    if not call_id.startswith(_GENERATED):
        return result
    answered = {c.invocation_id for c in out if c.role is Role.Result}  # type: ignore[attr-defined]
    for canister in out:
        if (
            canister.role is Role.Invocation
            and canister.name == result.name  # type: ignore[attr-defined]
            and canister.invocation_id not in answered  # type: ignore[attr-defined]
        ):
            own = {**mine(result, NAME), "tool_call_id": call_id}
            return attrs.evolve(
                result,
                invocation_id=canister.invocation_id,  # type: ignore[attr-defined]
                extras={**result.extras, NAME: own},
            )
    return result


def _read_return(
    part: Mapping[str, Any], where: str, envelope: dict[str, Any]
) -> Result:
    value = part["content"]
    if part.get("part_kind") == "retry-prompt":  # pydantic-ai's deprecated form
        outcome = "retried"
    else:
        outcome = part.get("outcome", "success")
    content, shape = _read_value(value, f"{where}.content")
    rest = _rest(part, ("tool_name", "content", "tool_call_id", "timestamp"))
    if rest.get("part_kind") == "tool-return":
        del rest["part_kind"]
    if shape:
        rest["shape"] = shape
    error = None
    if isinstance(outcome, str) and outcome in _ERROR_OUTCOMES:
        code, retryable = _ERROR_OUTCOMES[outcome]
        message = value if isinstance(value, str) else json.dumps(value)
        error = ErrorInfo(code, message, retryable)
    return Result(
        part["tool_call_id"],
        part["tool_name"],
        content,
        error,
        extras=_extras(rest),
        **envelope,
    )


def _read_value(value: Any, path: str) -> tuple[tuple[Content, ...], str | None]:
    """A tool return value: text, media, a list of both, or any JSON value."""
    if isinstance(value, str):
        return (Text(value),), None
    if _is_item(value):
        return (_read_item(value, path),), "item"
    if isinstance(value, list) and value and any(_is_item(v) for v in value):
        return _read_user_content(value, path)[0], "items"
    return (Text(json.dumps(value, ensure_ascii=False), "application/json"),), "json"


def _is_item(value: object) -> bool:
    return isinstance(value, Mapping) and isinstance(value.get("kind"), str)


def _read_user_content(value: Any, path: str) -> tuple[tuple[Content, ...], str | None]:
    if isinstance(value, str):
        return (Text(value),), None
    if not isinstance(value, list):
        raise MalformedPayload("expected a string or a list", path)
    parts: list[Content] = []
    for index, item in enumerate(value):
        if isinstance(item, str):
            parts.append(Text(item))
        else:
            parts.append(_read_item(item, f"{path}[{index}]"))
    return tuple(parts), "list"


def _read_item(item: Mapping[str, Any], path: str) -> Content:
    kind: Any = item.get("kind")
    if kind in ("text-content", "structured-content"):
        rest = _rest(item, ("content", "kind" if kind == "text-content" else ""))
        return Text(item["content"], extras=_extras(rest))
    if isinstance(kind, str) and kind in _URL_KINDS:
        rest = _rest(item, ("url", "kind", "media_type"))
        if kind == "document-url":
            rest["kind"] = kind
        return _URL_KINDS[kind](
            url=item["url"], mime_type=item.get("media_type"), extras=_extras(rest)
        )
    if kind == "binary":
        data = b64decode_exact(item["data"], f"{path}.data")[0]
        mime = item.get("media_type") or "application/octet-stream"
        cls = _class_of_mime(mime)
        rest = _rest(item, ("data", "kind", "media_type"))
        return cls(data=data, mime_type=mime, extras=_extras(rest))
    if kind == "uploaded-file":
        mime = item.get("media_type")
        rest = _rest(item, ("file_id", "provider_name", "kind", "media_type"))
        return _class_of_mime(mime or "")(
            refs={item["provider_name"]: item["file_id"]},
            mime_type=mime,
            extras=_extras({**rest, "kind": kind}),
        )
    # Cache points and anything newer: an empty text standing for the item.
    return Text("", extras={NAME: {"item": dict(item)}})


def _class_of_mime(mime: str) -> type[Media]:
    head = mime.split("/", 1)[0]
    return {"image": Image, "audio": Audio, "video": Video}.get(head, File)


def _read_response(message: Mapping[str, Any], path: str, out: list[Canister]) -> None:
    stamp = _time(message["timestamp"], f"{path}.timestamp")
    start = len(out)
    pending: list[Content] = []

    def flush() -> None:
        if pending:
            out.append(Assistant(tuple(pending), timestamp=stamp))
            pending.clear()

    for index, part in enumerate(message["parts"]):
        where = f"{path}.parts[{index}]"
        kind = part.get("part_kind")
        if kind == "text":
            rest = _rest(part, ("content", "id", "part_kind"))
            pending.append(
                Text(part["content"], id=part.get("id"), extras=_extras(rest))
            )
        elif kind == "thinking":
            pending.append(_read_thinking(part))
        elif kind == "file":
            item = part["content"]
            media = _read_item(item, f"{where}.content")
            rest = _rest(part, ("content", "part_kind"))
            if rest:
                media = _evolve_part(media, {**mine(media, NAME), "part": rest})
            pending.append(media)
        elif kind in PROVIDED_KINDS:
            pending.append(read_provided(part))
        elif "tool_name" in part and "args" in part:
            flush()
            out.append(_read_call(part, stamp))
        else:
            pending.append(Text("", extras={NAME: {"part": dict(part)}}))
    flush()
    if len(out) == start:
        out.append(Assistant(timestamp=stamp))
    usage = message.get("usage") or {}
    counts = {ours: usage.get(theirs, 0) or 0 for theirs, ours in _USAGE.items()}
    usage_rest = _rest(usage, _USAGE)
    finish: Any = message.get("finish_reason")
    metadata = Metadata(
        model=message.get("model_name"),
        usage=Usage(**counts) if any(counts.values()) else None,
        finish_reason=_FINISH_IN.get(finish, finish),
    )
    first = out[start]
    extras = dict(first.extras)
    if usage_rest:
        extras[NAME] = {**mine(first, NAME), "usage": usage_rest}
    if metadata != Metadata() or extras != first.extras:
        out[start] = _evolve(
            first, metadata=metadata if metadata != Metadata() else None, extras=extras
        )


def _evolve_part(part: Content, own: Mapping[str, Any]) -> Content:
    return attrs.evolve(part, extras={**part.extras, NAME: dict(own)})  # type: ignore[misc]


def _read_thinking(part: Mapping[str, Any]) -> Reasoning:
    signature = part.get("signature")
    provider = part.get("provider_name")
    rest = _rest(part, ("content", "id", "signature", "provider_name", "part_kind"))
    if signature is not None and provider is None:
        provider = NAME
        rest["provider_name"] = None
    return Reasoning(
        part["content"],
        signature=signature,
        provider=provider,
        id=part.get("id"),
        extras=_extras(rest),
    )


def _read_call(part: Mapping[str, Any], stamp: datetime) -> Invocation:
    args = part.get("args")
    rest = _rest(part, ("tool_name", "args", "tool_call_id"))
    if rest.get("part_kind") == "tool-call":
        del rest["part_kind"]
    if isinstance(args, Mapping):
        arguments: Mapping[str, Any] = args
    else:
        arguments = {}
        if isinstance(args, str) and args.strip():
            try:
                decoded = json.loads(args)
            except ValueError:
                decoded = None
            if isinstance(decoded, dict):
                arguments = decoded
        rest["args"] = args  # the string as the model sent it, or null
    return Invocation(
        part["tool_name"],
        arguments,
        invocation_id=part["tool_call_id"],
        timestamp=stamp,
        extras=_extras(rest),
    )


# canisters -> pydantic-ai ------------------------------------------------------------


def from_canisters(
    conversation: Iterable[Canister], *, report: Report | None = None
) -> list[ModelMessage]:
    """Convert a conversation into a pydantic-ai message history.

    Consecutive request-side canisters (supervisor, user, document, result) form
    one ``ModelRequest``, assistant canisters and invocations one
    ``ModelResponse`` (canisters read from pydantic-ai keep their own message
    boundaries). What pydantic-ai cannot hold is recorded in ``report``.
    """
    canisters = canisters_in(conversation, "from_canisters")
    adapter = _adapter()
    dumped = _write_messages(canisters)
    try:
        messages: list[ModelMessage] = adapter.validate_python(dumped)
    except Exception as error:
        raise refused("a history pydantic-ai accepts", error) from None
    if report is not None:
        dumped_back = _written(lambda: adapter.dump_python(messages, mode="json"))
        back = _read_messages(dumped_back)
        report_losses(canisters, back, NAME, report)
    return messages


def to_json(conversation: Iterable[Canister], *, report: Report | None = None) -> bytes:
    """Write a conversation as pydantic-ai's JSON form of a history."""
    messages = from_canisters(conversation, report=report)
    return bytes(_written(lambda: _adapter().dump_json(messages)))


T = TypeVar("T")


def _written(write: Callable[[], T]) -> T:
    """``write()``, pydantic-ai writing a history; what it cannot write raises
    :class:`~canisters.SerializationError` saying why (some versions cannot
    write an image URL whose media type they do not infer from the URL: give
    the part a ``mime_type``)."""
    try:
        return write()
    except Exception as error:  # pydantic-ai's errors are not ours to leak
        raise SerializationError(
            f"pydantic-ai cannot write this history: {_excerpt(str(error))}"
        ) from None


_REQUEST_SIDE = {Role.Supervisor, Role.User, Role.Document, Role.Result}


def _write_messages(canisters: Sequence[Canister]) -> list[dict[str, Any]]:
    messages: list[dict[str, Any]] = []
    for canister in canisters:
        own = mine(canister, NAME)
        request_side = canister.role in _REQUEST_SIDE
        kind = "request" if request_side else "response"
        current = messages[-1] if messages else None
        new = (
            "message" in own
            or current is None
            or current["kind"] != kind
            or (not own and canister.role is Role.Assistant and bool(current["parts"]))
        )
        if new:
            current = {"kind": kind, "parts": [], **own.get("message", {})}
            if kind == "response":
                current["timestamp"] = canister.timestamp.isoformat()
                _write_response_envelope(canister, current)
            messages.append(current)
        assert current is not None
        if request_side:
            _write_request_part(canister, own, current)
        else:
            _write_response_part(canister, own, current)
    return messages


def _write_response_envelope(canister: Canister, message: dict[str, Any]) -> None:
    metadata = canister.metadata
    usage: dict[str, Any] = dict(mine(canister, NAME).get("usage", {}))
    if metadata is not None:
        if metadata.model is not None:
            message["model_name"] = metadata.model
        finish = _FINISH_OUT.get(metadata.finish_reason or "", metadata.finish_reason)
        if finish in _FINISH_REASONS:
            message["finish_reason"] = finish
        if metadata.usage is not None:
            for theirs, ours in _USAGE.items():
                # Zero is every count's default: left out, the usage equals one
                # that never set it on every pydantic-ai release (some compare
                # the attributes set, and older ones lack some counts).
                if value := getattr(metadata.usage, ours):
                    usage[theirs] = value
    if usage:
        message["usage"] = usage


def _write_request_part(
    canister: Canister, own: Mapping[str, Any], message: dict[str, Any]
) -> None:
    stamp = canister.timestamp.isoformat()
    role = canister.role
    if "part" in own:
        message["parts"].append(dict(own["part"]))
        return
    rest = {k: v for k, v in own.items() if k not in ("message", "shape", "usage")}
    if role is Role.Supervisor and own.get("instructions"):
        message["instructions"] = _plain_text(canister.content)  # type: ignore[attr-defined]
        if "timestamp" not in message:
            message["timestamp"] = stamp
        return
    if role is Role.Supervisor:
        text = _plain_text(canister.content)  # type: ignore[attr-defined]
        part = {
            **rest,
            "content": text,
            "timestamp": stamp,
            "part_kind": "system-prompt",
        }
    elif role is Role.Result:
        part = _write_return(canister, rest, own.get("shape"))
    else:
        content = _write_user_content(canister.content, own.get("shape"))  # type: ignore[attr-defined]
        part = {
            **rest,
            "content": content,
            "timestamp": stamp,
            "part_kind": "user-prompt",
        }
    message["parts"].append(part)


def _plain_text(parts: Sequence[Content]) -> str:
    return "".join(part.text for part in parts if part.type == "text")  # type: ignore[attr-defined]


def _write_return(
    canister: Any, rest: Mapping[str, Any], shape: str | None
) -> dict[str, Any]:
    part: dict[str, Any] = {"part_kind": "tool-return", **rest}
    part["tool_name"] = canister.name
    # (a return that had an id of its own, generated, answers its call by name)
    part["tool_call_id"] = rest.get("tool_call_id", canister.invocation_id)
    part["timestamp"] = canister.timestamp.isoformat()
    content = canister.content
    error = canister.error
    if shape == "json" and len(content) == 1 and content[0].type == "text":
        value: Any = json.loads(content[0].text)
    elif shape == "item" and len(content) == 1:
        value = _write_item(content[0])
    elif (
        shape == "items" or len(content) > 1 or (content and content[0].type != "text")
    ):
        value = _write_user_content(content, "list")
    elif content:
        value = content[0].text
    else:
        value = error.message if error is not None else ""
    part["content"] = value
    if error is not None and "outcome" not in rest:
        part["outcome"] = _OUTCOME_OF_CODE.get(error.code, "failed")
    if part.get("outcome") == "retried" and not _has_retried_outcome():
        # Older pydantic-ai: retry feedback is a RetryPromptPart, whose content
        # is text (other values go as their JSON text).
        del part["outcome"]
        part["part_kind"] = "retry-prompt"
        if not isinstance(value, str):
            part["content"] = json.dumps(value, ensure_ascii=False)
    return part


def _write_user_content(parts: Sequence[Content], shape: str | None) -> Any:
    if (
        shape is None
        and len(parts) == 1
        and type(parts[0]) is Text
        and not parts[0].extras
    ):
        return parts[0].text
    items: list[Any] = []
    for part in parts:
        item = _write_item(part)
        if item is not None:
            items.append(item)
    return items


def _write_item(part: Content) -> Any:
    own = mine(part, NAME)
    if "item" in own:
        return dict(own["item"])
    if part.type in ("text", "cited_text"):  # citations: reported as lost
        if own:
            return {"kind": "text-content", **own, "content": part.text}  # type: ignore[attr-defined]
        return part.text  # type: ignore[attr-defined]
    if part.type == "reasoning":
        return part.text or None  # type: ignore[attr-defined]
    if not isinstance(part, Media):
        return None  # what a provider added has no place in a prompt: reported
    media: Any = part
    rest = {k: v for k, v in own.items() if k != "part"}
    if media.data is not None:
        item = {
            **rest,
            "kind": "binary",
            "data": b64encode(media.data),
            "media_type": media_mime(media, media.data),
        }
        return item
    if media.url is not None:
        kind = rest.pop("kind", None) or _KIND_OF_URL.get(type(media), "document-url")
        item = {**rest, "kind": kind, "url": media.url}
        if media.mime_type is not None:
            item["media_type"] = media.mime_type
        return item
    known = [(p, ref) for p, ref in media.refs.items() if p in _UPLOAD_PROVIDERS]
    if known:
        provider, file_id = known[0]
        item = {**rest, "kind": "uploaded-file", "file_id": file_id}
        item["provider_name"] = provider
        if media.mime_type is not None:
            item["media_type"] = media.mime_type
        return item
    return None  # a content id: nothing pydantic-ai can refer to


def _write_response_part(
    canister: Canister, own: Mapping[str, Any], message: dict[str, Any]
) -> None:
    if canister.role is Role.Invocation:
        invocation: Any = canister
        rest = {k: v for k, v in own.items() if k not in ("message", "usage")}
        part = {"part_kind": "tool-call", **rest}
        part["tool_name"] = invocation.name
        part["tool_call_id"] = invocation.invocation_id
        if "args" not in rest:
            part["args"] = dict(invocation.arguments)
        message["parts"].append(part)
        return
    for content in canister.content:  # type: ignore[attr-defined]
        if isinstance(content, (ProviderToolCall, ProviderToolResult, Compaction)):
            message["parts"].append(write_provided(content, canister))
        else:
            message["parts"].extend(_write_response_content(content))


def _write_response_content(part: Content) -> list[dict[str, Any]]:
    own = mine(part, NAME)
    if "part" in own and part.type == "text":
        return [dict(own["part"])]
    if part.type in ("text", "cited_text"):  # citations: reported as lost
        text: Any = part
        item = {**own, "content": text.text, "part_kind": "text"}
        if text.id is not None:
            item["id"] = text.id
        return [item]
    if part.type == "reasoning":
        thinking: Any = part
        item = {**own, "content": thinking.text, "part_kind": "thinking"}
        if thinking.id is not None:
            item["id"] = thinking.id
        if thinking.signature is not None:
            item["signature"] = thinking.signature
        if "provider_name" not in own and thinking.provider is not None:
            item["provider_name"] = thinking.provider
        return [item]
    media = _write_item(part)
    if media is None or media.get("kind") != "binary":
        return []  # pydantic-ai's responses carry files as bytes only
    return [{**own.get("part", {}), "content": media, "part_kind": "file"}]
