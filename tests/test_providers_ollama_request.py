"""Whole Ollama requests: ``parse_full_request`` / ``render_full_request``.

Every ``/api/chat`` request body of the corpus and the hard cases come back
exactly; rendered bodies are accepted by the ollama SDK's ``ChatRequest``;
what another format's request holds and Ollama cannot take (tool choice,
strict tools, caching, tiers...) is reported, or refused under
``unsupported="error"``; Ollama's runner options are never passed off as
another format's settings.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import attrs
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
from .providers_support import Corpus
from .requests_support import (
    bodies_of,
    chat_functions,
    chat_tools,
    comes_back_or_is_refused,
    comes_back_whole,
    payload,
    recorded_requests,
    render_reported,
)
from .strategies import json_values
from .test_providers_ollama import validate as validate_messages

NAME = "ollama"
CORPUS = Corpus(NAME)
REQUESTS = recorded_requests(NAME)
CHAT = Corpus("openai-chat")
CHAT_REQUESTS = recorded_requests("openai-chat")


def normalizer() -> Any:
    return providers.get(NAME)


def chat() -> Any:
    return providers.get("openai-chat")


SERVER_OPTIONS = {"min_p"}
"""Runner options the Ollama server takes that the SDK's ``Options`` lacks."""


def sdk_accepts(body: dict[str, Any]) -> None:
    """The ollama SDK takes ``body``: every top-level key is a field of
    ``ChatRequest``, which validates it; the messages validate as
    ``ollama.Message``, the options as ``ollama.Options`` (every key one of
    its fields, or of :data:`SERVER_OPTIONS`)."""
    from ollama import Options
    from ollama._types import ChatRequest

    assert set(body) <= set(ChatRequest.model_fields), set(body) - set(
        ChatRequest.model_fields
    )
    ChatRequest.model_validate(body)
    validate_messages([dict(message) for message in body["messages"]])
    if "options" in body:
        assert set(body["options"]) <= set(Options.model_fields) | SERVER_OPTIONS
        Options.model_validate(body["options"])
    if "think" in body:
        assert body["think"] in (True, False, "low", "medium", "high")


@pytest.mark.parametrize("path", REQUESTS, ids=[path.stem for path in REQUESTS])
def test_every_recorded_request_comes_back_whole(path: Path) -> None:
    body = payload(path)
    request = comes_back_whole(normalizer(), body)
    assert len(request.conversation) == len(normalizer().parse_request(body))


WEATHER = {
    "type": "object",
    "properties": {"city": {"type": "string"}},
    "required": ["city"],
}
MESSAGES = [{"role": "user", "content": "Weather in Paris?"}]
WEATHER_TOOL = {
    "type": "function",
    "function": {
        "name": "get_weather",
        "description": "Weather of a city",
        "parameters": WEATHER,
    },
}

HARD_CASES: dict[str, dict[str, Any]] = {
    "everything": {
        "model": "gpt-oss:20b",
        "messages": MESSAGES,
        "tools": [WEATHER_TOOL],
        "format": WEATHER,
        "options": {
            "num_predict": 256,
            "temperature": 0.2,
            "top_p": 0.9,
            "top_k": 40,
            "min_p": 0.05,
            "stop": ["END"],
            "seed": 7,
            "presence_penalty": 0.5,
            "frequency_penalty": 0.25,
            "repeat_penalty": 1.1,
            "repeat_last_n": 64,
            "num_ctx": 8192,
            "num_gpu": 1,
            "mirostat": 2,
            "mirostat_tau": 5.0,
            "mirostat_eta": 0.1,
        },
        "think": "high",
        "keep_alive": "5m",
        "logprobs": True,
        "top_logprobs": 3,
        "stream": False,
    },
    "json-and-think-off": {
        "model": "qwen3",
        "messages": MESSAGES,
        "format": "json",
        "think": False,
        "options": {"num_predict": -1, "stop": []},
        "keep_alive": 0,
    },
    "sdk-defaults": {
        "model": "llama3.2",
        "messages": MESSAGES,
        "tools": [],
        "stream": False,
        "format": "",
        "options": {},
        "keep_alive": None,
    },
    "odd-shapes": {
        "model": "llama3.2",
        "messages": MESSAGES,
        "tools": [
            {
                "type": "function",
                "function": {
                    "name": "get_weather",
                    "description": None,
                    "parameters": WEATHER,
                    "strict": True,
                },
                "items": None,
            },
            {"type": "function", "function": {"name": ""}},
            {"function": {"name": "untyped"}},
        ],
        "format": None,
        "options": {"temperature": "hot", "stop": "END", "num_predict": 0},
        "think": "",
        "tool_choice": "required",
        "truncate": True,
    },
    "options-not-an-object": {
        "model": "llama3.2",
        "messages": MESSAGES,
        "options": None,
        "tools": None,
        "stream": None,
    },
}


