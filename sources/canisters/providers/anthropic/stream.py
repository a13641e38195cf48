"""Anthropic Messages streams: the accumulator."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from ...conversation import Conversation
from ...exceptions import MalformedPayload, _excerpt
from .. import _common, streams
from .._common import expect_list, expect_mapping, expect_str
from .errors import DIALECT
from .messages import NAME
from .response import parse_response

__all__ = ["AnthropicAccumulator"]

# The reply of a finished stream, under the parsers' net.
_parse_response = _common.guarded(parse_response)


_STREAMED_INPUT = frozenset({"tool_use", "server_tool_use", "mcp_tool_use"})
_DELTA_BLOCK = {
    "text_delta": ("text", "text"),
    "thinking_delta": ("thinking", "thinking"),
    "signature_delta": ("thinking", "signature"),
    "citations_delta": ("text", "citation"),
}
_KEPT_NONE = frozenset({"stop_reason", "stop_sequence", "stop_details"})


class _Block:
    """One content block of a streamed message, as far as it arrived."""

    __slots__ = ("block", "buffer", "stopped")

    def __init__(self, block: dict[str, Any]) -> None:
        self.block = block
        self.buffer = streams.Pieces() if block.get("type") in _STREAMED_INPUT else None
        self.stopped = False

    def streamed_input(self) -> str:
        """The tool input's JSON text so far (empty for other blocks)."""
        return self.buffer.text() if self.buffer is not None else ""


_EVENTS = frozenset(
    {
        "message_start",
        "content_block_start",
        "content_block_delta",
        "content_block_stop",
        "message_delta",
        "message_stop",
        "error",
    }
)
"""The stream's event types read here (any other is skipped)."""


