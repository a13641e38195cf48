"""Anthropic Messages conversation fields: ``system`` and ``messages``, both ways."""

from __future__ import annotations

import operator
from collections.abc import Mapping, Sequence
from datetime import datetime
from typing import Any, Final

import attrs

from ..._base64 import Encoded
from ..._frozen import EMPTY, FrozenDict, freeze
from ...canisters import Document, Invocation, Result, Supervisor, now
from ...content import _URL_SCHEME, File, Image, Reasoning, Text
from ...conversation import Conversation
from ...exceptions import CanistersError, MalformedPayload, _excerpt
from ...protocols import Canister, Content, Role
from .. import _common as common
from .._common import (
    SUPERVISOR,
    Labeler,
    Options,
    expect_list,
    expect_mapping,
    expect_str,
    mine,
    new_assistant,
    new_conversation,
    new_document,
    new_file,
    new_image,
    new_invocation,
    new_reasoning,
    new_result,
    new_supervisor,
    new_text,
    new_user,
    plain_text,
)
from .._rules import ids, kept, thinking

__all__ = ["NAME", "parse_request", "render_request"]

NAME = "anthropic"

# Rule of the API: tool ids match ^[a-zA-Z0-9_-]+$ (render_tool_id applies it
# to a conversation alone too).
ids.declare(NAME, ids.SAFE_CHARACTERS, named_results=False)

# The wire keys kept verbatim; cache markers from another format go where
# Anthropic reads them: on a block.
kept.declare(
    NAME,
    canister=("message", "block"),
    part=("block", "source"),
    quiet={"is_error": False},
    spellings=(
        kept.Spelling("cache_control", "part", "block", "cache_control"),
        kept.Spelling(
            "cache_control",
            "canister",
            "block",
            "cache_control",
            kinds=frozenset({"invocation", "result", "document"}),
        ),
    ),
)
"""The provider name."""

_WIRE_ROLE = {
    Role.Supervisor: "system",
    Role.User: "user",
    Role.Document: "user",
    Role.Result: "user",
    Role.Assistant: "assistant",
    Role.Invocation: "assistant",
}
# Blocks with no neutral meaning, kept opaque so that they go back to Anthropic.
_OPAQUE = frozenset(
    {
        "server_tool_use",
        "web_search_tool_result",
        "web_fetch_tool_result",
        "code_execution_tool_result",
        "bash_code_execution_tool_result",
        "text_editor_code_execution_tool_result",
        "tool_search_tool_result",
        "mcp_tool_use",
        "mcp_tool_result",
        "container_upload",
        "search_result",
    }
)
_IMAGE_TYPES = frozenset({"image/jpeg", "image/png", "image/gif", "image/webp"})
_extras = common.marker(NAME)


def _with(canister: Canister, **values: Any) -> Canister:
    merged = {**mine(canister, NAME), **values}
    extras = common.with_marks(canister.extras, NAME, merged)
    return attrs.evolve(canister, extras=extras)  # type: ignore[misc]


def _mark_fresh(canister: Canister, values: dict[str, Any]) -> None:
    """:func:`_with`, in place, for a canister the parser has just built and
    nobody else holds: its extras are set as attrs' converter would set them,
    without building the canister a second time."""
    if not canister.extras:  # most canisters: the marks alone
        kept = {key: value for key, value in values.items() if value}
        if kept:
            object.__setattr__(canister, "extras", FrozenDict({NAME: kept}))
        return
    merged = {**mine(canister, NAME), **values}
    extras = common.with_marks(canister.extras, NAME, merged)
    object.__setattr__(canister, "extras", freeze(extras))


# Parsing -----------------------------------------------------------------------------

_TEXT_KEYS = frozenset({"type", "text"})
_MEDIA_KEYS = frozenset({"type", "source"})
_DOCUMENT_KEYS = frozenset({"type", "source", "title"})
_TOOL_USE_KEYS = frozenset({"type", "id", "name", "input"})
_TOOL_RESULT_KEYS = frozenset({"type", "tool_use_id", "content", "is_error"})
_THINKING_KEYS = frozenset({"type", "thinking", "signature"})
_REDACTED_KEYS = frozenset({"type", "data"})
_BASE64_KEYS = frozenset({"type", "data", "media_type"})
# The media types each source takes (the API's enumerations): another is
# refused where it is, not carried to a format that would not say it.
_SOURCE_TYPES: Final = {
    "image": frozenset({"image/jpeg", "image/png", "image/gif", "image/webp"}),
    "document": frozenset({"application/pdf"}),
    "text": frozenset({"text/plain"}),
}


def _media_type(value: object, kind: str, where: str) -> str:
    """``value``, a media type the ``kind`` of source takes."""
    mime = expect_str(value, where)
    allowed = _SOURCE_TYPES[kind]
    if mime not in allowed:
        raise MalformedPayload(f"expected one of {', '.join(sorted(allowed))}", where)
    return mime


_URL_KEYS = frozenset({"type", "url"})
_FILE_KEYS = frozenset({"type", "file_id"})
_CONTENT_KEYS = frozenset({"type", "content"})


# The parser builds every part and canister through the trusted constructors
# (see common.new_user): it checks each value itself, so attrs' converters and
# checks would only repeat it. The property tests hold each one equal to what
# its public constructor makes of the same fields.


