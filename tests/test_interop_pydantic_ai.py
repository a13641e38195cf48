"""canisters.interop.pydantic_ai against the real pydantic-ai."""

from __future__ import annotations

import json
import subprocess
import sys
import warnings
from datetime import datetime, timezone
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings

import canisters as c
from canisters.interop import pydantic_ai as interop
from canisters.providers import Report
from tests.strategies import conversations

from ._interop_support import (
    assert_no_silent_loss,
    extra_named_without,
    tool_histories,
)
from .budget import examples

messages = pytest.importorskip("pydantic_ai.messages")
pydantic_ai = pytest.importorskip("pydantic_ai")
from pydantic_ai.models.function import AgentInfo, FunctionModel  # noqa: E402
from pydantic_ai.models.test import TestModel  # noqa: E402

Adapter = messages.ModelMessagesTypeAdapter
# pydantic-ai releases before 2.55 (the last on Python 3.10) send retry feedback
# as a RetryPromptPart; later ones as a tool return with outcome "retried".
RETRIED = interop._has_retried_outcome()
T0 = datetime(2025, 1, 2, 3, 4, 5, tzinfo=timezone.utc)


def _test_model_history() -> list[messages.ModelMessage]:
    agent = pydantic_ai.Agent(
        TestModel(), system_prompt="Be brief.", instructions="Use tools."
    )

    @agent.tool_plain
    def add(a: int, b: int) -> int:
        """Add two numbers."""
        return a + b

    return agent.run_sync("What is 1 + 2?").all_messages()


def _function_model_history() -> list[messages.ModelMessage]:
    def model(
        history: list[messages.ModelMessage], info: AgentInfo
    ) -> messages.ModelResponse:
        last = history[-1].parts[-1]
        if isinstance(last, messages.ToolReturnPart):
            return messages.ModelResponse(
                parts=[
                    messages.ThinkingPart(
                        "done", signature="sig-1", provider_name="anthropic"
                    ),
                    messages.TextPart(f"weather: {last.content}"),
                ],
                model_name="fn-model",
                usage=messages.RequestUsage(input_tokens=7, output_tokens=3),
            )
        return messages.ModelResponse(
            parts=[
                messages.TextPart("Looking it up."),
                messages.ToolCallPart("weather", {"city": "Paris"}, "call-1"),
            ],
            model_name="fn-model",
        )

    agent = pydantic_ai.Agent(FunctionModel(model))

    @agent.tool_plain
    def weather(city: str) -> dict[str, object]:
        """The weather."""
        return {"city": city, "temperature": 21.5}

    prompt = [
        "Look at these:",
        messages.ImageUrl("https://example.com/a.png"),
        messages.BinaryContent(b"\x89PNG\r\n\x1a\n", media_type="image/png"),
        messages.DocumentUrl("https://example.com/report.pdf"),
        messages.AudioUrl("https://example.com/a.mp3"),
        messages.VideoUrl("https://example.com/a.mp4"),
        messages.BinaryContent(b"RIFF0000WAVE", media_type="audio/wav"),
    ]
    return agent.run_sync(prompt).all_messages()


def test_test_model_run_round_trips_exactly() -> None:
    history = _test_model_history()
    conversation = interop.to_canisters(history)
    assert interop.from_canisters(conversation) == history
    roles = [canister.role for canister in conversation]
    assert roles[:3] == [c.Role.Supervisor, c.Role.Supervisor, c.Role.User]
    assert c.Role.Invocation in roles and c.Role.Result in roles
    c.validate(conversation)
    invocation = conversation.invocations()[0]
    assert invocation.name == "add"
    assert invocation.metadata is not None and invocation.metadata.model == "test"
    result = conversation.results()[0]
    assert result.invocation_id == invocation.invocation_id


