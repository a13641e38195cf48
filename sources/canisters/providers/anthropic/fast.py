"""Anthropic Messages: one-pass paths for the common shapes (messages of text,
calls, results and images without other keys, a system prompt of text blocks),
giving exactly what the general path of :mod:`.messages` gives; the general
path never imports this module, which registers itself with it."""

from __future__ import annotations

import sys
from collections.abc import Mapping, Sequence
from datetime import datetime
from typing import Any, Final

from ..._frozen import EMPTY, FrozenDict
from ...canisters import Result, Supervisor
from ...content import Image, Reasoning, Text
from ...exceptions import MalformedPayload
from ...protocols import Canister, Content
from .. import _common as common
from .._common import (
    ASSISTANT,
    DOCUMENT,
    INVOCATION,
    RESULT,
    SUPERVISOR,
    USER,
    mine,
    new_assistant,
    new_invocation,
    new_reasoning,
    new_result,
    new_supervisor,
    new_user,
    plain_text,
)
from . import provided
from .messages import _register_one_pass
from .reading import (
    _IMAGE_TYPES,
    _LISTED,
    _SPLIT,
    NAME,
    _mark_fresh,
    _message_extras,
    _parse_document,
    _parse_media,
    _parse_reasoning,
    _parse_result,
    _parse_text,
    _parse_use,
    _plain_image,
)
from .writing import _render_document, _render_result, _Renderer, _without_empty


def _parse_plain(
    role: Any,
    content: Any,
    moment: datetime,
    names: dict[str, str],
    split: bool,
    kept: list[Any],
) -> list[Canister] | None:
    """The canisters of a message's ``content``, built and marked as
    :func:`parse_request` builds and marks them the general way (``split``:
    the message follows one of the same role), when it is a string or a list
    of blocks each a ``dict``; ``None`` for anything else, and for anything
    :func:`_parse_blocks` refuses (which it then refuses at its path). A block
    read through those readers, or kept whole, goes to ``kept``, and so do the
    arguments of a call read inline (see :func:`parse_request`).

    The commonest blocks (texts, tool calls with ids that fit Anthropic's
    pattern and no other key, images from a URL or in canonical base64) are
    read inline, the others through :func:`_parse_blocks`' own readers. Tool
    calls are read from the assistant only and tool results from the user
    only, so that no result pairs with a call of its own message.
    """
    build = new_assistant if role == "assistant" else new_user
    if type(content) is str:
        return [build(moment, _SPLIT if split else EMPTY, (plain_text(content),))]
    if type(content) is not list:
        return None
    if len(content) == 1:  # most often a text block
        block = content[0]
        if type(block) is dict and len(block) == 2 and block.get("type") == "text":
            text = block.get("text")
            if type(text) is str and text:
                # A list holding one unmarked text, marked so (see _message_form).
                return [build(moment, _LISTED[split], (plain_text(text),))]
    made: list[Canister] = []
    parts: list[Content] = []
    opaque: list[tuple[int, Any]] = []
    found: list[tuple[str, str]] = []
    fit = common.sanitize_tool_id
    user = role == "user"
    try:
        for block in content:
            if type(block) is not dict:
                return None
            kind = block.get("type")
            canister: Canister
            if kind == "text":
                text = block.get("text")
                if type(text) is not str:
                    return None
                if text and len(block) == 2:
                    parts.append(plain_text(text))
                else:
                    kept.append(block)
                    parts.append(_parse_text(block, ""))
                continue
            if kind == "tool_result" and user:
                answer = _plain_answer(block, names, moment)
                if answer is None:
                    kept.append(block)
                    answer = _parse_result(block, "", names, moment)
                canister = answer
            elif kind == "tool_use" and not user:
                call_id, name = block.get("id"), block.get("name")
                arguments = block.get("input")
                if (
                    len(block) == 4
                    and type(call_id) is str
                    and type(name) is str
                    and type(arguments) is dict
                    # sanitize_tool_id's first test inline: most ids pass it
                    and (
                        (call_id.isascii() and call_id.isidentifier())
                        or fit(call_id) == call_id
                    )
                ):
                    if arguments:
                        kept.append(arguments)
                        frozen = FrozenDict(arguments)
                    else:
                        frozen = EMPTY
                    canister = new_invocation(moment, EMPTY, name, frozen, call_id)
                else:
                    kept.append(block)
                    canister = _parse_use(block, "", moment)
                found.append((canister.invocation_id, canister.name))
            elif kind == "image":
                image = _plain_image(block)
                if image is None or len(block) != 2:  # cache_control, kept
                    kept.append(block)
                parts.append(image or _parse_media(block, "", "image"))
                continue
            elif kind == "thinking" or kind == "redacted_thinking":
                thinking, signature = block.get("thinking"), block.get("signature")
                if (
                    kind == "thinking"
                    and len(block) == 3
                    and type(thinking) is str
                    and type(signature) is str
                ):
                    # A thinking block and nothing else: what _parse_reasoning gives.
                    parts.append(
                        new_reasoning(thinking, signature, None, NAME, None, EMPTY)
                    )
                else:
                    kept.append(block)
                    parts.append(_parse_reasoning(block, ""))
                continue
            elif kind == "document" and user:
                kept.append(block)
                canister = _parse_document(block, "", moment)
            elif type(kind) is str and kind in provided.BLOCKS and provided.fits(block):
                kept.append(block)
                parts.append(provided.parse_block(block, ""))
                continue
            elif type(kind) is str and kind != "document":
                kept.append(block)
                opaque.append((len(parts), dict(block)))
                continue
            else:
                return None
            if parts or opaque:
                extras = _message_extras(opaque) if opaque else EMPTY
                made.append(build(moment, extras, tuple(parts)))
                parts = []
                opaque = []
            made.append(canister)
    except MalformedPayload:
        return None  # refused the general way, at its path
    if parts or opaque:
        if not made and not opaque and len(parts) == 1:
            only = parts[0]
            if type(only) is Text and not only.extras:
                # A list holding one unmarked text, marked so (see _message_form).
                return [build(moment, _LISTED[split], (only,))]
        made.append(build(moment, _message_extras(opaque), tuple(parts)))
    names.update(found)
    if split:
        # The first canister is marked: a result keeps the form of its own
        # content under "content", which only a lone text is marked with.
        _mark_fresh(made[0], {"split": True})
    return made


