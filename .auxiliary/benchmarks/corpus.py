"""A deterministic corpus of realistic agent conversations, for the benchmarks.

:func:`conversation` returns one conversation of exactly ``size`` messages as
neutral *specs*: plain dicts that no library owns, from which
:mod:`peers` builds canisters, pydantic-ai messages, LangChain messages and
plain dicts doing the same work. The same ``(size, seed)`` always gives the same
specs, byte for byte.

What a conversation holds, as agent loops do: a system prompt shared by many
conversations, user turns (some with a long pasted text, some with an image as
bytes or as a URL), assistant text, steps of one to three parallel tool calls with
nested JSON arguments, their results (a few of them long), and a final answer.

:func:`chat_corpus` is the second corpus, the shape of most chat applications'
histories: many short turns (5 to 200 characters), a short system prompt, now
and then one small tool call and its short result, and no media. There the cost
per message (envelope, one record per line, allocations) dominates, not the cost
per byte.

:func:`media_corpus` is the third, the shape of media-heavy chat applications
(a photo assistant, a screenshot helper): short conversations (4 to 40
messages), a short system prompt, user turns of a short text and one to four
images (most as bytes of 5 KB to 300 KB behind a PNG or JPEG signature, some as
URLs), assistant replies of 50 to 600 characters and now and then a tool call
with a short result. There the cost per byte dominates: base64 in JSON and in
the providers' data URLs, and the bytes held.

Spec kinds (every spec has ``kind``, ``id`` and ``time``, a UTC datetime)::

    {"kind": "system", "text": str}
    {"kind": "user", "parts": [{"text": str} | {"image": bytes, "mime": str}
                               | {"image_url": str}]}
    {"kind": "assistant", "text": str, "step": int, "model": str,
     "usage": (input_tokens, output_tokens), "finish": "stop"}
    {"kind": "call", "step": int, "call_id": str, "name": str, "arguments": dict}
    {"kind": "result", "step": int, "call_id": str, "name": str, "text": str}
"""

from __future__ import annotations

import random
from collections.abc import Callable
from datetime import datetime, timedelta, timezone
from typing import Any

__all__ = [
    "CORPORA",
    "SIZES",
    "chat_conversation",
    "chat_corpus",
    "conversation",
    "corpus",
    "media_conversation",
    "media_corpus",
    "message_count",
    "payload_bytes",
]

Spec = dict[str, Any]

SIZES = (10, 30, 100, 300, 1000, 3000, 10000, 100000)
"""Conversation sizes the generator is exercised with, in messages."""

_VOCABULARY = (
    "the model agent tool call result search query page file table row "
    "column user answer question context window token cache prompt system "
    "weather city price order invoice customer account report summary chart "
    "image document error retry timeout latency request response stream "
    "chunk embedding vector index database schema migration deploy service "
    "cluster node queue worker python function class method argument value "
    "list mapping string number please could you check whether this is right "
    "and then tell me what to do next because it seems the last run failed "
    "with an unexpected exception"
)
_WORDS = tuple(_VOCABULARY.split())

_MODELS = ("gpt-4o-2024-08-06", "claude-sonnet-4-5", "gemini-2.5-flash")
_TOOLS = ("search", "read_file", "run_sql", "http_get", "calculator", "write_file")
_EPOCH = datetime(2025, 3, 1, 9, 0, tzinfo=timezone.utc)
_PNG = b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR"
_JPEG = b"\xff\xd8\xff\xe0\x00\x10JFIF\x00"


def _text(rng: random.Random, low: int, high: int) -> str:
    words = rng.choices(_WORDS, k=rng.randint(low, high))
    words[0] = words[0].capitalize()
    return " ".join(words) + "."


def _paragraphs(rng: random.Random, count: int) -> str:
    return "\n\n".join(_text(rng, 40, 120) for _ in range(count))


def _system_prompts() -> tuple[str, ...]:
    rng = random.Random(7)
    return tuple(
        f"You are assistant #{n}. Follow the rules below.\n\n" + _paragraphs(rng, 4)
        for n in range(3)
    )


