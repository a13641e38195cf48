"""Whole Anthropic Messages requests: ``parse_full_request`` / ``render_full_request``.

Every request body of the corpus and the hard cases come back exactly; rendered
bodies are accepted by the anthropic SDK's request types; what another format's
request holds and Anthropic cannot take is reported (or refused under
``unsupported="error"``), and the other way round.
"""

from __future__ import annotations

import json
import typing
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import canisters
from canisters import (
    CacheConfig,
    Generation,
    OutputFormat,
    ProviderTool,
    ReasoningConfig,
    Request,
    Tool,
    ToolChoice,
    User,
    providers,
)

from .budget import examples
from .providers_support import Corpus, adapter
from .requests_support import (
    bodies_of,
    comes_back_or_is_refused,
    comes_back_whole,
    payload,
    recorded_requests,
    render_reported,
)
from .strategies import json_values
from .test_providers_openai_chat_request import bodies as chat_bodies
from .test_providers_openai_chat_request import sdk_accepts as chat_sdk_accepts

NAME = "anthropic"
CORPUS = Corpus(NAME)
REQUESTS = [
    path for path in CORPUS.cases if json.loads(path.read_text())["kind"] == "request"
]
CHAT_REQUESTS = recorded_requests("openai-chat")
EXAMPLE = (
    Path(__file__).resolve().parent.parent
    / "documentation"
    / "examples"
    / "anthropic-request.json"
)
# The corpus holds one body the API refused (two user turns, an orphan result):
# its conversation goes back as it came only with incomplete="keep".
KEEP = {"incomplete": "keep"}


def normalizer() -> Any:
    return providers.get(NAME)


SAMPLING = {"temperature", "top_p", "top_k"}


def sdk_accepts(body: dict[str, Any]) -> None:
    """The anthropic SDK's request types take ``body``: every top-level key is
    one of ``MessageCreateParamsNonStreaming`` (``...Streaming`` for a body
    with ``stream: true``), and the whole validates."""
    from anthropic.types.message_create_params import (
        MessageCreateParamsNonStreaming,
        MessageCreateParamsStreaming,
    )

    kind: Any = (
        MessageCreateParamsStreaming
        if body.get("stream") is True
        else MessageCreateParamsNonStreaming
    )
    # This SDK version's types no longer declare the sampling settings (the
    # newest models refuse them); the API takes them for the models that do.
    known = set(typing.get_type_hints(kind)) | SAMPLING
    assert set(body) <= known, set(body) - known
    adapter(kind).validate_python(body)


def render(
    request: Request, target: str = NAME, **options: Any
) -> tuple[dict[str, Any], list[Any]]:
    return render_reported(providers.get(target), request, **options)


def outcomes(events: list[Any]) -> set[tuple[str, str]]:
    return {(event.kind, event.where) for event in events}


def chat(body: dict[str, Any]) -> Request:
    return providers.get("openai-chat").parse_full_request(  # type: ignore[no-any-return]
        {"messages": [{"role": "user", "content": "hi"}], **body}
    )


# The corpus -----------------------------------------------------------------------


@pytest.mark.parametrize("path", REQUESTS, ids=[path.stem for path in REQUESTS])
def test_every_recorded_request_comes_back_whole(path: Path) -> None:
    comes_back_whole(normalizer(), payload(path), **KEEP)


@pytest.mark.parametrize("path", REQUESTS, ids=[path.stem for path in REQUESTS])
def test_every_recorded_request_rendered_back_is_accepted_by_the_sdk(
    path: Path,
) -> None:
    body = payload(path)
    rendered = normalizer().render_full_request(
        normalizer().parse_full_request(body), **KEEP
    )
    if "model" not in body:  # a body holding the conversation alone
        assert set(body) <= {"system", "messages"}
        return
    sdk_accepts(rendered)


