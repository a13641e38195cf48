"""OpenAI Responses streams: the accumulator."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ...conversation import Conversation
from ...exceptions import MalformedPayload, _excerpt
from .. import _common, streams
from .._common import expect_mapping, expect_str
from .errors import DIALECT
from .messages import NAME
from .response import parse_response

# The reply of a finished stream, under the parsers' net.
_parse_response = _common.guarded(parse_response)

_LIFECYCLE = frozenset({"response.created", "response.in_progress", "response.queued"})
_ENDS = frozenset({"response.completed", "response.incomplete"})
PART_DELTAS = {
    "response.output_text.delta": ("content", "content_index", "text"),
    "response.refusal.delta": ("content", "content_index", "refusal"),
    "response.reasoning_summary_text.delta": ("summary", "summary_index", "text"),
    "response.reasoning_text.delta": ("content", "content_index", "text"),
}
"""The events that grow a part: event type -> (item list, part index key, part
field); a dialect adds its own (see :mod:`.open_responses`)."""
PART_DONE = {
    "response.output_text.done": ("content", "content_index", "text", "text"),
    "response.refusal.done": ("content", "content_index", "refusal", "refusal"),
    "response.reasoning_summary_text.done": (
        "summary",
        "summary_index",
        "text",
        "text",
    ),
    "response.reasoning_text.done": ("content", "content_index", "text", "text"),
}
"""The events that end a part: event type -> (item list, part index key, part
field, the event's field holding the whole)."""
_PART_ADDED = {
    "response.content_part.added": ("content", "content_index"),
    "response.reasoning_summary_part.added": ("summary", "summary_index"),
}


def _identity(item: Mapping[str, Any]) -> tuple[Any, Any] | None:
    """An output item's type and id, to match a streamed item with the final
    event's; ``None`` when either is not a value a set can hold."""
    key = (item.get("type"), item.get("id"))
    try:
        hash(key)
    except TypeError:
        return None
    return key


KNOWN_EVENTS = frozenset(
    {
        "response.output_item.added",
        "response.output_item.done",
        "response.function_call_arguments.delta",
        "response.function_call_arguments.done",
        *_PART_ADDED,
        *PART_DELTAS,
        *PART_DONE,
    }
)
"""The events that read into an output item (the others are skipped)."""


class OpenAIResponsesAccumulator(streams.Accumulator):
    """Accumulates a Responses stream: ``response.created``, output items
    (``response.output_item.added`` ... ``response.output_item.done``) and their
    deltas (output text, refusals, function-call arguments, reasoning summaries
    and text), up to ``response.completed`` or ``response.incomplete``, which end
    it; the response those carry is the body read. ``response.failed`` and
    ``error`` raise; event types it does not know (server tools' progress) are
    skipped."""

    provider = NAME
    reply = staticmethod(_parse_response)
    """Reads the reply a finished stream carries (guarded)."""
    errors: Any = DIALECT
    """The error dialect of the format's error events."""
    deltas: Mapping[str, tuple[str, str, str]] = PART_DELTAS
    """Events that grow a part: type -> (item list, part index key, field)."""
    dones: Mapping[str, tuple[str, str, str, str]] = PART_DONE
    """Events that end a part: type -> (item list, index key, field, source)."""
    known: frozenset[str] = KNOWN_EVENTS
    """The events that read into an output item (the others are skipped)."""

    def __init__(self) -> None:
        super().__init__()
        self._response: dict[str, Any] | None = None
        self._items: dict[int, dict[str, Any]] = {}
        self._finished: set[int] = set()
        self._whole: dict[str, Any] | None = None

    @property
    def _started(self) -> bool:
        return self._response is not None

    def _expected(self) -> str:
        return "response.completed"

    def _parse(self, body: Mapping[str, Any]) -> Conversation:
        return self.reply(body)

    def _item(self, event: Mapping[str, Any], path: str) -> dict[str, Any]:
        index = event.get("output_index")
        item = self._items.get(index) if type(index) is int else None
        if item is None:
            raise MalformedPayload(
                f"{event.get('type')} for output item {_excerpt(index)}, never added",
                f"{path}.output_index",
            )
        if index in self._finished:
            raise MalformedPayload(
                f"{event.get('type')} for output item {index} after its"
                " response.output_item.done",
                f"{path}.output_index",
            )
        return item

    def _part(
        self, event: Mapping[str, Any], path: str, field: str, key: str
    ) -> dict[str, Any]:
        item = self._item(event, path)
        parts = item.get(field)
        number = event.get(key)
        if (
            not isinstance(parts, list)
            or type(number) is not int
            or not 0 <= number < len(parts)
        ):
            raise MalformedPayload(
                f"{event.get('type')} for part {_excerpt(number)} of output item"
                f" {event.get('output_index')}, never added",
                f"{path}.{key}",
            )
        part: dict[str, Any] = parts[number]
        return part

    def _after_end(self, event: Mapping[str, Any], path: str) -> bool:
        # An event of a type not known here is skipped, after the end too.
        kind = event.get("type")
        return (
            isinstance(kind, str)
            and kind not in self.known
            and kind not in _LIFECYCLE
            and kind not in _ENDS
            and kind not in ("error", "response.failed")
        )

    def _absorb(self, event: Mapping[str, Any], path: str) -> bool:
        kind = event.get("type")
        if kind == "error":
            # (some servers nest the error object as Chat does)
            raise self.errors.stream_error(event, path)
        if not isinstance(kind, str):
            raise MalformedPayload(
                f"unknown event type {_excerpt(kind)}", f"{path}.type"
            )
        if kind in _LIFECYCLE or kind in _ENDS or kind == "response.failed":
            where = f"{path}.response"
            response = streams.fresh(expect_mapping(event.get("response"), where))
            if kind == "response.failed":
                raise self.errors.stream_error(response, where)
            self._response = response
            if kind in _ENDS:
                self._whole = self._complete(response, path)
                return True
            return False
        if self._response is None:
            if kind not in self.known:
                return False  # an event of a type not known here: skipped
            raise MalformedPayload(f"{kind} before response.created", f"{path}.type")
        if kind == "response.output_item.added":
            if event.get("item") is None:
                # An empty added event, which the SDK's stream state skips too:
                # the output indexes then have a gap.
                return False
            index = event.get("output_index")
            if type(index) is not int or index in self._items:
                raise MalformedPayload(
                    f"output item {_excerpt(index)} added twice or without an index",
                    f"{path}.output_index",
                )
            item = streams.fresh(expect_mapping(event.get("item"), f"{path}.item"))
            expect_str(item.get("type"), f"{path}.item.type")
            self._items[index] = item
        elif kind == "response.output_item.done":
            item = self._item(event, path)
            done = expect_mapping(event.get("item"), f"{path}.item")
            if done.get("type") != item.get("type"):
                raise MalformedPayload(
                    f"output item {event['output_index']} ended as another type",
                    f"{path}.item.type",
                )
            self._items[event["output_index"]] = streams.fresh(done)
            self._finished.add(event["output_index"])
        elif kind in _PART_ADDED:
            field, key = _PART_ADDED[kind]
            item = self._item(event, path)
            parts = item.setdefault(field, [])
            if not isinstance(parts, list) or event.get(key) != len(parts):
                raise MalformedPayload(
                    f"part {_excerpt(event.get(key))} added out of order"
                    f" (expected {len(parts) if isinstance(parts, list) else 0})",
                    f"{path}.{key}",
                )
            parts.append(
                streams.fresh(expect_mapping(event.get("part"), f"{path}.part"))
            )
        elif kind in self.deltas:
            field, key, grows = self.deltas[kind]
            part = self._part(event, path, field, key)
            delta = expect_str(event.get("delta"), f"{path}.delta")
            self._grow(part, grows, delta, f"{path}.{key}")
        elif kind in self.dones:
            field, key, target, source = self.dones[kind]
            part = self._part(event, path, field, key)
            part[target] = expect_str(event.get(source), f"{path}.{source}")
        elif kind == "response.function_call_arguments.delta":
            item = self._item(event, path)
            delta = expect_str(event.get("delta"), f"{path}.delta")
            self._grow(item, "arguments", delta, path)
        elif kind == "response.function_call_arguments.done":
            item = self._item(event, path)
            item["arguments"] = expect_str(event.get("arguments"), f"{path}.arguments")
        return False

    def _complete(self, response: dict[str, Any], path: str) -> dict[str, Any]:
        self._settle()
        output = response.get("output")
        final = {
            _identity(item)
            for item in (output if isinstance(output, list) else ())
            if isinstance(item, Mapping)
        }
        final.discard(None)
        for index in sorted(self._items):
            item = self._items[index]
            if index not in self._finished and (
                _identity(item) not in final or not item.get("id")
            ):
                # An item the final event holds whole may lack its
                # response.output_item.done, as the SDK's stream state allows.
                raise MalformedPayload(
                    f"the response ended while output item {index} is still open", path
                )
        if output:
            return response
        if response.get("output") is None or self._items:
            # Servers that leave the output out of the final event: the items.
            response["output"] = [self._items[index] for index in sorted(self._items)]
        return response

    def _body(
        self, mode: str, note: streams.Note
    ) -> tuple[Mapping[str, Any], dict[str, str]]:
        if mode == "final" and self._whole is not None:
            return self._whole, {}
        assert self._response is not None
        output: list[dict[str, Any]] = []
        partial: dict[str, str] = {}
        for index in sorted(self._items):
            item = self._items[index]
            if index not in self._finished:
                if mode == "cut":
                    note(
                        f"output item {index} ({item.get('type')})",
                        "the item did not finish: left out",
                    )
                    continue
                arguments = item.get("arguments")
                if streams.unfinished(arguments):
                    partial[str(item.get("call_id"))] = arguments
                    item = {**item, "arguments": "{}"}
            output.append(item)
        return {**self._response, "output": output}, partial
