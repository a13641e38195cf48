"""Whole requests across formats, over the recorded corpus.

For every pair of registered normalizers reading and writing whole requests
(:class:`~canisters.providers.RequestNormalizer`), a sample of the source's
recorded request bodies, rendered for the target with ``unsupported="drop"``,
gives a body the target SDK's request types take, every report event naming a
field (or, for the conversation, a canister or message); with
``unsupported="error"`` the same body and report come out (of the request's
fields, only what the target requires synthesized) or the library's own error.
A source rendered for itself is the exact round trip.
"""

from __future__ import annotations

import re
import warnings
from pathlib import Path
from typing import Any

import attrs
import pytest

from canisters import ProviderError, Request, UnsupportedContent, providers

from .requests_support import (
    SDK_ACCEPTS,
    corpus_requests,
    payload,
    whole_request_providers,
)

WHOLE = whole_request_providers()
PAIRS = [(source, target) for source in WHOLE for target in WHOLE]
SAMPLE = 8  # bodies per pair, spread over the corpus: the full product is slow
FIELDS = {field.name for field in attrs.fields(Request)}
CONVERSATION = re.compile(r"(canister|message) \d+")


def sample(paths: list[Path]) -> list[Path]:
    if len(paths) <= SAMPLE:
        return paths
    step = len(paths) / SAMPLE
    return [paths[int(index * step)] for index in range(SAMPLE)]


def render(request: Request, target: str, unsupported: str) -> tuple[Any, list[Any]]:
    report = providers.Report()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", providers.FidelityWarning)
        body = providers.get(target).render_full_request(
            request, unsupported=unsupported, report=report
        )
    return body, list(report.events)


def names_a_field(where: str) -> bool:
    """A report event names a request field (``generation.top_k``,
    ``tools[1].parameters``) or, for the conversation, a canister or message."""
    return field_of(where) in FIELDS or CONVERSATION.match(where) is not None


def field_of(where: str) -> str:
    return re.split(r"[.\[]", where, maxsplit=1)[0]


def test_the_pairs_cover_every_whole_request_normalizer() -> None:
    assert "openai-chat" in WHOLE
    assert {source for source, _ in PAIRS} == set(WHOLE)
    assert all(name in SDK_ACCEPTS for name in WHOLE), "add the SDK check"
    for name in WHOLE:
        assert corpus_requests(name), name


@pytest.mark.parametrize(
    ("source", "target"), PAIRS, ids=[f"{s}->{t}" for s, t in PAIRS]
)
def test_corpus_requests_render_for_every_format(source: str, target: str) -> None:
    accepts = SDK_ACCEPTS[target]
    for path in sample(corpus_requests(source)):
        body = payload(path)
        request = providers.get(source).parse_full_request(body)
        lenient, events = render(request, target, "drop")
        for event in events:
            assert names_a_field(event.where), (path.name, event)
        if source == target:  # the round trip (the SDK checks are the format's own)
            assert lenient == body and not events, path.name
            continue
        try:  # a body may leave the model to the URL or the client
            accepts({"model": "m", **lenient})
        except Exception as error:  # the SDK's own error, with the case named
            raise AssertionError(
                f"{path.name}: {target} SDK refuses: {error}"
            ) from None
        try:
            strict, refused = render(request, target, "error")
        except (UnsupportedContent, ProviderError):
            assert events, f"{path.name}: refused, yet nothing was reported"
            continue
        # Nothing refused: the same body and report; of the request's fields,
        # only what the target requires was synthesized, or sent elsewhere
        # (moved: Gemini's model goes in the URL).
        assert strict == lenient, path.name
        assert refused == events, path.name
        for event in refused:
            if field_of(event.where) in FIELDS:
                assert event.kind in ("synthesized", "moved"), (path.name, event)


@pytest.mark.parametrize("target", sorted(SDK_ACCEPTS))
def test_the_sdk_checks_refuse_an_unknown_field(target: str) -> None:
    body = {"model": "m", "max_tokens": 10, "messages": [], "contents": []}
    body = {key: value for key, value in body.items() if key in KEYS[target]}
    with pytest.raises(AssertionError, match="no_such_field"):
        SDK_ACCEPTS[target]({**body, "no_such_field": 1})


KEYS = {
    "openai-chat": {"model", "messages"},
    "openai-responses": {"model"},
    "open-responses": {"model"},
    "anthropic": {"model", "max_tokens", "messages"},
    "gemini": {"contents"},
    "ollama": {"model", "messages"},
    "bedrock-converse": {"messages"},
    "openai-chat-reasoning": {"model", "messages"},
    "openrouter": {"model", "messages"},
}
