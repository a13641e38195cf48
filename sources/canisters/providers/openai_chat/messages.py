"""OpenAI Chat Completions messages: the conversation of a request, both ways,
read and written the general way (see :mod:`.fast` for the common shapes)."""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime
from typing import Any

from ..._frozen import EMPTY, FrozenDict
from ...canisters import Result, now
from ...content import File, Text
from ...conversation import Conversation
from ...exceptions import CanistersError, MalformedPayload, _excerpt
from ...protocols import Canister, Content, Role
from .. import _common as common
from .._common import (
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
from .._rules import documents, ids, kept, media, thinking

NAME = "openai-chat"
"""The provider name."""

# Rule of the API: a call id is at most 40 characters.
ids.declare(NAME, ids.IdRule(max_length=40), named_results=False)

# The wire keys kept verbatim, and the shared concepts among them: cache_control
# (sent by clients aiming at Anthropic through a Chat gateway; OpenAI takes none)
# and an image's detail.
kept.declare(
    NAME,
    canister=("message", "call", "function"),
    part=("outer", "inner"),
    spellings=(
        kept.Spelling("cache_control", "part", "outer", "cache_control", sends=False),
        kept.Spelling(
            "cache_control", "canister", "message", "cache_control", sends=False
        ),
        kept.Spelling(
            "detail",
            "part",
            "inner",
            "detail",
            read=media.detail_of,
            default=media.DETAIL_DEFAULT,
            kinds=frozenset({"image"}),
        ),
    ),
)

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
_AUDIO_FORMATS = {
    "audio/wav": "wav",
    "audio/x-wav": "wav",
    "audio/wave": "wav",
    "audio/mpeg": "mp3",
    "audio/mp3": "mp3",
}


_TURN = (Role.Assistant, Role.Invocation)
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


def parse_request(
    body: object, kept: list[Any] | None = None, *, fast: bool = True
) -> Conversation:
    """Read the ``messages`` of a Chat Completions request body (or SDK params);
    the normalizer guards the call. ``fast=False`` reads every message the
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
    keeps unread goes to ``kept`` (see :func:`parse_request`)."""
    canisters: list[Canister] = []
    names: dict[str, str] = {}
    legacy: dict[str, list[str]] = {}
    append = canisters.append
    one_pass = _one_pass[0] if fast else None
    # The canisters of one body share the moment it was read.
    moment = now()
    for index, raw in enumerate(messages):
        # The common shapes are built here; anything else, the general way below.
        if one_pass is not None and type(raw) is dict:
            built = one_pass._parse_plain(raw, moment, canisters, names, index, kept)
            if built is not None:
                if type(built) is list:
                    canisters += built
                else:
                    append(built)
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
                return {"type": "text", "text": thinking.as_text(part)}
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
            elif reference is None or common.inline_data(part) is not None:
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
    if canister.role is Role.Document:
        canister = documents.as_user_content(
            canister, renderer.options, NAME, common.describe(index, canister)
        )
    parts = canister.content  # type: ignore[attr-defined]
    rendered = renderer.parts(index, canister, parts, wire)
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


def render_request(
    conversation: Conversation, options: Mapping[str, Any], *, fast: bool = True
) -> dict[str, Any]:
    """Render ``{"messages": [...]}`` for a Chat Completions request;
    ``fast=False`` renders every message the general way
    (what the fast way must give, exactly)."""
    opts = common.options_from(options)
    given = common.canisters_given(conversation, NAME)
    one_pass = _one_pass[0] if fast else None
    if one_pass is not None:
        trial = common.trial_options(opts)
        if trial is not None:
            try:
                messages = one_pass._render_plain_messages(given, trial, trial=True)
            except CanistersError:  # given again by the usual way, or not at all
                messages = None
            if messages is not None:
                common.adopt(opts, trial)
                return {"messages": messages}
    canisters, own, *_ = common.request_canisters(given, opts, NAME, adjacent=True)
    if one_pass is not None and not own:
        return {"messages": one_pass._render_plain_messages(canisters, opts)}
    return {"messages": _render_messages(canisters, opts)}


# The one-pass path (:mod:`.fast`) builds on this module's helpers, so this module
# never imports it: it registers itself here when loaded (its package loads it).
_one_pass: list[Any] = []


def _register_one_pass(module: Any) -> None:
    """Read and write the common shapes with ``module`` (:mod:`.fast`)."""
    _one_pass[:] = [module]
