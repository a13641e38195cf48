"""The cross-format rules of replies, through the public API: finish reasons
(one neutral set, nothing rendered as "stop" that was not a stop) and another
provider's elements reported, not dropped silently."""

from __future__ import annotations

import warnings
from typing import Any

import pytest

from canisters import UnsupportedContent, providers

BLOCKED = {
    "promptFeedback": {"blockReason": "PROHIBITED_CONTENT"},
    "usageMetadata": {"promptTokenCount": 7, "totalTokenCount": 7},
    "modelVersion": "gemini-2.5-flash",
}


def render(
    source: str, body: dict[str, Any], target: str, unsupported: str = "drop"
) -> tuple[Any, list[Any]]:
    reply = providers.get(source).parse_response(body)
    report = providers.Report()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", providers.FidelityWarning)
        rendered = providers.get(target).render_response(
            reply, report=report, unsupported=unsupported
        )
    return rendered, report.events


def finish(target: str, body: dict[str, Any]) -> Any:
    if target == "openai-chat":
        return body["choices"][0]["finish_reason"]
    if target == "anthropic":
        return body["stop_reason"]
    if target == "openai-responses":
        return body["status"], body.get("incomplete_details")
    if target == "gemini":
        return body["candidates"][0].get("finishReason")
    return body.get("done_reason")


def test_a_blocked_gemini_prompt_is_a_content_filter_finish() -> None:
    reply = providers.get("gemini").parse_response(BLOCKED)
    assert reply[0].metadata.finish_reason == "content_filter"
    # The raw reason stays, for Gemini itself.
    assert providers.get("gemini").render_response(reply) == BLOCKED


@pytest.mark.parametrize(
    ("target", "expected", "approximated"),
    [
        ("openai-chat", "content_filter", False),
        ("openai-responses", ("incomplete", {"reason": "content_filter"}), False),
        ("anthropic", "refusal", True),
        ("ollama", "stop", True),
    ],
)
def test_a_blocked_gemini_prompt_is_not_a_stop(
    target: str, expected: Any, approximated: bool
) -> None:
    body, events = render("gemini", BLOCKED, target)
    assert finish(target, body) == expected
    if approximated:  # not exact: refused under the default policy
        with pytest.raises(UnsupportedContent, match="finish_reason"):
            render("gemini", BLOCKED, target, unsupported="error")
    else:
        strict, _ = render("gemini", BLOCKED, target, unsupported="error")
        assert finish(target, strict) == expected
    assert (
        ("approximated", "finish_reason") in {(e.kind, e.where) for e in events}
    ) is approximated


OLLAMA_CALLS = {
    "model": "llama3.2",
    "message": {
        "role": "assistant",
        "content": "",
        "tool_calls": [{"function": {"name": "f", "arguments": {"a": 1}}}],
    },
    "done": True,
}


@pytest.mark.parametrize(
    ("target", "expected"),
    [
        ("openai-chat", "tool_calls"),
        ("anthropic", "tool_use"),
        ("openai-responses", ("completed", None)),
    ],
)
def test_an_ollama_reply_of_tool_calls_without_done_reason_ends_in_calls(
    target: str, expected: Any
) -> None:
    body, events = render("ollama", OLLAMA_CALLS, target, unsupported="error")
    assert finish(target, body) == expected
    assert not events


def test_an_unknown_finish_reason_is_kept_and_reported_not_stop() -> None:
    gemini = {
        "candidates": [
            {
                "content": {"role": "model", "parts": [{"text": "hola"}]},
                "finishReason": "LANGUAGE",
            }
        ]
    }
    with pytest.raises(UnsupportedContent, match="language"):
        render("gemini", gemini, "openai-chat", unsupported="error")
    body, events = render("gemini", gemini, "openai-chat")
    assert finish("openai-chat", body) == "language"
    assert [(e.kind, e.where) for e in events] == [("approximated", "finish_reason")]
    body, events = render("gemini", gemini, "openai-responses")
    assert finish("openai-responses", body) == ("incomplete", None)
    assert [(e.kind, e.where) for e in events] == [("approximated", "finish_reason")]


def test_the_same_format_keeps_its_finish_reason_unreported() -> None:
    anthropic = {
        "id": "msg_1",
        "type": "message",
        "role": "assistant",
        "model": "claude",
        "content": [{"type": "text", "text": "no"}],
        "stop_reason": "refusal",
        "stop_sequence": None,
        "usage": {"input_tokens": 1, "output_tokens": 1},
    }
    body, events = render("anthropic", anthropic, "anthropic")
    assert body == anthropic and not events
    body, events = render("anthropic", anthropic, "openai-chat")
    assert finish("openai-chat", body) == "stop"
    assert [(e.kind, e.where) for e in events] == [("approximated", "finish_reason")]


SEARCHED = {
    "id": "msg_2",
    "type": "message",
    "role": "assistant",
    "model": "claude",
    "content": [
        {
            "type": "server_tool_use",
            "id": "srvtoolu_1",
            "name": "web_search",
            "input": {"query": "weather"},
        },
        {
            "type": "web_search_tool_result",
            "tool_use_id": "srvtoolu_1",
            "content": [
                {
                    "type": "web_search_result",
                    "url": "https://example.com",
                    "title": "Weather",
                    "encrypted_content": "abc",
                    "page_age": None,
                }
            ],
        },
        {"type": "text", "text": "Sunny."},
    ],
    "stop_reason": "end_turn",
    "stop_sequence": None,
    "usage": {"input_tokens": 1, "output_tokens": 1},
}


