"""OpenAI Chat Completions (``openai-chat``): ``messages`` in requests, ``choices``
in responses.

Provider-only fields ride in ``extras["openai-chat"]`` of the canister or part
they belong to:

- on the first canister of a message: ``role`` (``"developer"``), ``content``
  (the wire form when it is not the default: ``"string"``, ``"list"``,
  ``"null"``, ``"absent"``), ``message`` (other message keys: ``name``,
  ``audio``, ``refusal: null``...), ``split`` (a message of its own);
- on parts: ``outer`` / ``inner`` (other keys of the part and of its payload,
  such as ``detail``), ``refusal`` (``"field"`` for ``message.refusal``,
  ``"part"`` for a refusal content part), ``raw`` (non-canonical base64);
- on invocations: ``arguments`` (the arguments string when it is not the
  compact JSON canisters writes), ``blank`` (the arguments string was ``""``,
  as some servers send for a call without arguments), ``call`` / ``function``
  (other keys), ``legacy
  (the deprecated ``function_call`` / ``role: "function"`` forms);
- on results: ``in_place`` (the tool message held media parts, sent back in
  place rather than in a follow-up user message);
- on the first assistant of a response choice: ``choice`` (``index``,
  ``finish_reason``, ``logprobs``, Azure filter results...) and, on the first
  one only, ``response`` (``id``, ``object``, ``created``, ``usage``...).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import datetime, timezone
from typing import Any

from .._frozen import EMPTY, FrozenDict
from ..canisters import (
    Assistant,
    Metadata,
    Result,
    Usage,
    now,
)
from ..content import _URL_SCHEME, File, Image, Text
from ..conversation import Conversation
from ..exceptions import CanistersError, MalformedPayload, _excerpt
from ..protocols import Canister, Content, Role
from ..serialization import _paused
from . import _common as common
from . import _errors, openai_chat_request, streams
from ._common import (
    ASSISTANT,
    INVOCATION,
    RESULT,
    SUPERVISOR,
    USER,
    Labeler,
    Options,
    compact_arguments,
    expect_list,
    expect_mapping,
    expect_str,
    mine,
    new_assistant,
    new_audio,
    new_conversation,
    new_file,
    new_image,
    new_invocation,
    new_result,
    new_supervisor,
    new_text,
    new_user,
    plain_text,
)
from ._requests import WholeRequests

__all__ = ["NAME", "NORMALIZER", "OpenAIChat", "OpenAIChatAccumulator"]

NAME = "openai-chat"
"""The provider name."""

_REF = common.ref_key(NAME)
_WIRE_ROLE = {
    Role.Supervisor: "system",
    Role.User: "user",
    Role.Document: "user",
    Role.Assistant: "assistant",
    Role.Invocation: "assistant",
    Role.Result: "tool",
}
_MESSAGE_KEYS = {
    "system": frozenset({"role", "content"}),
    "developer": frozenset({"role", "content"}),
    "user": frozenset({"role", "content"}),
    "assistant": frozenset({"role", "content", "tool_calls", "function_call"}),
    "tool": frozenset({"role", "content", "tool_call_id"}),
    "function": frozenset({"role", "content", "name"}),
}
_FINISH = {"function_call": "tool_calls"}
_FINISH_BACK = {
    "stop": "stop",
    "length": "length",
    "tool_calls": "tool_calls",
    "content_filter": "content_filter",
}
_AUDIO_FORMATS = {
    "audio/wav": "wav",
    "audio/x-wav": "wav",
    "audio/wave": "wav",
    "audio/mpeg": "mp3",
    "audio/mp3": "mp3",
}


_extras = common.marker(NAME)


# Parsing -----------------------------------------------------------------------------

# The general way checks every value it reads (and names the path of a bad one),
# so it builds parts and canisters through the trusted constructors too: attrs'
# converters and checks would only repeat those checks.


def _parse_part(raw: object, path: str) -> Content:
    part = expect_mapping(raw, path)
    kind = part.get("type")
    if kind == "text":
        text = part.get("text")
        if type(text) is not str:
            text = expect_str(text, f"{path}.text")
        outer = common.rest(part, _TEXT_KEYS)
        return new_text(
            text, "text/plain", None, _extras(outer=outer) if outer else EMPTY
        )
    if kind == "refusal":
        text = expect_str(part.get("refusal"), f"{path}.refusal")
        extras = _extras(refusal="part", outer=common.rest(part, _REFUSAL_KEYS))
        return new_text(text, "text/plain", None, extras)
    if kind == "image_url":
        inner = expect_mapping(part.get("image_url"), f"{path}.image_url")
        url = common.expect_url(inner.get("url"), f"{path}.image_url.url")
        extras = _extras(
            outer=common.rest(part, _IMAGE_KEYS), inner=common.rest(inner, _URL_KEYS)
        )
        decoded = common.parse_data_url(url)
        if decoded is not None:
            return new_image(
                decoded[1], None, None, EMPTY, decoded[0], None, None, extras
            )
        return new_image(None, url, None, EMPTY, None, None, None, extras)
    if kind == "input_audio":
        # The paths are made only for an error: this part is most often well formed.
        audio: Any = part.get("input_audio")
        if type(audio) is not dict:
            audio = expect_mapping(audio, f"{path}.input_audio")
        encoded, fmt = audio.get("data"), audio.get("format")
        if type(encoded) is not str:
            encoded = expect_str(encoded, f"{path}.input_audio.data")
        if type(fmt) is not str:
            fmt = expect_str(fmt, f"{path}.input_audio.format")
        data, exact = common.b64decode_exact(encoded, f"{path}.input_audio.data")
        mime = "audio/mpeg" if fmt == "mp3" else f"audio/{fmt}"
        extras = _extras(
            outer=common.rest(part, _AUDIO_KEYS),
            inner=common.rest(audio, _AUDIO_INNER_KEYS),
            raw=None if exact else encoded,
        )
        return new_audio(data, None, None, EMPTY, mime, None, None, extras)
    if kind == "file":
        return _parse_file(part, path)
    if isinstance(kind, str):
        return common.opaque_part(NAME, part)  # a type not known here, kept whole
    raise MalformedPayload(
        f"unknown content part type {_excerpt(kind)}", f"{path}.type"
    )


def _parse_file(part: Mapping[str, Any], path: str) -> File:
    # The paths are made only for an error: this part is most often well formed.
    inner = part.get("file")
    if type(inner) is not dict:
        inner = expect_mapping(inner, f"{path}.file")
    filename = inner.get("filename")
    if filename is not None and type(filename) is not str:
        filename = expect_str(filename, f"{path}.file.filename")
    outer = common.rest(part, _FILE_KEYS)
    inner_rest = common.rest(inner, _FILE_INNER_KEYS)
    refs: FrozenDict[str, str] = EMPTY
    if inner.get("file_id") is not None:
        refs = FrozenDict({_REF: expect_str(inner["file_id"], f"{path}.file.file_id")})
    file_data = inner.get("file_data")
    data = url = mime = raw = None
    if file_data is None:
        if not refs:
            raise MalformedPayload("a file part needs file_data or file_id", path)
    else:
        if type(file_data) is not str:
            file_data = expect_str(file_data, f"{path}.file.file_data")
        decoded = common.parse_data_url(file_data)
        if decoded is not None:
            mime, data = decoded
        elif file_data.startswith("data:"):
            url = file_data
        else:
            # Raw base64 without a data: prefix is what some clients send.
            data = common.b64decode_exact(file_data, f"{path}.file.file_data")[0]
            raw = file_data
    extras = (
        _extras(outer=outer, inner=inner_rest, raw=raw)
        if outer or inner_rest or raw
        else EMPTY
    )
    built: File = new_file(data, url, None, refs, mime, None, None, extras, filename)
    return built


_TEXT_KEYS = frozenset({"type", "text"})
_REFUSAL_KEYS = frozenset({"type", "refusal"})
_IMAGE_KEYS = frozenset({"type", "image_url"})
_URL_KEYS = frozenset({"url"})
_AUDIO_KEYS = frozenset({"type", "input_audio"})
_AUDIO_INNER_KEYS = frozenset({"data", "format"})
_FILE_KEYS = frozenset({"type", "file"})
_FILE_INNER_KEYS = frozenset({"file_data", "file_id", "filename"})


def _parse_content(message: Mapping[str, Any], path: str) -> tuple[list[Content], str]:
    """Return the parts and the wire form: string, list, null or absent."""
    if "content" not in message:
        return [], "absent"
    value = message["content"]
    if value is None:
        return [], "null"
    if isinstance(value, str):
        return [plain_text(value)], "string"
    items = expect_list(value, f"{path}.content")
    return [
        _parse_part(item, f"{path}.content[{index}]")
        for index, item in enumerate(items)
    ], "list"


def _default_form(parts: list[Content] | tuple[Content, ...], role: str) -> str:
    if not parts:
        return "null" if role == "assistant" else "list"
    if len(parts) == 1 and parts[0].type == "text" and not mine(parts[0], NAME):
        return "string"
    return "list"


def _form(parts: list[Content], form: str, role: str) -> str | None:
    return None if form == _default_form(parts, role) else form


@common.guarded_keeping("messages")
def parse_request(body: object, kept: list[Any]) -> Conversation:
    """Read the ``messages`` of a Chat Completions request body (or SDK params)."""
    return _parse_request(body, kept)


def _parse_request(
    body: object, kept: list[Any] | None = None, *, fast: bool = True
) -> Conversation:
    """:func:`parse_request`, unguarded; ``fast=False`` reads every message the
    general way (what the fast way must give, exactly). What it keeps unread
    goes to ``kept`` (see :func:`~canisters.providers._common.guarded_keeping`):
    a message read the general way, whole; from a message read the fast way,
    its other keys and a part read the general way."""
    mapping = body if type(body) is dict else common.as_mapping(body)
    messages = mapping.get("messages")
    if type(messages) is not list:
        messages = expect_list(messages, "$.messages")
    canisters = _parse_messages(messages, [] if kept is None else kept, fast=fast)
    return new_conversation(tuple(canisters))


def _parse_messages(
    messages: Any, kept: list[Any], *, fast: bool = True
) -> list[Canister]:
    """The canisters of ``messages``, user turns between calls and their results
    marked (see :func:`common.mark_interposed`); ``fast=False`` reads every
    message the general way (what the fast way must give, exactly). What it
    keeps unread goes to ``kept`` (see :func:`_parse_request`)."""
    canisters: list[Canister] = []
    names: dict[str, str] = {}
    legacy: dict[str, list[str]] = {}
    append = canisters.append
    # The canisters of one body share the moment it was read.
    moment = now()
    for index, raw in enumerate(messages):
        # The common shapes are built here; anything else, the general way below.
        if fast and type(raw) is dict:
            built = _parse_plain(raw, moment, canisters, names, index, kept)
            if built is not None:
                if type(built) is list:
                    canisters += built
                else:
                    append(built)  # type: ignore[arg-type]
                continue
        path = f"$.messages[{index}]"
        kept.append(raw)
        message = expect_mapping(raw, path)
        if "role" not in message:
            raise MalformedPayload("missing role", path)
        role = message["role"]
        if not isinstance(role, str):
            raise MalformedPayload(f"unknown role {_excerpt(role)}", f"{path}.role")
        known = _MESSAGE_KEYS.get(role)
        if known is None:
            # A message of a role not known here, kept whole as a canister that
            # goes back to this provider only.
            marks: dict[str, Any] = {"raw": dict(message)}
            common.bind(marks, [role])
            append(new_assistant(moment, FrozenDict({NAME: marks}), ()))
            continue
        extra = common.rest(message, known)
        if role == "assistant":
            canisters += _parse_assistant(
                message, path, extra, canisters, names, legacy, index, moment
            )
            continue
        parts, form = _parse_content(message, path)
        bound: dict[str, Any] = {}
        common.bind_parts(bound, parts)
        if role in ("system", "developer"):
            extras = _extras(
                role="developer" if role == "developer" else None,
                content=_form(parts, form, "system"),
                message=extra,
                **bound,
            )
            append(new_supervisor(moment, extras, tuple(parts)))
        elif role == "user":
            extras = _extras(content=_form(parts, form, "user"), message=extra, **bound)
            append(new_user(moment, extras, tuple(parts)))
        elif role == "tool":
            call_id = expect_str(message.get("tool_call_id"), f"{path}.tool_call_id")
            append(_result(moment, call_id, names.get(call_id, ""), parts, form, extra))
        else:  # the deprecated "function" role answers a function_call
            name = expect_str(message.get("name"), f"{path}.name")
            waiting = legacy.get(name)
            call_id = (
                waiting.pop(0)
                if waiting
                else common.synthesize_id("call_", index, name)
            )
            append(_result(moment, call_id, name, parts, form, extra, legacy=True))
    if names:  # calls were read (each names its id), so results may wait on them
        common.mark_interposed(canisters, NAME)
    return canisters


_ERROR_START = '{"error"'  # what an error encoded in text starts with
_SPLIT = FrozenDict({NAME: {"split": True}})


def _parse_plain(
    message: dict[str, Any],
    moment: datetime,
    before: list[Canister],
    names: dict[str, str],
    index: int,
    kept: list[Any],
) -> Canister | list[Canister] | None:
    """The canisters of ``message`` when it has one of the common shapes, built as
    the general way would build them (see ``_parse_messages``); ``None`` when it
    has another shape. Its other keys, and a part read the general way, go to
    ``kept`` (see :func:`_parse_request`).

    The shapes: a system, developer, user, assistant or tool message whose
    content is a string, ``null`` or a list of parts (text parts and images
    read here, any other part as :func:`_parse_part` reads it), with any other
    key kept as the general way keeps it; an assistant message may carry tool
    calls of the canonical shape (``id``, ``type: "function"``, ``function``
    with a name and JSON arguments), and no refusal text or legacy
    ``function_call``.
    """
    role = message.get("role")
    if type(role) is not str:
        return None
    content = message.get("content")
    size = len(message)
    canister: Canister
    parts: list[Content]
    if type(content) is str:
        # One string, perhaps with a participant's name: the commonest messages.
        plain = (
            _PLAIN.get(role) if size == 2 or (size == 3 and "name" in message) else None
        )
        if plain is not None:
            extras = plain[1]
            if size == 3:
                kept.append(message["name"])
                named = {"message": {"name": message["name"]}}
                extras = FrozenDict({NAME: {**extras.get(NAME, EMPTY), **named}})
            canister = plain[0](moment, extras, (plain_text(content),))
            return canister
    elif type(content) is list and size == 2 and role == "user":
        listed_parts = _plain_parts(content, index, kept)
        if listed_parts is None:
            return None
        parts = listed_parts
        # The list form is the default but for a lone text (see _default_form).
        listed = len(parts) == 1 and type(parts[0]) is Text and not parts[0].extras
        canister = new_user(moment, _LISTED if listed else EMPTY, tuple(parts))
        return canister
    known = _MESSAGE_KEYS.get(role)
    if known is None or role == "function":
        return None
    if type(content) is str:
        parts = [plain_text(content)]
        form = "string"
    elif type(content) is list:
        listed_parts = _plain_parts(content, index, kept)
        if listed_parts is None:
            return None
        parts = listed_parts
        form = "list"
    elif content is None:
        parts = []
        form = "null" if "content" in message else "absent"
    else:
        return None
    extra = {} if known.issuperset(message) else common.rest(message, known)
    if extra:
        kept.append(extra)
    if role == "assistant":
        return _plain_assistant(message, moment, before, names, parts, form, extra)
    if role == "tool":
        call_id = message.get("tool_call_id")
        if type(call_id) is not str:
            return None
        name = names.get(call_id, "")
        if type(content) is str and not extra and not content.startswith(_ERROR_START):
            result: Result = new_result(moment, EMPTY, call_id, name, (parts[0],), None)
            return result
        return _result(moment, call_id, name, parts, form, extra)
    build = new_user if role == "user" else new_supervisor
    mark = None if form == "string" else _form(parts, form, role)
    if role == "developer" or (extra and mark):
        developer = "developer" if role == "developer" else None
        extras = _extras(role=developer, content=mark, message=extra)
    elif extra:  # a participant's name, most often
        extras = FrozenDict({NAME: {"message": extra}})
    elif mark:
        extras = _LISTED if mark == "list" else FrozenDict({NAME: {"content": mark}})
    else:
        extras = EMPTY
    canister = build(moment, extras, tuple(parts))
    return canister


_DEVELOPER = FrozenDict({NAME: {"role": "developer"}})
_PLAIN = {
    "user": (new_user, EMPTY),
    "system": (new_supervisor, EMPTY),
    "developer": (new_supervisor, _DEVELOPER),
    "assistant": (new_assistant, EMPTY),
}
_LISTED = FrozenDict({NAME: {"content": "list"}})


def _plain_assistant(
    message: dict[str, Any],
    moment: datetime,
    before: list[Canister],
    names: dict[str, str],
    parts: list[Content],
    form: str,
    extra: dict[str, Any],
) -> Canister | list[Canister] | None:
    """The canisters of an assistant message for :func:`_parse_plain`."""
    if extra and extra.get("refusal") is not None:
        return None  # a refusal text, made a part
    calls = message.get("tool_calls")
    if calls is None or "function_call" in message:
        # What SDKs dump of a reply: every field, those not set as null.
        if message.get("function_call") is not None:
            return None  # a legacy function call
        if calls is None and "tool_calls" in message:
            extra["tool_calls"] = None
        if "function_call" in message:
            extra["function_call"] = None
    if calls is None:
        if form == "string":
            extras = FrozenDict({NAME: {"message": extra}}) if extra else EMPTY
            return new_assistant(moment, extras, (parts[0],))
        extras = _extras(content=_form(parts, form, "assistant"), message=extra)
        canister: Canister = new_assistant(moment, extras, tuple(parts))
        return canister
    if type(calls) is not list or not calls:
        return None
    made: list[Canister] = []
    if form == "string" and not extra:
        made.append(new_assistant(moment, EMPTY, (parts[0],)))
    elif parts or form != "null":
        extras = _extras(content=_form(parts, form, "assistant"), message=extra)
        made.append(new_assistant(moment, extras, tuple(parts)))
    # Else the message's marks ride on its first call, and it is a message of
    # its own after another assistant turn.
    split = not made and bool(before) and before[-1].role in _TURN
    found: list[tuple[str, str]] = []
    for call in calls:
        if type(call) is not dict or len(call) != 3 or call.get("type") != "function":
            return None
        identifier, function = call.get("id"), call.get("function")
        if type(identifier) is not str or type(function) is not dict:
            return None
        tool, text = function.get("name"), function.get("arguments")
        if len(function) != 2 or type(tool) is not str or type(text) is not str:
            return None
        arguments = compact_arguments(text)
        kept = None
        if arguments is None:
            # Not the canonical text (Python clients write ", " and ": "): kept
            # as it came, as _parse_call keeps it. Refused the general way.
            try:
                value, kept = common.parse_arguments(text, "$")
            except CanistersError:
                return None
            if kept == "":
                return None  # marked "blank" the general way
            arguments = FrozenDict(value) if value else EMPTY
        if found or made:
            extras = FrozenDict({NAME: {"arguments": kept}}) if kept else EMPTY
        elif not kept and not extra:
            extras = _SPLIT if split else EMPTY
        else:
            extras = _extras(arguments=kept, message=extra, split=split)
        found.append((identifier, tool))
        made.append(new_invocation(moment, extras, tool, arguments, identifier))
    names.update(found)
    return made


_TURN = (Role.Assistant, Role.Invocation)


def _plain_parts(
    content: list[Any], index: int, kept: list[Any] | None = None
) -> list[Content] | None:
    """The parts of a message's list ``content``: text parts and images read here
    as :func:`_parse_part` reads them, any other part by it (and given to
    ``kept``, see :func:`_parse_request`); ``None`` when a part is of a type
    not known here (the general way marks the canister holding it)."""
    parts: list[Content] = []
    for number, part in enumerate(content):
        if type(part) is dict and len(part) == 2:
            kind = part.get("type")
            if kind == "text":
                text = part.get("text")
                if type(text) is str:
                    parts.append(plain_text(text))
                    continue
            elif kind == "image_url":
                image = _plain_image(part.get("image_url"))
                if image is not None:
                    parts.append(image)
                    continue
        if kept is not None:
            kept.append(part)
        read = _parse_part(part, f"$.messages[{index}].content[{number}]")
        if type(read) is Text and not read.text and "raw" in mine(read, NAME):
            return None
        parts.append(read)
    return parts


_DETAIL = {
    detail: FrozenDict({NAME: {"inner": {"detail": detail}}})
    for detail in ("auto", "low", "high")
}


def _plain_image(inner: object) -> Image | None:
    """The image of an ``image_url`` part's payload holding a URL (or a data URL
    in its one spelling) and perhaps a ``detail``; ``None`` for another shape."""
    if type(inner) is not dict:
        return None
    url = inner.get("url")
    if type(url) is not str or _URL_SCHEME.match(url) is None:
        return None
    if len(inner) == 1:
        extras: FrozenDict[str, Any] = EMPTY
    elif len(inner) == 2 and type(detail := inner.get("detail")) is str:
        extras = _DETAIL.get(detail) or FrozenDict(
            {NAME: {"inner": {"detail": detail}}}
        )
    else:
        return None
    decoded = common.parse_data_url(url) if url.startswith("data:") else None
    image: Image
    if decoded is None:
        image = new_image(None, url, None, EMPTY, None, None, None, extras)
    else:
        image = new_image(decoded[1], None, None, EMPTY, decoded[0], None, None, extras)
    return image


def _result(
    moment: datetime,
    call_id: str,
    name: str,
    parts: list[Content],
    form: str,
    extra: dict[str, Any],
    *,
    legacy: bool = False,
) -> Result:
    error = None
    if parts and parts[0].type == "text" and not mine(parts[0], NAME):
        text = parts[0].text  # type: ignore[attr-defined]
        error = common.decode_error_text(text)
        # Only text this module would write itself is read as an error.
        if error is not None and common.encode_error_text(error) == text:
            parts = parts[1:]
            form = "string" if form == "string" and not parts else form
        else:
            error = None
    default = (
        "string" if error is not None and not parts else _default_form(parts, "tool")
    )
    extras = _extras(
        content=None if form == default else form,
        message=extra,
        legacy=legacy or None,
        # Media parts of a tool message go back in place to this provider.
        in_place=any(part.type in _MEDIA for part in parts) or None,
    )
    bound: dict[str, Any] = {}
    common.bind_parts(bound, parts)
    if bound:
        extras = FrozenDict({NAME: {**extras.get(NAME, EMPTY), **bound}})
    result: Result = new_result(moment, extras, call_id, name, tuple(parts), error)
    return result


_MEDIA = frozenset({"image", "file", "audio"})
_REFUSAL_FIELD = FrozenDict({NAME: {"refusal": "field"}})
_Call = tuple[str, Mapping[str, Any], str, dict[str, Any]]
"""What an invocation is made of: its name, arguments, id and marks."""


def _parse_assistant(
    message: Mapping[str, Any],
    path: str,
    extra: dict[str, Any],
    before: list[Canister],
    names: dict[str, str],
    legacy: dict[str, list[str]],
    index: int,
    moment: datetime,
) -> list[Canister]:
    parts, form = _parse_content(message, path)
    # The form of the content itself, without a refusal given as a field.
    default = _default_form(parts, "assistant")
    refusal = extra.get("refusal")
    if isinstance(refusal, str):
        del extra["refusal"]
        parts.append(new_text(refusal, "text/plain", None, _REFUSAL_FIELD))
    calls: list[_Call] = []
    raw_calls = message.get("tool_calls")
    if raw_calls is not None:
        listed = expect_list(raw_calls, f"{path}.tool_calls")
        for number, raw in enumerate(listed):
            calls.append(_parse_call(raw, f"{path}.tool_calls[{number}]", names))
        if not listed:  # sent empty, as some servers and clients do
            extra["tool_calls"] = []
    elif "tool_calls" in message:
        extra["tool_calls"] = None
    function_call = message.get("function_call")
    if function_call is not None:
        where = f"{path}.function_call"
        call = expect_mapping(function_call, where)
        name = expect_str(call.get("name"), f"{where}.name")
        arguments, kept = common.parse_arguments(
            call.get("arguments"), f"{where}.arguments"
        )
        call_id = common.synthesize_id("call_", index, name)
        legacy.setdefault(name, []).append(call_id)
        names[call_id] = name
        marks = {
            "legacy": True,
            "arguments": kept,
            "blank": kept == "",
            "function": common.rest(call, _FUNCTION_KEYS),
        }
        calls.append(
            (name, FrozenDict(arguments) if arguments else EMPTY, call_id, marks)
        )
    elif "function_call" in message:
        extra["function_call"] = None
    message_marks = {"content": None if form == default else form, "message": extra}
    common.bind_parts(message_marks, parts)
    made: list[Canister] = []
    if parts or form != "null" or not calls:
        made.append(new_assistant(moment, _extras(**message_marks), tuple(parts)))
    else:
        # The message's marks ride on its first call.
        previous = before[-1].role if before else None
        tool, values, identifier, marks = calls[0]
        marks = {**marks, **message_marks, "split": previous in _TURN}
        calls[0] = (tool, values, identifier, marks)
    for tool, values, identifier, marks in calls:
        made.append(new_invocation(moment, _extras(**marks), tool, values, identifier))
    return made


def _with_extras(canister: Canister, values: Mapping[str, Any]) -> Canister:
    import attrs

    extras = common.with_marks(canister.extras, NAME, values)
    return attrs.evolve(canister, extras=extras)  # type: ignore[misc]


_CALL_KEYS = frozenset({"id", "type", "function"})
_FUNCTION_KEYS = frozenset({"name", "arguments"})


def _parse_call(raw: object, path: str, names: dict[str, str]) -> _Call:
    call = expect_mapping(raw, path)
    call_id = expect_str(call.get("id"), f"{path}.id")
    if call.get("type", "function") != "function":
        raise MalformedPayload(
            f"unknown tool call type {_excerpt(call.get('type'))}", f"{path}.type"
        )
    function = expect_mapping(call.get("function"), f"{path}.function")
    name = expect_str(function.get("name"), f"{path}.function.name")
    text = function.get("arguments")
    # Compact JSON (what OpenAI writes) is read in one step, as the fast way reads it.
    arguments = compact_arguments(text) if type(text) is str else None
    kept = None
    if arguments is None:
        value, kept = common.parse_arguments(text, f"{path}.function.arguments")
        arguments = FrozenDict(value) if value else EMPTY
    names[call_id] = name
    marks = {
        "arguments": kept,
        "blank": kept == "",
        "call": common.rest(call, _CALL_KEYS) if "type" in call else {"type": None},
        "function": common.rest(function, _FUNCTION_KEYS),
    }
    return name, arguments, call_id, marks


_RESPONSE_KEYS = frozenset({"choices", "model", "usage"})
_CHOICE_KEYS = frozenset({"message"})


@common.guarded
def parse_response(body: object) -> Conversation:
    """Read a Chat Completions response (or ``ChatCompletion`` object).

    Each choice becomes an :class:`~canisters.Assistant` (with its metadata)
    followed by its invocations.
    """
    mapping = common.as_mapping(body)
    _errors.check(NAME, mapping)
    choices = expect_list(mapping.get("choices"), "$.choices")
    model = mapping.get("model")
    model = expect_str(model, "$.model") if model is not None else None
    raw_usage = mapping.get("usage")
    usage = _usage(expect_mapping(raw_usage, "$.usage")) if raw_usage else None
    created = mapping.get("created")
    timestamp = None
    if isinstance(created, int) and not isinstance(created, bool) and created >= 0:
        try:
            timestamp = datetime.fromtimestamp(created, timezone.utc)
        except (OverflowError, OSError, ValueError):
            timestamp = None
    response_rest = common.rest(mapping, _RESPONSE_KEYS - {"usage"})
    moment = now()
    canisters: list[Canister] = []
    for number, raw in enumerate(choices):
        path = f"$.choices[{number}]"
        choice = expect_mapping(raw, path)
        message = expect_mapping(choice.get("message"), f"{path}.message")
        role = message.get("role", "assistant")
        if role != "assistant":
            raise MalformedPayload(
                f"unexpected role {_excerpt(role)}", f"{path}.message.role"
            )
        known = _MESSAGE_KEYS["assistant"]
        extra = common.rest(message, known)
        if "role" not in message:
            extra["role"] = None
        items = _parse_assistant(
            message, f"{path}.message", extra, [], {}, {}, number, moment
        )
        head = items[0]
        if head.role is not Role.Assistant:
            items.insert(0, Assistant(()))
            head = items[0]
            moved = dict(mine(items[1], NAME))
            moved.pop("split", None)
            items[1] = _with_extras(
                items[1],
                {k: v for k, v in moved.items() if k not in ("content", "message")},
            )
            head = _with_extras(
                head, {"content": moved.get("content"), "message": moved.get("message")}
            )
        finish = choice.get("finish_reason")
        values = dict(mine(head, NAME))
        values["choice"] = common.rest(choice, _CHOICE_KEYS)
        if number == 0:
            values["response"] = response_rest
            if raw_usage is not None:
                values["response"] = {**response_rest, "usage": raw_usage}
        custom = {}
        if number == 0 and isinstance(mapping.get("id"), str):
            custom["response_id"] = mapping["id"]
        metadata = Metadata(
            model=model,
            usage=usage if number == 0 else None,
            finish_reason=_FINISH.get(finish, finish)
            if isinstance(finish, str)
            else None,
            custom=custom,
        )
        import attrs

        head = attrs.evolve(
            _with_extras(head, values),  # type: ignore[misc]
            metadata=metadata,
            **({"timestamp": timestamp} if timestamp else {}),
        )
        items[0] = head
        canisters.extend(items)
    return Conversation(canisters)


def _count(value: object) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) else 0


def _usage(raw: Mapping[str, Any]) -> Usage:
    prompt = raw.get("prompt_tokens_details") or {}
    completion = raw.get("completion_tokens_details") or {}
    return Usage(
        input_tokens=_count(raw.get("prompt_tokens")),
        output_tokens=_count(raw.get("completion_tokens")),
        cached_tokens=_count(prompt.get("cached_tokens"))
        if isinstance(prompt, Mapping)
        else 0,
        reasoning_tokens=_count(completion.get("reasoning_tokens"))
        if isinstance(completion, Mapping)
        else 0,
    )


# Rendering ---------------------------------------------------------------------------


class _Renderer:
    """State of one render: options, labels, media waiting for a user message."""

    def __init__(self, options: Options) -> None:
        self.options = options
        self.labels = Labeler(options)
        self.moved: list[dict[str, Any]] = []

    def unsupported(self, where: str, reason: str) -> dict[str, Any] | None:
        text = common.unsupported(self.options, NAME, where, reason)
        return None if text is None else {"type": "text", "text": text}

    def parts(
        self, index: int, canister: Canister, parts: tuple[Content, ...], wire: str
    ) -> list[dict[str, Any]]:
        rendered: list[dict[str, Any]] = []
        for number, part in enumerate(parts):
            if type(part) is Text and not part.extras:
                # Plain text, the common case: what part() gives, without the rest.
                rendered.append({"type": "text", "text": part.text})
                continue
            where = common.describe(index, canister, number, part)
            label = self.labels.label(part)
            if label is not None:
                rendered.append({"type": "text", "text": label.text})
            item = self.part(part, where, wire, canister)
            if item is not None:
                rendered.append(item)
        return rendered

    def part(
        self, part: Content, where: str, wire: str, canister: Canister
    ) -> dict[str, Any] | None:
        extras = mine(part, NAME)
        outer = extras.get("outer") or {}
        inner = extras.get("inner") or {}
        kind = part.type
        if kind == "text":
            text = part.text  # type: ignore[attr-defined]
            if not text and "raw" in extras:
                return dict(extras["raw"])  # a part kept whole
            if extras.get("refusal") == "part":
                return {"type": "refusal", "refusal": text, **outer}
            return {"type": "text", "text": text, **outer}
        if kind == "reasoning":
            action = common.reasoning_action(
                part, NAME, self.options, where, native=False
            )
            if action == "text":
                return {"type": "text", "text": f"<think>\n{part.text}\n</think>"}  # type: ignore[attr-defined]
            return None
        if wire != "user":
            # Rule: system, assistant and tool messages take text parts only.
            if wire == "tool" and kind in _MEDIA:
                if mine(canister, NAME).get("in_place"):
                    return self.part(part, where, "user", canister)
                self.move(part, where, canister)
                return None
            return self.unsupported(where, f"{kind} in a {wire} message")
        if kind == "image":
            url = part.url  # type: ignore[attr-defined]
            if url is None or not url.startswith(("http:", "https:", "data:")):
                data = common.media_bytes(part, self.options)
                if data is None:
                    return self.unsupported(where, "an image needs a URL or bytes")
                url = common.data_url(common.media_mime(part, data), data)
            return {"type": "image_url", "image_url": {"url": url, **inner}, **outer}
        if kind == "audio":
            data = common.media_bytes(part, self.options)
            if data is None:
                return self.unsupported(where, "audio must be inline bytes")
            fmt = _AUDIO_FORMATS.get(common.media_mime(part, data))
            if fmt is None:
                return self.unsupported(where, "audio must be wav or mp3")
            raw = extras.get("raw")
            encoded = (
                raw
                if isinstance(raw, str) and common.b64decode_exact(raw)[0] == data
                else common.b64encode(data)
            )
            return {
                "type": "input_audio",
                "input_audio": {"data": encoded, "format": fmt, **inner},
                **outer,
            }
        if kind == "file":
            file: dict[str, Any] = {}
            reference = part.refs.get(_REF)  # type: ignore[attr-defined]
            url = part.url  # type: ignore[attr-defined]
            if url is not None and url.startswith("data:"):
                file["file_data"] = url
            elif reference is None or part.data is not None:  # type: ignore[attr-defined]
                data = common.media_bytes(part, self.options)
                if data is None:
                    return self.unsupported(
                        where, "a file needs bytes or an OpenAI file id"
                    )
                raw = extras.get("raw")
                if isinstance(raw, str):
                    file["file_data"] = raw
                else:
                    file["file_data"] = common.data_url(
                        common.media_mime(part, data), data
                    )
            if reference is not None:
                file["file_id"] = reference
            filename = part.filename  # type: ignore[attr-defined]
            if filename is not None:
                file["filename"] = filename
            return {"type": "file", "file": {**file, **inner}, **outer}
        return self.unsupported(where, f"{kind} content")

    def move(self, part: Content, where: str, canister: Canister) -> None:
        rendered = self.part(part, where, "user", canister)
        if rendered is not None:
            if not self.moved:
                self.moved.append(
                    {
                        "type": "text",
                        "text": "Content of the tool results above:",
                    }
                )
            self.moved.append(rendered)
            self.options.note(
                "moved",
                NAME,
                where,
                "tool-result media sent in a follow-up user message",
            )


def _content(rendered: list[dict[str, Any]], form: str | None, default: str) -> Any:
    form = form or default
    if form == "string" and len(rendered) == 1 and rendered[0].get("type") == "text":
        return rendered[0]["text"]
    if form == "null" and not rendered:
        return None
    if form == "absent" and not rendered:
        return _ABSENT
    return rendered


_ABSENT = object()


def _put_content(message: dict[str, Any], value: Any) -> None:
    if value is not _ABSENT:
        message["content"] = value


def _render_call(invocation: Canister) -> dict[str, Any]:
    extras = mine(invocation, NAME)
    function = {
        "name": invocation.name,  # type: ignore[attr-defined]
        "arguments": common.render_arguments(
            invocation.arguments,  # type: ignore[attr-defined]
            "" if extras.get("blank") else extras.get("arguments"),
        ),
        **(extras.get("function") or {}),
    }
    call: dict[str, Any] = {
        "id": invocation.invocation_id,  # type: ignore[attr-defined]
        "type": "function",
        "function": function,
    }
    for key, value in (extras.get("call") or {}).items():
        if key == "type" and value is None:
            del call["type"]
        else:
            call[key] = value
    return call


def _message_extras(message: dict[str, Any], extra: Mapping[str, Any]) -> None:
    for key, value in extra.items():
        if key == "role" and value is None:
            message.pop("role", None)
        else:
            message[key] = value


def _render_assistant(
    renderer: _Renderer, index: int, group: list[Canister]
) -> dict[str, Any]:
    head = group[0]
    extras = mine(head, NAME)
    message: dict[str, Any] = {"role": "assistant"}
    parts: list[dict[str, Any]] = []
    refusals: list[str] = []
    calls: list[dict[str, Any]] = []
    legacy: dict[str, Any] | None = None
    for offset, canister in enumerate(group):
        if canister.role is Role.Assistant:
            for number, part in enumerate(canister.content):  # type: ignore[attr-defined]
                if type(part) is Text and not part.extras:
                    parts.append({"type": "text", "text": part.text})
                    continue
                if part.type == "text" and mine(part, NAME).get("refusal") == "field":
                    refusals.append(part.text)
                    continue
                where = common.describe(index + offset, canister, number, part)
                label = renderer.labels.label(part)
                if label is not None:
                    parts.append({"type": "text", "text": label.text})
                item = renderer.part(part, where, "assistant", canister)
                if item is not None:
                    parts.append(item)
        elif mine(canister, NAME).get("legacy"):
            call = _render_call(canister)["function"]
            legacy = call
        else:
            calls.append(_render_call(canister))
    has_content = head.role is Role.Assistant
    default = "null" if not has_content or not parts else "list"
    if has_content and len(parts) == 1 and parts[0].get("type") == "text":
        content_part = head.content[0] if head.content else None  # type: ignore[attr-defined]
        plain = content_part is None or not mine(content_part, NAME).get("outer")
        default = "string" if plain else "list"
    _put_content(message, _content(parts, extras.get("content"), default))
    if refusals:
        message["refusal"] = "".join(refusals)
    if calls:
        message["tool_calls"] = calls
    if legacy is not None:
        message["function_call"] = legacy
    _message_extras(message, extras.get("message") or {})
    return message


def _render_result(renderer: _Renderer, index: int, result: Canister) -> dict[str, Any]:
    extras = mine(result, NAME)
    parts: list[dict[str, Any]] = []
    error = result.error  # type: ignore[attr-defined]
    if error is not None:
        parts.append({"type": "text", "text": common.encode_error_text(error)})
    parts.extend(renderer.parts(index, result, result.content, "tool"))  # type: ignore[attr-defined]
    default = (
        "string"
        if len(parts) == 1 and parts[0].get("type") == "text"
        else (
            _default_form(result.content, "tool")  # type: ignore[attr-defined]
        )
    )
    if error is not None and not result.content:  # type: ignore[attr-defined]
        default = "string"
    if not parts and default == "list":
        default = "string"
        parts = [{"type": "text", "text": ""}]
    if extras.get("legacy"):
        message: dict[str, Any] = {"role": "function", "name": result.name}  # type: ignore[attr-defined]
    else:
        message = {"role": "tool", "tool_call_id": result.invocation_id}  # type: ignore[attr-defined]
    _put_content(message, _content(parts, extras.get("content"), default))
    _message_extras(message, extras.get("message") or {})
    return message


def _render_plain(
    renderer: _Renderer, index: int, canister: Canister, wire: str
) -> dict[str, Any]:
    extras = mine(canister, NAME)
    parts = canister.content  # type: ignore[attr-defined]
    rendered = []
    if canister.role is Role.Document and canister.title:  # type: ignore[attr-defined]
        rendered.append({"type": "text", "text": f"Document: {canister.title}"})  # type: ignore[attr-defined]
        renderer.options.note(
            "downgraded",
            NAME,
            common.describe(index, canister),
            "document sent as a user message",
        )
    rendered.extend(renderer.parts(index, canister, parts, wire))
    role = extras.get("role") or wire
    message: dict[str, Any] = {"role": role}
    default = _default_form(parts, wire)
    if len(rendered) != len(parts) or any(part.type == "reasoning" for part in parts):
        default = (
            "string"
            if len(rendered) == 1
            and rendered[0].get("type") == "text"
            and not rendered[0].keys() - {"type", "text"}
            else "list"
        )
    _put_content(message, _content(rendered, extras.get("content"), default))
    _message_extras(message, extras.get("message") or {})
    return message


def _wire_role(canister: Canister) -> str:
    """The role of the message ``canister`` goes into; ``"raw"`` for a message
    of a role not known here, kept whole."""
    if canister.extras and "raw" in mine(canister, NAME):
        return "raw"
    return _WIRE_ROLE[canister.role]


def _render_messages(
    canisters: list[Canister], options: Options
) -> list[dict[str, Any]]:
    renderer = _Renderer(options)
    joins = common.joins_step(NAME)
    messages: list[dict[str, Any]] = []
    index = 0
    for wire, group in common.group_turns(canisters, _wire_role, joins):
        if wire != "tool" and renderer.moved:
            messages.append({"role": "user", "content": renderer.moved})
            renderer.moved = []
        if wire == "raw":  # a message kept whole
            messages.append(dict(mine(group[0], NAME)["raw"]))
        elif wire == "assistant":
            messages.append(_render_assistant(renderer, index, group))
        elif wire == "tool":
            messages.append(_render_result(renderer, index, group[0]))
        else:
            messages.append(_render_plain(renderer, index, group[0], wire))
        index += len(group)
    if renderer.moved:
        messages.append({"role": "user", "content": renderer.moved})
    return messages


def render_request(conversation: Conversation, **options: Any) -> dict[str, Any]:
    """Render ``{"messages": [...]}`` for a Chat Completions request."""
    return _paused(_render_request, conversation, options)


def _render_request(
    conversation: Conversation, options: Mapping[str, Any], *, fast: bool = True
) -> dict[str, Any]:
    """:func:`render_request`; ``fast=False`` renders every message the general way
    (what the fast way must give, exactly)."""
    opts = common.options_from(options)
    given = common.canisters_given(conversation, NAME)
    if fast:
        trial = common.trial_options(opts)
        if trial is not None:
            try:
                messages = _render_plain_messages(given, trial, trial=True)
            except CanistersError:  # given again by the usual way, or not at all
                messages = None
            if messages is not None:
                common.adopt(opts, trial)
                return {"messages": messages}
    canisters, own, *_ = common.request_canisters(given, opts, NAME, adjacent=True)
    if fast and not own:
        return {"messages": _render_plain_messages(canisters, opts)}
    return {"messages": _render_messages(canisters, opts)}


def _render_plain_messages(
    canisters: Sequence[Canister],
    options: Options,
    *,
    trial: bool = False,
) -> list[dict[str, Any]] | None:
    """What :func:`_render_messages` gives when no canister has OpenAI Chat extras,
    in one pass.

    Without extras, an invocation joins the assistant turn just before it when
    their steps agree, and a message holding one text sends it as a string. Plain
    texts, invocations, plain results and user texts and images are written here;
    everything else goes through the general functions, with the same index (and
    a renderer made for the first of them).

    As a ``trial`` (see :func:`~canisters.providers._common.trial_options`) it
    takes the canisters before :func:`~canisters.providers._common.request_canisters`
    and gives ``None`` as soon as one has extras, a result answers no earlier
    invocation or a user canister comes before the results of calls, and at the
    end when an invocation has no result: when the
    canisters are complete pairs without extras, the trial renders them as they
    are, and rendering saves the pass that pairs them.

    Each role has its own branch reading the canister's fields: Python reads an
    attribute faster where it always meets one class than where the class changes
    from one canister to the next.
    """
    renderer: _Renderer | None = None
    held = False  # whether the renderer holds media moved out of tool messages
    invoked: dict[str, bool] = {}  # in a trial: the invocations, whether answered
    waiting = 0  # in a trial: how many of them are not answered yet
    encode = common.encode_arguments  # without extras, nothing kept to prefer
    messages: list[dict[str, Any]] = []
    append = messages.append
    turn: dict[str, Any] | None = None  # the assistant message invocations may join
    calls: list[dict[str, Any]] | None = None  # its tool calls, once it has some
    step = None  # the step of the canister before
    for index, canister in enumerate(canisters):
        kind = canister.role
        if kind is INVOCATION:
            identifier = canister.invocation_id  # type: ignore[attr-defined]
            if trial:
                if canister.extras:
                    return None
                if identifier not in invoked:
                    invoked[identifier] = False
                    waiting += 1
            call = {
                "id": identifier,
                "type": "function",
                "function": {
                    "name": canister.name,  # type: ignore[attr-defined]
                    "arguments": encode(canister.arguments),  # type: ignore[attr-defined]
                },
            }
            this = canister.step
            if turn is not None and (step is None or this is None or step == this):
                if calls is None:
                    calls = turn["tool_calls"] = [call]
                else:
                    calls.append(call)
            else:
                if held:
                    append({"role": "user", "content": renderer.moved})  # type: ignore[union-attr]
                    renderer.moved = []  # type: ignore[union-attr]
                    held = False
                calls = [call]
                turn = {"role": "assistant", "content": None, "tool_calls": calls}
                append(turn)
            step = this
            continue
        calls = None
        if kind is RESULT:
            identifier = canister.invocation_id  # type: ignore[attr-defined]
            if trial:
                if canister.extras:
                    return None
                answered = invoked.get(identifier)
                if answered is None:
                    return None
                if not answered:
                    invoked[identifier] = True
                    waiting -= 1
            step = canister.step
            turn = None
            content = canister.content  # type: ignore[attr-defined]
            part = content[0] if len(content) == 1 else None
            if (
                type(part) is Text and not part.extras and canister.error is None  # type: ignore[attr-defined]
            ):
                append(
                    {"role": "tool", "tool_call_id": identifier, "content": part.text}
                )
            else:
                if renderer is None:
                    renderer = _Renderer(options)
                append(_render_result(renderer, index, canister))
                held = bool(renderer.moved)
            continue
        if held:
            append({"role": "user", "content": renderer.moved})  # type: ignore[union-attr]
            renderer.moved = []  # type: ignore[union-attr]
            held = False
        if kind is ASSISTANT:
            if trial and canister.extras:
                return None
            step = canister.step
            content = canister.content  # type: ignore[attr-defined]
            part = content[0] if len(content) == 1 else None
            if type(part) is Text and not part.extras:
                turn = {"role": "assistant", "content": part.text}
            else:
                if renderer is None:
                    renderer = _Renderer(options)
                turn = _render_assistant(renderer, index, [canister])
                calls = turn.get("tool_calls")
            append(turn)
            continue
        turn = None
        if kind is USER:
            if trial and (waiting or canister.extras):
                # Between calls and their results, the usual way moves it.
                return None
            step = canister.step
            content = canister.content  # type: ignore[attr-defined]
            part = content[0] if len(content) == 1 else None
            if type(part) is Text and not part.extras:
                append({"role": "user", "content": part.text})
                continue
            rendered = _user_parts(content)
            if rendered is not None:
                append({"role": "user", "content": rendered})
                continue
        elif kind is SUPERVISOR:
            if trial and canister.extras:
                return None
            step = canister.step
            content = canister.content  # type: ignore[attr-defined]
            part = content[0] if len(content) == 1 else None
            if type(part) is Text and not part.extras:
                append({"role": "system", "content": part.text})
                continue
        else:  # a document
            if trial and canister.extras:
                return None
            step = canister.step
        if renderer is None:
            renderer = _Renderer(options)
        wire = "system" if kind is SUPERVISOR else "user"
        append(_render_plain(renderer, index, canister, wire))
    if trial and waiting:
        return None
    if held:
        append({"role": "user", "content": renderer.moved})  # type: ignore[union-attr]
    return messages


_URL_SCHEMES = ("http:", "https:", "data:")  # what an image URL is sent as


def _user_parts(parts: tuple[Content, ...]) -> list[dict[str, Any]] | None:
    """The content of a user message holding ``parts``, when they are texts and
    images without extras or hint, written as :meth:`_Renderer.parts` writes
    them (an image by its URL, else its bytes and media type as a data URL);
    ``None`` when there is no part or another one."""
    rendered: list[dict[str, Any]] = []
    for part in parts:
        kind = type(part)
        if part.extras:
            return None
        if kind is Text:
            rendered.append({"type": "text", "text": part.text})  # type: ignore[attr-defined]
            continue
        if kind is not Image or part.hint is not None:  # type: ignore[attr-defined]
            return None
        url = part.url  # type: ignore[attr-defined]
        if url is None or not url.startswith(_URL_SCHEMES):
            data, mime = part.data, part.mime_type  # type: ignore[attr-defined]
            if data is None or not mime:
                return None
            url = common.data_url(mime, bytes(data))
        rendered.append({"type": "image_url", "image_url": {"url": url}})
    return rendered or None


def render_response(conversation: Conversation, **options: Any) -> dict[str, Any]:
    """Render a Chat Completions response body from a reply.

    Each :class:`~canisters.Assistant` starts a choice; invocations join the
    choice before them.
    """
    opts = common.options_from(options)
    renderer = _Renderer(opts)
    choices: list[dict[str, Any]] = []
    groups: list[list[Canister]] = []
    for canister in common.canisters_of(conversation, NAME):
        if canister.role is Role.Assistant or not groups:
            groups.append([canister])
        else:
            groups[-1].append(canister)
    body: dict[str, Any] = {}
    index = 0
    for number, group in enumerate(groups):
        for canister in group:
            if canister.role not in (Role.Assistant, Role.Invocation):
                where = common.describe(index, canister)
                raise MalformedPayload(
                    f"a response holds assistant turns and invocations, not {where}"
                )
        head = group[0]
        message = _render_assistant(renderer, index, group)
        metadata = head.metadata
        extras = mine(head, NAME)
        finish = metadata.finish_reason if metadata else None
        if finish is None:
            finish = "tool_calls" if len(group) > 1 else "stop"
        choice: dict[str, Any] = {
            "index": number,
            "message": message,
            "finish_reason": _FINISH_BACK.get(finish, "stop"),
        }
        recorded = extras.get("choice")
        if recorded is None:
            choice["logprobs"] = None
        else:
            # Compatible endpoints (Gemini's, Ollama's) leave logprobs out.
            choice.update(recorded)
        choices.append(choice)
        if number == 0:
            body = _response_head(head)
        index += len(group)
    body["choices"] = choices
    return body


def _response_head(head: Canister) -> dict[str, Any]:
    metadata = head.metadata
    extras = mine(head, NAME)
    custom = metadata.custom if metadata else {}
    body: dict[str, Any] = {
        "id": custom.get("response_id") or f"chatcmpl-{head.id}",
        "object": "chat.completion",
        "created": int(head.timestamp.timestamp()),
        "model": (metadata.model if metadata else None) or "",
    }
    usage = metadata.usage if metadata else None
    if usage is not None:
        body["usage"] = {
            "prompt_tokens": usage.input_tokens,
            "completion_tokens": usage.output_tokens,
            "total_tokens": usage.input_tokens + usage.output_tokens,
        }
        if usage.cached_tokens:
            body["usage"]["prompt_tokens_details"] = {
                "cached_tokens": usage.cached_tokens
            }
        if usage.reasoning_tokens:
            body["usage"]["completion_tokens_details"] = {
                "reasoning_tokens": usage.reasoning_tokens
            }
    body.update(extras.get("response") or {})
    return body


# Streams -----------------------------------------------------------------------------

# Delta fields that name something rather than grow: a later value only fills a gap.
_NAMING = frozenset({"role", "id", "type", "name", "index"})
_CHUNK_OWN = frozenset({"choices", "object", "usage", "obfuscation"})
_CHOICE_OWN = frozenset({"index", "delta", "logprobs", "finish_reason"})


# The events of the SDK's chat stream helper beside its "chunk" events
# (openai.lib.streaming.chat): content.delta, refusal.done,
# tool_calls.function.arguments.delta, logprobs.content.done, ...
_HELPER_EVENTS = frozenset({"chunk"})
_HELPER_PREFIXES = ("content.", "refusal.", "tool_calls.", "logprobs.")


def _unindexed(choice: _Choice, item: Mapping[str, Any]) -> int | None:
    """The index of a tool-call delta sent without one, as Gemini's and Ollama's
    OpenAI-compatible endpoints send them: the call with its id, a new call
    for a new id, else the call started last (None when none was)."""
    identifier = item.get("id")
    if identifier:
        for number, call in choice.calls.items():
            if call.get("id") == identifier:
                return number
        return max(choice.calls, default=-1) + 1
    return max(choice.calls, default=None)


def _fields(event: object) -> Any:
    """The field names of an SDK object's type."""
    return getattr(type(event), "model_fields", None) or ()


