"""Another format's kept wire keys, across formats: carried where the target
spells the same thing, else reported and refused under ``unsupported="error"``
(the rule of ``canisters.providers._rules.kept``), through the public API."""

from __future__ import annotations

import base64
from typing import Any

import pytest

from canisters import MalformedPayload, UnsupportedContent, providers

from .requests_support import SDK_ACCEPTS, render

EPHEMERAL = {"type": "ephemeral"}
PDF = "data:application/pdf;base64," + base64.b64encode(b"%PDF-1.4 x").decode()
TARGETS = ["anthropic", "gemini", "ollama", "openai-responses"]


def lost(events: list[Any]) -> list[Any]:
    """The events saying something was not carried (not those saying where
    something goes, or what a format requires)."""
    return [event for event in events if event.kind not in ("moved", "synthesized")]


def dropped(events: list[Any]) -> set[str]:
    return {event.where for event in events if event.kind == "dropped"}


def cached_chat() -> dict[str, Any]:
    """A Chat body marking a system, a text, an image and a file part with
    Anthropic's cache_control, as OpenRouter- and LiteLLM-style clients do."""
    return {
        "model": "m",
        "messages": [
            {
                "role": "system",
                "content": [
                    {"type": "text", "text": "rules", "cache_control": EPHEMERAL}
                ],
            },
            {
                "role": "user",
                "content": [
                    {"type": "text", "text": "look", "cache_control": EPHEMERAL},
                    {
                        "type": "image_url",
                        "image_url": {"url": "https://example.com/a.png"},
                        "cache_control": EPHEMERAL,
                    },
                    {
                        "type": "file",
                        "file": {"file_data": PDF, "filename": "a.pdf"},
                        "cache_control": EPHEMERAL,
                    },
                ],
            },
        ],
    }


def test_chat_cache_markers_reach_anthropic_as_its_markers() -> None:
    body, events = render("openai-chat", cached_chat(), "anthropic")
    assert body["system"] == [
        {"type": "text", "text": "rules", "cache_control": EPHEMERAL}
    ]
    blocks = body["messages"][0]["content"]
    assert [block["type"] for block in blocks] == ["text", "image", "document"]
    assert all(block["cache_control"] == EPHEMERAL for block in blocks)
    assert not dropped(events)
    SDK_ACCEPTS["anthropic"](body)
    # Carried, not lost: the strict default renders the same body.
    strict, _ = render("openai-chat", cached_chat(), "anthropic", max_tokens=4096)
    assert strict == body


def test_a_message_level_cache_marker_goes_on_the_last_block() -> None:
    chat = {
        "model": "m",
        "messages": [
            {
                "role": "user",
                "content": [
                    {"type": "text", "text": "a"},
                    {"type": "text", "text": "b"},
                ],
                "cache_control": EPHEMERAL,
            }
        ],
    }
    body, events = render("openai-chat", chat, "anthropic")
    assert body["messages"][0]["content"] == [
        {"type": "text", "text": "a"},
        {"type": "text", "text": "b", "cache_control": EPHEMERAL},
    ]
    assert not dropped(events)


@pytest.mark.parametrize("target", ["gemini", "ollama", "openai-responses"])
def test_chat_cache_markers_are_reported_where_there_are_none(target: str) -> None:
    body, events = render("openai-chat", cached_chat(), target, unsupported="drop")
    assert "cache_control" not in str(body)
    lost = dropped(events)
    assert "canister 0 (supervisor), part 0 (text).cache_control" in lost
    assert "canister 1 (user), part 0 (text).cache_control" in lost
    with pytest.raises(UnsupportedContent, match="cache_control"):
        render("openai-chat", cached_chat(), target)


def detailed(detail: str) -> dict[str, Any]:
    return {
        "model": "m",
        "messages": [
            {
                "role": "user",
                "content": [
                    {
                        "type": "image_url",
                        "image_url": {
                            "url": "https://example.com/a.png",
                            "detail": detail,
                        },
                    }
                ],
            }
        ],
    }


