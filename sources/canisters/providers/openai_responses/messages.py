"""OpenAI Responses conversation fields: ``instructions`` and ``input``
items of requests, ``output`` items of responses, both directions."""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime
from typing import Any

import attrs

from ..._frozen import EMPTY, FrozenDict
from ...canisters import Result, now
from ...content import Audio, File, Image, Text
from ...conversation import Conversation
from ...exceptions import MalformedPayload, _excerpt
from ...protocols import Canister, Role
from .. import _common as common
from .._common import (
    ASSISTANT,
    SUPERVISOR,
    USER,
    b64decode_exact,
    b64encode,
    bind_parts,
    built,
    compact_arguments,
    data_url,
    decode_error_text,
    describe,
    expect_list,
    expect_mapping,
    expect_str,
    expect_url,
    inline_data,
    media_bytes,
    media_mime,
    mine,
    new_assistant,
    new_invocation,
    new_reasoning,
    new_result,
    new_supervisor,
    new_text,
    new_user,
    parse_arguments,
    parse_data_url,
    plain_text,
    reasoning_action,
    render_arguments,
    rest,
    synthesize_id,
)
from .._rules import documents, ids, kept, media, thinking
from .._rules.provided import register
from . import provided

__all__ = [
    "NAME",
    "REQUEST_FIELDS",
    "RESPONSE_FIELDS",
    "parse_request",
    "render_request",
]

NAME = "openai-responses"
"""The provider name."""

# A part's other keys are kept verbatim; its detail is an image's detail.
ids.declare(NAME, named_results=False)  # results pair by call_id alone

# An item's keys no field models ride in "keys" as sent: an item's id is a
# reference only OpenAI resolves, and "status": "completed" says nothing.
kept.declare(
    NAME,
    canister=("keys",),
    part=("part", "keys"),
    quiet={"status": "completed"},
    references=frozenset({"id"}),
    spellings=(
        kept.Spelling(
            "detail",
            "part",
            "part",
            "detail",
            read=media.detail_of,
            default=media.DETAIL_DEFAULT,
            kinds=frozenset({"image"}),
        ),
    ),
)

REQUEST_FIELDS = ("instructions", "input")
"""The request fields that carry the conversation."""

RESPONSE_FIELDS = (
    "id",
    "object",
    "created_at",
    "status",
    "error",
    "incomplete_details",
    "model",
    "output",
    "usage",
    "parallel_tool_calls",
    "tool_choice",
    "tools",
)
"""The response fields :meth:`OpenAIResponses.render_response` produces (the last
three echo the request; the SDK's ``Response`` requires them)."""

_REF = common.ref_key(NAME)
_AUDIO_FORMATS = {"wav": "audio/wav", "mp3": "audio/mpeg"}
_AUDIO_BACK = {"audio/wav": "wav", "audio/x-wav": "wav", "audio/mpeg": "mp3"}
# A request's message role for a canister holding one plain text.
_PLAIN_ROLE = {USER: "user", SUPERVISOR: "developer", ASSISTANT: "assistant"}
_SERVER_ITEM_SUFFIXES = ("_call", "_call_output", "_output")
_TEXTS = frozenset({"text", "cited_text"})  # a cited text: annotations kept
register(NAME, provided.native)


_wrap = common.holder(NAME)
"""The extras holding a mapping whole as this provider's entry."""


def _marked(part: Any, marks: Mapping[str, Any]) -> Any:
    """``part`` with ``marks`` added to its extras for this provider."""
    extras = FrozenDict({**part.extras, NAME: {**mine(part, NAME), **marks}})
    if type(part) is Text:
        return new_text(part.text, part.mime_type, part.id, extras)
    return attrs.evolve(part, extras=extras)


# Parsing --------------------------------------------------------------------------


