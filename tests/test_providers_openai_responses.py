"""The ``openai-responses`` normalizer: recorded payloads, items, reasoning, properties."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import canisters
from canisters import (
    Assistant,
    Audio,
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
from canisters.providers import openai_responses

from .budget import examples
from .providers_support import (
    Corpus,
    adapter,
    anonymous,
    check_corpus_size,
    check_recorded_round_trip,
)

NAME = "openai-responses"
CORPUS = Corpus(NAME)
CASES = CORPUS.cases
load = CORPUS.load
normalizer = CORPUS.normalizer


def validate_input(body: dict[str, Any]) -> None:
    from openai.types.responses import ResponseInputParam

    adapter(ResponseInputParam).validate_python(body["input"])


def test_corpus_size() -> None:
    check_corpus_size(CASES)


@pytest.mark.parametrize("path", CASES, ids=[path.stem for path in CASES])
def test_recorded_round_trip(path: Path) -> None:
    check_recorded_round_trip(
        CORPUS,
        path,
        request_fields=openai_responses.REQUEST_FIELDS,
        response_fields=None,
        check_rendered=validate_input,
    )


@pytest.mark.parametrize(
    "path", [p for p in CASES if p.stem.endswith("response")], ids=lambda p: p.stem
)
def test_sdk_response_objects(path: Path) -> None:
    from openai.types.responses import Response

    body = json.loads(path.read_text())["payload"]
    # As the SDK client does: lenient construction (older bodies lack new fields).
    reply = normalizer().parse_response(Response.construct(**body))
    expected = normalizer().parse_response(body)
    assert [c.role for c in reply] == [c.role for c in expected]
    assert reply[0].metadata == expected[0].metadata


def test_encrypted_reasoning_round_trips_byte_exact() -> None:
    body = load("reasoning-encrypted-then-call-response.json")
    encrypted = body["output"][0]["encrypted_content"]
    reply = normalizer().parse_response(body)
    reasoning = reply[0].content[0]  # type: ignore[attr-defined]
    assert isinstance(reasoning, Reasoning)
    assert reasoning.redacted == encrypted and reasoning.provider == NAME
    assert reasoning.id == body["output"][0]["id"]
    assert reply[0].metadata.usage.reasoning_tokens == 384  # type: ignore[union-attr]
    conversation = Conversation(
        [User("q"), *reply, Result(reply[1].invocation_id, "final_result", "ok")]  # type: ignore[attr-defined]
    )
    request = normalizer().render_request(conversation)
    assert request["input"][1] == {
        "type": "reasoning",
        "id": body["output"][0]["id"],
        "summary": [],
        "encrypted_content": encrypted,
    }
    report = providers.Report()
    chat = providers.get("openai-chat").render_request(conversation, report=report)
    assert encrypted not in json.dumps(chat)
    assert any(event.kind == "dropped" for event in report.events)


def test_summaries_kept_exact() -> None:
    body = load("reasoning-summary-no-encrypted-response.json")
    reply = normalizer().parse_response(body)
    rendered = normalizer().render_response(reply)
    assert rendered["output"][0]["summary"] == body["output"][0]["summary"]


def test_message_roles_parts_and_item_reference() -> None:
    body = {
        "instructions": "be brief",
        "input": [
            {"role": "developer", "content": "no jokes"},
            {"role": "system", "content": "really"},
            {
                "type": "message",
                "role": "user",
                "content": [
                    {"type": "input_text", "text": "see"},
                    {
                        "type": "input_image",
                        "image_url": "data:image/png;base64,iVBORw0KGgo=",
                        "detail": "low",
                    },
                    {"type": "input_image", "file_id": "file-1", "detail": "auto"},
                    {
                        "type": "input_file",
                        "file_data": "data:application/pdf;base64,JVBERi0=",
                        "filename": "a.pdf",
                    },
                    {
                        "type": "input_audio",
                        "input_audio": {"data": "UklGRg==", "format": "wav"},
                    },
                ],
            },
            {"type": "item_reference", "id": "msg_123"},
            {
                "type": "message",
                "id": "msg_1",
                "status": "completed",
                "role": "assistant",
                "content": [{"type": "output_text", "text": "ok", "annotations": []}],
            },
        ],
    }
    conversation = normalizer().parse_request(body)
    kinds = [type(c) for c in conversation]
    assert kinds == [Supervisor, Supervisor, Supervisor, User, Document, Assistant]
    user = conversation[3]
    assert [type(p) for p in user.content] == [Text, Image, Image, File, Audio]  # type: ignore[attr-defined]
    assert user.content[1].data == b"\x89PNG\r\n\x1a\n"  # type: ignore[attr-defined]
    assert user.content[2].refs == {"openai": "file-1"}  # type: ignore[attr-defined]
    assert conversation[4].document_id == "msg_123"  # type: ignore[attr-defined]
    assert normalizer().render_request(conversation) == body
    # Audio other than a replayed input_audio part is refused (the API takes none).
    with pytest.raises(canisters.UnsupportedContent):
        normalizer().render_request(Conversation([User([Audio(data=b"RIFF")])]))


def test_function_calls_pair_by_call_id_and_errors_encode() -> None:
    conversation = Conversation(
        [
            User("q"),
            Invocation("f", {"a": 1}, invocation_id="call_1"),
            Invocation("g", {}, invocation_id="call_2"),
            Result("call_2", "g", "two"),
            Result("call_1", "f", error=ErrorInfo("TIMEOUT", "slow")),
        ]
    )
    body = normalizer().render_request(conversation)
    assert [item.get("type") for item in body["input"]] == [
        None,
        "function_call",
        "function_call",
        "function_call_output",
        "function_call_output",
    ]
    again = normalizer().parse_request(body)
    assert anonymous(again) == anonymous(conversation)


def test_media_policies() -> None:
    video = Conversation([User([canisters.Video(url="https://example.com/v.mp4")])])
    with pytest.raises(canisters.UnsupportedContent) as caught:
        normalizer().render_request(video)
    assert caught.value.provider == NAME and "video" in caught.value.part
    body = normalizer().render_request(video, unsupported="placeholder")
    assert body["input"][0]["content"].startswith("[video omitted")
    audio_result = Conversation(
        [
            User("q"),
            Invocation("f", invocation_id="1"),
            Result("1", "f", [Audio(data=b"RIFF")]),
        ]
    )
    with pytest.raises(canisters.UnsupportedContent):
        normalizer().render_request(audio_result)


def test_response_usage_and_finish() -> None:
    reply = normalizer().parse_response(load("plain-message-output-response.json"))
    metadata = reply[0].metadata
    assert metadata is not None
    assert metadata.usage == canisters.Usage(14, 50)
    assert metadata.finish_reason == "stop"
    assert metadata.custom["response_id"].startswith("resp_")
    rendered = normalizer().render_response(
        Conversation([Assistant("hi", metadata=metadata)])
    )
    from openai.types.responses import ResponseOutputItem

    for item in rendered["output"]:
        adapter(ResponseOutputItem).validate_python(item)


texts = st.text(max_size=20)
ids = st.from_regex(r"call_[a-zA-Z0-9]{1,10}", fullmatch=True)
json_values = st.recursive(
    st.none() | st.booleans() | st.integers(-1000, 1000) | st.text(max_size=10),
    lambda inner: (
        st.lists(inner, max_size=3)
        | st.dictionaries(st.text(max_size=5), inner, max_size=3)
    ),
    max_leaves=8,
)
user_parts = st.one_of(
    st.builds(Text, texts),
    st.builds(Image, url=st.just("https://example.com/a.png")),
    st.builds(File, url=st.just("https://example.com/a.pdf")),
)


@st.composite
def conversations(draw: st.DrawFn) -> Conversation:
    items: list[Any] = []
    if draw(st.booleans()):
        items.append(Supervisor(draw(texts)))
    used: set[str] = set()
    for _ in range(draw(st.integers(1, 3))):
        items.append(User(draw(st.lists(user_parts, min_size=1, max_size=3))))
        if draw(st.booleans()):
            items.append(Assistant(draw(texts)))
        calls = []
        for _ in range(draw(st.integers(0, 2))):
            call_id = draw(ids.filter(lambda value: value not in used))
            used.add(call_id)
            name = draw(st.from_regex(r"[a-z]{1,8}", fullmatch=True))
            arguments = draw(
                st.dictionaries(st.text(max_size=5), json_values, max_size=3)
            )
            calls.append(Invocation(name, arguments, invocation_id=call_id))
        items.extend(calls)
        for call in calls:
            items.append(Result(call.invocation_id, call.name, draw(texts)))
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
    validate_input(body)


@settings(max_examples=examples(300))
@given(
    json_values
    | st.dictionaries(
        st.sampled_from(["input", "instructions", "output", "usage"]),
        json_values
        | st.lists(
            st.dictionaries(
                st.sampled_from(
                    ["type", "role", "content", "call_id", "output", "summary", "id"]
                ),
                json_values
                | st.sampled_from(
                    ["message", "function_call", "reasoning", "item_reference", "user"]
                ),
            ),
            max_size=3,
        ),
    )
)
def test_parsers_only_raise_provider_errors(body: Any) -> None:
    for parse in (normalizer().parse_request, normalizer().parse_response):
        try:
            conversation = parse(body)
        except canisters.ProviderError:
            continue
        normalizer().render_request(
            conversation, unsupported="placeholder", incomplete="keep"
        )


def test_foreign_assistant_with_several_texts_renders_valid_input() -> None:
    conversation = Conversation(
        [
            User("q"),
            Assistant([Text("first"), Text("second")]),
            User("next"),
        ]
    )
    body = normalizer().render_request(conversation)
    validate_input(body)
    assistants = [item for item in body["input"] if item.get("role") == "assistant"]
    assert [item["content"] for item in assistants] == ["first", "second"]


def test_blank_arguments_come_back() -> None:
    """``"arguments": ""`` on a function call item reads as no arguments and is
    written back as it came."""
    normalizer = canisters.providers.get("openai-responses")
    body = {
        "input": [
            {"role": "user", "content": "hi"},
            {"type": "function_call", "call_id": "c1", "name": "f", "arguments": ""},
            {"type": "function_call_output", "call_id": "c1", "output": "ok"},
        ]
    }
    conversation = normalizer.parse_request(body)
    assert dict(conversation[1].arguments) == {}  # type: ignore[attr-defined]
    assert normalizer.render_request(conversation) == body
