"""The ``openai-chat`` normalizer: recorded payloads, SDK objects, properties."""

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
    Audio,
    Conversation,
    ErrorInfo,
    File,
    Image,
    Invocation,
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

NAME = "openai-chat"
CORPUS = Corpus(NAME)
CASES = CORPUS.cases
load = CORPUS.load
normalizer = CORPUS.normalizer


def is_error_body(body: dict[str, Any]) -> bool:
    return "error" in body


@pytest.mark.parametrize("path", CASES, ids=[path.stem for path in CASES])
def test_recorded_round_trip(path: Path) -> None:
    check_recorded_round_trip(
        CORPUS, path, request_fields=("messages",), is_error=is_error_body
    )


@pytest.mark.parametrize(
    "path",
    [p for p in CASES if "response" in p.stem and "400" not in p.stem],
    ids=lambda p: p.stem,
)
def test_sdk_response_objects(path: Path) -> None:
    from openai.types.chat import ChatCompletion

    body = json.loads(path.read_text())["payload"]
    completion = ChatCompletion.model_validate(body)
    reply = normalizer().parse_response(completion)
    assert anonymous(reply) == anonymous(normalizer().parse_response(body))
    assert normalizer().render_response(reply) == body


def test_sdk_message_objects_in_a_request() -> None:
    from openai.types.chat import ChatCompletion

    body = load("parallel-tool-calls-two-tools-response.json")
    message = ChatCompletion.model_validate(body).choices[0].message
    request = {"messages": [{"role": "user", "content": "Weather?"}, message]}
    conversation = normalizer().parse_request(request)
    assert [c.role.value for c in conversation] == ["user", "invocation", "invocation"]


def test_response_metadata_and_usage() -> None:
    reply = normalizer().parse_response(
        load("parallel-tool-calls-two-tools-response.json")
    )
    head = reply[0]
    assert head.role is canisters.Role.Assistant
    assert head.metadata is not None
    assert head.metadata.model == "gpt-4o-2024-08-06"
    assert head.metadata.finish_reason == "tool_calls"
    assert (
        head.metadata.custom["response_id"] == "chatcmpl-ABfvyvfNWKcl7Ohqos4UFrmMs1v4C"
    )
    assert head.metadata.usage == canisters.Usage(149, 60)
    invocations = [c for c in reply if c.role is canisters.Role.Invocation]
    assert [i.arguments for i in invocations] == [  # type: ignore[attr-defined]
        {"city": "Edinburgh", "country": "GB", "units": "c"},
        {"ticker": "AAPL", "exchange": "NASDAQ"},
    ]


def test_refusal_is_text_that_goes_back_to_the_refusal_field() -> None:
    body = load("refusal-response.json")
    reply = normalizer().parse_response(body)
    assert reply[0].content == (  # type: ignore[attr-defined]
        Text(
            "I'm very sorry, but I can't assist with that.",
            extras={NAME: {"refusal": "field"}},
        ),
    )


def test_multiple_choices_become_assistant_turns() -> None:
    reply = normalizer().parse_response(load("multiple-choices-n3-response.json"))
    assert len(reply) == 3
    assert reply.usage() == canisters.Usage(79, 44)


def test_legacy_function_call_pairs_by_name() -> None:
    body = load("legacy-function-call-response.json")
    reply = normalizer().parse_response(body)
    invocation = reply[1]
    assert invocation.name == "get_current_weather"  # type: ignore[attr-defined]
    request = {
        "messages": [
            {
                "role": "assistant",
                "content": None,
                "function_call": body["choices"][0]["message"]["function_call"],
            },
            {"role": "function", "name": "get_current_weather", "content": "22C"},
        ]
    }
    conversation = normalizer().parse_request(request)
    assert conversation.pending_invocations() == ()
    assert normalizer().render_request(conversation) == request


def _response(message: dict[str, Any], finish: str = "stop") -> dict[str, Any]:
    """A chat completion of one choice holding ``message``."""
    return {
        "id": "chatcmpl-1",
        "object": "chat.completion",
        "created": 1700000000,
        "model": "m",
        "choices": [{"index": 0, "message": message, "finish_reason": finish}],
    }


def test_empty_tool_calls_come_back() -> None:
    """``tool_calls: []``, which OpenAI-compatible servers send with a plain
    answer and clients then send back, is kept in a request and a response."""
    request = {
        "messages": [
            {"role": "user", "content": "hi"},
            {"role": "assistant", "content": "hello", "tool_calls": []},
            {"role": "assistant", "content": None, "tool_calls": []},
        ]
    }
    conversation = normalizer().parse_request(request)
    assert [canister.role for canister in conversation] == [
        canisters.Role.User,
        canisters.Role.Assistant,
        canisters.Role.Assistant,
    ]
    assert normalizer().render_request(conversation) == request
    response = _response({"role": "assistant", "content": "hi", "tool_calls": []})
    assert normalizer().render_response(normalizer().parse_response(response)) == (
        response
    )