def _media_source(
    value: Any, path: str, extras: dict[str, Any]
) -> tuple[dict[str, Any], str | None]:
    """Read an ``image_url`` / ``file_data`` / ``file_url`` string into Media kwargs."""
    url = expect_url(value, path)
    parsed = parse_data_url(url)
    if parsed is not None:
        return {"data": parsed[1], "mime_type": parsed[0]}, parsed[0]
    return {"url": url}, None


# The keys a text part and a function call are read from; "parsed" and
# "parsed_arguments" are the SDK's own (ParsedResponse, from client.responses.parse()
# and .stream()), never sent by the API, and are left out.
_TEXT_KNOWN = frozenset({"type", "text", "parsed"})
_CALL_KNOWN = frozenset({"type", "call_id", "name", "arguments", "parsed_arguments"})


def _parse_part(raw: Any, path: str) -> Any:
    part = expect_mapping(raw, path)
    kind = part.get("type")
    extras: dict[str, Any] = {}
    if kind in ("input_text", "output_text"):
        text = expect_str(part.get("text"), f"{path}.text")
        other = rest(part, _TEXT_KNOWN)
        if other:
            extras["part"] = other
        if kind == "output_text":
            extras["output"] = True
            if part.get("annotations"):
                made = new_text(text, "text/plain", None, _wrap(extras))
                return provided.cited(made, part["annotations"]) or made
        return new_text(text, "text/plain", None, _wrap(extras))
    if kind == "refusal":
        text = expect_str(part.get("refusal"), f"{path}.refusal")
        other = rest(part, frozenset({"type", "refusal"}))
        extras["refusal"] = True
        if other:
            extras["part"] = other
        return new_text(text, "text/plain", None, _wrap(extras))
    if kind == "input_image":
        kwargs: dict[str, Any] = {}
        used = {"type"}
        if part.get("image_url") is not None:
            kwargs, _ = _media_source(part["image_url"], f"{path}.image_url", extras)
            if "data" in kwargs:
                extras["data_url"] = True
            used.add("image_url")
        if part.get("file_id") is not None:
            kwargs["refs"] = {_REF: expect_str(part["file_id"], f"{path}.file_id")}
            used.add("file_id")
        other = rest(part, frozenset(used))
        if "detail" not in part or other != {"detail": "auto"}:
            extras["part"] = other
        return built(Image, path, **kwargs, extras=_wrap(extras))
    if kind == "input_file":
        kwargs = {}
        used = {"type", "filename"}
        if part.get("file_data") is not None:
            raw_data = expect_str(part["file_data"], f"{path}.file_data")
            parsed = parse_data_url(raw_data)
            if parsed is not None:
                kwargs = {"data": parsed[1], "mime_type": parsed[0]}
            else:
                # file_data without a data: prefix is raw base64.
                data, exact = b64decode_exact(raw_data, f"{path}.file_data")
                kwargs = {"data": data}
                extras["raw_base64"] = raw_data if not exact else True
            used.add("file_data")
        elif part.get("file_url") is not None:
            kwargs = {"url": expect_url(part["file_url"], f"{path}.file_url")}
            used.add("file_url")
        if part.get("file_id") is not None:
            kwargs["refs"] = {_REF: expect_str(part["file_id"], f"{path}.file_id")}
            used.add("file_id")
        filename = part.get("filename")
        if filename is not None:
            kwargs["filename"] = expect_str(filename, f"{path}.filename")
        elif "filename" in part:
            used.discard("filename")
        other = rest(part, frozenset(used))
        if other:
            extras["part"] = other
        return built(File, path, **kwargs, extras=_wrap(extras))
    if kind == "input_audio":
        audio = expect_mapping(part.get("input_audio"), f"{path}.input_audio")
        raw_data = expect_str(audio.get("data"), f"{path}.input_audio.data")
        data, exact = b64decode_exact(raw_data, f"{path}.input_audio.data")
        audio_format = audio.get("format")
        if not exact:
            extras["raw"] = raw_data
        extras["input_audio"] = True
        mime = (
            _AUDIO_FORMATS.get(audio_format) if isinstance(audio_format, str) else None
        )
        if mime is None:
            extras["format"] = audio_format
        other = rest(part, frozenset({"type", "input_audio"}))
        if other:
            extras["part"] = other
        return Audio(data=data, mime_type=mime, extras=_wrap(extras))
    if isinstance(kind, str):
        return common.opaque_part(NAME, part)  # a type not known here, kept whole
    raise MalformedPayload(
        f"unknown content part type {_excerpt(kind)}", f"{path}.type"
    )


