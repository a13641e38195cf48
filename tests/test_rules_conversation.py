"""The cross-format rules of conversations, through the public API: each
defect found by a peer's test suite has its case here."""

from __future__ import annotations

import re
from typing import Any

import pytest

from canisters import (
    Assistant,
    Conversation,
    Document,
    ProviderError,
    Reasoning,
    Text,
    UnsupportedContent,
    User,
    providers,
)

from .requests_support import SDK_ACCEPTS, corpus_requests, payload, render

TARGETS = ["anthropic", "gemini", "ollama", "openai-responses", "openai-chat"]


def answered_twice() -> dict[str, Any]:
    call = {
        "id": "call_1",
        "type": "function",
        "function": {"name": "f", "arguments": "{}"},
    }
    return {
        "model": "m",
        "messages": [
            {"role": "user", "content": "hi"},
            {"role": "assistant", "content": None, "tool_calls": [call]},
            {"role": "tool", "tool_call_id": "call_1", "content": "first"},
            {"role": "tool", "tool_call_id": "call_1", "content": "second"},
        ],
    }


@pytest.mark.parametrize("target", TARGETS)
def test_a_second_result_for_one_call_is_skipped_and_reported(target: str) -> None:
    body, events = render("openai-chat", answered_twice(), target, max_tokens=10)
    assert "second" not in str(body) and "first" in str(body)
    skipped = [event for event in events if event.where.endswith("(result)")]
    assert [(event.kind, event.where) for event in skipped] == [
        ("dropped", "canister 3 (result)")
    ]
    assert "second result" in skipped[0].detail
    SDK_ACCEPTS[target]({"model": "m", **body})
    if target == "anthropic":
        results = [
            block
            for message in body["messages"]
            if isinstance(message["content"], list)
            for block in message["content"]
            if block["type"] == "tool_result"
        ]
        assert len(results) == 1


def test_a_second_result_is_refused_like_an_orphan() -> None:
    request = providers.get("openai-chat").parse_full_request(answered_twice())
    with pytest.raises(ProviderError, match="canister 3"):
        providers.get("anthropic").render_full_request(
            request, incomplete="error", max_tokens=10
        )


def with_empty_text() -> dict[str, Any]:
    call = {
        "id": "call_1",
        "type": "function",
        "function": {"name": "f", "arguments": "{}"},
    }
    return {
        "model": "m",
        "messages": [
            {"role": "system", "content": ""},
            {"role": "user", "content": "hi"},
            {"role": "assistant", "content": "", "tool_calls": [call]},
            {"role": "tool", "tool_call_id": "call_1", "content": "r"},
            {
                "role": "user",
                "content": [
                    {"type": "text", "text": ""},
                    {"type": "text", "text": "go"},
                ],
            },
        ],
    }


def texts(value: Any) -> list[str]:
    """Every string under a ``text`` or ``content`` key of ``value``."""
    found: list[str] = []
    if isinstance(value, dict):
        for key, item in value.items():
            if key in ("text", "content", "instructions") and isinstance(item, str):
                found.append(item)
            else:
                found += texts(item)
    elif isinstance(value, list):
        for item in value:
            found += texts(item)
    return found


@pytest.mark.parametrize("target", [t for t in TARGETS if t != "openai-chat"])
def test_empty_text_is_left_out_for_every_other_format(target: str) -> None:
    body, events = render("openai-chat", with_empty_text(), target, max_tokens=10)
    sent = texts(body)
    assert "go" in sent and "hi" in sent
    # No empty text part or message, and no text changed by one (Ollama joins
    # texts with a newline).
    if target == "ollama":  # a message of tool calls takes content ""
        assert [m["content"] for m in body["messages"]] == ["hi", "", "r", "go"]
    else:
        assert "" not in sent, sent
    assert "system" not in body and "systemInstruction" not in body
    left_out = {(event.where, event.detail) for event in events}
    assert {
        ("canister 0 (supervisor)", "a message of empty text only"),
        ("canister 2 (assistant)", "a message of empty text only"),
        ("canister 5 (user), part 0 (text)", "empty text"),
    } <= left_out
    SDK_ACCEPTS[target]({"model": "m", **body})


