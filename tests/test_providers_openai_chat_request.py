"""Whole OpenAI Chat requests: ``parse_full_request`` / ``render_full_request``.

Every request body of the corpus and the survey's hard cases come back exactly;
rendered bodies are accepted by the openai SDK's request types; what another
format's request holds and Chat cannot take is reported, or refused under
``unsupported="error"``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

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

from .providers_support import Corpus
from .requests_support import (
    bodies_of,
    chat_functions,
    chat_tools,
    comes_back_or_is_refused,
    comes_back_whole,
    openai_chat_accepts,
    payload,
    recorded_requests,
    render_reported,
)

NAME = "openai-chat"
CORPUS = Corpus(NAME)
REQUESTS = recorded_requests(NAME)


def normalizer() -> Any:
    return providers.get(NAME)


sdk_accepts = openai_chat_accepts
"""The openai SDK's request types take a body."""


@pytest.mark.parametrize("path", REQUESTS, ids=[path.stem for path in REQUESTS])
def test_every_recorded_request_comes_back_whole(path: Path) -> None:
    body = payload(path)
    request = comes_back_whole(normalizer(), body)
    # The conversation alone is what parse_request reads.
    assert len(request.conversation) == len(normalizer().parse_request(body))


WEATHER = {
    "type": "object",
    "properties": {"city": {"type": "string"}},
    "required": ["city"],
    "additionalProperties": False,
}
MESSAGES = [{"role": "user", "content": "Weather in Paris?"}]

HARD_CASES: dict[str, dict[str, Any]] = {
    "everything": {
        "model": "gpt-4.1",
        "messages": MESSAGES,
        "tools": [
            {
                "type": "function",
                "function": {
                    "name": "get_weather",
                    "description": "Weather of a city",
                    "parameters": WEATHER,
                    "strict": True,
                },
            },
            {"type": "custom", "custom": {"name": "grammar", "description": "free"}},
        ],
        "tool_choice": "required",
        "parallel_tool_calls": False,
        "response_format": {
            "type": "json_schema",
            "json_schema": {
                "name": "answer",
                "description": "The answer",
                "schema": WEATHER,
                "strict": True,
            },
        },
        "max_completion_tokens": 500,
        "temperature": 0.2,
        "top_p": 0.9,
        "stop": ["END", "STOP"],
        "seed": 7,
        "presence_penalty": 0.5,
        "frequency_penalty": -0.5,
        "n": 2,
        "logprobs": True,
        "top_logprobs": 3,
        "reasoning_effort": "minimal",
        "prompt_cache_key": "tenant-1",
        "prompt_cache_retention": "24h",
        "user": "user-1",
        "safety_identifier": "hash-1",
        "metadata": {"run": "42"},
        "store": True,
        "service_tier": "flex",
        "verbosity": "low",
        "modalities": ["text"],
        "logit_bias": {"50256": -100},
        "stream": False,
    },
    "legacy-spellings": {
        "model": "gpt-4o",
        "messages": MESSAGES,
        "max_tokens": 64,
        "stop": "END",
        "response_format": {"type": "json_object"},
    },
    "one-tool-allowed": {
        "model": "gpt-4o",
        "messages": MESSAGES,
        "tools": [{"type": "function", "function": {"name": "get_weather"}}],
        "tool_choice": {
            "type": "allowed_tools",
            "allowed_tools": {
                "mode": "required",
                "tools": [{"type": "function", "function": {"name": "get_weather"}}],
            },
        },
    },
    "one-tool-forced": {
        "model": "gpt-4o",
        "messages": MESSAGES,
        "tools": [
            {
                "type": "function",
                "function": {"name": "get_weather", "parameters": WEATHER},
            }
        ],
        "tool_choice": {"type": "function", "function": {"name": "get_weather"}},
    },
    "nulls-and-odd-shapes": {
        "model": "gpt-4o",
        "messages": MESSAGES,
        "temperature": None,
        "max_completion_tokens": None,
        "max_tokens": 10,
        "stop": None,
        "tools": [],
        "metadata": {"n": 1},
        "response_format": {"type": "json_schema", "json_schema": {"name": 3}},
        "tool_choice": {"type": "custom", "custom": {"name": "grammar"}},
        "stream_options": {"include_usage": True},
    },
}


