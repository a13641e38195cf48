"""The cross-format rules of conversations, through the public API: each
defect found by a peer's test suite has its case here."""

from __future__ import annotations

import warnings
from typing import Any

import pytest

from canisters import ProviderError, providers

from .requests_support import SDK_ACCEPTS

TARGETS = ["anthropic", "gemini", "ollama", "openai-responses", "openai-chat"]


def render(
    source: str, body: dict[str, Any], target: str, **options: Any
) -> tuple[dict[str, Any], list[Any]]:
    request = providers.get(source).parse_full_request(body)
    report = providers.Report()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", providers.FidelityWarning)
        rendered = providers.get(target).render_full_request(
            request, report=report, **options
        )
    return rendered, list(report.events)


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
