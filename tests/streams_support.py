"""The recorded stream corpus, and what each provider's SDK makes of a stream.

Streams live under ``data/streams/<provider>/`` as the raw wire text their
source recorded: ``<name>.sse`` (server-sent events), ``<name>.ndjson``
(Ollama) or ``<name>.json`` (a Gemini stream as one JSON array). A
``<name>.response.json`` beside a stream is the equivalent non-streamed body
(``SOURCE.md`` says where each came from).

The references below are built without canisters: the wire text is split by a
small reader of its own and the events handed to the provider SDK's own
accumulation where the SDK has one (OpenAI Chat, Anthropic), to the stream's
own final event (OpenAI Responses), or concatenated by the provider's
documented rules (Gemini, Ollama: their SDKs accumulate nothing).
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import attrs

DIRECTORY = Path(__file__).parent / "data" / "streams"
PROVIDERS = ("openai-chat", "openai-responses", "anthropic", "gemini", "ollama")
SUFFIXES = (".sse", ".ndjson", ".json")
PAIRED = ".response.json"
LINES = re.compile(r"\r\n|\r|\n")
"""What ends a line of SSE or NDJSON (not str.splitlines' other separators,
which may stand unescaped inside a JSON string)."""


@attrs.frozen
class Stream:
    """One recorded stream of one provider."""

    provider: str
    path: Path

    @property
    def name(self) -> str:
        return self.path.name.removesuffix(self.path.suffix)

    @property
    def id(self) -> str:
        """A test id: ``provider/name``."""
        return f"{self.provider}/{self.name}"

    def raw(self) -> bytes:
        """The stream's bytes exactly as recorded."""
        return self.path.read_bytes()

    @property
    def paired(self) -> Path | None:
        """The equivalent non-streamed body's file, if the corpus has one."""
        path = self.path.with_name(self.name + PAIRED)
        return path if path.exists() else None

    def paired_body(self) -> dict[str, Any] | None:
        path = self.paired
        if path is None:
            return None
        body: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
        return body

    def events(self) -> list[dict[str, Any]]:
        """The stream's event objects, split by :func:`wire_events`."""
        return wire_events(self.raw(), self.path.suffix)


def streams(provider: str) -> list[Stream]:
    """The recorded streams of one provider, sorted by name."""
    directory = DIRECTORY / provider
    return [
        Stream(provider, path)
        for path in sorted(directory.iterdir())
        if path.suffix in SUFFIXES and not path.name.endswith(PAIRED)
    ]


def all_streams() -> list[Stream]:
    """Every recorded stream of every provider."""
    return [stream for provider in PROVIDERS for stream in streams(provider)]


def wire_events(raw: bytes, suffix: str) -> list[dict[str, Any]]:
    """Split raw wire bytes into event objects, independently of canisters.

    SSE: events are separated by blank lines, an event's ``data:`` lines are
    joined with newlines, ``[DONE]`` ends nothing but carries no event.
    NDJSON: one object per non-blank line. JSON: an array of objects.
    """
    text = raw.decode("utf-8")
    if suffix == ".json":
        array: list[dict[str, Any]] = json.loads(text)
        return array
    if suffix == ".ndjson":
        return [json.loads(line) for line in LINES.split(text) if line.strip()]
    events: list[dict[str, Any]] = []
    data: list[str] = []
    for line in [*LINES.split(text), ""]:
        if line == "":
            payload = "\n".join(data)
            data = []
            if payload and payload != "[DONE]":
                events.append(json.loads(payload))
        elif line.startswith("data:"):
            value = line[len("data:") :]
            data.append(value[1:] if value.startswith(" ") else value)
    return events


# ---------------------------------------------------------------- references


def response_type(provider: str) -> Any:
    """The provider SDK's type of a non-streamed response."""
    if provider == "openai-chat":
        from openai.types.chat import ChatCompletion

        return ChatCompletion
    if provider == "openai-responses":
        from openai.types.responses import Response

        return Response
    if provider == "anthropic":
        from anthropic.types import Message

        return Message
    if provider == "ollama":
        from ollama import ChatResponse

        return ChatResponse
    from google.genai.types import GenerateContentResponse

    return GenerateContentResponse


