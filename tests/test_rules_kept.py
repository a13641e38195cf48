"""Another format's kept wire keys, across formats: carried where the target
spells the same thing, else reported and refused under ``unsupported="error"``
(the rule of ``canisters.providers._rules.kept``), through the public API."""

from __future__ import annotations

import base64
from typing import Any

import pytest

from canisters import UnsupportedContent

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
    again, events = render("gemini", body, "openai-chat")
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
