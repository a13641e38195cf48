"""The ``gemini`` normalizer: recorded payloads, casings, ids, signatures, properties."""

from __future__ import annotations

import base64
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
    ErrorInfo,
    File,
    Image,
    Invocation,
    Reasoning,
    Result,
    Supervisor,
    Text,
    User,
    Video,
    providers,
)
from canisters.providers import gemini

from .budget import examples
from .providers_support import (
    Corpus,
    anonymous,
    check_corpus_size,
    check_recorded_round_trip,
    fields,
)

NAME = "gemini"
CORPUS = Corpus(NAME)
CASES = CORPUS.cases
load = CORPUS.load
normalizer = CORPUS.normalizer
PNG = b"\x89PNG\r\n\x1a\n" + bytes(8)


def test_corpus_size() -> None:
    check_corpus_size(CASES)


@pytest.mark.parametrize("path", CASES, ids=[path.stem for path in CASES])
def test_recorded_round_trip(path: Path) -> None:
    check_recorded_round_trip(
        CORPUS,
        path,
        request_fields=gemini.REQUEST_FIELDS,
        response_fields=gemini.RESPONSE_FIELDS,
    )


@pytest.mark.parametrize(
    "path", [p for p in CASES if p.stem.endswith("response")], ids=lambda p: p.stem
)
def test_sdk_response_objects(path: Path) -> None:
    from google.genai import types
    from pydantic import ValidationError

    body = json.loads(path.read_text())["payload"]
    try:
        sdk = types.GenerateContentResponse.model_validate(body)
    except ValidationError as error:
        # Fields newer than the installed SDK (usageMetadata.serviceTier, ...).
        if all(e["type"] == "extra_forbidden" for e in error.errors()):
            pytest.skip(f"the installed google-genai rejects newer fields: {error}")
        raise
    from_sdk = normalizer().parse_response(sdk)
    from_json = normalizer().parse_response(body)
    assert [c.role for c in from_sdk] == [c.role for c in from_json]
    assert from_sdk[0].metadata == from_json[0].metadata


def test_sdk_content_objects_in_a_request() -> None:
    from google.genai import types

    contents = [
        types.Content(role="user", parts=[types.Part(text="hi")]),
        types.Content(
            role="model",
            parts=[
                types.Part(
                    function_call=types.FunctionCall(name="f", args={"a": 1}),
                    thought_signature=b"\xfb\xff",
                )
            ],
        ),
    ]
    conversation = normalizer().parse_request({"contents": contents})
    assert [c.role.value for c in conversation] == ["user", "invocation"]
    call = conversation[1]
    assert call.extras[NAME]["thoughtSignature"] == "-_8="  # type: ignore[attr-defined]


def test_sdk_response_objects_read_as_the_body_the_api_sent() -> None:
    """google-genai dumps bytes URL-safe; the API sends the standard alphabet."""
    from google.genai import types

    body = {
        "candidates": [
            {
                "content": {
                    "role": "model",
                    "parts": [
                        {
                            "functionCall": {"name": "f", "args": {"a": 1}},
                            "thoughtSignature": "+/8=",
                        },
                        {"inlineData": {"mimeType": "image/png", "data": "+/8="}},
                    ],
                },
                "finishReason": "STOP",
            }
        ],
    }
    sdk = types.GenerateContentResponse.model_validate(body)
    from_sdk = normalizer().parse_response(sdk)
    from_json = normalizer().parse_response(body)
    assert anonymous(from_sdk) == anonymous(from_json)
    assert from_sdk[0].extras[NAME]["thoughtSignature"] == "+/8="  # type: ignore[index]
    assert normalizer().render_response(from_sdk) == normalizer().render_response(
        from_json
    )


