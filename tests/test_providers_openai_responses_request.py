"""Whole OpenAI Responses requests: ``parse_full_request`` / ``render_full_request``.

Every request body of the corpus and the hard cases come back exactly; rendered
bodies are accepted by the openai SDK's request types; what another format's
request holds and Responses cannot take is reported, or refused under
``unsupported="error"``; OpenAI Chat's corpus renders to Responses and
Responses' corpus to OpenAI Chat, each accepted by the target's SDK types.
"""

from __future__ import annotations

import typing
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

from . import test_providers_openai_chat_request as chat
from .providers_support import Corpus, adapter
from .requests_support import (
    bodies_of,
    comes_back_or_is_refused,
    comes_back_whole,
    payload,
    recorded_requests,
    render_reported,
)

NAME = "openai-responses"
CORPUS = Corpus(NAME)
REQUESTS = recorded_requests(NAME)
CHAT_REQUESTS = recorded_requests("openai-chat")


def normalizer(name: str = NAME) -> Any:
    return providers.get(name)


def sdk_accepts(body: dict[str, Any]) -> None:
    """The openai SDK's request types take ``body``: every top-level key is one
    of ``ResponseCreateParamsNonStreaming``, and the typed fields validate."""
    from openai.types.responses import ToolParam
    from openai.types.responses.response_create_params import (
        ResponseCreateParamsNonStreaming,
    )
    from openai.types.responses.response_create_params import (
        ToolChoice as ToolChoiceParam,
    )

    known = set(typing.get_type_hints(ResponseCreateParamsNonStreaming)) | {"stream"}
    assert set(body) <= known, set(body) - known
    plain = {key: value for key, value in body.items() if key != "stream"}
    adapter(ResponseCreateParamsNonStreaming).validate_python(plain)
    if "tools" in body:
        adapter(list[ToolParam]).validate_python(body["tools"])
    if "tool_choice" in body:
        adapter(ToolChoiceParam).validate_python(body["tool_choice"])


@pytest.mark.parametrize("path", REQUESTS, ids=[path.stem for path in REQUESTS])
def test_every_recorded_request_comes_back_whole(path: Path) -> None:
    body = payload(path)
    request = comes_back_whole(normalizer(), body)
    assert len(request.conversation) == len(normalizer().parse_request(body))


WEATHER = {
    "type": "object",
    "properties": {"city": {"type": "string"}},
    "required": ["city"],
    "additionalProperties": False,
}
INPUT = [{"role": "user", "content": "Weather in Paris?"}]
LOGPROBS = "message.output_text.logprobs"
FUNCTION = {
    "type": "function",
    "name": "get_weather",
    "description": "Weather of a city",
    "parameters": WEATHER,
    "strict": True,
}

