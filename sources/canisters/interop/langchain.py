"""LangChain message lists to canisters and back (extra ``langchain``).

::

    from canisters.interop import langchain

    conversation = langchain.to_canisters(messages)   # list[BaseMessage]
    messages = langchain.from_canisters(conversation)

- ``SystemMessage`` becomes a :class:`~canisters.Supervisor`, ``HumanMessage`` a
  :class:`~canisters.User`; string content becomes one text part, content
  blocks become parts: ``text``, ``reasoning`` (and Anthropic-style
  ``thinking`` with its signature), ``image`` / ``audio`` / ``video`` /
  ``file`` (``url``, ``base64`` or ``file_id``) and the older ``image_url``;
- ``AIMessage`` becomes an :class:`~canisters.Assistant` and an
  :class:`~canisters.Invocation` per entry of ``tool_calls``; its
  ``usage_metadata`` and the ``model_name`` / ``finish_reason`` of its
  ``response_metadata`` become the first canister's metadata;
- ``ToolMessage`` becomes a :class:`~canisters.Result`, with an
  :class:`~canisters.ErrorInfo` when its ``status`` is ``"error"``; without a
  ``name`` (it is optional, and mostly left out) the result takes the name of
  the tool call it answers.

A message's ``id`` becomes the id of its first canister (and back); everything
else LangChain holds rides in ``extras["langchain"]``, so
``from_canisters(to_canisters(m)) == m``. What LangChain cannot hold is recorded
in ``report``.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

import attrs

from ..canisters import (
    Assistant,
    ErrorCode,
    ErrorInfo,
    Invocation,
    Metadata,
    Result,
    Supervisor,
    Usage,
    User,
    new_id,
)
from ..content import Audio, File, Image, Media, Reasoning, Text, Video
from ..conversation import Conversation, canisters_in
from ..exceptions import MalformedPayload, ModelError, _excerpt
from ..protocols import Canister, Content, Role
from ..provided import (
    Citation,
    CitedText,
    DocumentSource,
    ProviderToolCall,
    ProviderToolResult,
    SearchHit,
    UrlSource,
)
from ..providers.kit import (
    Report,
    b64decode_exact,
    b64encode,
    expect_list,
    expect_mapping,
    expect_optional_str,
    expect_str,
    guarded,
    mine,
)
from ._common import refused, report_losses, require

if TYPE_CHECKING:
    from langchain_core.messages import BaseMessage

__all__ = ["NAME", "from_canisters", "from_json", "to_canisters", "to_json"]

NAME = "langchain"
"""The key of ``extras`` this module keeps LangChain's own fields under."""

_MEDIA: Mapping[str, type[Media]] = {
    "image": Image,
    "audio": Audio,
    "video": Video,
    "file": File,
}
_KNOWN = frozenset(("content", "type", "id"))
_EMPTY_DEFAULTS: Mapping[str, Any] = {
    "additional_kwargs": {},
    "response_metadata": {},
    "name": None,
    "invalid_tool_calls": [],
    "tool_calls": [],
    "usage_metadata": None,
    "artifact": None,
    "status": "success",
}


def _messages_module() -> Any:
    return require("langchain_core.messages", "langchain")


# LangChain -> canisters --------------------------------------------------------------


def to_canisters(messages: Sequence[BaseMessage]) -> Conversation:
    """Convert LangChain messages into a :class:`~canisters.Conversation`.

    Raises :class:`~canisters.exceptions.MissingExtra` when langchain-core is not
    installed and :class:`~canisters.MalformedPayload` for anything else than
    ``BaseMessage`` objects of the kinds above.
    """
    module = _messages_module()
    dumped = []
    for index, message in enumerate(messages):
        if not isinstance(message, module.BaseMessage):
            raise MalformedPayload(
                f"expected a LangChain message, got {type(message).__name__}",
                f"$[{index}]",
            )
        dumped.append(message.model_dump())
    return Conversation(_read_messages(dumped))