def test_snake_case_mixed_and_single_objects() -> None:
    body = {
        "system_instruction": {"parts": {"text": "be brief"}},
        "contents": {
            "parts": [
                {"text": "look"},
                {
                    "inline_data": {
                        "mime_type": "image/png",
                        "data": base64.b64encode(PNG).decode(),
                    }
                },
                {
                    "fileData": {
                        "file_uri": "gs://bucket/a.pdf",
                        "mimeType": "application/pdf",
                    }
                },
            ]
        },
    }
    conversation = normalizer().parse_request(body)
    system, user = conversation
    assert isinstance(system, Supervisor) and system.content == (Text("be brief"),)
    assert isinstance(user, User)
    image, pdf = user.content[1], user.content[2]
    assert (
        isinstance(image, Image)
        and image.data == PNG
        and image.mime_type == "image/png"
    )
    assert isinstance(pdf, File) and pdf.url == "gs://bucket/a.pdf"
    assert normalizer().render_request(conversation) == body


def test_legacy_function_role_and_missing_ids_pair_by_name_and_order() -> None:
    body = {
        "contents": [
            {"role": "user", "parts": [{"text": "go"}]},
            {
                "role": "model",
                "parts": [
                    {"functionCall": {"name": "f", "args": {"n": 1}}},
                    {"functionCall": {"name": "f", "args": {"n": 1}}},
                    {"functionCall": {"name": "g", "args": {}}},
                ],
            },
            {
                "role": "function",
                "parts": [
                    {"functionResponse": {"name": "g", "response": {"v": 3}}},
                    {"functionResponse": {"name": "f", "response": {"v": 1}}},
                    {"functionResponse": {"name": "f", "response": {"v": 2}}},
                ],
            },
        ]
    }
    conversation = normalizer().parse_request(body)
    calls = [c for c in conversation if isinstance(c, Invocation)]
    results = [c for c in conversation if isinstance(c, Result)]
    assert len({c.invocation_id for c in calls}) == 3
    assert [r.invocation_id for r in results] == [
        calls[2].invocation_id,
        calls[0].invocation_id,
        calls[1].invocation_id,
    ]
    # Made-up ids are stable and never rendered back to Gemini.
    again = normalizer().parse_request(body)
    assert [c.invocation_id for c in again if isinstance(c, Invocation)] == [
        c.invocation_id for c in calls
    ]
    assert normalizer().render_request(conversation) == body
    # Another provider sees complete, consistent ids.
    chat = providers.get("openai-chat").render_request(conversation)
    sent = [call["id"] for m in chat["messages"] for call in m.get("tool_calls", [])]
    answered = [m["tool_call_id"] for m in chat["messages"] if m["role"] == "tool"]
    assert sorted(sent) == sorted(answered)


def test_ids_from_elsewhere_are_kept_and_rendered() -> None:
    conversation = Conversation(
        [
            User("q"),
            Invocation("f", {"a": 1}, invocation_id="call_abc"),
            Result("call_abc", "f", "42"),
        ]
    )
    body = normalizer().render_request(conversation)
    call = body["contents"][1]["parts"][0]["functionCall"]
    response = body["contents"][2]["parts"][0]["functionResponse"]
    assert call["id"] == response["id"] == "call_abc"
    assert response["response"] == {"output": "42"}


def test_thought_signature_kept_byte_exact_in_both_alphabets() -> None:
    response = load("function-call-signature-finish-message-response.json")
    request = load("url-safe-signatures-two-calls-request.json")
    standard = response["candidates"][0]["content"]["parts"][0]["thoughtSignature"]
    url_safe = request["contents"][1]["parts"][0]["thoughtSignature"]
    assert standard != url_safe
    assert base64.b64decode(standard) == base64.urlsafe_b64decode(url_safe)
    reply = normalizer().parse_response(response)
    assert reply[0].extras[NAME]["thoughtSignature"] == standard
    rendered = normalizer().render_request(
        Conversation([User("q"), *reply]), incomplete="keep"
    )
    assert rendered["contents"][1]["parts"][0]["thoughtSignature"] == standard
    conversation = normalizer().parse_request(request)
    assert (
        normalizer().render_request(conversation)["contents"][1]["parts"][0][
            "thoughtSignature"
        ]
        == url_safe
    )