def test_function_model_run_with_media_round_trips_exactly() -> None:
    # The prompt's hand-built parts stay as built in the run's history;
    # pydantic-ai's own storage form narrows them (BinaryContent -> BinaryAudio),
    # and that form is what comes back.
    history = Adapter.validate_json(Adapter.dump_json(_function_model_history()))
    conversation = interop.to_canisters(history)
    assert interop.from_canisters(conversation) == history
    user = conversation[0]
    kinds = [type(part).__name__ for part in user.content]  # type: ignore[attr-defined]
    assert kinds == ["Text", "Image", "Image", "File", "Audio", "Video", "Audio"]
    assert user.content[2].data == b"\x89PNG\r\n\x1a\n"  # type: ignore[attr-defined]
    reasoning = [
        part
        for canister in conversation
        for part in getattr(canister, "content", ())
        if isinstance(part, c.Reasoning)
    ]
    assert reasoning == [c.Reasoning("done", "sig-1", None, "anthropic")]
    responses = [m for m in history if isinstance(m, messages.ModelResponse)]
    assert responses[-1].usage.input_tokens == 7
    assert conversation.usage().input_tokens == sum(
        m.usage.input_tokens for m in responses
    )
    assert conversation.results()[0].content[0].mime_type == "application/json"


def test_adapter_json_round_trips_exactly() -> None:
    history = Adapter.validate_python(
        [
            {
                "kind": "request",
                "parts": [
                    {
                        "part_kind": "user-prompt",
                        "content": "hi",
                        "timestamp": "2025-01-02T03:04:05Z",
                    },
                ],
            },
            {
                "kind": "response",
                "timestamp": "2025-01-02T03:04:06Z",
                "model_name": "m",
                "finish_reason": "tool_call",
                "parts": [
                    {
                        "part_kind": "tool-call",
                        "tool_name": "f",
                        "args": '{"a": 1}',
                        "tool_call_id": "t1",
                    },
                ],
            },
            {
                "kind": "request",
                "parts": [
                    {
                        "part_kind": "tool-return",
                        "tool_name": "f",
                        "tool_call_id": "t1",
                        "content": "bad argument",
                        "timestamp": "2025-01-02T03:04:07Z",
                    }
                    | (
                        {"part_kind": "tool-return", "outcome": "retried"}
                        if RETRIED
                        else {"part_kind": "retry-prompt"}
                    )
                ],
            },
        ]
    )
    data = Adapter.dump_json(history)
    conversation = interop.from_json(data)
    assert interop.from_canisters(conversation) == history
    assert Adapter.validate_json(interop.to_json(conversation)) == history
    invocation = conversation.invocations()[0]
    assert invocation.arguments == {"a": 1}
    assert invocation.metadata is not None
    assert invocation.metadata.finish_reason == "tool_calls"
    result = conversation.results()[0]
    assert result.error == c.ErrorInfo("VALIDATION_ERROR", "bad argument", True)
    assert conversation[0].timestamp == datetime(
        2025, 1, 2, 3, 4, 5, tzinfo=timezone.utc
    )


def test_retry_prompt_part_becomes_an_error_result() -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        part = messages.RetryPromptPart("try again", tool_name="f", tool_call_id="t1")
    history = [
        messages.ModelResponse(parts=[messages.ToolCallPart("f", {}, "t1")]),
        messages.ModelRequest(parts=[part]),
    ]
    conversation = interop.to_canisters(history)
    result = conversation.results()[0]
    assert result.is_error and result.error is not None
    assert result.error.retryable and result.error.message == "try again"
    back = interop.from_canisters(conversation)
    returned = back[1].parts[0]
    assert returned.content == "try again"
    if RETRIED:
        assert isinstance(returned, messages.ToolReturnPart)
        assert returned.outcome == "retried"
    else:
        assert isinstance(returned, messages.RetryPromptPart)
    assert interop.to_canisters(back).results()[0].error == result.error


def test_neutral_conversation_to_pydantic_ai() -> None:
    conversation = c.Conversation(
        [
            c.Supervisor("Be kind.", timestamp=T0),
            c.User(["Hi", c.Image(url="https://example.com/x.png")], timestamp=T0),
            c.Assistant(
                [c.Reasoning("think", "sig", provider="anthropic"), c.Text("Hello")],
                timestamp=T0,
                metadata=c.Metadata(model="m", usage=c.Usage(3, 4)),
            ),
            c.Invocation("f", {"x": 1}, invocation_id="i1", timestamp=T0),
            c.Result("i1", "f", "42", timestamp=T0),
            c.Result("i1", "f", (), c.ErrorInfo("TOOL_ERROR", "boom"), timestamp=T0),
        ]
    )
    history = interop.from_canisters(conversation)
    assert [m.kind for m in history] == ["request", "response", "request"]
    request, response, results = history
    assert isinstance(request.parts[0], messages.SystemPromptPart)
    assert request.parts[1].content[1] == messages.ImageUrl("https://example.com/x.png")
    assert response.model_name == "m" and response.usage.input_tokens == 3
    assert isinstance(response.parts[0], messages.ThinkingPart)
    assert response.parts[0].signature == "sig"
    assert response.parts[2].args == {"x": 1}
    assert results.parts[0].content == "42"
    assert results.parts[1].outcome == "failed" and results.parts[1].content == "boom"
    back = interop.to_canisters(history)
    assert [x.role for x in back] == [x.role for x in conversation]


