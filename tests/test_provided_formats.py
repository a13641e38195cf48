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
from canisters.providers import openai_chat

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
        "sdk-test-data-vertex-citations-response.json",
        "sdk-test-data-developer-api-citations-response.json",
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
# OpenAI Chat's url_citation annotations (OpenAI's web-search models,
# OpenRouter's web search): the corpus holds fewer than three real bodies with
# them, so they are checked apart from BODIES (the stream is its own).
CHAT_BODIES = {
    ("openrouter", "citations"): [
        "pydantic-ai-openrouter-web-search-annotations-response.json",
    ],
    # Annotations with no url citation: an empty list, OpenRouter's file.
    ("openai-chat", "no citations"): [
        "annotations-unicode-response.json",
        "azure-content-filter-emoji-response.json",
        "tool-round-trip-parallel-request.json",
    ],
    ("openrouter", "no citations"): [
        "pydantic-ai-openrouter-file-annotation-response.json",
        "pydantic-ai-openrouter-video-url-public-api-response.json",
    ],
}
CHAT_STREAM = (
    Path(__file__).parent
    / "data"
    / "streams"
    / "openrouter"
    / "pydantic-ai-openrouter-web-search-annotations-stream.sse"
)
CHAT = ("openai-chat", "openai-chat-reasoning", "openrouter")
CASES = sorted(
    {(p, n) for (p, _), names in BODIES.items() for n in names}
    | {
        (p, n)
        for (p, kind), names in CHAT_BODIES.items()
        for n in names
        if kind == "citations"
    }
)


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


def carried(part: Any, target: str) -> bool:
    """Whether ``target`` writes ``part`` as its own: the OpenAI Chat formats
    and OpenAI Responses write a cited text whose citations are all web pages
    with a span (and a title, for Responses) as url_citation annotations."""
    return (
        (target in CHAT or target == "openai-responses")
        and isinstance(part, c.CitedText)
        and all(
            isinstance(x.source, c.UrlSource)
            and x.start is not None
            and x.end is not None
            and (target in CHAT or x.source.title is not None)
            for x in part.citations
        )
    )


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
            and not carried(p, target)
        ]
        assert len(settled) >= len(expected)
        for part in ran:
            if carried(part, target):
                assert all(x.source.url in text for x in part.citations)
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


GROUNDED = [name for name in BODIES["gemini", "citations"] if "grounding" in name]


@pytest.mark.parametrize("name", GROUNDED)
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


def chat_message(body: dict[str, Any]) -> dict[str, Any]:
    message: dict[str, Any] = body["choices"][0]["message"]
    return message


@pytest.mark.parametrize(("provider", "kind"), sorted(CHAT_BODIES))
def test_chat_annotations_read_as_citations_only_where_they_are_url_citations(
    provider: str, kind: str
) -> None:
    """Each url_citation annotation of an assistant message cites the span of
    its content it names (characters of the content), its source the page,
    its ``content`` (OpenRouter's) the quoted passage; annotations of other
    types (OpenRouter's ``file``) stay kept on the message only. Every body
    goes back exactly, also through canisters' JSON."""
    for name in CHAT_BODIES[(provider, kind)]:
        case = load(provider, name)
        assert case["source"] and case["provider"] == provider
        normalizer = providers.get(provider)
        if case["kind"] == "request":
            conversation: Any = normalizer.parse_full_request(case["payload"])
            render = normalizer.render_full_request
        else:
            conversation = normalizer.parse_response(case["payload"])
            render = normalizer.render_response
        for trip in (conversation, c.from_json(c.to_json(conversation))):
            assert render(trip) == case["payload"]
        if case["kind"] == "request":
            conversation = conversation.conversation
        found = [p for p in parts(conversation) if holds(p, "citations")]
        if kind == "no citations":
            assert found == []
            continue
        message = chat_message(case["payload"])
        (cited,) = found
        assert cited.text == message["content"]
        notes = [n for n in message["annotations"] if n["type"] == "url_citation"]
        assert len(cited.citations) == len(notes) == 5
        for citation, note in zip(cited.citations, notes, strict=True):
            spelled = note["url_citation"]
            assert citation.source == c.UrlSource(spelled["url"], spelled["title"])
            assert (citation.start, citation.end) == (
                spelled["start_index"],
                spelled["end_index"],
            )
            assert citation.cited_text == spelled["content"]
            assert citation.provider == provider and citation.opaque == note


