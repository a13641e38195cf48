"""Amazon Bedrock Converse messages: ``system`` and ``messages``, both directions.

A message is a role (``user`` or ``assistant``) and a list of content blocks,
each an object with one key naming its kind. ``text``, ``image``,
``document``, ``video`` and ``audio`` blocks are parts of the message's
:class:`~canisters.User` or :class:`~canisters.Assistant` canister;
``reasoningContent`` is a :class:`~canisters.Reasoning` part bound to this
format (``reasoningText`` with its ``signature``, or ``redactedContent``);
``toolUse`` blocks are :class:`~canisters.Invocation` s and ``toolResult``
blocks :class:`~canisters.Result` s (``json`` content as a text part of type
``application/json``; ``status: "error"`` as the result's error). A
``cachePoint`` marks the block before it: it is kept on that part (or call,
or result) as the cache marker Anthropic's ``cache_control`` also spells, so
that either one carries to the other. ``citationsContent`` is a text part
keeping its citations. ``guardContent`` and blocks of other kinds are kept
whole in their place, bound to this format.

Bytes (``image``, ``document`` and ``video`` sources, ``redactedContent``) are
raw bytes in the SDK's parameters (boto3) and base64 text in the REST JSON
body: both are read. A body is rendered in the REST JSON form (base64 text),
except that a part read from raw bytes goes back as raw bytes;
:func:`canisters.providers.bedrock_converse.to_sdk` and
:func:`~canisters.providers.bedrock_converse.to_json` turn a whole body into
either form.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from typing import Any

import attrs

from canisters.canisters import Assistant, Invocation, Result, Supervisor, User
from canisters.content import Audio, File, Image, Reasoning, Text, Video
from canisters.conversation import Conversation
from canisters.protocols import Role
from canisters.providers import kit

__all__ = ["NAME", "REQUEST_FIELDS", "parse_request", "render_request"]

NAME = "bedrock-converse"
"""The provider name."""

REQUEST_FIELDS = ("system", "messages")
"""The request fields that carry the conversation."""

JSON = "application/json"


def _cache_read(value: Any) -> Any:
    if isinstance(value, Mapping) and value.get("type") == "default":
        return {"type": "ephemeral", **kit.rest(value, frozenset({"type"}))}
    return None


def _cache_write(value: Any) -> Any:
    if isinstance(value, Mapping) and value.get("type") == "ephemeral":
        return {"type": "default", **kit.rest(value, frozenset({"type"}))}
    return None


kit.declare_kept(
    NAME,
    canister=("block", "message", "after"),
    part=("block", "after"),
    quiet={"status": "success"},
    spellings=(
        kit.Spelling(
            "cache_control", "part", "after", "cachePoint", _cache_read, _cache_write
        ),
        kit.Spelling(
            "cache_control",
            "canister",
            "after",
            "cachePoint",
            _cache_read,
            _cache_write,
            kinds=frozenset({"invocation", "result"}),
        ),
    ),
)
# toolUseId: 1 to 64 of letters, digits, "_" and "-"; results carry no name.
kit.declare_ids(NAME, kit.IdRule(unsafe=r"[^A-Za-z0-9_-]", max_length=64))
kit.declare_ids(NAME, named_results=False)


def _formats(kind: str, text: str) -> dict[str, str]:
    """Each wire format of ``text`` (``"format"`` or ``"format=mime"``) and its
    media type (``kind/format`` unless given)."""
    pairs = (word.partition("=") for word in text.split())
    return {wire: mime or f"{kind}/{wire}" for wire, _, mime in pairs}


_OFFICE = "application/vnd.openxmlformats-officedocument"
IMAGE_FORMATS = _formats("image", "png jpeg gif webp")
DOCUMENT_FORMATS = _formats(
    "application",
    f"pdf csv=text/csv doc=application/msword xls=application/vnd.ms-excel "
    f"docx={_OFFICE}.wordprocessingml.document html=text/html txt=text/plain "
    f"xlsx={_OFFICE}.spreadsheetml.sheet md=text/markdown",
)
VIDEO_FORMATS = _formats(
    "video",
    "mkv=video/x-matroska mov=video/quicktime mp4 webm flv=video/x-flv mpeg mpg "
    "wmv=video/x-ms-wmv three_gp=video/3gpp",
)
AUDIO_FORMATS = _formats(
    "audio", "mp3 opus wav aac flac mp4 ogg mkv mka x-aac m4a mpeg mpga pcm webm"
)
_MEDIA: dict[str, tuple[Any, dict[str, str]]] = {
    "image": (Image, IMAGE_FORMATS),
    "document": (File, DOCUMENT_FORMATS),
    "video": (Video, VIDEO_FORMATS),
    "audio": (Audio, AUDIO_FORMATS),
}
_FORMAT_OF = {
    kind: {mime: wire for wire, mime in formats.items()}
    for kind, (_, formats) in _MEDIA.items()
}
_UNNAMED = re.compile(r"[^A-Za-z0-9\s()\[\]-]")
_KIND_OF = {"image": "image", "file": "document", "video": "video", "audio": "audio"}


# Parsing ---------------------------------------------------------------------------


def read_bytes(value: Any, path: str) -> tuple[bytes, dict[str, Any]]:
    """The bytes of a blob (raw bytes, or base64 text) and the marks that
    write it back as it came."""
    if isinstance(value, (bytes, bytearray)):
        return bytes(value), {"sdk": True}
    text = kit.expect_str(value, path)
    data, exact = kit.b64decode_exact(text, path)
    return data, {} if exact else {"raw": text}


def _media(kind: str, block: Mapping[str, Any], path: str) -> Any:
    """The part of an ``image``, ``document`` or ``video`` block, or ``None``
    for a shape kept whole."""
    build, formats = _MEDIA[kind]
    wire = block.get("format")
    mime = formats.get(wire) if isinstance(wire, str) else None
    source = block.get("source")
    if mime is None or not isinstance(source, Mapping) or len(source) != 1:
        return None
    known = {"format", "source"} | ({"name"} if kind == "document" else set())
    marks: dict[str, Any] = {}
    extra = kit.rest(block, frozenset(known))
    if extra:
        marks["block"] = extra
    named: dict[str, Any] = {}
    if kind == "document":
        name = block.get("name")
        if not isinstance(name, str):
            return None
        named["filename"] = name
    where = f"{path}.source"
    if "bytes" in source:
        data, more = read_bytes(source["bytes"], f"{where}.bytes")
        marks.update(more)
        return build(data=data, mime_type=mime, extras=_own(marks), **named)
    if "s3Location" in source:
        location = kit.expect_mapping(source["s3Location"], f"{where}.s3Location")
        uri = kit.expect_str(location.get("uri"), f"{where}.s3Location.uri")
        other = kit.rest(location, frozenset({"uri"}))
        if other:
            marks["s3"] = other
        return build(url=uri, mime_type=mime, extras=_own(marks), **named)
    if "text" in source and kind == "document":
        text = kit.expect_str(source["text"], f"{where}.text")
        marks["source"] = "text"
        return File(
            data=text.encode(), mime_type="text/plain", extras=_own(marks), **named
        )
    return None


def _raw(data: Any) -> bytes:
    """The bytes of what :func:`~canisters.providers.kit.media_bytes` gives
    (bytes, or the base64 a part was read from)."""
    if isinstance(data, (bytes, bytearray)):
        return bytes(data)
    return kit.b64decode_exact(kit.b64encode(data))[0]


def _own(marks: Mapping[str, Any]) -> dict[str, Any]:
    return {NAME: dict(marks)} if marks else {}


def _marked(item: Any, key: str, value: Any) -> Any:
    """``item`` (a part or canister) with ``key`` set in its extras here."""
    own = {**kit.mine(item, NAME), key: value}
    return attrs.evolve(item, extras={**item.extras, NAME: own})


def _result_part(item: Any, path: str) -> Any:
    mapping = kit.expect_mapping(item, path)
    if len(mapping) == 1:
        if "text" in mapping:
            return Text(kit.expect_str(mapping["text"], f"{path}.text"))
        if "json" in mapping:
            return Text(json.dumps(mapping["json"], ensure_ascii=False), JSON)
        for kind in _MEDIA:
            if kind in mapping:
                block = kit.expect_mapping(mapping[kind], f"{path}.{kind}")
                part = _media(kind, block, f"{path}.{kind}")
                if part is not None:
                    return part
    return kit.opaque_part(NAME, mapping)


class _Parser:
    def __init__(self) -> None:
        self.names: dict[str, str] = {}

    def blocks(
        self, role: str, blocks: list[Any], path: str, marks: dict[str, Any]
    ) -> list[Any]:
        """The canisters of one message's content blocks."""
        made: list[Any] = []
        parts: list[Any] = []
        build = User if role == "user" else Assistant

        def close(last: bool = False) -> None:
            if parts or (last and not made) or marks:
                extras = dict(marks)
                kit.bind_parts(extras, parts)
                made.append(build(tuple(parts), extras=_own(extras)))
                marks.clear()
            parts.clear()

        for number, raw in enumerate(blocks):
            where = f"{path}[{number}]"
            block = kit.expect_mapping(raw, where)
            kind = next(iter(block), None) if len(block) == 1 else None
            value = block[kind] if kind is not None else None
            if kind == "cachePoint" and (parts or made):
                if parts:
                    parts[-1] = _marked(parts[-1], "after", {kind: value})
                else:
                    made[-1] = _marked(made[-1], "after", {kind: value})
                continue
            part = self.part(role, kind, value, where)
            if part is not None:
                parts.append(part)
                continue
            if kind == "toolUse" and role == "assistant" and isinstance(value, Mapping):
                call = self.call(value, f"{where}.toolUse")
                if call is not None:
                    close()
                    made.append(call)
                    continue
            if kind == "toolResult" and role == "user" and isinstance(value, Mapping):
                close()
                made.append(self.result(value, f"{where}.toolResult"))
                continue
            parts.append(kit.opaque_part(NAME, block))
        close(last=True)
        return made

    def part(self, role: str, kind: Any, value: Any, path: str) -> Any:
        if kind == "text":
            return Text(kit.expect_str(value, f"{path}.text"))
        if kind in _MEDIA and isinstance(value, Mapping):
            return _media(kind, value, f"{path}.{kind}")
        if kind == "reasoningContent" and role == "assistant":
            where = f"{path}.{kind}"
            return _reasoning(kit.expect_mapping(value, where), where)
        if kind == "citationsContent" and isinstance(value, Mapping):
            content = value.get("content")
            if (
                isinstance(content, list)
                and len(content) == 1
                and isinstance(content[0], Mapping)
                and set(content[0]) == {"text"}
                and isinstance(content[0]["text"], str)
            ):
                rest = kit.rest(value, frozenset({"content"}))
                return Text(content[0]["text"], extras=_own({"citations": rest}))
        return None

    def call(self, value: Mapping[str, Any], path: str) -> Any:
        arguments = value.get("input")
        if not isinstance(arguments, Mapping) or value.get("type", "tool_use") != (
            "tool_use"
        ):
            return None  # a server tool's call, or an input not an object: kept whole
        call_id = kit.expect_str(value.get("toolUseId"), f"{path}.toolUseId")
        name = kit.expect_str(value.get("name"), f"{path}.name")
        extra = kit.rest(value, frozenset({"toolUseId", "name", "input"}))
        self.names[call_id] = name
        return Invocation(
            name=name,
            arguments=dict(arguments),
            invocation_id=call_id,
            extras=_own({"block": extra} if extra else {}),
        )

    def result(self, value: Mapping[str, Any], path: str) -> Any:
        call_id = kit.expect_str(value.get("toolUseId"), f"{path}.toolUseId")
        items = kit.expect_list(value.get("content", []), f"{path}.content")
        parts = [
            _result_part(item, f"{path}.content[{n}]") for n, item in enumerate(items)
        ]
        marks: dict[str, Any] = {}
        if "content" not in value:
            marks["content"] = None
        extra = kit.rest(value, frozenset({"toolUseId", "content", "status"}))
        status = value.get("status")
        error = None
        if status == "error":
            first = parts[0] if parts else None
            text = first.text if type(first) is Text and first.mime_type != JSON else ""
            if text and first is not None and not kit.mine(first, NAME):
                parts = parts[1:]
            else:
                marks["error"] = "empty"
            error = kit.decode_error_text(text, flagged=True)
        elif "status" in value:
            extra["status"] = status
        if extra:
            marks["block"] = extra
        kit.bind_parts(marks, parts)
        return Result(
            invocation_id=call_id,
            name=self.names.get(call_id, ""),
            content=tuple(parts),
            error=error,
            extras=_own(marks),
        )


