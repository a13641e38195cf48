"""Citations, provider-run tools and compaction read from each format: typed,
written back exactly to their own format, settled (carried or reported, and
never as client tool calls) for every other, and shown."""

from __future__ import annotations

import json
import warnings
from pathlib import Path
from typing import Any

import pytest

import canisters as c
from canisters import html, providers
from canisters.cli import run

DATA = Path(__file__).parent / "data" / "providers"
TARGETS = ["anthropic", "openai-chat", "openai-responses", "gemini", "ollama"]
PROVIDED = (c.CitedText, c.ProviderToolCall, c.ProviderToolResult, c.Compaction)


def load(provider: str, name: str) -> dict[str, Any]:
    return json.loads((DATA / provider / name).read_text())  # type: ignore[no-any-return]


def parsed(provider: str, name: str) -> c.Conversation:
    case = load(provider, name)
    normalizer = providers.get(provider)
    if case["kind"] == "request":
        return normalizer.parse_request(case["payload"])
    return normalizer.parse_response(case["payload"])


def parts(conversation: c.Conversation) -> list[Any]:
    return [p for x in conversation for p in getattr(x, "content", ())]


# Bodies holding each kind, per format: at least three each.
BODIES = {
    ("anthropic", "citations"): [
        "docs-web-search-history-request.json",
        "docs-web-fetch-history-request.json",
        "docs-citations-response-structure-history-request.json",
        "docs-search-result-citations-history-request.json",
        "peer-langchain-server-tool-request.json",
    ],
    ("anthropic", "web_search"): [
        "docs-web-search-history-request.json",
        "docs-server-tool-errors-history-request.json",
        "peer-langchain-server-tool-request.json",
        "peer-pydantic-ai-slim-native-web-search-request.json",
    ],
    ("anthropic", "web_fetch"): [
        "docs-web-fetch-history-request.json",
        "docs-server-tool-errors-history-request.json",
        "web-fetch-tool-response.json",
        "web-fetch-tool-history-request.json",
    ],
    ("anthropic", "code_execution"): [
        "code-execution-container-response.json",
        "server-tool-history-container-request.json",
        "docs-code-execution-history-request.json",
    ],
    ("anthropic", "compaction"): [
        "compaction-block-history-request.json",
        "docs-compaction-working-history-request.json",
        "compaction-block-response.json",
        "compaction-block-end-to-end-history-request.json",
        "compaction-block-round-trip-history-request.json",
        "compaction-block-cache-usage-response.json",
    ],
    ("gemini", "citations"): [
        "google-search-grounding-response.json",
        "google-search-grounding-followup-response.json",
        "google-search-grounding-citations-response.json",
        "file-search-grounding-response.json",
        "file-search-grounding-two-chunks-response.json",
    ],
    ("gemini", "google_search"): [
        "google-search-grounding-response.json",
        "google-search-grounding-followup-response.json",
        "google-search-grounding-citations-response.json",
    ],
    ("gemini", "code_execution"): [
        "code-execution-response.json",
        "code-execution-history-request.json",
        "code-execution-three-runs-response.json",
    ],
    ("openai-responses", "citations"): [
        "web-search-call-url-citations-response.json",
        "web-search-call-raw-annotations-response.json",
        "file-search-call-results-response.json",
        "file-search-call-second-turn-response.json",
        "code-interpreter-call-image-response.json",
    ],
    ("openai-responses", "web_search"): [
        "web-search-call-url-citations-response.json",
        "web-search-calls-allowed-domains-response.json",
        "web-search-call-user-location-response.json",
        "web-search-call-raw-annotations-response.json",
    ],
    ("openai-responses", "file_search"): [
        "file-search-call-response.json",
        "file-search-call-results-response.json",
        "file-search-call-second-turn-response.json",
    ],
    ("openai-responses", "code_interpreter"): [
        "code-interpreter-call-image-response.json",
        "code-interpreter-call-history-request.json",
        "code-interpreter-call-thinking-response.json",
        "code-interpreter-call-thinking-history-request.json",
    ],
    ("openai-responses", "image_generation"): [
        "image-generation-call-jpeg-response.json",
        "image-generation-call-after-tool-response.json",
        "image-generation-call-native-output-response.json",
        "image-generation-call-prompted-output-response.json",
    ],
    ("openai-responses", "mcp"): [
        "mcp-call-response.json",
        "mcp-call-history-request.json",
        "mcp-call-connector-response.json",
    ],
    ("openai-responses", "compaction"): [
        "compaction-item-history-request.json",
        "compaction-item-stateful-history-request.json",
        "compaction-item-chain-request.json",
        "compaction-item-chain-second-request.json",
    ],
}
CASES = sorted({(p, n) for (p, _), names in BODIES.items() for n in names})


