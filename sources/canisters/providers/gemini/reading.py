"""Gemini ``contents`` parts read into canisters (the general way), for
:mod:`.messages`, :mod:`.response` and :mod:`.fast`."""

from __future__ import annotations

import functools
import json
import re
from collections.abc import Mapping, Sequence
from datetime import datetime
from typing import Any, Final

from ..._base64 import Encoded
from ..._frozen import EMPTY, FrozenDict, freeze
from ...canisters import ErrorCode, ErrorInfo
from ...content import Media
from ...exceptions import MalformedPayload
from ...protocols import Canister
from .. import _common as common
from .._common import (
    BOUND,
    expect_str,
    mine,
    new_invocation,
    new_reasoning,
    new_result,
    plain_text,
    synthesize_id,
)
from .._rules import kept, media
from .._rules.provided import register
from . import provided

NAME = "gemini"


# A part's other keys are kept verbatim; its mediaResolution is an image's detail.
kept.declare(
    NAME,
    # The keys of a turn, call, result, system instruction, part or blob no
    # field models, kept as sent ("instruction": the system's own role).
    canister=("turn", "call", "result", "system", "part", "instruction"),
    part=("part", "blob"),
    quiet={"role": "user"},  # what google-genai writes as the system's role
    spellings=(
        kept.Spelling(
            "detail",
            "part",
            "part",
            "mediaResolution",
            read=media.detail_of_resolution,
            write=media.resolution_of,
            kinds=frozenset({"image"}),
        ),
    ),
)


_SNAKE = re.compile(r"(?<!^)(?=[A-Z])")


_PART_KEYS = frozenset(
    {
        "text",
        "thought",
        "thoughtSignature",
        "inlineData",
        "fileData",
        "functionCall",
        "functionResponse",
    }
)


# The keys each reader knows (rest() keeps the others).
_BLOB_KEYS: Final = frozenset({"mimeType", "data"})


_FILE_KEYS: Final = frozenset({"mimeType", "fileUri"})


_TURN_KEYS: Final = frozenset({"role", "parts"})


_CALL_KEYS: Final = frozenset({"name", "args", "id"})


_RESULT_KEYS: Final = frozenset({"name", "id", "response", "parts"})


@functools.cache
def _snake(name: str) -> str:
    # Only ever given the API's field names written in this module: the cache
    # stays as small as that list.
    return _SNAKE.sub("_", name).lower()


@functools.cache
def _spellings(known: frozenset[str]) -> frozenset[str]:
    """``known`` in both casings (a constant set of this module's)."""
    return known | {_snake(name) for name in known}


class _Reader:
    """Reads keys in either casing and remembers which were snake_case."""

    __slots__ = ("snake",)

    def __init__(self) -> None:
        self.snake: set[str] = set()

    def get(self, source: Mapping[str, Any], name: str) -> Any:
        if name in source:
            return source[name]
        snake = _snake(name)
        if snake != name and snake in source:
            self.snake.add(name)
            return source[snake]
        return None

    def has(self, source: Mapping[str, Any], name: str) -> bool:
        return name in source or _snake(name) in source

    def spelled(self, source: Mapping[str, Any], name: str) -> str:
        """``name`` as ``source`` spells it (for paths in messages)."""
        return name if name in source or _snake(name) not in source else _snake(name)

    def rest(self, source: Mapping[str, Any], known: frozenset[str]) -> dict[str, Any]:
        return common.rest(source, _spellings(known))


_wrap = common.holder(NAME)
"""The extras holding a mapping whole as this provider's entry."""


def _key(name: str, snake: Sequence[str] | frozenset[str]) -> str:
    return _snake(name) if name in snake else name


def _single(value: Any) -> bool:
    return isinstance(value, Mapping) or hasattr(value, "model_dump")


def _parts(value: Any, path: str) -> list[Any]:
    # Gemini accepts a single part where it documents a list.
    if _single(value):
        return [value]
    return list(common.expect_list(value, path))


def _item_path(path: str, value: Any, number: int) -> str:
    """The path of item ``number`` of ``value`` read by :func:`_parts` at ``path``."""
    return path if _single(value) else f"{path}[{number}]"


_MEDIA: Final = {
    "image": common.new_image,
    "audio": common.new_audio,
    "video": common.new_video,
}


