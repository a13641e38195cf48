"""Every built-in normalizer passes the conformance suite
(:mod:`canisters.providers.testing`) on its recorded corpus: the request and
response bodies of ``data/providers/<name>``, its error bodies, and its
streams (``data/streams/<name>``, with the whole reply where one was recorded).
"""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import attrs
import pytest

from canisters.providers import bedrock_converse, gemini, ollama, openai_responses
from canisters.providers.testing import BUILT_IN, Corpus, NormalizerConformance

DATA = Path(__file__).parent / "data"

FIELDS: dict[str, tuple[tuple[str, ...], tuple[str, ...] | None]] = {
    "anthropic": (("system", "messages"), None),
    "bedrock-converse": (
        bedrock_converse.REQUEST_FIELDS,
        None,
    ),
    "gemini": (gemini.REQUEST_FIELDS, None),
    "ollama": (ollama.REQUEST_FIELDS, ollama.RESPONSE_FIELDS),
    "openai-chat": (("messages",), None),
    "openai-chat-reasoning": (("messages",), None),
    "openrouter": (("messages",), None),
    "openai-responses": (openai_responses.REQUEST_FIELDS, None),
    "open-responses": (openai_responses.REQUEST_FIELDS, None),
}
# An element of a type no provider has (a message of a made-up role, or a block
# of a made-up type), put first in the list of the conversation's elements.
TYPED = {"type": "made_up_element", "payload": {"nested": [1, "two", None]}}
UNKNOWN: dict[str, tuple[str, dict[str, Any]]] = {
    # Anthropic refuses a made-up role (its roles are fixed); a block is kept.
    "anthropic": ("messages", {"role": "user", "content": [TYPED]}),
    "bedrock-converse": (
        "messages",
        {"role": "made_up_role", "content": [{"text": "nobody"}]},
    ),
    "gemini": ("contents", {"role": "madeUpRole", "parts": [{"text": "nobody"}]}),
    "ollama": ("messages", {"role": "made_up_role", "content": "nobody"}),
    "openai-chat": ("messages", {"role": "made_up_role", "content": "nobody"}),
    "openai-chat-reasoning": (
        "messages",
        {"role": "made_up_role", "content": "nobody"},
    ),
    "openrouter": ("messages", {"role": "made_up_role", "content": "nobody"}),
    "openai-responses": ("input", TYPED),
    "open-responses": ("input", TYPED),
}


def _is_error(body: Any) -> bool:
    return isinstance(body, dict) and (
        body.get("error") is not None or body.get("type") == "error"
    )


# What a corpus has less of than every check asks (two requests, replies and
# error bodies, and a stream), and why: the checks run on what there is.
THIN: dict[str, dict[str, str]] = {
    "open-responses": {
        "responses": "one: the specification's example reply; no reply an Open "
        "Responses server sent was found recorded",
        "errors": "one: the specification's example error body",
        "streams": "none: no stream an Open Responses server sent was found "
        "recorded (its stream events are tested on events made in "
        "test_providers_open_responses)",
    },
}


def _streams(name: str) -> dict[str, tuple[Any, Any]]:
    found: dict[str, tuple[Any, Any]] = {}
    if "streams" in THIN.get(name, {}):
        assert not (DATA / "streams" / name).exists(), f"{name} has streams now"
        return found
    for path in sorted((DATA / "streams" / name).iterdir()):
        if path.suffix in (".sse", ".ndjson"):
            whole = path.with_suffix(".response.json")
            reply = json.loads(whole.read_text()) if whole.exists() else None
            found[path.stem] = (path.read_bytes(), reply)
    return found


def _unknown(name: str, requests: dict[str, Any]) -> dict[str, Any]:
    key, element = UNKNOWN[name]
    found = {}
    for case, body in requests.items():
        if isinstance(body.get(key), list) and len(found) < 3:
            changed = copy.deepcopy(body)
            changed[key].insert(0, copy.deepcopy(element))
            found[case] = changed
    return found


def corpus_of(name: str) -> Corpus:
    request_fields, response_fields = FIELDS[name]
    recorded = Corpus.from_directory(DATA / "providers" / name)
    requests = dict(recorded.requests)
    return attrs.evolve(
        recorded,
        responses={k: v for k, v in recorded.responses.items() if not _is_error(v)},
        streams=_streams(name),
        unknown=_unknown(name, requests),
        request_fields=request_fields,
        response_fields=response_fields,
        targets=tuple(target for target in BUILT_IN if target != name),
    )


@pytest.fixture(params=BUILT_IN)
def name(request: pytest.FixtureRequest) -> str:
    return request.param  # type: ignore[no-any-return]


class TestBuiltIn(NormalizerConformance):
    @pytest.fixture
    def normalizer(self, name: str) -> Any:
        from canisters import providers

        return providers.get(name)

    @pytest.fixture
    def corpus(self, name: str) -> Corpus:
        return corpus_of(name)

    def test_streams_accumulate_to_the_reply(
        self, normalizer: Any, corpus: Corpus
    ) -> None:
        if "streams" in THIN.get(normalizer.name, {}):
            pytest.skip(THIN[normalizer.name]["streams"])  # said, not vacuous
        super().test_streams_accumulate_to_the_reply(normalizer, corpus)


def test_every_corpus_feeds_every_check() -> None:
    for name in BUILT_IN:
        corpus = corpus_of(name)
        thin = THIN.get(name, {})
        sizes = {
            "requests": len(corpus.requests),
            "responses": len(corpus.responses),
            "errors": len(corpus.errors),
        }
        for kind, size in sizes.items():
            assert size >= (1 if kind in thin else 2), (name, sizes)
            assert kind not in thin or size < 2, f"{name} has {kind} enough now"
        assert len(corpus.unknown) == 3, name
        assert bool(corpus.streams) != ("streams" in thin), name
