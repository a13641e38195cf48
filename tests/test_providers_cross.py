"""Conversations parsed from one provider, rendered for the other."""

from __future__ import annotations

import json
import warnings
from pathlib import Path
from typing import Any

import pytest

import canisters
from canisters import (
    Assistant,
    Conversation,
    ErrorInfo,
    Invocation,
    Reasoning,
    Result,
    Text,
    UnsupportedContent,
    User,
    providers,
)

from .providers_support import KEPT_KEY, adapter

DATA = Path(__file__).parent / "data" / "providers"
REQUESTS = sorted(
    path
    for provider in ("openai-chat", "anthropic")
    for path in (DATA / provider).glob("*.json")
    if json.loads(path.read_text())["kind"] == "request"
)
RESPONSES = sorted(
    path
    for provider in ("openai-chat", "anthropic")
    for path in (DATA / provider).glob("*response.json")
)
OTHER = {"openai-chat": "anthropic", "anthropic": "openai-chat"}


def validate(provider: str, body: dict[str, Any]) -> None:
    """Check a rendered request against the provider SDK's parameter types."""

    if provider == "openai-chat":
        from openai.types.chat import ChatCompletionMessageParam

        adapter(list[ChatCompletionMessageParam]).validate_python(body["messages"])
    else:
        from anthropic.types import MessageParam, TextBlockParam

        adapter(list[MessageParam]).validate_python(body["messages"])
        if "system" in body:
            adapter(str | list[TextBlockParam]).validate_python(body["system"])


@pytest.mark.parametrize("path", REQUESTS, ids=lambda p: f"{p.parent.name}-{p.stem}")
@pytest.mark.parametrize("policy", ["error", "drop", "placeholder"])
def test_requests_cross(path: Path, policy: str) -> None:
    source = path.parent.name
    target = OTHER[source]
    conversation = providers.get(source).parse_request(
        json.loads(path.read_text())["payload"]
    )
    report = providers.Report()
    try:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            body = providers.get(target).render_request(
                conversation, unsupported=policy, report=report
            )
    except canisters.UnsupportedContent as error:
        failure = error
    else:
        failure = None
    if failure is not None:
        assert policy == "error"
        assert failure.provider == target
        # A part, or an element of a type the source's normalizer kept whole,
        # or a wire key the source kept on a canister or part.
        assert (
            "part" in failure.part
            or "element" in failure.part
            or KEPT_KEY.fullmatch(failure.part)
        )
        return
    warned = [w for w in caught if issubclass(w.category, providers.FidelityWarning)]
    if policy != "drop":
        # A kept wire key has no place for a placeholder: dropped, warned.
        kept = {e.where for e in report.events if KEPT_KEY.fullmatch(e.where)}
        assert all(
            str(w.message).split(": ")[1][len("dropped ") :] in kept for w in warned
        )
    assert len(warned) <= len(report.events)
    validate(target, body)
    # What the target cannot take is reported, never lost silently.
    if policy == "placeholder":
        assert all(
            event.kind != "dropped"
            or "incomplete" in event.detail
            or "reasoning" in event.detail
            # Provider-bound artifacts and empty text have nothing to replace.
            or "-only " in event.detail
            or event.detail in ("empty text block", "message with no content")
            or event.detail
            in ("empty text", "a message of empty text only", "an empty message")
            or KEPT_KEY.fullmatch(event.where)
            for event in report.events
        )
    # And the target parses its own rendering back.
    providers.get(target).parse_request(body)


@pytest.mark.parametrize("path", RESPONSES, ids=lambda p: f"{p.parent.name}-{p.stem}")
def test_responses_cross(path: Path) -> None:
    from anthropic.types import Message
    from openai.types.chat import ChatCompletion

    source = path.parent.name
    target = OTHER[source]
    body = json.loads(path.read_text())["payload"]
    reply = providers.get(source).parse_response(body)
    try:
        rendered = providers.get(target).render_response(reply)
    except UnsupportedContent:  # not exact (a server tool, a refusal): reported
        report = providers.Report()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", providers.FidelityWarning)
            rendered = providers.get(target).render_response(
                reply, unsupported="drop", report=report
            )
        assert report.events
    if target == "openai-chat":
        ChatCompletion.model_validate(rendered)
    else:
        Message.model_validate(rendered)
    back = providers.get(target).parse_response(rendered)
    assert back[0].metadata.usage == reply[0].metadata.usage  # type: ignore[union-attr]
    assert back[0].metadata.finish_reason in (  # type: ignore[union-attr]
        reply[0].metadata.finish_reason,  # type: ignore[union-attr]
        "stop",
    )


def tool_turn(error: ErrorInfo | None) -> Conversation:
    return Conversation(
        [
            User("weather?"),
            Assistant(
                (
                    Reasoning("hmm", signature="sig", provider="anthropic"),
                    Text("Let me look."),
                )
            ),
            Invocation("get_weather", {"city": "Paris"}, invocation_id="toolu_1"),
            Invocation("get_time", {}, invocation_id="toolu_2"),
            Result("toolu_1", "get_weather", (Text("15C"),)),
            Result("toolu_2", "get_time", error=error),
        ]
    )