def holds(part: Any, kind: str) -> bool:
    if kind == "citations":
        return isinstance(part, c.CitedText) and bool(part.citations)
    if kind == "compaction":
        return isinstance(part, c.Compaction)
    if not isinstance(part, c.ProviderToolCall | c.ProviderToolResult):
        return False
    if kind == "mcp":
        return part.provider == "openai-responses" and (
            isinstance(part, c.ProviderToolResult) or part.server is not None
        )
    return part.name.endswith(kind) or part.name.startswith(kind)


@pytest.mark.parametrize(("provider", "kind"), sorted(BODIES))
def test_each_kind_has_three_real_bodies_read_as_typed_parts(
    provider: str, kind: str
) -> None:
    names = BODIES[(provider, kind)]
    assert len(names) >= 3
    for name in names:
        case = load(provider, name)
        assert case["source"] and case["provider"] == provider
        found = [p for p in parts(parsed(provider, name)) if holds(p, kind)]
        assert found, f"{name} holds no {kind}"
        assert all(getattr(p, "provider", provider) == provider for p in found)


@pytest.mark.parametrize(("provider", "name"), CASES)
@pytest.mark.parametrize("target", TARGETS)
def test_another_format_never_gets_a_provider_run_call_as_a_client_call(
    provider: str, name: str, target: str
) -> None:
    if target == provider:
        return
    conversation = parsed(provider, name)
    kind = load(provider, name)["kind"]
    normalizer = providers.get(target)
    render = (
        normalizer.render_request if kind == "request" else normalizer.render_response
    )
    ran = [p for p in parts(conversation) if isinstance(p, PROVIDED)]
    for policy in ("drop", "placeholder"):
        report = providers.Report()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", providers.FidelityWarning)
            body = render(
                conversation, unsupported=policy, report=report, incomplete="keep"
            )
        text = json.dumps(body)
        for part in ran:
            if isinstance(part, c.ProviderToolCall) and part.call_id:
                # Never a call the client would be asked to run.
                assert part.call_id not in text
        settled = [
            e
            for e in report.events
            if "ran by" in e.detail
            or "citations" in e.detail
            or "compaction" in e.detail
        ]
        expected = [
            p
            for p in ran
            if not (isinstance(p, c.Compaction) and p.summary)
            and not (isinstance(p, c.CitedText) and not p.citations)
        ]
        assert len(settled) >= len(expected)
    if expected:  # a compaction's summary is carried (reported), not refused
        with pytest.raises(c.UnsupportedContent):
            render(conversation, unsupported="error", incomplete="keep")


def test_a_compaction_goes_to_another_provider_as_its_summary() -> None:
    conversation = parsed("anthropic", "docs-compaction-working-history-request.json")
    report = providers.Report()
    body = providers.get("openai-chat").render_request(conversation, report=report)
    summary = (
        "Summary of the conversation: The user requested help building a web scraper..."
    )
    assert summary in json.dumps(body)
    assert [e.kind for e in report.events] == ["downgraded"]


def test_citations_go_as_a_numbered_source_list_by_the_placeholder_policy() -> None:
    conversation = parsed("anthropic", "docs-web-search-history-request.json")
    report = providers.Report()
    body = providers.get("gemini").render_request(
        conversation, unsupported="placeholder", report=report
    )
    text = json.dumps(body, ensure_ascii=False)
    assert (
        "Sources:\\n[1] Claude Shannon - Wikipedia <https://en.wikipedia.org/wiki/Claude_Shannon>"
        in text
    )
    assert "[web_search ran by anthropic" in text or "ran web_search" in text


