"""The cross-format rules of whole requests' settings, through the public
API: each defect found by a peer's test suite has its case here."""

from __future__ import annotations

import warnings
from typing import Any

import pytest

from canisters import providers

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


def where(events: list[Any], kind: str) -> set[str]:
    return {event.where for event in events if event.kind == kind}


def untyped_tool(source: str) -> dict[str, Any]:
    schema = {"properties": {"city": {"type": "string"}}, "required": ["city"]}
    if source == "anthropic":
        tool: dict[str, Any] = {"name": "weather", "input_schema": schema}
        return {"model": "m", "max_tokens": 10, "messages": [], "tools": [tool]}
    function = {"name": "weather", "parameters": schema}
    return {
        "model": "m",
        "messages": [{"role": "user", "content": "hi"}],
        "tools": [{"type": "function", "function": function}],
    }


def parameters_of(body: dict[str, Any], target: str) -> Any:
    tool = body["tools"][0]
    if target == "anthropic":
        return tool["input_schema"]
    if target == "gemini":
        return tool["functionDeclarations"][0]["parameters"]
    if target == "openai-responses":
        return tool["parameters"]
    return tool["function"]["parameters"]


@pytest.mark.parametrize(
    "target", ["anthropic", "gemini", "ollama", "openai-responses"]
)
def test_untyped_tool_parameters_get_an_object_root(target: str) -> None:
    body, events = render(
        "openai-chat", untyped_tool("openai-chat"), target, max_tokens=10
    )
    assert parameters_of(body, target)["type"] == "object"
    assert "tools[0].parameters.type" in where(events, "synthesized")
    SDK_ACCEPTS[target]({"model": "m", **body})


def test_untyped_tool_parameters_of_the_same_format_go_back_as_they_came() -> None:
    body = untyped_tool("openai-chat")
    assert (
        providers.get("openai-chat").render_full_request(
            providers.get("openai-chat").parse_full_request(body)
        )
        == body
    )
    body = untyped_tool("anthropic")
    request = providers.get("anthropic").parse_full_request(body)
    assert providers.get("anthropic").render_full_request(request) == body
