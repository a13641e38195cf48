"""OpenAI Responses: one-pass paths for the common shapes (message items of
text, function calls of compact JSON, string outputs, a reasoning model's
turns), giving exactly what the general path of :mod:`.messages` gives; the
general path never imports this module, which registers itself with it."""

from __future__ import annotations

import sys
from typing import Any

from ..._frozen import EMPTY
from ...canisters import Result
from ...content import Reasoning, Text
from ...protocols import Canister
from .._common import (
    ASSISTANT,
    DOCUMENT,
    INVOCATION,
    RESULT,
    compact_arguments,
    decode_error_text,
    new_invocation,
    new_result,
    new_text,
    plain_text,
    render_arguments,
)
from .messages import _register_one_pass
from .reading import _OUTPUT_TEXT, _ROLES, _parse_part, _Parser, _plain
from .wire import NAME
from .writing import _PLAIN_ROLE, _Renderer


def _plain_parts(content: list[Any], index: int) -> list[Any]:
    """The parts of a message item's list ``content``: text parts without other
    keys read here as :func:`_parse_part` reads them, any other part by it."""
    parts: list[Any] = []
    for number, part in enumerate(content):
        if type(part) is dict and len(part) == 2:
            kind = part.get("type")
            text = part.get("text")
            if type(text) is str:
                if kind == "input_text":
                    parts.append(plain_text(text))
                    continue
                if kind == "output_text":
                    parts.append(new_text(text, "text/plain", None, _OUTPUT_TEXT))
                    continue
        parts.append(_parse_part(part, f"$.input[{index}].content[{number}]"))
    return parts


def _plain_item(parser: _Parser, index: int, item: dict[str, Any]) -> bool:
    """Read ``item`` when it has one of the common shapes, as :meth:`_Parser.item`
    would read it, and say so; leave it (and the parser) as it is when it
    has another.

    The shapes: a message item (typed or not) of a known role and no other
    key, whose content is a string or a list of parts (text parts read
    here, any other part as :func:`_parse_part` reads it); a function call
    of compact JSON arguments and a function call output of a string,
    without other keys.
    """
    kind = item.get("type")
    size = len(item)
    if kind is None or kind == "message":
        role = item.get("role")
        if size != (2 if kind is None else 3) or type(role) is not str:
            return False
        if role not in _ROLES:
            return False
        content = item.get("content")
        info: dict[str, Any] = {} if kind is None else {"typed": True}
        if type(content) is str:
            parts: list[Any] = [plain_text(content)]
        elif type(content) is list:
            parts = _plain_parts(content, index)
            if role == "assistant" or _plain(parts):
                info["list"] = True
        else:
            return False
        parser.place(role, parts, info, "")
        return True
    if kind == "function_call":
        call_id, name = item.get("call_id"), item.get("name")
        text = item.get("arguments")
        if size != 4 or type(call_id) is not str or type(name) is not str:
            return False
        arguments = compact_arguments(text) if type(text) is str else None
        if arguments is None:
            return False
        parser.flush()
        parser.names[call_id] = name
        parser.canisters.append(
            new_invocation(parser.moment, EMPTY, name, arguments, call_id)
        )
        return True
    if kind == "function_call_output":
        call_id, output = item.get("call_id"), item.get("output")
        if size != 3 or type(call_id) is not str or type(output) is not str:
            return False
        parser.flush()
        error = decode_error_text(output)
        result: Result = new_result(
            parser.moment,
            EMPTY,
            call_id,
            parser.names.get(call_id, ""),
            () if error is not None else (plain_text(output),),
            error,
        )
        parser.canisters.append(result)
        return True
    return False


def _plain_items(
    renderer: _Renderer, canisters: list[tuple[int, Canister]]
) -> list[dict[str, Any]]:
    """What :meth:`_Renderer.items` gives for a request's canisters without Responses
    extras, in one pass: plain texts, calls and plain results are written here,
    every other canister goes through :meth:`_Renderer.items` on its own."""
    items: list[dict[str, Any]] = []
    for index, canister in canisters:
        kind = canister.role
        if kind is INVOCATION:
            items.append(
                {
                    "type": "function_call",
                    "call_id": canister.invocation_id,  # type: ignore[attr-defined]
                    "name": canister.name,  # type: ignore[attr-defined]
                    "arguments": render_arguments(canister.arguments),  # type: ignore[attr-defined]
                }
            )
            continue
        if kind is not DOCUMENT:
            content = canister.content  # type: ignore[attr-defined]
            part = content[0] if len(content) == 1 else None
            if type(part) is Text and not part.extras:
                if kind is not RESULT:
                    items.append({"role": _PLAIN_ROLE[kind], "content": part.text})
                    continue
                if canister.error is None:  # type: ignore[attr-defined]
                    items.append(
                        {
                            "type": "function_call_output",
                            "call_id": canister.invocation_id,  # type: ignore[attr-defined]
                            "output": part.text,
                        }
                    )
                    continue
            elif kind is ASSISTANT and content:
                # A turn of plain texts and this API's own reasoning (a
                # reasoning model's turn): a message per text, an item per
                # reasoning part, in order, as assistant() gives them.
                made = _plain_turn(renderer, content, index)
                if made is not None:
                    items.extend(made)
                    continue
        items.extend(renderer.items([(index, canister)]))
    return items


def _plain_turn(
    renderer: _Renderer, content: tuple[Any, ...], index: int
) -> list[dict[str, Any]] | None:
    """The items of an assistant turn holding only plain texts and reasoning
    this API issued, without extras; ``None`` for any other turn."""
    made: list[dict[str, Any]] = []
    for part in content:
        if part.extras:
            return None
        kind = type(part)
        if kind is Text:
            made.append({"role": "assistant", "content": part.text})
        elif kind is Reasoning and part.provider == NAME:
            made.append(renderer.reasoning(part, index))
        else:
            return None
    return made


_register_one_pass(sys.modules[__name__])
