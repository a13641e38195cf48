"""The cross-format rules of whole requests' settings, through the public
API: each defect found by a peer's test suite has its case here."""

from __future__ import annotations

import warnings
from typing import Any

import attrs
import pytest

from canisters import (
    CacheConfig,
    MalformedPayload,
    Request,
    UnsupportedContent,
    User,
    providers,
)

from .requests_support import SDK_ACCEPTS, render

TARGETS = ["anthropic", "gemini", "ollama", "openai-responses", "openai-chat"]


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


def effort_profile(target: str) -> Any:
    return attrs.evolve(providers.capabilities_for(target), reasoning="effort")


def chat_effort(effort: str) -> dict[str, Any]:
    return {
        "model": "m",
        "messages": [{"role": "user", "content": "hi"}],
        "reasoning_effort": effort,
    }


def test_minimal_effort_to_an_anthropic_effort_profile_is_the_nearest_level() -> None:
    caps = effort_profile("anthropic")
    body, events = render(
        "openai-chat",
        chat_effort("minimal"),
        "anthropic",
        capabilities=caps,
        unsupported="drop",
    )
    assert body["output_config"] == {"effort": "low"}
    assert "reasoning.effort" in where(events, "approximated")
    SDK_ACCEPTS["anthropic"](body)
    with pytest.raises(UnsupportedContent, match=r"reasoning\.effort"):
        render("openai-chat", chat_effort("minimal"), "anthropic", capabilities=caps)


def test_a_level_anthropic_takes_goes_as_it_is() -> None:
    caps = effort_profile("anthropic")
    body, events = render(
        "openai-chat", chat_effort("high"), "anthropic", capabilities=caps
    )
    assert body["output_config"] == {"effort": "high"}
    assert "reasoning.effort" not in where(events, "approximated")


def test_no_effort_to_a_gemini_level_profile_is_its_least_level() -> None:
    caps = effort_profile("gemini")
    body, events = render(
        "openai-chat",
        chat_effort("none"),
        "gemini",
        capabilities=caps,
        unsupported="drop",
    )
    assert body["generationConfig"]["thinkingConfig"] == {"thinkingLevel": "minimal"}
    assert "reasoning.effort" in where(events, "approximated")
    SDK_ACCEPTS["gemini"](body)


@pytest.mark.parametrize("target", ["gemini", "anthropic"])
def test_no_effort_to_a_budget_profile_turns_thinking_off(target: str) -> None:
    # The default profiles take budgets: effort "none" is reasoning off there
    # (a budget of 0, thinking disabled), never left out unsaid.
    body, events = render(
        "openai-chat", chat_effort("none"), target, max_tokens=10, unsupported="drop"
    )
    if target == "gemini":
        assert body["generationConfig"]["thinkingConfig"] == {"thinkingBudget": 0}
    else:
        assert body["thinking"] == {"type": "disabled"}
    assert "reasoning.effort" in where(events, "approximated")
    SDK_ACCEPTS[target]({"model": "m", **body})
    with pytest.raises(UnsupportedContent, match=r"reasoning\.effort"):
        render("openai-chat", chat_effort("none"), target, max_tokens=10)


def test_an_effort_above_a_gemini_level_profile_is_its_highest() -> None:
    caps = effort_profile("gemini")
    anthropic = {
        "model": "m",
        "max_tokens": 10,
        "messages": [{"role": "user", "content": "hi"}],
        "output_config": {"effort": "max"},
    }
    body, events = render(
        "anthropic", anthropic, "gemini", capabilities=caps, unsupported="drop"
    )
    assert body["generationConfig"]["thinkingConfig"] == {"thinkingLevel": "high"}
    assert "reasoning.effort" in where(events, "approximated")


def test_a_level_off_the_scale_is_left_out_and_reported() -> None:
    caps = attrs.evolve(providers.capabilities_for("openai-chat"), efforts=("low",))
    body, events = render(
        "openai-responses",
        {"model": "m", "input": "hi", "reasoning": {"effort": "turbo"}},
        "openai-chat",
        capabilities=caps,
        unsupported="drop",
    )
    assert "reasoning_effort" not in body
    assert "reasoning.effort" in where(events, "dropped")