def test_the_corpus_is_read_into_neutral_fields() -> None:
    assert len(REQUESTS) >= 45
    body = CORPUS.load("sdk-all-params-system-blocks-cache-control.json")
    request = normalizer().parse_full_request(body)
    assert request.model == "claude-opus-4-6"
    assert request.generation == Generation(
        max_output_tokens=1024, temperature=1, top_p=0.7, top_k=5, stop=("string",)
    )
    assert request.reasoning == ReasoningConfig(
        enabled=True, effort="low", include_thoughts=True
    )
    assert request.output == OutputFormat("json_schema", {"foo": "bar"})
    assert request.tool_choice == ToolChoice("auto", parallel=False)
    assert request.user == "13803d75-b4b5-4c3e-b2a2-6f21399b021b"
    assert request.service_tier == "auto"
    assert request.stream is False
    tool = request.tools[0]
    assert isinstance(tool, Tool) and tool.strict is True
    assert tool.extras[NAME]["cache_control"] == {"type": "ephemeral", "ttl": "5m"}
    assert request.extras[NAME]["thinking"] == "adaptive"
    assert set(request.extras[NAME]["body"]) == {
        "cache_control",
        "container",
        "inference_geo",
        "user_profile_id",
    }
    # The markers stay where they are: on the tool, the system block, the body.
    rendered = normalizer().render_full_request(request)
    assert rendered["tools"][0]["cache_control"] == body["tools"][0]["cache_control"]
    assert rendered["system"][0]["cache_control"] == {"type": "ephemeral", "ttl": "5m"}
    assert rendered["cache_control"] == {"type": "ephemeral", "ttl": "5m"}


def test_the_readme_example_is_read_whole_and_sent_to_openai_chat() -> None:
    body = json.loads(EXAMPLE.read_text())
    request = normalizer().parse_full_request(body)
    assert request.extras == {NAME: {}}  # nothing left unread
    assert request.tools == (
        Tool(
            "get_weather",
            "Current weather for a city.",
            body["tools"][0]["input_schema"],
        ),
    )
    report = providers.Report()
    chat_body = providers.get("openai-chat").render_full_request(request, report=report)
    assert report.events == []
    assert chat_body["max_completion_tokens"] == 1024
    assert chat_body["tools"][0]["function"]["name"] == "get_weather"
    chat_sdk_accepts(chat_body)
    assert normalizer().render_full_request(request) == body


# Hard cases ----------------------------------------------------------------------

WEATHER = {
    "type": "object",
    "properties": {"city": {"type": "string"}},
    "required": ["city"],
}
MESSAGES = [{"role": "user", "content": "Weather in Paris?"}]
EPHEMERAL = {"type": "ephemeral"}