HARD_CASES: dict[str, dict[str, Any]] = {
    "everything": {
        "model": "gpt-5",
        "instructions": "Be brief.",
        "input": INPUT,
        "tools": [
            FUNCTION,
            {"type": "web_search_preview", "search_context_size": "low"},
            {"type": "file_search", "vector_store_ids": ["vs_1"]},
            {"type": "code_interpreter", "container": {"type": "auto"}},
            {"type": "mcp", "server_label": "deepwiki", "server_url": "https://x.y"},
            {"type": "custom", "name": "grammar", "description": "free text"},
            {"type": "image_generation"},
            {"type": "local_shell"},
        ],
        "tool_choice": "required",
        "parallel_tool_calls": False,
        "max_tool_calls": 3,
        "text": {
            "format": {
                "type": "json_schema",
                "name": "answer",
                "description": "The answer",
                "schema": WEATHER,
                "strict": True,
            },
            "verbosity": "low",
        },
        "reasoning": {"effort": "high", "summary": "auto"},
        "max_output_tokens": 500,
        "temperature": 0.2,
        "top_p": 0.9,
        "top_logprobs": 3,
        "previous_response_id": "resp_1",
        "include": ["reasoning.encrypted_content", "message.output_text.logprobs"],
        "store": False,
        "truncation": "auto",
        "background": False,
        "prompt": {"id": "pmpt_1", "version": "2", "variables": {"city": "Paris"}},
        "prompt_cache_key": "tenant-1",
        "prompt_cache_retention": "24h",
        "safety_identifier": "hash-1",
        "user": "user-1",
        "metadata": {"run": "42"},
        "service_tier": "flex",
        "stream": False,
    },
    "conversation-and-streaming": {
        "model": "gpt-5-mini",
        "input": INPUT,
        "conversation": "conv_1",
        "stream": True,
        "stream_options": {"include_obfuscation": False},
        "text": {"verbosity": "high"},
        "reasoning": {"effort": "minimal", "generate_summary": "concise"},
    },
    "one-tool-allowed": {
        "model": "gpt-5",
        "input": INPUT,
        "tools": [FUNCTION],
        "tool_choice": {
            "type": "allowed_tools",
            "mode": "required",
            "tools": [{"type": "function", "name": "get_weather"}],
        },
    },
    "subset-allowed": {
        "model": "gpt-5",
        "input": INPUT,
        "tools": [FUNCTION, {**FUNCTION, "name": "get_time"}],
        "tool_choice": {
            "type": "allowed_tools",
            "mode": "auto",
            "tools": [
                {"type": "function", "name": "get_weather"},
                {"type": "function", "name": "get_time"},
            ],
        },
    },
    "one-tool-forced": {
        "model": "gpt-5",
        "input": INPUT,
        "tools": [FUNCTION],
        "tool_choice": {"type": "function", "name": "get_weather"},
        "text": {"format": {"type": "json_object"}},
    },
    "hosted-tool-forced": {
        "model": "gpt-4.1",
        "input": INPUT,
        "tools": [{"type": "web_search_preview"}],
        "tool_choice": {"type": "web_search_preview"},
        "text": {"format": {"type": "text"}},
    },
    "mcp-tool-forced": {
        "model": "gpt-4.1",
        "input": INPUT,
        "tools": [{"type": "mcp", "server_label": "wiki", "server_url": "https://x"}],
        "tool_choice": {"type": "mcp", "server_label": "wiki"},
    },
    "nulls-and-odd-shapes": {
        "model": "gpt-4o",
        "input": INPUT,
        "temperature": None,
        "max_output_tokens": None,
        "tools": [
            {
                "type": "function",
                "name": "f",
                "description": None,
                "parameters": None,
                "strict": None,
                "defer_loading": True,
            },
            {"type": "function", "name": 3},
        ],
        "metadata": {"n": 1},
        "text": {"format": {"type": "json_schema", "name": "a"}},
        "reasoning": {"effort": None},
        "tool_choice": {"type": "allowed_tools", "mode": "auto", "tools": []},
        "service_tier": None,
    },
    "reasoning-with-leftovers": {
        "model": "o3",
        "input": INPUT,
        "reasoning": {"effort": "low", "summary": None, "generate_summary": "auto"},
        "text": {"format": {"type": "json_schema", "name": "a", "schema": WEATHER}},
    },
}
SDK_REFUSES = {"nulls-and-odd-shapes"}


@pytest.mark.parametrize("name", list(HARD_CASES))
def test_hard_cases_come_back_whole(name: str) -> None:
    comes_back_whole(normalizer(), HARD_CASES[name])


@pytest.mark.parametrize("name", [n for n in HARD_CASES if n not in SDK_REFUSES])
def test_rendered_hard_cases_are_accepted_by_the_sdk(name: str) -> None:
    request = normalizer().parse_full_request(HARD_CASES[name])
    sdk_accepts(normalizer().render_full_request(request))