@pytest.mark.parametrize("name", list(HARD_CASES))
def test_hard_cases_come_back_whole(name: str) -> None:
    comes_back_whole(normalizer(), HARD_CASES[name])


def test_the_hard_cases_read_into_neutral_fields() -> None:
    request = normalizer().parse_full_request(HARD_CASES["everything"])
    assert request.model == "gpt-oss:20b"
    assert request.tools == (Tool("get_weather", "Weather of a city", WEATHER),)
    assert request.tool_choice is None
    assert request.output == OutputFormat("json_schema", WEATHER)
    assert request.generation == Generation(
        max_output_tokens=256,
        temperature=0.2,
        top_p=0.9,
        top_k=40,
        stop=("END",),
        seed=7,
        presence_penalty=0.5,
        frequency_penalty=0.25,
        logprobs=True,
        top_logprobs=3,
    )
    assert request.reasoning == ReasoningConfig(effort="high")
    assert request.stream is False
    # The runner options and keep_alive are kept, not passed off as neutral.
    assert request.extras[NAME] == {
        "body": {
            "keep_alive": "5m",
            "options": {
                "min_p": 0.05,
                "repeat_penalty": 1.1,
                "repeat_last_n": 64,
                "num_ctx": 8192,
                "num_gpu": 1,
                "mirostat": 2,
                "mirostat_tau": 5.0,
                "mirostat_eta": 0.1,
            },
        }
    }
    off = normalizer().parse_full_request(HARD_CASES["json-and-think-off"])
    assert off.output == OutputFormat("json")
    assert off.reasoning == ReasoningConfig(enabled=False)
    # num_predict -1 (no limit) and an empty stop list have no neutral spelling.
    assert off.generation == Generation()
    defaults = normalizer().parse_full_request(HARD_CASES["sdk-defaults"])
    assert defaults.output == OutputFormat("text")
    assert defaults.extras[NAME] == {
        "format": "",
        "tools": [],
        "options": True,
        "body": {"keep_alive": None},
    }
    odd = normalizer().parse_full_request(HARD_CASES["odd-shapes"])
    # strict is no Ollama field: kept in the tool's extras, never read as strict.
    assert odd.tools[0] == Tool(
        "get_weather",
        parameters=WEATHER,
        extras={
            NAME: {
                "function": {"description": None, "strict": True},
                "entry": {"items": None},
            }
        },
    )
    assert odd.tools[1] == ProviderTool(
        NAME, {"type": "function", "function": {"name": ""}}
    )
    assert odd.tool_choice is None
    assert set(odd.extras[NAME]["body"]) == {
        "format",
        "options",
        "think",
        "tool_choice",
        "truncate",
    }


@pytest.mark.parametrize(
    "name", [n for n in HARD_CASES if n not in ("odd-shapes", "options-not-an-object")]
)
def test_rendered_hard_cases_are_accepted_by_the_sdk(name: str) -> None:
    body = normalizer().render_full_request(
        normalizer().parse_full_request(HARD_CASES[name])
    )
    sdk_accepts(body)


# Across formats -----------------------------------------------------------------------


def render(
    request: Request, target: Any = None, **options: Any
) -> tuple[dict[str, Any], list[Any]]:
    return render_reported(target or normalizer(), request, **options)


def settings_events(events: list[Any]) -> set[tuple[str, str]]:
    """The report entries about request fields (not conversation parts)."""
    return {
        (event.kind, event.where)
        for event in events
        if not event.where.startswith(("canister", "conversation"))
    }