HARD_CASES: dict[str, dict[str, Any]] = {
    "everything": {
        "model": "claude-sonnet-4-5",
        "max_tokens": 20000,
        "system": [{"type": "text", "text": "Rules.", "cache_control": EPHEMERAL}],
        "messages": [
            {
                "role": "user",
                "content": [
                    {"type": "text", "text": "Weather?", "cache_control": EPHEMERAL}
                ],
            }
        ],
        "tools": [
            {
                "name": "get_weather",
                "description": "Weather of a city",
                "input_schema": WEATHER,
                "strict": True,
                "cache_control": EPHEMERAL,
            },
            {"type": "web_search_20250305", "name": "web_search", "max_uses": 3},
            {"type": "code_execution_20250825", "name": "code_execution"},
            {"type": "bash_20250124", "name": "bash"},
            {"type": "text_editor_20250728", "name": "str_replace_based_edit_tool"},
        ],
        "tool_choice": {"type": "auto", "disable_parallel_tool_use": True},
        "thinking": {"type": "enabled", "budget_tokens": 8000, "display": "omitted"},
        "output_config": {"effort": "medium"},
        "temperature": 1,
        "top_p": 0.99,
        "top_k": 40,
        "stop_sequences": ["END", "STOP"],
        "metadata": {"user_id": "user-1"},
        "service_tier": "standard_only",
        "cache_control": EPHEMERAL,
        "container": "container_1",
        "inference_geo": "us",
        "stream": False,
    },
    "adaptive-and-native-output": {
        "model": "claude-opus-4-6",
        "max_tokens": 1000,
        "messages": MESSAGES,
        "thinking": {"type": "adaptive"},
        "output_config": {
            "effort": "high",
            "format": {"type": "json_schema", "schema": WEATHER},
        },
    },
    "forced-tool-no-thinking": {
        "model": "claude-haiku-4-5",
        "max_tokens": 100,
        "messages": MESSAGES,
        "tools": [{"type": "custom", "name": "get_weather", "input_schema": WEATHER}],
        "tool_choice": {"type": "tool", "name": "get_weather"},
        "thinking": {"type": "disabled"},
    },
    "any-and-none": {
        "model": "m",
        "max_tokens": 10,
        "messages": MESSAGES,
        "tools": [{"name": "get_weather", "input_schema": WEATHER}],
        "tool_choice": {"type": "any", "disable_parallel_tool_use": False},
    },
    "no-max-tokens": {"model": "m", "messages": MESSAGES},
    "nulls-and-odd-shapes": {
        "model": "m",
        "messages": MESSAGES,
        "max_tokens": None,
        "temperature": "hot",
        "stop_sequences": [],
        "tools": [{"name": "f", "description": None, "input_schema": None}],
        "tool_choice": {"type": "tool"},
        "thinking": {"type": "enabled", "budget_tokens": 2000, "display": None},
        "output_config": {},
        "metadata": {"user_id": None},
        "service_tier": 1,
    },
}
# Beta fields the SDK's request type does not hold: kept, and given back.
BETA: dict[str, Any] = {
    "model": "m",
    "max_tokens": 10,
    "messages": MESSAGES,
    "mcp_servers": [{"type": "url", "url": "https://mcp.example/sse", "name": "x"}],
    "context_management": {"edits": [{"type": "clear_tool_uses_20250919"}]},
    "tools": [
        {"type": "mcp_toolset", "mcp_server_name": "x"},
        {
            "type": "computer_20250124",
            "name": "computer",
            "display_width_px": 1024,
            "display_height_px": 768,
        },
    ],
}
ALL_CASES = {**HARD_CASES, "beta": BETA}


@pytest.mark.parametrize("name", list(ALL_CASES))
def test_hard_cases_come_back_whole(name: str) -> None:
    comes_back_whole(normalizer(), ALL_CASES[name])


@pytest.mark.parametrize(
    "name", [name for name in HARD_CASES if name != "nulls-and-odd-shapes"]
)
def test_rendered_hard_cases_are_accepted_by_the_sdk(name: str) -> None:
    request = normalizer().parse_full_request(HARD_CASES[name])
    body = normalizer().render_full_request(request, unsupported="drop")
    if "max_tokens" not in body:  # what a body of its own omits stays omitted
        body["max_tokens"] = 1
    sdk_accepts(body)


def test_the_hard_cases_read_into_neutral_fields() -> None:
    request = normalizer().parse_full_request(HARD_CASES["everything"])
    assert request.tools[0] == Tool(
        "get_weather",
        "Weather of a city",
        WEATHER,
        strict=True,
        extras={NAME: {"cache_control": EPHEMERAL}},
    )
    assert [type(tool) for tool in request.tools[1:]] == [ProviderTool] * 4
    assert request.reasoning == ReasoningConfig(
        enabled=True, effort="medium", budget_tokens=8000, include_thoughts=False
    )
    assert request.tool_choice == ToolChoice("auto", parallel=False)
    assert request.generation.stop == ("END", "STOP")
    assert request.user == "user-1"
    assert set(request.extras[NAME]["body"]) == {
        "cache_control",
        "container",
        "inference_geo",
    }
    forced = normalizer().parse_full_request(HARD_CASES["forced-tool-no-thinking"])
    assert forced.tool_choice == ToolChoice.tool("get_weather")
    assert forced.reasoning == ReasoningConfig(enabled=False)
    assert forced.tools[0].extras == {NAME: {"type": "custom"}}  # type: ignore[union-attr]
    any_ = normalizer().parse_full_request(HARD_CASES["any-and-none"])
    assert any_.tool_choice == ToolChoice("required", parallel=True)
    odd = normalizer().parse_full_request(HARD_CASES["nulls-and-odd-shapes"])
    assert odd.reasoning is None and odd.tool_choice is None and odd.user is None
    assert set(odd.extras[NAME]["body"]) == {
        "max_tokens",
        "temperature",
        "stop_sequences",
        "tool_choice",
        "thinking",
        "output_config",
        "metadata",
        "service_tier",
    }
    beta = normalizer().parse_full_request(BETA)
    assert set(beta.extras[NAME]["body"]) == {"mcp_servers", "context_management"}
    assert beta.tools == tuple(ProviderTool(NAME, tool) for tool in BETA["tools"])