def _reasoning(value: Mapping[str, Any], path: str) -> Any:
    if set(value) == {"reasoningText"}:
        inner = kit.expect_mapping(value["reasoningText"], f"{path}.reasoningText")
        text = kit.expect_str(inner.get("text"), f"{path}.reasoningText.text")
        signature = kit.expect_optional_str(
            inner.get("signature"), f"{path}.reasoningText.signature"
        )
        if set(inner) <= {"text", "signature"}:
            return Reasoning(text, signature, provider=NAME)
    if set(value) == {"redactedContent"}:
        data, marks = read_bytes(value["redactedContent"], f"{path}.redactedContent")
        redacted = marks.get("raw") or kit.b64encode(data)
        return Reasoning(redacted=redacted, provider=NAME, extras=_own(marks))
    return None


def parse_system(value: Any, path: str = "$.system") -> Supervisor:
    """The supervisor canister of a ``system`` list."""
    parts: list[Any] = []
    for number, raw in enumerate(kit.expect_list(value, path)):
        block = kit.expect_mapping(raw, f"{path}[{number}]")
        if set(block) == {"text"}:
            parts.append(Text(kit.expect_str(block["text"], f"{path}[{number}].text")))
        elif set(block) == {"cachePoint"} and parts:
            parts[-1] = _marked(parts[-1], "after", dict(block))
        else:
            parts.append(kit.opaque_part(NAME, block))
    marks: dict[str, Any] = {}
    kit.bind_parts(marks, parts)
    return Supervisor(tuple(parts), extras=_own(marks))