def expected_losses(request: Request) -> set[tuple[str, str]]:
    """What Ollama cannot take of ``request``, by the default profile: the
    report entries a translation must make."""
    lost: set[tuple[str, str]] = set()
    for index, tool in enumerate(request.tools):
        if isinstance(tool, ProviderTool):
            lost.add(("dropped", f"tools[{index}]"))
        elif tool.strict:
            lost.add(("dropped", f"tools[{index}].strict"))
    choice = request.tool_choice
    if choice is not None:
        if choice.parallel is not None:
            lost.add(("dropped", "tool_choice.parallel"))
        if choice.mode not in (None, "auto") or choice.names:
            lost.add(("dropped", "tool_choice"))
    output = request.output
    if output is not None and output.type == "json_schema":
        for name in ("name", "description"):
            if getattr(output, name) is not None:
                lost.add(("dropped", f"output.{name}"))
    if request.generation.candidates not in (None, 1):
        lost.add(("dropped", "generation.candidates"))
    reasoning = request.reasoning
    if reasoning is not None and reasoning.effort is not None:
        lost.add(("approximated", "reasoning.effort"))
    for field in ("cache", "user", "metadata", "service_tier"):
        if getattr(request, field) is not None:
            lost.add(("dropped", field))
    for provider, own in request.extras.items():
        for key in own.get("body", {}) if provider != NAME else ():
            lost.add(("dropped", f"extras.{provider}.body.{key}"))
    return lost


@pytest.mark.parametrize(
    "path", CHAT_REQUESTS, ids=[path.stem for path in CHAT_REQUESTS]
)
def test_every_chat_request_translates_with_every_loss_reported(path: Path) -> None:
    request = chat().parse_full_request(payload(path))
    # Ollama requires a model: one body of the corpus has none.
    body, events = render(request, model=request.model or "llama3.2")
    sdk_accepts(body)
    assert settings_events(events) == expected_losses(request)
    # What Chat and Ollama share goes over exactly.
    assert body["model"] == (request.model or "llama3.2")
    assert len(body.get("tools", ())) == len(request.tools)


CHAT_BODY: dict[str, Any] = {
    "model": "gpt-4.1",
    "messages": MESSAGES,
    "tools": [
        {**WEATHER_TOOL, "function": {**WEATHER_TOOL["function"], "strict": True}}
    ],
    "tool_choice": {"type": "function", "function": {"name": "get_weather"}},
    "parallel_tool_calls": False,
    "response_format": {
        "type": "json_schema",
        "json_schema": {"name": "answer", "schema": WEATHER, "strict": True},
    },
    "max_completion_tokens": 500,
    "temperature": 1.5,
    "top_p": 0.9,
    "stop": ["END", "STOP"],
    "seed": 7,
    "presence_penalty": 0.5,
    "frequency_penalty": -0.5,
    "n": 2,
    "logprobs": True,
    "top_logprobs": 3,
    "reasoning_effort": "high",
    "prompt_cache_key": "tenant-1",
    "user": "user-1",
    "metadata": {"run": "42"},
    "service_tier": "flex",
    "store": True,
    "stream": True,
}


def test_a_whole_chat_request_translates_and_every_loss_is_reported() -> None:
    request = chat().parse_full_request(CHAT_BODY)
    body, events = render(request)
    sdk_accepts(body)
    assert body == {
        "model": "gpt-4.1",
        "messages": MESSAGES,
        "tools": [WEATHER_TOOL],
        "format": WEATHER,
        "options": {
            "num_predict": 500,
            "temperature": 1.5,
            "top_p": 0.9,
            "seed": 7,
            "presence_penalty": 0.5,
            "frequency_penalty": -0.5,
            "stop": ["END", "STOP"],
        },
        "logprobs": True,
        "top_logprobs": 3,
        "think": True,
        "stream": True,
    }
    assert (
        settings_events(events)
        == expected_losses(request)
        == {
            ("dropped", "tools[0].strict"),
            ("dropped", "tool_choice.parallel"),
            ("dropped", "tool_choice"),
            ("dropped", "output.name"),
            ("dropped", "generation.candidates"),
            ("approximated", "reasoning.effort"),
            ("dropped", "cache"),
            ("dropped", "user"),
            ("dropped", "metadata"),
            ("dropped", "service_tier"),
            ("dropped", "extras.openai-chat.body.store"),
        }
    )
    reasons = {event.where: event.detail for event in events}
    assert "not forced to call 'get_weather'" in reasons["tool_choice"]
    assert reasons["reasoning.effort"] == "effort 'high' sent as think: true"