def _plain_answer(
    block: dict[str, Any], names: Mapping[str, str], moment: datetime
) -> Result | None:
    """A ``tool_result`` block of the commonest shapes, built as
    :func:`_parse_result` builds it: a string, or a list of texts (pydantic-ai's
    form), with ``is_error: false`` or without it, none empty, answering a call
    whose id passes :func:`~canisters.providers._common.sanitize_tool_id`'s
    first test; ``None`` for any other."""
    call_id, value = block.get("tool_use_id"), block.get("content")
    flagged = len(block) == 4 and block.get("is_error") is False
    if (
        (len(block) != 3 and not flagged)
        or type(call_id) is not str
        or not (call_id.isascii() and call_id.isidentifier())
    ):
        return None
    if type(value) is str:
        if not value:
            return None
        parts: tuple[Content, ...] = (plain_text(value),)
        listed = False
    elif type(value) is list and value:
        texts = []
        for item in value:
            if type(item) is not dict or len(item) != 2 or item.get("type") != "text":
                return None
            text = item.get("text")
            if type(text) is not str or not text:
                return None
            texts.append(plain_text(text))
        parts, listed = tuple(texts), len(texts) == 1
    else:
        return None
    name = names.get(call_id, "")
    result: Result = new_result(
        moment, _ANSWER_MARKS[flagged, listed], call_id, name, parts, None
    )
    return result


# The marks _parse_result gives an answer of texts, by whether it carried
# "is_error": false and whether it was a list of one text (its default form
# being a string).
_ANSWER_MARKS: Final = {
    (False, False): EMPTY,
    (False, True): FrozenDict({NAME: {"content": "list"}}),
    (True, False): FrozenDict({NAME: {"block": {"is_error": False}}}),
    (True, True): FrozenDict({NAME: {"block": {"is_error": False}, "content": "list"}}),
}


