"""Ollama ``/api/chat`` streams: the NDJSON objects of one reply, accumulated."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ...conversation import Conversation
from ...exceptions import MalformedPayload
from .. import _common, streams
from .._common import expect_list, expect_mapping, expect_str
from .errors import DIALECT
from .messages import _MESSAGE_KEYS, NAME
from .response import parse_response

_STREAMED_KEYS = _MESSAGE_KEYS["assistant"]
"""The message keys an accumulator reads; it keeps any other as it came."""

# The reply of a finished stream, under the parsers' net.
_parse_response = _common.guarded(parse_response)


class OllamaAccumulator(streams.Accumulator):
    """Accumulates an ``/api/chat`` NDJSON stream: every object but the last
    carries the next piece of ``message.content`` (and ``message.thinking``) or
    whole ``tool_calls``; the last (``"done": true``) carries the finish reason,
    counts and durations, and ends the stream. An ``error`` object raises."""

    provider = NAME

    def __init__(self) -> None:
        super().__init__()
        self._last: Mapping[str, Any] = {}
        self._role: Any = "assistant"
        self._content: list[str] = []
        self._thinking: list[str] = []
        self._calls: list[Any] = []
        self._logprobs: list[Any] | None = None
        self._rest: dict[str, Any] = {}  # message keys not known here

    def _expected(self) -> str:
        return 'the object with "done": true'

    def _parse(self, body: Mapping[str, Any]) -> Conversation:
        return _parse_response(body)

    def _absorb(self, event: Mapping[str, Any], path: str) -> bool:
        if "error" in event:
            raise DIALECT.stream_error(event, path)
        self._last = event
        logprobs = event.get("logprobs")
        if logprobs is not None:
            # Each object has the log probabilities of its own tokens.
            pieces = expect_list(logprobs, f"{path}.logprobs")
            if self._logprobs is None:
                self._logprobs = []
            self._logprobs.extend(streams.fresh(list(pieces)))
        piece = event.get("message")
        if piece is None and "response" in event:
            # Every /api/chat object has its message (ollama.ChatResponse
            # requires it); /api/generate's have "response" instead.
            raise MalformedPayload(
                "an /api/generate object, not /api/chat: no message",
                f"{path}.message",
            )
        if piece is not None:
            where = f"{path}.message"
            piece = expect_mapping(piece, where)
            self._role = piece.get("role", self._role)
            content = piece.get("content")
            if content:
                self._content.append(expect_str(content, f"{where}.content"))
            thinking = piece.get("thinking")
            if thinking:
                self._thinking.append(expect_str(thinking, f"{where}.thinking"))
            calls = piece.get("tool_calls")
            if calls:
                self._calls.extend(
                    streams.fresh(expect_list(calls, f"{where}.tool_calls"))
                )
            for key, value in piece.items():
                if key not in _STREAMED_KEYS:
                    # A key not known here: text grows, anything else is set.
                    held = self._rest.get(key)
                    if isinstance(value, str) and isinstance(
                        held, (str, streams.Pieces)
                    ):
                        self._grow(self._rest, key, value, f"{where}.{key}")
                    else:
                        self._rest[key] = streams.fresh(value)
        return event.get("done") is True

    def _body(
        self, mode: str, note: streams.Note
    ) -> tuple[Mapping[str, Any], dict[str, str]]:
        message: dict[str, Any] = {
            "role": self._role,
            "content": "".join(self._content),
        }
        if self._thinking:
            message["thinking"] = "".join(self._thinking)
        if self._calls:
            message["tool_calls"] = self._calls
        message.update(self._rest)
        envelope = {key: v for key, v in self._last.items() if key != "message"}
        if self._logprobs is not None:
            envelope["logprobs"] = self._logprobs
        return {**envelope, "message": message}, {}
