"""Citations, provider-run tools and compaction: the neutral types, their
checks and their records."""

from __future__ import annotations

import json
from typing import Any

import attrs
import pytest
from hypothesis import given

import canisters as c
from canisters import serialization as s

from . import strategies


def answer() -> c.Assistant:
    citation = c.Citation(
        c.DocumentSource(0, "The Report", "page", 1, 3),
        "Revenue grew 12%.",
        0,
        18,
        provider="anthropic",
        opaque={"encrypted_index": "EqQBCioIBhgC"},
    )
    return c.Assistant(
        [
            c.ProviderToolCall(
                "web_search", {"query": "revenue"}, "srvtoolu_1", "anthropic"
            ),
            c.ProviderToolResult(
                "web_search",
                "srvtoolu_1",
                "anthropic",
                hits=[
                    c.SearchHit(
                        "https://example.com/a",
                        "A",
                        "April 30, 2025",
                        opaque={"encrypted_content": "Eo8BCioIAhgB"},
                    )
                ],
            ),
            c.CitedText("Revenue grew 12%.", citations=[citation]),
            c.ProviderToolResult(
                "code_execution",
                "srvtoolu_2",
                "anthropic",
                code="print(1)",
                stdout="1\n",
                stderr="",
                exit_code=0,
                files=["file_011"],
            ),
            c.Compaction("The user asked about revenue.", "anthropic", {"x": 1}),
        ]
    )


def test_a_cited_text_is_text() -> None:
    part = answer().content[2]
    assert isinstance(part, c.Text) and part.text == "Revenue grew 12%."
    assert part.type == "cited_text"
    assert part.citations[0].source.unit == "page"  # type: ignore[attr-defined]


def test_the_parts_are_frozen() -> None:
    for part in answer().content:
        with pytest.raises(attrs.exceptions.FrozenInstanceError):
            part.id = "x"  # type: ignore[misc]


@pytest.mark.parametrize(
    ("build", "message"),
    [
        (lambda: c.Citation("https://x"), "Citation.source must be a UrlSource"),  # type: ignore[arg-type]
        (
            lambda: c.Citation(c.UrlSource("https://x"), opaque={"a": 1}),
            "must name the provider",
        ),
        (lambda: c.UrlSource(""), "UrlSource.url must be a non-empty string"),
        (lambda: c.DocumentSource(unit="line"), "unit must be one of page"),
        (
            lambda: c.DocumentSource(start=4, end=2),
            r"end \(2\) is before its start \(4\)",
        ),
        (lambda: c.DocumentSource(start=-1), "start must be a non-negative int"),
        (lambda: c.SearchResultSource(3), "source must be a string"),  # type: ignore[arg-type]
        (lambda: c.CitedText("x", citations=["y"]), r"citations\[0\] must be"),  # type: ignore[list-item]
        (lambda: c.ProviderToolCall(""), "name must be a non-empty string"),
        (lambda: c.ProviderToolResult("x", hits=[1]), r"hits\[0\] must be"),  # type: ignore[list-item]
        (lambda: c.ProviderToolResult("x", files=[1]), r"files\[0\] must be"),  # type: ignore[list-item]
        (lambda: c.ProviderToolResult("x", exit_code="0"), "exit_code must be"),  # type: ignore[arg-type]
        (lambda: c.ProviderToolResult("x", output={1, 2}), "JSON-compatible"),
        (
            lambda: c.ProviderToolResult("x", hits=[c.SearchHit(opaque={"a": 1})]),
            "opaque search hits must name the provider",
        ),
        (lambda: c.Compaction(opaque={"a": 1}), "must name the provider"),
        (lambda: c.Compaction(3), "summary must be a string"),  # type: ignore[arg-type]
    ],
)
def test_bad_values_are_refused(build: Any, message: str) -> None:
    with pytest.raises(c.ModelError, match=message):
        build()


def test_a_failed_tool_is_an_error() -> None:
    assert c.ProviderToolResult("web_fetch", error="url_not_accessible").is_error
    assert c.ProviderToolResult("web_search", status="failed").is_error
    assert not c.ProviderToolResult("web_search", status="completed").is_error


def test_records_round_trip() -> None:
    conversation = c.Conversation([c.User("How did revenue do?"), answer()])
    text = c.to_json(conversation)
    assert c.from_json(text) == conversation
    assert c.from_jsonl(c.to_jsonl(conversation)) == conversation
    record = json.loads(text)["canisters"][1]["content"]
    assert [part["type"] for part in record] == [
        "provider_tool_call",
        "provider_tool_result",
        "cited_text",
        "provider_tool_result",
        "compaction",
    ]
    assert record[2]["citations"][0] == {
        "source": {
            "kind": "document",
            "document": 0,
            "title": "The Report",
            "unit": "page",
            "start": 1,
            "end": 3,
        },
        "cited_text": "Revenue grew 12%.",
        "start": 0,
        "end": 18,
        "provider": "anthropic",
        "opaque": {"encrypted_index": "EqQBCioIBhgC"},
    }


@given(strategies.provided)
def test_every_part_reads_back_equal(part: Any) -> None:
    assert c.from_json(c.to_json(part)) == part
    assert s.structure_content(s.unstructure_content(part)) == part


@pytest.mark.parametrize(
    ("change", "path", "message"),
    [
        (
            lambda r: r[2]["citations"][0]["source"].update(kind="line"),
            "$.canisters[1].content[2].citations[0].source.kind",
            "unknown citation source kind",
        ),
        (
            lambda r: r[1]["hits"][0].update(url=3),
            "$.canisters[1].content[1].hits[0].url",
            "SearchHit.url must be a string",
        ),
        (
            lambda r: r[4].update(opaque=[1]),
            "$.canisters[1].content[4].opaque",
            "expected an object",
        ),
        (
            lambda r: r[0].pop("name"),
            "$.canisters[1].content[0].name",
            "missing field",
        ),
    ],
)
def test_bad_records_are_refused_where_they_are_bad(
    change: Any, path: str, message: str
) -> None:
    document = json.loads(c.to_json(c.Conversation([c.User("q"), answer()])))
    change(document["canisters"][1]["content"])
    with pytest.raises(c.SerializationError, match=message) as caught:
        c.from_json(json.dumps(document))
    assert caught.value.path == path