def _plain_system(
    value: object, moment: datetime, kept: list[Any]
) -> Supervisor | None:
    """A ``system`` list of text blocks as :func:`_parse_system` reads it, when
    each is a ``dict`` whose text is a string; ``None`` otherwise. A block of
    other keys goes to ``kept`` (see :func:`parse_request`)."""
    if type(value) is not list or not value:
        return None
    parts: list[Content] = []
    for block in value:
        if type(block) is not dict or block.get("type") != "text":
            return None
        text = block.get("text")
        if type(text) is not str:
            return None
        if text and len(block) == 2:
            parts.append(plain_text(text))
        else:
            kept.append(block)
            parts.append(_parse_text(block, ""))
    # What _system_form tells: one unmarked text is marked as given as a list.
    listed = len(parts) == 1 and not parts[0].extras
    supervisor: Supervisor = new_supervisor(
        moment, _LISTED_SYSTEM if listed else EMPTY, tuple(parts)
    )
    return supervisor


_LISTED_SYSTEM: Final = FrozenDict({NAME: {"system": "list"}})


def _render_plain_messages(
    renderer: _Renderer,
    canisters: Sequence[Canister],
    *,
    trial: bool = False,
    supervisors: list[int] | None = None,
) -> list[dict[str, Any]] | None:
    """What :func:`_render_messages` and :func:`_without_empty` give when no
    canister has Anthropic extras, in one pass.

    Without extras, turns of one wire role always merge and a message's content is
    a string only when it is one user or assistant canister holding one text.
    Plain texts, invocations, plain results, user texts and images and assistant
    texts and signed thinking are written here; everything else goes through the
    general functions, with the index they get there (the first canister's index
    plus the offset in its turn, supervisors left out).
    The positions of the supervisors go to ``supervisors``, when given.

    A message that is one canister holding one text gets the text as its content
    at once, and its list of blocks back when another canister joins it.
    """
    messages: list[dict[str, Any]] = []
    blocks: list[dict[str, Any]] = []
    message: dict[str, Any] = {}
    role = ""
    at = offset = 0
    string = False  # the open message's content is a string, for now
    found = [] if supervisors is None else supervisors
    empty = False  # some message may be left without content
    invoked: dict[str, bool] = {}  # in a trial: the invocations, whether answered
    waiting = 0  # in a trial: how many of them are not answered yet
    for index, canister in enumerate(canisters):
        # Each role has its own branch reading the canister's fields: Python reads
        # an attribute faster where it always meets one class. Not _WIRE_ROLE[kind]:
        # an enum member hashes through a Python call.
        kind = canister.role
        if kind is INVOCATION:
            identifier = canister.invocation_id  # type: ignore[attr-defined]
            if trial:
                if canister.extras:
                    return None
                if identifier not in invoked:
                    invoked[identifier] = False
                    waiting += 1
            wire = "assistant"
        elif kind is RESULT:
            identifier = canister.invocation_id  # type: ignore[attr-defined]
            if trial:
                if canister.extras:
                    return None
                answered = invoked.get(identifier)
                if answered is not False:  # an orphan, or a second result
                    return None
                invoked[identifier] = True
                waiting -= 1
            wire = "user"
        elif kind is ASSISTANT:
            if trial and canister.extras:
                return None
            content = canister.content  # type: ignore[attr-defined]
            wire = "assistant"
        elif kind is USER:
            if trial and (waiting or canister.extras):
                # Between calls and their results, the usual way moves it.
                return None
            content = canister.content  # type: ignore[attr-defined]
            wire = "user"
        elif kind is SUPERVISOR:
            if trial and canister.extras:
                return None
            found.append(index)
            continue  # in the top-level system: without extras, every one is
        else:  # a document
            if trial and canister.extras:
                return None
            wire = "user"
        if wire == role:
            offset += 1
            at += 1
            if string:
                message["content"] = blocks
                string = False
        else:
            blocks = []
            message = {"role": wire, "content": blocks}
            messages.append(message)
            role = wire
            at = index
            offset = 0
        if kind is INVOCATION:
            # Most ids fit as they are (sanitize_tool_id's first test), else:
            if not (identifier.isascii() and identifier.isidentifier()):
                identifier = common.render_tool_id(
                    identifier, None, renderer.options, NAME, at, canister
                )
            blocks.append(
                {
                    "type": "tool_use",
                    "id": identifier,
                    "name": canister.name,  # type: ignore[attr-defined]
                    "input": {**canister.arguments},  # type: ignore[attr-defined]
                }
            )
        elif kind is RESULT:
            content = canister.content  # type: ignore[attr-defined]
            part = content[0] if len(content) == 1 else None
            if (
                type(part) is Text
                and not part.extras
                and part.text
                and canister.error is None  # type: ignore[attr-defined]
            ):
                if not (identifier.isascii() and identifier.isidentifier()):
                    identifier = common.render_tool_id(
                        identifier, None, renderer.options, NAME, at, canister
                    )
                blocks.append(
                    {
                        "type": "tool_result",
                        "tool_use_id": identifier,
                        "content": part.text,
                    }
                )
            else:
                blocks.append(_render_result(renderer, at, canister))
        elif kind is DOCUMENT:
            blocks.extend(_render_document(renderer, at, canister))
            empty = empty or not blocks
        else:
            part = content[0] if len(content) == 1 else None
            if type(part) is Text and not part.extras and part.text:
                text = part.text
                blocks.append({"type": "text", "text": text})
                if not offset:
                    message["content"] = text
                    string = True
                continue
            rendered = _plain_blocks(content, wire)
            if rendered is not None:
                blocks.extend(rendered)
            else:
                blocks.extend(renderer.parts(at, canister, content, wire))
                empty = empty or not blocks
                if (
                    not offset
                    and part is not None
                    and part.type == "text"
                    and not mine(part, NAME)
                ):
                    _string_content(message, blocks)
                    string = message["content"] is not blocks
    if trial and waiting:
        return None
    return _without_empty(messages, renderer.options) if empty else messages