def _media(
    kind: str,
    extras: FrozenDict[str, Any],
    data: bytes | Encoded | None = None,
    url: str | None = None,
    refs: FrozenDict[str, str] = EMPTY,
    mime: str | None = None,
) -> Content:
    """``Image(...)`` or ``File(...)`` (``kind``) of one checked source."""
    if kind == "image":
        image: Image = new_image(data, url, None, refs, mime, None, None, extras)
        return image
    file: File = new_file(data, url, None, refs, mime, None, None, extras, None)
    return file


def _parse_media(
    block: Mapping[str, Any], path: str, kind: str, *, in_document: bool = False
) -> Content:
    """An ``image`` block, or a ``document`` block as a part (inside tool results
    or, ``in_document``, inside a :class:`Document`, where a text source is a
    text part by definition and so unmarked)."""
    source = expect_mapping(block.get("source"), f"{path}.source")
    rest = common.rest(block, _MEDIA_KEYS if kind == "image" else _DOCUMENT_KEYS)
    return _parse_source(source, rest, path, kind, in_document)


def _parse_source(
    source: Mapping[str, Any],
    rest: dict[str, Any],
    path: str,
    kind: str,
    in_document: bool = False,
) -> Content:
    """The part of an image or document ``source`` (at ``path``.source), its
    block's other keys ``rest`` kept (see :func:`_parse_media`)."""
    source_type = source.get("type")
    spath = f"{path}.source"
    if source_type == "base64":
        encoded = expect_str(source.get("data"), f"{spath}.data")
        mime = source.get("media_type")
        if mime is not None:
            mime = _media_type(mime, kind, f"{spath}.media_type")
        data, exact = common.b64read_exact(encoded, f"{spath}.data")
        extras = _extras(
            block=rest,
            source=common.rest(source, _BASE64_KEYS),
            raw=None if exact else encoded,
        )
        return _media(kind, extras, data=data, mime=mime)
    if source_type == "url":
        url = common.expect_url(source.get("url"), f"{spath}.url")
        extras = _extras(block=rest, source=common.rest(source, _URL_KEYS))
        return _media(kind, extras, url=url)
    if source_type == "file":
        file_id = expect_str(source.get("file_id"), f"{spath}.file_id")
        extras = _extras(block=rest, source=common.rest(source, _FILE_KEYS))
        return _media(kind, extras, refs=FrozenDict({NAME: file_id}))
    if source_type == "text" and kind == "document":
        text = expect_str(source.get("data"), f"{spath}.data")
        mime = source.get("media_type", "text/plain")
        part: Text = new_text(
            text,
            _media_type(mime, "text", f"{spath}.media_type"),
            None,
            _extras(
                block=rest,
                document=not in_document,
                source=common.rest(source, _BASE64_KEYS),
                no_media_type="media_type" not in source,
            ),
        )
        return part
    raise MalformedPayload(
        f"unknown source type {_excerpt(source_type)}", f"{spath}.type"
    )


def _parse_text(block: Mapping[str, Any], path: str) -> Text:
    text = expect_str(block.get("text"), f"{path}.text")
    if text:
        cached = _cached(block)  # type and text, and cache_control or not
        if cached is not None:
            return (
                plain_text(text)
                if cached is EMPTY
                else new_text(text, _PLAIN, None, cached)
            )
    # An empty text block, left out when rendering from elsewhere (the API refuses
    # it), goes back to Anthropic as it came.
    part: Text = new_text(
        text,
        _PLAIN,
        None,
        _extras(block=common.rest(block, _TEXT_KEYS), empty=not text),
    )
    return part


_PLAIN: Final = "text/plain"


def _parse_document(block: Mapping[str, Any], path: str, moment: datetime) -> Document:
    source = expect_mapping(block.get("source"), f"{path}.source")
    title = block.get("title")
    title = expect_str(title, f"{path}.title") if title is not None else None
    block_rest = common.rest(block, _DOCUMENT_KEYS)
    if "title" in block and block["title"] is None:
        block_rest["title"] = None
    if source.get("type") == "content":
        items = expect_list(source.get("content"), f"{path}.source.content")
        if isinstance(source.get("content"), str):
            raise MalformedPayload("expected an array", f"{path}.source.content")
        parts: list[Content] = []
        for number, raw in enumerate(items):
            where = f"{path}.source.content[{number}]"
            item = expect_mapping(raw, where)
            if item.get("type") == "text":
                parts.append(_parse_text(item, where))
            elif item.get("type") == "image":
                parts.append(_parse_media(item, where, "image"))
            else:
                raise MalformedPayload(
                    f"unknown block type {_excerpt(item.get('type'))}", where
                )
        extras = _extras(
            block=block_rest,
            source=common.rest(source, _CONTENT_KEYS),
            content_source=True,
        )
        document: Document = new_document(moment, extras, tuple(parts), title, None)
        return document
    part = _parse_source(source, {}, path, "document", in_document=True)
    extras = _extras(block=block_rest)
    document = new_document(moment, extras, (part,), title, None)
    return document


