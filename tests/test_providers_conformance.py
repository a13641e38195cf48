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


def _streams(name: str) -> dict[str, tuple[Any, Any]]:
    found = {}
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


def test_every_corpus_feeds_every_check() -> None:
    for name in BUILT_IN:
        corpus = corpus_of(name)
        sizes = [len(corpus.requests), len(corpus.responses), len(corpus.errors)]
        assert min(sizes) >= 2 and len(corpus.unknown) == 3, (name, sizes)
        assert corpus.streams, name
