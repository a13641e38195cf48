"""Gemini's citationMetadata: the sources its recitation checker attributes
passages of an answer to, read as citations on the answer's text."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

import canisters as c
from canisters import providers, serialization

from .streams_support import streams

DATA = Path(__file__).parent / "data" / "providers" / "gemini"
BODIES = {
    "sdk-test-data-vertex-citations-response.json": "citations",
    "sdk-test-data-developer-api-citations-response.json": "citationSources",
}


def _cited(conversation: c.Conversation) -> list[c.CitedText]:
    return [
        part
        for canister in conversation
        for part in getattr(canister, "content", ())
        if isinstance(part, c.CitedText)
    ]


def _expected(text: str, entries: list[dict[str, Any]]) -> list[tuple[str, str]]:
    """(uri, the cited passage) of each entry naming a page and starting in
    ``text``; Gemini's offsets count bytes of its UTF-8."""
    encoded = text.encode("utf-8")
    found = []
    for entry in entries:
        start = entry.get("startIndex", 0)
        if entry.get("uri") and start < len(encoded):
            passage = encoded[start : entry["endIndex"]].decode("utf-8", "ignore")
            found.append((entry["uri"], passage))
    return found


@pytest.mark.parametrize(("name", "key"), sorted(BODIES.items()))
def test_each_citation_naming_a_page_cites_its_passage(name: str, key: str) -> None:
    body = json.loads((DATA / name).read_text())["payload"]
    candidate = body["candidates"][0]
    text = candidate["content"]["parts"][0]["text"]
    conversation = providers.get("gemini").parse_response(body)
    (cited,) = _cited(conversation)
    assert cited.text == text
    found = [
        (citation.source.url, text[citation.start : citation.end])
        for citation in cited.citations
        if isinstance(citation.source, c.UrlSource) and citation.start is not None
    ]
    assert found == _expected(text, candidate["citationMetadata"][key])
    assert all(citation.provider == "gemini" for citation in cited.citations)
    # The same reply back, also after serialization.
    again = serialization.from_json(serialization.to_json(conversation))
    assert isinstance(again, c.Conversation)
    assert providers.get("gemini").render_response(again) == body


def test_a_non_ascii_answer_is_cited_in_characters() -> None:
    name = "sdk-test-data-developer-api-citations-response.json"
    body = json.loads((DATA / name).read_text())["payload"]
    text = body["candidates"][0]["content"]["parts"][0]["text"]
    assert len(text.encode("utf-8")) > len(text)  # "Schrödinger"
    (cited,) = _cited(providers.get("gemini").parse_response(body))
    last = cited.citations[-1]
    assert last.start is not None and last.end is not None
    assert text[last.start : last.end].startswith("certain pairs of physical")


def test_a_stream_joins_the_citations_of_each_chunk() -> None:
    """Vertex AI names in each chunk the sources of the text it brings; the
    reply cites them all."""
    (stream,) = [s for s in streams("gemini") if s.name == "vertex-citation-metadata"]
    accumulator = providers.get("gemini").accumulator()
    for event in stream.events():
        accumulator.feed(event)
    reply = accumulator.finish()
    (cited,) = _cited(reply)
    chunks = [
        entry
        for event in stream.events()
        for entry in event["candidates"][0]
        .get("citationMetadata", {})
        .get("citations", [])
    ]
    assert len(chunks) == 3
    assert [x.source.url for x in cited.citations] == [  # type: ignore[union-attr]
        entry["uri"] for entry in chunks
    ]
    assert [cited.text[x.start : x.end] for x in cited.citations] == [
        p for _, p in _expected(cited.text, chunks)
    ]


@pytest.mark.filterwarnings("ignore::canisters.providers.FidelityWarning")
def test_the_citations_go_to_another_format_carried_or_reported() -> None:
    name = "sdk-test-data-developer-api-citations-response.json"
    body = json.loads((DATA / name).read_text())["payload"]
    reply = providers.get("gemini").parse_response(body)
    report = providers.Report()
    chat = providers.get("openai-chat").render_response(
        reply, unsupported="drop", report=report
    )
    annotations = chat["choices"][0]["message"]["annotations"]
    assert [a["url_citation"]["url"] for a in annotations] == [
        "https://www.example.com/some-citation-1"
    ] * 2
    report = providers.Report()
    providers.get("anthropic").render_response(reply, unsupported="drop", report=report)
    assert any("citation" in str(event) for event in report.events)