def _given(value: object) -> bool:
    """Whether a chunk's field holds something: not null, ``""``, ``0``, ``{}``
    or ``[]`` (``False`` counts as given)."""
    return value is False or bool(value)


def _merge(
    target: dict[str, Any], delta: Mapping[str, Any], path: str, grow: streams._Grow
) -> None:
    """Merge one delta into ``target``: text grows (by ``grow``), names fill gaps,
    objects merge. What ``target`` takes from ``delta`` is copied: a later delta
    merging into it must not change the caller's event."""
    for key, value in delta.items():
        if key == "tool_calls":
            continue
        old = target.get(key)
        if value is None:
            target.setdefault(key, None)
        elif old is None:
            target[key] = streams.fresh(value)
        elif key in _NAMING:
            if not old:
                target[key] = streams.fresh(value)
        elif isinstance(value, str) and (
            type(old) is streams.Pieces or isinstance(old, str)
        ):
            grow(target, key, value, f"{path}.{key}")
        elif isinstance(old, dict) and isinstance(value, Mapping):
            _merge(old, value, f"{path}.{key}", grow)
        elif isinstance(old, list) and isinstance(value, list):
            old.extend(streams.fresh(value))
        else:
            target[key] = streams.fresh(value)


class _Choice:
    """One choice of a streamed completion, as far as it arrived."""

    __slots__ = ("calls", "finish", "logprobs", "message", "other")

    def __init__(self) -> None:
        self.message: dict[str, Any] = {}
        self.calls: dict[int, dict[str, Any]] = {}
        self.finish: Any = None
        self.logprobs: dict[str, Any] | bool | None = False  # False: never sent
        self.other: dict[str, Any] = {}


