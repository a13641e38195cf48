"""Canisters written as Anthropic Messages blocks and messages (the general
way), for :mod:`.messages`, :mod:`.response` and :mod:`.fast`."""

from __future__ import annotations

import operator
from collections.abc import Mapping, Sequence
from typing import Any

from ...content import Text
from ...protocols import Canister, Content, Role
from .. import _common as common
from .._common import SUPERVISOR, Labeler, Options, mine
from .._rules import thinking
from . import provided
from .reading import (
    _IMAGE_TYPES,
    _PROVIDED,
    NAME,
    _message_form,
    _result_form,
    _system_form,
)

_WIRE_ROLE = {
    Role.Supervisor: "system",
    Role.User: "user",
    Role.Document: "user",
    Role.Result: "user",
    Role.Assistant: "assistant",
    Role.Invocation: "assistant",
}


class _Renderer:
    """State of one render: options and media labels."""

    def __init__(self, options: Options) -> None:
        self.options = options
        self.labels = Labeler(options)
        self.kept: set[int] = set()  # empty messages parsed from Anthropic

    def unsupported(self, where: str, reason: str) -> dict[str, Any] | None:
        text = common.unsupported(self.options, NAME, where, reason)
        return None if text is None else {"type": "text", "text": text}

    def parts(
        self,
        index: int,
        canister: Canister,
        parts: tuple[Content, ...],
        wire: str,
        *,
        in_result: bool = False,
    ) -> list[dict[str, Any]]:
        rendered: list[dict[str, Any]] = []
        opaque = mine(canister, NAME).get("opaque") or ()
        pending = sorted(((pos, block) for pos, block in opaque), key=lambda x: x[0])
        for number, part in enumerate(parts):
            while pending and pending[0][0] <= number:
                rendered.append(dict(pending.pop(0)[1]))
            if type(part) is Text and not part.extras:
                # Plain text, the common case: what part() gives, without the rest.
                if part.text:
                    rendered.append({"type": "text", "text": part.text})
                else:
                    self.empty_text(index, canister, number, part)
                continue
            where = common.describe(index, canister, number, part)
            label = self.labels.label(part)
            if label is not None:
                rendered.append({"type": "text", "text": label.text})
            item = self.part(part, where, wire, in_result)
            if item is not None:
                rendered.append(item)
        rendered.extend(dict(block) for _, block in pending)
        return rendered

    def empty_text(
        self, index: int, canister: Canister, number: int, part: Content
    ) -> None:
        # Rule: text content blocks must be non-empty.
        where = common.describe(index, canister, number, part)
        self.options.note("dropped", NAME, where, "empty text block")

    def part(
        self, part: Content, where: str, wire: str, in_result: bool
    ) -> dict[str, Any] | None:
        if part.type in _PROVIDED:
            # Another provider's, or made by hand: settled before rendering.
            return provided.render(part)
        extras = mine(part, NAME)
        block = dict(extras.get("block") or {})
        kind = part.type
        if kind == "text":
            if extras.get("document"):
                return self.text_document(part, extras)
            if not part.text and not block and not extras.get("empty"):  # type: ignore[attr-defined]
                # Rule: text content blocks must be non-empty.
                self.options.note("dropped", NAME, where, "empty text block")
                return None
            return {"type": "text", "text": part.text, **block}  # type: ignore[attr-defined]
        if kind == "reasoning":
            if wire != "assistant":
                return self.unsupported(where, "reasoning outside an assistant turn")
            action = common.reasoning_action(
                part, NAME, self.options, where, native=True
            )
            if action == "native":
                if part.redacted is not None:  # type: ignore[attr-defined]
                    return {"type": "redacted_thinking", "data": part.redacted, **block}  # type: ignore[attr-defined]
                return {
                    "type": "thinking",
                    "thinking": part.text,  # type: ignore[attr-defined]
                    "signature": part.signature,  # type: ignore[attr-defined]
                    **block,
                }
            if action == "text":
                return {"type": "text", "text": thinking.as_text(part)}
            return None
        if wire != "user":
            # Rule: assistant turns and the system prompt hold text only.
            return self.unsupported(where, f"{kind} in an {wire} turn")
        if kind == "image":
            source = self.source(part, where, _IMAGE_TYPES, "image")
            if source is None or _is_placeholder(source):
                return source
            return {"type": "image", "source": source, **block}
        if kind == "file":
            media: Any = part
            if (
                media.mime_type
                and media.mime_type.startswith("text/")
                and media.data is not None
            ):
                try:
                    text = media.data.decode("utf-8")
                except UnicodeDecodeError:
                    text = None
                if text is not None:
                    return {
                        "type": "document",
                        "source": {
                            "type": "text",
                            "media_type": "text/plain",
                            "data": text,
                        },
                        **block,
                    }
            source = self.source(
                part, where, frozenset({"application/pdf"}), "document"
            )
            if source is None or _is_placeholder(source):
                return source
            if media.filename is not None and "title" not in block:
                # The file's name: the document's title.
                return {
                    "type": "document",
                    "source": source,
                    **block,
                    "title": media.filename,
                }
            return {"type": "document", "source": source, **block}
        return self.unsupported(where, f"{kind} content")

    def text_document(self, part: Any, extras: Mapping[str, Any]) -> dict[str, Any]:
        source: dict[str, Any] = {"type": "text", "media_type": part.mime_type}
        if extras.get("no_media_type"):
            del source["media_type"]
        source["data"] = part.text
        source.update(extras.get("source") or {})
        return {"type": "document", "source": source, **(extras.get("block") or {})}

    def source(
        self, part: Any, where: str, types: frozenset[str], kind: str
    ) -> dict[str, Any] | None:
        extras = mine(part, NAME)
        more = dict(extras.get("source") or {})
        reference = part.refs.get(NAME)
        if (
            reference is not None
            and common.inline_data(part) is None
            and part.url is None
        ):
            return {"type": "file", "file_id": reference, **more}
        url = part.url
        if url is not None and url.startswith(("http:", "https:")):
            return {"type": "url", "url": url, **more}
        data = common.media_bytes(part, self.options)
        if data is None:
            if reference is not None:
                return {"type": "file", "file_id": reference, **more}
            return self.unsupported(
                where, f"{kind} needs bytes, an http(s) URL or a file id"
            )
        mime = common.media_mime(part, data)
        if mime not in types:
            sniffed = common.sniff_mime(data)
            if sniffed in types:
                # A type its bytes say, that Anthropic takes: sent for the
                # declared one, which is reported.
                self.options.note(
                    "synthesized",
                    NAME,
                    where,
                    f"{kind} of declared type {mime!r} sent as {sniffed!r}, "
                    "the type of its bytes",
                )
                mime = sniffed
            else:
                return self.unsupported(where, f"{kind} of type {mime}")
        raw = extras.get("raw")
        encoded = (
            raw
            if isinstance(raw, str) and common.b64decode_exact(raw)[0] == data
            else common.b64encode(data)
        )
        source: dict[str, Any] = {"type": "base64", "media_type": mime, "data": encoded}
        if part.mime_type is None and "media_type" in more:
            pass
        source.update(more)
        return source