def test_the_hard_cases_read_into_neutral_fields() -> None:
    body = HARD_CASES["everything"]
    request = normalizer().parse_full_request(body)
    assert request.model == "gpt-5"
    assert request.tools[0] == Tool(
        "get_weather", "Weather of a city", WEATHER, strict=True
    )
    assert request.tools[1:] == tuple(
        ProviderTool(NAME, entry) for entry in body["tools"][1:]
    )
    assert request.tool_choice == ToolChoice("required", parallel=False)
    assert request.output == OutputFormat(
        "json_schema", WEATHER, "answer", "The answer", True
    )
    # Log probabilities are asked for in include, which is kept as it came.
    assert request.generation == Generation(
        max_output_tokens=500,
        temperature=0.2,
        top_p=0.9,
        logprobs=True,
        top_logprobs=3,
    )
    assert request.reasoning == ReasoningConfig(effort="high", summary="auto")
    assert request.cache == CacheConfig("tenant-1", "24h")
    assert (request.user, request.service_tier, request.stream) == (
        "user-1",
        "flex",
        False,
    )
    assert request.metadata == {"run": "42"}
    assert set(request.extras[NAME]["body"]) == {
        "max_tool_calls",
        "previous_response_id",
        "include",
        "store",
        "truncation",
        "background",
        "prompt",
        "safety_identifier",
        "text",
    }
    # What of text has no neutral field stays in the kept keys.
    assert request.extras[NAME]["body"]["text"] == {"verbosity": "low"}
    other = normalizer().parse_full_request(HARD_CASES["conversation-and-streaming"])
    assert other.reasoning == ReasoningConfig(effort="minimal", summary="concise")
    assert other.extras[NAME]["generate_summary"] is True
    assert other.output is None
    assert set(other.extras[NAME]["body"]) == {
        "conversation",
        "stream_options",
        "text",
    }
    forced = normalizer().parse_full_request(HARD_CASES["one-tool-forced"])
    assert forced.tool_choice == ToolChoice("required", ("get_weather",))
    assert forced.output == OutputFormat("json")
    allowed = normalizer().parse_full_request(HARD_CASES["one-tool-allowed"])
    assert allowed.tool_choice == ToolChoice("required", ("get_weather",))
    assert allowed.extras[NAME]["tool_choice"] == "allowed_tools"
    # A hosted-tool choice is kept exactly as it came.
    hosted = normalizer().parse_full_request(HARD_CASES["hosted-tool-forced"])
    assert hosted.tool_choice is None
    assert hosted.extras[NAME]["body"] == {
        "tool_choice": {"type": "web_search_preview"}
    }
    odd = normalizer().parse_full_request(HARD_CASES["nulls-and-odd-shapes"])
    assert odd.tools[0] == Tool(
        "f",
        extras={
            NAME: {
                "entry": {
                    "description": None,
                    "parameters": None,
                    "strict": None,
                    "defer_loading": True,
                }
            }
        },
    )
    assert odd.tools[1] == ProviderTool(NAME, {"type": "function", "name": 3})


# Across formats -----------------------------------------------------------------------


def render(
    request: Request, target: str = NAME, **options: Any
) -> tuple[dict[str, Any], list[Any]]:
    return render_reported(normalizer(target), request, **options)


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
        Tool("get_time"),
    ),
    tool_choice=ToolChoice("auto", ("get_weather",), parallel=False),
    output=OutputFormat("json_schema", WEATHER),
    generation=Generation(
        max_output_tokens=1000,
        temperature=3.5,
        top_k=40,
        stop=("a", "b"),
        seed=1,
        presence_penalty=0.1,
        frequency_penalty=0.2,
        candidates=2,
        logprobs=True,
    ),
    reasoning=ReasoningConfig(enabled=True, budget_tokens=3000, include_thoughts=True),
    service_tier="standard_only",
    extras={"anthropic": {"body": {"container": "c1"}}},
)


