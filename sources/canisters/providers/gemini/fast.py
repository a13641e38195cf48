"""Gemini: one-pass paths for the common shapes (turns of text, calls, results
and inline media without other keys, a system instruction of text parts),
giving exactly what the general path of :mod:`.messages` gives; the general
path never imports this module, which registers itself with it."""

from __future__ import annotations

import sys
from collections.abc import Sequence
from datetime import datetime
from typing import Any, Final

from ..._frozen import EMPTY, FrozenDict
from ...canisters import (
    Supervisor,
)
from ...content import _URL_SCHEME, Media, Reasoning, Text
from ...exceptions import MalformedPayload
from ...protocols import Canister, Content
from .. import _common as common
from .._common import (
    ASSISTANT,
    BOUND,
    DOCUMENT,
    INVOCATION,
    RESULT,
    new_invocation,
    new_reasoning,
    new_result,
    plain_text,
    synthesize_id,
)
from .messages import _register_one_pass
from .reading import NAME, _new_media, _Pairing, _parse_response_value
from .writing import _Renderer


def _parse_plain(
    role: str, parts: list[Any], index: int, pairing: _Pairing, moment: datetime
) -> list[Canister] | None:
    """:func:`_read_plain`, ``pairing`` left as it was when it gives ``None``."""
    if len(parts) == 1:  # most often a text alone
        part = parts[0]
        text = part.get("text") if type(part) is dict and len(part) == 1 else None
        if type(text) is str:
            build = common.new_assistant if role == "model" else common.new_user
            return [build(moment, EMPTY, (plain_text(text),))]
    saved = pairing.open.copy()
    made = _read_plain(role, parts, index, pairing, moment)
    if made is None:
        pairing.open = saved
    return made


def _read_plain(
    role: str, parts: list[Any], index: int, pairing: _Pairing, moment: datetime
) -> list[Canister] | None:
    """The canisters of a turn's ``parts``, built and marked as
    :func:`_parse_turn` builds and marks them, when each part is a ``dict`` of
    the commonest shapes: a text (a thought with or without its signature, or
    plain text with or without one), inline data in canonical base64, a file
    URI, a call with its name, arguments and an id or none, a response with
    its name, a ``dict`` response and an id or none, each with no other key.
    ``None`` for anything else (an empty turn among them), which
    :func:`_parse_turn` reads or refuses at its path; ``pairing`` may then
    have been changed (:func:`_parse_plain` puts it back).
    """
    build = common.new_assistant if role == "model" else common.new_user
    made: list[Canister] = []
    content: list[Content] = []
    signed = 0  # the texts of the content to flush that carried a signature
    for number, part in enumerate(parts):
        if type(part) is not dict:
            return None
        size = len(part)
        text = part.get("text")
        if text is not None:
            if type(text) is not str:
                return None
            if size == 1:
                content.append(plain_text(text))
                continue
            signature = part.get("thoughtSignature")
            if signature is not None and type(signature) is not str:
                return None
            thought = part.get("thought")
            if thought is True and size == (2 if signature is None else 3):
                content.append(new_reasoning(text, signature, None, NAME, None, EMPTY))
            elif signature is not None and size == 2:  # a text and its signature
                kept = FrozenDict({NAME: {"thoughtSignature": signature}})
                content.append(common.new_text(text, "text/plain", None, kept))
                signed += 1
            else:
                return None
            continue
        if size != 1:
            return None
        call = part.get("functionCall")
        if call is not None:
            if type(call) is not dict:
                return None
            name, args, given = call.get("name"), call.get("args"), call.get("id")
            if (
                type(name) is not str
                or type(args) is not dict
                or len(call) != (2 if given is None else 3)
            ):
                return None
            if given is None:
                extras = _NO_ID
                given = synthesize_id("gemini_call_", index, number, name)
            elif type(given) is str:
                extras = EMPTY
            else:
                return None
            if content:
                made.append(build(moment, _signed(signed), tuple(content)))
                content = []
                signed = 0
            arguments = FrozenDict(args) if args else EMPTY
            made.append(new_invocation(moment, extras, name, arguments, given))
            pairing.call(given, name)
            continue
        result = part.get("functionResponse")
        if result is not None:
            if type(result) is not dict:
                return None
            given, name = result.get("id"), result.get("name")
            response = result.get("response")
            if (
                type(name) is not str
                or type(response) is not dict
                or len(result) != (2 if given is None else 3)
                or (given is not None and type(given) is not str)
            ):
                return None
            if content:
                made.append(build(moment, _signed(signed), tuple(content)))
                content = []
                signed = 0
            answered = pairing.answer(given, name)
            if answered is None:
                answered = synthesize_id("gemini_result_", index, number, name)
            output = response.get("output")
            if len(response) == 1 and type(output) is str:
                values: tuple[Any, ...] = (plain_text(output),)
                error = None
                # JSON text is marked as sent as {"output": ...} (see _parse_turn).
                json_text = common.json_object(output) is not None
            else:
                values, error = _parse_response_value(response)
                json_text = False
            marks = _RESULT_MARKS[given is None, json_text]
            made.append(new_result(moment, marks, answered, name, values, error))
            continue
        media = _plain_media(part)
        if media is None:
            return None
        content.append(media)
    if content:
        made.append(build(moment, _signed(signed) if signed else EMPTY, tuple(content)))
    elif not made:
        return None  # an empty turn: marked so by the general way
    return made


