"""The ``anthropic`` normalizer: recorded payloads, SDK objects, properties."""

from __future__ import annotations

import contextlib
import json
import string
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import canisters
from canisters import (
    Assistant,
    Conversation,
    Document,
    ErrorInfo,
    File,
    Image,
    Invocation,
    Reasoning,
    Result,
    Supervisor,
    Text,
    User,
    providers,
)

from .budget import examples
from .providers_support import (
    Corpus,
    adapter,
    anonymous,
    check_recorded_round_trip,
)

NAME = "anthropic"
CORPUS = Corpus(NAME)
CASES = CORPUS.cases
load = CORPUS.load
normalizer = CORPUS.normalizer


def is_error_body(body: dict[str, Any]) -> bool:
    return body.get("type") == "error"


@pytest.mark.parametrize("path", CASES, ids=[path.stem for path in CASES])
def test_recorded_round_trip(path: Path) -> None:
    check_recorded_round_trip(
        CORPUS,
        path,
        request_fields=("system", "messages"),
        is_error=is_error_body,
        incomplete="keep",
    )


@pytest.mark.parametrize(
    "path",
    [p for p in CASES if p.stem.endswith("response")],
    ids=lambda p: p.stem,
)
def test_sdk_message_objects(path: Path) -> None:
    from anthropic.types import Message
    from anthropic.types.beta import BetaMessage

    body = json.loads(path.read_text())["payload"]
    try:
        message: Any = Message.model_validate(body)
    except ValueError:  # a beta block (compaction): the SDK's beta types take it
        message = BetaMessage.model_validate(body)
    reply = normalizer().parse_response(message)
    assert anonymous(reply) == anonymous(normalizer().parse_response(body))
    assert normalizer().render_response(reply) == body


def test_thinking_signature_is_byte_exact() -> None:
    body = load("thinking-signature-tool-use-response.json")
    reply = normalizer().parse_response(body)
    reasoning = reply[0].content[0]  # type: ignore[attr-defined]
    assert reasoning.type == "reasoning"
    assert reasoning.provider == NAME
    assert reasoning.signature == body["content"][0]["signature"]
    assert reply[1].role is canisters.Role.Invocation
    assert reply[0].metadata.finish_reason == "tool_calls"  # type: ignore[union-attr]


def test_redacted_thinking() -> None:
    body = load("redacted-thinking-history-request.json")
    conversation = normalizer().parse_request(body)
    reasoning = conversation[1].content[0]  # type: ignore[attr-defined]
    assert reasoning.redacted == body["messages"][1]["content"][0]["data"]
    assert reasoning.text == ""


def test_usage_counts_cache_reads_as_input() -> None:
    reply = normalizer().parse_response(load("cache-read-response.json"))
    usage = reply[0].metadata.usage  # type: ignore[union-attr]
    assert usage == canisters.Usage(
        input_tokens=1169, output_tokens=224, cached_tokens=1165
    )


def test_is_error_and_caller() -> None:
    conversation = normalizer().parse_request(load("tool-result-is-error-request.json"))
    result = conversation[2]
    assert result.error == ErrorInfo(  # type: ignore[attr-defined]
        "TOOL_ERROR", "RuntimeError('Unexpected error, try again')"
    )
    assert result.name == "get_weather"  # type: ignore[attr-defined]
    assert conversation[1].extras[NAME]["block"] == {"caller": {"type": "direct"}}


def test_documents_and_parallel_results() -> None:
    conversation = normalizer().parse_request(
        load("documents-citations-parallel-tool-results-request.json")
    )
    roles = [c.role.value for c in conversation]
    assert roles == [
        "supervisor",
        "document",
        "document",
        "document",
        "user",
        "assistant",
        "invocation",
        "invocation",
        "result",
        "result",
        "user",
    ]
    assert conversation[3].title == "My Document"  # type: ignore[attr-defined]
    assert conversation[3].content == (Text("The grass is green. The sky is blue."),)  # type: ignore[attr-defined]
    assert conversation[1].content[0].url.endswith(".pdf")  # type: ignore[attr-defined]
    image_result = conversation[9]
    assert [p.type for p in image_result.content] == ["text", "image", "text"]  # type: ignore[attr-defined]