def from_json(data: str | bytes) -> Conversation:
    """Read LangChain's JSON form of a message list (``messages_to_dict``)."""
    module = _messages_module()
    try:
        decoded = json.loads(data)
        messages = module.messages_from_dict(decoded)
    except Exception as error:
        raise refused("LangChain messages", error) from None
    return to_canisters(messages)


@guarded
def _read_messages(messages: Sequence[Mapping[str, Any]]) -> list[Canister]:
    out: list[Canister] = []
    for index, message in enumerate(messages):
        path = f"$[{index}]"
        kind = message.get("type")
        start = len(out)
        rest = {
            key: value
            for key, value in message.items()
            if key not in _KNOWN and _EMPTY_DEFAULTS.get(key, ...) != value
        }
        if message.get("id") is None:
            rest["id"] = None
        content, shape = _read_content(message.get("content"), f"{path}.content")
        if kind == "system":
            out.append(Supervisor(content))
        elif kind == "human":
            out.append(User(content))
        elif kind == "ai":
            rest.pop("tool_calls", None)
            calls = expect_list(message.get("tool_calls") or [], f"{path}.tool_calls")
            if content or shape or not calls:
                out.append(Assistant(content))
            for number, call in enumerate(calls):
                out.append(_read_call(call, f"{path}.tool_calls[{number}]"))
            _read_ai_metadata(rest, out, start)
        elif kind == "tool":
            status = rest.pop("status", "success")
            call_id = expect_str(message.get("tool_call_id"), f"{path}.tool_call_id")
            rest.pop("tool_call_id", None)
            given = message.get("name")
            if given is not None:
                rest.pop("name", None)
            # ToolMessage.name is optional and mostly left out: the result names
            # the tool of its call, as OpenAI Chat's tool messages do.
            name = given or _called(out, call_id) or ""
            error = None
            if status == "error":
                text = "".join(p.text for p in content if type(p) is Text)
                error = ErrorInfo(ErrorCode.TOOL_ERROR, text)
            out.append(Result(call_id, name, content, error))
            if given != name:
                rest["name"] = given  # given back as it was
        else:
            raise MalformedPayload(
                f"unknown message type {_excerpt(kind)}", f"{path}.type"
            )
        own = dict(mine(out[start], NAME))
        if shape:
            own["shape"] = shape
        own["message"] = rest
        changes: dict[str, Any] = {"extras": {**out[start].extras, NAME: own}}
        if message.get("id") is not None:
            changes["id"] = message["id"]
        out[start] = attrs.evolve(out[start], **changes)  # type: ignore[misc]
    return out


def _called(out: Sequence[Canister], call_id: str) -> str | None:
    """The name of the tool call ``call_id`` among the canisters read so far."""
    for canister in reversed(out):
        if (
            canister.role is Role.Invocation and canister.invocation_id == call_id  # type: ignore[attr-defined]
        ):
            return canister.name  # type: ignore[attr-defined,no-any-return]
    return None


def _read_ai_metadata(rest: dict[str, Any], out: list[Canister], start: int) -> None:
    usage_metadata = rest.get("usage_metadata")
    response = dict(rest.get("response_metadata") or {})
    model = response.pop("model_name", None)
    finish = response.get("finish_reason")
    usage = _usage(usage_metadata) if isinstance(usage_metadata, Mapping) else None
    if isinstance(model, str):
        if response:
            rest["response_metadata"] = response
        else:
            rest.pop("response_metadata", None)
    else:
        model = None
    metadata = Metadata(
        model=model,
        usage=usage,
        finish_reason=finish if isinstance(finish, str) else None,
    )
    if metadata != Metadata():
        out[start] = attrs.evolve(out[start], metadata=metadata)  # type: ignore[misc]


def _usage(value: Mapping[str, Any]) -> Usage:
    inputs = value.get("input_token_details") or {}
    outputs = value.get("output_token_details") or {}
    return Usage(
        value.get("input_tokens", 0) or 0,
        value.get("output_tokens", 0) or 0,
        inputs.get("cache_read", 0) or 0,
        inputs.get("cache_creation", 0) or 0,
        outputs.get("reasoning", 0) or 0,
    )