def test_losses_are_reported() -> None:
    conversation = c.Conversation(
        [
            c.Document("ref", title="Manual", timestamp=T0),
            c.User([c.Image(content_id="sha256:" + "0" * 64)], step=3, timestamp=T0),
        ]
    )
    report = Report()
    interop.from_canisters(conversation, report=report)
    details = [(e.kind, e.where, e.detail) for e in report.events]
    assert details[0][:2] == ("downgraded", "canister 0 (document)")
    assert any(
        where.startswith("canister 1 (user)") and "step" in detail
        for _, where, detail in details
    )
    assert any(where == "canister 1 (user), part 0 (image)" for _, where, _ in details)
    assert all(e.provider == "pydantic-ai" for e in report.events)


@settings(
    max_examples=examples(40), deadline=None, suppress_health_check=list(HealthCheck)
)
@given(conversations)
def test_generated_conversations_lose_nothing_silently(
    conversation: c.Conversation,
) -> None:
    report = Report()
    history = interop.from_canisters(conversation, report=report)
    back = interop.to_canisters(history)
    assert_no_silent_loss(conversation, back, report)


def test_bad_input_raises_the_library_error() -> None:
    with pytest.raises(c.MalformedPayload):
        interop.to_canisters(["not a message"])  # type: ignore[list-item]
    with pytest.raises(c.MalformedPayload):
        interop.from_json(b"{}")
    # What pydantic refuses is said in a line: where, and what, cut short.
    history = [{"kind": "request", "parts": [{"part_kind": "u" * 5000}]}]
    with pytest.raises(c.MalformedPayload) as caught:
        interop.from_json(json.dumps(history))
    assert "at 0.request.parts.0" in str(caught.value)
    assert len(str(caught.value)) < 400