def _new_media(
    mime: str | None,
    data: bytes | Encoded | None,
    url: str | None,
    extras: FrozenDict[str, Any],
) -> Media:
    """The part of the kind ``mime`` names (a file when it names none) holding
    the checked ``data`` or ``url``, built the trusted way: what
    ``Image(data=data, mime_type=mime, extras=extras)`` (or ``url=url``) makes."""
    build = _MEDIA.get((mime or "").partition("/")[0])
    media: Media
    if build is None:
        media = common.new_file(data, url, None, EMPTY, mime, None, None, extras, None)
    else:
        media = build(data, url, None, EMPTY, mime, None, None, extras)
    return media


# Every part and canister is built through the trusted constructors (see
# _common.new_user): the parser checks each value itself, so attrs' converters
# and checks would only repeat it. The canisters of one body share the moment
# it was read. The property tests hold each one equal to what its public
# constructor makes of the same fields.


class _Pairing:
    """Pairs results with calls: by id, else by name and order."""

    __slots__ = ("open",)

    def __init__(self) -> None:
        self.open: list[tuple[str, str]] = []

    def call(self, invocation_id: str, name: str) -> None:
        self.open.append((invocation_id, name))

    def answer(self, given: str | None, name: str) -> str | None:
        """The id a result of ``name`` answers: ``given``, else the oldest
        unanswered call of ``name``'s (``None`` when there is none)."""
        if given is not None:
            if self.open:
                self.open = [entry for entry in self.open if entry[0] != given]
            return given
        for index, (invocation_id, open_name) in enumerate(self.open):
            if open_name == name:
                del self.open[index]
                return invocation_id
        return None


def _parse_media(
    part: Mapping[str, Any], reader: _Reader, path: str, extras: dict[str, Any]
) -> Media:
    inline = reader.get(part, "inlineData")
    if inline is not None or not reader.has(part, "fileData"):
        where = f"{path}.{reader.spelled(part, 'inlineData')}"
        blob = common.expect_mapping(inline, where)
        blob_reader = _Reader()
        mime = blob_reader.get(blob, "mimeType")
        raw = expect_str(blob_reader.get(blob, "data"), f"{where}.data")
        data, exact = common.b64read_exact(raw, f"{where}.data")
        if not exact:
            extras["data"] = raw
        mime = _blob_marks(reader, blob_reader, blob, mime, where, _BLOB_KEYS, extras)
        return _new_media(mime, data, None, _wrap(extras))
    where = f"{path}.{reader.spelled(part, 'fileData')}"
    file = common.expect_mapping(reader.get(part, "fileData"), where)
    blob_reader = _Reader()
    mime = blob_reader.get(file, "mimeType")
    uri = common.expect_url(
        blob_reader.get(file, "fileUri"),
        f"{where}.{blob_reader.spelled(file, 'fileUri')}",
    )
    mime = _blob_marks(reader, blob_reader, file, mime, where, _FILE_KEYS, extras)
    return _new_media(mime, None, uri, _wrap(extras))


def _blob_marks(
    reader: _Reader,
    blob_reader: _Reader,
    blob: Mapping[str, Any],
    mime: Any,
    where: str,
    known: frozenset[str],
    extras: dict[str, Any],
) -> str | None:
    """Check an ``inlineData`` or ``fileData`` object's ``mimeType`` and note in
    ``extras`` what it lacks, its snake-case spellings and its other keys."""
    if mime is None:
        extras["mime"] = False
    else:
        mime = expect_str(mime, f"{where}.{blob_reader.spelled(blob, 'mimeType')}")
    if blob_reader.snake:
        extras["blob_snake"] = sorted(blob_reader.snake)
    blob_rest = blob_reader.rest(blob, known)
    if blob_rest:
        extras["blob"] = blob_rest
    if reader.snake:
        extras["snake"] = sorted(reader.snake)
    return mime  # type: ignore[no-any-return]


def _parse_response_value(
    response: Mapping[str, Any],
) -> tuple[tuple[Any, ...], ErrorInfo | None]:
    keys = set(response)
    if keys == {"error"}:
        error = response["error"]
        if isinstance(error, str):
            return (), ErrorInfo(ErrorCode.TOOL_ERROR, error)
        if (
            isinstance(error, Mapping)
            and isinstance(error.get("code"), str)
            and isinstance(error.get("message"), str)
            and set(error) <= {"code", "message", "retryable", "details"}
        ):
            return (), ErrorInfo(
                error["code"],
                error["message"],
                bool(error.get("retryable", False)),
                error.get("details"),
            )
    if keys == {"output"} and isinstance(response["output"], str):
        return (plain_text(response["output"]),), None
    text = json.dumps(response, ensure_ascii=False)
    return (common.new_text(text, "application/json", None, EMPTY),), None