def test_chat_annotations_of_a_stream_accumulate_to_the_reply() -> None:
    from .streams_support import wire_events

    events = wire_events(CHAT_STREAM.read_bytes(), ".sse")
    normalizer = providers.get("openrouter")
    reply = normalizer.parse_stream(events)
    (cited,) = [p for p in parts(reply) if holds(p, "citations")]
    streamed = [
        note
        for event in events
        for choice in event.get("choices", ())
        for note in choice["delta"].get("annotations", ())
    ]
    assert [x.opaque for x in cited.citations] == streamed
    assert cited.text.endswith("https://github.com/pydantic/pydantic-ai")
    body = normalizer.render_response(reply)
    assert chat_message(body)["annotations"] == streamed
    assert normalizer.render_response(normalizer.parse_response(body)) == body


@pytest.mark.parametrize(
    ("provider", "name"),
    [
        ("openai-responses", "web-search-call-url-citations-response.json"),
        ("openai-responses", "web-search-call-raw-annotations-response.json"),
        ("gemini", "google-search-grounding-citations-response.json"),
        ("gemini", "google-search-grounding-response.json"),
    ],
)
@pytest.mark.parametrize("target", CHAT)
def test_web_citations_with_a_span_go_to_chat_as_url_citations(
    provider: str, name: str, target: str
) -> None:
    """Responses' url citations and Gemini's web grounding have a span: each
    goes to a Chat format as a url_citation annotation on the same characters
    of the message's content (the Responses text has non-ASCII characters
    before its spans), and reads back as the same citation."""
    conversation = parsed(provider, name)
    sent = [p for p in parts(conversation) if holds(p, "citations")]
    assert sent and all(carried(p, target) for p in sent)
    report = providers.Report()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", providers.FidelityWarning)
        body = providers.get(target).render_response(
            conversation, unsupported="drop", report=report
        )
    assert not [e for e in report.events if "citations" in e.detail]
    messages = [
        ch["message"] for ch in body["choices"] if ch["message"].get("annotations")
    ]
    assert len(messages) == len(sent)
    for part, message in zip(sent, messages, strict=True):
        assert message["content"] == part.text
        for citation, note in zip(part.citations, message["annotations"], strict=True):
            spelled = note["url_citation"]
            assert note["type"] == "url_citation"
            assert spelled["url"] == citation.source.url
            span = message["content"][spelled["start_index"] : spelled["end_index"]]
            assert span == part.text[citation.start : citation.end]
    back = [
        p
        for p in parts(providers.get(target).parse_response(body))
        if holds(p, "citations")
    ]
    assert [[(x.source, x.start, x.end) for x in p.citations] for p in back] == [
        [(x.source, x.start, x.end) for x in p.citations] for p in sent
    ]


def test_citations_without_a_span_or_a_page_go_to_chat_as_today() -> None:
    """Anthropic's web search citations cite their block and name no span;
    a document citation names no page: both settled as elsewhere (reported,
    listed under the placeholder policy, refused under error)."""
    conversation = parsed("anthropic", "docs-web-search-history-request.json")
    normalizer = providers.get("openai-chat")
    report = providers.Report()
    body = normalizer.render_request(
        conversation, unsupported="placeholder", report=report
    )
    assert "annotations" not in json.dumps(body)
    assert "Sources:\n[1] Claude Shannon - Wikipedia" in json.dumps(
        body, ensure_ascii=False
    ).replace("\\n", "\n")
    assert any(
        "citations (web_search_result_location) have no place" in e.detail
        for e in report.events
    )
    document = c.Conversation(
        [
            c.User("q"),
            c.Assistant(
                [
                    c.CitedText(
                        "A claim.",
                        citations=[c.Citation(c.DocumentSource(0, "notes"), "a claim")],
                    )
                ]
            ),
        ]
    )
    with pytest.raises(c.UnsupportedContent, match="citations"):
        normalizer.render_request(document)


