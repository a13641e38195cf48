"""The OpenAI Chat dialects that carry reasoning: ``openai-chat-reasoning``
(``reasoning_content``: DeepSeek, vLLM, SGLang, Qwen, Kimi) and ``openrouter``
(``reasoning`` and ``reasoning_details``).

A recorded reply, sent back as the next request in its own dialect, keeps its
reasoning fields exactly; a stream of reasoning deltas gives the reply the
deltas add up to; across formats, reasoning goes where it can and is reported
where it cannot.
"""

from __future__ import annotations

import copy
import json
import re
from pathlib import Path
from typing import Any

import pytest

from canisters import (
    Assistant,
    Conversation,
    Reasoning,
    Text,
    UnsupportedContent,
    User,
    providers,
)
from canisters.providers import streams

DATA = Path(__file__).parent / "data"


def payload(name: str, case: str) -> Any:
    path = DATA / "providers" / name / f"{case}.json"
    return json.loads(path.read_text(encoding="utf-8"))["payload"]


def stream(name: str, case: str) -> list[Any]:
    return list(streams.read_events((DATA / "streams" / name / case).read_bytes()))


def next_turn(name: str, reply: dict[str, Any]) -> dict[str, Any]:
    """The next request in dialect ``name``: the reply's message sent back, a
    user message after it (a relay reads the reply and renders the request)."""
    normalizer = providers.get(name)
    conversation = Conversation(
        [User("q"), *normalizer.parse_response(reply), User("and then?")]
    )
    return normalizer.render_request(conversation)


REASONING_KEYS = ("reasoning_content", "reasoning", "reasoning_details")


def sent_back(request: dict[str, Any]) -> dict[str, Any]:
    return next(m for m in request["messages"] if m["role"] == "assistant")


@pytest.mark.parametrize(
    ("name", "case"),
    [
        ("openai-chat-reasoning", "pydantic-ai-deepseek-model-thinking-part-response"),
        ("openai-chat-reasoning", "vercel-deepseek-reasoning-response"),
        ("openai-chat-reasoning", "vercel-deepseek-tool-call-response"),
        ("openai-chat-reasoning", "vercel-alibaba-reasoning-response"),
        ("openai-chat-reasoning", "pydantic-ai-zai-thinking-mode-response"),
        ("openrouter", "pydantic-ai-openrouter-map-messages-reasoning-response"),
        ("openrouter", "pydantic-ai-openrouter-preserve-reasoning-block-1-response"),
        (
            "openrouter",
            "pydantic-ai-openrouter-thinking-high-emits-effort-high-response",
        ),
        ("openrouter", "pydantic-ai-openrouter-usage-0-response"),
    ],
)
def test_a_reasoning_reply_sent_back_keeps_its_reasoning_exactly(
    name: str, case: str
) -> None:
    reply = payload(name, case)
    message = reply["choices"][0]["message"]
    assert any(message.get(key) for key in REASONING_KEYS), "a reply with reasoning"
    back = sent_back(next_turn(name, reply))
    for key in REASONING_KEYS:
        if key in message:
            # byte for byte: the JSON text of the field is the same
            assert json.dumps(back[key], ensure_ascii=False) == json.dumps(
                message[key], ensure_ascii=False
            ), key
    # the reply itself renders back as it came
    normalizer = providers.get(name)
    assert normalizer.render_response(normalizer.parse_response(reply)) == reply


def test_deepseek_reasoning_is_the_neutral_reasoning_of_the_dialect() -> None:
    reply = payload(
        "openai-chat-reasoning", "pydantic-ai-deepseek-model-thinking-part-response"
    )
    head = providers.get("openai-chat-reasoning").parse_response(reply)[0]
    reasoning, text = head.content  # type: ignore[attr-defined]
    assert isinstance(reasoning, Reasoning) and isinstance(text, Text)
    assert reasoning.text == reply["choices"][0]["message"]["reasoning_content"]
    assert reasoning.provider == "openai-chat-reasoning"
    assert reasoning.signature is None and reasoning.redacted is None


def test_openrouter_entries_are_parts_bound_to_openrouter() -> None:
    reply = payload(
        "openrouter", "pydantic-ai-openrouter-preserve-reasoning-block-1-response"
    )
    head = providers.get("openrouter").parse_response(reply)[0]
    summary, encrypted = head.content[:2]  # type: ignore[attr-defined]
    details = reply["choices"][0]["message"]["reasoning_details"]
    assert summary.text == details[0]["summary"] and summary.redacted is None
    assert encrypted.redacted == details[1]["data"] and not encrypted.text
    assert {summary.provider, encrypted.provider} == {"openrouter"}