def test_consecutive_turns_merge() -> None:
    conversation = Conversation([User("a"), User("b"), Assistant("c"), Assistant("d")])
    body = normalizer().render_request(conversation)
    assert body == {
        "messages": [
            {
                "role": "user",
                "content": [
                    {"type": "text", "text": "a"},
                    {"type": "text", "text": "b"},
                ],
            },
            {
                "role": "assistant",
                "content": [
                    {"type": "text", "text": "c"},
                    {"type": "text", "text": "d"},
                ],
            },
        ]
    }


def test_supervisors_go_to_the_system_prompt() -> None:
    conversation = Conversation(
        [Supervisor("be nice"), User("hi"), Supervisor("be brief")]
    )
    report = providers.Report()
    body = normalizer().render_request(conversation, report=report)
    assert body["system"] == [
        {"type": "text", "text": "be nice"},
        {"type": "text", "text": "be brief"},
    ]
    assert [e.kind for e in report.events] == ["moved"]


def test_unsupported_audio_policies() -> None:
    conversation = Conversation(
        [
            User(
                (
                    Text("listen"),
                    canisters.Audio(data=b"RIFF....WAVE", mime_type="audio/wav"),
                )
            )
        ]
    )
    with pytest.raises(canisters.UnsupportedContent) as caught:
        normalizer().render_request(conversation)
    assert caught.value.provider == NAME
    assert "part 1 (audio)" in caught.value.part
    with pytest.warns(providers.FidelityWarning):
        dropped = normalizer().render_request(conversation, unsupported="drop")
    assert dropped["messages"][0]["content"] == [{"type": "text", "text": "listen"}]
    placeholder = normalizer().render_request(conversation, unsupported="placeholder")
    assert "audio omitted" in placeholder["messages"][0]["content"][1]["text"]


def test_resolver_supplies_bytes() -> None:
    conversation = Conversation([User((File(url="s3://bucket/a.pdf"),))])
    with pytest.raises(canisters.UnsupportedContent):
        normalizer().render_request(conversation)
    body = normalizer().render_request(conversation, resolver=lambda url: b"%PDF-1.4")
    source = body["messages"][0]["content"][0]["source"]
    assert source == {
        "type": "base64",
        "media_type": "application/pdf",
        "data": "JVBERi0xLjQ=",
    }


@pytest.mark.parametrize(
    ("body", "path"),
    [
        ({"messages": [{"content": "hi"}]}, "$.messages[0]"),
        (
            {"messages": [{"role": "user", "content": [{"type": 3}]}]},
            "$.messages[0].content[0].type",
        ),
        (
            {"messages": [{"role": "user", "content": [{"type": "tool_result"}]}]},
            "$.messages[0].content[0].tool_use_id",
        ),
        ({"messages": "hi"}, "$.messages"),
        ({"system": 3, "messages": []}, "$.system"),
    ],
)
def test_malformed_requests_name_the_path(body: dict[str, Any], path: str) -> None:
    with pytest.raises(providers.MalformedPayload) as caught:
        normalizer().parse_request(body)
    assert caught.value.path == path


# Properties ---------------------------------------------------------------------------

json_values = st.recursive(
    st.none() | st.booleans() | st.integers(-(10**6), 10**6) | st.text(max_size=8),
    lambda inner: (
        st.lists(inner, max_size=3)
        | st.dictionaries(st.text(max_size=5), inner, max_size=3)
    ),
    max_leaves=6,
)
# Anthropic rejects empty text blocks: they are dropped (and reported).
texts = st.builds(Text, st.text(min_size=1, max_size=20))
ids = st.text(string.ascii_letters + string.digits + "_-", min_size=1, max_size=12)
images = st.one_of(
    st.builds(
        Image,
        data=st.binary(max_size=16),
        mime_type=st.sampled_from(
            ["image/png", "image/jpeg", "image/gif", "image/webp"]
        ),
    ),
    st.builds(
        Image,
        url=st.text(string.ascii_lowercase, min_size=1, max_size=8).map(
            lambda s: f"https://example.com/{s}.jpg"
        ),
    ),
)
reasoning = st.one_of(
    st.builds(Reasoning, st.text(max_size=10), signature=ids, provider=st.just(NAME)),
    st.builds(Reasoning, redacted=ids, provider=st.just(NAME)),
)
documents = st.one_of(
    st.builds(
        Document,
        st.tuples(
            st.builds(
                File, data=st.binary(max_size=16), mime_type=st.just("application/pdf")
            )
        ),
        title=st.none() | st.text(max_size=8),
    ),
    st.builds(Document, st.tuples(texts), title=st.none() | st.text(max_size=8)),
)