# From another format ---------------------------------------------------------------


def test_max_tokens_is_required_a_default_is_synthesized() -> None:
    request = chat({"model": "gpt-4.1"})
    body, events = render(request, model="claude-sonnet-4-5")
    assert body["max_tokens"] == 4096
    assert [(e.kind, e.where, e.rule) for e in events] == [
        ("synthesized", "generation.max_output_tokens", "the profile's default")
    ]
    # A synthesized value is never refused, and the option sets it.
    body = normalizer().render_full_request(request, max_tokens=512, model="c")
    assert body["max_tokens"] == 512
    sdk_accepts(body)


def test_effort_becomes_a_budget_through_the_table() -> None:
    request = chat({"reasoning_effort": "low", "max_completion_tokens": 10000})
    body, events = render(request, model="c")
    assert body["thinking"] == {"type": "enabled", "budget_tokens": 2048}
    rules = {event.where: (event.kind, event.rule) for event in events}
    assert rules["reasoning.effort"] == (
        "approximated",
        "reasoning table: low = 2048 tokens",
    )
    sdk_accepts(body)
    # A budget not below max_tokens: max_tokens is raised, reported.
    body, events = render(chat({"reasoning_effort": "high"}), model="c")
    assert body["thinking"]["budget_tokens"] == 16384
    assert body["max_tokens"] == 16384 + 4096
    assert ("conflict", "reasoning.budget_tokens") in outcomes(events)
    # A budget below Anthropic's minimum is raised to it.
    small = Request(
        [User("hi")],
        generation=Generation(max_output_tokens=5000),
        reasoning=ReasoningConfig(budget_tokens=100),
    )
    body, events = render(small, model="c")
    assert body["thinking"]["budget_tokens"] == 1024
    assert ("approximated", "reasoning.budget_tokens") in outcomes(events)
    sdk_accepts(body)


def test_adaptive_thinking_for_a_model_taking_efforts() -> None:
    caps = providers.Capabilities(
        reasoning="effort",
        efforts=("low", "medium", "high", "xhigh", "max"),
        temperature=(0, 1),
        default_max_tokens=4096,
        sampling_with_reasoning=False,
        forced_tool_with_reasoning=False,
        service_tiers=("auto", "standard_only"),
    )
    body, events = render(
        chat({"reasoning_effort": "high"}), model="c", capabilities=caps
    )
    assert body["thinking"] == {"type": "adaptive"}
    assert body["output_config"] == {"effort": "high"}
    assert outcomes(events) == {("synthesized", "generation.max_output_tokens")}
    sdk_accepts(body)


def test_thinking_off_and_back_to_an_effort() -> None:
    off = Request(
        [User("hi")], reasoning=ReasoningConfig(enabled=False, include_thoughts=True)
    )
    body, events = render(off, model="c")
    assert body["thinking"] == {"type": "disabled"}
    assert outcomes(events) == {
        ("synthesized", "generation.max_output_tokens"),
        ("dropped", "reasoning.include_thoughts"),
    }
    none = Request([User("hi")], reasoning=ReasoningConfig(effort="none"))
    body, events = render(none, model="c")
    assert body["thinking"] == {"type": "disabled"}
    assert ("approximated", "reasoning.effort") in outcomes(events)
    # A summary asked for (OpenAI Responses) shows the thinking summarized.
    summary = Request(
        [User("hi")],
        generation=Generation(max_output_tokens=4000),
        reasoning=ReasoningConfig(budget_tokens=2000, summary="auto"),
    )
    body, events = render(summary, model="c")
    assert body["thinking"] == {
        "type": "enabled",
        "budget_tokens": 2000,
        "display": "summarized",
    }
    assert outcomes(events) == {("approximated", "reasoning.summary")}
    sdk_accepts(body)
    # Anthropic's budget to OpenAI Chat's effort, through the same table.
    request = normalizer().parse_full_request(
        CORPUS.load("thinking-history-request.json")
    )
    chat_body, events = render(request, "openai-chat")
    assert chat_body["reasoning_effort"] == "high"  # 10000 tokens: medium < it <= high
    assert ("approximated", "reasoning.budget_tokens") in outcomes(events)