def _read_call(call: Any, path: str) -> Invocation:
    call = expect_mapping(call, path)
    name = expect_str(call.get("name"), f"{path}.name")
    arguments = expect_mapping(call.get("args") or {}, f"{path}.args")
    rest = {k: v for k, v in call.items() if k not in ("name", "args", "id", "type")}
    call_id = call.get("id")
    if call_id is None:
        rest["id"] = None
        call_id = new_id()
    return Invocation(
        name,
        arguments,
        invocation_id=expect_str(call_id, f"{path}.id"),
        extras={NAME: rest} if rest else {},
    )


def _read_content(value: Any, path: str) -> tuple[tuple[Content, ...], str | None]:
    if isinstance(value, str):
        return ((Text(value),) if value else ()), None
    blocks = expect_list(value, path)
    parts: list[Content] = []
    for index, block in enumerate(blocks):
        where = f"{path}[{index}]"
        if isinstance(block, str):
            parts.append(Text(block, extras={NAME: {"string": True}}))
        else:
            parts.append(_read_block(expect_mapping(block, where), where, parts))
    return tuple(parts), "list"


def _rest(block: Mapping[str, Any], known: Iterable[str]) -> dict[str, Any]:
    skip = set(known)
    return {k: v for k, v in block.items() if k not in skip}


def _extras(rest: Mapping[str, Any]) -> dict[str, Any]:
    return {NAME: dict(rest)} if rest else {}


def _id(block: Mapping[str, Any], path: str) -> str | None:
    """A standard block's ``id``: a string or absent."""
    return expect_optional_str(block.get("id"), f"{path}.id")


def _read_block(
    block: Mapping[str, Any], path: str, before: Sequence[Content] = ()
) -> Content:
    kind: Any = block.get("type")
    provided = _read_provided(block, kind, before)
    if provided is not None:
        return provided
    if kind == "text" and isinstance(block.get("text"), str):
        rest = _rest(block, ("type", "text", "id"))
        return Text(block["text"], id=_id(block, path), extras=_extras(rest))
    if kind == "reasoning" and isinstance(block.get("reasoning", ""), str):
        rest = _rest(block, ("type", "reasoning", "id"))
        return Reasoning(
            block.get("reasoning", ""), id=_id(block, path), extras=_extras(rest)
        )
    if kind == "thinking" and isinstance(block.get("thinking"), str):
        signature = block.get("signature")
        rest = _rest(block, ("type", "thinking", "signature"))
        if signature is None:
            rest["type"] = "thinking"
        return Reasoning(
            block["thinking"],
            signature=signature,
            provider="anthropic" if signature is not None else None,
            extras=_extras(rest),
        )
    if (
        isinstance(kind, str)
        and kind in _MEDIA
        and any(k in block for k in ("url", "base64", "file_id"))
    ):
        cls = _MEDIA[kind]
        mime = expect_optional_str(block.get("mime_type"), f"{path}.mime_type")
        rest = _rest(block, ("type", "url", "base64", "file_id", "mime_type", "id"))
        source: dict[str, Any] = {}
        if "base64" in block:
            data, exact = b64decode_exact(
                expect_str(block["base64"], f"{path}.base64"), f"{path}.base64"
            )
            source["data"] = data
            if not exact:
                rest["base64"] = block["base64"]
        elif "url" in block:
            source["url"] = expect_str(block["url"], f"{path}.url")
        if "file_id" in block:
            refs = {NAME: expect_str(block["file_id"], f"{path}.file_id")}
            source["refs"] = refs
        identifier = _id(block, path)
        return cls(mime_type=mime, id=identifier, extras=_extras(rest), **source)
    if kind == "image_url":
        image_url = block.get("image_url")
        url = image_url.get("url") if isinstance(image_url, Mapping) else image_url
        if isinstance(url, str) and ":" in url:
            return Image(url=url, extras={NAME: {"block": dict(block)}})
    # Anything else (citations, server tool blocks, provider-specific blocks):
    # an empty text standing for the block, kept whole.
    return Text("", extras={NAME: {"block": dict(block)}})


