"""OpenAI Chat Completions streams: the accumulator of chunks."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ...conversation import Conversation
from ...exceptions import MalformedPayload, _excerpt
from .. import _common, streams
from .._common import expect_list, expect_mapping, expect_str
from .errors import DIALECT
from .response import parse_response
from .wire import NAME

# The reply of a finished stream, under the parsers' net.
_parse_response = _common.guarded(parse_response)

# Delta fields that name something rather than grow: a later value only fills a gap.
_NAMING = frozenset({"role", "id", "type", "name", "index"})
_CHUNK_OWN = frozenset({"choices", "object", "usage", "obfuscation"})
_CHOICE_OWN = frozenset({"index", "delta", "logprobs", "finish_reason"})


# The events of the SDK's chat stream helper beside its "chunk" events
# (openai.lib.streaming.chat): content.delta, refusal.done,
# tool_calls.function.arguments.delta, logprobs.content.done, ...
_HELPER_EVENTS = frozenset({"chunk"})
_HELPER_PREFIXES = ("content.", "refusal.", "tool_calls.", "logprobs.")


def _unindexed(choice: _Choice, item: Mapping[str, Any]) -> int | None:
    """The index of a tool-call delta sent without one, as Gemini's and Ollama's
    OpenAI-compatible endpoints send them: the call with its id, a new call
    for a new id, else the call started last (None when none was)."""
    identifier = item.get("id")
    if identifier:
        for number, call in choice.calls.items():
            if call.get("id") == identifier:
                return number
        return max(choice.calls, default=-1) + 1
    return max(choice.calls, default=None)


def _fields(event: object) -> Any:
    """The field names of an SDK object's type."""
    return getattr(type(event), "model_fields", None) or ()


def _given(value: object) -> bool:
    """Whether a chunk's field holds something: not null, ``""``, ``0``, ``{}``
    or ``[]`` (``False`` counts as given)."""
    return value is False or bool(value)


def _merge(
    target: dict[str, Any], delta: Mapping[str, Any], path: str, grow: streams._Grow
) -> None:
    """Merge one delta into ``target``: text grows (by ``grow``), names fill gaps,
    objects merge. What ``target`` takes from ``delta`` is copied: a later delta
    merging into it must not change the caller's event."""
    for key, value in delta.items():
        if key == "tool_calls":
            continue
        old = target.get(key)
        if value is None:
            target.setdefault(key, None)
        elif old is None:
            target[key] = streams.fresh(value)
        elif key in _NAMING:
            if not old:
                target[key] = streams.fresh(value)
        elif isinstance(value, str) and (
            type(old) is streams.Pieces or isinstance(old, str)
        ):
            grow(target, key, value, f"{path}.{key}")
        elif isinstance(old, dict) and isinstance(value, Mapping):
            _merge(old, value, f"{path}.{key}", grow)
        elif isinstance(old, list) and isinstance(value, list):
            old.extend(streams.fresh(value))
        else:
            target[key] = streams.fresh(value)


class _Choice:
    """One choice of a streamed completion, as far as it arrived."""

    __slots__ = ("calls", "finish", "logprobs", "message", "other")

    def __init__(self) -> None:
        self.message: dict[str, Any] = {}
        self.calls: dict[int, dict[str, Any]] = {}
        self.finish: Any = None
        self.logprobs: dict[str, Any] | bool | None = False  # False: never sent
        self.other: dict[str, Any] = {}