def test_thinking_with_a_forced_tool_is_settled_and_reported() -> None:
    request = chat(
        {
            "tools": [
                {"type": "function", "function": {"name": "a", "parameters": WEATHER}},
                {"type": "function", "function": {"name": "b", "parameters": WEATHER}},
            ],
            "tool_choice": {"type": "function", "function": {"name": "a"}},
            "reasoning_effort": "low",
            "max_completion_tokens": 8000,
        }
    )
    body, events = render(request, model="c")
    assert body["tool_choice"] == {"type": "auto"}
    assert [tool["name"] for tool in body["tools"]] == ["a"]
    assert ("conflict", "tool_choice") in outcomes(events)
    assert ("approximated", "tool_choice.names") in outcomes(events)
    sdk_accepts(body)
    exact_budget = Request(
        [User("hi")],
        tools=(Tool("a", parameters=WEATHER),),
        tool_choice=ToolChoice.tool("a"),
        generation=Generation(max_output_tokens=8000),
        reasoning=ReasoningConfig(enabled=True, budget_tokens=2000),
    )
    with pytest.raises(canisters.UnsupportedContent, match="request field tool_choice"):
        normalizer().render_full_request(exact_budget, model="c")


def test_sampling_is_left_out_while_thinking() -> None:
    request = chat(
        {
            "reasoning_effort": "low",
            "temperature": 0.5,
            "top_p": 0.5,
            "max_completion_tokens": 8000,
        }
    )
    body, events = render(request, model="c")
    assert "temperature" not in body and "top_p" not in body
    assert {
        ("conflict", "generation.temperature"),
        ("conflict", "generation.top_p"),
    } <= outcomes(events)
    top_k = Request(
        [User("hi")],
        generation=Generation(max_output_tokens=8000, top_k=5),
        reasoning=ReasoningConfig(budget_tokens=2000),
    )
    body, events = render(top_k, model="c")
    assert "top_k" not in body
    assert ("conflict", "generation.top_k") in outcomes(events)


def test_temperature_is_clamped_to_anthropics_range() -> None:
    body, events = render(chat({"temperature": 1.7}), model="c")
    assert body["temperature"] == 1.0
    assert [(e.where, e.rule) for e in events if e.kind == "approximated"] == [
        ("generation.temperature", "range 0.0 to 1.0")
    ]
    sdk_accepts(body)


def test_a_subset_of_tools_offers_only_those() -> None:
    tools = [
        {"type": "function", "function": {"name": name, "parameters": WEATHER}}
        for name in ("a", "b", "c")
    ]
    allowed = {
        "type": "allowed_tools",
        "allowed_tools": {
            "mode": "required",
            "tools": [
                {"type": "function", "function": {"name": "a"}},
                {"type": "function", "function": {"name": "b"}},
            ],
        },
    }
    body, events = render(chat({"tools": tools, "tool_choice": allowed}), model="c")
    assert body["tool_choice"] == {"type": "any"}
    assert [tool["name"] for tool in body["tools"]] == ["a", "b"]
    event = next(e for e in events if e.where == "tool_choice.names")
    assert event.kind == "approximated" and "c left out" in event.detail
    sdk_accepts(body)