def parse_message(
    parser: _Parser, raw: Any, path: str, previous: str | None
) -> list[Any]:
    """The canisters of one message; ``previous`` the role of the message
    before it (consecutive messages of one role stay apart)."""
    message = kit.expect_mapping(raw, path)
    role = message.get("role")
    content = message.get("content")
    if role not in ("user", "assistant") or not isinstance(content, list):
        kit.expect_str(role, f"{path}.role")
        kit.expect_list(content, f"{path}.content")
        marks: dict[str, Any] = {"raw": dict(message)}
        kit.bind(marks, [str(role)])
        return [Assistant((), extras=_own(marks))]
    marks = {}
    other = kit.rest(message, frozenset({"role", "content"}))
    if other:
        marks["message"] = other
    if previous == role:
        marks["split"] = True
    made = parser.blocks(role, content, f"{path}.content", marks)
    return made


def parse_request(body: object) -> Conversation:
    """The conversation of a Converse request's ``system`` and ``messages``."""
    mapping = kit.as_mapping(body)
    canisters: list[Any] = []
    if "system" in mapping:
        canisters.append(parse_system(mapping["system"]))
    parser = _Parser()
    previous = None
    messages = kit.expect_list(mapping.get("messages", []), "$.messages")
    for index, raw in enumerate(messages):
        made = parse_message(parser, raw, f"$.messages[{index}]", previous)
        canisters += made
        previous = raw.get("role") if "raw" not in kit.mine(made[0], NAME) else None
    # A user block a body put between calls and their results stays there.
    return Conversation(kit.mark_interposed(canisters, NAME))


