"""OpenAI Chat Completions messages of the common shapes, read and written in
one pass, as :mod:`.messages` reads and writes them the general way."""

from __future__ import annotations

import sys
from collections.abc import Sequence
from datetime import datetime
from typing import Any

from ..._frozen import EMPTY, FrozenDict
from ...canisters import Result
from ...content import _URL_SCHEME, Image, Text
from ...exceptions import CanistersError
from ...protocols import Canister, Content
from .. import _common as common
from .messages import (
    _MESSAGE_KEYS,
    _TURN,
    _extras,
    _form,
    _parse_part,
    _register_one_pass,
    _result,
)
from .rendering import _render_assistant, _render_plain, _render_result, _Renderer
from .wire import NAME

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
    ``kept`` (see :func:`~.messages.parse_request`).

    The shapes: a system, developer, user, assistant or tool message whose
    content is a string, ``null`` or a list of parts (text parts and images
    read here, any other part as :func:`_parse_part` reads it), with any other
    key kept as the general way keeps it; an assistant message may carry tool
    calls of the canonical shape (``id``, ``type: "function"``, ``function``
    with a name and JSON arguments), and no refusal text, annotations (its
    url citations make cited texts) or legacy ``function_call``.
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
            canister = plain[0](moment, extras, (common.plain_text(content),))
            return canister
    elif type(content) is list and size == 2 and role == "user":
        listed_parts = _plain_parts(content, index, kept)
        if listed_parts is None:
            return None
        parts = listed_parts
        # The list form is the default but for a lone text (see _default_form).
        listed = len(parts) == 1 and type(parts[0]) is Text and not parts[0].extras
        canister = common.new_user(moment, _LISTED if listed else EMPTY, tuple(parts))
        return canister
    known = _MESSAGE_KEYS.get(role)
    if known is None or role == "function":
        return None
    if type(content) is str:
        parts = [common.plain_text(content)]
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
            result: Result = common.new_result(
                moment, EMPTY, call_id, name, (parts[0],), None
            )
            return result
        return _result(moment, call_id, name, parts, form, extra)
    build = common.new_user if role == "user" else common.new_supervisor
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
    "user": (common.new_user, EMPTY),
    "system": (common.new_supervisor, EMPTY),
    "developer": (common.new_supervisor, _DEVELOPER),
    "assistant": (common.new_assistant, EMPTY),
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
    if extra and (extra.get("refusal") is not None or extra.get("annotations")):
        return None  # a refusal text, made a part; citations, made cited texts
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
            return common.new_assistant(moment, extras, (parts[0],))
        extras = _extras(content=_form(parts, form, "assistant"), message=extra)
        canister: Canister = common.new_assistant(moment, extras, tuple(parts))
        return canister
    if type(calls) is not list or not calls:
        return None
    made: list[Canister] = []
    if form == "string" and not extra:
        made.append(common.new_assistant(moment, EMPTY, (parts[0],)))
    elif parts or form != "null":
        extras = _extras(content=_form(parts, form, "assistant"), message=extra)
        made.append(common.new_assistant(moment, extras, tuple(parts)))
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
        arguments = common.compact_arguments(text)
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
        made.append(common.new_invocation(moment, extras, tool, arguments, identifier))
    names.update(found)
    return made


def _plain_parts(
    content: list[Any], index: int, kept: list[Any] | None = None
) -> list[Content] | None:
    """The parts of a message's list ``content``: text parts and images read here
    as :func:`_parse_part` reads them, any other part by it (and given to
    ``kept``, see :func:`~.messages.parse_request`); ``None`` when a part is of a type
    not known here (the general way marks the canister holding it)."""
    parts: list[Content] = []
    for number, part in enumerate(content):
        if type(part) is dict and len(part) == 2:
            kind = part.get("type")
            if kind == "text":
                text = part.get("text")
                if type(text) is str:
                    parts.append(common.plain_text(text))
                    continue
            elif kind == "image_url":
                image = _plain_image(part.get("image_url"))
                if image is not None:
                    parts.append(image)
                    continue
        if kept is not None:
            kept.append(part)
        read = _parse_part(part, f"$.messages[{index}].content[{number}]")
        if type(read) is Text and not read.text and "raw" in common.mine(read, NAME):
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
        image = common.new_image(None, url, None, EMPTY, None, None, None, extras)
    else:
        image = common.new_image(
            decoded[1], None, None, EMPTY, decoded[0], None, None, extras
        )
    return image


def _render_plain_messages(
    canisters: Sequence[Canister],
    options: common.Options,
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
        if kind is common.INVOCATION:
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
        if kind is common.RESULT:
            identifier = canister.invocation_id  # type: ignore[attr-defined]
            if trial:
                if canister.extras:
                    return None
                answered = invoked.get(identifier)
                if answered is not False:  # an orphan, or a second result
                    return None
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
        if kind is common.ASSISTANT:
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
        if kind is common.USER:
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
        elif kind is common.SUPERVISOR:
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
        wire = "system" if kind is common.SUPERVISOR else "user"
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
            data, mime = common.inline_data(part), part.mime_type  # type: ignore[attr-defined]
            if data is None or not mime:
                return None
            url = common.data_url(mime, data)
        rendered.append({"type": "image_url", "image_url": {"url": url}})
    return rendered or None


_register_one_pass(sys.modules[__name__])