def test_parallel_calls_are_the_inverse_inside_the_tool_choice() -> None:
    tools = [{"type": "function", "function": {"name": "a", "parameters": WEATHER}}]
    body, _ = render(
        chat({"tools": tools, "tool_choice": "required", "parallel_tool_calls": False}),
        model="c",
    )
    assert body["tool_choice"] == {"type": "any", "disable_parallel_tool_use": True}
    body, events = render(
        chat({"tools": tools, "parallel_tool_calls": False}), model="c"
    )
    assert body["tool_choice"] == {"type": "auto", "disable_parallel_tool_use": True}
    assert ("synthesized", "tool_choice.mode") in outcomes(events)
    sdk_accepts(body)
    body, _ = render(chat({"tools": tools, "parallel_tool_calls": True}), model="c")
    assert "tool_choice" not in body  # Anthropic's default
    body, events = render(
        chat({"tools": tools, "tool_choice": "none", "parallel_tool_calls": False}),
        model="c",
    )
    assert body["tool_choice"] == {"type": "none"}
    assert ("dropped", "tool_choice.parallel") in outcomes(events)
    sdk_accepts(body)
    # And back: disable_parallel_tool_use to parallel_tool_calls.
    request = normalizer().parse_full_request(HARD_CASES["everything"])
    chat_body, _ = render(request, "openai-chat")
    assert chat_body["parallel_tool_calls"] is False
    assert chat_body["tool_choice"] == "auto"


def test_cache_markers_stay_for_anthropic_and_are_reported_elsewhere() -> None:
    request = normalizer().parse_full_request(HARD_CASES["everything"])
    chat_body, events = render(request, "openai-chat")
    found = outcomes(events)
    assert ("dropped", "tools[0].extras.anthropic") in found
    assert ("dropped", "extras.anthropic.body.cache_control") in found
    assert {("dropped", f"tools[{index}]") for index in range(1, 5)} <= found
    assert {  # the system block's and the user block's markers
        ("dropped", "canister 0 (supervisor), part 0 (text).cache_control"),
        ("dropped", "canister 1 (user), part 0 (text).cache_control"),
    } <= found
    assert "cache_control" not in json.dumps(chat_body)
    chat_sdk_accepts(chat_body)


def test_markers_on_calls_and_results_are_reported_too() -> None:
    marked = {"cache_control": EPHEMERAL}
    body = {
        "model": "m",
        "max_tokens": 10,
        "messages": [
            {"role": "user", "content": "hi"},
            {
                "role": "assistant",
                "content": [
                    {"type": "tool_use", "id": "t", "name": "f", "input": {}, **marked}
                ],
            },
            {
                "role": "user",
                "content": [
                    {
                        "type": "tool_result",
                        "tool_use_id": "t",
                        "content": "a",
                        **marked,
                    }
                ],
            },
        ],
    }
    request = normalizer().parse_full_request(body)
    assert normalizer().render_full_request(request) == body
    _, events = render(request, "openai-chat")
    assert outcomes(events) == {
        ("dropped", "canister 1 (invocation).cache_control"),
        ("dropped", "canister 2 (result).cache_control"),
    }
    with pytest.raises(canisters.UnsupportedContent, match="cache_control"):
        providers.get("openai-chat").render_full_request(request)


def test_structured_output_native_or_as_a_forced_tool() -> None:
    schema_format = {
        "type": "json_schema",
        "json_schema": {"name": "answer", "schema": WEATHER, "strict": True},
    }
    request = chat({"response_format": schema_format})
    # The conservative profile: a forced tool carries the answer.
    body, events = render(request, model="c")
    assert body["tools"] == [
        {
            "name": "answer",
            "description": "Give the final answer in this shape.",
            "input_schema": WEATHER,
            "strict": True,
        }
    ]
    assert body["tool_choice"] == {"type": "tool", "name": "answer"}
    assert ("approximated", "output") in outcomes(events)
    sdk_accepts(body)
    # A model taking the native format.
    caps = attrs_evolve(structured_output="native")
    body, events = render(request, model="c", capabilities=caps)
    assert body["output_config"] == {
        "format": {"type": "json_schema", "schema": WEATHER}
    }
    assert ("dropped", "output.name") in outcomes(events)
    sdk_accepts(body)
    # No JSON mode without a schema.
    body, events = render(chat({"response_format": {"type": "json_object"}}), model="c")
    assert "output_config" not in body and "tools" not in body
    assert ("dropped", "output") in outcomes(events)
    # The answer's tool cannot be forced while thinking.
    thinking = chat(
        {
            "response_format": schema_format,
            "reasoning_effort": "low",
            "max_completion_tokens": 8000,
        }
    )
    body, events = render(thinking, model="c")
    assert body["tool_choice"] == {"type": "auto"}
    assert ("conflict", "output") in outcomes(events)