def test_tool_error_survives_both_ways() -> None:
    conversation = tool_turn(ErrorInfo("TOOL_ERROR", "clock broken"))
    openai = providers.get("openai-chat").render_request(conversation)
    back = providers.get("openai-chat").parse_request(openai)
    assert back[-1].error == ErrorInfo("TOOL_ERROR", "clock broken")  # type: ignore[attr-defined]
    anthropic = providers.get("anthropic").render_request(back)
    result = anthropic["messages"][-1]["content"][-1]
    assert result["is_error"] is True
    assert result["content"] == "clock broken"


def test_signed_reasoning_goes_only_to_its_provider() -> None:
    conversation = tool_turn(None)
    anthropic = providers.get("anthropic").render_request(conversation)
    assert anthropic["messages"][1]["content"][0] == {
        "type": "thinking",
        "thinking": "hmm",
        "signature": "sig",
    }
    report = providers.Report()
    openai = providers.get("openai-chat").render_request(conversation, report=report)
    assert openai["messages"][1]["content"] == "Let me look."
    assert [e.kind for e in report.events] == ["dropped"]
    as_text = providers.get("openai-chat").render_request(
        conversation, reasoning="text"
    )
    assert "hmm" in as_text["messages"][1]["content"][0]["text"]
    # Reasoning signed by someone else is not sent to Anthropic either.
    foreign = Conversation(
        [
            User("q"),
            Assistant((Reasoning("x", signature="s", provider="gemini"), Text("a"))),
        ]
    )
    body = providers.get("anthropic").render_request(foreign)
    assert body["messages"][1]["content"] == [{"type": "text", "text": "a"}]


def test_parallel_calls_fold_and_results_stay_in_order() -> None:
    conversation = tool_turn(None)
    openai = providers.get("openai-chat").render_request(conversation)
    assert [m["role"] for m in openai["messages"]] == [
        "user",
        "assistant",
        "tool",
        "tool",
    ]
    assert len(openai["messages"][1]["tool_calls"]) == 2
    anthropic = providers.get("anthropic").render_request(conversation)
    assert [m["role"] for m in anthropic["messages"]] == ["user", "assistant", "user"]
    assert [b["type"] for b in anthropic["messages"][2]["content"]] == [
        "tool_result",
        "tool_result",
    ]


def test_ids_from_elsewhere_are_made_safe_for_anthropic() -> None:
    conversation = Conversation(
        [
            User("go"),
            Invocation("run", invocation_id="call:1/a"),
            Result("call:1/a", "run", (Text("ok"),)),
        ]
    )
    body = providers.get("anthropic").render_request(conversation)
    use = body["messages"][1]["content"][0]["id"]
    result = body["messages"][2]["content"][0]["tool_use_id"]
    assert use == result == "call_1_a"


def test_empty_assistant_turns_and_texts_are_not_sent_to_anthropic() -> None:
    conversation = Conversation(
        [User("a"), Assistant(()), User("b"), Assistant((Text(""), Text("c")))]
    )
    report = providers.Report()
    body = providers.get("anthropic").render_request(conversation, report=report)
    assert body["messages"] == [
        {
            "role": "user",
            "content": [{"type": "text", "text": "a"}, {"type": "text", "text": "b"}],
        },
        {"role": "assistant", "content": [{"type": "text", "text": "c"}]},
    ]
    assert [e.detail for e in report.events] == [
        "empty text block",
        "message with no content",
    ]
    validate("anthropic", body)
    # A final assistant turn may stay empty: it asks the model to continue.
    final = providers.get("anthropic").render_request(
        Conversation([User("a"), Assistant(())])
    )
    assert final["messages"][-1] == {"role": "assistant", "content": []}


def test_gemini_bound_artifacts_are_reported_elsewhere() -> None:
    data = DATA / "gemini"
    request = json.loads((data / "code-execution-history-request.json").read_text())
    conversation = providers.get("gemini").parse_request(request["payload"])
    for target in ("openai-chat", "anthropic", "openai-responses", "ollama"):
        # Code run and its output are content: refused unless told otherwise.
        with pytest.raises(canisters.UnsupportedContent, match="executableCode"):
            providers.get(target).render_request(conversation)
        report = providers.Report()
        with pytest.warns(providers.FidelityWarning):
            body = providers.get(target).render_request(
                conversation, report=report, unsupported="drop"
            )
        assert "executableCode" not in json.dumps(body)
        # One event per part, naming the part Gemini wrote; never a client call.
        details = [e.detail for e in report.events]
        assert len(details) == 2
        assert "(executableCode) with {" in details[0]
        assert f"never sent to {target} as a client tool call" in details[0]
        assert "(codeExecutionResult)" in details[1]
    signed = json.loads(
        (data / "text-with-thought-signature-response.json").read_text()
    )
    reply = providers.get("gemini").parse_response(signed["payload"])
    report = providers.Report()
    providers.get("anthropic").render_request(
        Conversation([User("q"), *reply]), report=report
    )
    # A signature holds no content: dropped, reported, never refused.
    assert any("gemini-only thoughtSignature" in e.detail for e in report.events)
    # Gemini itself gets everything back.
    again = providers.get("gemini").render_request(conversation)
    assert again["contents"] == request["payload"]["contents"]
