"""Gemini ``streamGenerateContent`` streams: the accumulator."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ...conversation import Conversation
from ...exceptions import MalformedPayload, _excerpt
from .. import _common, streams
from .._common import as_mapping, expect_list, expect_mapping, expect_str
from .errors import DIALECT
from .messages import NAME
from .response import parse_response

__all__ = ["GeminiAccumulator"]

# The reply of a finished stream, under the parsers' net.
_parse_response = _common.guarded(parse_response)


_TEXT_PART = frozenset({"text", "thought", "thoughtSignature", "thought_signature"})
_SIGNATURES = ("thoughtSignature", "thought_signature")
_CITED = ("citationMetadata", "citation_metadata")
_CITATIONS = ("citations", "citationSources", "citation_sources")


def _joined(held: Any, value: Any) -> Any:
    """A chunk's ``citationMetadata`` after the one held: each chunk names the
    sources of the text it brings (its offsets in the whole answer), so the
    lists join, an entry given again counted once."""
    if not isinstance(held, Mapping) or not isinstance(value, Mapping):
        return value
    joined = {**held, **value}
    for key in _CITATIONS:
        before, after = held.get(key), value.get(key)
        if isinstance(before, list) and isinstance(after, list):
            joined[key] = before + [entry for entry in after if entry not in before]
    return joined


def _finish_of(candidate: Mapping[str, Any]) -> Any:
    return candidate.get("finishReason", candidate.get("finish_reason"))


def _add_part(
    parts: list[dict[str, Any]], part: dict[str, Any], path: str, grow: streams._Grow
) -> None:
    """Add a streamed part: text continues the text part before it of the same
    kind (thought or not), a signature joining the text it ends, unless both
    carry one; an empty text part with nothing else adds nothing; every other
    part stands alone."""
    if part == {"text": ""}:
        return  # an empty piece of text adds nothing (a last chunk may hold one)
    previous = parts[-1] if parts else None
    if (
        previous is not None
        and "text" in previous
        and "text" in part
        and _TEXT_PART.issuperset(previous)
        and _TEXT_PART.issuperset(part)
        and bool(previous.get("thought")) == bool(part.get("thought"))
        and not (
            any(key in previous for key in _SIGNATURES)
            and any(key in part for key in _SIGNATURES)
        )
    ):
        grow(previous, "text", expect_str(part["text"], f"{path}.text"), path)
        for key in _SIGNATURES:
            if key in part:
                previous[key] = part[key]
        return
    parts.append(part)


class GeminiAccumulator(streams.Accumulator):
    """Accumulates a ``streamGenerateContent`` stream: each chunk is a
    ``GenerateContentResponse`` holding the next parts of each candidate.

    Text parts continue the text part before them of the same kind (thought or
    not), and a ``thoughtSignature`` on an otherwise empty text part joins the
    text it ends; function calls and other parts stand alone. The last chunk's
    ``finishReason``, ``usageMetadata`` and metadata hold for the whole, but
    for ``citationMetadata``: each chunk's citations name the sources of the
    text it brings, and they join. The
    stream ends when every candidate has a ``finishReason`` (or the prompt was
    blocked); chunks without parts after that are still taken. An ``error``
    chunk raises. An empty text part with nothing else adds nothing. From
    google-genai's objects, signatures (which it keeps as bytes) come back in the
    standard base64 the API sends.
    """

    provider = NAME

    def __init__(self) -> None:
        super().__init__()
        self._top: dict[str, Any] = {}
        self._candidates: dict[int, dict[str, Any]] = {}
        self._parts: dict[int, list[dict[str, Any]]] = {}
        self._roles: dict[int, Any] = {}

    def _expected(self) -> str:
        return "a finishReason for every candidate"

    def _parse(self, body: Mapping[str, Any]) -> Conversation:
        return _parse_response(body)

    def _mapping(self, event: object, path: str) -> Mapping[str, Any]:
        if hasattr(event, "model_dump"):
            # A google-genai chunk reads as the chunk the API sent: its bytes in
            # the standard base64 alphabet, not the URL-safe one the SDK dumps.
            return as_mapping(event, path, received=True)
        return expect_mapping(event, path)

    def _after_end(self, event: Mapping[str, Any], path: str) -> bool:
        for candidate in event.get("candidates") or ():
            content = candidate.get("content") if isinstance(candidate, Mapping) else 1
            if not isinstance(content, Mapping) or content.get("parts"):
                return False
        self._absorb(event, path)
        return True

    def _absorb(self, event: Mapping[str, Any], path: str) -> bool:
        if "error" in event and "candidates" not in event:
            raise DIALECT.stream_error(event, path)
        for key, value in event.items():
            if key != "candidates":
                self._top[key] = streams.fresh(value)
        candidates = event.get("candidates")
        where = f"{path}.candidates"
        for number, raw in enumerate(expect_list(candidates or [], where)):
            self._candidate(number, expect_mapping(raw, f"{where}[{number}]"), path)
        feedback = self._top.get("promptFeedback", self._top.get("prompt_feedback"))
        if isinstance(feedback, Mapping) and feedback.get(
            "blockReason", feedback.get("block_reason")
        ):
            return True
        return bool(self._candidates) and all(
            _finish_of(candidate) is not None for candidate in self._candidates.values()
        )

    def _candidate(self, number: int, raw: Mapping[str, Any], path: str) -> None:
        where = f"{path}.candidates[{number}]"
        index = raw.get("index", number)
        if type(index) is not int:
            raise MalformedPayload(
                f"invalid candidate index {_excerpt(index)}", f"{where}.index"
            )
        candidate = self._candidates.setdefault(index, {})
        parts = self._parts.setdefault(index, [])
        if _finish_of(candidate) is not None and (
            (raw.get("content") or {}).get("parts")
        ):
            raise MalformedPayload(
                f"parts for candidate {index} after its finishReason",
                f"{where}.content",
            )
        for key, value in raw.items():
            if key in _CITED:
                candidate[key] = _joined(candidate.get(key), streams.fresh(value))
            elif key != "content":
                candidate[key] = streams.fresh(value)
        content = raw.get("content")
        if content is None:
            return
        content = expect_mapping(content, f"{where}.content")
        if "role" in content:
            self._roles[index] = content["role"]
        for at, part in enumerate(
            expect_list(content.get("parts") or [], f"{where}.content.parts")
        ):
            item = expect_mapping(part, f"{where}.content.parts[{at}]")
            _add_part(
                parts, streams.fresh(item), f"{where}.content.parts[{at}]", self._grow
            )

    def _body(
        self, mode: str, note: streams.Note
    ) -> tuple[Mapping[str, Any], dict[str, str]]:
        body = dict(self._top)
        if self._candidates:
            body["candidates"] = [
                {
                    **self._candidates[index],
                    "content": {
                        "role": self._roles.get(index, "model"),
                        "parts": self._parts[index],
                    },
                }
                for index in sorted(self._candidates)
            ]
        return body, {}
