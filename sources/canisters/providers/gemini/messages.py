"""The conversation of a Gemini request: ``systemInstruction`` and ``contents``
(see the package's docstring for the spellings read and kept)."""

from __future__ import annotations

import functools
import json
import re
from collections.abc import Mapping, Sequence
from datetime import datetime
from typing import Any, Final

from ..._base64 import Encoded
from ..._frozen import EMPTY, FrozenDict, freeze
from ...canisters import (
    ErrorCode,
    ErrorInfo,
    Supervisor,
    now,
)
from ...content import Media, Text
from ...conversation import Conversation
from ...exceptions import MalformedPayload, _excerpt
from ...protocols import Canister, Content, Role
from .. import _common as common
from .._common import (
    ASSISTANT,
    BOUND,
    SUPERVISOR,
    USER,
    Options,
    b64encode,
    describe,
    expect_str,
    group_turns,
    mine,
    new_invocation,
    new_reasoning,
    new_result,
    plain_text,
    reasoning_action,
    synthesize_id,
)
from .._rules import documents, kept, media, thinking
from .._rules.provided import register
from . import provided

__all__ = ["NAME", "REQUEST_FIELDS", "parse_request", "render_request"]

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

REQUEST_FIELDS = ("systemInstruction", "system_instruction", "contents")
"""The request fields that carry the conversation (either casing)."""

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


# Parsing --------------------------------------------------------------------------

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
        if mime is None:
            extras["mime"] = False
        else:
            mime = expect_str(mime, f"{where}.{blob_reader.spelled(blob, 'mimeType')}")
        if blob_reader.snake:
            extras["blob_snake"] = sorted(blob_reader.snake)
        blob_rest = blob_reader.rest(blob, _BLOB_KEYS)
        if blob_rest:
            extras["blob"] = blob_rest
        if reader.snake:
            extras["snake"] = sorted(reader.snake)
        return _new_media(mime, data, None, _wrap(extras))
    where = f"{path}.{reader.spelled(part, 'fileData')}"
    file = common.expect_mapping(reader.get(part, "fileData"), where)
    blob_reader = _Reader()
    mime = blob_reader.get(file, "mimeType")
    uri = common.expect_url(
        blob_reader.get(file, "fileUri"),
        f"{where}.{blob_reader.spelled(file, 'fileUri')}",
    )
    if mime is None:
        extras["mime"] = False
    else:
        mime = expect_str(mime, f"{where}.{blob_reader.spelled(file, 'mimeType')}")
    if blob_reader.snake:
        extras["blob_snake"] = sorted(blob_reader.snake)
    blob_rest = blob_reader.rest(file, _FILE_KEYS)
    if blob_rest:
        extras["blob"] = blob_rest
    if reader.snake:
        extras["snake"] = sorted(reader.snake)
    return _new_media(mime, None, uri, _wrap(extras))


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


_SPLIT: Final = {"split": True}


def _parse_contents(
    raw: Any, path: str, moment: datetime, *, fast: bool = True
) -> list[Canister]:
    single = _single(raw)
    turns = _parts(raw, path)
    pairing = _Pairing()
    canisters: list[Canister] = []
    previous: str | None = None
    one_pass = _one_pass[0] if fast and _one_pass else None
    for index, turn in enumerate(turns):
        if one_pass is not None and type(turn) is dict and len(turn) == 2:
            # A user or model turn of parts, built the fast way (see _parse_plain).
            role, parts = turn.get("role"), turn.get("parts")
            found = (
                one_pass._parse_plain(role, parts, index, pairing, moment)
                if (role == "user" or role == "model") and type(parts) is list
                else None
            )
            if found is not None:
                if previous == role:
                    _mark(found[0], _SPLIT)
                previous = role
                canisters += found
                continue
        turn_path = f"{path}[{index}]" if not single else path
        role, found = _parse_turn(
            common.expect_mapping(turn, turn_path), index, turn_path, pairing, moment
        )
        wire = role if role in ("model", "user") else "user"
        if role not in ("model", "user", "function"):
            wire = "raw"  # a turn kept whole (see _wire_role)
        if previous == wire:
            _mark(found[0], _SPLIT)
        previous = wire
        canisters.extend(found)
    if single and canisters:
        _mark(canisters[0], {"contents_object": True})
    return canisters