_CITATION = frozenset(
    {"type", "url", "title", "start_index", "end_index", "cited_text"}
)
_OUTPUT = frozenset(
    {"results", "code", "stdout", "stderr", "exit_code", "error", "output"}
)


def _read_provided(
    block: Mapping[str, Any], kind: Any, before: Sequence[Content]
) -> Content | None:
    """The typed part of a text block with ``citation`` annotations or of a
    standard server tool block, where :func:`_write_block` writes that same
    block back; ``None`` otherwise (the block is then kept whole)."""
    try:
        if kind == "text" and "annotations" in block:
            return _cited(block)
        if kind == "server_tool_call":
            if not set(block) <= {"type", "name", "args", "id"}:
                return None
            name, args, call_id = (
                block.get("name"),
                block.get("args", {}),
                block.get("id"),
            )
            if not isinstance(name, str) or not isinstance(args, Mapping):
                return None
            return ProviderToolCall(name, args, call_id)
        if kind == "server_tool_result":
            return _tool_result(block, before)
    except ModelError:  # a value the typed part refuses: kept whole instead
        return None
    return None


def _cited(block: Mapping[str, Any]) -> CitedText | None:
    notes = block.get("annotations")
    if (
        not set(block) <= {"type", "text", "id", "annotations"}
        or not isinstance(block.get("text"), str)
        or not isinstance(notes, list)
        or not notes
    ):
        return None
    citations = []
    for note in notes:
        if (
            not isinstance(note, Mapping)
            or note.get("type") != "citation"
            or not set(note) <= _CITATION
        ):
            return None
        url, title = note.get("url"), note.get("title")
        source = (
            UrlSource(url, title) if url is not None else DocumentSource(None, title)
        )
        citations.append(
            Citation(
                source,
                note.get("cited_text"),
                note.get("start_index"),
                note.get("end_index"),
            )
        )
    return CitedText(block["text"], id=block.get("id"), citations=citations)


def _tool_result(
    block: Mapping[str, Any], before: Sequence[Content]
) -> ProviderToolResult | None:
    status, output = block.get("status"), block.get("output", None)
    call_id = block.get("tool_call_id")
    if (
        not set(block) <= {"type", "tool_call_id", "status", "output"}
        or status not in ("success", "error")
        or not (output is None or (isinstance(output, Mapping) and output))
        or (output is not None and not set(output) <= _OUTPUT)
    ):
        return None
    fields: dict[str, Any] = dict(output or {})
    results = fields.pop("results", None)
    hits = []
    if results is not None:
        if not isinstance(results, list) or not results:
            return None
        for result in results:
            if not isinstance(result, Mapping) or not set(result) <= {"url", "title"}:
                return None
            hits.append(SearchHit(result.get("url"), result.get("title")))
    if "output" in fields and fields["output"] is None:
        return None
    name = next(
        (
            part.name
            for part in reversed(before)
            if isinstance(part, ProviderToolCall) and part.call_id == call_id
        ),
        "server_tool",
    )
    part = ProviderToolResult(
        name,
        call_id,
        status="error" if status == "error" and "error" not in fields else None,
        hits=hits,
        **fields,
    )
    return part if part.is_error == (status == "error") else None


# canisters -> LangChain --------------------------------------------------------------


def from_canisters(
    conversation: Iterable[Canister], *, report: Report | None = None
) -> list[BaseMessage]:
    """Convert a conversation into LangChain messages.

    Supervisors become ``SystemMessage``, users and documents ``HumanMessage``,
    an assistant canister and the invocations after it one ``AIMessage``, each
    result a ``ToolMessage``. What LangChain cannot hold is recorded in
    ``report``.
    """
    canisters = canisters_in(conversation, "from_canisters")
    module = _messages_module()
    dumped = _write_messages(canisters)
    classes = {
        "system": module.SystemMessage,
        "human": module.HumanMessage,
        "ai": module.AIMessage,
        "tool": module.ToolMessage,
    }
    try:
        messages = [classes[m.pop("type")](**m) for m in dumped]
    except Exception as error:
        raise MalformedPayload(f"LangChain refused the messages: {error}") from None
    if report is not None:
        back = _read_messages([m.model_dump() for m in messages])
        report_losses(canisters, back, NAME, report)
    return messages