def _plain(parts: list[Any]) -> bool:
    """Whether parts would render as a plain string by default (one plain text)."""
    return len(parts) <= 1 and all(
        part.type == "text" and not mine(part, NAME) for part in parts
    )


def _parse_content(value: Any, path: str) -> tuple[list[Any], bool]:
    """Return the parts and whether the content was a plain string."""
    if isinstance(value, str):
        return [plain_text(value)], True
    return [
        _parse_part(raw, f"{path}[{number}]")
        for number, raw in enumerate(expect_list(value, path))
    ], False


# The general way checks every value it reads (and names the path of a bad one),
# so it builds canisters and text parts through the trusted constructors: attrs'
# converters and checks would only repeat those checks. The canisters of one body
# share the moment it was read.

_ROLES = frozenset({"user", "assistant", "developer", "system"})
_MESSAGE_KNOWN = frozenset({"type", "role", "content"})
_OUTPUT_KNOWN = frozenset({"type", "call_id", "output"})
_OUTPUT_TEXT = FrozenDict({NAME: {"output": True}})


class _Parser:
    """Reads the items of one body in order: reasoning and assistant message
    items gather into one assistant turn; calls and results pair by id."""

    def __init__(self, moment: datetime) -> None:
        self.moment = moment
        self.canisters: list[Canister] = []
        self.assistant: list[Any] = []
        self.assistant_extras: dict[str, Any] = {}
        self.names: dict[str, str] = {}

    def flush(self) -> None:
        if self.assistant:
            self.canisters.append(
                new_assistant(
                    self.moment, _wrap(self.assistant_extras), tuple(self.assistant)
                )
            )
            self.assistant = []
            self.assistant_extras = {}

    def item(self, index: int, raw: Any, path: str) -> None:
        """Read one item the general way."""
        item = expect_mapping(raw, path)
        kind = item.get("type")
        role = item.get("role")
        if kind in (None, "message") and role is not None:
            self.message(item, expect_str(role, f"{path}.role"), path)
        elif kind == "function_call":
            self.flush()
            call_id = expect_str(item.get("call_id"), f"{path}.call_id")
            name = expect_str(item.get("name"), f"{path}.name")
            text = item.get("arguments")
            # Compact JSON (what OpenAI writes) is read in one step, as the fast
            # way reads it.
            arguments = compact_arguments(text) if type(text) is str else None
            extras: dict[str, Any] = {}
            if arguments is None:
                value, kept = parse_arguments(text, f"{path}.arguments")
                arguments = FrozenDict(value) if value else EMPTY
                if kept is not None:
                    extras["arguments"] = kept
            other = rest(item, _CALL_KNOWN)
            if other:
                extras["keys"] = other
            self.names[call_id] = name
            self.canisters.append(
                new_invocation(self.moment, _wrap(extras), name, arguments, call_id)
            )
        elif kind == "function_call_output":
            self.flush()
            call_id = expect_str(item.get("call_id"), f"{path}.call_id")
            output = item.get("output")
            content, string = _parse_content(output, f"{path}.output")
            extras = {}
            if not string and _plain(content):
                extras["list"] = True
            error = None
            if string:
                error = decode_error_text(content[0].text)
                if error is not None:
                    content = []
            other = rest(item, _OUTPUT_KNOWN)
            if other:
                extras["keys"] = other
            bind_parts(extras, content)
            result: Result = new_result(
                self.moment,
                _wrap(extras),
                call_id,
                self.names.get(call_id, ""),
                tuple(content),
                error,
            )
            self.canisters.append(result)
        elif kind == "reasoning":
            summary = expect_list(item.get("summary", []), f"{path}.summary")
            texts: list[str] = []
            for number, entry in enumerate(summary):
                entry = expect_mapping(entry, f"{path}.summary[{number}]")
                texts.append(
                    expect_str(entry.get("text"), f"{path}.summary[{number}].text")
                )
            extras = {}
            plain = len(summary) == 1 and set(summary[0]) == {"type", "text"}
            if not plain or summary[0].get("type") != "summary_text":
                extras["summary"] = [dict(entry) for entry in summary]
            if any(
                entry.get("type") != "summary_text" or len(entry) != 2
                for entry in summary
            ):
                # Entries of another type, or with other keys: what the part's
                # text does not say, reported for another format.
                extras["keys"] = {"summary": extras["summary"]}
            encrypted = item.get("encrypted_content")
            used = {"type", "id", "summary"}
            if isinstance(encrypted, str):
                used.add("encrypted_content")
            else:
                encrypted = None
            item_id = item.get("id")
            if item_id is not None:
                item_id = expect_str(item_id, f"{path}.id")
            else:
                used.discard("id")
                extras["no_id"] = True  # no id synthesized going back
            other = rest(item, frozenset(used))
            if other:
                extras["item"] = other
            self.assistant.append(
                new_reasoning(
                    "\n\n".join(texts), None, encrypted, NAME, item_id, _wrap(extras)
                )
            )
        elif kind == "item_reference":
            self.flush()
            reference = expect_str(item.get("id"), f"{path}.id")
            extras = {"item_reference": True}
            other = rest(item, frozenset({"type", "id"}))
            if other:
                extras["item"] = other
            self.canisters.append(
                common.new_document(self.moment, _wrap(extras), (), None, reference)
            )
        elif kind == "message":  # without its role
            raise MalformedPayload("a message item needs a role", f"{path}.role")
        elif isinstance(kind, str):
            self.raw(item, kind)
        else:
            raise MalformedPayload("an item needs a type (or a role)", f"{path}.type")

    def raw(self, item: Mapping[str, Any], name: str) -> None:
        """Keep ``item`` whole, as a canister of its own that goes back to this
        provider only: a server-tool item, or an item (or a message of a role)
        of a type not known here."""
        self.flush()
        extras = {"raw": dict(item)}
        if name in provided.ITEMS and item.get("type") == name:
            parts = provided.item_parts(item)
            if parts:
                # The item goes back whole; its parts say what it is, and
                # settle it for another provider (never as a client call).
                self.canisters.append(new_assistant(self.moment, _wrap(extras), parts))
                return
        known = name.endswith(_SERVER_ITEM_SUFFIXES) or name.startswith(
            ("mcp_", "compaction")
        )
        common.bind(extras, [name], unknown=not known)
        self.canisters.append(new_assistant(self.moment, _wrap(extras), ()))

    def message(self, item: Mapping[str, Any], role: str, path: str) -> None:
        if role not in _ROLES:
            self.raw(item, role)
            return
        content, string = _parse_content(item.get("content"), f"{path}.content")
        info: dict[str, Any] = {}
        if "type" in item:
            info["typed"] = True
        if not string and (_plain(content) or role == "assistant"):
            info["list"] = True
        other = rest(item, _MESSAGE_KNOWN)
        if other:
            info["keyed"] = True
        self.place(role, content, info, path, other)

    def place(
        self,
        role: str,
        content: list[Any],
        info: dict[str, Any],
        path: str,
        keys: Mapping[str, Any] | None = None,
    ) -> None:
        """Place the parts of a message item of ``role``, its marks ``info``
        and the item's keys no field models."""
        if role == "assistant":
            if not content:
                content = [new_text("", "text/plain", None, _wrap({"empty": True}))]
            if self.assistant and self.assistant[-1].type != "reasoning":
                # Marks where this message item starts within the assistant turn.
                info["new"] = True
            if info:
                marks = {"item": info, "keys": keys} if keys else {"item": info}
                content[0] = _marked(content[0], marks)
            bind_parts(self.assistant_extras, content)
            self.assistant.extend(content)
            return
        self.flush()
        extras: dict[str, Any] = {}
        if info:
            extras["item"] = info
        if keys:
            extras["keys"] = keys
        bind_parts(extras, content)
        if role == "user":
            self.canisters.append(new_user(self.moment, _wrap(extras), tuple(content)))
        elif role in ("system", "developer"):
            if role == "system" or not self.canisters:
                extras["role"] = role
            self.canisters.append(
                new_supervisor(self.moment, _wrap(extras), tuple(content))
            )
        else:
            raise MalformedPayload(f"unknown role {_excerpt(role)}", f"{path}.role")