def test_thought_parts_are_reasoning_sent_only_back_to_gemini() -> None:
    body = {
        "contents": [
            {"role": "user", "parts": [{"text": "q"}]},
            {
                "role": "model",
                "parts": [
                    {
                        "text": "thinking...",
                        "thought": True,
                        "thoughtSignature": "c2ln",
                    },
                    {"text": "answer"},
                ],
            },
        ]
    }
    conversation = normalizer().parse_request(body)
    assistant = conversation[1]
    assert isinstance(assistant, Assistant)
    assert assistant.content[0] == Reasoning("thinking...", "c2ln", provider=NAME)
    assert normalizer().render_request(conversation) == body
    report = providers.Report()
    chat = providers.get("openai-chat").render_request(conversation, report=report)
    assert "thinking" not in json.dumps(chat)


def test_tool_errors_use_the_error_key() -> None:
    conversation = Conversation(
        [
            User("q"),
            Invocation("f", invocation_id="1"),
            Result("1", "f", error=ErrorInfo("TOOL_ERROR", "boom")),
            Invocation("f", invocation_id="2"),
            Result("2", "f", error=ErrorInfo("TIMEOUT", "slow", retryable=True)),
        ]
    )
    body = normalizer().render_request(conversation)
    responses = [
        part["functionResponse"]["response"]
        for turn in body["contents"]
        for part in turn["parts"]
        if "functionResponse" in part
    ]
    assert responses[0] == {"error": "boom"}
    assert responses[1]["error"]["code"] == "TIMEOUT"
    again = normalizer().parse_request(body)
    assert [r.error for r in again if isinstance(r, Result)] == [
        ErrorInfo("TOOL_ERROR", "boom"),
        ErrorInfo("TIMEOUT", "slow", retryable=True),
    ]


def test_mime_type_is_inferred_or_refused() -> None:
    def render(part: Any, **options: Any) -> Any:
        body = normalizer().render_request(Conversation([User([part])]), **options)
        return body["contents"][0]["parts"][0]

    assert render(Image(data=PNG)) == {
        "inlineData": {"mimeType": "image/png", "data": base64.b64encode(PNG).decode()}
    }
    assert render(File(url="https://example.com/a.pdf"))["fileData"]["mimeType"] == (
        "application/pdf"
    )
    with pytest.raises(canisters.UnsupportedContent) as caught:
        render(Audio(data=b"\x00\x01\x02"))
    assert caught.value.provider == NAME and "part 0 (audio)" in caught.value.part
    assert render(Video(url="https://example.com/clip"), unsupported="placeholder")[
        "text"
    ].startswith("[video omitted")


def test_content_ids_need_a_resolver() -> None:
    content_id = "sha256:" + "0" * 64
    conversation = Conversation([User([Image(content_id=content_id)])])
    with pytest.raises(canisters.UnsupportedContent):
        normalizer().render_request(conversation)
    body = normalizer().render_request(conversation, resolver=lambda _: PNG)
    assert body["contents"][0]["parts"][0]["inlineData"]["mimeType"] == "image/png"


def test_response_metadata_usage_and_finish() -> None:
    reply = normalizer().parse_response(
        load("function-call-signature-finish-message-response.json")
    )
    metadata = reply[0].metadata
    assert metadata is not None
    assert metadata.model == "gemini-2.5-pro"
    assert metadata.finish_reason == "tool_calls"
    assert metadata.custom["response_id"] == "SVd8aaP0E4etz7IPqonx0A8"
    assert metadata.usage == canisters.Usage(57, 15 + 111, reasoning_tokens=111)


def test_blocked_and_empty_responses() -> None:
    for body in (
        {"promptFeedback": {"blockReason": "SAFETY"}},
        {"candidates": []},
        {"candidates": [{"content": {}, "finishReason": "SAFETY"}]},
        {"candidates": [{"finishReason": "MAX_TOKENS"}]},
    ):
        reply = normalizer().parse_response(body)
        assert len(reply) == 1
        assert normalizer().render_response(reply) == fields(
            body, gemini.RESPONSE_FIELDS
        )


def test_supervisors_move_to_the_system_instruction() -> None:
    report = providers.Report()
    body = normalizer().render_request(
        Conversation([User("a"), Supervisor("late")]), report=report
    )
    assert body["systemInstruction"] == {"parts": [{"text": "late"}]}
    assert [event.kind for event in report.events] == ["moved"]