def test_another_formats_request_is_translated_and_every_loss_reported() -> None:
    body, events = render(FOREIGN, model="gpt-5")
    sdk_accepts(body)
    assert body == {
        "model": "gpt-5",
        "input": [{"role": "user", "content": "hi"}],
        "tools": [
            {
                "type": "function",
                "name": "get_weather",
                "description": "Weather",
                "parameters": WEATHER,
                "strict": False,
            },
            {
                "type": "function",
                "name": "get_time",
                "parameters": None,
                "strict": False,
            },
        ],
        "parallel_tool_calls": False,
        "tool_choice": {
            "type": "allowed_tools",
            "mode": "auto",
            "tools": [{"type": "function", "name": "get_weather"}],
        },
        "text": {
            "format": {"type": "json_schema", "name": "response", "schema": WEATHER}
        },
        "max_output_tokens": 1000,
        "temperature": 2.0,
        "include": ["message.output_text.logprobs"],
        "reasoning": {"effort": "medium", "summary": "auto"},
        "service_tier": "default",
    }
    outcomes = {(event.kind, event.where) for event in events}
    assert outcomes == {
        ("dropped", "tools[1]"),
        ("dropped", "tools[0].extras.anthropic"),
        ("dropped", "extras.anthropic.body.container"),
        ("synthesized", "tools[0].strict"),
        ("synthesized", "tools[2].strict"),
        ("synthesized", "output.name"),
        ("approximated", "generation.temperature"),
        ("dropped", "generation.top_k"),
        ("dropped", "generation.stop"),
        ("dropped", "generation.seed"),
        ("dropped", "generation.presence_penalty"),
        ("dropped", "generation.frequency_penalty"),
        ("dropped", "generation.candidates"),
        ("approximated", "reasoning.budget_tokens"),
        ("approximated", "reasoning.include_thoughts"),
        ("approximated", "service_tier"),
    }
    rules = {event.where: event.rule for event in events}
    assert rules["reasoning.budget_tokens"] == "reasoning table: medium = 8192 tokens"
    assert rules["tools[2].strict"] == "Responses defaults to strict mode"


def test_error_policy_refuses_anything_not_exact() -> None:
    for generation in (
        Generation(stop=("x",)),
        Generation(seed=1),
        Generation(top_k=5),
        Generation(candidates=2),
    ):
        with pytest.raises(canisters.UnsupportedContent, match=r"generation\."):
            normalizer().render_full_request(Request(generation=generation))
    with pytest.raises(canisters.UnsupportedContent, match=r"tools\[0\]"):
        normalizer().render_full_request(
            Request(tools=(ProviderTool("gemini", {"googleSearch": {}}),))
        )
    # What is exact goes through under the default policy (a value the format
    # requires is synthesized, which never refuses).
    exact = Request(
        [User("hi")],
        model="m",
        tools=(Tool("f", parameters=WEATHER, strict=True),),
        generation=Generation(temperature=1, max_output_tokens=9),
        reasoning=ReasoningConfig(effort="low", summary="detailed"),
    )
    assert normalizer().render_full_request(exact) == {
        "model": "m",
        "input": [{"role": "user", "content": "hi"}],
        "tools": [
            {"type": "function", "name": "f", "parameters": WEATHER, "strict": True}
        ],
        "temperature": 1,
        "max_output_tokens": 9,
        "reasoning": {"effort": "low", "summary": "detailed"},
    }


def test_strict_mode_is_never_switched_on_silently() -> None:
    loose = {"type": "object", "properties": {"city": {"type": "string"}}}
    request = Request(
        tools=(
            ProviderTool("gemini", {"googleSearch": {}}),
            Tool("f", parameters=loose, strict=True),
            Tool("g", parameters=loose),
        ),
        output=OutputFormat("json_schema", loose, "a", strict=True),
    )
    body, events = render(request, model="m")
    strict = {
        "type": "object",
        "properties": {"city": {"type": ["string", "null"]}},
        "additionalProperties": False,
        "required": ["city"],
    }
    assert providers.is_strict_compatible(strict)
    assert not providers.is_strict_compatible(loose)
    assert body["tools"][0] == {
        "type": "function",
        "name": "f",
        "parameters": strict,
        "strict": True,
    }
    # g asked for no strict mode: sent loose, with strict mode off (Responses
    # would turn it on when left out).
    assert body["tools"][1] == {
        "type": "function",
        "name": "g",
        "parameters": loose,
        "strict": False,
    }
    assert body["text"]["format"]["schema"] == strict
    assert [(e.kind, e.where, e.rule) for e in events] == [
        ("dropped", "tools[0]", None),
        (
            "approximated",
            "tools[1].parameters.additionalProperties",
            "OpenAI strict mode",
        ),
        ("approximated", "tools[1].parameters.properties.city", "OpenAI strict mode"),
        ("synthesized", "tools[2].strict", "Responses defaults to strict mode"),
        ("approximated", "output.schema.additionalProperties", "OpenAI strict mode"),
        ("approximated", "output.schema.properties.city", "OpenAI strict mode"),
    ]
    sdk_accepts({**body, "input": []})
    with pytest.raises(canisters.UnsupportedContent, match="OpenAI strict mode"):
        normalizer().render_full_request(
            Request(tools=(Tool("f", parameters=loose, strict=True),))
        )