_KNOWN_BOUND = frozenset({"thoughtSignature", "executableCode", "codeExecutionResult"})


_PROVIDED = frozenset({"provider_tool_call", "provider_tool_result"})


register(NAME, provided.native)
"""What Gemini parts carry that goes back to Gemini only, known here."""


# A thought signature holds no content: elsewhere it is dropped, as reasoning
# signed by another provider is, whatever the unsupported option says.
common.SIGNATURES.add("thoughtSignature")


def _parse_turn(
    turn: Mapping[str, Any],
    index: int,
    path: str,
    pairing: _Pairing,
    moment: datetime,
) -> tuple[str, list[Canister]]:
    reader = _Reader()
    role_value = reader.get(turn, "role")
    turn_extras: dict[str, Any] = {}
    if role_value is None:
        turn_extras["role"] = None
        role = "user"
    else:
        role = expect_str(role_value, f"{path}.role")
        if role not in ("user", "model", "function"):
            # A turn of a role not known here, kept whole as a canister that
            # goes back to Gemini only.
            marks: dict[str, Any] = {"raw": dict(turn)}
            common.bind(marks, [role])
            return role, [common.new_assistant(moment, FrozenDict({NAME: marks}), ())]
    raw_parts = reader.get(turn, "parts")
    if raw_parts is None:
        parts: list[Any] = []
        turn_extras["parts"] = None
    else:
        if isinstance(raw_parts, Mapping):
            turn_extras["parts_object"] = True
        parts = _parts(raw_parts, f"{path}.parts")
    turn_rest = reader.rest(turn, _TURN_KEYS)
    if turn_rest:
        turn_extras["turn"] = turn_rest
    if reader.snake:
        turn_extras["turn_snake"] = sorted(reader.snake)

    build = common.new_assistant if role == "model" else common.new_user
    canisters: list[Canister] = []
    content: list[Any] = []

    bound: list[str] = []

    def flush() -> None:
        if content:
            # Placeholders and signatures go back to Gemini only (BOUND); parts
            # of a kind not known here follow the common.unsupported option elsewhere.
            extras = EMPTY
            if bound or role == "function":
                marks: dict[str, Any] = (
                    {"function_role": True} if role == "function" else {}
                )
                common.bind(
                    marks, [n for n in bound if n in _KNOWN_BOUND], unknown=False
                )
                common.bind(marks, [n for n in bound if n not in _KNOWN_BOUND])
                extras = FrozenDict({NAME: marks})
            canisters.append(build(moment, extras, tuple(content)))
            content.clear()
            bound.clear()

    for number, raw in enumerate(parts):
        part_path = _item_path(f"{path}.parts", raw_parts, number)
        part = common.expect_mapping(raw, part_path)
        part_reader = _Reader()
        extras: dict[str, Any] = {}
        signature = part_reader.get(part, "thoughtSignature")
        if signature is not None:
            signature = expect_str(signature, f"{part_path}.thoughtSignature")
        rest = part_reader.rest(part, _PART_KEYS)
        if rest:
            extras["part"] = rest
        call = part_reader.get(part, "functionCall")
        result = part_reader.get(part, "functionResponse")
        if part_reader.has(part, "text"):
            text = expect_str(part_reader.get(part, "text"), f"{part_path}.text")
            thought = part_reader.get(part, "thought")
            if part_reader.snake:
                extras["snake"] = sorted(part_reader.snake)
            if thought is True:
                content.append(
                    new_reasoning(text, signature, None, NAME, None, _wrap(extras))
                )
                continue
            if thought is not None:
                extras["thought"] = thought
            if signature is not None:
                extras["thoughtSignature"] = signature
                bound.append("thoughtSignature")
            content.append(common.new_text(text, "text/plain", None, _wrap(extras)))
        elif part_reader.has(part, "inlineData") or part_reader.has(part, "fileData"):
            if signature is not None:
                extras["thoughtSignature"] = signature
                bound.append("thoughtSignature")
            content.append(_parse_media(part, part_reader, part_path, extras))
        elif call is not None:
            flush()
            call = common.expect_mapping(call, f"{part_path}.functionCall")
            call_reader = _Reader()
            name = expect_str(
                call_reader.get(call, "name"), f"{part_path}.functionCall.name"
            )
            args = call_reader.get(call, "args")
            if args is None:
                extras["args"] = None
                arguments: Mapping[str, Any] = EMPTY
            else:
                arguments = freeze(
                    common.expect_mapping(args, f"{part_path}.functionCall.args")
                )
            given = call_reader.get(call, "id")
            if given is None:
                extras["id"] = False
                invocation_id = synthesize_id("gemini_call_", index, number, name)
            else:
                invocation_id = expect_str(given, f"{part_path}.functionCall.id")
            if signature is not None:
                extras["thoughtSignature"] = signature
                extras[BOUND] = ["thoughtSignature"]
            call_rest = call_reader.rest(call, _CALL_KEYS)
            if call_rest:
                extras["call"] = call_rest
            snake = part_reader.snake | call_reader.snake
            if snake:
                extras["snake"] = sorted(snake)
            pairing.call(invocation_id, name)
            canisters.append(
                new_invocation(moment, _wrap(extras), name, arguments, invocation_id)
            )
        elif result is not None:
            flush()
            result = common.expect_mapping(result, f"{part_path}.functionResponse")
            result_reader = _Reader()
            name = expect_str(
                result_reader.get(result, "name"), f"{part_path}.functionResponse.name"
            )
            given = result_reader.get(result, "id")
            if given is None:
                extras["id"] = False
            else:
                given = expect_str(given, f"{part_path}.functionResponse.id")
            answered = pairing.answer(given, name)
            if answered is None:
                answered = synthesize_id("gemini_result_", index, number, name)
            response = result_reader.get(result, "response")
            if response is None:
                extras["response"] = None
                values: tuple[Any, ...] = ()
                error = None
            else:
                response = common.expect_mapping(
                    response, f"{part_path}.functionResponse.response"
                )
                values, error = _parse_response_value(response)
                output = response.get("output")
                if (
                    len(response) == 1
                    and isinstance(output, str)
                    and common.json_object(output) is not None
                ):
                    extras["output"] = True  # JSON text sent as {"output": ...}
            media_parts = result_reader.get(result, "parts")
            if media_parts is not None:
                found: list[Any] = []
                for media_number, media_raw in enumerate(
                    _parts(media_parts, f"{part_path}.functionResponse.parts")
                ):
                    media_path = _item_path(
                        f"{part_path}.functionResponse.parts", media_parts, media_number
                    )
                    media_part = common.expect_mapping(media_raw, media_path)
                    media_reader = _Reader()
                    media_extras: dict[str, Any] = {}
                    if not (
                        media_reader.has(media_part, "inlineData")
                        or media_reader.has(media_part, "fileData")
                    ):
                        raise MalformedPayload(
                            "expected inlineData or fileData", media_path
                        )
                    found.append(
                        _parse_media(media_part, media_reader, media_path, media_extras)
                    )
                values = (*values, *found)
            if signature is not None:
                extras["thoughtSignature"] = signature
                extras[BOUND] = ["thoughtSignature"]
            result_rest = result_reader.rest(result, _RESULT_KEYS)
            if result_rest:
                extras["result"] = result_rest
            snake = part_reader.snake | result_reader.snake
            if snake:
                extras["snake"] = sorted(snake)
            if role == "function":
                extras["function_role"] = True
            canisters.append(
                new_result(moment, _wrap(extras), answered, name, values, error)
            )
        elif (typed := provided.part_of(part)) is not None:
            content.append(typed)  # executed code or its result, typed
        else:
            # Parts without a neutral meaning (a toolCall, ...) ride as empty
            # text so that their position in the turn survives.
            raw_part = FrozenDict({NAME: {"raw": dict(part)}})
            content.append(common.new_text("", "text/plain", None, raw_part))
            bound.extend(key for key in part if key != "thoughtSignature")
    flush()
    if not canisters:
        canisters.append(build(moment, EMPTY, ()))
        if raw_parts is not None:
            turn_extras.setdefault("parts", [])  # Gemini's own empty turn
    if turn_extras:
        _mark(canisters[0], turn_extras)
    return role, canisters


def _mark(canister: Canister, marks: Mapping[str, Any]) -> None:
    """Add ``marks`` to this provider's extras of ``canister``, in place: the
    parser has just built it and nobody else holds it. The extras are what
    ``attrs.evolve(canister, extras=...)`` would make, without building the
    canister a second time."""
    merged = {**mine(canister, NAME), **marks}
    object.__setattr__(canister, "extras", freeze({**canister.extras, NAME: merged}))