@pytest.mark.parametrize(
    "target", ["openai-chat", "openai-responses", "gemini", "ollama"]
)
def test_anthropic_server_tool_blocks_are_reported_in_other_replies(
    target: str,
) -> None:
    with pytest.raises(UnsupportedContent, match="web_search ran by anthropic"):
        render("anthropic", SEARCHED, target, unsupported="error")
    body, events = render("anthropic", SEARCHED, target)
    assert "Sunny." in str(body) and "srvtoolu_1" not in str(body)
    # (the reply's envelope keys a target has no place for are reported too)
    dropped = [
        e for e in events if e.kind == "dropped" and e.where.startswith("canister")
    ]
    assert [e.where for e in dropped] == [
        "canister 0 (assistant), part 0 (provider_tool_call)",
        "canister 0 (assistant), part 1 (provider_tool_result)",
    ]
    assert all("never sent to" in e.detail for e in dropped)
    # As text, by the placeholder policy: what ran and what it found, and
    # never a client tool call.
    body, events = render("anthropic", SEARCHED, target, unsupported="placeholder")
    assert "srvtoolu_1" not in str(body)
    assert "https://example.com" in str(body) and "weather" in str(body)
    assert [e.kind for e in events].count("placeholder") == 2
    assert (
        providers.get("anthropic").render_response(
            providers.get("anthropic").parse_response(SEARCHED)
        )
        == SEARCHED
    )


RESPONSES_REPLY = {
    "id": "resp_1",
    "object": "response",
    "created_at": 0,
    "status": "completed",
    "model": "gpt-4.1",
    "output": [
        {
            "id": "mcpl_1",
            "type": "mcp_list_tools",
            "server_label": "deepwiki",
            "tools": [],
        },
        {
            "id": "msg_1",
            "type": "message",
            "status": "completed",
            "role": "assistant",
            "content": [{"type": "output_text", "text": "Hi", "annotations": []}],
        },
    ],
    "temperature": 0.25,
    "usage": {"input_tokens": 3, "output_tokens": 1, "total_tokens": 4},
}


@pytest.mark.parametrize("target", ["anthropic", "gemini", "openai-chat"])
def test_a_reply_opening_with_an_element_left_out_still_reports_its_envelope(
    target: str,
) -> None:
    # The envelope rides on the first turn, here the MCP tool listing that no
    # other format takes: its settings are still reported, never lost.
    _, events = render("openai-responses", RESPONSES_REPLY, target)
    wheres = [event.where for event in events]
    assert "reply openai-responses.temperature" in wheres
    assert any("mcp_list_tools" in where for where in wheres)


def test_a_reply_items_id_is_a_reference_not_sent_and_its_status_reported() -> None:
    body = {
        **RESPONSES_REPLY,
        "temperature": 1.0,
        "output": RESPONSES_REPLY["output"][1:],
    }
    _, events = render("openai-responses", body, "anthropic")
    (reference,) = [event for event in events if "msg_1" in event.detail]
    assert reference.kind == "dropped"
    assert reference.where == "canister 0 (assistant), part 0 (text).id"
    # A reference is never refused: only OpenAI resolves it.
    render("openai-responses", body, "anthropic", unsupported="error")
    # A status other than "completed" says something: reported, refused.
    message = {**body["output"][0], "status": "incomplete"}
    unfinished = {**body, "output": [message]}
    _, events = render("openai-responses", unfinished, "anthropic")
    assert any(event.where.endswith(".status") for event in events)
    with pytest.raises(UnsupportedContent, match="status"):
        render("openai-responses", unfinished, "anthropic", unsupported="error")


SEARCHED_THEN_ANSWERED = {
    "id": "resp_1",
    "object": "response",
    "created_at": 1,
    "status": "completed",
    "model": "gpt-5",
    "output": [
        {
            "type": "web_search_call",
            "id": "ws_1",
            "status": "completed",
            "action": {"type": "search", "query": "tallest mountain"},
        },
        {
            "type": "reasoning",
            "id": "rs_1",
            "summary": [],
        },
        {
            "type": "message",
            "id": "msg_1",
            "role": "assistant",
            "status": "completed",
            "content": [
                {"type": "output_text", "text": "Mount Everest.", "annotations": []}
            ],
        },
    ],
    "usage": {"input_tokens": 3, "output_tokens": 4, "total_tokens": 7},
}


def test_a_reply_of_several_items_is_one_chat_choice() -> None:
    from openai.types.chat import ChatCompletion

    reply = providers.get("openai-responses").parse_response(SEARCHED_THEN_ANSWERED)
    assert len(list(reply)) > 1  # one turn per output item
    rendered, _ = render("openai-responses", SEARCHED_THEN_ANSWERED, "openai-chat")
    (choice,) = rendered["choices"]
    assert choice["index"] == 0
    assert choice["message"]["content"] == "Mount Everest."
    assert choice["finish_reason"] == "stop"
    ChatCompletion.model_validate(rendered)


def test_chat_alternatives_stay_separate_choices() -> None:
    body = {
        "id": "chatcmpl-1",
        "object": "chat.completion",
        "created": 1,
        "model": "gpt-4o",
        "choices": [
            {
                "index": number,
                "message": {"role": "assistant", "content": text},
                "finish_reason": reason,
                "logprobs": None,
            }
            for number, (text, reason) in enumerate([("a", "stop"), ("b", "length")])
        ],
    }
    rendered, events = render("openai-chat", body, "openai-chat")
    assert rendered == body
    assert events == []