def _parse_system(raw: Any, key: str, moment: datetime) -> Supervisor:
    path = f"$.{key}"
    supervisor: Supervisor
    if isinstance(raw, str):
        extras = FrozenDict({NAME: {"string": True, "key": key}})
        supervisor = common.new_supervisor(moment, extras, (plain_text(raw),))
        return supervisor
    system = common.expect_mapping(raw, path)
    reader = _Reader()
    marks: dict[str, Any] = {}
    if key != "systemInstruction":
        marks["key"] = key
    role = reader.get(system, "role")
    if role is not None:
        marks["instruction"] = {"role": role}
    raw_parts = reader.get(system, "parts")
    if isinstance(raw_parts, Mapping):
        marks["parts_object"] = True
    parts: list[Content] = []
    for number, value in enumerate(_parts(raw_parts, f"{path}.parts")):
        part_path = _item_path(f"{path}.parts", raw_parts, number)
        part = common.expect_mapping(value, part_path)
        if "text" not in part and part:
            parts.append(common.opaque_part(NAME, part))  # a kind not known here
            continue
        parts.append(plain_text(expect_str(part.get("text"), f"{part_path}.text")))
    common.bind_parts(marks, parts)
    rest = reader.rest(system, _TURN_KEYS)
    if rest:
        marks["system"] = rest
    supervisor = common.new_supervisor(moment, _wrap(marks), tuple(parts))
    return supervisor


def parse_request(body: object, *, fast: bool = True) -> Conversation:
    """The normalizer's ``parse_request``, unguarded; ``fast=False`` reads every
    turn the general way (what the fast way must give, exactly)."""
    mapping = body if type(body) is dict else common.as_mapping(body)
    canisters: list[Canister] = []
    # Every canister of the body is made at the moment it was read.
    moment = now()
    for key in ("systemInstruction", "system_instruction"):
        raw = mapping.get(key)
        if raw is not None:
            supervisor = (
                _one_pass[0]._plain_system(raw, moment)
                if fast and _one_pass and key == "systemInstruction"
                else None
            )
            canisters.append(supervisor or _parse_system(raw, key, moment))
            break
    if "contents" in mapping:
        canisters += _parse_contents(
            mapping["contents"], "$.contents", moment, fast=fast
        )
    conversation: Conversation = common.new_conversation(tuple(canisters))
    return conversation


# Rendering ------------------------------------------------------------------------


def _wire_role(canister: Canister) -> str:
    match canister.role:
        case Role.Assistant if "raw" in mine(canister, NAME):
            return "raw"  # a turn of a role not known here, kept whole
        case Role.Assistant | Role.Invocation:
            return "model"
        case Role.Result | Role.User:
            return "function" if mine(canister, NAME).get("function_role") else "user"
        case _:
            return "user"


def _mime(part: Any, data: bytes | Encoded | None) -> str | None:
    if part.mime_type:
        return str(part.mime_type)
    if data is not None:
        sniffed = common.sniff_mime(data)
        if sniffed:
            return sniffed
    for url in (part.url, part.refs.get(NAME)):
        if url:
            guessed = common.mime_from_url(url)
            if guessed:
                return guessed
    return None