def _parse_result(
    block: Mapping[str, Any], path: str, names: Mapping[str, str], moment: datetime
) -> Result:
    call_id = block.get("tool_use_id")
    if type(call_id) is not str:
        call_id = expect_str(call_id, f"{path}.tool_use_id")
    rest = (
        {}
        if _TOOL_RESULT_KEYS.issuperset(block)
        else common.rest(block, _TOOL_RESULT_KEYS)
    )
    flagged = block.get("is_error")
    if flagged is not True and "is_error" in block:
        rest["is_error"] = flagged
    parts: list[Content] = []
    opaque: list[list[Any]] = []  # search_result blocks and the like
    form = "absent"
    if "content" in block:
        value = block["content"]
        if isinstance(value, str):
            parts, form = [_string_text(value)], "string"
        else:
            form = "list"
            for number, raw in enumerate(expect_list(value, f"{path}.content")):
                if type(raw) is dict and len(raw) == 2 and raw.get("type") == "text":
                    text = raw.get("text")
                    if type(text) is str and text:  # what _parse_text gives
                        parts.append(plain_text(text))
                        continue
                where = f"{path}.content[{number}]"
                item = expect_mapping(raw, where)
                kind = item.get("type")
                if kind == "text":
                    parts.append(_parse_text(item, where))
                elif kind == "image":
                    parts.append(_plain_image(item) or _parse_media(item, where, kind))
                elif kind == "document":
                    parts.append(_parse_media(item, where, kind))
                elif type(kind) is str:  # kept whole, known (_OPAQUE) or not
                    opaque.append([len(parts), dict(item)])
                else:
                    raise MalformedPayload(
                        f"unknown block type {_excerpt(kind)}", f"{where}.type"
                    )
    error = None
    if flagged is True:
        if (
            parts
            and parts[0].type == "text"
            and mine(parts[0], NAME).keys() <= {"empty"}
            and not (opaque and opaque[0][0] == 0)  # a block kept whole first
        ):
            error = common.decode_error_text(parts[0].text, flagged=True)  # type: ignore[attr-defined]
            parts = parts[1:]
        else:
            error = common.decode_error_text("", flagged=True)
            rest["empty_error"] = True
    # The marks, as _extras makes them (in its order, the falsy left out).
    kept: dict[str, Any] = {}
    if rest:
        kept["block"] = rest
    if error is None and len(parts) == 1 and type(only := parts[0]) is Text:
        # What _result_form tells of one text: a string unless it is marked.
        default = "list" if only.extras else "string"
    else:
        default = _result_form(error, parts)
    if form != default:
        kept["content"] = form
    # sanitize_tool_id's first test inline: most ids pass it.
    if not (call_id.isascii() and call_id.isidentifier()):
        unfit = common.unfit_tool_id(call_id)
        if unfit:
            kept["id"] = unfit
    if opaque:
        kept["opaque"] = opaque
        _bind(kept, [item for _, item in opaque])
    extras = FrozenDict({NAME: kept}) if kept else EMPTY
    result: Result = new_result(
        moment, extras, call_id, names.get(call_id, ""), tuple(parts), error
    )
    return result


def _string_text(value: str) -> Text:
    """The part of a string given as content: an empty one is marked, to go back
    to Anthropic as it came."""
    if value:
        return plain_text(value)
    part: Text = new_text(value, "text/plain", None, _EMPTY_MARK)
    return part


_EMPTY_MARK: Final = FrozenDict({NAME: {"empty": True}})


def _result_form(error: Any, parts: list[Content] | tuple[Content, ...]) -> str:
    count = len(parts) + (1 if error is not None else 0)
    if count == 0:
        return "list"
    if count == 1 and (
        error is not None or (parts[0].type == "text" and not mine(parts[0], NAME))
    ):
        return "string"
    return "list"


class _Message:
    """Collects the canisters one wire message turns into."""

    def __init__(self, role: str, moment: datetime) -> None:
        self.role = role
        self.moment = moment
        self.canisters: list[Canister] = []
        self.parts: list[Content] = []
        self.opaque: list[tuple[int, Any]] = []

    def flush(self) -> None:
        if self.parts or self.opaque:
            build = new_assistant if self.role == "assistant" else new_user
            extras = _message_extras(self.opaque)
            self.canisters.append(build(self.moment, extras, tuple(self.parts)))
            self.parts = []
            self.opaque = []

    def add(self, canister: Canister) -> None:
        self.flush()
        self.canisters.append(canister)


def _message_extras(opaque: list[tuple[int, Any]]) -> FrozenDict[str, Any]:
    """The extras of a user or assistant canister holding the ``opaque`` blocks
    (server-tool blocks and the like) read among its parts, at their positions."""
    if not opaque:
        return EMPTY
    marks: dict[str, Any] = {"opaque": [[pos, block] for pos, block in opaque]}
    _bind(marks, [block for _, block in opaque])
    return FrozenDict({NAME: marks})


def _bind(marks: dict[str, Any], blocks: list[Mapping[str, Any]]) -> None:
    """Mark ``marks`` as holding the opaque ``blocks``: they go back to Anthropic
    only, and those of a type this module does not know follow the
    ``unsupported`` option elsewhere (see :func:`common.bind`)."""
    types = {block["type"] for block in blocks}
    common.bind(marks, sorted(types & _OPAQUE), unknown=False)
    common.bind(marks, sorted(types - _OPAQUE))