@pytest.mark.parametrize("name", list(HARD_CASES))
def test_hard_cases_come_back_whole(name: str) -> None:
    comes_back_whole(normalizer(), HARD_CASES[name])


def test_the_hard_cases_read_into_neutral_fields() -> None:
    request = normalizer().parse_full_request(HARD_CASES["everything"])
    assert request.model == "gpt-4.1"
    assert request.tools[0] == Tool(
        "get_weather", "Weather of a city", WEATHER, strict=True
    )
    assert request.tools[1] == ProviderTool(NAME, HARD_CASES["everything"]["tools"][1])
    assert request.tool_choice == ToolChoice("required", parallel=False)
    assert request.output == OutputFormat(
        "json_schema", WEATHER, "answer", "The answer", True
    )
    assert request.generation == Generation(
        max_output_tokens=500,
        temperature=0.2,
        top_p=0.9,
        stop=("END", "STOP"),
        seed=7,
        presence_penalty=0.5,
        frequency_penalty=-0.5,
        candidates=2,
        logprobs=True,
        top_logprobs=3,
    )
    assert request.reasoning == ReasoningConfig(effort="minimal")
    assert request.cache == CacheConfig("tenant-1", "24h")
    assert (request.user, request.service_tier, request.stream) == (
        "user-1",
        "flex",
        False,
    )
    assert request.metadata == {"run": "42"}
    assert set(request.extras[NAME]["body"]) == {
        "safety_identifier",
        "store",
        "verbosity",
        "modalities",
        "logit_bias",
    }
    legacy = normalizer().parse_full_request(HARD_CASES["legacy-spellings"])
    assert legacy.generation.max_output_tokens == 64
    assert legacy.generation.stop == ("END",)
    assert legacy.output == OutputFormat("json")
    assert legacy.extras[NAME] == {"max_tokens": True, "stop": "string"}


@pytest.mark.parametrize("name", [n for n in HARD_CASES if n != "nulls-and-odd-shapes"])
def test_rendered_hard_cases_are_accepted_by_the_sdk(name: str) -> None:
    request = normalizer().parse_full_request(HARD_CASES[name])
    sdk_accepts(normalizer().render_full_request(request))


def test_legacy_functions_come_back_and_translate() -> None:
    path = CORPUS.directory / "legacy-functions-request.json"
    body = payload(path)
    request = normalizer().parse_full_request(body)
    assert request.tools[0].name == "get_current_weather"  # type: ignore[union-attr]
    assert request.tool_choice == ToolChoice("auto")
    # A new choice needs the tools form: the legacy spelling gives way.
    forced = request.__class__(
        request.conversation,
        model=request.model,
        tools=request.tools,
        tool_choice=ToolChoice("required"),
        extras=request.extras,
    )
    rendered = normalizer().render_full_request(forced)
    assert "functions" not in rendered
    assert rendered["tool_choice"] == "required"
    assert rendered["tools"][0]["function"]["name"] == "get_current_weather"


# Across formats -----------------------------------------------------------------------


def render(request: Request, **options: Any) -> tuple[dict[str, Any], list[Any]]:
    return render_reported(normalizer(), request, **options)