_URL_SCHEMES = ("http:", "https:")  # what an image URL is sent as


def _plain_blocks(parts: tuple[Content, ...], wire: str) -> list[dict[str, Any]] | None:
    """The blocks of a canister holding ``parts``, when they are non-empty texts
    and, in a user turn, images without extras or hint, or, in an assistant
    turn, thinking Anthropic signed (or redacted), written as
    :meth:`_Renderer.parts` writes them (an image by its http(s) URL, else its
    bytes when its media type is one Anthropic takes; thinking as it came);
    ``None`` when there is no part or another one."""
    blocks: list[dict[str, Any]] = []
    user = wire == "user"
    for part in parts:
        kind = type(part)
        if part.extras:
            return None
        if kind is Text:
            if not part.text:  # type: ignore[attr-defined]
                return None  # dropped, and reported, by the general way
            blocks.append({"type": "text", "text": part.text})  # type: ignore[attr-defined]
            continue
        if not user:
            # An extended-thinking turn: its blocks go back to Anthropic as they
            # came; anything else is decided (and reported) by the general way.
            if kind is not Reasoning or part.provider != NAME:  # type: ignore[attr-defined]
                return None
            if part.redacted is not None:  # type: ignore[attr-defined]
                blocks.append({"type": "redacted_thinking", "data": part.redacted})  # type: ignore[attr-defined]
            elif part.signature is not None:  # type: ignore[attr-defined]
                blocks.append(
                    {
                        "type": "thinking",
                        "thinking": part.text,  # type: ignore[attr-defined]
                        "signature": part.signature,  # type: ignore[attr-defined]
                    }
                )
            else:
                return None
            continue
        if kind is not Image or part.hint is not None:  # type: ignore[attr-defined]
            return None
        url = part.url  # type: ignore[attr-defined]
        if url is not None and url.startswith(_URL_SCHEMES):
            source = {"type": "url", "url": url}
        else:
            data, mime = common.inline_data(part), part.mime_type  # type: ignore[attr-defined]
            if data is None or mime not in _IMAGE_TYPES:
                return None
            encoded = common.b64encode(data)
            source = {"type": "base64", "media_type": mime, "data": encoded}
        blocks.append({"type": "image", "source": source})
    return blocks or None


def _string_content(message: dict[str, Any], blocks: list[dict[str, Any]]) -> None:
    """Send a message's content as a string when it is one bare text block."""
    if len(blocks) == 1 and blocks[0]["type"] == "text" and len(blocks[0]) == 2:
        message["content"] = blocks[0]["text"]


_register_one_pass(sys.modules[__name__])