def to_json(conversation: Iterable[Canister], *, report: Report | None = None) -> str:
    """Write a conversation as LangChain's JSON form (``messages_to_dict``)."""
    messages = from_canisters(conversation, report=report)
    return json.dumps(_messages_module().messages_to_dict(messages), ensure_ascii=False)


_TYPE = {
    Role.Supervisor: "system",
    Role.User: "human",
    Role.Document: "human",
    Role.Assistant: "ai",
    Role.Invocation: "ai",
    Role.Result: "tool",
}


def _write_messages(canisters: Sequence[Canister]) -> list[dict[str, Any]]:
    messages: list[dict[str, Any]] = []
    for canister in canisters:
        own = mine(canister, NAME)
        kind = _TYPE[canister.role]
        joins = (
            canister.role is Role.Invocation
            and "message" not in own
            and messages
            and messages[-1]["type"] == "ai"
        )
        if joins:
            messages[-1]["tool_calls"].append(_write_call(canister))
            continue
        message: dict[str, Any] = {"type": kind, **own.get("message", {})}
        message["id"] = own.get("message", {}).get("id", canister.id)
        if canister.role is Role.Invocation:
            message["content"] = ""
            message["tool_calls"] = [_write_call(canister)]
        else:
            parts = canister.content  # type: ignore[attr-defined]
            message["content"] = _write_content(parts, own.get("shape"))
        if kind == "ai":
            message.setdefault("tool_calls", [])
            _write_ai_metadata(canister, message)
        if canister.role is Role.Result:
            result: Any = canister
            message["tool_call_id"] = result.invocation_id
            if "name" not in own.get("message", {}):
                message["name"] = result.name
            if result.error is not None:
                message["status"] = "error"
                if not _parts_text(result.content):
                    message["content"] = result.error.message
        messages.append(message)
    return messages


def _parts_text(parts: Sequence[Content]) -> str:
    """The text of the text parts of ``parts``, joined."""
    return "".join(part.text for part in parts if part.type == "text")  # type: ignore[attr-defined]


def _write_ai_metadata(canister: Canister, message: dict[str, Any]) -> None:
    metadata = canister.metadata
    if metadata is None:
        return
    if metadata.model is not None:
        response = dict(message.get("response_metadata") or {})
        response["model_name"] = metadata.model
        message["response_metadata"] = response
    if metadata.usage is not None:
        kept = message.get("usage_metadata")
        if not (isinstance(kept, Mapping) and _usage(kept) == metadata.usage):
            usage = metadata.usage
            built: dict[str, Any] = {
                "input_tokens": usage.input_tokens,
                "output_tokens": usage.output_tokens,
                "total_tokens": usage.total_tokens,
            }
            if usage.cached_tokens or usage.cache_write_tokens:
                built["input_token_details"] = {
                    "cache_read": usage.cached_tokens,
                    "cache_creation": usage.cache_write_tokens,
                }
            if usage.reasoning_tokens:
                built["output_token_details"] = {"reasoning": usage.reasoning_tokens}
            message["usage_metadata"] = built


def _write_call(canister: Canister) -> dict[str, Any]:
    invocation: Any = canister
    own = {k: v for k, v in mine(canister, NAME).items() if k != "message"}
    call = {
        "name": invocation.name,
        "args": dict(invocation.arguments),
        "id": invocation.invocation_id,
        "type": "tool_call",
    }
    call.update(own)
    return call


def _write_content(parts: Sequence[Content], shape: str | None) -> Any:
    if shape is None:
        if not parts:
            return ""
        if len(parts) == 1 and type(parts[0]) is Text and not mine(parts[0], NAME):
            return parts[0].text
    blocks: list[Any] = []
    for part in parts:
        block = _write_block(part)
        if block is not None:
            blocks.append(block)
    return blocks