def test_image_detail_becomes_gemini_media_resolution() -> None:
    body, events = render("openai-chat", detailed("low"), "gemini")
    part = body["contents"][0]["parts"][0]
    assert part["mediaResolution"] == {"level": "MEDIA_RESOLUTION_LOW"}
    assert not lost(events)
    SDK_ACCEPTS["gemini"](body)
    # And back: Gemini's resolution is Chat's detail.
    again, events = render("gemini", body, "openai-chat", model="m")
    assert again["messages"][0]["content"][0]["image_url"]["detail"] == "low"
    assert not events


def test_image_detail_goes_to_responses_as_its_detail() -> None:
    body, events = render("openai-chat", detailed("high"), "openai-responses")
    assert body["input"][0]["content"][0]["detail"] == "high"
    assert not events


@pytest.mark.parametrize("target", ["anthropic", "ollama"])
def test_image_detail_is_reported_where_there_is_none(target: str) -> None:
    request = detailed("low")
    request["messages"][0]["content"][0]["image_url"]["url"] = (
        "data:image/png;base64,iVBORw0KGgo="
    )
    _, events = render("openai-chat", request, target, unsupported="drop")
    assert "canister 0 (user), part 0 (image).detail" in dropped(events)
    with pytest.raises(UnsupportedContent, match="detail"):
        render("openai-chat", request, target, max_tokens=10)


def test_a_detail_gemini_cannot_say_is_reported() -> None:
    _, events = render(
        "openai-chat", detailed("original"), "gemini", unsupported="drop"
    )
    assert "canister 0 (user), part 0 (image).detail" in dropped(events)


def test_the_default_detail_says_nothing() -> None:
    for target in ("gemini", "openai-responses"):
        _, events = render("openai-chat", detailed("auto"), target)
        assert not lost(events), target


@pytest.mark.parametrize("target", TARGETS)
def test_a_message_name_and_unknown_keys_are_reported_and_refused(
    target: str,
) -> None:
    chat = {
        "model": "m",
        "messages": [{"role": "user", "content": "hi", "name": "bob", "x_trace": "t1"}],
    }
    body, events = render("openai-chat", chat, target, unsupported="drop")
    assert {"canister 0 (user).name", "canister 0 (user).x_trace"} <= dropped(events)
    assert "bob" not in str(body) and "t1" not in str(body)
    with pytest.raises(UnsupportedContent, match=r"canister 0 \(user\)\.name"):
        render("openai-chat", chat, target, max_tokens=10)


def test_keys_that_say_nothing_are_not_reported() -> None:
    chat = {
        "model": "m",
        "messages": [
            {"role": "user", "content": "hi"},
            {"role": "assistant", "content": "ok", "refusal": None, "annotations": []},
        ],
    }
    for target in TARGETS:
        _, events = render("openai-chat", chat, target, max_tokens=10)
        assert not dropped(events), target


def test_anthropic_markers_are_reported_for_chat() -> None:
    anthropic = {
        "model": "m",
        "max_tokens": 10,
        "messages": [
            {
                "role": "user",
                "content": [{"type": "text", "text": "hi", "cache_control": EPHEMERAL}],
            }
        ],
    }
    _, events = render("anthropic", anthropic, "openai-chat", unsupported="drop")
    assert dropped(events) == {"canister 0 (user), part 0 (text).cache_control"}


# Keys of Gemini, Ollama and Responses items no field models ---------------------------


def responses_with_ids(status: str = "completed") -> dict[str, Any]:
    return {
        "model": "m",
        "input": [
            {"type": "message", "role": "user", "content": "weather?"},
            {
                "type": "function_call",
                "id": "fc_1",
                "status": status,
                "call_id": "call_1",
                "name": "weather",
                "arguments": "{}",
            },
            {"type": "function_call_output", "call_id": "call_1", "output": "sun"},
        ],
    }