def attrs_evolve(**changes: Any) -> providers.Capabilities:
    import attrs

    return attrs.evolve(providers.capabilities_for(NAME), **changes)


def test_user_tier_and_stops_translate_both_ways() -> None:
    request = chat(
        {
            "user": "u-1",
            "service_tier": "default",
            "stop": ["END"],
            "metadata": {"run": "1"},
            "seed": 3,
        }
    )
    body, events = render(request, model="c")
    assert body["metadata"] == {"user_id": "u-1"}
    assert body["service_tier"] == "standard_only"
    assert body["stop_sequences"] == ["END"]
    assert outcomes(events) >= {
        ("approximated", "service_tier"),
        ("dropped", "metadata"),
        ("dropped", "generation.seed"),
    }
    sdk_accepts(body)
    body, events = render(chat({"stop": ["END", " ", "\n"]}), model="c")
    assert body["stop_sequences"] == ["END"]
    assert [(e.kind, e.where, e.rule) for e in events][-1] == (
        "approximated",
        "generation.stop",
        "no stop sequence of whitespace only",
    )
    body, events = render(chat({"service_tier": "flex"}), model="c")
    assert "service_tier" not in body
    assert ("dropped", "service_tier") in outcomes(events)
    request = normalizer().parse_full_request(HARD_CASES["everything"])
    chat_body, events = render(request, "openai-chat")
    assert chat_body["user"] == "user-1"
    assert chat_body["service_tier"] == "default"
    assert chat_body["stop"] == ["END", "STOP"]
    assert ("dropped", "generation.top_k") in outcomes(events)


def test_beta_fields_are_reported_dropped_elsewhere() -> None:
    request = normalizer().parse_full_request(BETA)
    body, events = render(request, "openai-chat")
    assert {
        ("dropped", "extras.anthropic.body.mcp_servers"),
        ("dropped", "extras.anthropic.body.context_management"),
        ("dropped", "tools[0]"),
        ("dropped", "tools[1]"),
    } <= outcomes(events)
    assert set(body) == {"model", "messages", "max_completion_tokens"}


def test_cache_and_tool_without_parameters_from_elsewhere() -> None:
    request = Request(
        [User("hi")],
        tools=(Tool("ping"),),
        cache=CacheConfig("k"),
    )
    body, events = render(request, model="c")
    assert body["tools"] == [
        {"name": "ping", "input_schema": {"type": "object", "properties": {}}}
    ]
    assert {("synthesized", "tools[0].parameters"), ("dropped", "cache")} <= outcomes(
        events
    )
    sdk_accepts(body)


def test_error_policy_refuses_anything_not_exact() -> None:
    with pytest.raises(canisters.UnsupportedContent, match=r"generation\.seed"):
        normalizer().render_full_request(
            Request([User("hi")], generation=Generation(seed=1))
        )
    with pytest.raises(canisters.UnsupportedContent, match="temperature"):
        normalizer().render_full_request(
            Request([User("hi")], generation=Generation(temperature=2))
        )


# Every corpus body across: accepted by the target's SDK, every loss reported ------


def _losses_reported(request: Request, events: list[Any], source: str) -> None:
    found = outcomes(events)
    own = request.extras.get(source) or {}
    for key in own.get("body", {}):
        assert ("dropped", f"extras.{source}.body.{key}") in found, key
    for index, tool in enumerate(request.tools):
        if isinstance(tool, ProviderTool):
            assert ("dropped", f"tools[{index}]") in found
        elif tool.extras.get(source):
            assert ("dropped", f"tools[{index}].extras.{source}") in found