FOREIGN = Request(
    [User("hi")],
    model="claude-sonnet-4-5",
    tools=(
        Tool(
            "get_weather",
            "Weather",
            WEATHER,
            extras={"anthropic": {"cache_control": {"type": "ephemeral"}}},
        ),
        ProviderTool("anthropic", {"type": "web_search_20250305", "name": "web"}),
    ),
    tool_choice=ToolChoice("auto", ("get_weather",), parallel=False),
    output=OutputFormat("json_schema", WEATHER),
    generation=Generation(
        max_output_tokens=1000,
        temperature=3.5,
        top_k=40,
        stop=("a", "b", "c", "d", "e"),
    ),
    reasoning=ReasoningConfig(enabled=True, budget_tokens=3000, summary="auto"),
    service_tier="standard_only",
    extras={"anthropic": {"body": {"container": "c1"}}},
)


def test_another_formats_request_is_translated_and_every_loss_reported() -> None:
    body, events = render(FOREIGN, model="gpt-4.1")
    sdk_accepts(body)
    assert body == {
        "model": "gpt-4.1",
        "messages": [{"role": "user", "content": "hi"}],
        "tools": [
            {
                "type": "function",
                "function": {
                    "name": "get_weather",
                    "description": "Weather",
                    "parameters": WEATHER,
                },
            }
        ],
        "parallel_tool_calls": False,
        "tool_choice": {
            "type": "allowed_tools",
            "allowed_tools": {
                "mode": "auto",
                "tools": [{"type": "function", "function": {"name": "get_weather"}}],
            },
        },
        "response_format": {
            "type": "json_schema",
            "json_schema": {"name": "response", "schema": WEATHER},
        },
        "max_completion_tokens": 1000,
        "temperature": 2.0,
        "stop": ["a", "b", "c", "d"],
        "reasoning_effort": "medium",
        "service_tier": "default",
    }
    outcomes = {(event.kind, event.where) for event in events}
    assert outcomes == {
        ("dropped", "tools[1]"),
        ("dropped", "tools[0].extras.anthropic"),
        ("dropped", "extras.anthropic.body.container"),
        ("synthesized", "output.name"),
        ("approximated", "generation.temperature"),
        ("dropped", "generation.top_k"),
        ("approximated", "generation.stop"),
        ("approximated", "reasoning.budget_tokens"),
        ("dropped", "reasoning.summary"),
        ("approximated", "service_tier"),
    }
    rules = {event.where: event.rule for event in events}
    assert rules["reasoning.budget_tokens"] == "reasoning table: medium = 8192 tokens"
    assert rules["generation.temperature"] == "range 0.0 to 2.0"


def test_the_options_steer_the_rules() -> None:
    request = Request(
        [User("hi")],
        generation=Generation(temperature=1.5),
        reasoning=ReasoningConfig(budget_tokens=3000),
    )
    body, events = render(
        request,
        capabilities=providers.Capabilities(
            temperature=(0, 1), efforts=("low", "high")
        ),
        reasoning_table=providers.ReasoningTable({"low": 4000, "high": 9000}),
    )
    assert body["temperature"] == 1.0
    assert body["reasoning_effort"] == "low"
    assert "model" not in body
    assert [event.kind for event in events] == ["approximated", "approximated"]


def test_error_policy_refuses_anything_not_exact() -> None:
    with pytest.raises(canisters.UnsupportedContent, match=r"generation\.top_k"):
        normalizer().render_full_request(Request(generation=Generation(top_k=5)))
    with pytest.raises(canisters.UnsupportedContent, match=r"tools\[0\]"):
        normalizer().render_full_request(
            Request(tools=(ProviderTool("gemini", {"googleSearch": {}}),))
        )
    # What is exact goes through under the default policy.
    exact = Request([User("hi")], model="m", generation=Generation(temperature=1))
    assert normalizer().render_full_request(exact) == {
        "model": "m",
        "messages": [{"role": "user", "content": "hi"}],
        "temperature": 1,
    }


def test_dropping_warns() -> None:
    with pytest.warns(providers.FidelityWarning, match="top_k"):
        normalizer().render_full_request(
            Request(generation=Generation(top_k=5)), unsupported="drop"
        )


# Any body: refused with the library's error, or given back exactly ------------------

