"""Whole Gemini requests: ``parse_full_request`` / ``render_full_request``.

Every request body of the corpus and the hard cases come back exactly (also
after a document); rendered bodies are accepted by google-genai's request types;
what another format's request holds and Gemini cannot take is reported (or
refused under ``unsupported="error"``), and the other way round.
"""

from __future__ import annotations

import json
import warnings
from pathlib import Path
from typing import Any

import attrs
import pytest

import canisters
from canisters import (
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
from .requests_support import comes_back_or_is_refused, comes_back_whole
from .test_providers_openai_chat_request import bodies as chat_bodies
from .test_providers_openai_chat_request import sdk_accepts as chat_accepts

NAME = "gemini"
CORPUS = Corpus(NAME)
REQUESTS = [path for path in CORPUS.cases if path.stem.endswith("request")]
CHAT_REQUESTS = [path for path in Corpus("openai-chat").cases if "request" in path.stem]


def normalizer() -> Any:
    return providers.get(NAME)


def payload(path: Path) -> dict[str, Any]:
    return json.loads(path.read_text())["payload"]  # type: ignore[no-any-return]


# The keys of a REST body that google-genai's GenerateContentConfig holds (the SDK
# moves them there from generationConfig and the top level).
_TOP = {
    "tools",
    "toolConfig",
    "tool_config",
    "safetySettings",
    "safety_settings",
    "cachedContent",
    "cached_content",
    "labels",
    "serviceTier",
    "service_tier",
    "store",
}


def sdk_accepts(body: dict[str, Any]) -> None:
    """google-genai's request types take ``body``: its contents as
    ``types.Content``, and everything else, ``generationConfig`` flattened,
    as ``types.GenerateContentConfig`` (whose fields take camelCase aliases as
    well as snake_case, and which refuses unknown keys)."""
    from google.genai import types

    rest = set(body) - _TOP - {"model", "contents", "generationConfig"}
    rest -= {"systemInstruction", "system_instruction", "generation_config"}
    assert not rest, rest
    if "model" in body:
        assert isinstance(body["model"], str)
    contents = body.get("contents", [])
    for turn in contents if isinstance(contents, list) else [contents]:
        parts = turn.get("parts")
        if isinstance(parts, dict):  # a REST-only single object
            turn = {**turn, "parts": [parts]}
        types.Content.model_validate(turn)
    config = {key: value for key, value in body.items() if key in _TOP}
    config.update(body.get("generationConfig", body.get("generation_config", {})))
    types.GenerateContentConfig.model_validate(config)


# Own format ---------------------------------------------------------------------------


@pytest.mark.parametrize("path", REQUESTS, ids=[path.stem for path in REQUESTS])
def test_every_recorded_request_comes_back_whole(path: Path) -> None:
    comes_back_whole(normalizer(), payload(path))


WEATHER = {
    "type": "object",
    "properties": {"city": {"type": "string"}},
    "required": ["city"],
}
OPENAPI_WEATHER = {
    "type": "OBJECT",
    "properties": {"city": {"type": "STRING", "nullable": True}},
    "required": ["city"],
    "propertyOrdering": ["city"],
}
CONTENTS = [{"role": "user", "parts": [{"text": "Weather in Paris?"}]}]

HARD_CASES: dict[str, dict[str, Any]] = {
    "everything": {
        "model": "gemini-2.5-flash",
        "systemInstruction": {"parts": [{"text": "Be brief."}]},
        "contents": CONTENTS,
        "tools": [
            {
                "functionDeclarations": [
                    {
                        "name": "get_weather",
                        "description": "Weather of a city",
                        "parametersJsonSchema": WEATHER,
                    },
                    {
                        "name": "get_time",
                        "parameters": OPENAPI_WEATHER,
                        "response": {"type": "STRING"},
                        "behavior": "NON_BLOCKING",
                    },
                ],
                "googleSearch": {},
            },
            {"codeExecution": {}},
            {"urlContext": {}},
            {"fileSearch": {"fileSearchStoreNames": ["fileSearchStores/a"]}},
        ],
        "toolConfig": {
            "functionCallingConfig": {
                "mode": "ANY",
                "allowedFunctionNames": ["get_weather"],
            },
            "retrievalConfig": {"languageCode": "fr"},
        },
        "generationConfig": {
            "maxOutputTokens": 500,
            "temperature": 0.2,
            "topP": 0.9,
            "topK": 40,
            "stopSequences": ["END"],
            "seed": 7,
            "presencePenalty": 0.5,
            "frequencyPenalty": -0.5,
            "candidateCount": 2,
            "responseLogprobs": True,
            "logprobs": 3,
            "responseMimeType": "application/json",
            "responseSchema": OPENAPI_WEATHER,
            "thinkingConfig": {"thinkingBudget": 1024, "includeThoughts": True},
            "responseModalities": ["TEXT"],
            "mediaResolution": "MEDIA_RESOLUTION_LOW",
            "speechConfig": {
                "voiceConfig": {"prebuiltVoiceConfig": {"voiceName": "Kore"}}
            },
        },
        "safetySettings": [
            {"category": "HARM_CATEGORY_HARASSMENT", "threshold": "BLOCK_NONE"}
        ],
        "cachedContent": "cachedContents/abc",
        "labels": {"team": "search"},
        "serviceTier": "flex",
        "store": False,
    },
    "snake-case": {
        "system_instruction": {"parts": [{"text": "Be brief."}]},
        "contents": CONTENTS,
        "tools": [
            {
                "function_declarations": [
                    {"name": "get_weather", "parameters_json_schema": WEATHER}
                ]
            }
        ],
        "tool_config": {
            "function_calling_config": {
                "mode": "AUTO",
                "allowed_function_names": ["get_weather"],
            }
        },
        "generation_config": {
            "max_output_tokens": 64,
            "stop_sequences": ["a", "b"],
            "response_mime_type": "application/json",
            "response_json_schema": WEATHER,
            "thinking_config": {"thinking_level": "LOW", "include_thoughts": False},
        },
        "safety_settings": [],
        "service_tier": "standard",
    },
    "levels-and-switches": {
        "contents": CONTENTS,
        "toolConfig": {"functionCallingConfig": {"mode": "NONE"}},
        "generationConfig": {
            "thinkingConfig": {"thinkingBudget": -1, "thinkingLevel": "high"},
            "responseMimeType": "text/plain",
        },
    },
    "thinking-off": {
        "contents": CONTENTS,
        "generationConfig": {"thinkingConfig": {"thinkingBudget": 0}},
        "toolConfig": {},
    },
    "validated-and-odd-shapes": {
        "contents": CONTENTS,
        "tools": [
            {"functionDeclarations": [{"name": "f", "description": None}]},
            {"functionDeclarations": []},
        ],
        "toolConfig": {"functionCallingConfig": {"mode": "VALIDATED"}},
        "generationConfig": {
            "temperature": None,
            "topK": 40.0,
            "stopSequences": [],
            "responseMimeType": "text/x.enum",
            "responseSchema": {"type": "STRING", "enum": ["a", "b"]},
            "thinkingConfig": {"thinkingBudget": 10, "other": 1},
        },
        "labels": {"n": 1},
        "generation_config": {"seed": 1},
        "system_instruction": None,
    },
    "both-system-keys": {
        "systemInstruction": {"parts": [{"text": "Be brief."}]},
        "system_instruction": {"parts": [{"text": "Be long."}]},
        "contents": CONTENTS,
    },
    "json-without-schema": {
        "contents": CONTENTS,
        "tools": [{"googleSearch": {}}, {"functionDeclarations": [{"name": "f"}]}],
        "generationConfig": {"responseMimeType": "application/json"},
    },
}


@pytest.mark.parametrize("name", list(HARD_CASES))
def test_hard_cases_come_back_whole(name: str) -> None:
    body = HARD_CASES[name]
    request = normalizer().parse_full_request(body)
    assert normalizer().render_full_request(request) == body
    again = canisters.from_json(canisters.to_json(request))
    assert isinstance(again, Request)
    assert normalizer().render_full_request(again) == body


@pytest.mark.parametrize(
    "name",
    [
        n
        for n in HARD_CASES
        if n not in ("validated-and-odd-shapes", "both-system-keys")
    ],
)
def test_rendered_hard_cases_are_accepted_by_the_sdk(name: str) -> None:
    request = normalizer().parse_full_request(HARD_CASES[name])
    sdk_accepts(normalizer().render_full_request(request))


def test_the_hard_cases_read_into_neutral_fields() -> None:
    request = normalizer().parse_full_request(HARD_CASES["everything"])
    assert request.model == "gemini-2.5-flash"
    weather, time, search, code, url, files = request.tools
    assert weather == Tool("get_weather", "Weather of a city", WEATHER)
    # An OpenAPI schema reads as JSON Schema; the declaration's other keys stay.
    assert time == Tool(
        "get_time",
        parameters={
            "type": "object",
            "properties": {"city": {"type": ["string", "null"]}},
            "required": ["city"],
            "propertyOrdering": ["city"],
        },
        extras={
            NAME: {
                "declaration": {
                    "response": {"type": "STRING"},
                    "behavior": "NON_BLOCKING",
                }
            }
        },
    )
    assert (search, code, url) == (
        ProviderTool(NAME, {"googleSearch": {}}),
        ProviderTool(NAME, {"codeExecution": {}}),
        ProviderTool(NAME, {"urlContext": {}}),
    )
    assert request.tool_choice == ToolChoice.tool("get_weather")
    assert request.output == OutputFormat("json_schema", time.parameters)
    assert request.generation == Generation(
        max_output_tokens=500,
        temperature=0.2,
        top_p=0.9,
        top_k=40,
        stop=("END",),
        seed=7,
        presence_penalty=0.5,
        frequency_penalty=-0.5,
        candidates=2,
        logprobs=True,
        top_logprobs=3,
    )
    assert request.reasoning == ReasoningConfig(
        budget_tokens=1024, include_thoughts=True
    )
    assert (request.metadata, request.service_tier) == ({"team": "search"}, "flex")
    kept = request.extras[NAME]["body"]
    assert set(kept) == {
        "safetySettings",
        "cachedContent",
        "store",
        "toolConfig",
        "generationConfig",
    }
    # What is left of the nested objects, under their own key.
    assert kept["toolConfig"] == {"retrievalConfig": {"languageCode": "fr"}}
    assert kept["generationConfig"] == {
        "responseModalities": ["TEXT"],
        "mediaResolution": "MEDIA_RESOLUTION_LOW",
        "speechConfig": {"voiceConfig": {"prebuiltVoiceConfig": {"voiceName": "Kore"}}},
    }
    assert files == ProviderTool(NAME, HARD_CASES["everything"]["tools"][3])
    snake = normalizer().parse_full_request(HARD_CASES["snake-case"])
    assert snake.tool_choice == ToolChoice("auto", ("get_weather",))
    assert snake.reasoning == ReasoningConfig(effort="low", include_thoughts=False)
    assert snake.output == OutputFormat("json_schema", WEATHER)
    switches = normalizer().parse_full_request(HARD_CASES["levels-and-switches"])
    assert switches.reasoning == ReasoningConfig(enabled=True, effort="high")
    assert switches.tool_choice == ToolChoice("none")
    assert switches.output == OutputFormat("text")
    off = normalizer().parse_full_request(HARD_CASES["thinking-off"])
    assert off.reasoning == ReasoningConfig(enabled=False)
    odd = normalizer().parse_full_request(HARD_CASES["validated-and-odd-shapes"])
    # VALIDATED has no neutral equivalent: kept, like every value of another shape.
    assert odd.tool_choice is None and odd.output is None and odd.reasoning is None
    assert odd.generation == Generation()
    assert all(isinstance(tool, ProviderTool) for tool in odd.tools)


def test_the_normalizer_is_a_request_normalizer() -> None:
    assert isinstance(normalizer(), providers.RequestNormalizer)


def test_malformed_bodies_raise_the_librarys_error() -> None:
    with pytest.raises(providers.MalformedPayload):
        normalizer().parse_full_request({"contents": "nope"})
    with pytest.raises(providers.MalformedPayload):
        normalizer().parse_full_request(3)
    with pytest.raises(canisters.ProviderError, match="takes a Request"):
        normalizer().render_full_request({"contents": []})


# Across formats -----------------------------------------------------------------------


def render(
    request: Request, provider: str = NAME, **options: Any
) -> tuple[dict[str, Any], list[Any]]:
    report = providers.Report()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", providers.FidelityWarning)
        body = providers.get(provider).render_full_request(
            request, unsupported="drop", report=report, **options
        )
    return body, report.events


def _differences(source: Request, back: Request) -> set[str]:
    """The neutral fields (``generation.top_k``, ``tools``...) that differ
    between ``source`` and what the rendered body reads back as."""
    found: set[str] = set()
    for field in ("model", "tool_choice", "output", "reasoning", "cache", "user"):
        if getattr(source, field) != getattr(back, field):
            found.add(field)
    for field in ("metadata", "service_tier", "stream"):
        if getattr(source, field) != getattr(back, field):
            found.add(field)
    for field in attrs.fields(Generation):
        if getattr(source.generation, field.name) != getattr(
            back.generation, field.name
        ):
            found.add(f"generation.{field.name}")
    if [_plain(tool) for tool in source.tools] != [_plain(tool) for tool in back.tools]:
        found.add("tools")
    return found


def _plain(tool: Tool | ProviderTool) -> Any:
    if isinstance(tool, Tool):
        return (tool.name, tool.description, tool.parameters, tool.strict)
    return tool


def _reported(field: str, events: list[Any]) -> bool:
    top = field.partition(".")[0]
    return any(
        event.where == field
        or event.where.startswith((f"{field}.", f"{field}["))
        or (
            top in ("tools", "output", "reasoning", "tool_choice")
            and event.where.startswith(top)
        )
        for event in events
    )


@pytest.mark.parametrize(
    "path", CHAT_REQUESTS, ids=[path.stem for path in CHAT_REQUESTS]
)
def test_every_chat_request_translates_to_gemini(path: Path) -> None:
    source = providers.get("openai-chat").parse_full_request(payload(path))
    body, events = render(source)
    sdk_accepts(body)
    back = normalizer().parse_full_request(body)
    for field in _differences(source, back):
        assert _reported(field, events), (field, events)
    for key in source.extras.get("openai-chat", {}).get("body", {}):
        if key != "store":
            assert any(e.where == f"extras.openai-chat.body.{key}" for e in events)
    # Refused under the default policy exactly when something is not exact.
    inexact = [e for e in events if e.kind in ("dropped", "approximated", "conflict")]
    try:
        normalizer().render_full_request(source)
    except canisters.UnsupportedContent:
        assert inexact
    else:
        assert not inexact


@pytest.mark.parametrize("path", REQUESTS, ids=[path.stem for path in REQUESTS])
def test_every_gemini_request_translates_to_chat(path: Path) -> None:
    source = normalizer().parse_full_request(payload(path))
    body, events = render(source, "openai-chat", model="gpt-4.1")
    chat_accepts(body)
    back = providers.get("openai-chat").parse_full_request(body)
    for field in _differences(source, back) - {"model"}:
        assert _reported(field, events), (field, events)
    for key in source.extras.get(NAME, {}).get("body", {}):
        assert any(e.where == f"extras.gemini.body.{key}" for e in events)


NESTED = {
    "type": "object",
    "$defs": {"unit": {"type": "string", "enum": ["C", "F"]}},
    "properties": {
        "city": {"anyOf": [{"type": "string"}, {"type": "null"}]},
        "unit": {"$ref": "#/$defs/unit"},
        "kind": {"const": "weather"},
        "days": {"type": "integer", "exclusiveMinimum": 0},
    },
    "required": ["city"],
    "additionalProperties": False,
}


def test_a_json_schema_goes_to_the_openapi_subset_with_every_change_reported() -> None:
    request = Request([User("hi")], tools=(Tool("f", parameters=NESTED),))
    body, events = render(request)
    sdk_accepts(body)
    assert body["tools"] == [
        {
            "functionDeclarations": [
                {
                    "name": "f",
                    "parameters": {
                        "type": "object",
                        "properties": {
                            "city": {"type": "string", "nullable": True},
                            "unit": {"type": "string", "enum": ["C", "F"]},
                            "kind": {"type": "string", "enum": ["weather"]},
                            "days": {"type": "integer"},
                        },
                        "required": ["city"],
                    },
                }
            ]
        }
    ]
    assert {(e.kind, e.where) for e in events} == {
        ("approximated", "tools[0].parameters.$defs"),
        ("approximated", "tools[0].parameters.properties.city.anyOf"),
        ("approximated", "tools[0].parameters.properties.unit"),
        ("approximated", "tools[0].parameters.properties.kind.const"),
        ("approximated", "tools[0].parameters.properties.days.exclusiveMinimum"),
        ("approximated", "tools[0].parameters.additionalProperties"),
    }
    with pytest.raises(canisters.UnsupportedContent, match=r"tools\[0\]\.parameters"):
        normalizer().render_full_request(request)


def test_a_model_taking_json_schema_gets_the_json_schema_fields() -> None:
    caps = attrs.evolve(
        providers.capabilities_for(NAME), json_schema=True, tools_with_json=True
    )
    request = Request(
        [User("hi")],
        tools=(Tool("f", parameters=NESTED),),
        output=OutputFormat("json_schema", WEATHER, name="answer"),
    )
    body, events = render(request, capabilities=caps)
    sdk_accepts(body)
    declaration = body["tools"][0]["functionDeclarations"][0]
    schema = declaration["parametersJsonSchema"]
    assert schema["properties"]["kind"] == {"enum": ["weather"]}
    assert "$defs" in schema and "exclusiveMinimum" not in schema["properties"]["days"]
    assert body["generationConfig"] == {
        "responseMimeType": "application/json",
        "responseJsonSchema": WEATHER,
    }
    assert {(e.kind, e.where) for e in events} == {
        ("approximated", "tools[0].parameters.properties.kind.const"),
        ("approximated", "tools[0].parameters.properties.days.exclusiveMinimum"),
        ("dropped", "output.name"),
    }
    # The default profile (Gemini 2.5) takes no JSON answer beside tools:
    _, events = render(request)
    assert ("conflict", "output") in {(e.kind, e.where) for e in events}


def test_schemas_gemini_cannot_hold_are_refused_with_the_librarys_error() -> None:
    recursive = {
        "type": "object",
        "$defs": {
            "node": {"type": "object", "properties": {"next": {"$ref": "#/$defs/node"}}}
        },
        "properties": {"root": {"$ref": "#/$defs/node"}},
    }
    with pytest.raises(canisters.ProviderError, match="refers to itself"):
        render(Request(tools=(Tool("f", parameters=recursive),)))
    deep: dict[str, Any] = {"type": "string"}
    for _ in range(40):
        deep = {"type": "object", "properties": {"a": deep}}
    with pytest.raises(canisters.ProviderError, match="nests more than"):
        render(Request(tools=(Tool("f", parameters=deep),)))


def test_an_openapi_schema_reads_back_as_json_schema_for_other_formats() -> None:
    source = normalizer().parse_full_request(HARD_CASES["everything"])
    body, _ = render(source, "openai-chat", model="gpt-4.1")
    chat_accepts(body)
    assert body["tools"][1]["function"]["parameters"] == {
        "type": "object",
        "properties": {"city": {"type": ["string", "null"]}},
        "required": ["city"],
        "propertyOrdering": ["city"],  # carried: an annotation JSON Schema keeps
    }


def test_a_subset_under_auto_filters_the_tools() -> None:
    tools = (Tool("a", parameters=WEATHER), Tool("b"), Tool("c"))
    request = Request(
        [User("hi")], tools=tools, tool_choice=ToolChoice("auto", ("a", "c"))
    )
    body, events = render(request)
    sdk_accepts(body)
    names = [d["name"] for d in body["tools"][0]["functionDeclarations"]]
    assert names == ["a", "c"]
    assert body["toolConfig"] == {"functionCallingConfig": {"mode": "AUTO"}}
    assert [(e.kind, e.where, e.rule) for e in events] == [
        (
            "approximated",
            "tool_choice.names",
            "a subset under auto = a filtered tool list",
        )
    ]
    required = attrs.evolve(request, tool_choice=ToolChoice("required", ("a", "c")))
    body, events = render(required)
    assert body["toolConfig"] == {
        "functionCallingConfig": {"mode": "ANY", "allowedFunctionNames": ["a", "c"]}
    }
    assert len(body["tools"][0]["functionDeclarations"]) == 3 and not events
    # Gemini has no way to forbid parallel calls.
    serial = attrs.evolve(request, tool_choice=ToolChoice("none", parallel=False))
    body, events = render(serial)
    assert body["toolConfig"] == {"functionCallingConfig": {"mode": "NONE"}}
    assert [(e.kind, e.where) for e in events] == [("dropped", "tool_choice.parallel")]


def test_reasoning_levels_and_budgets_translate_through_the_table() -> None:
    effort = Request(
        [User("hi")], reasoning=ReasoningConfig(effort="medium", summary="auto")
    )
    body, events = render(effort)
    assert body["generationConfig"]["thinkingConfig"] == {
        "thinkingBudget": 8192,
        "includeThoughts": True,
    }
    assert [(e.kind, e.where, e.rule) for e in events] == [
        ("approximated", "reasoning.effort", "reasoning table: medium = 8192 tokens"),
        ("approximated", "reasoning.summary", "Gemini's thoughts are summaries"),
    ]
    # Gemini 3 takes levels: a budget becomes one, a level it lacks the nearest.
    gemini3 = attrs.evolve(
        providers.capabilities_for(NAME), reasoning="effort", efforts=("low", "high")
    )
    body, events = render(
        Request([User("hi")], reasoning=ReasoningConfig(budget_tokens=3000)),
        capabilities=gemini3,
    )
    assert body["generationConfig"]["thinkingConfig"] == {"thinkingLevel": "high"}
    assert [e.rule for e in events] == ["reasoning table: high = 16384 tokens"]
    body, events = render(effort, capabilities=gemini3)
    assert body["generationConfig"]["thinkingConfig"]["thinkingLevel"] == "high"
    sdk_accepts(body)
    # Off, and on at the model's choice, are exact.
    for enabled, budget in ((False, 0), (True, -1)):
        body, events = render(Request([User("hi")], reasoning=ReasoningConfig(enabled)))
        assert body["generationConfig"] == {
            "thinkingConfig": {"thinkingBudget": budget}
        }
        assert not events
    # A Gemini budget goes to OpenAI as an effort, reported.
    source = normalizer().parse_full_request(HARD_CASES["everything"])
    body, events = render(source, "openai-chat", model="gpt-4.1")
    assert body["reasoning_effort"] == "low"
    assert ("approximated", "reasoning.budget_tokens") in {
        (e.kind, e.where) for e in events
    }


def test_settings_from_another_format_are_held_to_gemini_limits() -> None:
    request = Request(
        [User("hi")],
        model="gpt-4.1",
        generation=Generation(temperature=2.5, stop=tuple("abcdef"), top_k=5),
        service_tier="default",
        user="u1",
        metadata={"run": "1"},
        stream=True,
    )
    body, events = render(request, model="gemini-2.5-flash")
    sdk_accepts(body)
    assert body == {  # the model goes in the URL, named in the report
        "contents": [{"role": "user", "parts": [{"text": "hi"}]}],
        "generationConfig": {
            "temperature": 2.0,
            "topK": 5,
            "stopSequences": ["a", "b", "c", "d", "e"],
        },
        "labels": {"run": "1"},
        "serviceTier": "standard",
    }
    assert [(e.kind, e.where) for e in events] == [
        ("moved", "model"),
        ("approximated", "generation.temperature"),
        ("approximated", "generation.stop"),
        ("approximated", "service_tier"),
        ("dropped", "user"),
        ("dropped", "stream"),
    ]
    assert "gemini-2.5-flash" in events[0].detail


def test_provider_tools_stay_with_their_provider() -> None:
    request = Request(
        [User("hi")],
        tools=(
            ProviderTool("openai-chat", {"type": "custom", "custom": {"name": "g"}}),
            ProviderTool(NAME, {"googleSearch": {}}),
            Tool("f", strict=True),
        ),
    )
    body, events = render(request)
    assert body["tools"] == [
        {"googleSearch": {}},
        {"functionDeclarations": [{"name": "f"}]},
    ]
    assert [(e.kind, e.where) for e in events] == [
        ("dropped", "tools[0]"),
        ("dropped", "tools[2].strict"),
    ]
    body, events = render(
        normalizer().parse_full_request(HARD_CASES["everything"]),
        "openai-chat",
        model="gpt-4.1",
    )
    assert {e.where for e in events} >= {"tools[2]", "tools[3]", "tools[4]"}


# Any body: refused with the library's error, or given back exactly ------------------

from hypothesis import given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

from .budget import examples  # noqa: E402
from .strategies import json_values  # noqa: E402

_declaration = st.fixed_dictionaries(
    {"name": st.sampled_from(["f", "g", ""]) | json_values},
    optional={
        "description": st.text(max_size=5) | json_values,
        "parameters": st.just(OPENAPI_WEATHER) | json_values,
        "parametersJsonSchema": st.just(WEATHER) | json_values,
        "parameters_json_schema": st.just(WEATHER),
        "behavior": json_values,
    },
)
_entry = st.fixed_dictionaries(
    {},
    optional={
        "functionDeclarations": st.lists(_declaration, max_size=3) | json_values,
        "function_declarations": st.lists(_declaration, max_size=2),
        "googleSearch": st.just({}),
        "codeExecution": json_values,
    },
)
_calling = st.fixed_dictionaries(
    {},
    optional={
        "mode": st.sampled_from(["AUTO", "ANY", "NONE", "VALIDATED"]) | json_values,
        "allowedFunctionNames": st.lists(st.sampled_from(["f", "g"]), max_size=2)
        | json_values,
        "allowed_function_names": st.just(["f"]),
    },
)
_thinking = st.fixed_dictionaries(
    {},
    optional={
        "thinkingBudget": st.integers(-2, 5000) | json_values,
        "thinking_budget": st.integers(0, 10),
        "thinkingLevel": st.sampled_from(["low", "HIGH", "Medium"]) | json_values,
        "includeThoughts": st.booleans() | json_values,
        "other": json_values,
    },
)
_generation = st.fixed_dictionaries(
    {},
    optional={
        "maxOutputTokens": st.integers(1, 9) | json_values,
        "max_output_tokens": st.integers(1, 9),
        "temperature": st.floats(0, 2) | json_values,
        "topK": st.integers(1, 50) | json_values,
        "stopSequences": st.lists(st.text(max_size=2), max_size=3) | json_values,
        "responseMimeType": st.sampled_from(["text/plain", "application/json"])
        | json_values,
        "response_mime_type": st.just("application/json"),
        "responseSchema": st.just(OPENAPI_WEATHER) | json_values,
        "responseJsonSchema": st.just(WEATHER),
        "thinkingConfig": _thinking | json_values,
        "thinking_config": _thinking,
        "responseModalities": json_values,
    },
)
_values = {
    "tools": st.lists(_entry, max_size=3),
    "toolConfig": st.fixed_dictionaries(
        {}, optional={"functionCallingConfig": _calling, "retrievalConfig": json_values}
    ),
    "tool_config": st.fixed_dictionaries({"function_calling_config": _calling}),
    "generationConfig": _generation,
    "generation_config": _generation,
    "labels": st.dictionaries(st.text(max_size=3), st.text(max_size=3), max_size=2),
    "serviceTier": st.sampled_from(["flex", "standard"]),
}
_KEYS = [*_values, "model", "safetySettings", "cachedContent", "system_instruction"]


@st.composite
def bodies(draw: Any) -> dict[str, Any]:
    body: dict[str, Any] = {"contents": CONTENTS}
    for key in draw(st.lists(st.sampled_from(_KEYS), max_size=6, unique=True)):
        body[key] = draw(_values.get(key, json_values) | json_values)
    return body


@settings(max_examples=examples(150), deadline=None)
@given(bodies())
def test_any_body_comes_back_exactly_or_is_refused(body: dict[str, Any]) -> None:
    comes_back_or_is_refused(normalizer(), body)


@settings(max_examples=examples(60), deadline=None)
@given(chat_bodies())
def test_any_chat_body_renders_as_the_sdk_takes_it_or_is_refused(
    body: dict[str, Any],
) -> None:
    try:
        request = providers.get("openai-chat").parse_full_request(body)
        rendered, _ = render(request)
    except canisters.ProviderError:
        return
    sdk_accepts(rendered)


def test_a_schema_changed_after_reading_is_translated_not_sent_as_read() -> None:
    request = normalizer().parse_full_request(HARD_CASES["everything"])
    tools = list(request.tools)
    tools[1] = attrs.evolve(tools[1], parameters={"type": "object", "title": "T"})
    changed = attrs.evolve(request, tools=tuple(tools))
    body, events = render(changed)
    declaration = body["tools"][0]["functionDeclarations"][1]
    assert declaration["parameters"] == {"type": "object", "title": "T"}
    assert not events
    # The same request read again from its document still gives the body back.
    again = canisters.from_json(canisters.to_json(request))
    assert normalizer().render_full_request(again) == HARD_CASES["everything"]