def test_chat_citations_go_to_other_formats_by_the_provided_content_rule() -> None:
    """Anthropic and Gemini have no place for a web page cited by a span:
    OpenAI Chat's citations go as the text, reported once (the annotations the
    message keeps are what the citations were read from: not reported again),
    listed under the placeholder policy, refused under error."""
    conversation = parsed(
        "openrouter", "pydantic-ai-openrouter-web-search-annotations-response.json"
    )
    for target in ("anthropic", "gemini"):
        normalizer = providers.get(target)
        report = providers.Report()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", providers.FidelityWarning)
            normalizer.render_response(conversation, unsupported="drop", report=report)
            listed = normalizer.render_response(conversation, unsupported="placeholder")
        details = [e.detail for e in report.events]
        assert f"citations (url_citation) have no place in {target}" in details
        assert not [e for e in report.events if e.where.endswith(".annotations")]
        assert "[1] AI Agent Framework, the Pydantic way <https://github.com/" in (
            json.dumps(listed)
        )
        with pytest.raises(c.UnsupportedContent):
            normalizer.render_response(conversation)


def test_openrouter_quoted_passages_are_reported_where_chat_has_no_place() -> None:
    """OpenAI's url_citation has no ``content``: OpenRouter's citations go to
    OpenAI Chat with their page and span, the quoted passages reported."""
    conversation = parsed(
        "openrouter", "pydantic-ai-openrouter-web-search-annotations-response.json"
    )
    report = providers.Report()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", providers.FidelityWarning)
        body = providers.get("openai-chat").render_response(
            conversation, unsupported="drop", report=report
        )
    notes = chat_message(body)["annotations"]
    assert [n["url_citation"]["url"] for n in notes] == [
        x.source.url for p in parts(conversation) for x in getattr(p, "citations", ())
    ]
    assert all("content" not in n["url_citation"] for n in notes)
    assert "the quoted passage of 5 url citations has no place in openai-chat" in [
        e.detail for e in report.events
    ]


def test_a_cited_text_among_other_parts_is_cited_from_the_start_of_the_content() -> (
    None
):
    """Written after other text parts, a citation's span counts from the start
    of the message's content; read back, the citation is on its own part."""
    page = c.UrlSource("https://example.com/tux", "Tux")
    cited = c.CitedText(
        "Tux is Linux\u2019s mascot.",
        citations=[c.Citation(page, start=7, end=14)],
    )
    conversation = c.Conversation(
        [c.User("Who is Tux?"), c.Assistant([c.Text("Héllo. "), cited])]
    )
    normalizer = providers.get("openai-chat")
    body = normalizer.render_request(conversation)
    message = body["messages"][1]
    (note,) = message["annotations"]
    spelled = note["url_citation"]
    joined = "".join(p["text"] for p in message["content"])
    assert joined[spelled["start_index"] : spelled["end_index"]] == "Linux\u2019s"
    assert spelled == {
        "url": "https://example.com/tux",
        "title": "Tux",
        "start_index": 14,
        "end_index": 21,
    }
    read = normalizer.parse_request(body)
    first, second = read[1].content  # type: ignore[attr-defined]
    assert type(first) is c.Text
    assert isinstance(second, c.CitedText) and second.text == cited.text
    assert [(x.source, x.start, x.end) for x in second.citations] == [(page, 7, 14)]
    assert normalizer.render_request(read) == body
    # The one-pass reader hands a message with annotations to the general one.
    general = openai_chat.messages.parse_request(body, fast=False)
    assert [type(p) for p in general[1].content] == [  # type: ignore[attr-defined]
        type(p)
        for p in read[1].content  # type: ignore[attr-defined]
    ]


def test_a_cited_text_outside_an_assistant_message_loses_its_citations_reported() -> (
    None
):
    page = c.UrlSource("https://example.com/")
    conversation = c.Conversation(
        [c.User([c.CitedText("quoted", citations=[c.Citation(page, start=0, end=6)])])]
    )
    normalizer = providers.get("openai-chat")
    with pytest.raises(c.UnsupportedContent, match="citations have no place"):
        normalizer.render_request(conversation)
    report = providers.Report()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", providers.FidelityWarning)
        body = normalizer.render_request(
            conversation, unsupported="drop", report=report
        )
    assert body["messages"] == [{"role": "user", "content": "quoted"}]
    assert [e.detail for e in report.events] == [
        "citations have no place in a user message"
    ]