def _render_document(
    renderer: _Renderer, index: int, document: Canister
) -> list[dict[str, Any]]:
    extras = mine(document, NAME)
    block = dict(extras.get("block") or {})
    title = document.title  # type: ignore[attr-defined]
    if title is not None:
        block["title"] = title
    parts = document.content  # type: ignore[attr-defined]
    if extras.get("content_source") or len(parts) != 1:
        items = renderer.parts(index, document, parts, "user")
        if not all(item.get("type") in ("text", "image") for item in items):
            return [
                item if item.get("type") != "document" else {**item, **block}
                for item in items
            ]
        source = {"type": "content", "content": items, **(extras.get("source") or {})}
        return [{"type": "document", "source": source, **block}]
    part = parts[0]
    where = common.describe(index, document, 0, part)
    if part.type == "text":
        rendered = renderer.text_document(part, mine(part, NAME))
        rendered.update(block)
        return [rendered]
    item = renderer.part(part, where, "user", False)
    if item is None:
        return []
    if item.get("type") == "image":
        return [item]
    if item.get("type") == "document":
        item.update(block)
    return [item]


def _render_result(renderer: _Renderer, index: int, result: Canister) -> dict[str, Any]:
    extras = mine(result, NAME)
    block: dict[str, Any] = {
        "type": "tool_result",
        "tool_use_id": common.render_tool_id(
            result.invocation_id,  # type: ignore[attr-defined]
            extras.get("id"),
            renderer.options,
            NAME,
            index,
            result,
        ),
    }
    parts = renderer.parts(index, result, result.content, "user", in_result=True)  # type: ignore[attr-defined]
    error = result.error  # type: ignore[attr-defined]
    rest = dict(extras.get("block") or {})
    empty_error = rest.pop("empty_error", False)
    if error is not None and not empty_error:
        parts.insert(
            0, {"type": "text", "text": common.encode_error_text(error, compact=True)}
        )
    form = extras.get("content") or _result_form(
        error if not empty_error else None,
        result.content,  # type: ignore[attr-defined]
    )
    if form == "string" and len(parts) == 1 and parts[0]["type"] == "text":
        block["content"] = parts[0]["text"]
    elif form != "absent" or parts:
        block["content"] = parts
    if error is not None:
        block["is_error"] = True
    block.update(rest)
    return block