def _write_block(part: Content) -> Any:
    own = mine(part, NAME)
    if "block" in own:
        return dict(own["block"])
    kind = part.type
    if kind in ("text", "cited_text"):
        text: Any = part
        if kind == "cited_text":
            return _cited_block(text)
        if own.get("string"):
            return text.text
        block = {"type": "text", "text": text.text, **own}
        if text.id is not None:
            block["id"] = text.id
        return block
    if kind == "reasoning":
        reasoning: Any = part
        signed = reasoning.provider == "anthropic" and reasoning.signature is not None
        if signed or own.get("type") == "thinking":
            block = {"type": "thinking", "thinking": reasoning.text, **own}
            if signed:
                block["signature"] = reasoning.signature
            return block
        block = {"type": "reasoning", "reasoning": reasoning.text, **own}
        if reasoning.id is not None:
            block["id"] = reasoning.id
        return block
    if isinstance(part, (ProviderToolCall, ProviderToolResult)):
        return _server_block(part)
    if not isinstance(part, Media):
        return None  # a compaction has no standard block: reported
    media: Any = part
    block = {"type": _type_of(media)}
    if media.id is not None:
        block["id"] = media.id
    if media.data is not None:
        block["base64"] = own.get("base64") or b64encode(media.data)
    elif media.url is not None:
        block["url"] = media.url
    if NAME in media.refs:
        block["file_id"] = media.refs[NAME]
    elif len(block) == 1 + (media.id is not None) and media.refs:
        block["file_id"] = next(iter(media.refs.values()))
    if len(block) == 1 + (media.id is not None):
        return None  # a content id: nothing LangChain can refer to
    if media.mime_type is not None:
        block["mime_type"] = media.mime_type
    block.update({k: v for k, v in own.items() if k != "base64"})
    return block


def _cited_block(text: CitedText) -> dict[str, Any]:
    """A cited text as a standard text block with ``citation`` annotations (read
    back as a text block kept whole: what it loses is reported)."""
    annotations: list[dict[str, Any]] = []
    for citation in text.citations:
        source: Any = citation.source
        note: dict[str, Any] = {"type": "citation"}
        if isinstance(source, UrlSource):
            note["url"] = source.url
        if source.title is not None:
            note["title"] = source.title
        if citation.start is not None:
            note["start_index"] = citation.start
        if citation.end is not None:
            note["end_index"] = citation.end
        if citation.cited_text is not None:
            note["cited_text"] = citation.cited_text
        annotations.append(note)
    block: dict[str, Any] = {"type": "text", "text": text.text}
    if text.id is not None:
        block["id"] = text.id
    block["annotations"] = annotations
    return block


def _server_block(part: ProviderToolCall | ProviderToolResult) -> dict[str, Any]:
    """A tool the provider ran as LangChain's standard server tool blocks."""
    if isinstance(part, ProviderToolCall):
        call: dict[str, Any] = {"type": "server_tool_call", "name": part.name}
        call["args"] = _plain(part.input)
        if part.call_id is not None:
            call["id"] = part.call_id
        return call
    result: dict[str, Any] = {"type": "server_tool_result"}
    if part.call_id is not None:
        result["tool_call_id"] = part.call_id
    result["status"] = "error" if part.is_error else "success"
    output: dict[str, Any] = {}
    if part.hits:
        output["results"] = [
            {k: v for k, v in (("url", h.url), ("title", h.title)) if v is not None}
            for h in part.hits
        ]
    for field in ("code", "stdout", "stderr", "exit_code", "error"):
        if (value := getattr(part, field)) is not None:
            output[field] = value
    if part.output is not None:
        output["output"] = _plain(part.output)
    if output:
        result["output"] = output
    return result


def _plain(value: Any) -> Any:
    """A read-only JSON value as plain dicts and lists."""
    if isinstance(value, Mapping):
        return {key: _plain(item) for key, item in value.items()}
    if isinstance(value, tuple):
        return [_plain(item) for item in value]
    return value


def _type_of(media: Media) -> str:
    for name, cls in _MEDIA.items():
        if type(media) is cls:
            return name
    return "file"