def validation_errors(provider: str, body: dict[str, Any]) -> set[tuple[str, str]]:
    """What the provider SDK's response type finds wrong with ``body``.

    Empty when the SDK accepts it. Recordings older or newer than the
    installed SDK can miss a field it now requires (the Responses API's
    ``usage.input_tokens_details.cache_write_tokens``) or hold one it does
    not know (Gemini's ``usageMetadata.serviceTier``, refused by
    google-genai); so a body made from a stream is held to: no error the
    recorded body does not have itself.
    """
    from pydantic import ValidationError

    try:
        response_type(provider).model_validate(body)
    except ValidationError as error:
        return {(".".join(map(str, e["loc"])), e["type"]) for e in error.errors()}
    return set()


def openai_chat_reference(events: list[dict[str, Any]]) -> dict[str, Any]:
    """The ``ChatCompletion`` openai's ``ChatCompletionStreamState`` builds."""
    from openai.lib.streaming.chat import ChatCompletionStreamState
    from openai.types.chat import ChatCompletionChunk

    state: ChatCompletionStreamState[None] = ChatCompletionStreamState()
    for event in events:
        state.handle_chunk(ChatCompletionChunk.model_validate(event))
    # The accumulated snapshot, not get_final_completion(): that one also
    # parses the content for structured outputs and raises on finish_reason
    # "length" (a complete response all the same).
    body = state.current_completion_snapshot.model_dump(mode="json", exclude_none=True)
    body["object"] = "chat.completion"
    for choice in body["choices"]:
        # The API's message always has "content" (null beside tool calls or
        # a refusal); the accumulation leaves it out when no delta had text.
        choice["message"].setdefault("content", None)
        for call in choice["message"].get("tool_calls", []):
            call.pop("index", None)  # a chunk's field, not the response's
    return body


def anthropic_reference(events: list[dict[str, Any]]) -> dict[str, Any]:
    """The ``Message`` the anthropic SDK's stream accumulation builds."""
    from anthropic.lib.streaming._messages import accumulate_event
    from anthropic.types import RawMessageStreamEvent

    from .providers_support import adapter

    events_adapter = adapter(RawMessageStreamEvent)
    snapshot = None
    buffers: dict[int, bytes] = {}
    for event in events:
        if event.get("type") not in KNOWN_ANTHROPIC_EVENTS:
            continue  # ping: carries nothing, the SDK skips it too
        snapshot = accumulate_event(
            event=events_adapter.validate_python(event),
            current_snapshot=snapshot,
            json_bufs=buffers,
        )
    assert snapshot is not None
    body = snapshot.model_dump(mode="json", exclude_none=True)
    for block in body["content"]:
        block.pop("parsed_output", None)
    return body


KNOWN_ANTHROPIC_EVENTS = frozenset(
    {
        "message_start",
        "message_delta",
        "message_stop",
        "content_block_start",
        "content_block_delta",
        "content_block_stop",
    }
)


def openai_responses_reference(events: list[dict[str, Any]]) -> dict[str, Any]:
    """The full response carried by the stream's ``response.completed`` event."""
    (completed,) = [
        event for event in events if event.get("type") == "response.completed"
    ]
    body: dict[str, Any] = completed["response"]
    return body