class OpenAIChatAccumulator(streams.Accumulator):
    """Accumulates a Chat Completions stream of ``chat.completion.chunk`` objects.

    Choices are told apart by ``index``, parallel tool calls by their own
    ``index``; text and arguments grow by concatenation. The stream ends when
    every choice has a ``finish_reason``, or, when the chunks announce usage
    (``"usage": null``, as ``stream_options={"include_usage": true}`` makes
    them), with the chunk carrying it; chunks without choices after that end
    (an unannounced usage, a moderated stream's ``moderation`` results) are
    still taken.
    """

    provider = NAME

    def __init__(self) -> None:
        super().__init__()
        self._top: dict[str, Any] = {}
        self._held: frozenset[str] = _CHUNK_OWN  # keys whose value is settled
        self._choices: dict[int, _Choice] = {}
        self._usage: Any = None
        self._announced = False

    def _expected(self) -> str:
        if self._choices and all(c.finish for c in self._choices.values()):
            return "the chunk with the usage"
        return "a finish_reason for every choice"

    def _parse(self, body: Mapping[str, Any]) -> Conversation:
        return parse_response(body)

    def _ended(self) -> bool:
        if self._announced and self._usage is None:
            return False
        if not self._choices:
            return self._usage is not None
        return all(choice.finish for choice in self._choices.values())

    def _mapping(self, event: object, path: str) -> Mapping[str, Any]:
        # The SDK's stream helper (client.chat.completions.stream()) yields its
        # own events: a "chunk" event wraps each chunk; the others
        # ("content.delta", "tool_calls.function.arguments.done", ...) repeat
        # what the chunks say and are skipped by _absorb, without converting
        # their snapshots here.
        if isinstance(event, Mapping):
            if event.get("type") == "chunk" and "choices" not in event:
                return expect_mapping(event.get("chunk"), f"{path}.chunk")
            return event
        kind = getattr(event, "type", None)
        if isinstance(kind, str) and "choices" not in _fields(event):
            if kind == "chunk":
                return expect_mapping(getattr(event, "chunk", None), f"{path}.chunk")
            return {"type": kind}
        return expect_mapping(event, path)

    def _after_end(self, event: Mapping[str, Any], path: str) -> bool:
        # Chunks without choices may still come: the usage (when not announced),
        # a moderated stream's moderation results.
        if event.get("choices"):
            return False
        self._absorb(event, path)
        return True

    def _absorb(self, event: Mapping[str, Any], path: str) -> bool:
        if "error" in event and "choices" not in event:
            raise _errors.DIALECTS[NAME].stream_error(event, path)
        if "type" in event and "choices" not in event:
            kind = event["type"]
            if isinstance(kind, str) and (
                kind in _HELPER_EVENTS or kind.startswith(_HELPER_PREFIXES)
            ):
                return self._ended()  # an SDK helper's event (see _mapping)
            if kind == "error" or isinstance(event.get("message"), str):
                # An SSE "event: error" whose data is the error itself.
                raise _errors.DIALECTS[NAME].stream_error(event, path)
            raise MalformedPayload(
                f"not a chat.completion.chunk: an event of type {_excerpt(kind)}"
                " (the stream of another API?)",
                f"{path}.type",
            )
        if not event.keys() <= self._held:
            for key, value in event.items():
                # The first value holds, except that an empty one gives way:
                # Azure OpenAI's first chunk (its prompt filter results) has
                # "id": "", "model": "" and "created": 0, the chunks after it
                # the real ones.
                if key not in _CHUNK_OWN and not _given(self._top.get(key)):
                    self._top[key] = value
            self._held = _CHUNK_OWN | {k for k, v in self._top.items() if _given(v)}
        if "object" in event:
            self._top.setdefault("object", "chat.completion")
        if "usage" in event:
            if event["usage"] is None:
                self._announced = True
            else:
                self._usage = dict(expect_mapping(event["usage"], f"{path}.usage"))
        for number, raw in enumerate(
            expect_list(event.get("choices", []), f"{path}.choices")
        ):
            self._choice(
                expect_mapping(raw, f"{path}.choices[{number}]"),
                f"{path}.choices[{number}]",
            )
        return self._ended()

    def _choice(self, raw: Mapping[str, Any], path: str) -> None:
        index = raw.get("index", 0)
        if type(index) is not int or index < 0:
            raise MalformedPayload(
                f"invalid choice index {_excerpt(index)}", f"{path}.index"
            )
        choice = self._choices.get(index)
        if choice is None:
            choice = self._choices[index] = _Choice()
        delta = expect_mapping(raw.get("delta") or {}, f"{path}.delta")
        if choice.finish and any(
            delta.get(key)
            for key in ("content", "refusal", "tool_calls", "function_call")
        ):
            raise MalformedPayload(
                f"a delta for choice {index} after its finish_reason", f"{path}.delta"
            )
        _merge(choice.message, delta, f"{path}.delta", self._grow)
        calls = delta.get("tool_calls")
        if calls is not None:
            where = f"{path}.delta.tool_calls"
            for number, item in enumerate(expect_list(calls, where)):
                self._call(
                    choice,
                    expect_mapping(item, f"{where}[{number}]"),
                    f"{where}[{number}]",
                )
        if "logprobs" in raw:
            logprobs = raw["logprobs"]
            if logprobs is None:
                if choice.logprobs is False:
                    choice.logprobs = None
            else:
                merged = choice.logprobs if isinstance(choice.logprobs, dict) else {}
                _merge(
                    merged,
                    expect_mapping(logprobs, f"{path}.logprobs"),
                    f"{path}.logprobs",
                    self._grow,
                )
                choice.logprobs = merged
        if not raw.keys() <= _CHOICE_OWN:
            for key, value in raw.items():
                # A later value replaces an earlier one unless it is empty
                # (Azure's last chunk carries "content_filter_results": {}).
                if key not in _CHOICE_OWN and (
                    _given(value) or key not in choice.other
                ):
                    choice.other[key] = value
        finish = raw.get("finish_reason")
        if finish is not None:
            choice.finish = expect_str(finish, f"{path}.finish_reason")

    def _call(self, choice: _Choice, item: Mapping[str, Any], path: str) -> None:
        index = item.get("index")
        if index is None:
            index = _unindexed(choice, item)
            if index is None:
                raise MalformedPayload(
                    "a delta for a tool call without index or id, none started",
                    f"{path}.index",
                )
        if type(index) is not int:
            raise MalformedPayload(
                f"invalid tool call index {_excerpt(index)}", f"{path}.index"
            )
        call = choice.calls.get(index)
        if call is None:
            function = item.get("function")
            named = isinstance(function, Mapping) and function.get("name")
            if not item.get("id") and not named:
                raise MalformedPayload(
                    f"a delta for tool call {index}, never started", f"{path}.index"
                )
            call = choice.calls[index] = {}
        _merge(
            call,
            {key: value for key, value in item.items() if key != "index"},
            path,
            self._grow,
        )

    def _body(
        self, mode: str, note: streams.Note
    ) -> tuple[Mapping[str, Any], dict[str, str]]:
        choices: list[dict[str, Any]] = []
        partial: dict[str, str] = {}
        for index in sorted(self._choices):
            choice = self._choices[index]
            message = {"role": "assistant", "content": None, **choice.message}
            if message.get("role") is None:
                message["role"] = "assistant"
            calls: list[dict[str, Any]] = []
            for number in sorted(choice.calls):
                call = choice.calls[number]
                function = call.get("function")
                if isinstance(function, dict):
                    arguments = function.get("arguments")
                    if mode != "final" and streams.unfinished(arguments):
                        if mode == "cut":
                            note(
                                f"choice {index}, tool call {number}",
                                "the arguments did not finish: call left out",
                            )
                            continue
                        partial[str(call.get("id"))] = arguments
                        call = {**call, "function": {**function, "arguments": "{}"}}
                calls.append(call)
            if calls:
                message["tool_calls"] = calls
            elif "tool_calls" in message:
                del message["tool_calls"]
            item: dict[str, Any] = {"index": index, "message": message}
            if choice.logprobs is not False:
                item["logprobs"] = choice.logprobs
            item["finish_reason"] = choice.finish
            item.update(choice.other)
            choices.append(item)
        body: dict[str, Any] = {**self._top, "choices": choices}
        if self._usage is not None or self._announced:
            body["usage"] = self._usage
        return body, partial