def test_empty_text_of_the_same_format_goes_back_as_it_came() -> None:
    chat = providers.get("openai-chat")
    body = with_empty_text()
    assert chat.render_full_request(chat.parse_full_request(body)) == body


def test_events_after_a_message_left_out_name_the_canister_where_it_stood() -> None:
    body = with_empty_text()
    body["messages"].append(
        {
            "role": "user",
            "content": [
                {
                    "type": "input_audio",
                    "input_audio": {"data": "UklGRg==", "format": "wav"},
                }
            ],
        }
    )
    _, events = render(
        "openai-chat", body, "anthropic", max_tokens=10, unsupported="drop"
    )
    assert "canister 6 (user), part 0 (audio)" in {event.where for event in events}


def user_texts(body: dict[str, Any], target: str) -> list[str]:
    """The texts of the first user message or turn of a rendered request."""
    if target == "gemini":
        return [part["text"] for part in body["contents"][0]["parts"]]
    if target == "ollama":
        return body["messages"][0]["content"].split("\n")
    first = (body.get("input") or body.get("messages"))[0]["content"]
    return [part["text"] for part in first]


@pytest.mark.parametrize(
    "target", ["openai-chat", "openai-responses", "gemini", "ollama"]
)
def test_a_document_title_leads_its_content_where_there_are_no_documents(
    target: str,
) -> None:
    conversation = Conversation(
        [Document((Text("Sales rose."),), title="Q3 report"), User("summarize")]
    )
    report = providers.Report()
    body = providers.get(target).render_request(conversation, report=report)
    assert user_texts(body, target)[:2] == ["Document: Q3 report", "Sales rose."]
    assert [(e.kind, e.where) for e in report.events] == [
        ("downgraded", "canister 0 (document)")
    ]
    assert "title" in report.events[0].detail


def test_anthropic_keeps_a_document_title_as_its_own() -> None:
    conversation = Conversation([Document((Text("Sales rose."),), title="Q3 report")])
    body = providers.get("anthropic").render_request(conversation)
    assert body["messages"][0]["content"][0]["title"] == "Q3 report"


@pytest.mark.parametrize("target", TARGETS)
def test_reasoning_sent_as_text_is_spelled_alike_everywhere(target: str) -> None:
    # Signed by another provider: no target but that one takes it back.
    thought = Reasoning("the user wants a haiku", signature="sig", provider="other")
    conversation = Conversation(
        [User("write"), Assistant((thought, Text("Here it is."))), User("again")]
    )
    report = providers.Report()
    body = providers.get(target).render_request(
        conversation, reasoning="text", report=report
    )
    assert "<think>\nthe user wants a haiku\n</think>" in str(body).replace("\\n", "\n")
    assert [(e.kind, e.detail) for e in report.events] == [
        ("downgraded", "reasoning sent as text")
    ]


def gemini_calls(first: str, second: str) -> dict[str, Any]:
    def call(identifier: str) -> dict[str, Any]:
        return {"functionCall": {"id": identifier, "name": "f", "args": {}}}

    def answer(identifier: str) -> dict[str, Any]:
        return {"functionResponse": {"id": identifier, "name": "f", "response": {}}}

    return {
        "contents": [
            {"role": "user", "parts": [{"text": "hi"}]},
            {"role": "model", "parts": [call(first), call(second)]},
            {"role": "user", "parts": [answer(second), answer(first)]},
        ]
    }


def call_ids(body: dict[str, Any], target: str) -> tuple[list[str], list[str]]:
    """The ids of the calls and of the results, in order."""
    calls: list[str] = []
    results: list[str] = []
    for message in body["messages"]:
        if target == "openai-chat":
            calls += [call["id"] for call in message.get("tool_calls") or ()]
            if message["role"] == "tool":
                results.append(message["tool_call_id"])
        elif isinstance(message["content"], list):
            for block in message["content"]:
                if block["type"] == "tool_use":
                    calls.append(block["id"])
                elif block["type"] == "tool_result":
                    results.append(block["tool_use_id"])
    return calls, results