def gemini_reference(events: list[dict[str, Any]]) -> dict[str, Any]:
    """The ``GenerateContentResponse`` the chunks add up to.

    google-genai accumulates nothing, so the documented rules: each chunk is a
    ``GenerateContentResponse`` holding the next parts of the candidate; text
    parts continue the previous text part of the same kind (thought or not);
    a ``thoughtSignature`` belongs to the part it arrives with (or, on an
    otherwise empty text part, to the text it ends); an empty text part with
    nothing else adds nothing; the last chunk's
    ``finishReason``, ``usageMetadata`` and metadata hold for the whole, the
    citations of ``citationMetadata`` joined (Vertex AI sends in each chunk
    those of the text it brings).
    """
    parts: list[dict[str, Any]] = []
    candidate: dict[str, Any] = {}
    top: dict[str, Any] = {}
    role = "model"
    for event in events:
        top.update({key: value for key, value in event.items() if key != "candidates"})
        for chunk_candidate in event.get("candidates", [])[:1]:
            content = chunk_candidate.get("content") or {}
            role = content.get("role", role)
            for part in content.get("parts", []):
                _add_gemini_part(parts, dict(part))
            candidate.update(
                {
                    key: value
                    for key, value in chunk_candidate.items()
                    if key not in ("content", "citationMetadata")
                }
            )
            cited = chunk_candidate.get("citationMetadata")
            if cited is not None:  # each chunk cites the text it brings
                held = candidate.setdefault("citationMetadata", {"citations": []})
                held["citations"] += [
                    c for c in cited.get("citations", []) if c not in held["citations"]
                ]
    body = {
        **top,
        "candidates": [{**candidate, "content": {"role": role, "parts": parts}}],
    }
    return body


def _add_gemini_part(parts: list[dict[str, Any]], part: dict[str, Any]) -> None:
    if part == {"text": ""}:
        return  # an empty piece of text adds nothing (a last chunk may hold one)
    previous = parts[-1] if parts else None
    if (
        previous is not None
        and set(previous) <= TEXT_PART_KEYS
        and set(part) <= TEXT_PART_KEYS
        and "text" in previous
        and "text" in part
        and bool(previous.get("thought")) == bool(part.get("thought"))
        and not ("thoughtSignature" in previous and "thoughtSignature" in part)
    ):
        previous["text"] += part["text"]
        if "thoughtSignature" in part:
            previous["thoughtSignature"] = part["thoughtSignature"]
        return
    parts.append(part)


TEXT_PART_KEYS = frozenset({"text", "thought", "thoughtSignature"})


def ollama_reference(events: list[dict[str, Any]]) -> dict[str, Any]:
    """The ``/api/chat`` response the NDJSON objects add up to.

    ollama-python accumulates nothing, so the documented rules: every object
    but the last carries the next piece of ``message.content`` (and
    ``message.thinking``) or whole ``tool_calls``; the last (``done: true``)
    carries the finish reason, counts and durations.
    """
    message: dict[str, Any] = {"role": "assistant", "content": ""}
    thinking: list[str] = []
    calls: list[dict[str, Any]] = []
    for event in events:
        piece = event.get("message") or {}
        message["role"] = piece.get("role", message["role"])
        message["content"] += piece.get("content") or ""
        if piece.get("thinking"):
            thinking.append(piece["thinking"])
        calls.extend(piece.get("tool_calls") or [])
    final = events[-1]
    if thinking:
        message["thinking"] = "".join(thinking)
    if calls:
        message["tool_calls"] = calls
    body = {
        **{key: value for key, value in final.items() if key != "message"},
        "message": message,
    }
    return body


REFERENCES = {
    "openai-chat": openai_chat_reference,
    "openai-responses": openai_responses_reference,
    "anthropic": anthropic_reference,
    "gemini": gemini_reference,
    "ollama": ollama_reference,
}


def reference_body(stream: Stream) -> dict[str, Any]:
    """The non-streamed body equivalent to a stream.

    Its recorded pair where the corpus has one, otherwise what the provider's
    SDK (or documented rules) accumulate from the stream's events.
    """
    paired = stream.paired_body()
    if paired is not None:
        return paired
    return REFERENCES[stream.provider](stream.events())