def test_reasoning_levels_budgets_and_switches() -> None:
    table = providers.ReasoningTable({"low": 4000, "high": 9000})
    body, events = render(
        Request(reasoning=ReasoningConfig(budget_tokens=5000)),
        capabilities=providers.Capabilities(efforts=("low", "high")),
        reasoning_table=table,
    )
    assert body == {"input": [], "reasoning": {"effort": "high"}}
    assert [(e.kind, e.rule) for e in events] == [
        ("approximated", "reasoning table: high = 9000 tokens")
    ]
    body, events = render(Request(reasoning=ReasoningConfig(enabled=False)))
    assert "reasoning" not in body
    assert [(e.kind, e.where) for e in events] == [("dropped", "reasoning.enabled")]
    body, events = render(
        Request(reasoning=ReasoningConfig(enabled=False)),
        capabilities=providers.Capabilities(efforts=("none", "low", "high")),
    )
    assert body["reasoning"] == {"effort": "none"}
    # Both a level and a budget: the level is sent, the budget reported.
    body, events = render(
        Request(reasoning=ReasoningConfig(effort="low", budget_tokens=100))
    )
    assert body["reasoning"] == {"effort": "low"}
    assert [(e.kind, e.where) for e in events] == [
        ("dropped", "reasoning.budget_tokens")
    ]


def test_values_the_sdk_types_refuse_are_left_out_reported() -> None:
    request = Request(
        [User("hi")],
        model="m",
        metadata={"run": "42", "attempt": 2},
        cache=CacheConfig("k", "1h"),
        reasoning=ReasoningConfig(effort="extreme", summary="auto"),
    )
    body, events = render(request)
    sdk_accepts(body)
    assert body["metadata"] == {"run": "42"}
    assert body["prompt_cache_key"] == "k"
    assert "prompt_cache_retention" not in body
    assert body["reasoning"] == {"summary": "auto"}
    assert [(e.kind, e.where) for e in events] == [
        ("dropped", "reasoning.effort"),
        ("dropped", "cache.retention"),
        ("dropped", "metadata.attempt"),
    ]


def test_openai_chat_fields_spelled_alike_are_taken_over() -> None:
    body = {
        "model": "gpt-4.1",
        "messages": [{"role": "user", "content": "hi"}],
        "store": True,
        "safety_identifier": "h",
        "verbosity": "low",
        "logit_bias": {"1": 2},
        "reasoning_effort": "high",
        "max_tokens": 20,
    }
    request = normalizer("openai-chat").parse_full_request(body)
    rendered, events = render(request)
    sdk_accepts(rendered)
    assert rendered == {
        "model": "gpt-4.1",
        "input": [{"role": "user", "content": "hi"}],
        "store": True,
        "safety_identifier": "h",
        "text": {"verbosity": "low"},
        "reasoning": {"effort": "high"},
        "max_output_tokens": 20,
    }
    assert [(e.kind, e.where) for e in events] == [
        ("dropped", "extras.openai-chat.body.logit_bias")
    ]


def test_log_probabilities_asked_for_in_include_reach_openai_chat() -> None:
    body = {
        "model": "gpt-4.1",
        "input": INPUT,
        "include": [LOGPROBS],
        "top_logprobs": 2,
    }
    request = normalizer().parse_full_request(body)
    assert request.generation == Generation(logprobs=True, top_logprobs=2)
    rendered, events = render(request, target="openai-chat")
    chat.sdk_accepts(rendered)
    assert (rendered["logprobs"], rendered["top_logprobs"]) == (True, 2)
    # include itself is Responses' own: reported, though what it asked is sent.
    assert [(e.kind, e.where) for e in events] == [
        ("dropped", "extras.openai-responses.body.include")
    ]
    back = normalizer().render_full_request(
        normalizer("openai-chat").parse_full_request(rendered)
    )
    assert back == body