def _render_turn(
    renderer: _Renderer, index: int, role: str, group: list[Canister]
) -> dict[str, Any]:
    head = group[0]
    extras = mine(head, NAME)
    blocks: list[dict[str, Any]] = []
    for offset, canister in enumerate(group):
        at = index + offset
        kind = canister.role
        if kind is Role.Invocation:
            arguments = canister.arguments  # type: ignore[attr-defined]
            own = mine(canister, NAME)
            blocks.append(
                {
                    "type": "tool_use",
                    "id": common.render_tool_id(
                        canister.invocation_id,  # type: ignore[attr-defined]
                        own.get("id"),
                        renderer.options,
                        NAME,
                        at,
                        canister,
                    ),
                    "name": canister.name,  # type: ignore[attr-defined]
                    "input": {**arguments},
                    **(own.get("block") or {}),
                }
            )
        elif kind is Role.Result:
            blocks.append(_render_result(renderer, at, canister))
        elif kind is Role.Document:
            blocks.extend(_render_document(renderer, at, canister))
        elif not (offset == 0 and extras.get("empty") and _all_empty(canister)):
            blocks.extend(renderer.parts(at, canister, canister.content, role))  # type: ignore[attr-defined]
    message: dict[str, Any] = {"role": role}
    form = extras.get("content") or _message_form(group)
    if extras.get("empty") and not blocks:
        # An empty message parsed from Anthropic goes back as it came.
        message["content"] = "" if form == "string" else []
        renderer.kept.add(id(message))
    elif (
        form == "string"
        and len(blocks) == 1
        and blocks[0]["type"] == "text"
        and len(blocks[0]) == 2
    ):
        message["content"] = blocks[0]["text"]
    else:
        message["content"] = blocks
    message.update(extras.get("message") or {})
    return message


def _all_empty(canister: Canister) -> bool:
    """Tell whether a canister holds nothing but empty texts."""
    return all(
        part.type == "text" and not part.text
        for part in canister.content  # type: ignore[attr-defined]
    )


def _render_system(
    renderer: _Renderer, index: int, supervisor: Canister, *, string_ok: bool
) -> Any:
    content = supervisor.content  # type: ignore[attr-defined]
    if string_ok and len(content) == 1 and not supervisor.extras:
        part = content[0]
        if type(part) is Text and not part.extras:
            # What the rest gives for one plain text, sooner; an empty one is
            # the empty string it came as.
            return part.text
    blocks = renderer.parts(index, supervisor, supervisor.content, "system")  # type: ignore[attr-defined]
    extras = mine(supervisor, NAME)
    form = extras.get("system") or (
        _system_form(supervisor.content) if string_ok else "list"  # type: ignore[attr-defined]
    )
    if form == "string" and len(blocks) == 1 and len(blocks[0]) == 2:
        return blocks[0]["text"]
    return blocks


def _top_level(supervisor: Canister) -> bool:
    """Tell whether a supervisor goes into the top-level ``system``."""
    return not mine(supervisor, NAME).get("in_messages")


def _render_messages(
    renderer: _Renderer, canisters: Sequence[Canister]
) -> list[dict[str, Any]]:
    """The messages, the general way: any extras, any canister."""
    rest = [
        (index, canister)
        for index, canister in enumerate(canisters)
        if not (canister.role is SUPERVISOR and _top_level(canister))
    ]
    messages: list[dict[str, Any]] = []
    positions = {id(canister): index for index, canister in rest}
    joins = common.joins_alternating(NAME)
    for role, group in common.group_turns(
        [canister for _, canister in rest], lambda c: _WIRE_ROLE[c.role], joins
    ):
        index = positions[id(group[0])]
        if role == "system":
            extras = mine(group[0], NAME)
            message = {
                "role": "system",
                "content": _render_system(renderer, index, group[0], string_ok=True),
            }
            message.update(extras.get("message") or {})
            messages.append(message)
            continue
        messages.append(_render_turn(renderer, index, role, group))
    return messages


_CONTENT = operator.itemgetter("content")


def _without_empty(
    messages: list[dict[str, Any]],
    options: Options,
    keep: set[int] | frozenset[int] = frozenset(),
) -> list[dict[str, Any]]:
    """Leave out messages with no content, but a final assistant one and those
    in ``keep`` (ids of empty messages parsed from Anthropic, given back).

    Rule: every message needs non-empty content except an optional final
    assistant message. The neighbours of a dropped message merge when they share
    a role.
    """
    last = len(messages) - 1
    if all(map(_CONTENT, messages)) or all(
        message["content"]
        or (number == last and message["role"] == "assistant")
        or id(message) in keep
        for number, message in enumerate(messages)
    ):
        return messages
    kept: list[dict[str, Any]] = []
    for number, message in enumerate(messages):
        if (
            message["content"]
            or (number == last and message["role"] == "assistant")
            or id(message) in keep
        ):
            previous = kept[-1] if kept else None
            if previous is not None and previous["role"] == message["role"]:
                previous["content"] = _blocks(previous["content"]) + _blocks(
                    message["content"]
                )
            else:
                kept.append(message)
            continue
        options.note(
            "dropped",
            NAME,
            f"message {number} ({message['role']})",
            "message with no content",
        )
    return kept


def _blocks(content: Any) -> list[Any]:
    return [{"type": "text", "text": content}] if isinstance(content, str) else content


def _is_placeholder(item: Mapping[str, Any]) -> bool:
    """Tell a placeholder text block from a media source."""
    return item.get("type") == "text" and "data" not in item
