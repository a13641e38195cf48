"""OpenAI Chat Completions messages written the general way: the renderer of
one request's (or reply's) messages, for the format of a :class:`.wire.Wire`
(see :mod:`.fast` for the common shapes)."""

from __future__ import annotations

import functools
from collections.abc import Mapping
from typing import Any

from ...content import Text
from ...protocols import Canister, Content, Role
from .. import _common as common
from .._common import Labeler, Options, mine
from .._rules import documents, thinking
from .._rules.policy import apply_policy
from . import provided
from .wire import (
    AUDIO_FORMATS,
    BASE,
    MEDIA,
    NAME,
    TEXTS,
    WIRE_ROLE,
    Wire,
    default_form,
)


class _Renderer:
    """State of one render: options, labels, media waiting for a user message."""

    def __init__(self, options: Options, wire: Wire = BASE) -> None:
        self.options = options
        self.wire = wire
        self.name = wire.name
        self.labels = Labeler(options)
        self.moved: list[dict[str, Any]] = []

    def unsupported(self, where: str, reason: str) -> dict[str, Any] | None:
        text = common.unsupported(self.options, self.name, where, reason)
        return None if text is None else {"type": "text", "text": text}

    def parts(
        self, index: int, canister: Canister, parts: tuple[Content, ...], wire: str
    ) -> list[dict[str, Any]]:
        rendered: list[dict[str, Any]] = []
        for number, part in enumerate(parts):
            if type(part) is Text and not part.extras:
                # Plain text, the common case: what part() gives, without the rest.
                rendered.append({"type": "text", "text": part.text})
                continue
            where = common.describe(index, canister, number, part)
            label = self.labels.label(part)
            if label is not None:
                rendered.append({"type": "text", "text": label.text})
            item = self.part(part, where, wire, canister)
            if item is not None:
                rendered.append(item)
        return rendered

    def part(
        self, part: Content, where: str, wire: str, canister: Canister
    ) -> dict[str, Any] | None:
        extras = mine(part, self.name)
        outer = extras.get("outer") or {}
        inner = extras.get("inner") or {}
        kind = part.type
        if kind in TEXTS:
            text = part.text  # type: ignore[attr-defined]
            if not text and "raw" in extras:
                return dict(extras["raw"])  # a part kept whole
            if extras.get("refusal") == "part":
                return {"type": "refusal", "refusal": text, **outer}
            if kind != "text" and wire != "assistant" and part.citations:  # type: ignore[attr-defined]
                # Rule: annotations are an assistant message's only.
                apply_policy(
                    self.options,
                    self.name,
                    where,
                    f"citations have no place in a {wire} message",
                )
            return {"type": "text", "text": text, **outer}
        if kind == "reasoning":
            action = common.reasoning_action(
                part, self.name, self.options, where, native=False
            )
            if action == "text":
                return {"type": "text", "text": thinking.as_text(part)}
            return None
        if wire != "user":
            # Rule: system, assistant and tool messages take text parts only.
            if wire == "tool" and kind in MEDIA:
                if mine(canister, self.name).get("in_place"):
                    return self.part(part, where, "user", canister)
                self.move(part, where, canister)
                return None
            return self.unsupported(where, f"{kind} in a {wire} message")
        if kind == "image":
            url = part.url  # type: ignore[attr-defined]
            if url is None or not url.startswith(("http:", "https:", "data:")):
                data = common.media_bytes(part, self.options)
                if data is None:
                    return self.unsupported(where, "an image needs a URL or bytes")
                url = common.data_url(common.media_mime(part, data), data)
            return {"type": "image_url", "image_url": {"url": url, **inner}, **outer}
        if kind == "audio":
            data = common.media_bytes(part, self.options)
            if data is None:
                return self.unsupported(where, "audio must be inline bytes")
            fmt = AUDIO_FORMATS.get(common.media_mime(part, data))
            if fmt is None:
                return self.unsupported(where, "audio must be wav or mp3")
            raw = extras.get("raw")
            encoded = (
                raw
                if isinstance(raw, str) and common.b64decode_exact(raw)[0] == data
                else common.b64encode(data)
            )
            return {
                "type": "input_audio",
                "input_audio": {"data": encoded, "format": fmt, **inner},
                **outer,
            }
        if kind == "file":
            file: dict[str, Any] = {}
            reference = part.refs.get(self.wire.ref)  # type: ignore[attr-defined]
            url = part.url  # type: ignore[attr-defined]
            if url is not None and url.startswith("data:"):
                file["file_data"] = url
            elif url is not None and mine(part, self.name).get("url"):
                file["file_data"] = url  # a URL, read as file_data
            elif reference is None or common.inline_data(part) is not None:
                data = common.media_bytes(part, self.options)
                if data is None:
                    return self.unsupported(
                        where, "a file needs bytes or an OpenAI file id"
                    )
                raw = extras.get("raw")
                if isinstance(raw, str):
                    file["file_data"] = raw
                else:
                    file["file_data"] = common.data_url(
                        common.media_mime(part, data), data
                    )
            if reference is not None:
                file["file_id"] = reference
            filename = part.filename  # type: ignore[attr-defined]
            if filename is not None:
                file["filename"] = filename
            return {"type": "file", "file": {**file, **inner}, **outer}
        return self.unsupported(where, f"{kind} content")

    def move(self, part: Content, where: str, canister: Canister) -> None:
        rendered = self.part(part, where, "user", canister)
        if rendered is not None:
            if not self.moved:
                self.moved.append(
                    {
                        "type": "text",
                        "text": "Content of the tool results above:",
                    }
                )
            self.moved.append(rendered)
            self.options.note(
                "moved",
                self.name,
                where,
                "tool-result media sent in a follow-up user message",
            )