def test_a_hosted_tool_choice_goes_to_no_other_format() -> None:
    request = normalizer().parse_full_request(HARD_CASES["hosted-tool-forced"])
    body, events = render(request, target="openai-chat")
    chat.sdk_accepts(body)
    assert "tool_choice" not in body and "tools" not in body
    assert {(e.kind, e.where) for e in events} == {
        ("dropped", "tools[0]"),
        ("dropped", "extras.openai-responses.body.tool_choice"),
    }
    with pytest.raises(canisters.UnsupportedContent):
        normalizer("openai-chat").render_full_request(request)


# The two corpora, each rendered to the other format ----------------------------------

# OpenAI Chat's top-level keys and where Responses carries them; any other key
# must be named by a report entry (its neutral field, or the kept key).
CHAT_TO_RESPONSES = {
    "model": "model",
    "stream": "stream",
    "tools": "tools",
    "functions": "tools",
    "tool_choice": "tool_choice",
    "function_call": "tool_choice",
    "parallel_tool_calls": "parallel_tool_calls",
    "response_format": "text",
    "verbosity": "text",
    "max_completion_tokens": "max_output_tokens",
    "max_tokens": "max_output_tokens",
    "temperature": "temperature",
    "top_p": "top_p",
    "top_logprobs": "top_logprobs",
    "logprobs": "include",
    "reasoning_effort": "reasoning",
    "prompt_cache_key": "prompt_cache_key",
    "prompt_cache_retention": "prompt_cache_retention",
    "user": "user",
    "metadata": "metadata",
    "service_tier": "service_tier",
    "store": "store",
    "safety_identifier": "safety_identifier",
}
CHAT_NEUTRAL = {
    "stop": "generation.stop",
    "seed": "generation.seed",
    "n": "generation.candidates",
    "presence_penalty": "generation.presence_penalty",
    "frequency_penalty": "generation.frequency_penalty",
}
CHAT_BODIES = {path.stem: payload(path) for path in CHAT_REQUESTS} | {
    f"hard-{name}": body for name, body in chat.HARD_CASES.items()
}


# The neutral field of a top-level key, where its name differs.
NEUTRAL = {
    "functions": "tools",
    "function_call": "tool_choice",
    "response_format": "output",
    "text": "output",
}


def accounted(
    body: dict[str, Any],
    rendered: dict[str, Any],
    events: list[Any],
    skip: frozenset[str],
    carried: dict[str, str],
    neutral: dict[str, str],
    source: str,
) -> None:
    """Every top-level key of ``body`` is carried to its key in ``rendered`` or
    named by a report entry."""
    wheres = [event.where for event in events]
    for key in body:
        if key in skip or (key in carried and carried[key] in rendered):
            continue
        names = (
            neutral.get(key, key),
            NEUTRAL.get(key, key),
            f"extras.{source}.body.{key}",
        )
        assert any(w.startswith(names) for w in wheres), (key, wheres)


EMPTY_TEXT = ("empty text", "a message of empty text only", "an empty message")


@pytest.mark.parametrize("name", list(CHAT_BODIES))
def test_the_openai_chat_corpus_renders_to_responses(name: str) -> None:
    body = CHAT_BODIES[name]
    request = normalizer("openai-chat").parse_full_request(body)
    rendered, events = render(request, model=body.get("model", "gpt-5"))
    if name not in {"hard-nulls-and-odd-shapes"}:
        sdk_accepts(rendered)
    accounted(
        body,
        rendered,
        events,
        frozenset({"messages"}),
        CHAT_TO_RESPONSES,
        CHAT_NEUTRAL,
        "openai-chat",
    )
    # Empty text left out loses nothing: reported, never refused.
    refused = [
        e
        for e in events
        if e.kind != "synthesized" and not e.detail.startswith(EMPTY_TEXT)
    ]
    try:
        exact = normalizer().render_full_request(
            request, model=body.get("model", "gpt-5")
        )
    except canisters.UnsupportedContent:
        assert refused
    else:
        assert not refused
        assert exact == rendered