class OpenAIChat(streams.Streaming, _errors.ErrorNormalizing, WholeRequests):
    """The ``openai-chat`` normalizer (OpenAI Chat Completions); streams are read
    by :class:`OpenAIChatAccumulator` (chunks as dicts or ``ChatCompletionChunk``);
    whole requests by :mod:`canisters.providers.openai_chat_request`."""

    __slots__ = ()

    name = NAME
    """The provider name."""

    request_settings = openai_chat_request
    """The request settings module: the fields beside ``messages``."""

    # The module's parser itself, under its net: a method calling it would be
    # one more call on every body a gateway reads.
    parse_request = staticmethod(parse_request)

    def render_request(
        self, conversation: Conversation, **options: Any
    ) -> dict[str, Any]:
        """Render ``{"messages": [...]}``; see :class:`~canisters.providers.Options`."""
        return _paused(_render_request, conversation, options)

    def parse_response(self, body: Any) -> Conversation:
        """Read a response body or ``ChatCompletion`` object."""
        return parse_response(body)

    def render_response(
        self, conversation: Conversation, **options: Any
    ) -> dict[str, Any]:
        """Render a response body from a reply."""
        return render_response(conversation, **options)

    def accumulator(self) -> OpenAIChatAccumulator:
        """A fresh accumulator for one Chat Completions stream."""
        return OpenAIChatAccumulator()

    def __repr__(self) -> str:
        return f"<normalizer {NAME}>"


NORMALIZER = OpenAIChat()
"""The registered instance."""
