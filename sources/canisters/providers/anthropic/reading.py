"""Anthropic Messages blocks read into canisters (the general way), for
:mod:`.messages`, :mod:`.response` and :mod:`.fast`."""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime
from typing import Any, Final

import attrs

from ..._base64 import Encoded
from ..._frozen import EMPTY, FrozenDict, freeze
from ...canisters import Document, Invocation, Result, Supervisor
from ...content import _URL_SCHEME, File, Image, Reasoning, Text
from ...exceptions import MalformedPayload, _excerpt
from ...protocols import Canister, Content, Role
from .. import _common as common
from .._common import (
    expect_list,
    expect_mapping,
    expect_str,
    mine,
    new_assistant,
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
from .._rules import ids, kept
from .._rules.provided import register
from . import provided

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


_PROVIDED = frozenset(
    {"cited_text", "provider_tool_call", "provider_tool_result", "compaction"}
)


register(NAME, provided.native)


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
    title = block.get("title")
    if kind == "image" or type(title) is not str or source.get("type") == "text":
        # A title the part holds nowhere is kept with the block's other keys.
        rest = common.rest(block, _MEDIA_KEYS)
        return _parse_source(source, rest, path, kind, in_document)
    # A file's title (inside a tool result): its file name.
    part = _parse_source(source, common.rest(block, _DOCUMENT_KEYS), path, kind)
    assert isinstance(part, File)  # not a text source: a file
    return attrs.evolve(part, filename=title)


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
    if block.get("citations") and provided.cites(block):
        return provided.parse_cited(block, path, common.rest(block, _CITED_KEYS))
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


_CITED_KEYS = frozenset({"type", "text", "citations"})


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
        elif type(kind) is str and kind in provided.BLOCKS and provided.fits(block):
            message.parts.append(provided.parse_block(block, where))
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


# The extras of a message given as a list holding one unmarked text, as
# _mark_fresh makes them: by whether it followed a message of the same role.
_SPLIT: Final = FrozenDict({NAME: {"split": True}})


_LISTED: Final = {
    False: FrozenDict({NAME: {"content": "list"}}),
    True: FrozenDict({NAME: {"split": True, "content": "list"}}),
}


_TEXT_ROLES = (Role.User, Role.Assistant)


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
    if type(encoded) is not str or type(mime) is not str:
        return None
    if mime not in _SOURCE_TYPES["image"]:
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