_NO_ID: Final = FrozenDict({NAME: {"id": False}})


_RESULT_MARKS: Final = {
    (False, False): EMPTY,
    (False, True): FrozenDict({NAME: {"output": True}}),
    (True, False): _NO_ID,
    (True, True): FrozenDict({NAME: {"id": False, "output": True}}),
}
"""A result's extras by (it came without an id, its output is JSON text)."""


def _signed(count: int) -> FrozenDict[str, Any]:
    """The extras of a user or model canister whose content held ``count``
    texts with a signature: each goes back to Gemini only (BOUND)."""
    return FrozenDict({NAME: {BOUND: ["thoughtSignature"] * count}}) if count else EMPTY


def _plain_media(part: dict[str, Any]) -> Media | None:
    """An ``inlineData`` part in canonical base64 or a ``fileData`` part with
    an absolute URI, each with its ``mimeType`` and nothing else, built as
    :func:`_parse_media` builds it; ``None`` for any other part."""
    blob = part.get("inlineData")
    if blob is not None:
        if type(blob) is not dict or len(blob) != 2:
            return None
        mime, encoded = blob.get("mimeType"), blob.get("data")
        if type(mime) is not str or type(encoded) is not str:
            return None
        try:
            data, exact = common.b64read_exact(encoded)
        except MalformedPayload:
            return None  # refused the general way, at its path
        return _new_media(mime, data, None, EMPTY) if exact else None
    file = part.get("fileData")
    if type(file) is not dict or len(file) != 2:
        return None
    mime, uri = file.get("mimeType"), file.get("fileUri")
    if type(mime) is not str or type(uri) is not str or _URL_SCHEME.match(uri) is None:
        return None
    return _new_media(mime, None, uri, EMPTY)


def _plain_system(raw: Any, moment: datetime) -> Supervisor | None:
    """A ``systemInstruction`` of ``parts`` alone, a list of ``dict`` each with
    a string ``text``, built as :func:`_parse_system` builds it; ``None`` for
    anything else."""
    if type(raw) is not dict or len(raw) != 1:
        return None
    parts = raw.get("parts")
    if type(parts) is not list:
        return None
    texts: list[Content] = []
    for part in parts:
        text = part.get("text") if type(part) is dict else None
        if type(text) is not str:
            return None
        texts.append(plain_text(text))
    supervisor: Supervisor = common.new_supervisor(moment, EMPTY, tuple(texts))
    return supervisor


def _plain_contents(
    renderer: _Renderer, canisters: Sequence[tuple[int, Canister]]
) -> list[dict[str, Any]]:
    """What :meth:`_Renderer.contents` gives when no canister has Gemini extras, in one
    pass: turns of one role always merge, plain texts, Gemini's own thoughts,
    calls and plain results are written here, everything else goes through
    the general methods."""
    rendered: list[dict[str, Any]] = []
    parts: list[dict[str, Any]] = []
    role = ""
    for index, canister in canisters:
        kind = canister.role
        wire = "model" if kind is ASSISTANT or kind is INVOCATION else "user"
        if wire != role:
            parts = []
            rendered.append({"role": wire, "parts": parts})
            role = wire
        if kind is INVOCATION:
            call = {
                "name": canister.name,  # type: ignore[attr-defined]
                "args": {**canister.arguments},  # type: ignore[attr-defined]
                "id": canister.invocation_id,  # type: ignore[attr-defined]
            }
            parts.append({"functionCall": call})
            continue
        if kind is DOCUMENT:
            parts.extend(renderer.document_parts(canister, index))
            continue
        content = canister.content  # type: ignore[attr-defined]
        if kind is not RESULT:
            written = _plain_parts(content, wire == "model")
            if written is None:
                written = renderer.content_parts(canister, index, wire == "model")
            parts.extend(written)
            continue
        part = content[0] if len(content) == 1 else None
        plain = type(part) is Text and not part.extras
        if (
            plain
            and canister.error is None  # type: ignore[attr-defined]
            and part.mime_type != "application/json"  # type: ignore[union-attr]
            and common.json_object(part.text) is None  # type: ignore[union-attr]
        ):
            response = {
                "id": canister.invocation_id,  # type: ignore[attr-defined]
                "name": canister.name,  # type: ignore[attr-defined]
                "response": {"output": part.text},  # type: ignore[union-attr]
            }
            parts.append({"functionResponse": response})
        else:
            parts.append(renderer.result(canister, index))
    return rendered


def _plain_parts(content: Sequence[Any], model: bool) -> list[dict[str, Any]] | None:
    """What :meth:`_Renderer.content_parts` gives for ``content`` when it holds
    only texts without extras and, in a model turn, Gemini's own thoughts
    without extras; else ``None``."""
    written: list[dict[str, Any]] = []
    for part in content:
        kind = type(part)
        if kind is Text and not part.extras:
            written.append({"text": part.text})
        elif kind is Reasoning and model and part.provider == NAME and not part.extras:
            thought: dict[str, Any] = {"text": part.text, "thought": True}
            if part.signature is not None:
                thought["thoughtSignature"] = part.signature
            written.append(thought)
        else:
            return None
    return written


_register_one_pass(sys.modules[__name__])