def test_gemini_bodies_leave_the_model_to_the_url_and_name_it_in_the_report() -> None:
    body, events = render(
        "openai-chat", chat_effort("low"), "gemini", unsupported="drop"
    )
    assert "model" not in body
    moved = [event for event in events if event.where == "model"]
    assert [event.kind for event in moved] == ["moved"]
    assert "models/m:generateContent" in moved[0].detail
    # The model= option too; nothing refused for it under unsupported="error".
    request = providers.get("openai-chat").parse_full_request(
        {"model": "m", "messages": [{"role": "user", "content": "hi"}]}
    )
    report = providers.Report()
    strict = providers.get("gemini").render_full_request(
        request, model="gemini-2.5-flash", report=report
    )
    assert "model" not in strict
    assert "gemini-2.5-flash" in report.events[0].detail


def test_a_gemini_body_that_names_its_model_gets_it_back() -> None:
    body = {"model": "gemini-2.5-flash", "contents": [{"parts": [{"text": "hi"}]}]}
    gemini = providers.get("gemini")
    assert gemini.render_full_request(gemini.parse_full_request(body)) == body


@pytest.mark.parametrize("target", ["openai-chat", "openai-responses"])
def test_openai_formats_check_retention_and_metadata_values(target: str) -> None:
    request = Request(
        [User("hi")],
        model="m",
        cache=CacheConfig("k", "1h"),
        metadata={"run": "7", "attempt": 2},
    )
    report = providers.Report()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", providers.FidelityWarning)
        body = providers.get(target).render_full_request(
            request, unsupported="drop", report=report
        )
    assert body["prompt_cache_key"] == "k"
    assert "prompt_cache_retention" not in body
    assert body["metadata"] == {"run": "7"}
    assert {"cache.retention", "metadata.attempt"} <= where(report.events, "dropped")
    SDK_ACCEPTS[target](body)
    with pytest.raises(UnsupportedContent, match="retention"):
        providers.get(target).render_full_request(request)


def test_gemini_property_ordering_is_carried_or_reported() -> None:
    schema = {
        "type": "OBJECT",
        "properties": {"b": {"type": "STRING"}, "a": {"type": "STRING"}},
        "propertyOrdering": ["b", "a"],
    }
    gemini = {
        "contents": [{"role": "user", "parts": [{"text": "hi"}]}],
        "tools": [{"functionDeclarations": [{"name": "f", "parameters": schema}]}],
    }
    request = providers.get("gemini").parse_full_request(gemini)
    tool = request.tools[0]
    assert tool.parameters["propertyOrdering"] == ["b", "a"]
    body, _ = render("gemini", gemini, "anthropic", max_tokens=10)
    assert body["tools"][0]["input_schema"]["propertyOrdering"] == ["b", "a"]
    # OpenAI's strict mode takes no such keyword: removed, reported.
    strict = attrs.evolve(request, tools=(attrs.evolve(tool, strict=True),))
    report = providers.Report()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", providers.FidelityWarning)
        chat = providers.get("openai-chat").render_full_request(
            strict, unsupported="drop", report=report
        )
    assert "propertyOrdering" not in chat["tools"][0]["function"]["parameters"]
    assert "tools[0].parameters.propertyOrdering" in where(
        report.events, "approximated"
    )


# A result's name where results carry none ---------------------------------------------


def _gemini_round(result_name: str) -> dict[str, Any]:
    return {
        "contents": [
            {"role": "user", "parts": [{"text": "weather?"}]},
            {
                "role": "model",
                "parts": [
                    {"functionCall": {"id": "c1", "name": "weather", "args": {}}}
                ],
            },
            {
                "role": "user",
                "parts": [
                    {
                        "functionResponse": {
                            "id": "c1",
                            "name": result_name,
                            "response": {"output": "sun"},
                        }
                    }
                ],
            },
        ]
    }