@pytest.mark.parametrize("path", CHAT_REQUESTS, ids=[p.stem for p in CHAT_REQUESTS])
def test_every_openai_chat_request_renders_for_anthropic(path: Path) -> None:
    body = json.loads(path.read_text())["payload"]
    request = providers.get("openai-chat").parse_full_request(body)
    try:
        rendered, events = render(request, model=request.model or "claude-x")
    except canisters.CanistersError:
        return  # refused with the library's error
    sdk_accepts(rendered)
    _losses_reported(request, events, "openai-chat")
    assert rendered["max_tokens"] == (request.generation.max_output_tokens or 4096)


@pytest.mark.parametrize("path", REQUESTS, ids=[p.stem for p in REQUESTS])
def test_every_anthropic_request_renders_for_openai_chat(path: Path) -> None:
    case = json.loads(path.read_text())
    request = normalizer().parse_full_request(case["payload"])
    try:
        rendered, events = render(request, "openai-chat")
    except canisters.CanistersError:
        return  # refused with the library's error
    if "model" not in rendered:
        rendered["model"] = "m"
    chat_sdk_accepts(rendered)
    _losses_reported(request, events, NAME)
    if request.generation.top_k is not None:
        assert ("dropped", "generation.top_k") in outcomes(events)


# Any body: refused with the library's error, or given back exactly ------------------

_KEYS = [
    "model",
    "stream",
    "max_tokens",
    "temperature",
    "top_p",
    "top_k",
    "stop_sequences",
    "tools",
    "tool_choice",
    "thinking",
    "output_config",
    "metadata",
    "service_tier",
    "cache_control",
    "container",
]
_tool = st.fixed_dictionaries(
    {"name": st.sampled_from(["f", "g", ""]) | json_values},
    optional={
        "type": st.sampled_from(["custom", "web_search_20250305"]) | json_values,
        "description": st.text(max_size=5) | json_values,
        "input_schema": st.just(WEATHER) | json_values,
        "strict": st.booleans() | json_values,
        "cache_control": st.just(EPHEMERAL) | json_values,
    },
)
_values = {
    "tools": st.lists(_tool, max_size=3),
    "tool_choice": st.fixed_dictionaries(
        {"type": st.sampled_from(["auto", "any", "tool", "none", "x"])},
        optional={
            "name": st.sampled_from(["f", "g"]) | json_values,
            "disable_parallel_tool_use": st.booleans() | json_values,
        },
    ),
    "thinking": st.fixed_dictionaries(
        {"type": st.sampled_from(["enabled", "adaptive", "disabled", "x"])},
        optional={
            "budget_tokens": st.integers(0, 5000) | json_values,
            "display": st.sampled_from(["summarized", "omitted"]) | json_values,
        },
    ),
    "output_config": st.fixed_dictionaries(
        {},
        optional={
            "effort": st.sampled_from(["low", "max"]) | json_values,
            "format": st.just({"type": "json_schema", "schema": WEATHER}) | json_values,
        },
    ),
    "metadata": st.fixed_dictionaries(
        {}, optional={"user_id": st.text(max_size=3) | json_values, "x": json_values}
    ),
    "stop_sequences": st.lists(st.text(max_size=3), max_size=3),
    "temperature": st.floats(0, 1) | st.integers(0, 1),
}


def bodies() -> st.SearchStrategy[dict[str, Any]]:
    return bodies_of({"messages": MESSAGES}, _KEYS, _values)


@settings(max_examples=examples(300), deadline=None)
@given(bodies())
def test_any_body_comes_back_exactly_or_is_refused(body: dict[str, Any]) -> None:
    comes_back_or_is_refused(normalizer(), body)


@settings(max_examples=examples(150), deadline=None)
@given(chat_bodies())
def test_any_openai_chat_body_renders_for_anthropic_or_is_refused(
    body: dict[str, Any],
) -> None:
    try:
        request = providers.get("openai-chat").parse_full_request(body)
        rendered, events = render(request, model="claude-x")
    except canisters.ProviderError:
        return  # refused with the library's error
    sdk_accepts(rendered)
    _losses_reported(request, events, "openai-chat")