def _responses_reply(annotations: list[dict[str, Any]]) -> dict[str, Any]:
    text = "Mount Columbia is the tallest."
    return {
        "id": "resp_1",
        "status": "completed",
        "model": "gpt-5",
        "output": [
            {
                "type": "message",
                "id": "msg_1",
                "role": "assistant",
                "status": "completed",
                "content": [
                    {"type": "output_text", "text": text, "annotations": annotations}
                ],
            }
        ],
    }


def test_responses_url_citations_go_to_chat_as_annotations_without_a_report() -> None:
    """The annotations a Responses text keeps are what its citations were read
    from: carried as Chat annotations, nothing to report or refuse."""
    note = {
        "type": "url_citation",
        "url": "https://en.wikipedia.org/wiki/Mount_Columbia",
        "title": "Mount Columbia",
        "start_index": 0,
        "end_index": 14,
    }
    reply = providers.get("openai-responses").parse_response(_responses_reply([note]))
    report = providers.Report()
    body = providers.get("openai-chat").render_response(
        reply, report=report, unsupported="error"
    )
    (written,) = body["choices"][0]["message"]["annotations"]
    assert written["url_citation"]["url"] == note["url"]
    assert (
        written["url_citation"]["start_index"],
        written["url_citation"]["end_index"],
    ) == (0, 14)
    assert not [e for e in report.events if "annotations" in e.where]


def test_responses_file_citations_are_reported_once_to_chat() -> None:
    note = {
        "type": "file_citation",
        "file_id": "file-1",
        "filename": "a.txt",
        "index": 5,
    }
    reply = providers.get("openai-responses").parse_response(_responses_reply([note]))
    report = providers.Report()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", providers.FidelityWarning)
        body = providers.get("openai-chat").render_response(
            reply, report=report, unsupported="drop"
        )
    assert "annotations" not in body["choices"][0]["message"]
    wheres = [e.where for e in report.events if "part 0" in e.where]
    assert wheres == [
        "canister 0 (assistant), part 0 (cited_text)",
        "canister 0 (assistant), part 0 (text).id",
    ]
    with pytest.raises(c.UnsupportedContent, match="file_citation"):
        providers.get("openai-chat").render_response(reply, unsupported="error")


def test_chat_citations_go_to_responses_as_url_citation_annotations() -> None:
    """OpenAI Responses writes another format's web pages cited by a span as
    its own ``url_citation`` annotations, on the part, the span the part's;
    a quoted passage has no place there (reported), a page with no title is
    settled by the provided-content rule."""
    from openai.types.responses import Response

    spans = [(0, 4, "Example", None), (5, 9, "Other", "a quoted passage")]
    cited = c.CitedText(
        "Pydantic AI",
        citations=[
            c.Citation(c.UrlSource(f"https://e.com/{n}", title), quoted, start, end)
            for n, (start, end, title, quoted) in enumerate(spans)
        ],
    )
    metadata = c.Metadata(model="gpt-5", custom={"response_id": "resp_1"})
    reply = c.Conversation([c.Assistant([cited], metadata=metadata)])
    report = providers.Report()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", providers.FidelityWarning)
        body = providers.get("openai-responses").render_response(
            reply, report=report, unsupported="drop"
        )
    Response.model_validate(body)
    (message,) = body["output"]
    assert message["content"][0]["annotations"] == [
        {
            "type": "url_citation",
            "url": f"https://e.com/{n}",
            "title": title,
            "start_index": start,
            "end_index": end,
        }
        for n, (start, end, title, _) in enumerate(spans)
    ]
    assert [e.detail for e in report.events] == [
        "the quoted passage of 1 url citation has no place in openai-responses"
    ]
    # and back: the same citations, read from Responses' annotations
    (turn,) = providers.get("openai-responses").parse_response(body)
    (part,) = turn.content
    assert [(x.source.url, x.start, x.end) for x in part.citations] == [
        (f"https://e.com/{n}", start, end) for n, (start, end, _, _) in enumerate(spans)
    ]
    untitled = c.CitedText(
        "Pydantic AI",
        citations=[c.Citation(c.UrlSource("https://e.com/x"), None, 0, 4)],
    )
    with pytest.raises(c.UnsupportedContent, match="citations"):
        providers.get("openai-responses").render_response(
            c.Conversation([c.Assistant([untitled])])
        )
