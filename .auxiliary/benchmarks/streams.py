"""Streamed replies: the cost of each event, from a short reply to a very long one.

Run: ``python .auxiliary/benchmarks/streams.py [--repeat N] [--sizes A,B,C]``.

Most applications stream. A reply arrives as one event per few tokens: a chat
answer is a hundred events, a long answer thousands, a reasoning model's
thinking or a generated document tens of thousands. What an accumulator does
per event must not grow with the length of the reply, or the last events of a
long one cost more than the model took to produce them.

For each provider, the recorded text stream under ``tests/data/streams`` is
stretched to ``N`` text deltas (its first delta event repeated, each copy
carrying another short piece of text) and read with the normalizer's
``parse_stream``. The figure is microseconds per event; the last column is the
longest reply's per-event cost over the one before's: 1.0 when the cost is
linear in the length (the shortest replies pay more per event, for the parts
of a stream that do not repeat).

The same replies are then read from their raw bytes, server-sent events as the
providers send them (Ollama: NDJSON), handed to :func:`read_events` whole, as
from a recorded file.

Peer: LangChain accumulates a stream by adding its ``AIMessageChunk`` objects
(``full = full + chunk``, what ``BaseChatModel.stream`` callers do). The chunks
are made before the timing, so the figure leaves out LangChain's reading of the
provider's events and is a lower bound of its cost. pydantic-ai's stream
accumulator (``ModelResponsePartsManager``) is private and needs a model's
request parameters, so it is not timed.
"""

from __future__ import annotations

import argparse
import copy
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

from langchain_core.messages import AIMessageChunk
from run import Timer

from canisters import providers
from canisters.providers import streams

ROOT = Path(__file__).resolve().parents[2]
STREAMS = ROOT / "tests" / "data" / "streams"

RECORDED = {
    "anthropic": "text.sse",
    "openai-chat": "text.sse",
    "openai-responses": "text.sse",
    "gemini": "text.sse",
    "ollama": "text.ndjson",
}
"""The recorded stream each provider's replies are stretched from."""

WORDS = ("the", "model", "streams", "a", "reply", "token", "by", "token", "while")
WORDS += ("the", "user", "waits", "and", "reads", "every", "word", "as", "it")
WORDS += ("arrives", "on", "the", "screen")


def piece(number: int) -> str:
    """The ``number``-th piece of text: a word and a space, as models send."""
    return WORDS[number % len(WORDS)] + " "


def _text_delta(provider: str, event: dict[str, Any]) -> Callable[[str], Any] | None:
    """A function making a copy of ``event`` with another text, if ``event`` is
    the provider's text delta; else ``None``."""
    if provider == "anthropic":
        delta = event.get("delta") or {}
        if event.get("type") == "content_block_delta" and "text" in delta:
            return lambda text: {**event, "delta": {**delta, "text": text}}
    elif provider == "openai-chat":
        choices = event.get("choices") or []
        if choices and (choices[0].get("delta") or {}).get("content"):
            choice = choices[0]

            def chat(text: str) -> Any:
                delta = {**choice["delta"], "content": text}
                return {**event, "choices": [{**choice, "delta": delta}]}

            return chat
    elif provider == "openai-responses":
        if event.get("type") == "response.output_text.delta":
            return lambda text: {**event, "delta": text}
    elif provider == "gemini":
        candidates = event.get("candidates") or []
        if candidates and not candidates[0].get("finishReason"):
            parts = (candidates[0].get("content") or {}).get("parts") or []
            if parts and "text" in parts[0]:

                def gemini(text: str) -> Any:
                    candidate = copy.deepcopy(candidates[0])
                    candidate["content"]["parts"] = [{"text": text}]
                    return {**event, "candidates": [candidate]}

                return gemini
    elif provider == "ollama":
        message = event.get("message") or {}
        if not event.get("done") and message.get("content"):
            return lambda text: {**event, "message": {**message, "content": text}}
    return None


def stretched(provider: str, deltas: int) -> list[Any]:
    """The provider's recorded text stream with ``deltas`` text deltas."""
    path = STREAMS / provider / RECORDED[provider]
    events = list(streams.read_events(path.read_bytes()))
    found = [
        (at, make)
        for at, event in enumerate(events)
        if (make := _text_delta(provider, event)) is not None
    ]
    if not found:
        raise SystemExit(f"{path}: no text delta to stretch")
    at, make = found[0]
    recorded = [e for e in events if _text_delta(provider, e) is not None]
    whole = "".join(_text_of(provider, e) for e in recorded)
    text = "".join(piece(n) for n in range(deltas))
    later = [
        _replaced(e, whole, text)
        for e in events[at + 1 :]
        if _text_delta(provider, e) is None
    ]
    return events[:at] + [make(piece(n)) for n in range(deltas)] + later


