"""Tiny streams: ``{"delta": text}`` objects, then the reply's other keys."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from canisters import Conversation
from canisters.providers import kit

from .errors import DIALECT
from .messages import NAME
from .response import parse_response

_parse_response = kit.guarded(parse_response)


class TinyAccumulator(kit.Accumulator):
    """Accumulates one tiny stream; the object with ``stop`` ends it."""

    provider = NAME

    def __init__(self) -> None:
        super().__init__()
        self._line: dict[str, Any] = {"role": "assistant", "text": ""}
        self._end: dict[str, Any] = {}

    def _expected(self) -> str:
        return 'the object with "stop"'

    def _parse(self, body: Mapping[str, Any]) -> Conversation:
        return _parse_response(body)

    def _absorb(self, event: Mapping[str, Any], path: str) -> bool:
        if "error" in event:
            raise DIALECT.stream_error(event, path)
        if "delta" in event:
            piece = kit.expect_str(event["delta"], f"{path}.delta")
            self._grow(self._line, "text", piece, path)
            return False
        self._end = dict(event)
        return "stop" in event

    def _body(self, mode: str, note: Any) -> tuple[Mapping[str, Any], dict[str, str]]:
        return {**self._end, "line": dict(self._line)}, {}
