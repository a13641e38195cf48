"""OpenAI Chat Completions messages: the conversation of a request, both ways,
read and written the general way (see :mod:`.fast` for the common shapes)."""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime
from typing import Any

from ..._frozen import EMPTY, FrozenDict
from ...canisters import Result, now
from ...content import File
from ...conversation import Conversation
from ...exceptions import CanistersError, MalformedPayload, _excerpt
from ...protocols import Canister, Content
from .. import _common as common
from .._common import (
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
from .._rules import ids, kept, media
from .._rules.provided import register
from . import provided
from .rendering import (
    _render_messages,
)
from .wire import (
    AUDIO_FORMATS,
    BASE,
    MEDIA,
    MESSAGE_KEYS,
    NAME,
    TURN,
    WIRE_ROLE,
    Wire,
    default_form,
)


def declare(
    name: str,
    *,
    max_id: int | None = 40,
    part: tuple[str, ...] = (),
    references: frozenset[str] = frozenset(),
) -> None:
    """Declare the rules of the OpenAI Chat format ``name`` (the base or a
    dialect): its call ids (at most ``max_id`` characters: OpenAI's rule; a
    dialect's server may take any) and the wire keys it keeps verbatim (a
    dialect's own entries of a part, ``part``, and the keys among them only
    its server resolves, ``references``), with the shared concepts among them:
    cache_control (sent by clients aiming at Anthropic through a Chat gateway;
    OpenAI takes none) and an image's detail; and the cited texts it writes
    as its own (see :mod:`.provided`)."""
    register(name, provided.native_for(name))
    ids.declare(name, ids.IdRule(max_length=max_id), named_results=False)
    kept.declare(
        name,
        canister=("message", "call", "function"),
        part=("outer", "inner", *part),
        references=references,
        typed=frozenset({"annotations"}),
        spellings=(
            kept.Spelling(
                "cache_control", "part", "outer", "cache_control", sends=False
            ),
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


declare(NAME)

_REF = BASE.ref
_WIRE_ROLE = WIRE_ROLE
_MESSAGE_KEYS = MESSAGE_KEYS
_AUDIO_FORMATS = AUDIO_FORMATS
_TURN = TURN
_MEDIA = MEDIA
_extras = BASE.extras


# Parsing -----------------------------------------------------------------------------

# The general way checks every value it reads (and names the path of a bad one),
# so it builds parts and canisters through the trusted constructors too: attrs'
# converters and checks would only repeat those checks.


def _parse_part(raw: object, path: str, wire: Wire = BASE) -> Content:
    part = expect_mapping(raw, path)
    kind = part.get("type")
    if kind == "text":
        text = part.get("text")
        if type(text) is not str:
            text = expect_str(text, f"{path}.text")
        outer = common.rest(part, _TEXT_KEYS)
        return new_text(
            text, "text/plain", None, wire.extras(outer=outer) if outer else EMPTY
        )
    if kind == "refusal":
        text = expect_str(part.get("refusal"), f"{path}.refusal")
        extras = wire.extras(refusal="part", outer=common.rest(part, _REFUSAL_KEYS))
        return new_text(text, "text/plain", None, extras)
    if kind == "image_url":
        inner = expect_mapping(part.get("image_url"), f"{path}.image_url")
        url = common.expect_url(inner.get("url"), f"{path}.image_url.url")
        extras = wire.extras(
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
        extras = wire.extras(
            outer=common.rest(part, _AUDIO_KEYS),
            inner=common.rest(audio, _AUDIO_INNER_KEYS),
            raw=None if exact else encoded,
        )
        return new_audio(data, None, None, EMPTY, mime, None, None, extras)
    if kind == "file":
        return _parse_file(part, path, wire)
    if isinstance(kind, str):
        return common.opaque_part(wire.name, part)  # a type not known here, kept whole
    raise MalformedPayload(
        f"unknown content part type {_excerpt(kind)}", f"{path}.type"
    )


def _parse_file(part: Mapping[str, Any], path: str, wire: Wire) -> File:
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
        refs = FrozenDict(
            {wire.ref: expect_str(inner["file_id"], f"{path}.file.file_id")}
        )
    file_data = inner.get("file_data")
    data = url = mime = raw = linked = None
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
        elif file_data.startswith(("http:", "https:")):
            url = linked = file_data  # a URL, as OpenRouter takes one
        else:
            # Raw base64 without a data: prefix is what some clients send.
            data = common.b64decode_exact(file_data, f"{path}.file.file_data")[0]
            raw = file_data
    extras = (
        wire.extras(outer=outer, inner=inner_rest, raw=raw, url=linked is not None)
        if outer or inner_rest or raw or linked
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


def _parse_content(
    message: Mapping[str, Any], path: str, wire: Wire = BASE
) -> tuple[list[Content], str]:
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
        _parse_part(item, f"{path}.content[{index}]", wire)
        for index, item in enumerate(items)
    ], "list"


_default_form = default_form


def _form(parts: list[Content], form: str, role: str, wire: Wire = BASE) -> str | None:
    return None if form == default_form(parts, role, wire) else form


def parse_request(
    body: object,
    kept: list[Any] | None = None,
    *,
    fast: bool = True,
    wire: Wire = BASE,
) -> Conversation:
    """Read the ``messages`` of a Chat Completions request body (or SDK params);
    the normalizer guards the call. ``fast=False`` reads every message the
    general way (what the fast way must give, exactly). What it keeps unread
    goes to ``kept`` (see :func:`~canisters.providers._common.guarded_keeping`):
    a message read the general way, whole; from a message read the fast way,
    its other keys and a part read the general way. ``wire`` is the format
    read (a dialect's, see :mod:`.wire`); a dialect's is read the general way."""
    mapping = body if type(body) is dict else common.as_mapping(body)
    messages = mapping.get("messages")
    if type(messages) is not list:
        messages = expect_list(messages, "$.messages")
    canisters = _parse_messages(
        messages, [] if kept is None else kept, fast=fast and wire is BASE, wire=wire
    )
    return new_conversation(tuple(canisters))


def _parse_messages(
    messages: Any, kept: list[Any], *, fast: bool = True, wire: Wire = BASE
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
            append(new_assistant(moment, FrozenDict({wire.name: marks}), ()))
            continue
        extra = common.rest(message, known)
        if role == "assistant":
            canisters += _parse_assistant(
                message, path, extra, canisters, names, legacy, index, moment, wire
            )
            continue
        parts, form = _parse_content(message, path, wire)
        bound: dict[str, Any] = {}
        common.bind_parts(bound, parts)
        if role in ("system", "developer"):
            extras = wire.extras(
                role="developer" if role == "developer" else None,
                content=_form(parts, form, "system", wire),
                message=extra,
                **bound,
            )
            append(new_supervisor(moment, extras, tuple(parts)))
        elif role == "user":
            extras = wire.extras(
                content=_form(parts, form, "user", wire), message=extra, **bound
            )
            append(new_user(moment, extras, tuple(parts)))
        elif role == "tool":
            call_id = expect_str(message.get("tool_call_id"), f"{path}.tool_call_id")
            append(
                _result(
                    moment,
                    call_id,
                    names.get(call_id, ""),
                    parts,
                    form,
                    extra,
                    wire=wire,
                )
            )
        else:  # the deprecated "function" role answers a function_call
            name = expect_str(message.get("name"), f"{path}.name")
            waiting = legacy.get(name)
            call_id = (
                waiting.pop(0)
                if waiting
                else common.synthesize_id("call_", index, name)
            )
            append(
                _result(
                    moment, call_id, name, parts, form, extra, legacy=True, wire=wire
                )
            )
    if names:  # calls were read (each names its id), so results may wait on them
        common.mark_interposed(canisters, wire.name)
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
    wire: Wire = BASE,
) -> Result:
    error = None
    if parts and parts[0].type == "text" and not mine(parts[0], wire.name):
        text = parts[0].text  # type: ignore[attr-defined]
        error = common.decode_error_text(text)
        # Only text this module would write itself is read as an error.
        if error is not None and common.encode_error_text(error) == text:
            parts = parts[1:]
            form = "string" if form == "string" and not parts else form
        else:
            error = None
    default = (
        "string"
        if error is not None and not parts
        else default_form(parts, "tool", wire)
    )
    extras = wire.extras(
        content=None if form == default else form,
        message=extra,
        legacy=legacy or None,
        # Media parts of a tool message go back in place to this provider.
        in_place=any(part.type in _MEDIA for part in parts) or None,
    )
    bound: dict[str, Any] = {}
    common.bind_parts(bound, parts)
    if bound:
        extras = FrozenDict({wire.name: {**extras.get(wire.name, EMPTY), **bound}})
    result: Result = new_result(moment, extras, call_id, name, tuple(parts), error)
    return result


_REFUSAL_FIELD = BASE.refusal_field
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
    wire: Wire = BASE,
) -> list[Canister]:
    parts, form = _parse_content(message, path, wire)
    # The form of the content itself, without a refusal given as a field.
    default = default_form(parts, "assistant", wire)
    if "annotations" in extra:  # url citations make their text parts cited
        provided.cite(parts, extra["annotations"], wire.name)
    if wire.read is not None:  # a dialect's reasoning comes first
        parts[:0] = wire.read(extra, path)
    refusal = extra.get("refusal")
    if isinstance(refusal, str):
        del extra["refusal"]
        parts.append(new_text(refusal, "text/plain", None, wire.refusal_field))
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
        made.append(new_assistant(moment, wire.extras(**message_marks), tuple(parts)))
    else:
        # The message's marks ride on its first call.
        previous = before[-1].role if before else None
        tool, values, identifier, marks = calls[0]
        marks = {**marks, **message_marks, "split": previous in _TURN}
        calls[0] = (tool, values, identifier, marks)
    for tool, values, identifier, marks in calls:
        made.append(
            new_invocation(moment, wire.extras(**marks), tool, values, identifier)
        )
    return made


def _with_extras(
    canister: Canister, values: Mapping[str, Any], wire: Wire = BASE
) -> Canister:
    import attrs

    extras = common.with_marks(canister.extras, wire.name, values)
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
    other = common.rest(function, _FUNCTION_KEYS)
    absent = None
    if text is None:
        # null or left out, as OpenRouter sends a call without arguments
        arguments = EMPTY
        if "arguments" in function:
            other["arguments"] = None
        else:
            absent = True
    elif arguments is None:
        value, kept = common.parse_arguments(text, f"{path}.function.arguments")
        arguments = FrozenDict(value) if value else EMPTY
    names[call_id] = name
    marks = {
        "arguments": kept,
        "blank": kept == "",
        "call": common.rest(call, _CALL_KEYS) if "type" in call else {"type": None},
        "function": other,
        "absent": absent,
    }
    return name, arguments, call_id, marks


def render_request(
    conversation: Conversation,
    options: Mapping[str, Any],
    *,
    fast: bool = True,
    wire: Wire = BASE,
) -> dict[str, Any]:
    """Render ``{"messages": [...]}`` for a Chat Completions request;
    ``fast=False`` renders every message the general way
    (what the fast way must give, exactly). ``wire`` is the format written
    (a dialect's, see :mod:`.wire`); a dialect's is written the general way."""
    opts = common.options_from(options)
    # Provided parts settled once, before a trial (whose notes it would lose).
    name = wire.name
    given = common.settle_provided(
        common.canisters_given(conversation, name), opts, name
    )
    one_pass = _one_pass[0] if fast and wire is BASE else None
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
    canisters, own, *_ = common.request_canisters(given, opts, name, adjacent=True)
    if one_pass is not None and not own:
        return {"messages": one_pass._render_plain_messages(canisters, opts)}
    return {"messages": _render_messages(canisters, opts, wire)}


# The one-pass path (:mod:`.fast`) builds on this module's helpers, so this module
# never imports it: it registers itself here when loaded (its package loads it).
_one_pass: list[Any] = []


def _register_one_pass(module: Any) -> None:
    """Read and write the common shapes with ``module`` (:mod:`.fast`)."""
    _one_pass[:] = [module]


class Messages:
    """The conversation fields of one OpenAI Chat format, as
    :class:`~canisters.providers.kit.BaseNormalizer` takes them (its
    ``messages``): :func:`parse_request` and :func:`render_request` for
    ``wire``, the general way."""

    __slots__ = ("wire",)

    def __init__(self, wire: Wire) -> None:
        self.wire = wire

    def parse_request(self, body: object, kept: list[Any]) -> Conversation:
        """Read the ``messages`` of a request body of the format."""
        return parse_request(body, kept, fast=False, wire=self.wire)

    def render_request(
        self, conversation: Conversation, options: Mapping[str, Any]
    ) -> dict[str, Any]:
        """Render ``{"messages": [...]}`` in the format."""
        return render_request(conversation, options, fast=False, wire=self.wire)