def _parse_input(body: Mapping[str, Any], *, fast: bool = True) -> list[Canister]:
    """The canisters of a request's ``instructions`` and ``input``; ``fast=False``
    reads every item the general way (what the fast way must give, exactly)."""
    parser = _Parser(now())
    instructions = body.get("instructions")
    if isinstance(instructions, str):
        parser.canisters.append(
            new_supervisor(parser.moment, EMPTY, (plain_text(instructions),))
        )
    elif instructions is not None:
        raise MalformedPayload("expected a string", "$.instructions")
    value = body.get("input")
    if isinstance(value, str):
        extras = FrozenDict({NAME: {"string": True}})
        parser.canisters.append(new_user(parser.moment, extras, (plain_text(value),)))
        return parser.canisters
    if value is None:
        return parser.canisters
    if type(value) is not list:
        value = expect_list(value, "$.input")
    one_pass = _one_pass[0] if fast and _one_pass else None
    for index, item in enumerate(value):
        # The common shapes are read the fast way; anything else, the general way.
        if (
            one_pass is not None
            and type(item) is dict
            and one_pass._plain_item(parser, index, item)
        ):
            continue
        parser.item(index, item, f"$.input[{index}]")
    parser.flush()
    return parser.canisters


def parse_request(body: object, *, fast: bool = True) -> Conversation:
    """The normalizer's ``parse_request``, unguarded; ``fast=False`` reads every
    item the general way (what the fast way must give, exactly)."""
    mapping = body if type(body) is dict else common.as_mapping(body)
    return common.new_conversation(tuple(_parse_input(mapping, fast=fast)))


