"""The ``ollama`` normalizer: recorded payloads, images, tool pairing, properties."""

from __future__ import annotations

import base64
import json
import warnings
from pathlib import Path
from typing import Any

import attrs
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import canisters
from canisters import (
    Assistant,
    Audio,
    Conversation,
    Image,
    Invocation,
    Reasoning,
    Result,
    Supervisor,
    Text,
    User,
    providers,
)
from canisters.providers import ollama

from .budget import examples
from .providers_support import (
    Corpus,
    anonymous,
    check_corpus_size,
    check_recorded_round_trip,
)
from .test_providers_fast_parse import ollama_messages

NAME = "ollama"
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
        request_fields=ollama.REQUEST_FIELDS,
        response_fields=ollama.RESPONSE_FIELDS,
    )


@pytest.mark.parametrize(
    "path", [p for p in CASES if p.stem.endswith("response")], ids=lambda p: p.stem
)
def test_sdk_response_objects(path: Path) -> None:
    from ollama import ChatResponse

    body = json.loads(path.read_text())["payload"]
    reply = normalizer().parse_response(ChatResponse.model_validate(body))
    assert anonymous(reply) == anonymous(normalizer().parse_response(body))


def test_sdk_message_objects_in_a_request() -> None:
    from ollama import Message

    call = Message.ToolCall(
        function=Message.ToolCall.Function(name="f", arguments={"a": 1})
    )
    request = {
        "messages": [
            Message(role="user", content="hi"),
            Message(role="assistant", content="", tool_calls=[call]),
            Message(role="tool", content="1", tool_name="f"),
        ]
    }
    conversation = normalizer().parse_request(request)
    assert [c.role.value for c in conversation] == ["user", "invocation", "result"]


def test_results_pair_by_tool_name_and_order() -> None:
    body = load("parallel-tool-calls-multiple-results-request.json")
    conversation = normalizer().parse_request(body)
    calls = [c for c in conversation if isinstance(c, Invocation)]
    results = [c for c in conversation if isinstance(c, Result)]
    assert len({c.invocation_id for c in calls}) == len(calls)
    for result in results:
        call = next(c for c in calls if c.invocation_id == result.invocation_id)
        assert call.name == result.name
    again = normalizer().parse_request(body)
    assert [c.invocation_id for c in again if isinstance(c, Invocation)] == [
        c.invocation_id for c in calls
    ]
    anthropic = providers.get("anthropic").render_request(conversation)
    assert "tool_result" in json.dumps(anthropic)


def test_images_are_base64_only() -> None:
    body = normalizer().render_request(
        Conversation([User([Text("what?"), Image(data=PNG)])])
    )
    assert body == {
        "messages": [
            {
                "role": "user",
                "content": "what?",
                "images": [base64.b64encode(PNG).decode()],
            }
        ]
    }
    remote = Conversation(
        [User([Text("what?"), Image(url="https://example.com/a.png")])]
    )
    with pytest.raises(canisters.UnsupportedContent) as caught:
        normalizer().render_request(remote)
    assert caught.value.provider == NAME and "image" in caught.value.part
    with pytest.warns(providers.FidelityWarning):
        dropped = normalizer().render_request(remote, unsupported="drop")
    assert dropped["messages"][0] == {"role": "user", "content": "what?"}
    resolved = normalizer().render_request(remote, resolver=lambda url: PNG)
    assert resolved["messages"][0]["images"] == [base64.b64encode(PNG).decode()]
    with pytest.raises(canisters.UnsupportedContent):
        normalizer().render_request(Conversation([User([Audio(data=b"RIFF")])]))


def test_thinking_is_reasoning_without_signature() -> None:
    body = {
        "messages": [
            {"role": "user", "content": "q"},
            {"role": "assistant", "content": "a", "thinking": "hmm"},
        ]
    }
    conversation = normalizer().parse_request(body)
    assert conversation[1].content == (Reasoning("hmm", provider=NAME), Text("a"))  # type: ignore[attr-defined]
    assert normalizer().render_request(conversation) == body
    signed = Conversation(
        [User("q"), Assistant([Reasoning("x", "sig", provider="anthropic"), Text("a")])]
    )
    assert "thinking" not in normalizer().render_request(signed)["messages"][1]


