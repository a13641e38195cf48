"""Canisters written as Gemini ``contents`` and parts (the general way), for
:mod:`.messages`, :mod:`.response` and :mod:`.fast`."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

from ..._base64 import Encoded
from ...canisters import ErrorCode
from ...content import Text
from ...exceptions import _excerpt
from ...protocols import Canister, Role
from .. import _common as common
from .._common import (
    ASSISTANT,
    USER,
    Options,
    b64encode,
    describe,
    group_turns,
    mine,
    reasoning_action,
)
from .._rules import documents, thinking
from .._rules.policy import apply_policy
from . import provided
from .reading import _PROVIDED, NAME, _key


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
        filename = getattr(part, "filename", None)
        if filename is not None:
            # The Gemini API takes no name for a blob or file (its SDK refuses
            # display_name): the file goes without it.
            apply_policy(
                self.options,
                NAME,
                f"{where}.filename",
                f"Gemini takes no file name ({filename!r})",
            )
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