# Rendering ------------------------------------------------------------------------


class _Renderer:
    def __init__(self, options: common.Options, response: bool) -> None:
        self.options = options
        self.response = response

    def media(self, part: Any, where: str, *, tool: bool) -> dict[str, Any] | None:
        extras = mine(part, NAME)
        reference = part.refs.get(_REF)
        rendered: dict[str, Any]
        if part.type == "image":
            rendered = {"type": "input_image"}
            if part.url is not None and not extras.get("data_url"):
                rendered["image_url"] = part.url
            elif (
                inline_data(part) is not None or part.url is not None or part.content_id
            ):
                data = media_bytes(part, self.options)
                if data is None:
                    if reference is None:
                        return self.refuse(where, "give a resolver for its content id")
                else:
                    rendered["image_url"] = data_url(media_mime(part, data), data)
            if reference is not None:
                rendered["file_id"] = reference
            rendered.update(extras.get("part", {"detail": "auto"}))
            return rendered
        if part.type == "file":
            rendered = {"type": "input_file"}
            if part.url is not None and not part.url.startswith("data:"):
                rendered["file_url"] = part.url
            elif (
                inline_data(part) is not None or part.url is not None or part.content_id
            ):
                data = media_bytes(part, self.options)
                if data is None:
                    if reference is None:
                        return self.refuse(where, "give a resolver for its content id")
                else:
                    raw = extras.get("raw_base64")
                    if raw is True:
                        rendered["file_data"] = b64encode(data)
                    elif isinstance(raw, str):
                        rendered["file_data"] = raw
                    else:
                        rendered["file_data"] = data_url(media_mime(part, data), data)
            if reference is not None:
                rendered["file_id"] = reference
            if part.filename is not None:
                rendered["filename"] = part.filename
            elif "file_data" in rendered and not extras:
                # The API wants a filename with inline file data.
                rendered["filename"] = part.hint or "file"
            rendered.update(extras.get("part", {}))
            return rendered
        if part.type == "audio" and not tool and extras.get("input_audio"):
            # Only audio that came as input_audio goes back: the API and the SDK
            # types take no other audio input.
            data = media_bytes(part, self.options)
            mime = part.mime_type or media_mime(part, data)
            audio_format = extras.get("format", _AUDIO_BACK.get(mime))
            if data is None or audio_format is None:
                return self.refuse(where, "audio input needs wav or mp3 bytes")
            raw = extras.get("raw")
            rendered = {
                "type": "input_audio",
                "input_audio": {
                    "data": raw if isinstance(raw, str) else b64encode(data),
                    "format": audio_format,
                },
            }
            rendered.update(extras.get("part", {}))
            return rendered
        return self.refuse(where, f"the Responses API cannot take {part.type} here")

    def refuse(
        self, where: str, reason: str, *, output: bool = False
    ) -> dict[str, Any] | None:
        text = common.unsupported(self.options, NAME, where, reason)
        if text is None:
            return None
        return {"type": "output_text" if output else "input_text", "text": text}

    def parts(
        self, canister: Any, index: int, parts: Any, *, output: bool, tool: bool = False
    ) -> list[dict[str, Any]]:
        rendered: list[dict[str, Any]] = []
        for number, part in parts:
            extras = mine(part, NAME)
            if part.type in _TEXTS:
                if "raw" in extras and not part.text:
                    rendered.append(dict(extras["raw"]))  # a part kept whole
                    continue
                if extras.get("refusal"):
                    wire = {"type": "refusal", "refusal": part.text}
                elif output or extras.get("output"):
                    wire = {"type": "output_text", "text": part.text}
                    if "part" not in extras and self.response:
                        wire["annotations"] = []
                else:
                    wire = {"type": "input_text", "text": part.text}
                wire.update(extras.get("part", {}))
                rendered.append(wire)
                continue
            where = describe(index, canister, number, part)
            if part.type in ("image", "file", "audio", "video") and output:
                # Rule: an assistant message holds output_text and refusal only.
                media = self.refuse(
                    where, f"{part.type} in an assistant message", output=True
                )
                if media is not None:
                    rendered.append(media)
            elif part.type in ("image", "file", "audio", "video"):
                media = self.media(part, where, tool=tool)
                if media is not None:
                    rendered.append(media)
            elif part.type == "reasoning":
                action = reasoning_action(part, NAME, self.options, where, native=False)
                if action == "text":
                    rendered.append(
                        {"type": "input_text", "text": thinking.as_text(part)}
                    )
            else:
                media = self.refuse(
                    where, f"unknown part type {_excerpt(part.type)}", output=output
                )
                if media is not None:
                    rendered.append(media)
        return rendered

    def message(
        self,
        role: str,
        canister: Any,
        index: int,
        parts: Any,
        info: Mapping[str, Any],
        keys: Mapping[str, Any] | None = None,
    ) -> dict[str, Any]:
        output = role == "assistant"
        rendered = self.parts(canister, index, parts, output=output)
        content: Any = rendered
        listed = info.get("list", self.response and output)
        simple = all(
            part.get("type") in ("input_text", "output_text")
            and set(part) == {"type", "text"}
            for part in rendered
        )
        if not listed and simple and len(rendered) <= 1:
            content = rendered[0]["text"] if rendered else ""
        if output and not rendered and parts and mine(parts[0][1], NAME).get("empty"):
            content = [] if listed else ""
        message: dict[str, Any] = {}
        typed = info.get("typed", self.response and output)
        if typed:
            message["type"] = "message"
        message["role"] = role
        message["content"] = content
        if keys is None:
            keys = info.get("rest")  # where the keys were stored before
        if keys is not None:
            message.update(keys)
        elif self.response and output:
            message["id"] = synthesize_id("msg_", index, canister.id)
            message["status"] = "completed"
        return message

    def reasoning(self, part: Any, index: int) -> dict[str, Any]:
        extras = mine(part, NAME)
        item: dict[str, Any] = {"type": "reasoning"}
        if part.id is not None:
            item["id"] = part.id
        elif "item" not in extras and not extras.get("no_id"):
            item["id"] = synthesize_id("rs_", index, part.text, part.redacted)
        if "summary" in extras:
            item["summary"] = extras["summary"]
        else:
            item["summary"] = [{"type": "summary_text", "text": part.text}]
        if part.redacted is not None:
            item["encrypted_content"] = part.redacted
        item.update(extras.get("item", {}))
        return item

    def assistant(self, canister: Any, index: int) -> list[dict[str, Any]]:
        extras = mine(canister, NAME)
        if "raw" in extras:
            return [dict(extras["raw"])]
        items: list[dict[str, Any]] = []
        run: list[tuple[int, Any]] = []
        info: Mapping[str, Any] = {}
        keys: Mapping[str, Any] | None = None

        def close() -> None:
            if run:
                items.append(
                    self.message("assistant", canister, index, list(run), info, keys)
                )
                run.clear()

        for number, part in enumerate(canister.content):
            part_extras = mine(part, NAME)
            if part.type == "reasoning":
                close()
                where = describe(index, canister, number, part)
                if part.provider == NAME:
                    items.append(self.reasoning(part, index))
                    continue
                action = reasoning_action(part, NAME, self.options, where, native=False)
                if action == "text":
                    info, keys = {}, None
                    run.append((number, Text(thinking.as_text(part))))
                continue
            if "item" in part_extras:
                close()
                info, keys = part_extras["item"], part_extras.get("keys")
            elif not run:
                info, keys = {}, None
            run.append((number, part))
            if not info and not self.response:
                # A request's assistant message takes one output_text only, unless
                # it is a whole output item (id, status): one message per text
                # (or per placeholder of media, which it refuses).
                close()
        close()
        if not items and not canister.content and not (self.response and not extras):
            # A reply's turn that only calls tools has no message item of its own.
            items.append(self.message("assistant", canister, index, [], {}))
        return items

    def call(self, canister: Any, index: int) -> dict[str, Any]:
        extras = mine(canister, NAME)
        item: dict[str, Any] = {
            "type": "function_call",
            "call_id": canister.invocation_id,
            "name": canister.name,
            "arguments": render_arguments(canister.arguments, extras.get("arguments")),
        }
        keys = extras.get("keys", extras.get("item"))  # "item": stored before
        if keys is not None:
            item.update(keys)
        elif self.response:
            item["id"] = synthesize_id("fc_", index, canister.invocation_id)
            item["status"] = "completed"
        return item

    def result(self, canister: Any, index: int) -> dict[str, Any]:
        extras = mine(canister, NAME)
        output: Any
        if canister.error is not None:
            output = common.encode_error_text(canister.error)
        else:
            rendered = self.parts(
                canister,
                index,
                list(enumerate(canister.content)),
                output=False,
                tool=True,
            )
            simple = all(
                part.get("type") == "input_text" and set(part) == {"type", "text"}
                for part in rendered
            )
            if simple and len(rendered) <= 1 and not extras.get("list"):
                output = rendered[0]["text"] if rendered else ""
            else:
                output = rendered
        item: dict[str, Any] = {
            "type": "function_call_output",
            "call_id": canister.invocation_id,
            "output": output,
        }
        item.update(extras.get("keys", extras.get("item", {})))
        return item

    def items(self, canisters: list[tuple[int, Canister]]) -> list[dict[str, Any]]:
        items: list[dict[str, Any]] = []
        for index, canister in canisters:
            extras = mine(canister, NAME)
            match canister.role:
                case Role.User:
                    if extras.get("string"):
                        self.options.note(
                            "downgraded",
                            NAME,
                            describe(index, canister),
                            "input string",
                        )
                    items.append(
                        self.message(
                            "user",
                            canister,
                            index,
                            list(enumerate(canister.content)),  # type: ignore[attr-defined]
                            extras.get("item", {}),
                            extras.get("keys"),
                        )
                    )
                case Role.Supervisor:
                    items.append(
                        self.message(
                            extras.get("role", "developer"),
                            canister,
                            index,
                            list(enumerate(canister.content)),  # type: ignore[attr-defined]
                            extras.get("item", {}),
                            extras.get("keys"),
                        )
                    )
                case Role.Document:
                    document: Any = canister
                    if extras.get("item_reference"):
                        item = {"type": "item_reference", "id": document.document_id}
                        item.update(extras.get("item", {}))
                        items.append(item)
                        continue
                    canister = documents.as_user_content(
                        canister, self.options, NAME, describe(index, canister)
                    )
                    items.append(
                        self.message(
                            "user",
                            canister,
                            index,
                            list(enumerate(canister.content)),
                            {},
                        )
                    )
                case Role.Assistant:
                    items.extend(self.assistant(canister, index))
                case Role.Invocation:
                    items.append(self.call(canister, index))
                case Role.Result:
                    items.append(self.result(canister, index))
        return items