def test_blank_arguments_come_back() -> None:
    """``"arguments": ""``, which some OpenAI-compatible servers send for a call
    without arguments, reads as no arguments and is written back as it came,
    through a document, in a request (tool and legacy calls) and a response;
    "{}" and other providers' renders are unchanged."""
    call = {"id": "c1", "type": "function", "function": {"name": "f", "arguments": ""}}
    request = {
        "messages": [
            {"role": "user", "content": "hi"},
            {"role": "assistant", "content": None, "tool_calls": [call]},
            {"role": "tool", "tool_call_id": "c1", "content": "ok"},
            {"role": "assistant", "content": None, "function_call": call["function"]},
            {"role": "function", "name": "f", "content": "ok"},
        ]
    }
    conversation = normalizer().parse_request(request)
    invocations = [c for c in conversation if c.role is canisters.Role.Invocation]
    assert [dict(c.arguments) for c in invocations] == [{}, {}]  # type: ignore[attr-defined]
    stored = canisters.from_json(canisters.to_json(conversation))
    assert normalizer().render_request(stored) == request
    braces = json.loads(
        json.dumps(request).replace('"arguments": ""', '"arguments": "{}"')
    )
    assert normalizer().render_request(normalizer().parse_request(braces)) == braces
    anthropic = canisters.providers.get("anthropic").render_request(conversation)
    assert anthropic["messages"][1]["content"][0]["input"] == {}
    reply = {"role": "assistant", "content": None, "tool_calls": [call]}
    response = _response(reply, "tool_calls")
    assert normalizer().render_response(normalizer().parse_response(response)) == (
        response
    )


def test_request_details() -> None:
    body = load("tool-round-trip-parallel-request.json")
    conversation = normalizer().parse_request(body)
    supervisor = conversation[0]
    assert supervisor.role is canisters.Role.Supervisor
    assert supervisor.extras[NAME]["role"] == "developer"
    second = conversation[3]
    assert second.arguments == {"latitude": 47.3769, "longitude": 8.5417}  # type: ignore[attr-defined]
    assert "\n" in second.extras[NAME]["arguments"]
    assert [p.invocation for p in conversation.pairs()] == [
        conversation[2],
        conversation[3],
    ]


def test_multimodal_request_parts() -> None:
    conversation = normalizer().parse_request(
        load("multimodal-image-audio-file-request.json")
    )
    user = conversation[1]
    kinds = [part.type for part in user.content]  # type: ignore[attr-defined]
    assert kinds == ["text", "image", "audio", "file", "file"]
    image, audio, pdf, reference = user.content[1:]  # type: ignore[attr-defined]
    assert image.mime_type == "image/png"
    assert image.data.startswith(b"\x89PNG")
    assert image.extras[NAME]["inner"] == {"detail": "high"}
    assert audio.mime_type == "audio/wav"
    assert pdf.filename == "draconomicon.pdf"
    assert pdf.data.startswith(b"%PDF")
    assert reference.refs == {"openai": "file-6F2ksmvXxt4VdoqmHRw6kL"}
    assert conversation[2].extras[NAME]["message"] == {"audio": {"id": "audio_abc123"}}


def test_error_results_survive() -> None:
    conversation = Conversation(
        [
            User("go"),
            Invocation("run", {"x": 1}, invocation_id="call_1"),
            Result("call_1", "run", error=ErrorInfo("TIMEOUT", "too slow", True)),
        ]
    )
    body = normalizer().render_request(conversation)
    assert json.loads(body["messages"][2]["content"])["error"]["code"] == "TIMEOUT"
    assert anonymous(normalizer().parse_request(body)) == anonymous(conversation)


def test_incomplete_pairs() -> None:
    conversation = Conversation(
        [User("go"), Invocation("run", invocation_id="call_1"), User("never mind")]
    )
    report = providers.Report()
    body = normalizer().render_request(conversation, report=report)
    assert [m["role"] for m in body["messages"]] == ["user", "user"]
    assert report.events[0].kind == "dropped"
    with pytest.raises(canisters.ProviderError, match="incomplete"):
        normalizer().render_request(conversation, incomplete="error")
    kept = normalizer().render_request(conversation, incomplete="keep")
    assert kept["messages"][1]["tool_calls"][0]["id"] == "call_1"