_SYSTEM = _system_prompts()


def _arguments(rng: random.Random, name: str) -> dict[str, Any]:
    if name == "search":
        return {
            "query": _text(rng, 3, 9),
            "limit": rng.randint(1, 50),
            "filters": {"lang": rng.choice(("en", "fr", "de")), "safe": True},
        }
    if name == "read_file":
        return {"path": f"src/{rng.choice(_WORDS)}/{rng.choice(_WORDS)}.py"}
    if name == "run_sql":
        return {
            "sql": f"SELECT * FROM {rng.choice(_WORDS)} WHERE id > ?",
            "params": [rng.randint(0, 10**6)],
            "timeout": rng.choice((1.5, 5.0, 30.0)),
        }
    if name == "http_get":
        return {
            "url": f"https://api.example.com/v1/{rng.choice(_WORDS)}",
            "headers": {"accept": "application/json"},
        }
    if name == "calculator":
        return {"expression": f"{rng.randint(1, 999)} * {rng.random():.6f}"}
    return {
        "path": f"notes/{rng.choice(_WORDS)}.md",
        "content": _paragraphs(rng, 2),
        "append": rng.random() < 0.5,
    }


def _result_text(rng: random.Random, name: str) -> str:
    if rng.random() < 0.05:
        return _paragraphs(rng, rng.randint(20, 60))
    if name in ("run_sql", "http_get"):
        rows = [
            {"id": rng.randint(1, 10**6), "name": rng.choice(_WORDS)}
            for _ in range(rng.randint(1, 6))
        ]
        return repr(rows).replace("'", '"')
    return _text(rng, 5, 60)


class _Writer:
    def __init__(self, rng: random.Random, size: int) -> None:
        self.rng = rng
        self.size = size
        self.specs: list[Spec] = []
        self.clock = _EPOCH + timedelta(seconds=rng.randint(0, 10**7))

    @property
    def left(self) -> int:
        return self.size - len(self.specs)

    def add(self, kind: str, **fields: Any) -> None:
        self.clock += timedelta(milliseconds=self.rng.randint(50, 20_000))
        bits = self.rng.getrandbits(128)
        ident = f"{bits:032x}"
        if kind == "assistant":
            # Every model reply records its token usage and why it stopped, as
            # providers report them; drawn from the id's bits, so that the
            # rest of the corpus draws the same values with or without them.
            fields["usage"] = (100 + bits % 20_000, 5 + (bits >> 32) % 800)
            fields["finish"] = "stop"
        self.specs.append({"kind": kind, "id": ident, "time": self.clock, **fields})

    def user(self) -> None:
        rng = self.rng
        parts: list[dict[str, Any]] = [{"text": _text(rng, 4, 40)}]
        roll = rng.random()
        if roll < 0.12:
            data = _PNG + rng.randbytes(rng.randint(1024, 6144))
            parts.append({"image": data, "mime": "image/png"})
        elif roll < 0.22:
            parts.append(
                {"image_url": f"https://images.example.com/{rng.getrandbits(64):x}.jpg"}
            )
        elif roll < 0.27:
            parts.append({"text": _paragraphs(rng, rng.randint(10, 40))})
        self.add("user", parts=parts)