def _instructions(
    canisters: list[tuple[int, Canister]],
) -> tuple[Any, list[tuple[int, Canister]]]:
    if not canisters:
        return None, canisters
    index, first = canisters[0]
    if first.role is not Role.Supervisor or "role" in mine(first, NAME) or index != 0:
        return None, canisters
    parts = first.content  # type: ignore[attr-defined]
    if not all(part.type == "text" for part in parts):
        return None, canisters
    return "\n".join(part.text for part in parts), canisters[1:]


def render_request(
    conversation: Conversation, options: Mapping[str, Any], *, fast: bool = True
) -> dict[str, Any]:
    """The normalizer's ``render_request``; ``fast=False`` renders the input items
    the general way (what the fast way must give, exactly)."""
    settings = common.options_from(options)
    kept, own, *_ = common.request_canisters(conversation, settings, NAME)
    positions = common.positions(conversation)
    indexed = [(positions[canister.id], canister) for canister in kept]
    instructions, rest_ = _instructions(indexed)
    body: dict[str, Any] = {}
    if instructions is not None:
        body["instructions"] = instructions
    if (
        len(rest_) == 1
        and rest_[0][1].role is Role.User
        and mine(rest_[0][1], NAME).get("string")
    ):
        body["input"] = rest_[0][1].content[0].text  # type: ignore[attr-defined]
        return body
    renderer = _Renderer(settings, response=False)
    if fast and _one_pass and not own:
        body["input"] = _one_pass[0]._plain_items(renderer, rest_)
    else:
        body["input"] = renderer.items(rest_)
    return body


# The one-pass paths (.fast) for the common shapes, registered by that module
# when the package loads it: this module never imports it.
_one_pass: list[Any] = []


def _register_one_pass(module: Any) -> None:
    """Let the general path use ``module``'s one-pass paths."""
    _one_pass[:] = [module]