def _text_of(provider: str, event: dict[str, Any]) -> str:
    """The text a delta event carries."""
    if provider == "anthropic":
        return str(event["delta"]["text"])
    if provider == "openai-chat":
        return str(event["choices"][0]["delta"]["content"])
    if provider == "openai-responses":
        return str(event["delta"])
    if provider == "gemini":
        return str(event["candidates"][0]["content"]["parts"][0]["text"])
    return str(event["message"]["content"])


def _replaced(value: Any, old: str, new: str) -> Any:
    """``value`` with every string equal to ``old`` replaced by ``new``: the
    events that end a stream may repeat the whole text (OpenAI Responses)."""
    if isinstance(value, dict):
        return {key: _replaced(item, old, new) for key, item in value.items()}
    if isinstance(value, list):
        return [_replaced(item, old, new) for item in value]
    return new if value == old else value


def wire(provider: str, events: list[Any]) -> bytes:
    """The events as the provider sends them: server-sent events (Ollama: NDJSON)."""
    if provider == "ollama":
        return b"".join(json.dumps(event).encode() + b"\n" for event in events)
    lines = []
    for event in events:
        if provider in ("anthropic", "openai-responses"):
            lines.append(f"event: {event['type']}")
        lines += [f"data: {json.dumps(event)}", ""]
    return "\n".join(lines).encode()


def langchain_chunks(deltas: int) -> list[AIMessageChunk]:
    """The same pieces of text as LangChain chunks."""
    return [AIMessageChunk(content=piece(n)) for n in range(deltas)]


def langchain_sum(chunks: list[AIMessageChunk]) -> AIMessageChunk:
    """LangChain's accumulation of a stream."""
    full = chunks[0]
    for chunk in chunks[1:]:
        full = full + chunk
    return full


def main(argv: list[str] | None = None) -> None:
    """Print microseconds per event for each provider and reply length."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument(
        "--sizes",
        default="100,2000,30000",
        help="comma-separated numbers of text deltas a reply has",
    )
    arguments = parser.parse_args(argv)
    sizes = [int(size) for size in arguments.sizes.split(",")]
    timer = Timer(arguments.repeat, 1.0)
    print(
        f"streamed replies of {', '.join(f'{s:,}' for s in sizes)} text deltas; "
        f"us per event, best of >= {arguments.repeat} runs"
    )
    header = "".join(f"{f'{s:,}':>10}" for s in sizes)
    print(f"{'':<18}{header}   {'growth':>8}")
    peer: dict[int, float] = {}
    for size in sizes:
        chunks = langchain_chunks(size)
        peer[size] = timer.best(lambda chunks=chunks: langchain_sum(chunks)) / size
    raw: dict[str, dict[int, float]] = {}
    for provider in RECORDED:
        normalizer = providers.get(provider)
        row: dict[int, float] = {}
        raw[provider] = {}
        for size in sizes:
            events = stretched(provider, size)
            reply = normalizer.parse_stream(events)
            expected = "".join(piece(n) for n in range(size))
            text = reply[0].content[0].text  # type: ignore[attr-defined]
            assert expected in text, f"{provider}: the text did not survive"
            row[size] = timer.best(
                lambda events=events, normalizer=normalizer: normalizer.parse_stream(
                    events
                )
            ) / len(events)
            data = wire(provider, events)
            assert list(streams.read_events(data)) == events
            raw[provider][size] = timer.best(
                lambda data=data, normalizer=normalizer: normalizer.parse_stream(
                    streams.read_events(data)
                )
            ) / len(events)
        cells = "".join(f"{row[s] * 1e6:10.2f}" for s in sizes)
        print(f"{provider:<18}{cells}   {_growth(row, sizes):7.2f}x")
    cells = "".join(f"{peer[s] * 1e6:10.2f}" for s in sizes)
    print(f"{'LangChain (sum)':<18}{cells}   {_growth(peer, sizes):7.2f}x")
    print("\nfrom the raw stream, all its bytes at once (read_events + parse_stream)")
    for provider, row in raw.items():
        cells = "".join(f"{row[s] * 1e6:10.2f}" for s in sizes)
        print(f"{provider:<18}{cells}   {_growth(row, sizes):7.2f}x")


def _growth(row: dict[int, float], sizes: list[int]) -> float:
    """The longest reply's cost per event over the next longest's."""
    return row[sizes[-1]] / row[sizes[-2]] if len(sizes) > 1 else 1.0


if __name__ == "__main__":
    main()