# Rendering -------------------------------------------------------------------------


class Renderer:
    """Writes canisters as Converse content blocks and messages."""

    def __init__(self, options: kit.Options) -> None:
        self.options = options

    def media(self, part: Any, where: str) -> dict[str, Any] | None:
        kind = _KIND_OF.get(part.type)
        own = kit.mine(part, NAME)
        mime = part.mime_type or (
            kit.media_mime(part) if part.url is None else kit.mime_from_url(part.url)
        )
        wire = _FORMAT_OF[kind].get(mime or "") if kind is not None else None
        if kind is None or wire is None:
            text = kit.unsupported(
                self.options, NAME, where, f"Converse takes no {mime} {part.type}"
            )
            return None if text is None else {"text": text}
        block: dict[str, Any] = {"format": wire}
        if kind == "document":
            block["name"] = self.name(part.filename, where)
        if part.url is not None and part.url.startswith("s3://"):
            source: dict[str, Any] = {
                "s3Location": {"uri": part.url, **own.get("s3", {})}
            }
        else:
            data = kit.media_bytes(part, self.options)
            if data is None:
                text = kit.unsupported(
                    self.options,
                    NAME,
                    where,
                    "Converse takes media as bytes or an s3:// location; give a "
                    "resolver",
                )
                return None if text is None else {"text": text}
            if own.get("source") == "text":
                source = {"text": _raw(data).decode()}
            elif own.get("sdk"):
                source = {"bytes": _raw(data)}
            else:
                source = {"bytes": own.get("raw") or kit.b64encode(data)}
        block["source"] = source
        block.update(own.get("block", {}))
        return {kind: block}

    def name(self, filename: str | None, where: str) -> str:
        """A document's ``name``: letters, digits, spaces, hyphens, parentheses
        and brackets only, no two spaces in a row (the API's rule)."""
        name = " ".join(_UNNAMED.sub("-", filename or "document").split())
        if name != filename:
            detail = f"document name {filename!r} sent as {name!r}"
            self.options.note("synthesized", NAME, where, detail, "Converse's names")
        return name

    def part(self, canister: Any, index: int, number: int, part: Any) -> list[Any]:
        """The blocks of one part (none when dropped)."""
        own = kit.mine(part, NAME)
        empty = part.type == "text" and not part.text and not own
        if empty and canister.role is Role.Supervisor:
            # Converse refuses an empty system text.
            where = kit.describe(index, canister, number, part)
            self.options.note("dropped", NAME, where, "empty text")
            return []
        if part.type == "text":
            if "raw" in own:
                blocks = [dict(own["raw"])]
            elif "citations" in own:
                blocks = [
                    {
                        "citationsContent": {
                            "content": [{"text": part.text}],
                            **own["citations"],
                        }
                    }
                ]
            else:
                blocks = [{"text": part.text}]
        else:
            where = kit.describe(index, canister, number, part)
            if part.type == "reasoning":
                blocks = self.reasoning(canister, part, where)
            elif part.type in _KIND_OF:
                block = self.media(part, where)
                blocks = [] if block is None else [block]
            else:
                text = kit.unsupported(
                    self.options, NAME, where, f"Converse takes no {part.type} parts"
                )
                blocks = [] if text is None else [{"text": text}]
        if "after" in own and blocks:
            blocks.append(dict(own["after"]))
        return blocks

    def reasoning(self, canister: Any, part: Any, where: str) -> list[Any]:
        own_part = part.provider == NAME and canister.role is Role.Assistant
        native = own_part and (part.signature is not None or part.redacted is not None)
        if own_part and not native:
            return [{"reasoningContent": {"reasoningText": {"text": part.text}}}]
        action = kit.reasoning_action(part, NAME, self.options, where, native=native)
        if action == "text":
            return [{"text": part.text}]
        if action == "drop":
            return []
        if part.redacted is not None:
            own = kit.mine(part, NAME)
            data = kit.b64decode_exact(part.redacted, where)[0]
            value: Any = (
                data if own.get("sdk") else own.get("raw") or kit.b64encode(data)
            )
            return [{"reasoningContent": {"redactedContent": value}}]
        text: dict[str, Any] = {"text": part.text}
        if part.signature is not None:
            text["signature"] = part.signature
        return [{"reasoningContent": {"reasoningText": text}}]

    def content(self, canister: Any, index: int) -> list[Any]:
        """The blocks of one canister."""
        own = kit.mine(canister, NAME)
        if canister.role is Role.Invocation:
            use = {
                "toolUseId": canister.invocation_id,
                "name": canister.name,
                "input": dict(canister.arguments),
                **own.get("block", {}),
            }
            blocks: list[Any] = [{"toolUse": use}]
        elif canister.role is Role.Result:
            blocks = [{"toolResult": self.result(canister, index, own)}]
        else:
            blocks = []
            for number, part in enumerate(canister.content):
                blocks += self.part(canister, index, number, part)
        if "after" in own:
            blocks.append(dict(own["after"]))
        return blocks

    def result(self, canister: Any, index: int, own: Mapping[str, Any]) -> Any:
        items: list[Any] = []
        for number, part in enumerate(canister.content):
            if part.type == "text" and "raw" not in kit.mine(part, NAME):
                if part.mime_type == JSON:
                    try:
                        items.append({"json": json.loads(part.text)})
                        continue
                    except ValueError:
                        pass
                items.append({"text": part.text})
                continue
            blocks = self.part(canister, index, number, part)
            items += [
                {"text": b["text"]} if set(b) == {"text"} else b
                for b in blocks
                if "cachePoint" not in b
            ]
        error = canister.error
        if error is not None and own.get("error") != "empty":
            items.insert(0, {"text": kit.encode_error_text(error, compact=True)})
        block: dict[str, Any] = {"toolUseId": canister.invocation_id}
        if own.get("content", "list") is not None or items:
            block["content"] = items
        if error is not None:
            block["status"] = "error"
        block.update(own.get("block", {}))
        return block

    def system(self, canisters: list[Any]) -> list[Any]:
        """The ``system`` blocks: every supervisor's, wherever it stands."""
        blocks: list[Any] = []
        for index, canister in enumerate(canisters):
            if canister.role is Role.Supervisor:
                blocks += self.content(canister, index)
        return blocks

    def messages(self, canisters: list[Any]) -> list[dict[str, Any]]:
        """The ``messages``: the canisters of one wire role in a row make one
        message, unless read from messages of their own (``split``)."""

        def wire_role(canister: Any) -> str:
            if "raw" in kit.mine(canister, NAME):
                return f"raw {canister.id}"
            return (
                "assistant"
                if canister.role in (Role.Assistant, Role.Invocation)
                else "user"
            )

        place = {id(canister): index for index, canister in enumerate(canisters)}
        talk = [c for c in canisters if c.role is not Role.Supervisor]
        turns = kit.group_turns(talk, wire_role, kit.joins_alternating(NAME))
        rendered: list[dict[str, Any]] = []
        for role, group in turns:
            head = kit.mine(group[0], NAME)
            if "raw" in head:
                rendered.append(dict(head["raw"]))
                continue
            content: list[Any] = []
            for canister in group:
                content += self.content(canister, place[id(canister)])
            rendered.append(
                {"role": role, "content": content, **head.get("message", {})}
            )
        return rendered


def render_request(
    conversation: Conversation, options: Mapping[str, Any]
) -> dict[str, Any]:
    """The ``system`` and ``messages`` of a Converse request."""
    opts = kit.options_from(options)
    sent = kit.request_canisters(conversation, opts, NAME, adjacent=True)
    canisters = sent.canisters
    renderer = Renderer(opts)
    body: dict[str, Any] = {}
    if any(canister.role is Role.Supervisor for canister in canisters):
        body["system"] = renderer.system(canisters)
    body["messages"] = renderer.messages(canisters)
    return body