def _parse_reasoning(block: Mapping[str, Any], path: str) -> Reasoning:
    """A ``thinking`` or ``redacted_thinking`` block."""
    reasoning: Reasoning
    if block.get("type") == "thinking":
        reasoning = new_reasoning(
            expect_str(block.get("thinking"), f"{path}.thinking"),
            expect_str(block.get("signature"), f"{path}.signature"),
            None,
            NAME,
            None,
            _extras(block=common.rest(block, _THINKING_KEYS)),
        )
    else:
        reasoning = new_reasoning(
            "",
            None,
            expect_str(block.get("data"), f"{path}.data"),
            NAME,
            None,
            _extras(block=common.rest(block, _REDACTED_KEYS)),
        )
    return reasoning


def _parse_use(block: Mapping[str, Any], path: str, moment: datetime) -> Invocation:
    """A ``tool_use`` block."""
    call_id = expect_str(block.get("id"), f"{path}.id")
    name = expect_str(block.get("name"), f"{path}.name")
    arguments = expect_mapping(block.get("input"), f"{path}.input")
    extras = _extras(
        block=common.rest(block, _TOOL_USE_KEYS), id=common.unfit_tool_id(call_id)
    )
    frozen = FrozenDict(arguments) if arguments else EMPTY
    invocation: Invocation = new_invocation(moment, extras, name, frozen, call_id)
    return invocation


def _parse_blocks(
    role: str, value: Any, path: str, names: dict[str, str], moment: datetime
) -> tuple[list[Canister], str]:
    if isinstance(value, str):
        build = new_assistant if role == "assistant" else new_user
        return [build(moment, EMPTY, (plain_text(value),))], "string"
    blocks = expect_list(value, f"{path}.content")
    message = _Message(role, moment)
    for number, raw in enumerate(blocks):
        where = f"{path}.content[{number}]"
        block = expect_mapping(raw, where)
        kind = block.get("type")
        if kind == "text":
            message.parts.append(_parse_text(block, where))
        elif kind == "image":
            message.parts.append(
                _plain_image(block) or _parse_media(block, where, "image")
            )
        elif kind == "thinking" or kind == "redacted_thinking":
            message.parts.append(_parse_reasoning(block, where))
        elif kind == "document" and role == "user":
            message.add(_parse_document(block, where, moment))
        elif kind == "tool_use":
            invocation = _parse_use(block, where, moment)
            names[invocation.invocation_id] = invocation.name
            message.add(invocation)
        elif kind == "tool_result":
            message.add(_parse_result(block, where, names, moment))
        elif type(kind) is str:  # kept whole, known (_OPAQUE) or not
            message.opaque.append((len(message.parts), dict(block)))
        else:
            raise MalformedPayload(
                f"unknown block type {_excerpt(kind)}", f"{where}.type"
            )
    message.flush()
    return message.canisters, "list"


def _parse_system(value: Any, moment: datetime) -> Supervisor:
    supervisor: Supervisor
    if isinstance(value, str):
        supervisor = new_supervisor(moment, EMPTY, (plain_text(value),))
        return supervisor
    parts: list[Content] = []
    opaque: list[list[Any]] = []
    for number, raw in enumerate(expect_list(value, "$.system")):
        where = f"$.system[{number}]"
        block = expect_mapping(raw, where)
        kind = block.get("type")
        if kind != "text":
            if type(kind) is not str:
                raise MalformedPayload(f"unknown block type {_excerpt(kind)}", where)
            opaque.append([len(parts), dict(block)])  # kept whole
            continue
        parts.append(_parse_text(block, where))
    listed = opaque or _system_form(parts) != "list"
    marks: dict[str, Any] = {"system": "list"} if listed else {}
    if opaque:
        marks["opaque"] = opaque
        _bind(marks, [block for _, block in opaque])
    extras = FrozenDict({NAME: marks}) if marks else EMPTY
    supervisor = new_supervisor(moment, extras, tuple(parts))
    return supervisor


def _system_form(parts: list[Content] | tuple[Content, ...]) -> str:
    if len(parts) == 1 and parts[0].type == "text" and not mine(parts[0], NAME):
        return "string"
    return "list"


_MESSAGE_KEYS = frozenset({"role", "content"})
# The extras of a message given as a list holding one unmarked text, as
# _mark_fresh makes them: by whether it followed a message of the same role.
_SPLIT: Final = FrozenDict({NAME: {"split": True}})
_LISTED: Final = {
    False: FrozenDict({NAME: {"content": "list"}}),
    True: FrozenDict({NAME: {"split": True, "content": "list"}}),
}
_TEXT_ROLES = (Role.User, Role.Assistant)