def test_response_metadata_and_durations() -> None:
    reply = normalizer().parse_response(
        load("tool-call-object-arguments-response.json")
    )
    metadata = reply[0].metadata
    assert metadata is not None
    assert metadata.finish_reason == "tool_calls"
    assert metadata.usage == canisters.Usage(169, 18)
    assert metadata.latency_ms == pytest.approx(3244.883583)
    assert metadata.model == "llama3.2"
    assert isinstance(reply[0], Invocation)
    assert reply[0].arguments == {"city": "Tokyo"}


def test_supervisor_document_and_errors() -> None:
    conversation = Conversation(
        [
            Supervisor("be brief"),
            canisters.Document("notes", title="n"),
            User("q"),
            Invocation("f", invocation_id="1"),
            Result("1", "f", error=canisters.ErrorInfo("TOOL_ERROR", "boom")),
        ]
    )
    body = normalizer().render_request(conversation)
    roles = [m["role"] for m in body["messages"]]
    assert roles == ["system", "user", "user", "assistant", "tool"]
    again = normalizer().parse_request(body)
    assert again[-1].error == canisters.ErrorInfo("TOOL_ERROR", "boom")  # type: ignore[attr-defined]


texts = st.text(min_size=1, max_size=20)
names = st.from_regex(r"[a-z][a-z0-9_]{0,10}", fullmatch=True)
json_values = st.recursive(
    st.none() | st.booleans() | st.integers(-1000, 1000) | st.text(max_size=10),
    lambda inner: (
        st.lists(inner, max_size=3)
        | st.dictionaries(st.text(max_size=5), inner, max_size=3)
    ),
    max_leaves=8,
)


@st.composite
def conversations(draw: st.DrawFn) -> Conversation:
    items: list[Any] = []
    if draw(st.booleans()):
        items.append(Supervisor(draw(texts)))
    for _ in range(draw(st.integers(1, 3))):
        parts: list[Any] = [Text(draw(texts))]
        parts += [
            Image(data=draw(st.binary(min_size=1, max_size=8)))
            for _ in range(draw(st.integers(0, 2)))
        ]
        items.append(User(parts))
        if draw(st.booleans()):
            items.append(Assistant([Text(draw(texts))]))
        calls = [
            Invocation(
                draw(names),
                draw(st.dictionaries(st.text(max_size=5), json_values, max_size=3)),
                invocation_id=canisters.providers._common.synthesize_id(
                    "ollama_call_", len(items), 0, "x"
                ),
            )
            for _ in range(draw(st.integers(0, 1)))
        ]
        items.extend(calls)
        for call in calls:
            items.append(Result(call.invocation_id, call.name, [Text(draw(texts))]))
    return Conversation(items)


@settings(
    max_examples=examples(100),
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
)
@given(conversations())
def test_neutral_round_trip(conversation: Conversation) -> None:
    body = normalizer().render_request(conversation)
    again = normalizer().parse_request(body)
    # Ollama has no call ids on the wire: compare with the ids set aside.
    assert [
        attrs.evolve(c, invocation_id="i", extras={})
        if hasattr(c, "invocation_id")
        else c  # type: ignore[misc]
        for c in anonymous(again)
    ] == [
        attrs.evolve(c, invocation_id="i") if hasattr(c, "invocation_id") else c  # type: ignore[misc]
        for c in anonymous(conversation)
    ]
    validate(body["messages"])


def validate(messages: list[dict[str, Any]]) -> None:
    """Validate against the SDK's ``Message`` as ``ollama.Client.chat`` does:
    base64 strings in ``images`` are wrapped in ``ollama.Image`` first."""
    from ollama import Image as OllamaImage
    from ollama import Message

    for message in messages:
        images = message.get("images")
        if images:
            message = {**message, "images": [OllamaImage(value=i) for i in images]}
        Message.model_validate(message)