class _Renderer:
    def __init__(self, options: Options) -> None:
        self.options = options

    def media(self, part: Any, where: str) -> dict[str, Any] | str | None:
        extras = mine(part, NAME)
        snake = extras.get("blob_snake", ())
        url = part.url
        reference = part.refs.get(NAME)
        remote = (
            url is not None
            and not url.startswith("data:")
            and common.inline_data(part) is None
        ) or (
            common.inline_data(part) is None
            and url is None
            and part.content_id is None
            and reference
        )
        if remote:
            uri = url if url is not None and not url.startswith("data:") else reference
            mime = _mime(part, None)
            if mime is None and extras.get("mime") is not False:
                return common.unsupported(
                    self.options, NAME, where, "its media type cannot be inferred"
                )
            blob: dict[str, Any] = {}
            if extras.get("mime") is not False:
                blob[_key("mimeType", snake)] = mime
            blob[_key("fileUri", snake)] = uri
            blob.update(extras.get("blob", {}))
            return {_key("fileData", extras.get("snake", ())): blob}
        data = common.media_bytes(part, self.options)
        if data is None:
            return common.unsupported(
                self.options,
                NAME,
                where,
                "Gemini needs the bytes or a file URI; give a resolver",
            )
        mime = _mime(part, data)
        if mime is None and url is not None:
            parsed = common.parse_data_url(url)
            mime = parsed[0] if parsed else None
        if mime is None and extras.get("mime") is not False:
            return common.unsupported(
                self.options, NAME, where, "its media type cannot be inferred"
            )
        blob = {}
        if extras.get("mime") is not False:
            blob[_key("mimeType", snake)] = mime
        raw = extras.get("data")
        blob[_key("data", snake)] = raw if isinstance(raw, str) else b64encode(data)
        blob.update(extras.get("blob", {}))
        return {_key("inlineData", extras.get("snake", ())): blob}

    def content_parts(
        self, canister: Canister, index: int, model: bool
    ) -> list[dict[str, Any]]:
        parts: list[dict[str, Any]] = []
        for number, part in enumerate(canister.content):  # type: ignore[attr-defined]
            extras = mine(part, NAME)
            snake = extras.get("snake", ())
            kind = part.type
            if kind in _PROVIDED:  # read from a part, kept whole (see .provided)
                written = provided.render(part)
                if written is not None:  # else the envelope's grounding holds it
                    parts.append(written)
                continue
            if kind == "text" or kind == "cited_text":  # cited: see .provided
                raw = extras.get("raw")
                if isinstance(raw, Mapping):
                    parts.append(dict(raw))
                    continue
                rendered: dict[str, Any] = {"text": part.text}
                if "thought" in extras:
                    rendered["thought"] = extras["thought"]
                if "thoughtSignature" in extras and model:
                    rendered[_key("thoughtSignature", snake)] = extras[
                        "thoughtSignature"
                    ]
                rendered.update(extras.get("part", {}))
                parts.append(rendered)
            elif kind == "reasoning":
                if part.provider == NAME and model:
                    rendered = {"text": part.text, "thought": True}
                    if part.signature is not None:
                        rendered[_key("thoughtSignature", snake)] = part.signature
                    rendered.update(extras.get("part", {}))
                    parts.append(rendered)
                    continue
                where = describe(index, canister, number, part)
                action = reasoning_action(part, NAME, self.options, where, native=False)
                if action == "text":
                    parts.append({"text": thinking.as_text(part)})
            elif kind in ("image", "audio", "video", "file"):
                media = self.media(part, describe(index, canister, number, part))
                if isinstance(media, str):
                    parts.append({"text": media})
                elif media is not None:
                    if "thoughtSignature" in extras and model:
                        media[_key("thoughtSignature", snake)] = extras[
                            "thoughtSignature"
                        ]
                    media.update(extras.get("part", {}))
                    parts.append(media)
            else:
                text = common.unsupported(
                    self.options,
                    NAME,
                    describe(index, canister, number, part),
                    f"unknown part type {_excerpt(kind)}",
                )
                if text is not None:
                    parts.append({"text": text})
        return parts

    def call(self, canister: Any) -> dict[str, Any]:
        extras = mine(canister, NAME)
        snake = extras.get("snake", ())
        call: dict[str, Any] = {"name": canister.name}
        if extras.get("args", {}) is not None:
            call["args"] = dict(canister.arguments)
        if extras.get("id") is not False:
            call["id"] = canister.invocation_id
        call.update(extras.get("call", {}))
        part: dict[str, Any] = {_key("functionCall", snake): call}
        if "thoughtSignature" in extras:
            part[_key("thoughtSignature", snake)] = extras["thoughtSignature"]
        part.update(extras.get("part", {}))
        return part

    def result(self, canister: Any, index: int) -> dict[str, Any]:
        extras = mine(canister, NAME)
        snake = extras.get("snake", ())
        body: dict[str, Any] = {}
        if extras.get("id") is not False:
            body["id"] = canister.invocation_id
        body["name"] = canister.name
        texts: list[Any] = []
        media: list[dict[str, Any]] = []
        for number, part in enumerate(canister.content):
            if part.type == "text":
                texts.append(part)
            elif part.type in ("image", "audio", "video", "file"):
                rendered = self.media(part, describe(index, canister, number, part))
                if isinstance(rendered, str):
                    texts.append(Text(rendered))
                elif rendered is not None:
                    media.append(rendered)
            else:
                where = describe(index, canister, number, part)
                self.options.note("dropped", NAME, where, "not a tool-result part")
        response: dict[str, Any] | None
        if canister.error is not None:
            error = canister.error
            plain = (
                error.code == ErrorCode.TOOL_ERROR.value
                and not error.retryable
                and error.details is None
            )
            if plain:
                response = {"error": error.message}
            else:
                encoded: dict[str, Any] = {"code": error.code, "message": error.message}
                if error.retryable:
                    encoded["retryable"] = True
                if error.details is not None:
                    encoded["details"] = dict(error.details)
                response = {"error": encoded}
        elif len(texts) == 1 and texts[0].mime_type == "application/json":
            try:
                value = json.loads(texts[0].text)
            except ValueError:
                value = None
            response = value if isinstance(value, dict) else {"output": texts[0].text}
        elif (
            len(texts) == 1
            and not extras.get("output")
            and (found := common.json_object(texts[0].text)) is not None
        ):
            response = found  # JSON text is the object itself
        elif texts:
            response = {"output": "\n".join(text.text for text in texts)}
        else:
            response = {} if extras.get("response", {}) is not None else None
        if response is not None:
            body["response"] = response
        if media:
            body["parts"] = media
        body.update(extras.get("result", {}))
        wire: dict[str, Any] = {_key("functionResponse", snake): body}
        if "thoughtSignature" in extras:
            wire[_key("thoughtSignature", snake)] = extras["thoughtSignature"]
        wire.update(extras.get("part", {}))
        return wire

    def system(self, supervisors: list[tuple[int, Canister]]) -> tuple[str, Any]:
        first = supervisors[0][1]
        extras = mine(first, NAME)
        key = extras.get("key", "systemInstruction")
        texts: list[Any] = []  # texts, and parts kept whole
        for index, canister in supervisors:
            for number, part in enumerate(canister.content):  # type: ignore[attr-defined]
                if part.type == "text" and not part.text and "raw" in mine(part, NAME):
                    texts.append(dict(mine(part, NAME)["raw"]))
                elif part.type == "text":
                    texts.append(part.text)
                else:
                    where = describe(index, canister, number, part)
                    text = common.unsupported(
                        self.options, NAME, where, "system instructions take text only"
                    )
                    if text is not None:
                        texts.append(text)
        if extras.get("string"):
            return key, "".join(texts)
        parts: Any = [
            {"text": text} if isinstance(text, str) else text for text in texts
        ]
        if extras.get("parts_object") and len(parts) == 1:
            parts = parts[0]
        system: dict[str, Any] = {}
        said = extras.get("instruction") or extras  # "role": as stored before
        if "role" in said:
            system["role"] = said["role"]
        system["parts"] = parts
        system.update(extras.get("system", {}))
        return key, system

    def document_parts(self, document: Canister, index: int) -> list[dict[str, Any]]:
        titled = documents.as_user_content(
            document, self.options, NAME, describe(index, document)
        )
        return self.content_parts(titled, index, False)

    def contents(self, canisters: Sequence[tuple[int, Canister]]) -> Any:
        lookup = {id(canister): index for index, canister in canisters}

        def joins(previous: Canister, canister: Canister) -> bool:
            return not mine(canister, NAME).get("split")

        turns = group_turns((canister for _, canister in canisters), _wire_role, joins)
        rendered: list[dict[str, Any]] = []
        for role, members in turns:
            extras = mine(members[0], NAME)
            if role == "raw":
                rendered.append(dict(extras["raw"]))
                continue
            parts: list[dict[str, Any]] = []
            for canister in members:
                index = lookup[id(canister)]
                match canister.role:
                    case Role.Invocation:
                        parts.append(self.call(canister))
                    case Role.Result:
                        parts.append(self.result(canister, index))
                    case Role.Document:
                        parts.extend(self.document_parts(canister, index))
                    case _:
                        parts.extend(
                            self.content_parts(canister, index, role == "model")
                        )
            turn_snake = extras.get("turn_snake", ())
            turn: dict[str, Any] = {}
            if extras.get("role", role) is not None:
                turn["role"] = role
            if extras.get("parts", []) is not None or parts:
                value: Any = parts
                if extras.get("parts_object") and len(parts) == 1:
                    value = parts[0]
                turn[_key("parts", turn_snake)] = value
            turn.update(extras.get("turn", {}))
            rendered.append(turn)
        if (
            len(rendered) == 1
            and canisters
            and mine(canisters[0][1], NAME).get("contents_object")
        ):
            return rendered[0]
        return rendered