class AnthropicAccumulator(streams.Accumulator):
    """Accumulates a Messages stream: ``message_start``, the content blocks'
    ``content_block_start`` / ``content_block_delta`` / ``content_block_stop``,
    ``message_delta`` (stop reason, final usage) and ``message_stop``, which
    ends it. ``ping`` and event types it does not know are skipped, as
    Anthropic asks of clients; an ``error`` event raises."""

    provider = NAME

    def __init__(self) -> None:
        super().__init__()
        self._message: dict[str, Any] | None = None
        self._blocks: list[_Block] = []

    @property
    def _started(self) -> bool:
        return self._message is not None

    def _expected(self) -> str:
        return "message_stop"

    def _parse(self, body: Mapping[str, Any]) -> Conversation:
        return _parse_response(body)

    def _block(self, event: Mapping[str, Any], path: str) -> _Block:
        index = event.get("index")
        if type(index) is not int or not 0 <= index < len(self._blocks):
            raise MalformedPayload(
                f"{event.get('type')} for block {_excerpt(index)}, never started",
                f"{path}.index",
            )
        block = self._blocks[index]
        if block.stopped:
            raise MalformedPayload(
                f"{event.get('type')} for block {index} after its content_block_stop",
                f"{path}.index",
            )
        return block

    def _after_end(self, event: Mapping[str, Any], path: str) -> bool:
        # An event of a type not known here is skipped, after the end too.
        kind = event.get("type")
        return isinstance(kind, str) and kind not in _EVENTS

    def _absorb(self, event: Mapping[str, Any], path: str) -> bool:
        kind = event.get("type")
        if kind == "ping":
            return False
        if kind == "error":
            raise DIALECT.stream_error(event, path)
        if not isinstance(kind, str):
            raise MalformedPayload(
                f"unknown event type {_excerpt(kind)}", f"{path}.type"
            )
        if kind == "message_start":
            if self._message is not None:
                raise MalformedPayload("a second message_start", f"{path}.type")
            message = dict(expect_mapping(event.get("message"), f"{path}.message"))
            content = expect_list(message.get("content", []), f"{path}.message.content")
            self._blocks = [
                _Block(streams.fresh(expect_mapping(item, f"{path}.message.content")))
                for item in content
            ]
            for block in self._blocks:
                block.stopped = True
            usage = message.get("usage")
            if usage is not None:
                message["usage"] = dict(expect_mapping(usage, f"{path}.message.usage"))
            self._message = message
            return False
        if kind not in (
            "content_block_start",
            "content_block_delta",
            "content_block_stop",
            "message_delta",
            "message_stop",
        ):
            return False  # a newer event type: skipped, as Anthropic asks
        if self._message is None:
            raise MalformedPayload(f"{kind} before message_start", f"{path}.type")
        message = self._message
        if kind == "content_block_start":
            index = event.get("index")
            if index != len(self._blocks) or type(index) is not int:
                raise MalformedPayload(
                    f"block {_excerpt(index)} started out of order"
                    f" (expected {len(self._blocks)})",
                    f"{path}.index",
                )
            where = f"{path}.content_block"
            started = streams.fresh(expect_mapping(event.get("content_block"), where))
            expect_str(started.get("type"), f"{where}.type")
            self._blocks.append(_Block(started))
        elif kind == "content_block_delta":
            self._delta(self._block(event, path), event, path)
        elif kind == "content_block_stop":
            block = self._block(event, path)
            buffer = block.streamed_input()
            if buffer:
                value = streams.parse_json_arguments(buffer, f"{path}")
                if not isinstance(value, dict):
                    raise MalformedPayload(
                        "the tool input streamed is not a JSON object", path
                    )
                block.block["input"] = value
            block.stopped = True
        elif kind == "message_delta":
            delta = expect_mapping(event.get("delta", {}), f"{path}.delta")
            for key, value in delta.items():
                if value is not None or key in _KEPT_NONE:
                    message[key] = value
            usage = event.get("usage")
            if usage is not None:
                counts = dict(message.get("usage") or {})
                for key, value in expect_mapping(usage, f"{path}.usage").items():
                    if value is not None or key == "output_tokens":
                        counts[key] = value
                message["usage"] = counts
        else:  # message_stop
            for index, block in enumerate(self._blocks):
                if not block.stopped:
                    raise MalformedPayload(
                        f"message_stop while block {index} is still open", path
                    )
            return True
        return False

    def _delta(self, block: _Block, event: Mapping[str, Any], path: str) -> None:
        delta = expect_mapping(event.get("delta"), f"{path}.delta")
        kind = delta.get("type")
        target = block.block
        if kind == "input_json_delta":
            if block.buffer is None:
                raise MalformedPayload(
                    f"input_json_delta for a {_excerpt(target.get('type'))} block",
                    f"{path}.delta.type",
                )
            block.buffer.add(
                expect_str(delta.get("partial_json"), f"{path}.delta.partial_json")
            )
            return
        fits = _DELTA_BLOCK.get(kind) if isinstance(kind, str) else None
        if fits is None:
            if not isinstance(kind, str):
                raise MalformedPayload(
                    f"unknown delta type {_excerpt(kind)}", f"{path}.delta.type"
                )
            # A delta of a type not known here (a compaction_delta, say): its
            # text fields grow the block's, its other fields are set on it.
            for key, value in delta.items():
                if key == "type":
                    continue
                held = target.get(key)
                if isinstance(value, str) and isinstance(held, (str, streams.Pieces)):
                    self._grow(target, key, value, f"{path}.index")
                else:
                    target[key] = value
            return
        block_type, field = fits
        if target.get("type") != block_type:
            raise MalformedPayload(
                f"{kind} for a {_excerpt(target.get('type'))} block",
                f"{path}.delta.type",
            )
        if field == "citation":
            citation = expect_mapping(delta.get("citation"), f"{path}.delta.citation")
            target["citations"] = [*(target.get("citations") or []), dict(citation)]
        elif field == "signature":
            target["signature"] = expect_str(
                delta.get("signature"), f"{path}.delta.signature"
            )
        else:
            text = expect_str(delta.get(field), f"{path}.delta.{field}")
            self._grow(target, field, text, f"{path}.index")

    def _body(
        self, mode: str, note: streams.Note
    ) -> tuple[Mapping[str, Any], dict[str, str]]:
        assert self._message is not None
        content: list[dict[str, Any]] = []
        partial: dict[str, str] = {}
        for index, block in enumerate(self._blocks):
            item = block.block
            if not block.stopped:
                if mode == "cut":
                    note(
                        f"block {index} ({item.get('type')})",
                        "the block did not finish: left out",
                    )
                    continue
                buffer = block.streamed_input()
                if buffer:
                    try:
                        value = json.loads(buffer)
                    except (ValueError, RecursionError):
                        value = None
                    if isinstance(value, dict):
                        item = {**item, "input": value}
                    elif isinstance(item.get("id"), str):
                        partial[item["id"]] = buffer
            content.append(item)
        return {**self._message, "content": content}, partial