from hypothesis import given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

from .budget import examples  # noqa: E402

_KEYS = [
    "model",
    "stream",
    "tools",
    "functions",
    "function_call",
    "tool_choice",
    "parallel_tool_calls",
    "response_format",
    "max_completion_tokens",
    "max_tokens",
    "temperature",
    "top_p",
    "stop",
    "seed",
    "presence_penalty",
    "frequency_penalty",
    "n",
    "logprobs",
    "top_logprobs",
    "reasoning_effort",
    "prompt_cache_key",
    "prompt_cache_retention",
    "user",
    "metadata",
    "service_tier",
    "store",
]
_function = chat_functions(WEATHER, "other")
_tool = chat_tools(_function, "cache")
_named = st.fixed_dictionaries(
    {
        "type": st.just("function"),
        "function": st.fixed_dictionaries({"name": st.sampled_from(["f", "g"])}),
    }
)
_values = {
    "tools": st.lists(_tool, max_size=3),
    "functions": st.lists(_function, max_size=3),
    "function_call": st.sampled_from(["auto", "none"])
    | st.fixed_dictionaries({"name": st.just("f")}),
    "tool_choice": st.sampled_from(["auto", "none", "required"])
    | _named
    | st.fixed_dictionaries(
        {
            "type": st.just("allowed_tools"),
            "allowed_tools": st.fixed_dictionaries(
                {
                    "mode": st.sampled_from(["auto", "required", "x"]),
                    "tools": st.lists(_named, max_size=2),
                }
            ),
        }
    ),
    "response_format": st.sampled_from(
        [
            {"type": "text"},
            {"type": "json_object"},
            {"type": "json_schema", "json_schema": {"name": "a", "schema": WEATHER}},
        ]
    ),
    "stop": st.text(max_size=3) | st.lists(st.text(max_size=3), max_size=5),
    "metadata": st.dictionaries(st.text(max_size=3), st.text(max_size=3), max_size=2),
    "temperature": st.floats(0, 2) | st.integers(0, 2),
}


def bodies() -> st.SearchStrategy[dict[str, Any]]:
    return bodies_of({"messages": MESSAGES}, _KEYS, _values)


@settings(max_examples=examples(300), deadline=None)
@given(bodies())
def test_any_body_comes_back_exactly_or_is_refused(body: dict[str, Any]) -> None:
    comes_back_or_is_refused(normalizer(), body)


def test_strict_mode_asked_for_elsewhere_gets_a_strict_schema() -> None:
    loose = {"type": "object", "properties": {"city": {"type": "string"}}}
    request = Request(
        tools=(
            ProviderTool("gemini", {"googleSearch": {}}),
            Tool("f", parameters=loose, strict=True),
            Tool("g", parameters=loose),
        ),
        output=OutputFormat("json_schema", loose, "a", strict=True),
    )
    body, events = render(request)
    strict = {
        "type": "object",
        "properties": {"city": {"type": ["string", "null"]}},
        "additionalProperties": False,
        "required": ["city"],
    }
    assert body["tools"][0]["function"] == {
        "name": "f",
        "parameters": strict,
        "strict": True,
    }
    # Never switched on for a schema of its own: g stays as it was.
    assert body["tools"][1]["function"] == {"name": "g", "parameters": loose}
    assert body["response_format"]["json_schema"]["schema"] == strict
    assert [(e.kind, e.where, e.rule) for e in events] == [
        ("dropped", "tools[0]", None),
        (
            "approximated",
            "tools[1].parameters.additionalProperties",
            "OpenAI strict mode",
        ),
        ("approximated", "tools[1].parameters.properties.city", "OpenAI strict mode"),
        ("approximated", "output.schema.additionalProperties", "OpenAI strict mode"),
        ("approximated", "output.schema.properties.city", "OpenAI strict mode"),
    ]
    sdk_accepts({"model": "m", **body})