@pytest.mark.parametrize("target", ["openai-chat", "anthropic"])
def test_call_ids_are_fitted_to_the_target_and_still_pair(target: str) -> None:
    # Too long for OpenAI (40), characters Anthropic refuses, and two ids that
    # the character rule alone would make one.
    first, second = "fn.call/" + "x" * 40, "fn_call_" + "x" * 40
    body, events = render("gemini", gemini_calls(first, second), target, max_tokens=9)
    calls, results = call_ids(body, target)
    assert len(set(calls)) == 2 and sorted(results) == sorted(calls)
    assert calls[0] != first
    if target == "openai-chat":
        assert all(len(identifier) <= 40 for identifier in calls)
    else:
        assert all(re.fullmatch(r"[A-Za-z0-9_-]+", identifier) for identifier in calls)
    rewritten = [e for e in events if "tool-call id" in e.detail]
    assert {e.kind for e in rewritten} == {"synthesized"} and rewritten
    SDK_ACCEPTS[target]({"model": "m", **body})
    # The same request gives the same ids.
    again, _ = render("gemini", gemini_calls(first, second), target, max_tokens=9)
    assert call_ids(again, target) == (calls, results)


def test_ids_of_the_same_format_go_back_as_they_came() -> None:
    long = "call_" + "y" * 60
    chat = {
        "model": "m",
        "messages": [
            {"role": "user", "content": "hi"},
            {
                "role": "assistant",
                "content": None,
                "tool_calls": [
                    {
                        "id": long,
                        "type": "function",
                        "function": {"name": "f", "arguments": "{}"},
                    }
                ],
            },
            {"role": "tool", "tool_call_id": long, "content": "ok"},
        ],
    }
    normalizer = providers.get("openai-chat")
    assert normalizer.render_full_request(normalizer.parse_full_request(chat)) == chat


FIELD = r"(?!conversation\b)[a-z_]+(\.[A-Za-z_][\w-]*|\[\d+\])*"
PLACE = r"canister \d+ \([a-z]+\)(, part \d+ \([a-z_]+\))?(\.[A-Za-z_][\w-]*)?"
GRAMMAR = re.compile(rf"(?:{FIELD}|{PLACE})")


def test_every_event_names_its_place_by_one_grammar() -> None:
    chat = with_empty_text()
    chat["messages"][1] = {"role": "user", "content": "hi", "name": "bob"}
    chat["messages"].append(
        {
            "role": "user",
            "content": [
                {"type": "text", "text": "x", "cache_control": {"type": "ephemeral"}}
            ],
        }
    )
    chat["messages"][2]["tool_calls"][0]["id"] = "call." + "z" * 50
    chat["messages"][3]["tool_call_id"] = "call." + "z" * 50
    chat["top_k"] = 3
    seen = set()
    for target in [t for t in TARGETS if t != "openai-chat"]:
        _, events = render("openai-chat", chat, target, unsupported="drop")
        for event in events:
            assert GRAMMAR.fullmatch(event.where), (target, event)
            seen.add(event.where.split(" ", 1)[0].split(".")[0])
    assert {"canister", "extras"} <= seen


# The same rules for a conversation alone (render_request) ---------------------------


def chat_of_every_rule() -> dict[str, Any]:
    """A Chat conversation each conversation rule acts on: a call id too long
    for OpenAI and unfit for Anthropic, empty text, kept keys."""
    long = "call." + "z" * 50
    call = {
        "id": long,
        "type": "function",
        "function": {"name": "f", "arguments": "{}"},
    }
    return {
        "messages": [
            {"role": "system", "content": ""},
            {
                "role": "user",
                "content": [
                    {"type": "text", "text": ""},
                    {
                        "type": "text",
                        "text": "hi",
                        "cache_control": {"type": "ephemeral"},
                    },
                ],
                "name": "bob",
            },
            {"role": "assistant", "content": "", "tool_calls": [call]},
            {"role": "tool", "tool_call_id": long, "content": "r"},
        ]
    }