def _content(rendered: list[dict[str, Any]], form: str | None, default: str) -> Any:
    form = form or default
    if form == "string" and len(rendered) == 1 and rendered[0].get("type") == "text":
        return rendered[0]["text"]
    if form == "null" and not rendered:
        return None
    if form == "absent" and not rendered:
        return _ABSENT
    return rendered


_ABSENT = object()


def _put_content(message: dict[str, Any], value: Any) -> None:
    if value is not _ABSENT:
        message["content"] = value


def _render_call(invocation: Canister, name: str = NAME) -> dict[str, Any]:
    extras = mine(invocation, name)
    function = {
        "name": invocation.name,  # type: ignore[attr-defined]
        "arguments": common.render_arguments(
            invocation.arguments,  # type: ignore[attr-defined]
            "" if extras.get("blank") else extras.get("arguments"),
        ),
        **(extras.get("function") or {}),
    }
    if extras.get("absent"):
        del function["arguments"]
    call: dict[str, Any] = {
        "id": invocation.invocation_id,  # type: ignore[attr-defined]
        "type": "function",
        "function": function,
    }
    for key, value in (extras.get("call") or {}).items():
        if key == "type" and value is None:
            del call["type"]
        else:
            call[key] = value
    return call


def _message_extras(message: dict[str, Any], extra: Mapping[str, Any]) -> None:
    for key, value in extra.items():
        if key == "role" and value is None:
            message.pop("role", None)
        else:
            message[key] = value


def _render_assistant(
    renderer: _Renderer, index: int, group: list[Canister]
) -> dict[str, Any]:
    head = group[0]
    wire = renderer.wire
    name = wire.name
    extras = mine(head, name)
    message: dict[str, Any] = {"role": "assistant"}
    parts: list[dict[str, Any]] = []
    reasoning: list[Any] = []
    refusals: list[str] = []
    calls: list[dict[str, Any]] = []
    legacy: dict[str, Any] | None = None
    notes: list[dict[str, Any]] = []  # the annotations of cited texts
    kept = (extras.get("message") or {}).get("annotations")
    for offset, canister in enumerate(group):
        if canister.role is Role.Assistant:
            for number, part in enumerate(canister.content):  # type: ignore[attr-defined]
                if type(part) is Text and not part.extras:
                    parts.append({"type": "text", "text": part.text})
                    continue
                if part.type == "text" and mine(part, name).get("refusal") == "field":
                    refusals.append(part.text)
                    continue
                if (
                    part.type == "reasoning"
                    and wire.takes is not None
                    and wire.takes(part)
                ):
                    reasoning.append(part)
                    common.note_foreign_reasoning_id(
                        part,
                        name,
                        renderer.options,
                        common.describe(index + offset, canister, number, part),
                    )
                    continue
                where = common.describe(index + offset, canister, number, part)
                label = renderer.labels.label(part)
                if label is not None:
                    parts.append({"type": "text", "text": label.text})
                item = renderer.part(part, where, "assistant", canister)
                if item is not None:
                    if part.type == "cited_text" and item.get("type") == "text":
                        start = sum(
                            len(p["text"]) for p in parts if p.get("type") == "text"
                        )
                        notes += provided.annotations_of(
                            part, start, wire, kept, renderer.options, where
                        )
                    parts.append(item)
        elif mine(canister, name).get("legacy"):
            call = _render_call(canister, name)["function"]
            legacy = call
        else:
            calls.append(_render_call(canister, name))
    has_content = head.role is Role.Assistant
    default = "null" if not has_content or not parts else "list"
    if has_content and len(parts) == 1 and parts[0].get("type") == "text":
        content = [p for p in head.content if all(p is not q for q in reasoning)]  # type: ignore[attr-defined]
        content_part = content[0] if content else None
        plain = content_part is None or not mine(content_part, name).get("outer")
        default = "string" if plain else "list"
    _put_content(message, _content(parts, extras.get("content"), default))
    if reasoning and wire.write is not None:
        wire.write(reasoning, message)
    if refusals:
        message["refusal"] = "".join(refusals)
    if calls:
        message["tool_calls"] = calls
    if legacy is not None:
        message["function_call"] = legacy
    _message_extras(message, extras.get("message") or {})
    if notes:
        held = message.get("annotations")
        if isinstance(held, (list, tuple)):
            notes = [*held, *notes]  # the message's own, as they came, first
        message["annotations"] = notes
    return message