def conversation(size: int, seed: int = 0) -> list[Spec]:
    """Return one conversation of exactly ``size`` messages (``size`` >= 2)."""
    if size < 2:
        raise ValueError("a conversation here has at least 2 messages")
    rng = random.Random(f"canisters-corpus-{seed}-{size}")
    writer = _Writer(rng, size)
    model = rng.choice(_MODELS)
    writer.add("system", text=rng.choice(_SYSTEM))
    writer.user()
    step = 0
    while writer.left > 0:
        left = writer.left
        calls = rng.choice((1, 1, 1, 2, 2, 3))
        if left >= 2 * calls + 2 and rng.random() < 0.8:
            step += 1
            if rng.random() < 0.6:
                writer.add("assistant", text=_text(rng, 5, 30), step=step, model=model)
            names = [rng.choice(_TOOLS) for _ in range(calls)]
            ids = [f"call_{rng.getrandbits(96):024x}" for _ in names]
            for name, call_id in zip(names, ids, strict=True):
                writer.add(
                    "call",
                    step=step,
                    call_id=call_id,
                    name=name,
                    arguments=_arguments(rng, name),
                )
            for name, call_id in zip(names, ids, strict=True):
                writer.add(
                    "result",
                    step=step,
                    call_id=call_id,
                    name=name,
                    text=_result_text(rng, name),
                )
            continue
        step += 1
        text = _paragraphs(rng, 3) if rng.random() < 0.1 else _text(rng, 10, 80)
        writer.add("assistant", text=text, step=step, model=model)
        if writer.left > 0:
            writer.user()
    return writer.specs


def _mix(
    total: int,
    seed: int,
    name: str,
    sizes: tuple[int, ...],
    make: Callable[[int, int], list[Spec]],
) -> list[list[Spec]]:
    """Conversations of the ``sizes`` drawn (the last one takes what is left)
    made by ``make(size, seed)``, holding ``total`` messages."""
    rng = random.Random(f"canisters-{name}-mix-{seed}")
    conversations: list[list[Spec]] = []
    left = total
    index = 0
    while left > 0:
        size = min(left, rng.choice(sizes))
        if left - size < 2:
            size = left
        conversations.append(make(size, seed * 100_003 + index))
        left -= size
        index += 1
    return conversations


def corpus(total: int, seed: int = 0) -> list[list[Spec]]:
    """Return conversations of mixed sizes (10 to 1,000) holding ``total`` messages.

    ``total`` is at least 2.
    """
    return _mix(
        total, seed, "corpus", (10, 20, 30, 50, 100, 200, 300, 1000), conversation
    )


def _short(rng: random.Random) -> str:
    """A chat turn of 5 to 200 characters."""
    limit = rng.choice((20, 40, 60, 100, 200))
    text = _text(rng, 1, 30)
    if len(text) > limit:
        text = text[: limit - 1].rsplit(" ", 1)[0] + "."
    return text if len(text) >= 5 else text + " okay."


_CHAT_TOOLS = ("get_weather", "lookup_order", "convert_currency", "get_time")


def _small_arguments(rng: random.Random, name: str) -> dict[str, Any]:
    if name == "get_weather":
        return {"city": rng.choice(("Paris", "Berlin", "Lagos", "Lima", "Osaka"))}
    if name == "lookup_order":
        return {"order_id": f"A{rng.randint(10_000, 99_999)}"}
    if name == "convert_currency":
        return {"amount": rng.randint(1, 500), "to": rng.choice(("EUR", "USD"))}
    return {"zone": rng.choice(("UTC", "Europe/Paris", "Asia/Tokyo"))}


def chat_conversation(size: int, seed: int = 0) -> list[Spec]:
    """Return one short-turn chat conversation of exactly ``size`` messages
    (``size`` >= 2): a short system prompt, then user and assistant turns of 5 to
    200 characters, about one step in eight a single small tool call and result.
    """
    if size < 2:
        raise ValueError("a conversation here has at least 2 messages")
    rng = random.Random(f"canisters-chat-{seed}-{size}")
    writer = _Writer(rng, size)
    model = rng.choice(_MODELS)
    writer.add("system", text=_short(rng))
    step = 0
    while writer.left > 0:
        writer.add("user", parts=[{"text": _short(rng)}])
        if writer.left == 0:
            break
        step += 1
        if writer.left >= 3 and rng.random() < 0.125:
            name = rng.choice(_CHAT_TOOLS)
            call_id = f"call_{rng.getrandbits(96):024x}"
            arguments = _small_arguments(rng, name)
            writer.add(
                "call", step=step, call_id=call_id, name=name, arguments=arguments
            )
            writer.add(
                "result", step=step, call_id=call_id, name=name, text=_short(rng)
            )
        writer.add("assistant", text=_short(rng), step=step, model=model)
    return writer.specs