def parse_request(
    body: object, kept: list[Any] | None = None, *, fast: bool = True
) -> Conversation:
    """Read ``system`` and ``messages`` of a Messages request body (or SDK
    params); the normalizer guards the call. ``fast=False`` reads every message the
    general way (what the fast way must give, exactly). What it keeps unread
    goes to ``kept`` (see :func:`~canisters.providers._common.guarded_keeping`):
    the system prompt or a message read the general way, whole; from a message
    read the fast way, a block read the general way and a call's arguments."""
    if kept is None:
        kept = []
    mapping = body if type(body) is dict else common.as_mapping(body)
    one_pass = _one_pass[0] if fast and _one_pass else None
    canisters: list[Canister] = []
    # The canisters the fast way builds share the moment the body was read.
    moment = now()
    if "system" in mapping and mapping["system"] is not None:
        system = mapping["system"]
        if fast and type(system) is str:
            canisters.append(new_supervisor(moment, EMPTY, (plain_text(system),)))
        elif (
            one_pass is not None
            and (supervisor := one_pass._plain_system(system, moment, kept)) is not None
        ):
            canisters.append(supervisor)
        else:
            kept.append(system)
            canisters.append(_parse_system(system, moment))
    names: dict[str, str] = {}
    previous: str | None = None
    for index, raw in enumerate(expect_list(mapping.get("messages"), "$.messages")):
        if one_pass is not None and type(raw) is dict and len(raw) == 2:
            # A user or assistant message of blocks, built the fast way (see
            # _parse_plain).
            role, content = raw.get("role"), raw.get("content")
            items = (
                one_pass._parse_plain(
                    role, content, moment, names, previous == role, kept
                )
                if content and (role == "user" or role == "assistant")
                else None
            )
            if items is not None:
                canisters += items
                previous = role
                continue
        path = f"$.messages[{index}]"
        kept.append(raw)
        message = expect_mapping(raw, path)
        if "role" not in message:
            raise MalformedPayload("missing role", path)
        role = message["role"]
        if role not in ("user", "assistant", "system"):
            raise MalformedPayload(f"unknown role {_excerpt(role)}", f"{path}.role")
        if "content" not in message:
            raise MalformedPayload("missing content", path)
        extra = common.rest(message, _MESSAGE_KEYS)
        if role == "system":
            supervisor = _parse_system(message["content"], moment)
            _mark_fresh(supervisor, {"in_messages": True, "message": extra})
            canisters.append(supervisor)
            previous = role
            continue
        content = message["content"]
        items, form = _parse_blocks(role, content, path, names, moment)
        if not items:
            build = new_assistant if role == "assistant" else new_user
            items = [build(moment, EMPTY, ())]
        default = _message_form(items)
        marks: dict[str, Any] = {"message": extra, "split": previous == role}
        if form != default:
            marks["content"] = form
        if not content:
            marks["empty"] = True  # "" or []: given back to Anthropic as it came
        if any(marks.values()) or mine(items[0], NAME):
            _mark_fresh(items[0], marks)
        canisters.extend(items)
        previous = role
    if names:  # the body held calls (each named as it was read)
        common.mark_interposed(canisters, NAME)
    return new_conversation(tuple(canisters))


def _cached(block: Mapping[str, Any]) -> FrozenDict[str, Any] | None:
    """The extras of a block of ``type`` and one other key when its third key
    is ``cache_control`` (as :func:`_parse_text` and :func:`_parse_media` keep
    it); ``{}`` when it has only the two; ``None`` for anything else."""
    size = len(block)
    if size == 2:
        return EMPTY
    if size == 3 and "cache_control" in block:
        return FrozenDict({NAME: {"block": {"cache_control": block["cache_control"]}}})
    return None


def _plain_image(block: Mapping[str, Any]) -> Image | None:
    """An ``image`` block from a URL or base64 in its one spelling, built as
    :func:`_parse_media` builds it; ``None`` for any other shape."""
    source = block.get("source")
    extras = EMPTY if len(block) == 2 else _cached(block)
    if extras is None or type(source) is not dict:
        return None
    kind = source.get("type")
    image: Image
    if kind == "url" and len(source) == 2:
        url = source.get("url")
        if type(url) is not str or _URL_SCHEME.match(url) is None:
            return None
        image = new_image(None, url, None, EMPTY, None, None, None, extras)
        return image
    if kind != "base64" or len(source) != 3:
        return None
    encoded, mime = source.get("data"), source.get("media_type")
    if type(encoded) is not str or mime not in _SOURCE_TYPES["image"]:
        return None
    try:
        data, exact = common.b64read_exact(encoded)
    except MalformedPayload:
        return None  # refused the general way, at its path
    if not exact:
        return None
    image = new_image(data, None, None, EMPTY, mime, None, None, extras)
    return image


def _message_form(items: list[Canister]) -> str:
    if len(items) != 1 or items[0].role not in _TEXT_ROLES:
        return "list"
    only = items[0]
    if mine(only, NAME).get("opaque"):
        return "list"
    parts = only.content  # type: ignore[attr-defined]
    if len(parts) == 1 and parts[0].type == "text" and not mine(parts[0], NAME):
        return "string"
    return "list"


# Rendering ---------------------------------------------------------------------------