def _render_result(renderer: _Renderer, index: int, result: Canister) -> dict[str, Any]:
    extras = mine(result, renderer.name)
    parts: list[dict[str, Any]] = []
    error = result.error  # type: ignore[attr-defined]
    if error is not None:
        parts.append({"type": "text", "text": common.encode_error_text(error)})
    parts.extend(renderer.parts(index, result, result.content, "tool"))  # type: ignore[attr-defined]
    default = (
        "string"
        if len(parts) == 1 and parts[0].get("type") == "text"
        else (
            default_form(result.content, "tool", renderer.wire)  # type: ignore[attr-defined]
        )
    )
    if error is not None and not result.content:  # type: ignore[attr-defined]
        default = "string"
    if not parts and default == "list":
        default = "string"
        parts = [{"type": "text", "text": ""}]
    if extras.get("legacy"):
        message: dict[str, Any] = {"role": "function", "name": result.name}  # type: ignore[attr-defined]
    else:
        message = {"role": "tool", "tool_call_id": result.invocation_id}  # type: ignore[attr-defined]
    _put_content(message, _content(parts, extras.get("content"), default))
    _message_extras(message, extras.get("message") or {})
    return message


def _render_plain(
    renderer: _Renderer, index: int, canister: Canister, wire: str
) -> dict[str, Any]:
    name = renderer.name
    extras = mine(canister, name)
    if canister.role is Role.Document:
        canister = documents.as_user_content(
            canister, renderer.options, name, common.describe(index, canister)
        )
    parts = canister.content  # type: ignore[attr-defined]
    rendered = renderer.parts(index, canister, parts, wire)
    role = extras.get("role") or wire
    message: dict[str, Any] = {"role": role}
    default = default_form(parts, wire, renderer.wire)
    if len(rendered) != len(parts) or any(part.type == "reasoning" for part in parts):
        default = (
            "string"
            if len(rendered) == 1
            and rendered[0].get("type") == "text"
            and not rendered[0].keys() - {"type", "text"}
            else "list"
        )
    _put_content(message, _content(rendered, extras.get("content"), default))
    _message_extras(message, extras.get("message") or {})
    return message


def _wire_role(canister: Canister, name: str = NAME) -> str:
    """The role of the message ``canister`` goes into; ``"raw"`` for a message
    of a role not known here, kept whole."""
    if canister.extras and "raw" in mine(canister, name):
        return "raw"
    return WIRE_ROLE[canister.role]


def _render_messages(
    canisters: list[Canister], options: Options, wire_of: Wire = BASE
) -> list[dict[str, Any]]:
    renderer = _Renderer(options, wire_of)
    name = wire_of.name
    joins = common.joins_step(name)
    messages: list[dict[str, Any]] = []
    index = 0
    role_of = _wire_role if name == NAME else functools.partial(_wire_role, name=name)
    for wire, group in common.group_turns(canisters, role_of, joins):
        if wire != "tool" and renderer.moved:
            messages.append({"role": "user", "content": renderer.moved})
            renderer.moved = []
        if wire == "raw":  # a message kept whole
            messages.append(dict(mine(group[0], name)["raw"]))
        elif wire == "assistant":
            messages.append(_render_assistant(renderer, index, group))
        elif wire == "tool":
            messages.append(_render_result(renderer, index, group[0]))
        else:
            messages.append(_render_plain(renderer, index, group[0], wire))
        index += len(group)
    if renderer.moved:
        messages.append({"role": "user", "content": renderer.moved})
    return messages