def test_a_model_taking_levels_gets_the_effort() -> None:
    caps = attrs.evolve(
        providers.capabilities_for(NAME),
        reasoning="effort",
        efforts=("low", "medium", "high"),
    )
    request = Request([User("hi")], reasoning=ReasoningConfig(effort="medium"))
    body, events = render(request, capabilities=caps)
    assert (body["think"], events) == ("medium", [])
    # A budget goes through the reasoning table, reported.
    budget = Request([User("hi")], reasoning=ReasoningConfig(budget_tokens=3000))
    body, events = render(budget, capabilities=caps)
    assert body["think"] == "medium"
    assert [(e.kind, e.where) for e in events] == [
        ("approximated", "reasoning.budget_tokens")
    ]
    # A level the model does not take is sent as the switch.
    body, events = render(
        Request([User("hi")], reasoning=ReasoningConfig(effort="xhigh")),
        capabilities=caps,
    )
    assert body["think"] is True
    assert [e.rule for e in events] == [
        "the model's levels are low, medium, high; else on or off"
    ]
    # The default profile has the switch only.
    body, events = render(budget)
    assert body["think"] is True
    assert [e.detail for e in events] == ["a budget of 3000 sent as think: true"]


@pytest.mark.parametrize(
    ("reasoning", "think", "kinds"),
    [
        (ReasoningConfig(enabled=True), True, []),
        (ReasoningConfig(enabled=False), False, []),
        (ReasoningConfig(effort="none"), False, [("approximated", "reasoning.effort")]),
        (
            ReasoningConfig(enabled=False, budget_tokens=2048),
            False,
            [("dropped", "reasoning.budget_tokens")],
        ),
        (
            ReasoningConfig(enabled=True, summary="auto", include_thoughts=False),
            True,
            [
                ("dropped", "reasoning.summary"),
                ("dropped", "reasoning.include_thoughts"),
            ],
        ),
        (ReasoningConfig(enabled=True, include_thoughts=True), True, []),
    ],
)
def test_reasoning_is_a_switch_by_default(
    reasoning: ReasoningConfig, think: Any, kinds: list[tuple[str, str]]
) -> None:
    body, events = render(Request([User("hi")], reasoning=reasoning))
    assert body["think"] is think
    assert [(e.kind, e.where) for e in events] == kinds


@pytest.mark.parametrize(
    ("choice", "reported"),
    [
        (ToolChoice("auto"), None),
        (ToolChoice("none"), "the model may still call the tools offered"),
        (ToolChoice("required"), "the model is not forced to call a tool"),
        (ToolChoice.tool("get_weather"), "not forced to call 'get_weather'"),
        (ToolChoice("auto", ("get_weather",)), "not only those named"),
    ],
)
def test_ollama_has_no_tool_choice(choice: ToolChoice, reported: str | None) -> None:
    request = Request(
        [User("hi")],
        tools=(Tool("get_weather", parameters=WEATHER),),
        tool_choice=choice,
    )
    body, events = render(request, model="llama3.2")
    sdk_accepts(body)
    assert "tool_choice" not in body
    assert body["tools"][0]["function"]["name"] == "get_weather"
    if reported is None:
        assert events == []
    else:
        assert [(e.kind, e.where) for e in events] == [("dropped", "tool_choice")]
        assert reported in events[0].detail
    if reported is not None:
        with pytest.raises(canisters.UnsupportedContent, match="tool_choice"):
            normalizer().render_full_request(request)


def test_no_tool_call_is_what_ollama_does_without_tools() -> None:
    body, events = render(Request([User("hi")], tool_choice=ToolChoice("none")))
    assert (body, events) == ({"messages": [{"role": "user", "content": "hi"}]}, [])


def test_structured_output_with_tools_is_a_conflict_when_the_profile_says_so() -> None:
    request = Request(
        [User("hi")],
        tools=(Tool("get_weather", parameters=WEATHER),),
        output=OutputFormat("json_schema", WEATHER),
    )
    body, events = render(request)
    assert body["format"] == WEATHER
    assert events == []
    caps = attrs.evolve(providers.capabilities_for(NAME), tools_with_json=False)
    body, events = render(request, capabilities=caps)
    assert "format" not in body
    assert body["tools"][0]["function"]["name"] == "get_weather"
    assert [(e.kind, e.where) for e in events] == [("conflict", "output")]