class _Renderer:
    """State of one render: options and media labels."""

    def __init__(self, options: Options) -> None:
        self.options = options
        self.labels = Labeler(options)
        self.kept: set[int] = set()  # empty messages parsed from Anthropic

    def unsupported(self, where: str, reason: str) -> dict[str, Any] | None:
        text = common.unsupported(self.options, NAME, where, reason)
        return None if text is None else {"type": "text", "text": text}

    def parts(
        self,
        index: int,
        canister: Canister,
        parts: tuple[Content, ...],
        wire: str,
        *,
        in_result: bool = False,
    ) -> list[dict[str, Any]]:
        rendered: list[dict[str, Any]] = []
        opaque = mine(canister, NAME).get("opaque") or ()
        pending = sorted(((pos, block) for pos, block in opaque), key=lambda x: x[0])
        for number, part in enumerate(parts):
            while pending and pending[0][0] <= number:
                rendered.append(dict(pending.pop(0)[1]))
            if type(part) is Text and not part.extras:
                # Plain text, the common case: what part() gives, without the rest.
                if part.text:
                    rendered.append({"type": "text", "text": part.text})
                else:
                    self.empty_text(index, canister, number, part)
                continue
            where = common.describe(index, canister, number, part)
            label = self.labels.label(part)
            if label is not None:
                rendered.append({"type": "text", "text": label.text})
            item = self.part(part, where, wire, in_result)
            if item is not None:
                rendered.append(item)
        rendered.extend(dict(block) for _, block in pending)
        return rendered

    def empty_text(
        self, index: int, canister: Canister, number: int, part: Content
    ) -> None:
        # Rule: text content blocks must be non-empty.
        where = common.describe(index, canister, number, part)
        self.options.note("dropped", NAME, where, "empty text block")

    def part(
        self, part: Content, where: str, wire: str, in_result: bool
    ) -> dict[str, Any] | None:
        extras = mine(part, NAME)
        block = dict(extras.get("block") or {})
        kind = part.type
        if kind == "text":
            if extras.get("document"):
                return self.text_document(part, extras)
            if not part.text and not block and not extras.get("empty"):  # type: ignore[attr-defined]
                # Rule: text content blocks must be non-empty.
                self.options.note("dropped", NAME, where, "empty text block")
                return None
            return {"type": "text", "text": part.text, **block}  # type: ignore[attr-defined]
        if kind == "reasoning":
            if wire != "assistant":
                return self.unsupported(where, "reasoning outside an assistant turn")
            action = common.reasoning_action(
                part, NAME, self.options, where, native=True
            )
            if action == "native":
                if part.redacted is not None:  # type: ignore[attr-defined]
                    return {"type": "redacted_thinking", "data": part.redacted, **block}  # type: ignore[attr-defined]
                return {
                    "type": "thinking",
                    "thinking": part.text,  # type: ignore[attr-defined]
                    "signature": part.signature,  # type: ignore[attr-defined]
                    **block,
                }
            if action == "text":
                return {"type": "text", "text": thinking.as_text(part)}
            return None
        if wire != "user":
            # Rule: assistant turns and the system prompt hold text only.
            return self.unsupported(where, f"{kind} in an {wire} turn")
        if kind == "image":
            source = self.source(part, where, _IMAGE_TYPES, "image")
            if source is None or _is_placeholder(source):
                return source
            return {"type": "image", "source": source, **block}
        if kind == "file":
            media: Any = part
            if (
                media.mime_type
                and media.mime_type.startswith("text/")
                and media.data is not None
            ):
                try:
                    text = media.data.decode("utf-8")
                except UnicodeDecodeError:
                    text = None
                if text is not None:
                    return {
                        "type": "document",
                        "source": {
                            "type": "text",
                            "media_type": "text/plain",
                            "data": text,
                        },
                        **block,
                    }
            source = self.source(
                part, where, frozenset({"application/pdf"}), "document"
            )
            if source is None or _is_placeholder(source):
                return source
            return {"type": "document", "source": source, **block}
        return self.unsupported(where, f"{kind} content")

    def text_document(self, part: Any, extras: Mapping[str, Any]) -> dict[str, Any]:
        source: dict[str, Any] = {"type": "text", "media_type": part.mime_type}
        if extras.get("no_media_type"):
            del source["media_type"]
        source["data"] = part.text
        source.update(extras.get("source") or {})
        return {"type": "document", "source": source, **(extras.get("block") or {})}

    def source(
        self, part: Any, where: str, types: frozenset[str], kind: str
    ) -> dict[str, Any] | None:
        extras = mine(part, NAME)
        more = dict(extras.get("source") or {})
        reference = part.refs.get(NAME)
        if (
            reference is not None
            and common.inline_data(part) is None
            and part.url is None
        ):
            return {"type": "file", "file_id": reference, **more}
        url = part.url
        if url is not None and url.startswith(("http:", "https:")):
            return {"type": "url", "url": url, **more}
        data = common.media_bytes(part, self.options)
        if data is None:
            if reference is not None:
                return {"type": "file", "file_id": reference, **more}
            return self.unsupported(
                where, f"{kind} needs bytes, an http(s) URL or a file id"
            )
        mime = common.media_mime(part, data)
        if mime not in types:
            sniffed = common.sniff_mime(data)
            if sniffed in types:
                mime = sniffed
            else:
                return self.unsupported(where, f"{kind} of type {mime}")
        raw = extras.get("raw")
        encoded = (
            raw
            if isinstance(raw, str) and common.b64decode_exact(raw)[0] == data
            else common.b64encode(data)
        )
        source: dict[str, Any] = {"type": "base64", "media_type": mime, "data": encoded}
        if part.mime_type is None and "media_type" in more:
            pass
        source.update(more)
        return source