def test_what_pydantic_ai_cannot_write_raises_the_library_error(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # pydantic-ai 2.54 (the last for Python 3.10) cannot write an image URL
    # whose media type it does not infer from the URL; any refusal of its
    # writer comes out as the library's error, saying why.
    conversation = c.Conversation([c.User("hi")])
    adapter = interop._adapter()

    class Refusing:
        def __getattr__(self, name: str) -> Any:
            return getattr(adapter, name)

        def dump_json(self, *args: Any, **kwargs: Any) -> Any:
            raise ValueError("Could not infer media type from image URL")

        def dump_python(self, *args: Any, **kwargs: Any) -> Any:
            raise ValueError("Could not infer media type from image URL")

    monkeypatch.setattr(interop, "_adapter", Refusing)
    with pytest.raises(c.SerializationError, match="Could not infer media type"):
        interop.to_json(conversation)
    with pytest.raises(c.SerializationError, match="cannot write this history"):
        interop.from_canisters(conversation, report=Report())


def test_missing_library_names_the_extra() -> None:
    assert extra_named_without("pydantic_ai", "pydantic_ai") == "pydantic-ai"


def test_import_canisters_imports_no_interop_library() -> None:
    code = (
        "import sys, canisters, canisters.interop\n"
        "import canisters.interop.pydantic_ai\n"
        "heavy = {'pydantic_ai', 'langchain_core', 'pydantic'}\n"
        "print(sorted(heavy & set(sys.modules)))"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    )
    assert out.stdout.strip() == "[]"


@settings(
    max_examples=examples(30), deadline=None, suppress_health_check=list(HealthCheck)
)
@given(conversations)
def test_histories_written_from_canisters_round_trip_exactly(
    conversation: c.Conversation,
) -> None:
    history = interop.from_canisters(conversation)
    assert interop.from_canisters(interop.to_canisters(history)) == history


def _without_id(part: Any) -> Any:
    """``part`` as built without a ``tool_call_id``: pydantic-ai generates one."""
    import dataclasses

    generated = messages.ToolCallPart("x").tool_call_id
    return dataclasses.replace(part, tool_call_id=generated)


@settings(
    max_examples=examples(30), deadline=None, suppress_health_check=list(HealthCheck)
)
@given(tool_histories())
def test_histories_without_optional_fields_validate_and_round_trip(
    conversation: c.Conversation,
) -> None:
    """Tool calls and returns built without their optional ``tool_call_id`` get
    different generated ids: each return still answers its call, by tool name in
    order, and the history comes back as it was."""
    import dataclasses

    history = [
        dataclasses.replace(
            message,
            parts=[
                _without_id(part)
                if isinstance(part, (messages.ToolCallPart, messages.ToolReturnPart))
                else part
                for part in message.parts
            ],
        )
        for message in interop.from_canisters(conversation)
    ]
    read = interop.to_canisters(history)
    c.validate(read)
    assert [getattr(x, "name", None) for x in read] == [
        getattr(x, "name", None) for x in conversation
    ]
    assert interop.from_canisters(read) == history


@pytest.mark.parametrize(
    "content",
    [
        "Please return JSON.",
        [{"type": "missing", "loc": ("a",), "msg": "Field required", "input": {}}],
    ],
)
def test_retry_feedback_without_a_tool_is_the_users_word(content: Any) -> None:
    """Retry feedback that answers no tool call (its ``tool_name`` left out)."""
    if hasattr(messages, "RetryFeedbackPart"):
        retry = messages.RetryFeedbackPart(
            content=content, retry=messages.RetryInfo(cause="model_retry")
        )
    else:  # older pydantic-ai
        retry = messages.RetryPromptPart(content)
    history = [
        messages.ModelRequest(parts=[messages.UserPromptPart("Answer in JSON.")]),
        messages.ModelResponse(parts=[messages.TextPart("no")]),
        messages.ModelRequest(parts=[retry]),
        messages.ModelResponse(parts=[messages.TextPart("{}")]),
    ]
    read = interop.to_canisters(history)
    c.validate(read)
    assert read[2].role is c.Role.User and read[2].content  # type: ignore[attr-defined]
    # Back as pydantic-ai itself reads the part back (its newer form, if any).
    again = Adapter.validate_python(Adapter.dump_python(history))
    assert interop.from_canisters(read) == again


def test_built_in_tool_parts_and_compaction_are_typed_and_round_trip() -> None:
    """pydantic-ai's built-in tool call and return parts and its compaction part
    read as the provider's own typed parts, and come back exactly."""
    from pydantic_ai.messages import (
        CompactionPart,
        ModelResponse,
        NativeToolCallPart,
        NativeToolReturnPart,
        TextPart,
    )

    stamp = datetime(2025, 1, 1, tzinfo=timezone.utc)
    history = [
        ModelResponse(
            parts=[
                CompactionPart(
                    content="Earlier: the user asked about Iceland.",
                    provider_name="anthropic",
                ),
                NativeToolCallPart(
                    "web_search",
                    {"query": "iceland"},
                    "srvtoolu_1",
                    provider_name="anthropic",
                ),
                NativeToolReturnPart(
                    "web_search",
                    [{"url": "https://example.com", "title": "E"}],
                    "srvtoolu_1",
                    timestamp=stamp,
                    provider_name="anthropic",
                ),
                TextPart("Sunny."),
            ],
            timestamp=stamp,
        )
    ]
    conversation = interop.to_canisters(history)
    content = conversation[0].content  # type: ignore[attr-defined]
    compaction, call, result = content[0], content[1], content[2]
    assert compaction == c.Compaction(
        "Earlier: the user asked about Iceland.", "anthropic"
    )
    assert (call.name, dict(call.input), call.call_id, call.provider) == (
        "web_search",
        {"query": "iceland"},
        "srvtoolu_1",
        "anthropic",
    )
    assert isinstance(result, c.ProviderToolResult) and result.call_id == "srvtoolu_1"
    assert interop.from_canisters(conversation) == history