@pytest.mark.parametrize("target", ["anthropic", "openai-chat", "openai-responses"])
def test_a_result_named_unlike_its_call_is_refused_where_results_carry_no_name(
    target: str,
) -> None:
    request = providers.get("gemini").parse_full_request(_gemini_round("weather"))
    report = providers.Report()
    providers.get(target).render_full_request(request, report=report)
    assert not [e for e in report.events if e.where.endswith(".name")]
    request = providers.get("gemini").parse_full_request(_gemini_round("forecast"))
    with pytest.raises(UnsupportedContent, match=r"canister 2 \(result\)\.name"):
        providers.get(target).render_full_request(request)
    report = providers.Report()
    with pytest.warns(providers.FidelityWarning):
        providers.get(target).render_full_request(
            request, report=report, unsupported="drop"
        )
    assert [e.where for e in report.events if e.where.endswith(".name")] == [
        "canister 2 (result).name"
    ]


def test_a_result_name_goes_to_a_format_whose_results_carry_one() -> None:
    request = providers.get("gemini").parse_full_request(_gemini_round("forecast"))
    body = providers.get("ollama").render_full_request(request)
    assert body["messages"][-1]["tool_name"] == "forecast"


@pytest.mark.parametrize(
    ("block", "where"),
    [
        (
            {
                "type": "image",
                "source": {
                    "type": "base64",
                    "media_type": "image/svg+xml",
                    "data": "PHN2Zz4=",
                },
            },
            r"\$\.messages\[0\]\.content\[0\]\.source\.media_type",
        ),
        (
            {
                "type": "document",
                "source": {"type": "base64", "media_type": "text/html", "data": "PGI+"},
            },
            r"\$\.messages\[0\]\.content\[0\]\.source\.media_type",
        ),
        (
            {
                "type": "document",
                "source": {"type": "text", "media_type": "text/html", "data": "<b>"},
            },
            r"\$\.messages\[0\]\.content\[0\]\.source\.media_type",
        ),
    ],
)
def test_an_anthropic_media_type_outside_the_api_enumeration_is_refused_where_it_is(
    block: dict[str, Any], where: str
) -> None:
    body = {
        "model": "m",
        "max_tokens": 5,
        "messages": [{"role": "user", "content": [block]}],
    }
    with pytest.raises(MalformedPayload, match=where):
        providers.get("anthropic").parse_full_request(body)
    with pytest.raises(MalformedPayload, match=where):
        providers.get("anthropic").parse_request(body)


@pytest.mark.parametrize(
    ("target", "key"),
    [
        ("anthropic", "model"),
        ("openai-chat", "model"),
        ("openai-responses", "model"),
        ("ollama", "model"),
        ("bedrock-converse", "modelId"),
    ],
)
def test_a_request_naming_no_model_is_reported_where_the_body_needs_one(
    target: str, key: str
) -> None:
    # Gemini's model is in the URL: its request body names none.
    gemini = {"contents": [{"role": "user", "parts": [{"text": "hi"}]}]}
    request = providers.get("gemini").parse_full_request(gemini)
    report = providers.Report()
    body = providers.get(target).render_full_request(request, report=report)
    assert key not in body
    (event,) = [event for event in report.events if event.where == "model"]
    assert "model=" in event.detail and repr(key) in event.detail
    # Given, it goes where the body takes it, unreported.
    report = providers.Report()
    body = providers.get(target).render_full_request(
        request, report=report, model="m-1"
    )
    assert body[key] == "m-1"
    assert not [event for event in report.events if event.where == "model"]


def test_anthropics_empty_system_string_goes_back_as_it_came() -> None:
    body = {
        "model": "m",
        "max_tokens": 5,
        "system": "",
        "messages": [{"role": "user", "content": "hi"}],
    }
    anthropic = providers.get("anthropic")
    assert anthropic.render_full_request(anthropic.parse_full_request(body)) == body
    assert anthropic.render_request(anthropic.parse_request(body)) == {
        "system": "",
        "messages": body["messages"],
    }