def chat_corpus(total: int, seed: int = 0) -> list[list[Spec]]:
    """Return short-turn chat conversations (4 to 60 messages) holding ``total``
    messages (``total`` is at least 2)."""
    return _mix(total, seed, "chat", (4, 6, 10, 16, 20, 30, 40, 60), chat_conversation)


def _reply(rng: random.Random) -> str:
    """An assistant reply of 50 to 600 characters."""
    limit = rng.randint(51, 600)  # words are one space apart: >= 50 once cut
    text = _text(rng, 8, 120)
    while len(text) < limit:
        text += " " + _text(rng, 8, 40)
    return text[: limit - 1].rstrip() + "."


def _image(rng: random.Random) -> dict[str, Any]:
    """One image part: bytes of 5 KB to 300 KB (log-uniform, so most are small)
    behind a PNG or JPEG signature, or, one time in five, a URL."""
    if rng.random() < 0.2:
        return {"image_url": f"https://cdn.example.com/u/{rng.getrandbits(64):x}.jpg"}
    size = int(5_000 * 60 ** rng.random())
    if rng.random() < 0.5:
        return {"image": _PNG + rng.randbytes(size - len(_PNG)), "mime": "image/png"}
    return {"image": _JPEG + rng.randbytes(size - len(_JPEG)), "mime": "image/jpeg"}


_MEDIA_TOOLS = ("detect_objects", "read_text", "lookup_product")


def media_conversation(size: int, seed: int = 0) -> list[Spec]:
    """Return one media-heavy chat conversation of exactly ``size`` messages
    (``size`` >= 2): a short system prompt, then user turns of a short text and
    one to four images, assistant replies of 50 to 600 characters, about one
    step in six a single tool call and its short result.
    """
    if size < 2:
        raise ValueError("a conversation here has at least 2 messages")
    rng = random.Random(f"canisters-media-{seed}-{size}")
    writer = _Writer(rng, size)
    model = rng.choice(_MODELS)
    writer.add("system", text=_short(rng))
    step = 0
    while writer.left > 0:
        parts = [{"text": _short(rng)}]
        parts.extend(_image(rng) for _ in range(rng.randint(1, 4)))
        writer.add("user", parts=parts)
        if writer.left == 0:
            break
        step += 1
        if writer.left >= 3 and rng.random() < 1 / 6:
            name = rng.choice(_MEDIA_TOOLS)
            call_id = f"call_{rng.getrandbits(96):024x}"
            detail = rng.choice(("low", "high"))
            arguments = {"image": rng.randint(0, 3), "detail": detail}
            writer.add(
                "call", step=step, call_id=call_id, name=name, arguments=arguments
            )
            writer.add(
                "result", step=step, call_id=call_id, name=name, text=_short(rng)
            )
        writer.add("assistant", text=_reply(rng), step=step, model=model)
    return writer.specs


def media_corpus(total: int, seed: int = 0) -> list[list[Spec]]:
    """Return media-heavy chat conversations (4 to 40 messages) holding
    ``total`` messages (``total`` is at least 2), about 60 KB of image bytes per
    message on average."""
    return _mix(total, seed, "media", (4, 6, 8, 10, 16, 20, 30, 40), media_conversation)


def payload_bytes(conversations: list[list[Spec]]) -> int:
    """How many bytes of media the conversations carry inline."""
    return sum(
        len(part["image"])
        for specs in conversations
        for spec in specs
        for part in spec.get("parts", ())
        if "image" in part
    )


CORPORA = {"agent": corpus, "chat": chat_corpus, "media": media_corpus}
"""The corpora by name: agent runs (long texts, images, tool steps), short chat
turns, and media-heavy chat (images as bytes and URLs)."""


def message_count(conversations: list[list[Spec]]) -> int:
    """How many messages the conversations hold."""
    return sum(len(specs) for specs in conversations)