def test_an_anthropic_cited_answer_returns_to_anthropic_exactly_after_edits_elsewhere() -> (
    None
):
    conversation = parsed("anthropic", "docs-web-search-history-request.json")
    cited = [p for p in parts(conversation) if isinstance(p, c.CitedText)]
    assert cited[0].citations[0].source == c.UrlSource(
        "https://en.wikipedia.org/wiki/Claude_Shannon", "Claude Shannon - Wikipedia"
    )
    assert cited[0].citations[0].opaque["encrypted_index"].startswith("Eo8B")
    results = [p for p in parts(conversation) if isinstance(p, c.ProviderToolResult)]
    assert results[0].hits[0].page_age == "April 30, 2025"


def test_code_execution_output_is_typed() -> None:
    conversation = parsed("anthropic", "docs-code-execution-history-request.json")
    results = [p for p in parts(conversation) if isinstance(p, c.ProviderToolResult)]
    assert results[0].exit_code == 0 and results[0].stdout.startswith("total 24")
    assert results[-1].is_error and results[-1].error == "unavailable"


def test_show_prints_sources_under_the_answer_and_results_under_calls(
    tmp_path: Path, capsys: Any
) -> None:
    conversation = parsed("anthropic", "docs-web-search-history-request.json")
    document = tmp_path / "c.json"
    document.write_text(c.to_json(conversation))
    assert run(["--no-color", "show", str(document)]) == 0
    out = capsys.readouterr().out
    call = out.index("[web_search · run by anthropic]")
    result = out.index("└ web_search gave:")
    source = out.index(
        "[1] Claude Shannon - Wikipedia <https://en.wikipedia.org/wiki/Claude_Shannon>"
    )
    assert call < result < source


@pytest.mark.parametrize("name", BODIES["gemini", "citations"])
def test_gemini_grounding_cites_each_span_of_the_answer(name: str) -> None:
    """Each support of a candidate's grounding metadata cites its chunks on the
    span of the text it names (Gemini counts UTF-8 bytes; the span is in
    characters), the chunk a web page or a retrieved passage."""
    body = load("gemini", name)["payload"]
    candidate = body["candidates"][0]
    metadata = candidate["groundingMetadata"]
    text = candidate["content"]["parts"][0]["text"]
    (cited,) = [p for p in parts(parsed("gemini", name)) if holds(p, "citations")]
    assert cited.text == text
    expected = [
        (segment.get("text"), chunk)
        for support in metadata["groundingSupports"]
        for segment in [support["segment"]]
        for chunk in support["groundingChunkIndices"]
    ]
    assert len(cited.citations) == len(expected)
    for citation, (span, chunk) in zip(cited.citations, expected, strict=True):
        assert citation.start is not None and citation.end is not None
        assert text[citation.start : citation.end] == span
        source = metadata["groundingChunks"][chunk]
        if "web" in source:
            assert citation.source == c.UrlSource(
                source["web"]["uri"], source["web"]["title"]
            )
        else:
            retrieved = source["retrievedContext"]
            assert isinstance(citation.source, c.DocumentSource)
            assert citation.cited_text == retrieved["text"]
        assert citation.provider == "gemini"
    # Google's searches: a call run by Gemini, its hits the web chunks.
    searched = [p for p in parts(parsed("gemini", name)) if holds(p, "google_search")]
    if "webSearchQueries" in metadata:
        call, result = searched
        assert call.input == {"queries": metadata["webSearchQueries"]}
        assert [hit.url for hit in result.hits] == [
            chunk["web"]["uri"] for chunk in metadata["groundingChunks"]
        ]
    else:
        assert searched == []


def test_the_page_links_sources_and_folds_a_tool_with_its_result() -> None:
    conversation = parsed("anthropic", "docs-web-search-history-request.json")
    page = str(getattr(html.render(conversation), "data", html.render(conversation)))
    folded = page.index(
        '<details class="cv-provided"><summary>web_search · run by anthropic'
        " · 1 result</summary>"
    )
    assert page.count('<details class="cv-provided">') == 1  # call and result together
    link = page.index('<a href="https://en.wikipedia.org/wiki/Claude_Shannon"', folded)
    assert page.index('<ol class="cv-sources">', link) > link
    assert "javascript:" not in page