texts = st.text(max_size=20)
ids = st.from_regex(r"[a-z][a-z0-9_]{0,10}", fullmatch=True)
json_values = st.recursive(
    st.none() | st.booleans() | st.integers(-1000, 1000) | texts,
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(texts, inner, max_size=3)
    ),
    max_leaves=8,
)
user_parts = st.one_of(
    st.builds(Text, texts),
    st.builds(Image, data=st.binary(max_size=12), mime_type=st.just("image/png")),
    st.builds(Audio, data=st.binary(max_size=12), mime_type=st.just("audio/wav")),
    st.builds(
        File, url=st.just("gs://bucket/doc.pdf"), mime_type=st.just("application/pdf")
    ),
)


@st.composite
def conversations(draw: st.DrawFn) -> Conversation:
    items: list[Any] = []
    if draw(st.booleans()):
        items.append(
            Supervisor(draw(st.lists(st.builds(Text, texts), min_size=1, max_size=2)))
        )
    used: set[str] = set()
    for _ in range(draw(st.integers(1, 3))):
        items.append(User(draw(st.lists(user_parts, min_size=1, max_size=3))))
        calls = []
        # Consecutive user turns merge into one; an assistant turn keeps them apart.
        items.append(
            Assistant(draw(st.lists(st.builds(Text, texts), min_size=1, max_size=2)))
        )
        for _ in range(draw(st.integers(0, 2))):
            call_id = draw(ids.filter(lambda value: value not in used))
            used.add(call_id)
            arguments = draw(st.dictionaries(texts, json_values, max_size=3))
            calls.append(Invocation(draw(ids), arguments, invocation_id=call_id))
        items.extend(calls)
        for call in calls:
            if draw(st.booleans()):
                error = ErrorInfo(
                    draw(st.sampled_from(["TOOL_ERROR", "TIMEOUT"])), draw(texts)
                )
                items.append(Result(call.invocation_id, call.name, error=error))
            else:
                items.append(Result(call.invocation_id, call.name, [Text(draw(texts))]))
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
    from google.genai import types

    for turn in body["contents"]:
        types.Content.model_validate(turn)


@settings(max_examples=examples(300))
@given(
    json_values
    | st.dictionaries(
        st.sampled_from(
            ["contents", "systemInstruction", "candidates", "usageMetadata"]
        ),
        json_values
        | st.lists(
            st.dictionaries(st.sampled_from(["role", "parts", "content"]), json_values)
        ),
    )
)
def test_parsers_only_raise_provider_errors(body: Any) -> None:
    for parse in (normalizer().parse_request, normalizer().parse_response):
        try:
            parse(body)
        except canisters.ProviderError:
            pass


part_like = st.fixed_dictionaries(
    {},
    optional={
        "text": json_values,
        "thought": json_values,
        "thoughtSignature": json_values,
        "inlineData": json_values
        | st.fixed_dictionaries({"mimeType": json_values, "data": json_values}),
        "functionCall": json_values
        | st.fixed_dictionaries(
            {"name": json_values, "args": json_values, "id": json_values}
        ),
        "function_response": json_values
        | st.fixed_dictionaries({"name": json_values, "response": json_values}),
    },
)


# Rendering with unsupported="drop" tells what it drops as a FidelityWarning:
# expected here, where only the exceptions are checked.
@pytest.mark.filterwarnings("ignore::canisters.providers.FidelityWarning")
@settings(max_examples=examples(300))
@given(
    st.lists(
        st.fixed_dictionaries(
            {
                "role": st.sampled_from(["user", "model", "function", "x"]),
                "parts": st.lists(part_like, max_size=3) | part_like,
            }
        ),
        max_size=3,
    )
)
def test_near_miss_requests_only_raise_provider_errors(contents: list[Any]) -> None:
    try:
        conversation = normalizer().parse_request({"contents": contents})
    except canisters.ProviderError:
        return
    normalizer().render_request(conversation, unsupported="drop", incomplete="keep")