class OpenAIChatAccumulator(streams.Accumulator):
    """Accumulates a Chat Completions stream of ``chat.completion.chunk`` objects.

    Choices are told apart by ``index``, parallel tool calls by their own
    ``index``; text and arguments grow by concatenation. The stream ends when
    every choice has a ``finish_reason``, or, when the chunks announce usage
    (``"usage": null``, as ``stream_options={"include_usage": true}`` makes
    them), with the chunk carrying it; chunks without choices after that end
    (an unannounced usage, a moderated stream's ``moderation`` results) are
    still taken. The usage chunk (``"choices": []`` beside the usage) is the
    last chunk of a generation, so it ends the stream even where no choice
    said a ``finish_reason``: Snowflake Cortex's streams never do.
    """

    provider = NAME
    reply: Any = staticmethod(_parse_response)
    """The reply of a finished stream, read under the parsers' net (a dialect's
    accumulator names its own)."""
    errors: Any = DIALECT
    """The error dialect of a stream's error events (a dialect's, its own)."""

    def __init__(self) -> None:
        super().__init__()
        self._top: dict[str, Any] = {}
        self._held: frozenset[str] = _CHUNK_OWN  # keys whose value is settled
        self._choices: dict[int, _Choice] = {}
        self._usage: Any = None
        self._announced = False
        self._usage_chunk = False  # the last chunk came: the generation is over

    def _expected(self) -> str:
        if self._choices and all(c.finish for c in self._choices.values()):
            return "the chunk with the usage"
        return "a finish_reason for every choice"

    def _parse(self, body: Mapping[str, Any]) -> Conversation:
        return self.reply(body)  # type: ignore[no-any-return]

    def _ended(self) -> bool:
        if self._announced and self._usage is None:
            return False
        if not self._choices or self._usage_chunk:
            return self._usage is not None
        return all(choice.finish for choice in self._choices.values())

    def _mapping(self, event: object, path: str) -> Mapping[str, Any]:
        # The SDK's stream helper (client.chat.completions.stream()) yields its
        # own events: a "chunk" event wraps each chunk; the others
        # ("content.delta", "tool_calls.function.arguments.done", ...) repeat
        # what the chunks say and are skipped by _absorb, without converting
        # their snapshots here.
        if isinstance(event, Mapping):
            if event.get("type") == "chunk" and "choices" not in event:
                return expect_mapping(event.get("chunk"), f"{path}.chunk")
            return event
        kind = getattr(event, "type", None)
        if isinstance(kind, str) and "choices" not in _fields(event):
            if kind == "chunk":
                return expect_mapping(getattr(event, "chunk", None), f"{path}.chunk")
            return {"type": kind}
        return expect_mapping(event, path)

    def _after_end(self, event: Mapping[str, Any], path: str) -> bool:
        # Chunks without choices may still come: the usage (when not announced),
        # a moderated stream's moderation results.
        if event.get("choices"):
            return False
        self._absorb(event, path)
        return True

    def _absorb(self, event: Mapping[str, Any], path: str) -> bool:
        if "error" in event and "choices" not in event:
            raise self.errors.stream_error(event, path)
        if "type" in event and "choices" not in event:
            kind = event["type"]
            if isinstance(kind, str) and (
                kind in _HELPER_EVENTS or kind.startswith(_HELPER_PREFIXES)
            ):
                return self._ended()  # an SDK helper's event (see _mapping)
            if kind == "error" or isinstance(event.get("message"), str):
                # An SSE "event: error" whose data is the error itself.
                raise self.errors.stream_error(event, path)
            raise MalformedPayload(
                f"not a chat.completion.chunk: an event of type {_excerpt(kind)}"
                " (the stream of another API?)",
                f"{path}.type",
            )
        if not event.keys() <= self._held:
            for key, value in event.items():
                # The first value holds, except that an empty one gives way:
                # Azure OpenAI's first chunk (its prompt filter results) has
                # "id": "", "model": "" and "created": 0, the chunks after it
                # the real ones.
                if key not in _CHUNK_OWN and not _given(self._top.get(key)):
                    self._top[key] = value
            self._held = _CHUNK_OWN | {k for k, v in self._top.items() if _given(v)}
        if "object" in event:
            self._top.setdefault("object", "chat.completion")
        if "usage" in event:
            if event["usage"] is None:
                self._announced = True
            else:
                self._usage = dict(expect_mapping(event["usage"], f"{path}.usage"))
                self._usage_chunk |= event.get("choices") == []
        for number, raw in enumerate(
            expect_list(event.get("choices", []), f"{path}.choices")
        ):
            self._choice(
                expect_mapping(raw, f"{path}.choices[{number}]"),
                f"{path}.choices[{number}]",
            )
        return self._ended()

    def _choice(self, raw: Mapping[str, Any], path: str) -> None:
        index = raw.get("index", 0)
        if type(index) is not int or index < 0:
            raise MalformedPayload(
                f"invalid choice index {_excerpt(index)}", f"{path}.index"
            )
        choice = self._choices.get(index)
        if choice is None:
            choice = self._choices[index] = _Choice()
        delta = expect_mapping(raw.get("delta") or {}, f"{path}.delta")
        if choice.finish and any(
            delta.get(key)
            for key in ("content", "refusal", "tool_calls", "function_call")
        ):
            raise MalformedPayload(
                f"a delta for choice {index} after its finish_reason", f"{path}.delta"
            )
        _merge(choice.message, delta, f"{path}.delta", self._grow)
        calls = delta.get("tool_calls")
        if calls is not None:
            where = f"{path}.delta.tool_calls"
            for number, item in enumerate(expect_list(calls, where)):
                self._call(
                    choice,
                    expect_mapping(item, f"{where}[{number}]"),
                    f"{where}[{number}]",
                )
        if "logprobs" in raw:
            logprobs = raw["logprobs"]
            if logprobs is None:
                if choice.logprobs is False:
                    choice.logprobs = None
            else:
                merged = choice.logprobs if isinstance(choice.logprobs, dict) else {}
                _merge(
                    merged,
                    expect_mapping(logprobs, f"{path}.logprobs"),
                    f"{path}.logprobs",
                    self._grow,
                )
                choice.logprobs = merged
        if not raw.keys() <= _CHOICE_OWN:
            for key, value in raw.items():
                # A later value replaces an earlier one unless it is empty
                # (Azure's last chunk carries "content_filter_results": {}).
                if key not in _CHOICE_OWN and (
                    _given(value) or key not in choice.other
                ):
                    choice.other[key] = value
        finish = raw.get("finish_reason")
        if finish is not None:
            choice.finish = expect_str(finish, f"{path}.finish_reason")

    def _call(self, choice: _Choice, item: Mapping[str, Any], path: str) -> None:
        index = item.get("index")
        if index is None:
            index = _unindexed(choice, item)
            if index is None:
                raise MalformedPayload(
                    "a delta for a tool call without index or id, none started",
                    f"{path}.index",
                )
        if type(index) is not int:
            raise MalformedPayload(
                f"invalid tool call index {_excerpt(index)}", f"{path}.index"
            )
        call = choice.calls.get(index)
        if call is None:
            function = item.get("function")
            named = isinstance(function, Mapping) and function.get("name")
            if not item.get("id") and not named:
                raise MalformedPayload(
                    f"a delta for tool call {index}, never started", f"{path}.index"
                )
            call = choice.calls[index] = {}
        _merge(
            call,
            {key: value for key, value in item.items() if key != "index"},
            path,
            self._grow,
        )

    def _body(
        self, mode: str, note: streams.Note
    ) -> tuple[Mapping[str, Any], dict[str, str]]:
        choices: list[dict[str, Any]] = []
        partial: dict[str, str] = {}
        for index in sorted(self._choices):
            choice = self._choices[index]
            message = {"role": "assistant", "content": None, **choice.message}
            if message.get("role") is None:
                message["role"] = "assistant"
            calls: list[dict[str, Any]] = []
            for number in sorted(choice.calls):
                call = choice.calls[number]
                function = call.get("function")
                if isinstance(function, dict):
                    arguments = function.get("arguments")
                    if mode != "final" and streams.unfinished(arguments):
                        if mode == "cut":
                            note(
                                f"choice {index}, tool call {number}",
                                "the arguments did not finish: call left out",
                            )
                            continue
                        partial[str(call.get("id"))] = arguments
                        call = {**call, "function": {**function, "arguments": "{}"}}
                calls.append(call)
            if calls:
                message["tool_calls"] = calls
            elif "tool_calls" in message:
                del message["tool_calls"]
            item: dict[str, Any] = {"index": index, "message": message}
            if choice.logprobs is not False:
                item["logprobs"] = choice.logprobs
            item["finish_reason"] = choice.finish
            item.update(choice.other)
            choices.append(item)
        body: dict[str, Any] = {**self._top, "choices": choices}
        if self._usage is not None or self._announced:
            body["usage"] = self._usage
        return body, partial