def test_the_newer_reasoning_field_goes_back_under_its_name() -> None:
    """vLLM (since 0.10) and Groq name it ``reasoning``."""
    normalizer = providers.get("openai-chat-reasoning")
    events = stream("openai-chat-reasoning", "vercel-groq-reasoning.ndjson")
    reply = normalizer.parse_stream(events)
    assert reply[0].content[0].text == _concatenated(events, "reasoning")  # type: ignore[attr-defined]
    back = sent_back(
        next_turn(name="openai-chat-reasoning", reply=normalizer.render_response(reply))
    )
    assert back["reasoning"] == _concatenated(events, "reasoning")
    assert "reasoning_content" not in back


def _concatenated(events: list[Any], key: str) -> str:
    return "".join(
        choice["delta"].get(key) or ""
        for event in events
        if isinstance(event, dict)
        for choice in event.get("choices") or ()
    )


def _carries(events: list[Any], key: str) -> bool:
    return any(
        choice.get("delta", {}).get(key)
        for event in events
        if isinstance(event, dict)
        for choice in event.get("choices") or ()
    )


DIALECTS = ("openai-chat-reasoning", "openrouter")


def recorded(name: str, *keys: str) -> list[str]:
    """The recorded streams of dialect ``name`` (file names) whose deltas
    carry one of ``keys``; all of them without ``keys``."""
    return [
        path.name
        for path in sorted((DATA / "streams" / name).iterdir())
        if path.suffix in (".sse", ".ndjson")
        and (not keys or any(_carries(stream(name, path.name), k) for k in keys))
    ]


@pytest.mark.parametrize("name", DIALECTS)
def test_each_dialect_has_ten_recorded_streams_each_with_its_source(
    name: str,
) -> None:
    assert len(recorded(name)) >= 10
    source = (DATA / "streams" / name / "SOURCE.md").read_text(encoding="utf-8")
    listed = set(re.findall(r"^- `([^`]+)`:", source, flags=re.MULTILINE))
    assert listed == set(recorded(name))


@pytest.mark.parametrize(
    "case", recorded("openai-chat-reasoning", "reasoning_content", "reasoning")
)
def test_reasoning_deltas_accumulate_to_the_reply(case: str) -> None:
    """``reasoning_content`` (DeepSeek, Qwen, xAI, Z.ai) or ``reasoning``
    (Groq, vLLM since 0.10): the reply holds their concatenation, under the
    name the stream used."""
    normalizer = providers.get("openai-chat-reasoning")
    events = stream("openai-chat-reasoning", case)
    key = "reasoning_content" if _carries(events, "reasoning_content") else "reasoning"
    reply = normalizer.parse_stream(events)
    reasoning = reply[0].content[0]  # type: ignore[attr-defined]
    assert reasoning.type == "reasoning"
    assert reasoning.text == _concatenated(events, key)
    # the accumulated reply is a reply of the dialect: whole, it reads the same
    body = normalizer.render_response(reply)
    assert body["choices"][0]["message"][key] == reasoning.text
    again = normalizer.parse_response(body)
    assert [p.text for p in again[0].content] == [  # type: ignore[attr-defined]
        p.text
        for p in reply[0].content  # type: ignore[attr-defined]
    ]
    assert normalizer.render_response(again) == body
    # and in the next request, the reasoning goes back as it came
    assert sent_back(next_turn("openai-chat-reasoning", body))[key] == (
        _concatenated(events, key)
    )


@pytest.mark.parametrize(
    "case", recorded("openrouter", "reasoning", "reasoning_details")
)
def test_openrouter_deltas_accumulate_entry_by_entry(case: str) -> None:
    normalizer = providers.get("openrouter")
    events = stream("openrouter", case)
    reply = normalizer.parse_stream(events)
    body = normalizer.render_response(reply)
    message = body["choices"][0]["message"]
    assert (message.get("reasoning") or "") == _concatenated(events, "reasoning")
    texts: dict[Any, str] = {}
    for event in events:
        for choice in event.get("choices") or ():
            for entry in choice["delta"].get("reasoning_details") or ():
                key = (entry.get("index"), entry["type"])
                texts[key] = texts.get(key, "") + (entry.get("text") or "")
    entries = message["reasoning_details"]
    assert len(entries) == len(texts)
    assert [entry.get("text", "") for entry in entries] == list(texts.values())
    # the whole reply of the stream reads back to the same conversation
    assert normalizer.render_response(normalizer.parse_response(body)) == body


