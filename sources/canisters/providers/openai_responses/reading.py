"""OpenAI Responses items read into canisters (the general way): the ``input``
items of a request and the ``output`` items of a response, for
:mod:`.messages`, :mod:`.response` and :mod:`.fast`."""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime
from typing import Any

import attrs

from ..._frozen import EMPTY, FrozenDict
from ...canisters import Result
from ...content import Audio, File, Image, Text
from ...exceptions import MalformedPayload, _excerpt
from ...protocols import Canister
from .. import _common as common
from .._common import (
    b64decode_exact,
    bind_parts,
    built,
    compact_arguments,
    decode_error_text,
    expect_list,
    expect_mapping,
    expect_str,
    expect_url,
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
    rest,
)
from .._rules import ids, kept, media
from .._rules.provided import register
from . import provided
from .wire import BASE, NAME, Wire


def declare(name: str) -> None:
    """Declare the rules of the Responses format ``name`` (the base or a
    dialect): its call ids, the wire keys it keeps verbatim and the provided
    parts it writes as its own (see :mod:`.provided`)."""
    # A part's other keys are kept verbatim; its detail is an image's detail.
    ids.declare(name, named_results=False)  # results pair by call_id alone
    # An item's keys no field models ride in "keys" as sent: an item's id is a
    # reference only the server resolves, and "status": "completed" says nothing.
    kept.declare(
        name,
        canister=("keys",),
        part=("part", "keys"),
        quiet={"status": "completed"},
        references=frozenset({"id"}),
        typed=frozenset({"annotations"}),
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
    register(name, provided.native_for(name))


declare(NAME)

_REF = BASE.ref
_AUDIO_FORMATS = {"wav": "audio/wav", "mp3": "audio/mpeg"}
_SERVER_ITEM_SUFFIXES = ("_call", "_call_output", "_output")


_wrap = BASE.wrap
"""The extras holding a mapping whole as this provider's entry."""


def _marked(part: Any, marks: Mapping[str, Any], name: str = NAME) -> Any:
    """``part`` with ``marks`` added to its extras for the format ``name``."""
    extras = FrozenDict({**part.extras, name: {**mine(part, name), **marks}})
    if type(part) is Text:
        return new_text(part.text, part.mime_type, part.id, extras)
    return attrs.evolve(part, extras=extras)


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


def _parse_part(raw: Any, path: str, wire: Wire = BASE) -> Any:
    part = expect_mapping(raw, path)
    _wrap = wire.wrap
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
                return provided.cited(made, part["annotations"], wire.name) or made
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
            kwargs["refs"] = {wire.ref: expect_str(part["file_id"], f"{path}.file_id")}
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
            kwargs["refs"] = {wire.ref: expect_str(part["file_id"], f"{path}.file_id")}
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
        return common.opaque_part(wire.name, part)  # a type not known here, kept whole
    raise MalformedPayload(
        f"unknown content part type {_excerpt(kind)}", f"{path}.type"
    )


def _plain(parts: list[Any], name: str = NAME) -> bool:
    """Whether parts would render as a plain string by default (one plain text)."""
    return len(parts) <= 1 and all(
        part.type == "text" and not mine(part, name) for part in parts
    )


def _parse_content(value: Any, path: str, wire: Wire = BASE) -> tuple[list[Any], bool]:
    """Return the parts and whether the content was a plain string."""
    if isinstance(value, str):
        return [plain_text(value)], True
    return [
        _parse_part(raw, f"{path}[{number}]", wire)
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


def _extension(name: str) -> bool:
    """Whether ``name`` is an implementor's extension type: ``<slug>:<type>``."""
    slug, colon, kind = name.partition(":")
    return bool(colon and slug and kind)


def _raw_reasoning(value: Any) -> tuple[str, Any] | None:
    """A reasoning item's raw ``content``: its text and what the reasoning
    part keeps of it (``True`` for one ``reasoning_text`` part, else the
    list as it came); ``None`` when it is no list of text parts."""
    if type(value) is not list or not value:
        return None
    if not all(
        type(entry) is dict and type(entry.get("text")) is str for entry in value
    ):
        return None
    text = "\n\n".join(entry["text"] for entry in value)
    plain = len(value) == 1 and value[0] == {"type": "reasoning_text", "text": text}
    return text, True if plain else [dict(entry) for entry in value]


class _Parser:
    """Reads the items of one body in order: reasoning and assistant message
    items gather into one assistant turn; calls and results pair by id."""

    def __init__(self, moment: datetime, wire: Wire = BASE) -> None:
        self.moment = moment
        self.wire = wire
        self.canisters: list[Canister] = []
        self.assistant: list[Any] = []
        self.assistant_extras: dict[str, Any] = {}
        self.names: dict[str, str] = {}

    def flush(self) -> None:
        if self.assistant:
            self.canisters.append(
                new_assistant(
                    self.moment,
                    self.wire.wrap(self.assistant_extras),
                    tuple(self.assistant),
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
                new_invocation(
                    self.moment, self.wire.wrap(extras), name, arguments, call_id
                )
            )
        elif kind == "function_call_output":
            self.flush()
            call_id = expect_str(item.get("call_id"), f"{path}.call_id")
            output = item.get("output")
            content, string = _parse_content(output, f"{path}.output", self.wire)
            extras = {}
            if not string and _plain(content, self.wire.name):
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
                self.wire.wrap(extras),
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
            text = "\n\n".join(texts)
            if self.wire.raw_reasoning:
                raw = _raw_reasoning(item.get("content"))
                if raw is not None:
                    # The raw reasoning is the part's text; the summary, as it came.
                    text, content = raw
                    used.add("content")
                    extras["summary"] = [dict(entry) for entry in summary]
                    extras["content"] = content
                    if summary:  # what the part's text does not say
                        extras["keys"] = {"summary": extras["summary"]}
            other = rest(item, frozenset(used))
            if other:
                extras["item"] = other
            self.assistant.append(
                new_reasoning(
                    text,
                    None,
                    encrypted,
                    self.wire.name,
                    item_id,
                    self.wire.wrap(extras),
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
                common.new_document(
                    self.moment, self.wire.wrap(extras), (), None, reference
                )
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
            parts = provided.item_parts(item, self.wire.name)
            if parts:
                # The item goes back whole; its parts say what it is, and
                # settle it for another provider (never as a client call).
                self.canisters.append(
                    new_assistant(self.moment, self.wire.wrap(extras), parts)
                )
                return
        known = (
            name.endswith(_SERVER_ITEM_SUFFIXES)
            or name.startswith(("mcp_", "compaction"))
            or (self.wire.extensions and _extension(name))
        )
        common.bind(extras, [name], unknown=not known)
        self.canisters.append(new_assistant(self.moment, self.wire.wrap(extras), ()))

    def message(self, item: Mapping[str, Any], role: str, path: str) -> None:
        if role not in _ROLES:
            self.raw(item, role)
            return
        content, string = _parse_content(
            item.get("content"), f"{path}.content", self.wire
        )
        info: dict[str, Any] = {}
        # Kept where it differs from how the format writes a message item
        # (the dialect typed, OpenAI Responses untyped in a request).
        if "type" in item and not self.wire.typed:
            info["typed"] = True
        elif "type" not in item and self.wire.typed:
            info["typed"] = False
        if not string and (_plain(content, self.wire.name) or role == "assistant"):
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
                content = [
                    new_text("", "text/plain", None, self.wire.wrap({"empty": True}))
                ]
            if self.assistant and self.assistant[-1].type != "reasoning":
                # Marks where this message item starts within the assistant turn.
                info["new"] = True
            if info:
                marks = {"item": info, "keys": keys} if keys else {"item": info}
                content[0] = _marked(content[0], marks, self.wire.name)
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
            self.canisters.append(
                new_user(self.moment, self.wire.wrap(extras), tuple(content))
            )
        elif role in ("system", "developer"):
            if role == "system" or not self.canisters:
                extras["role"] = role
            self.canisters.append(
                new_supervisor(self.moment, self.wire.wrap(extras), tuple(content))
            )
        else:
            raise MalformedPayload(f"unknown role {_excerpt(role)}", f"{path}.role")