@settings(max_examples=examples(300))
@given(
    json_values
    | st.dictionaries(
        st.sampled_from(["messages", "message", "done_reason"]),
        json_values
        | st.lists(
            st.dictionaries(
                st.sampled_from(
                    ["role", "content", "images", "tool_calls", "tool_name", "thinking"]
                ),
                json_values | st.sampled_from(["user", "assistant", "tool", "system"]),
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


def test_reply_with_several_messages_keeps_one_and_reports_the_rest() -> None:
    reply = Conversation(
        [canisters.Assistant("first choice"), canisters.Assistant("second choice")]
    )
    with pytest.raises(canisters.UnsupportedContent, match="reply message 1"):
        normalizer().render_response(reply)
    report = providers.Report()
    with pytest.warns(providers.FidelityWarning):
        body = normalizer().render_response(reply, report=report, unsupported="drop")
    assert body["message"] == {"role": "assistant", "content": "first choice"}
    assert [(event.kind, event.where) for event in report.events] == [
        ("dropped", "reply message 1")
    ]
    marked = normalizer().render_response(reply, unsupported="placeholder")
    assert marked["message"]["content"] == (
        "first choice\n\n[reply message 1 omitted: an Ollama reply holds one message]"
    )


# Every key on every role -----------------------------------------------------------

CALL = {"function": {"name": "f", "arguments": {"a": 1}}}
KEY_VALUES = {
    "images": [[base64.b64encode(PNG).decode()], [], None],
    "thinking": ["hmm", "", None],
    "tool_calls": [[CALL], [], None],
    "tool_name": ["f", "", None],
    "keep_alive": [{"any": ["json", 1]}],
}
MODELED = {
    "system": {"images"},
    "user": {"images"},
    "assistant": {"images", "thinking", "tool_calls"},
    "tool": {"images", "tool_name"},
}
KEY_CASES = [
    (role, key, value)
    for role in MODELED
    for key, values in KEY_VALUES.items()
    for value in values
]


@pytest.mark.parametrize("content", [True, False], ids=["content", "no-content"])
@pytest.mark.parametrize(("role", "key", "value"), KEY_CASES)
def test_every_key_on_every_role_round_trips(
    role: str, key: str, value: Any, content: bool
) -> None:
    """Each message key, on each role, comes back exactly, read the fast way or
    the general way; a key the role does not model is kept as it was sent."""
    message: dict[str, Any] = {"role": role}
    if content:
        message["content"] = "x"
    message[key] = value
    body = {"messages": [{"role": "user", "content": "q"}, message]}
    general = ollama.messages.parse_request(body, fast=False)
    for conversation in (normalizer().parse_request(body), general):
        rendered = normalizer().render_request(conversation, incomplete="keep")
        assert rendered == body
        kept = conversation[-1].extras.get(NAME, {}).get("message", {})
        if key in MODELED[role]:
            assert key not in kept
        else:
            assert kept == {key: value}
    validate(body["messages"])  # the SDK's Message takes the body...
    validate(rendered["messages"])  # ...and what it renders to


def test_keys_a_role_does_not_model_are_kept_opaque() -> None:
    """``thinking`` on a user message is not reasoning, ``tool_calls`` on a
    system message are not invocations, ``tool_name`` on an assistant message
    names nothing: each stays on its message, as sent, and a value the role
    would refuse (a number) is kept too."""
    body = {
        "messages": [
            {"role": "system", "content": "s", "tool_calls": [CALL]},
            {"role": "user", "content": "u", "thinking": 3, "tool_name": "f"},
            {"role": "assistant", "content": "a", "tool_name": None},
            {"role": "tool", "content": "r", "tool_name": "f", "thinking": "t"},
        ]
    }
    conversation = normalizer().parse_request(body)
    assert [type(c) for c in conversation] == [Supervisor, User, Assistant, Result]
    assert [c.content for c in conversation] == [  # type: ignore[attr-defined]
        (Text("s"),),
        (Text("u"),),
        (Text("a"),),
        (Text("r"),),
    ]
    assert [c.extras[NAME]["message"] for c in conversation] == [
        {"tool_calls": [CALL]},
        {"thinking": 3, "tool_name": "f"},
        {"tool_name": None},
        {"thinking": "t"},
    ]
    assert normalizer().render_request(conversation, incomplete="keep") == body
    # Other providers get the modeled content only; the kept keys are
    # reported where they are, and refused under the default policy.
    report = providers.Report()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", providers.FidelityWarning)
        openai = providers.get("openai-chat").render_request(
            conversation, unsupported="drop", report=report
        )
    assert "tool_calls" not in openai["messages"][0]
    assert "thinking" not in json.dumps(openai)
    assert {
        "canister 0 (supervisor).tool_calls",
        "canister 1 (user).thinking",
        "canister 1 (user).tool_name",
        "canister 3 (result).thinking",
    } <= {event.where for event in report.events}
    with pytest.raises(canisters.UnsupportedContent, match="tool_calls"):
        providers.get("openai-chat").render_request(conversation)


def test_images_on_every_role_are_images() -> None:
    """``images`` are modeled on every role: image parts after the text."""
    image = base64.b64encode(PNG).decode()
    body = {
        "messages": [
            {"role": role, "content": "x", "images": [image]}
            for role in ("system", "user", "assistant")
        ]
        + [{"role": "tool", "content": "x", "images": [image], "tool_name": "f"}]
    }
    conversation = normalizer().parse_request(body)
    for canister in conversation:
        assert canister.content == (Text("x"), Image(data=PNG))  # type: ignore[attr-defined]
        assert not canister.extras
    assert normalizer().render_request(conversation, incomplete="keep") == body


def test_null_and_empty_values_are_told_apart() -> None:
    """``tool_name: null`` is not a missing ``tool_name``, a call's ``id: null``
    not a missing id, and empty ``images`` / ``tool_calls`` not missing ones."""
    body = {
        "messages": [
            {"role": "assistant", "content": "", "tool_calls": [{"id": None, **CALL}]},
            {"role": "tool", "content": "1", "tool_name": None},
            {"role": "tool", "content": "2"},
            {"role": "user", "content": "u", "images": []},
            {"role": "assistant", "content": "a", "tool_calls": []},
        ]
    }
    conversation = normalizer().parse_request(body)
    call, named, nameless = conversation[0], conversation[1], conversation[2]
    assert isinstance(call, Invocation) and isinstance(named, Result)
    assert named.invocation_id == call.invocation_id and named.name == "f"
    assert named.extras[NAME] == {"tool_name": "null"}
    assert nameless.extras[NAME] == {"tool_name": None}
    assert conversation[3].extras[NAME] == {"images": []}
    assert conversation[4].extras[NAME] == {"tool_calls": []}
    assert normalizer().render_request(conversation, incomplete="keep") == body


def test_only_error_text_it_writes_is_an_error() -> None:
    """A tool message holding an error object spaced otherwise than rendering
    writes it stays text, so that it comes back as sent."""
    written = '{"error": {"code": "E", "message": "m"}}'
    spaced = '{"error":{"code":"E","message":"m"}}'
    body = {
        "messages": [
            {"role": "tool", "content": written, "tool_name": "f"},
            {"role": "tool", "content": spaced, "tool_name": "f"},
        ]
    }
    for fast in (True, False):
        conversation = ollama.messages.parse_request(body, fast=fast)
        first, second = conversation
        assert isinstance(first, Result) and isinstance(second, Result)
        assert first.error is not None and first.error.code == "E"
        assert second.error is None and second.content == (Text(spaced),)
        assert normalizer().render_request(conversation, incomplete="keep") == body


@pytest.mark.parametrize(
    ("message", "where"),
    [
        ({"role": "system", "images": [3]}, r"messages\[0\]\.images\[0\]"),
        ({"role": "tool", "images": "x"}, r"messages\[0\]\.images"),
        ({"role": "assistant", "thinking": 3}, r"messages\[0\]\.thinking"),
        ({"role": "assistant", "tool_calls": "x"}, r"messages\[0\]\.tool_calls"),
        ({"role": "tool", "tool_name": 3}, r"messages\[0\]\.tool_name"),
    ],
)
def test_malformed_modeled_values_name_their_path(
    message: dict[str, Any], where: str
) -> None:
    with pytest.raises(canisters.MalformedPayload, match=where):
        normalizer().parse_request({"messages": [message]})


@settings(
    max_examples=examples(150),
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
)
@given(messages=st.lists(ollama_messages(), max_size=6))
def test_request_bodies_round_trip_exactly(messages: list[Any]) -> None:
    """Any request body that parses renders back to itself: nothing is lost."""
    body = {"messages": messages}
    try:
        conversation = normalizer().parse_request(body)
    except canisters.ProviderError:
        return
    assert normalizer().render_request(conversation, incomplete="keep") == body