@pytest.mark.parametrize("target", [t for t in TARGETS if t != "openai-chat"])
def test_a_conversation_alone_gets_the_rules_of_whole_requests(target: str) -> None:
    conversation = providers.get("openai-chat").parse_request(chat_of_every_rule())
    report = providers.Report()
    body = providers.get(target).render_request(
        conversation, unsupported="drop", report=report
    )
    assert "" not in texts(body) or target == "ollama"  # Ollama: content "" of calls
    assert "bob" not in str(body)
    left_out = {(event.where, event.detail) for event in report.events}
    assert {
        ("canister 0 (supervisor)", "a message of empty text only"),
        ("canister 1 (user), part 0 (text)", "empty text"),
        (
            "canister 1 (user).name",
            "openai-chat's key 'name' has no equivalent in " + target,
        ),
    } <= left_out
    if target == "anthropic":
        calls, results = call_ids(body, target)
        assert calls == results and re.fullmatch(r"[A-Za-z0-9_-]+", calls[0])
        assert body["messages"][0]["content"][0]["cache_control"] == {
            "type": "ephemeral"
        }
    else:
        assert "canister 1 (user), part 1 (text).cache_control" in {
            where for where, _ in left_out
        }
    limit = {"max_tokens": 10} if target == "anthropic" else {}
    SDK_ACCEPTS[target]({"model": "m", **limit, **body})
    # Refused where it is under the default policy, as in whole requests.
    with pytest.raises(UnsupportedContent, match=r"canister 1 \(user\)\.name"):
        providers.get(target).render_request(conversation)


def test_a_conversation_alone_from_elsewhere_gets_ids_fitted_for_openai() -> None:
    first, second = "fn.call/" + "x" * 40, "fn_call_" + "x" * 40
    gemini = gemini_calls(first, second)
    # A signature kept on each call marks the conversation as Gemini's.
    for part in gemini["contents"][1]["parts"]:
        part["thoughtSignature"] = "c2ln"
    conversation = providers.get("gemini").parse_request(gemini)
    report = providers.Report()
    body = providers.get("openai-chat").render_request(
        conversation, unsupported="drop", report=report
    )
    calls, results = call_ids(body, "openai-chat")
    assert len(set(calls)) == 2 and sorted(results) == sorted(calls)
    assert all(len(identifier) <= 40 for identifier in calls)
    assert any("tool-call id" in event.detail for event in report.events)
    again = providers.get("openai-chat").render_request(
        conversation, unsupported="drop"
    )
    assert call_ids(again, "openai-chat") == (calls, results)


def corpus() -> list[tuple[str, Any]]:
    return [(source, path) for source in TARGETS for path in corpus_requests(source)]


@pytest.mark.parametrize("target", TARGETS)
def test_a_conversation_alone_renders_as_in_its_whole_request(target: str) -> None:
    # Every corpus request read elsewhere and holding that format's extras:
    # render_request sends what render_full_request sends of the conversation,
    # with the same conversation events.
    checked = 0
    for source, path in corpus():
        if source == target:
            continue
        body = payload(path)
        conversation = providers.get(source).parse_request(body)
        if not any(
            source in c.extras
            or any(source in p.extras for p in getattr(c, "content", None) or ())
            for c in conversation
        ):
            continue  # nothing tells where it came from: the format's own rules
        alone, whole = providers.Report(), providers.Report()
        try:
            messages = providers.get(target).render_request(
                conversation, unsupported="drop", report=alone
            )
            request = providers.get(source).parse_full_request(body)
            full = providers.get(target).render_full_request(
                request, unsupported="drop", report=whole, max_tokens=10
            )
        except (UnsupportedContent, ProviderError):
            continue  # refused, for the conversation or for a setting
        assert {key: full.get(key) for key in messages} == messages, path.name
        events = {(e.kind, e.where) for e in whole.events}
        assert {(e.kind, e.where) for e in alone.events} <= events, path.name
        checked += 1
    assert checked >= 10