@pytest.mark.parametrize(
    ("output", "sent", "kinds"),
    [
        (OutputFormat("text"), None, []),
        (OutputFormat("json"), "json", []),
        (
            OutputFormat("json_schema"),
            "json",
            [("approximated", "output.schema")],
        ),
        (
            OutputFormat("json_schema", WEATHER, "answer", "The answer", strict=True),
            WEATHER,
            [("dropped", "output.name"), ("dropped", "output.description")],
        ),
    ],
)
def test_output_formats(output: OutputFormat, sent: Any, kinds: list[Any]) -> None:
    body, events = render(Request([User("hi")], model="m", output=output))
    sdk_accepts(body)
    assert body.get("format") == sent
    assert [(e.kind, e.where) for e in events] == kinds


def test_ollamas_runner_options_are_never_sent_as_penalties() -> None:
    """``repeat_penalty`` (multiplicative) is not ``frequency_penalty``
    (additive): translated to Chat, the runner options are reported dropped,
    and Chat's penalty is not made up from them."""
    request = normalizer().parse_full_request(HARD_CASES["everything"])
    body, events = render(request, chat())
    assert "frequency_penalty" in body and body["frequency_penalty"] == 0.25
    assert "repeat_penalty" not in json.dumps(body)
    found = settings_events(events)
    assert ("dropped", "extras.ollama.body.options") in found
    assert ("dropped", "extras.ollama.body.keep_alive") in found
    assert ("dropped", "generation.top_k") in found
    # And the other way: a Chat penalty is Ollama's frequency_penalty, never
    # its repeat_penalty.
    back, _ = render(chat().parse_full_request(CHAT_BODY))
    assert "repeat_penalty" not in back["options"]


@pytest.mark.parametrize("path", REQUESTS, ids=[path.stem for path in REQUESTS])
def test_every_recorded_request_translates_to_chat(path: Path) -> None:
    from .test_providers_openai_chat_request import sdk_accepts as chat_accepts

    request = normalizer().parse_full_request(payload(path))
    body, events = render(request, chat(), model="gpt-4.1")
    chat_accepts(body)
    found = settings_events(events)
    kept = request.extras[NAME].get("body", {})
    expected = {("dropped", f"extras.ollama.body.{key}") for key in kept}
    if request.generation.top_k is not None:
        expected.add(("dropped", "generation.top_k"))
    if request.reasoning is not None:
        expected.add(("dropped", "reasoning.enabled"))
    if request.output is not None and request.output.type == "json_schema":
        expected.add(("synthesized", "output.name"))  # Chat requires a name
    assert found == expected


def test_error_policy_refuses_anything_not_exact() -> None:
    with pytest.raises(canisters.UnsupportedContent, match=r"request field user"):
        normalizer().render_full_request(Request(user="u"))
    with pytest.raises(canisters.UnsupportedContent, match=r"tools\[0\]"):
        normalizer().render_full_request(
            Request(tools=(ProviderTool("gemini", {"googleSearch": {}}),))
        )
    with pytest.raises(canisters.UnsupportedContent, match=r"cache"):
        normalizer().render_full_request(Request(cache=CacheConfig("k")))
    exact = Request(
        [User("hi")],
        model="m",
        generation=Generation(max_output_tokens=9, temperature=3, top_k=5),
        reasoning=ReasoningConfig(enabled=True),
    )
    assert normalizer().render_full_request(exact) == {
        "model": "m",
        "messages": [{"role": "user", "content": "hi"}],
        "options": {"num_predict": 9, "temperature": 3, "top_k": 5},
        "think": True,
    }


# Any body: refused with the library's error, or given back exactly ------------------

_KEYS = [
    "model",
    "stream",
    "tools",
    "format",
    "options",
    "think",
    "keep_alive",
    "logprobs",
    "top_logprobs",
]
_tool = chat_tools(chat_functions(WEATHER), "items")
_option_values = {
    "num_predict": st.integers(-2, 100),
    "stop": st.lists(st.text(max_size=3), max_size=3) | st.text(max_size=3),
    "temperature": st.floats(0, 2) | st.integers(0, 2),
    "top_k": st.integers(0, 100),
}
_options = st.dictionaries(
    st.sampled_from(
        [
            "num_predict",
            "temperature",
            "top_p",
            "top_k",
            "stop",
            "seed",
            "presence_penalty",
            "frequency_penalty",
            "repeat_penalty",
            "num_ctx",
        ]
    ),
    json_values,
    max_size=5,
).flatmap(
    lambda keys: st.fixed_dictionaries(
        {key: _option_values.get(key, json_values) | json_values for key in keys}
    )
)
_values = {
    "tools": st.lists(_tool, max_size=3),
    "format": st.sampled_from(["", "json", WEATHER, "yaml"]),
    "options": _options,
    "think": st.booleans() | st.sampled_from(["low", "medium", "high", ""]),
}