def test_a_stream_chunk_by_chunk_gives_the_reply_of_the_whole() -> None:
    """Deltas that split one reply: the stream and the reply agree."""
    reply = payload(
        "openrouter", "pydantic-ai-openrouter-map-messages-reasoning-response"
    )
    message = reply["choices"][0]["message"]
    entry = message["reasoning_details"][0]
    cut = len(entry["text"]) // 2
    base = {k: v for k, v in reply.items() if k not in ("choices", "usage")}
    base["object"] = "chat.completion.chunk"

    def chunk(delta: dict[str, Any], finish: Any = None) -> dict[str, Any]:
        choice = {"index": 0, "delta": delta, "finish_reason": finish}
        return {**base, "choices": [choice]}

    first = {**entry, "text": entry["text"][:cut]}
    del first["signature"]
    events = [
        chunk({"role": "assistant", "content": "", "reasoning": entry["text"][:cut],
               "reasoning_details": [first]}),
        chunk({"content": "", "reasoning": entry["text"][cut:],
               "reasoning_details": [{"type": "reasoning.text",
                                      "text": entry["text"][cut:],
                                      "index": entry["index"]}]}),
        chunk({"content": "", "reasoning_details": [
            {"type": "reasoning.text", "signature": entry["signature"],
             "index": entry["index"]}]}),
        chunk({"content": message["content"]}, "stop"),
    ]  # fmt: skip
    streamed = providers.get("openrouter").parse_stream(events)
    whole = providers.get("openrouter").parse_response(reply)
    part, expected = streamed[0].content[0], whole[0].content[0]  # type: ignore[attr-defined]
    assert (part.text, part.signature) == (expected.text, expected.signature)
    assert part.extras["openrouter"]["entry"]["text"] == entry["text"]


# Across formats ---------------------------------------------------------------------


def _anthropic_thinking() -> Conversation:
    return providers.get("anthropic").parse_response(
        {
            "id": "msg_1",
            "type": "message",
            "role": "assistant",
            "model": "claude-sonnet-4-5",
            "content": [
                {"type": "thinking", "thinking": "Let me see.", "signature": "EqQB"},
                {"type": "redacted_thinking", "data": "EmwKAhgB"},
                {"type": "text", "text": "Paris."},
            ],
            "stop_reason": "end_turn",
            "stop_sequence": None,
            "usage": {"input_tokens": 3, "output_tokens": 5},
        }
    )


def test_anthropic_thinking_goes_through_openrouter_as_anthropic_entries() -> None:
    report = providers.Report()
    body = providers.get("openrouter").render_request(
        Conversation([User("q"), *_anthropic_thinking()]), report=report
    )
    message = sent_back(body)
    assert message["reasoning_details"] == [
        {
            "type": "reasoning.text",
            "text": "Let me see.",
            "signature": "EqQB",
            "format": "anthropic-claude-v1",
            "index": 0,
        },
        {
            "type": "reasoning.encrypted",
            "data": "EmwKAhgB",
            "format": "anthropic-claude-v1",
            "index": 1,
        },
    ]
    assert message["content"] == "Paris."
    assert not [e for e in report.events if "reasoning" in e.where]


def test_signed_reasoning_of_openrouter_goes_back_only_to_its_signer() -> None:
    reply = payload(
        "openrouter", "pydantic-ai-openrouter-map-messages-reasoning-response"
    )
    conversation = Conversation(
        [User("q"), *providers.get("openrouter").parse_response(reply)]
    )
    # An entry of format anthropic-claude-v1 is Anthropic's thinking, signed
    # by Anthropic: Anthropic takes it back as it came.
    (entry,) = reply["choices"][0]["message"]["reasoning_details"]
    body = providers.get("anthropic").render_request(conversation)
    (thinking,) = [
        block
        for block in body["messages"][-1]["content"]
        if block["type"] == "thinking"
    ]
    assert thinking == {
        "type": "thinking",
        "thinking": entry["text"],
        "signature": entry["signature"],
    }
    for target in ("openai-chat", "openai-chat-reasoning", "gemini"):
        report = providers.Report()
        body = providers.get(target).render_request(
            conversation, report=report, unsupported="drop"
        )
        assert "ErcBCkgICBAC" not in json.dumps(body), target
        assert any(
            e.kind == "dropped" and "reasoning" in e.where for e in report.events
        ), target