def stream_text(body: dict[str, Any], provider: str) -> str:
    """The answer text of a non-streamed body (what a UI shows at the end)."""
    if provider == "openai-chat":
        return "".join(
            choice["message"].get("content") or "" for choice in body["choices"]
        )
    if provider == "openai-responses":
        return "".join(
            part.get("text", "")
            for item in body["output"]
            if item["type"] == "message"
            for part in item["content"]
        )
    if provider == "anthropic":
        return "".join(
            block.get("text", "")
            for block in body["content"]
            if block["type"] == "text"
        )
    if provider == "gemini":
        return "".join(
            part.get("text", "")
            for candidate in body["candidates"][:1]
            for part in candidate["content"]["parts"]
            if not part.get("thought")
        )
    return str(body["message"].get("content") or "")


def comparable(conversation: Any) -> list[Any]:
    """A conversation to compare with one parsed from an equivalent body.

    Ids and timestamps set aside (as ``providers_support.anonymous`` does),
    and ``null`` values in ``extras``: a null field and a missing one say the
    same, and the SDKs' accumulations drop some of the nulls a stream sends
    (``stop_sequence``, ``logprobs``, ``refusal``) and add others.
    """
    from .providers_support import anonymous

    result = []
    for canister in anonymous(conversation):
        changes: dict[str, Any] = {"extras": _without_nulls(canister.extras)}
        if hasattr(canister, "content"):
            changes["content"] = tuple(
                attrs.evolve(part, extras=_without_nulls(part.extras))
                for part in canister.content
            )
        result.append(attrs.evolve(canister, **changes))
    return result


def _without_nulls(value: Any) -> Any:
    """``value`` without null members (and objects that held only nulls)."""
    if isinstance(value, Mapping):
        kept = {
            key: _without_nulls(item) for key, item in value.items() if item is not None
        }
        return {
            key: item
            for key, item in kept.items()
            if not (item == {} and value[key] != {})
        }
    if isinstance(value, (list, tuple)):
        return [_without_nulls(item) for item in value]
    return value


def sdk_events(stream: Stream) -> tuple[list[Any], list[dict[str, Any]]]:
    """The stream's events as the provider SDK's own event objects, built the
    way its streaming client builds them (the OpenAI and Anthropic clients
    construct without validating; google-genai and ollama validate), and the
    event dicts those objects stand for (without the fields the installed
    google-genai does not know, which its objects cannot hold)."""
    from pydantic import ValidationError

    events = stream.events()
    if stream.provider == "openai-chat":
        from openai._models import construct_type
        from openai.types.chat import ChatCompletionChunk

        objects = [construct_type(type_=ChatCompletionChunk, value=e) for e in events]
        return objects, events
    if stream.provider == "openai-responses":
        from openai._models import construct_type
        from openai.types.responses import ResponseStreamEvent

        objects = [construct_type(type_=ResponseStreamEvent, value=e) for e in events]
        return objects, events
    if stream.provider == "anthropic":
        from anthropic._models import construct_type as construct
        from anthropic.types import RawMessageStreamEvent

        kept = [e for e in events if e.get("type") in KNOWN_ANTHROPIC_EVENTS]
        return [construct(type_=RawMessageStreamEvent, value=e) for e in kept], kept
    if stream.provider == "ollama":
        from ollama import ChatResponse

        return [ChatResponse.model_validate(e) for e in events], events
    from google.genai.types import GenerateContentResponse

    chunks, dicts = [], []
    for event in events:
        try:
            chunks.append(GenerateContentResponse.model_validate(event))
            dicts.append(event)
        except ValidationError as error:
            # A field newer than the installed google-genai: set it aside.
            newer = [e["loc"] for e in error.errors() if e["type"] == "extra_forbidden"]
            known = _without(event, newer)
            chunks.append(GenerateContentResponse.model_validate(known))
            dicts.append(known)
    return chunks, dicts


def _without(body: Any, locations: list[tuple[int | str, ...]]) -> Any:
    """A copy of ``body`` without the values at ``locations``."""
    copy = json.loads(json.dumps(body))
    for location in locations:
        *parents, last = location
        holder = copy
        for key in parents:
            holder = holder[key]
        del holder[last]
    return copy