def _render_document(
    renderer: _Renderer, index: int, document: Canister
) -> list[dict[str, Any]]:
    extras = mine(document, NAME)
    block = dict(extras.get("block") or {})
    title = document.title  # type: ignore[attr-defined]
    if title is not None:
        block["title"] = title
    parts = document.content  # type: ignore[attr-defined]
    if extras.get("content_source") or len(parts) != 1:
        items = renderer.parts(index, document, parts, "user")
        if not all(item.get("type") in ("text", "image") for item in items):
            return [
                item if item.get("type") != "document" else {**item, **block}
                for item in items
            ]
        source = {"type": "content", "content": items, **(extras.get("source") or {})}
        return [{"type": "document", "source": source, **block}]
    part = parts[0]
    where = common.describe(index, document, 0, part)
    if part.type == "text":
        rendered = renderer.text_document(part, mine(part, NAME))
        rendered.update(block)
        return [rendered]
    item = renderer.part(part, where, "user", False)
    if item is None:
        return []
    if item.get("type") == "image":
        return [item]
    if item.get("type") == "document":
        item.update(block)
    return [item]


def _render_result(renderer: _Renderer, index: int, result: Canister) -> dict[str, Any]:
    extras = mine(result, NAME)
    block: dict[str, Any] = {
        "type": "tool_result",
        "tool_use_id": common.render_tool_id(
            result.invocation_id,  # type: ignore[attr-defined]
            extras.get("id"),
            renderer.options,
            NAME,
            index,
            result,
        ),
    }
    parts = renderer.parts(index, result, result.content, "user", in_result=True)  # type: ignore[attr-defined]
    error = result.error  # type: ignore[attr-defined]
    rest = dict(extras.get("block") or {})
    empty_error = rest.pop("empty_error", False)
    if error is not None and not empty_error:
        parts.insert(
            0, {"type": "text", "text": common.encode_error_text(error, compact=True)}
        )
    form = extras.get("content") or _result_form(
        error if not empty_error else None,
        result.content,  # type: ignore[attr-defined]
    )
    if form == "string" and len(parts) == 1 and parts[0]["type"] == "text":
        block["content"] = parts[0]["text"]
    elif form != "absent" or parts:
        block["content"] = parts
    if error is not None:
        block["is_error"] = True
    block.update(rest)
    return block


def _render_turn(
    renderer: _Renderer, index: int, role: str, group: list[Canister]
) -> dict[str, Any]:
    head = group[0]
    extras = mine(head, NAME)
    blocks: list[dict[str, Any]] = []
    for offset, canister in enumerate(group):
        at = index + offset
        kind = canister.role
        if kind is Role.Invocation:
            arguments = canister.arguments  # type: ignore[attr-defined]
            own = mine(canister, NAME)
            blocks.append(
                {
                    "type": "tool_use",
                    "id": common.render_tool_id(
                        canister.invocation_id,  # type: ignore[attr-defined]
                        own.get("id"),
                        renderer.options,
                        NAME,
                        at,
                        canister,
                    ),
                    "name": canister.name,  # type: ignore[attr-defined]
                    "input": {**arguments},
                    **(own.get("block") or {}),
                }
            )
        elif kind is Role.Result:
            blocks.append(_render_result(renderer, at, canister))
        elif kind is Role.Document:
            blocks.extend(_render_document(renderer, at, canister))
        elif not (offset == 0 and extras.get("empty") and _all_empty(canister)):
            blocks.extend(renderer.parts(at, canister, canister.content, role))  # type: ignore[attr-defined]
    message: dict[str, Any] = {"role": role}
    form = extras.get("content") or _message_form(group)
    if extras.get("empty") and not blocks:
        # An empty message parsed from Anthropic goes back as it came.
        message["content"] = "" if form == "string" else []
        renderer.kept.add(id(message))
    elif (
        form == "string"
        and len(blocks) == 1
        and blocks[0]["type"] == "text"
        and len(blocks[0]) == 2
    ):
        message["content"] = blocks[0]["text"]
    else:
        message["content"] = blocks
    message.update(extras.get("message") or {})
    return message


def _all_empty(canister: Canister) -> bool:
    """Tell whether a canister holds nothing but empty texts."""
    return all(
        part.type == "text" and not part.text
        for part in canister.content  # type: ignore[attr-defined]
    )


def _render_system(
    renderer: _Renderer, index: int, supervisor: Canister, *, string_ok: bool
) -> Any:
    content = supervisor.content  # type: ignore[attr-defined]
    if string_ok and len(content) == 1 and not supervisor.extras:
        part = content[0]
        if type(part) is Text and not part.extras and part.text:
            return part.text  # what the rest gives for one plain text, sooner
    blocks = renderer.parts(index, supervisor, supervisor.content, "system")  # type: ignore[attr-defined]
    extras = mine(supervisor, NAME)
    form = extras.get("system") or (
        _system_form(supervisor.content) if string_ok else "list"  # type: ignore[attr-defined]
    )
    if form == "string" and len(blocks) == 1 and len(blocks[0]) == 2:
        return blocks[0]["text"]
    return blocks