def _empty_from_elsewhere(canister: Canister) -> bool:
    """Tell whether ``canister`` is a user or assistant message without content
    that was not read from Gemini: the API refuses a turn without parts (a Gemini
    turn is sent back as it came)."""
    return (
        (canister.role is USER or canister.role is ASSISTANT)
        and not canister.content  # type: ignore[attr-defined]
        and NAME not in canister.extras
    )


def render_request(
    conversation: Conversation, options: Mapping[str, Any], *, fast: bool = True
) -> dict[str, Any]:
    """The normalizer's ``render_request``; ``fast=False`` renders the contents the
    general way (what the fast way must give, exactly)."""
    settings = common.options_from(options)
    canisters, own, *_ = common.request_canisters(conversation, settings, NAME)
    positions = common.positions(conversation)
    renderer = _Renderer(settings)
    supervisors: list[tuple[int, Canister]] = []
    rest: list[tuple[int, Canister]] = []
    for canister in canisters:
        index = positions[canister.id]
        if _empty_from_elsewhere(canister):
            settings.note(
                "dropped",
                NAME,
                describe(index, canister),
                "empty message: Gemini refuses a turn without parts",
            )
            continue
        if canister.role is SUPERVISOR:
            if rest:
                settings.note(
                    "moved",
                    NAME,
                    describe(index, canister),
                    "Gemini has one system instruction, before the contents",
                )
            supervisors.append((index, canister))
        else:
            rest.append((index, canister))
    body: dict[str, Any] = {}
    if supervisors:
        key, system = renderer.system(supervisors)
        body[key] = system
    if fast and _one_pass and not own:
        body["contents"] = _one_pass[0]._plain_contents(renderer, rest)
    else:
        body["contents"] = renderer.contents(rest)
    return body


# The one-pass paths (.fast) for the common shapes, registered by that module
# when the package loads it: this module never imports it.
_one_pass: list[Any] = []


def _register_one_pass(module: Any) -> None:
    """Let the general path use ``module``'s one-pass paths."""
    _one_pass[:] = [module]