def test_plain_reasoning_text_goes_to_every_format_that_takes_it() -> None:
    reply = payload(
        "openai-chat-reasoning", "pydantic-ai-deepseek-model-thinking-part-response"
    )
    text = reply["choices"][0]["message"]["reasoning_content"]
    conversation = Conversation(
        [User("q"), *providers.get("openai-chat-reasoning").parse_response(reply)]
    )
    report = providers.Report()
    body = providers.get("openrouter").render_request(conversation, report=report)
    assert sent_back(body)["reasoning"] == text and "reasoning_details" not in (
        sent_back(body)
    )
    assert not report.events
    # and back from OpenRouter's plain reasoning to reasoning_content
    plain = Conversation(
        [User("q"), Assistant([Reasoning("step one", provider="openrouter"), "ok"])]
    )
    body = providers.get("openai-chat-reasoning").render_request(plain)
    assert sent_back(body)["reasoning_content"] == "step one"
    # OpenAI Chat takes no reasoning: sent as text on request, else dropped
    report = providers.Report()
    body = providers.get("openai-chat").render_request(
        conversation, report=report, unsupported="drop"
    )
    assert text not in json.dumps(body)
    assert [e.kind for e in report.events] == ["dropped"]
    body = providers.get("openai-chat").render_request(conversation, reasoning="text")
    assert text in sent_back(body)["content"][0]["text"]
    # Ollama takes reasoning text as its thinking, from either dialect
    for source in (conversation, plain):
        report = providers.Report()
        body = providers.get("ollama").render_request(source, report=report)
        expected = text if source is conversation else "step one"
        assert sent_back(body)["thinking"] == expected
        assert not report.events
    # another provider's item id is not Ollama's to resolve: reported
    summary = Reasoning("a summary", provider="openai-responses", id="rs_1")
    report = providers.Report()
    body = providers.get("ollama").render_request(
        Conversation([User("q"), Assistant([summary, "ok"])]), report=report
    )
    assert sent_back(body)["thinking"] == "a summary"
    assert [(e.kind, e.where) for e in report.events] == [
        ("dropped", "canister 1 (assistant), part 0 (reasoning).id")
    ]


def test_openrouter_request_settings_are_kept_and_translated() -> None:
    body = payload("openrouter", "pydantic-ai-openrouter-with-native-options-request")
    assert {"models", "provider", "transforms"} <= body.keys()
    normalizer = providers.get("openrouter")
    request = normalizer.parse_full_request(copy.deepcopy(body))
    assert normalizer.render_full_request(request) == body
    report = providers.Report()
    providers.get("openai-chat").render_full_request(
        request, report=report, unsupported="drop"
    )
    dropped = {e.where for e in report.events if e.kind == "dropped"}
    assert {
        "extras.openrouter.body.models",
        "extras.openrouter.body.provider",
        "extras.openrouter.body.transforms",
    } <= dropped


def test_openrouter_reasoning_object_is_the_request_reasoning() -> None:
    normalizer = providers.get("openrouter")
    body = {
        "model": "anthropic/claude-sonnet-4.5",
        "messages": [{"role": "user", "content": "hi"}],
        "reasoning": {"max_tokens": 2048, "exclude": True},
        "usage": {"include": True},
    }
    request = normalizer.parse_full_request(body)
    assert request.reasoning is not None
    assert request.reasoning.budget_tokens == 2048
    assert normalizer.render_full_request(request) == body
    anthropic = providers.get("anthropic").render_full_request(
        request, unsupported="drop", max_tokens=4096
    )
    assert anthropic["thinking"] == {"type": "enabled", "budget_tokens": 2048}
    # from another format: OpenRouter's own spelling
    chat = providers.get("openai-chat").parse_full_request(
        {"model": "m", "messages": [], "reasoning_effort": "high"}
    )
    assert normalizer.render_full_request(chat)["reasoning"] == {"effort": "high"}


def test_openrouter_reasoning_keys_no_part_holds_are_reported_elsewhere() -> None:
    reply = payload("openrouter", "pydantic-ai-openrouter-with-reasoning-response")
    message = reply["choices"][0]["message"]
    (entry,) = message["reasoning_details"]
    assert entry["format"] == "unknown" and message["reasoning"] == entry["text"]
    # Text beside the entries unlike theirs says something: kept for
    # OpenRouter, reported for another format (refused under "error").
    changed = json.loads(json.dumps(reply))
    changed["choices"][0]["message"]["reasoning"] = "other text"
    read = providers.get("openrouter").parse_response(changed)
    assert providers.get("openrouter").render_response(read) == changed
    report = providers.Report()
    providers.get("openai-chat-reasoning").render_response(
        read, report=report, unsupported="drop"
    )
    wheres = {event.where: event for event in report.events}
    assert "canister 0 (assistant), part 0 (reasoning).reasoning" in wheres
    # The entry's format names where the reasoning came from: only OpenRouter
    # resolves it, reported as not sent.
    reference = wheres["canister 0 (assistant), part 0 (reasoning).format"]
    assert reference.kind == "dropped" and "not sent" in reference.detail
    # Refused under "error", as any key another format cannot say.
    (part,) = [part for part in read[0].content if part.type == "reasoning"]
    turn = Conversation([User("q"), Assistant([part, Text("a")])])
    target = providers.get("openai-chat-reasoning")
    with pytest.raises(UnsupportedContent, match=r"\(reasoning\)\.reasoning"):
        target.render_request(turn, unsupported="error")