RESPONSES_TO_CHAT = {
    "model": "model",
    "stream": "stream",
    "tools": "tools",
    "tool_choice": "tool_choice",
    "parallel_tool_calls": "parallel_tool_calls",
    "text": "response_format",
    "max_output_tokens": "max_completion_tokens",
    "temperature": "temperature",
    "top_p": "top_p",
    "top_logprobs": "top_logprobs",
    "reasoning": "reasoning_effort",
    "prompt_cache_key": "prompt_cache_key",
    "prompt_cache_retention": "prompt_cache_retention",
    "user": "user",
    "metadata": "metadata",
    "service_tier": "service_tier",
}
RESPONSES_BODIES = {path.stem: payload(path) for path in REQUESTS} | {
    f"hard-{name}": body for name, body in HARD_CASES.items() if name not in SDK_REFUSES
}


@pytest.mark.parametrize("name", list(RESPONSES_BODIES))
def test_the_responses_corpus_renders_to_openai_chat(name: str) -> None:
    body = RESPONSES_BODIES[name]
    request = normalizer().parse_full_request(body)
    try:
        rendered, events = render(
            request, target="openai-chat", model=body.get("model", "gpt-5")
        )
    except canisters.ProviderError:
        # A conversation OpenAI Chat cannot hold even with losses: refused
        # with the library's error.
        return
    chat.sdk_accepts(rendered)
    accounted(
        body,
        rendered,
        events,
        frozenset({"input", "instructions"}),
        RESPONSES_TO_CHAT,
        {},
        NAME,
    )


# Any body: refused with the library's error, or given back exactly ------------------

from hypothesis import given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

from .budget import examples  # noqa: E402
from .strategies import json_values  # noqa: E402

_KEYS = [
    "model",
    "stream",
    "tools",
    "tool_choice",
    "parallel_tool_calls",
    "text",
    "max_output_tokens",
    "temperature",
    "top_p",
    "top_logprobs",
    "reasoning",
    "prompt_cache_key",
    "prompt_cache_retention",
    "user",
    "metadata",
    "service_tier",
    "store",
    "include",
]
_tool = st.fixed_dictionaries(
    {"type": st.sampled_from(["function", "web_search"]) | json_values},
    optional={
        "name": st.sampled_from(["f", "g", ""]) | json_values,
        "description": st.text(max_size=5) | json_values,
        "parameters": st.just(WEATHER) | json_values,
        "strict": st.booleans() | json_values,
        "other": json_values,
    },
)
_named = st.fixed_dictionaries(
    {"type": st.just("function"), "name": st.sampled_from(["f", "g"])}
)
_format = st.fixed_dictionaries(
    {"type": st.sampled_from(["text", "json_object", "json_schema"]) | json_values},
    optional={
        "name": st.just("a") | json_values,
        "schema": st.just(WEATHER) | json_values,
        "strict": st.booleans() | json_values,
        "description": st.just("d") | json_values,
    },
)
_values = {
    "tools": st.lists(_tool, max_size=3),
    "tool_choice": st.sampled_from(["auto", "none", "required"])
    | _named
    | st.fixed_dictionaries(
        {
            "type": st.just("allowed_tools"),
            "mode": st.sampled_from(["auto", "required", "x"]),
            "tools": st.lists(_named, max_size=2),
        }
    ),
    "text": st.fixed_dictionaries(
        {}, optional={"format": _format, "verbosity": json_values}
    ),
    "reasoning": st.fixed_dictionaries(
        {},
        optional={
            "effort": st.just("low") | json_values,
            "summary": st.just("auto") | json_values,
            "generate_summary": st.just("auto") | json_values,
            "context": json_values,
        },
    ),
    "metadata": st.dictionaries(st.text(max_size=3), st.text(max_size=3), max_size=2),
    "temperature": st.floats(0, 2) | st.integers(0, 2),
}


def bodies() -> st.SearchStrategy[dict[str, Any]]:
    return bodies_of({"input": INPUT}, _KEYS, _values)


@settings(max_examples=examples(300), deadline=None)
@given(bodies())
def test_any_body_comes_back_exactly_or_is_refused(body: dict[str, Any]) -> None:
    comes_back_or_is_refused(normalizer(), body)