def test_tool_result_media_moves_to_a_user_message() -> None:
    conversation = Conversation(
        [
            User("look"),
            Invocation("shot", invocation_id="call_1"),
            Result("call_1", "shot", (Text("here"), Image(url="https://x.test/a.png"))),
        ]
    )
    report = providers.Report()
    body = normalizer().render_request(conversation, report=report)
    assert [m["role"] for m in body["messages"]] == [
        "user",
        "assistant",
        "tool",
        "user",
    ]
    assert body["messages"][2]["content"] == "here"
    assert (
        body["messages"][3]["content"][1]["image_url"]["url"] == "https://x.test/a.png"
    )
    assert [e.kind for e in report.events] == ["moved"]


def test_media_labels() -> None:
    conversation = Conversation(
        [User((Image(url="https://x.test/a.png", hint="girl wearing a hat"),))]
    )
    plain = normalizer().render_request(conversation)
    assert len(plain["messages"][0]["content"]) == 1
    labelled = normalizer().render_request(conversation, media_labels=True)
    assert labelled["messages"][0]["content"][0] == {
        "type": "text",
        "text": "Media 1: girl wearing a hat",
    }


@pytest.mark.parametrize(
    ("body", "path"),
    [
        ({}, "$.messages"),
        ({"messages": [{"content": "hi"}]}, "$.messages[0]"),
        ({"messages": [{"role": 7, "content": "hi"}]}, "$.messages[0].role"),
        (
            {"messages": [{"role": "user", "content": [{"type": None}]}]},
            "$.messages[0].content[0].type",
        ),
        (
            {"messages": [{"role": "tool", "content": "x"}]},
            "$.messages[0].tool_call_id",
        ),
        (
            {
                "messages": [
                    {
                        "role": "assistant",
                        "tool_calls": [
                            {
                                "id": "c",
                                "type": "function",
                                "function": {"name": "f", "arguments": "{oops"},
                            }
                        ],
                    }
                ]
            },
            "$.messages[0].tool_calls[0].function.arguments",
        ),
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
texts = st.builds(Text, st.text(max_size=20))
ids = st.text(string.ascii_letters + string.digits + "_-", min_size=1, max_size=12)
user_parts = st.one_of(
    texts,
    st.builds(
        Image,
        url=st.text(string.ascii_lowercase, min_size=1, max_size=8).map(
            lambda s: f"https://example.com/{s}.png"
        ),
    ),
    st.builds(Image, data=st.binary(max_size=16), mime_type=st.just("image/png")),
    st.builds(
        Audio,
        data=st.binary(max_size=16),
        mime_type=st.sampled_from(["audio/wav", "audio/mpeg"]),
    ),
    st.builds(
        File,
        data=st.binary(max_size=16),
        mime_type=st.just("application/pdf"),
        filename=st.none() | st.just("a.pdf"),
    ),
)


@st.composite
def conversations(draw: st.DrawFn) -> Conversation:
    items: list[Any] = []
    if draw(st.booleans()):
        items.append(Supervisor(draw(st.lists(texts, min_size=1, max_size=2))))
    used: set[str] = set()
    for _ in range(draw(st.integers(1, 3))):
        items.append(User(draw(st.lists(user_parts, min_size=1, max_size=3))))
        if draw(st.booleans()):
            items.append(Assistant(draw(st.lists(texts, min_size=1, max_size=2))))
        calls = []
        for _ in range(draw(st.integers(0, 2))):
            call_id = draw(ids.filter(lambda value: value not in used))
            used.add(call_id)
            name = draw(ids)
            arguments = draw(
                st.dictionaries(st.text(max_size=5), json_values, max_size=3)
            )
            calls.append(Invocation(name, arguments, invocation_id=call_id))
        items.extend(calls)
        for call in calls:
            if draw(st.booleans()):
                error = ErrorInfo(
                    draw(st.sampled_from(["TOOL_ERROR", "TIMEOUT"])),
                    draw(st.text(max_size=10)),
                    draw(st.booleans()),
                )
                items.append(Result(call.invocation_id, call.name, error=error))
            else:
                content = draw(st.lists(texts, min_size=1, max_size=2))
                items.append(Result(call.invocation_id, call.name, content))
        if calls and draw(st.booleans()):
            items.append(Assistant(draw(st.lists(texts, min_size=1, max_size=2))))
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
    from openai.types.chat import ChatCompletionMessageParam

    adapter(list[ChatCompletionMessageParam]).validate_python(body["messages"])


@settings(max_examples=examples(300), deadline=None)
@given(
    json_values
    | st.dictionaries(st.sampled_from(["messages", "role", "content"]), json_values)
)
def test_parsers_only_raise_provider_errors(body: Any) -> None:
    for parse in (normalizer().parse_request, normalizer().parse_response):
        with contextlib.suppress(canisters.ProviderError):
            parse(body)


message_like = st.fixed_dictionaries(
    {
        "role": st.sampled_from(
            ["user", "assistant", "tool", "system", "developer", "function"]
        )
    },
    optional={
        "content": json_values
        | st.lists(
            st.fixed_dictionaries(
                {
                    "type": st.sampled_from(
                        ["text", "image_url", "file", "input_audio", "refusal"]
                    )
                },
                optional={
                    "text": json_values,
                    "image_url": json_values,
                    "file": json_values,
                },
            ),
            max_size=2,
        ),
        "tool_calls": st.lists(
            st.fixed_dictionaries(
                {
                    "id": json_values,
                    "function": json_values
                    | st.fixed_dictionaries(
                        {"name": json_values, "arguments": json_values}
                    ),
                }
            ),
            max_size=2,
        ),
        "tool_call_id": json_values,
        "name": json_values,
    },
)


@settings(max_examples=examples(300), deadline=None)
@given(st.lists(message_like, max_size=4))
def test_near_miss_requests_only_raise_provider_errors(messages: list[Any]) -> None:
    try:
        conversation = normalizer().parse_request({"messages": messages})
    except canisters.ProviderError:
        return
    normalizer().render_request(conversation, unsupported="drop", incomplete="keep")


def _call_arguments(arguments: dict[str, Any]) -> str:
    body = providers.get(NAME).render_request(
        Conversation(
            [
                Invocation("f", arguments, invocation_id="call_1"),
                Result("call_1", "f", "ok"),
            ]
        )
    )
    text: str = body["messages"][0]["tool_calls"][0]["function"]["arguments"]
    return text


@pytest.mark.parametrize(
    ("arguments", "expected"),
    [
        ({"city": "Paris", "days": [1, 2.5]}, '{"city":"Paris","days":[1,2.5]}'),
        ({"name": "Zoë ✓"}, '{"name":"Zoë ✓"}'),
        ({"optional": None}, '{"optional":null}'),
        # Beyond what orjson writes exactly: the standard library takes over.
        ({"big": 2**70}, '{"big":1180591620717411303424}'),
        ({"x": float("nan")}, '{"x":NaN}'),
        ({"nested": {1: "a"}}, '{"nested":{"1":"a"}}'),
    ],
)
def test_arguments_go_out_as_compact_json(
    arguments: dict[str, Any], expected: str
) -> None:
    assert _call_arguments(arguments) == expected


def test_arguments_in_another_form_come_back_as_received() -> None:
    spaced = '{"city": "Paris",  "days": 3}'
    body = {
        "messages": [
            {
                "role": "assistant",
                "content": None,
                "tool_calls": [
                    {
                        "id": "call_1",
                        "type": "function",
                        "function": {"name": "f", "arguments": spaced},
                    }
                ],
            },
            {"role": "tool", "tool_call_id": "call_1", "content": "ok"},
        ]
    }
    conversation = providers.get(NAME).parse_request(body)
    invocation = conversation[0]
    assert dict(invocation.arguments) == {"city": "Paris", "days": 3}  # type: ignore[attr-defined]
    again = providers.get(NAME).render_request(conversation)
    assert again["messages"][0]["tool_calls"][0]["function"]["arguments"] == spaced
    # Compact arguments are canonical: nothing needs keeping.
    compact = json.loads(json.dumps(body))
    compact["messages"][0]["tool_calls"][0]["function"]["arguments"] = (
        '{"city":"Paris","days":3}'
    )
    parsed = providers.get(NAME).parse_request(compact)
    assert "openai-chat" not in parsed[0].extras


@pytest.mark.parametrize(
    "arguments", ['{"a":null,"f":1e-7}', '{"a":null}', '{"f":1e-7}', '{"s":"null"}']
)
def test_compact_arguments_beside_null_come_back_exactly(arguments: str) -> None:
    """Arguments holding ``null`` are written back by the standard library,
    which spells some numbers otherwise than orjson (``1e-07``): a compact text
    holding both is kept as it came, not taken as canonical."""
    call = {"id": "c", "type": "function", "function": {"name": "f"}}
    call["function"]["arguments"] = arguments  # type: ignore[index]
    body = {
        "messages": [
            {"role": "assistant", "content": None, "tool_calls": [call]},
            {"role": "tool", "tool_call_id": "c", "content": "ok"},
        ]
    }
    normalizer = providers.get(NAME)
    assert normalizer.render_request(normalizer.parse_request(body)) == body