def bodies() -> st.SearchStrategy[dict[str, Any]]:
    return bodies_of({"messages": MESSAGES}, _KEYS, _values, max_size=6)


@settings(max_examples=examples(120), deadline=None)
@given(bodies())
def test_any_body_comes_back_exactly_or_is_refused(body: dict[str, Any]) -> None:
    comes_back_or_is_refused(normalizer(), body)


def test_settings_set_on_a_parsed_request_replace_a_null_options() -> None:
    request = normalizer().parse_full_request(HARD_CASES["options-not-an-object"])
    changed = attrs.evolve(request, generation=Generation(temperature=0.5))
    body = normalizer().render_full_request(changed)
    assert body["options"] == {"temperature": 0.5}
    # Kept runner options join the neutral ones.
    everything = normalizer().parse_full_request(HARD_CASES["everything"])
    fewer = attrs.evolve(everything, generation=Generation(seed=1))
    assert normalizer().render_full_request(fewer)["options"] == {
        "seed": 1,
        **everything.extras[NAME]["body"]["options"],
    }


# Any neutral request: accepted by the SDK, and refused under "error" exactly
# when something is reported --------------------------------------------------------

_maybe = st.none
_neutral = st.builds(
    Request,
    st.just([User("hi")]),
    model=st.just("llama3.2"),
    tools=st.lists(
        st.sampled_from(
            [
                Tool("f", "F", WEATHER),
                Tool("g", parameters=WEATHER, strict=True),
                Tool("h", strict=False),
                ProviderTool("gemini", {"googleSearch": {}}),
            ]
        ),
        max_size=3,
        unique=True,
    ).map(tuple),
    tool_choice=_maybe()
    | st.builds(
        ToolChoice,
        st.sampled_from(["none", "auto", "required"]),
        st.sampled_from([(), ("f",), ("f", "g")]),
        _maybe() | st.booleans(),
    ),
    output=_maybe()
    | st.sampled_from(
        [
            OutputFormat("text"),
            OutputFormat("json"),
            OutputFormat("json_schema"),
            OutputFormat("json_schema", WEATHER),
            OutputFormat("json_schema", WEATHER, "a", "An answer", strict=True),
        ]
    ),
    generation=st.builds(
        Generation,
        max_output_tokens=_maybe() | st.integers(1, 4096),
        temperature=_maybe() | st.floats(0, 3),
        top_p=_maybe() | st.floats(0, 1),
        top_k=_maybe() | st.integers(1, 100),
        stop=_maybe() | st.lists(st.text(max_size=3), max_size=5).map(tuple),
        seed=_maybe() | st.integers(0, 99),
        frequency_penalty=_maybe() | st.floats(-2, 2),
        candidates=_maybe() | st.integers(1, 3),
        logprobs=_maybe() | st.booleans(),
        top_logprobs=_maybe() | st.integers(0, 5),
    ),
    reasoning=_maybe()
    | st.builds(
        ReasoningConfig,
        enabled=_maybe() | st.booleans(),
        effort=_maybe() | st.sampled_from(["none", "low", "high", "xhigh"]),
        budget_tokens=_maybe() | st.integers(0, 40000),
        summary=_maybe() | st.just("auto"),
        include_thoughts=_maybe() | st.booleans(),
    ),
    cache=_maybe() | st.just(CacheConfig("k")),
    user=_maybe() | st.just("u"),
    service_tier=_maybe() | st.just("flex"),
    stream=_maybe() | st.booleans(),
)


@settings(max_examples=examples(100), deadline=None)
@given(_neutral)
def test_any_neutral_request_is_sent_or_refused_as_reported(request: Request) -> None:
    body, events = render(request)
    sdk_accepts(body)
    reported = [event for event in events if event.kind != "synthesized"]
    try:
        strict = normalizer().render_full_request(request)
    except canisters.UnsupportedContent:
        assert reported
    else:
        assert not reported
        assert strict == body