def render_request(
    conversation: Conversation, options: Mapping[str, Any], *, fast: bool = True
) -> dict[str, Any]:
    """Render ``{"system": ..., "messages": [...]}`` for a Messages request.

    Supervisors become the top-level ``system`` (a string, or text blocks when
    there are several or they carry ``cache_control``); consecutive turns of one
    role are merged, as Anthropic requires alternating roles. ``fast=False``
    renders every message the general way (what the fast way must give,
    exactly)."""
    opts = common.options_from(options)
    given = common.canisters_given(conversation, NAME)
    # A trial (see OpenAI chat) renders the messages before the system prompt:
    # not with media labels, which are numbered in the order they are written.
    one_pass = _one_pass[0] if fast and _one_pass else None
    trial = (
        None if one_pass is None or opts.media_labels else common.trial_options(opts)
    )
    messages = None
    supervisors: list[int] = []
    if trial is not None:
        renderer = _Renderer(trial)
        try:
            messages = one_pass._render_plain_messages(  # type: ignore[union-attr]
                renderer, given, trial=True, supervisors=supervisors
            )
        except CanistersError:  # given again by the usual way, or not at all
            messages = None
    if messages is not None:
        # Without extras, every supervisor goes to the top-level system prompt.
        canisters, own = given, False
        system = [(index, given[index]) for index in supervisors]
        if trial is not opts:  # the trial's renderer noted to the trial's report
            renderer = _Renderer(opts)
    else:
        renderer = _Renderer(opts)
        canisters, own, supervisors, _ = common.request_canisters(
            given, opts, NAME, adjacent=True
        )
        system = [
            (index, canisters[index])
            for index in supervisors
            if _top_level(canisters[index])
        ]
    for number, (index, canister) in enumerate(system):
        if index != number:  # other canisters came before
            opts.note(
                "moved",
                NAME,
                common.describe(index, canister),
                "instructions moved to the top-level system prompt",
            )
    body: dict[str, Any] = {}
    if system:
        if len(system) == 1:
            body["system"] = _render_system(
                renderer, system[0][0], system[0][1], string_ok=True
            )
        else:
            blocks: list[dict[str, Any]] = []
            for index, supervisor in system:
                blocks.extend(
                    _render_system(renderer, index, supervisor, string_ok=False)
                )
            body["system"] = blocks
    if messages is not None:
        common.adopt(opts, trial)  # type: ignore[arg-type]
        body["messages"] = messages
    elif one_pass is not None and not own:
        body["messages"] = one_pass._render_plain_messages(renderer, canisters)
    else:
        body["messages"] = _without_empty(
            _render_messages(renderer, canisters), opts, renderer.kept
        )
    return body


def _top_level(supervisor: Canister) -> bool:
    """Tell whether a supervisor goes into the top-level ``system``."""
    return not mine(supervisor, NAME).get("in_messages")


def _render_messages(
    renderer: _Renderer, canisters: Sequence[Canister]
) -> list[dict[str, Any]]:
    """The messages, the general way: any extras, any canister."""
    rest = [
        (index, canister)
        for index, canister in enumerate(canisters)
        if not (canister.role is SUPERVISOR and _top_level(canister))
    ]
    messages: list[dict[str, Any]] = []
    positions = {id(canister): index for index, canister in rest}
    joins = common.joins_alternating(NAME)
    for role, group in common.group_turns(
        [canister for _, canister in rest], lambda c: _WIRE_ROLE[c.role], joins
    ):
        index = positions[id(group[0])]
        if role == "system":
            extras = mine(group[0], NAME)
            message = {
                "role": "system",
                "content": _render_system(renderer, index, group[0], string_ok=True),
            }
            message.update(extras.get("message") or {})
            messages.append(message)
            continue
        messages.append(_render_turn(renderer, index, role, group))
    return messages


_CONTENT = operator.itemgetter("content")


def _without_empty(
    messages: list[dict[str, Any]],
    options: Options,
    keep: set[int] | frozenset[int] = frozenset(),
) -> list[dict[str, Any]]:
    """Leave out messages with no content, but a final assistant one and those
    in ``keep`` (ids of empty messages parsed from Anthropic, given back).

    Rule: every message needs non-empty content except an optional final
    assistant message. The neighbours of a dropped message merge when they share
    a role.
    """
    last = len(messages) - 1
    if all(map(_CONTENT, messages)) or all(
        message["content"]
        or (number == last and message["role"] == "assistant")
        or id(message) in keep
        for number, message in enumerate(messages)
    ):
        return messages
    kept: list[dict[str, Any]] = []
    for number, message in enumerate(messages):
        if (
            message["content"]
            or (number == last and message["role"] == "assistant")
            or id(message) in keep
        ):
            previous = kept[-1] if kept else None
            if previous is not None and previous["role"] == message["role"]:
                previous["content"] = _blocks(previous["content"]) + _blocks(
                    message["content"]
                )
            else:
                kept.append(message)
            continue
        options.note(
            "dropped",
            NAME,
            f"message {number} ({message['role']})",
            "message with no content",
        )
    return kept


def _blocks(content: Any) -> list[Any]:
    return [{"type": "text", "text": content}] if isinstance(content, str) else content


def _is_placeholder(item: Mapping[str, Any]) -> bool:
    """Tell a placeholder text block from a media source."""
    return item.get("type") == "text" and "data" not in item


# The one-pass paths (.fast) for the common shapes, registered by that module
# when the package loads it: this module never imports it.
_one_pass: list[Any] = []


def _register_one_pass(module: Any) -> None:
    """Let the general path use ``module``'s one-pass paths."""
    _one_pass[:] = [module]