def test_a_responses_item_id_is_reported_as_not_sent_never_refused() -> None:
    body = responses_with_ids()
    request = providers.get("openai-responses").parse_full_request(body)
    assert providers.get("openai-responses").render_full_request(request) == body
    _, events = render("openai-responses", body, "anthropic", unsupported="error")
    said = [event for event in events if event.where.endswith(".id")]
    assert [(e.kind, e.where) for e in said] == [
        ("dropped", "canister 1 (invocation).id")
    ]
    assert "'fc_1'" in said[0].detail
    assert not [e for e in events if e.where.endswith(".status")]  # "completed"


def test_a_responses_item_status_that_says_something_is_refused() -> None:
    body = responses_with_ids("in_progress")
    with pytest.raises(UnsupportedContent, match="status"):
        render("openai-responses", body, "anthropic")
    _, events = render("openai-responses", body, "anthropic", unsupported="drop")
    assert "canister 1 (invocation).status" in dropped(events)


def test_a_gemini_system_role_other_than_user_is_reported() -> None:
    def body(role: str) -> dict[str, Any]:
        return {
            "systemInstruction": {"role": role, "parts": [{"text": "rules"}]},
            "contents": [{"role": "user", "parts": [{"text": "hi"}]}],
        }

    gemini = providers.get("gemini")
    for role in ("user", "system"):
        assert gemini.render_full_request(gemini.parse_full_request(body(role))) == (
            body(role)
        )
    _, events = render(
        "gemini", body("user"), "openai-chat", unsupported="error", model="m"
    )
    assert not lost(events)
    with pytest.raises(UnsupportedContent, match="role"):
        render("gemini", body("system"), "openai-chat")


def test_a_gemini_function_response_key_no_field_models_is_reported() -> None:
    body = {
        "contents": [
            {"role": "model", "parts": [{"functionCall": {"name": "f", "args": {}}}]},
            {
                "role": "user",
                "parts": [
                    {
                        "functionResponse": {
                            "name": "f",
                            "response": {"output": "x"},
                            "scheduling": "WHEN_IDLE",
                        }
                    }
                ],
            },
        ]
    }
    _, events = render("gemini", body, "anthropic", unsupported="drop")
    assert "canister 1 (result).scheduling" in dropped(events)
    with pytest.raises(UnsupportedContent, match="scheduling"):
        render("gemini", body, "anthropic")


def ollama_calls(first: int, kind: str = "function") -> dict[str, Any]:
    def call(name: str, index: int) -> dict[str, Any]:
        return {
            "type": kind,
            "function": {"index": index, "name": name, "arguments": {}},
        }

    return {
        "model": "m",
        "messages": [
            {"role": "user", "content": "go"},
            {
                "role": "assistant",
                "content": "",
                "tool_calls": [call("a", first), call("b", 1)],
            },
            {"role": "tool", "tool_name": "a", "content": "1"},
            {"role": "tool", "tool_name": "b", "content": "2"},
        ],
    }


def test_an_ollama_call_index_at_its_place_says_nothing_elsewhere() -> None:
    body = ollama_calls(0)
    ollama = providers.get("ollama")
    assert ollama.render_full_request(ollama.parse_full_request(body)) == body
    _, events = render("ollama", body, "openai-chat", unsupported="error")
    assert not lost(events)


def test_an_ollama_call_index_elsewhere_is_kept_and_reported() -> None:
    body = ollama_calls(5)
    ollama = providers.get("ollama")
    assert ollama.render_full_request(ollama.parse_full_request(body)) == body
    with pytest.raises(UnsupportedContent, match="index"):
        render("ollama", body, "openai-chat")


def test_an_ollama_call_type_other_than_function_is_refused_where_it_is() -> None:
    with pytest.raises(MalformedPayload, match=r"messages\[1\]\.tool_calls\[0\]\.type"):
        providers.get("ollama").parse_full_request(ollama_calls(0, "tool"))
