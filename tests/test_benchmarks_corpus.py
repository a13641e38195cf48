"""The benchmark corpus generator is deterministic and yields valid conversations."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

import pytest

import canisters

BENCHMARKS = Path(__file__).resolve().parent.parent / ".auxiliary" / "benchmarks"


@pytest.fixture(scope="module")
def modules() -> tuple[ModuleType, ...]:
    sys.path.insert(0, str(BENCHMARKS))
    try:
        loaded = []
        for name in ("corpus", "peers", "run", "languages", "streams"):
            spec = importlib.util.spec_from_file_location(
                name, BENCHMARKS / f"{name}.py"
            )
            assert spec is not None and spec.loader is not None
            module = importlib.util.module_from_spec(spec)
            sys.modules[name] = module
            spec.loader.exec_module(module)
            loaded.append(module)
        return tuple(loaded)
    finally:
        sys.path.remove(str(BENCHMARKS))


@pytest.mark.parametrize("size", [2, 10, 100, 1000])
def test_conversation_is_deterministic_and_exact(modules, size):
    corpus = modules[0]
    first = corpus.conversation(size, seed=3)
    assert len(first) == size
    assert corpus.conversation(size, seed=3) == first
    assert corpus.conversation(size, seed=4) != first


def test_corpus_is_deterministic_and_holds_the_total(modules):
    corpus = modules[0]
    mixed = corpus.corpus(2500, seed=1)
    assert corpus.message_count(mixed) == 2500
    assert corpus.corpus(2500, seed=1) == mixed


@pytest.mark.parametrize("size", [10, 300, 3000])
def test_conversations_are_valid_and_realistic(modules, size):
    corpus, peers = modules[:2]
    specs = corpus.conversation(size, seed=size)
    conversation = peers.canisters_from_specs(specs)
    canisters.validate(conversation)
    assert len(conversation) == size
    assert not conversation.pending_invocations()
    replies = [c for c in conversation if isinstance(c, canisters.Assistant)]
    assert replies
    for reply in replies:  # as providers report every reply
        assert reply.metadata is not None and reply.metadata.usage is not None
        assert reply.metadata.usage.total_tokens > 0
        assert reply.metadata.finish_reason == "stop"
    if size >= 300:
        kinds = {spec["kind"] for spec in specs}
        assert kinds == {"system", "user", "assistant", "call", "result"}
        parts = [part for spec in specs for part in spec.get("parts", ())]
        assert any("image" in part for part in parts)
        assert any("image_url" in part for part in parts)
        assert any(len(spec.get("text", "")) > 5000 for spec in specs)


def test_corpus_round_trips_through_json(modules):
    corpus, peers = modules[:2]
    for specs in corpus.corpus(500, seed=2):
        conversation = peers.canisters_from_specs(specs)
        assert canisters.from_json(canisters.to_json(conversation)) == conversation


def test_chat_corpus_is_short_turns_without_media(modules):
    corpus, peers = modules[:2]
    mixed = corpus.chat_corpus(1500, seed=1)
    assert corpus.message_count(mixed) == 1500
    assert corpus.chat_corpus(1500, seed=1) == mixed
    assert corpus.chat_corpus(1500, seed=2) != mixed
    specs = [spec for conversation in mixed for spec in conversation]
    texts = [part["text"] for spec in specs for part in spec.get("parts", ())] + [
        spec["text"] for spec in specs if "text" in spec
    ]
    assert all(5 <= len(text) <= 200 for text in texts)
    assert not any(
        "image" in part or "image_url" in part
        for spec in specs
        for part in spec.get("parts", ())
    )
    calls = [spec for spec in specs if spec["kind"] == "call"]
    assert 0 < len(calls) < len(specs) / 10
    assert all(
        len(canisters.to_json(canisters.Invocation(c["name"], c["arguments"]))) < 400
        for c in calls
    )
    for conversation in mixed:
        built = peers.canisters_from_specs(conversation)
        canisters.validate(built)
        assert not built.pending_invocations()
        assert canisters.from_jsonl(canisters.to_jsonl(built)) == built


def test_media_corpus_is_images_as_bytes_and_urls(modules):
    corpus, peers = modules[:2]
    mixed = corpus.media_corpus(300, seed=1)
    assert corpus.message_count(mixed) == 300
    assert corpus.media_corpus(300, seed=1) == mixed
    assert corpus.media_corpus(300, seed=2) != mixed
    assert all(len(conversation) <= 40 for conversation in mixed)
    specs = [spec for conversation in mixed for spec in conversation]
    users = [spec for spec in specs if spec["kind"] == "user"]
    for spec in users:
        text, *images = spec["parts"]
        assert 5 <= len(text["text"]) <= 200
        assert 1 <= len(images) <= 4
        assert all("image" in part or "image_url" in part for part in images)
    images = [part for spec in users for part in spec["parts"] if "image" in part]
    assert any("image_url" in part for spec in users for part in spec["parts"])
    assert all(5_000 <= len(part["image"]) <= 300_000 for part in images)
    signatures = {"image/png": b"\x89PNG\r\n\x1a\n", "image/jpeg": b"\xff\xd8\xff"}
    assert {part["mime"] for part in images} == set(signatures)
    assert all(part["image"].startswith(signatures[part["mime"]]) for part in images)
    assert corpus.payload_bytes(mixed) == sum(len(part["image"]) for part in images)
    replies = [spec["text"] for spec in specs if spec["kind"] == "assistant"]
    assert all(50 <= len(text) <= 600 for text in replies)
    assert any(spec["kind"] == "call" for spec in specs)
    for conversation in mixed[:4]:
        built = peers.canisters_from_specs(conversation)
        canisters.validate(built)
        assert not built.pending_invocations()
        assert canisters.from_jsonl(canisters.to_jsonl(built)) == built


def _texts(specs):
    return [
        text
        for conversation in specs
        for spec in conversation
        for text in [spec.get("text"), *(p.get("text") for p in spec.get("parts", ()))]
        if text is not None
    ]


@pytest.mark.parametrize("script", ["latin", "cjk", "emoji"])
def test_the_language_variants_rewrite_every_text_and_nothing_else(modules, script):
    corpus, peers, _, languages, _ = modules
    base = corpus.chat_corpus(400, seed=1)
    variant = languages.rewritten(base, languages.SCRIPTS[script])
    assert corpus.chat_corpus(400, seed=1) == base  # the base is left as it was
    assert [len(c) for c in variant] == [len(c) for c in base]
    before, after = _texts(base), _texts(variant)
    assert len(after) == len(before) > 0
    assert all(text.isascii() for text in before)
    assert sum(not text.isascii() for text in after) >= 0.95 * len(after)
    for old, new in zip(base, variant, strict=True):
        for a, b in zip(old, new, strict=True):
            assert {k: v for k, v in a.items() if k not in ("text", "parts")} == {
                k: v for k, v in b.items() if k not in ("text", "parts")
            }
        built = peers.canisters_from_specs(new)
        assert canisters.from_json(canisters.to_json(built)) == built


@pytest.mark.parametrize(
    "provider", ["anthropic", "openai-chat", "openai-responses", "gemini", "ollama"]
)
def test_the_stretched_streams_carry_exactly_their_deltas(modules, provider):
    streams = modules[4]
    normalizer = canisters.providers.get(provider)

    def text_of(events):
        reply = normalizer.parse_stream(events)
        return "".join(part.text for c in reply for part in c.content)

    tail = text_of(streams.stretched(provider, 0))  # a last event's text (Gemini)
    for deltas in (1, 7, 300):
        events = streams.stretched(provider, deltas)
        text = "".join(streams.piece(n) for n in range(deltas))
        assert text_of(events) == text + tail
        made = [e for e in events if streams._text_delta(provider, e) is not None]
        assert len(made) == deltas