@st.composite
def conversations(draw: st.DrawFn) -> Conversation:
    items: list[Any] = []
    if draw(st.booleans()):
        items.append(Supervisor(draw(st.lists(texts, min_size=1, max_size=2))))
    used: set[str] = set()
    pending_results: list[Any] = []
    for _ in range(draw(st.integers(1, 3))):
        # One user turn: results of the last calls, documents, then user content.
        items.extend(pending_results)
        if draw(st.booleans()):
            items.append(draw(documents))
        if draw(st.booleans()) or not pending_results:
            items.append(User(draw(st.lists(texts | images, min_size=1, max_size=3))))
        # One assistant turn.
        parts = draw(st.lists(reasoning, max_size=1)) + draw(
            st.lists(texts, max_size=2)
        )
        calls = []
        for _ in range(draw(st.integers(0 if parts else 1, 2))):
            call_id = draw(ids.filter(lambda value: value not in used))
            used.add(call_id)
            arguments = draw(
                st.dictionaries(st.text(max_size=5), json_values, max_size=3)
            )
            calls.append(Invocation(draw(ids), arguments, invocation_id=call_id))
        if parts:
            items.append(Assistant(parts))
        items.extend(calls)
        pending_results = []
        for call in calls:
            if draw(st.booleans()):
                error = ErrorInfo(
                    draw(st.sampled_from(["TOOL_ERROR", "TIMEOUT"])),
                    draw(st.text(max_size=10)),
                    draw(st.booleans()),
                )
                content = draw(st.lists(texts | images, max_size=2))
                pending_results.append(
                    Result(call.invocation_id, call.name, content, error=error)
                )
            else:
                content = draw(st.lists(texts | images, max_size=2))
                pending_results.append(Result(call.invocation_id, call.name, content))
    items.extend(pending_results)
    return Conversation(items)


@settings(
    max_examples=examples(150),
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
)
@given(conversations())
def test_neutral_round_trip(conversation: Conversation) -> None:
    body = normalizer().render_request(conversation)
    assert anonymous(normalizer().parse_request(body)) == anonymous(conversation)
    from anthropic.types import MessageParam, TextBlockParam

    adapter(list[MessageParam]).validate_python(body["messages"])
    if "system" in body:
        adapter(str | list[TextBlockParam]).validate_python(body["system"])


@settings(max_examples=examples(300), deadline=None)
@given(
    json_values
    | st.dictionaries(
        st.sampled_from(["messages", "system", "content", "role"]), json_values
    )
)
def test_parsers_only_raise_provider_errors(body: Any) -> None:
    for parse in (normalizer().parse_request, normalizer().parse_response):
        with contextlib.suppress(canisters.ProviderError):
            parse(body)


blocks = st.fixed_dictionaries(
    {
        "type": st.sampled_from(
            [
                "text",
                "image",
                "document",
                "tool_use",
                "tool_result",
                "thinking",
                "redacted_thinking",
            ]
        )
    },
    optional={
        "text": json_values,
        "source": json_values
        | st.fixed_dictionaries(
            {"type": st.sampled_from(["base64", "url", "text", "file", "content"])},
            optional={
                "data": json_values,
                "url": json_values,
                "media_type": json_values,
                "content": json_values,
            },
        ),
        "id": json_values,
        "name": json_values,
        "input": json_values,
        "tool_use_id": json_values,
        "content": json_values,
        "is_error": json_values,
        "thinking": json_values,
        "signature": json_values,
        "data": json_values,
    },
)


@settings(max_examples=examples(300), deadline=None)
@given(
    st.lists(
        st.fixed_dictionaries(
            {
                "role": st.sampled_from(["user", "assistant", "system"]),
                "content": json_values | st.lists(blocks, max_size=3),
            }
        ),
        max_size=4,
    )
)
def test_near_miss_requests_only_raise_provider_errors(messages: list[Any]) -> None:
    try:
        conversation = normalizer().parse_request({"messages": messages})
    except canisters.ProviderError:
        return
    normalizer().render_request(conversation, unsupported="drop", incomplete="keep")
