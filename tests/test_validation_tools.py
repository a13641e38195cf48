"""Invocations checked against the request's tools: unknown tools, arguments
their schema refuses, and the error result a runtime sends back instead."""

from __future__ import annotations

import pytest

import canisters as c
from canisters.builders import INVALID_ARGUMENTS
from canisters.validation import argument_problems

WEATHER = c.Tool(
    "get_weather",
    "Weather of a city",
    {
        "type": "object",
        "properties": {
            "city": {"type": "string", "minLength": 1},
            "days": {"type": "integer", "minimum": 1},
            "units": {"enum": ["C", "F"]},
        },
        "required": ["city"],
        "additionalProperties": False,
    },
)
SEARCH = c.ProviderTool(
    "anthropic", {"type": "web_search_20250305", "name": "web_search"}
)


def test_matching_arguments_have_no_problems() -> None:
    assert argument_problems(WEATHER, {"city": "Paris", "days": 2}) == ()
    assert argument_problems(c.Tool("free"), {"anything": [1]}) == ()


def test_every_mismatch_is_named_by_its_path() -> None:
    found = argument_problems(WEATHER, {"days": 0, "units": "K", "extra": 1})
    assert found == (
        "$: 'city' is a required property",
        "$: Additional properties are not allowed ('extra' was unexpected)",
        "$.days: 0 is less than the minimum of 1",
        "$.units: 'K' is not one of ['C', 'F']",
    )


def test_an_invalid_schema_is_refused() -> None:
    broken = c.Tool("broken", parameters={"type": "object", "properties": 3})
    with pytest.raises(c.ModelError, match=r"invalid schema at \$\.properties"):
        argument_problems(broken, {})


def test_validate_reports_unknown_tools_and_bad_arguments() -> None:
    good = c.Invocation("get_weather", {"city": "Paris"})
    bad = c.Invocation("get_weather", {"city": 3})
    unknown = c.Invocation("get_time", {})
    server = c.Invocation("web_search", {"query": "x"})
    conversation = c.Conversation(
        [
            c.User("hi"),
            good,
            c.Result(good.invocation_id, "get_weather", "sunny"),
            bad,
            unknown,
            server,
        ]
    )
    c.validate(conversation)  # without tools, names are not checked
    found = c.problems(conversation, tools=(WEATHER, SEARCH))
    assert [(p.index, p.code) for p in found] == [
        (3, "invalid-arguments"),
        (4, "unknown-tool"),
    ]
    assert "$.city: 3 is not of type 'string'" in found[0].message
    with pytest.raises(c.InvalidConversation, match="unknown-tool"):
        c.validate(conversation, tools=(WEATHER,))
    request = c.Request(conversation, tools=(WEATHER, SEARCH))
    assert c.problems(request.conversation, tools=request.tools) == found


def test_tools_of_another_type_are_refused() -> None:
    with pytest.raises(c.ModelError):
        c.problems([], tools="get_weather")  # type: ignore[arg-type]
    with pytest.raises(c.ModelError):
        c.problems([], tools=[{"name": "get_weather"}])  # type: ignore[list-item]


def test_the_result_builder_answers_an_invalid_call() -> None:
    call = c.Invocation("get_weather", {"city": ""}, step=3)
    builder = c.ResultBuilder.respond_to(call)
    result = builder.check_arguments(WEATHER)
    assert result is not None
    assert result.is_error
    assert result.invocation_id == call.invocation_id
    assert result.step == 3
    assert result.error is not None
    assert result.error.code == INVALID_ARGUMENTS == "invalid_arguments"
    assert result.error.retryable is True
    assert result.error.message == (
        "invalid arguments for get_weather: $.city: '' should be non-empty"
    )
    assert result.error.details == {"problems": ["$.city: '' should be non-empty"]}
    valid = c.ResultBuilder.respond_to(c.Invocation("get_weather", {"city": "Oslo"}))
    assert valid.check_arguments(WEATHER) is None
    with pytest.raises(c.BuilderError, match="not the invoked"):
        builder.check_arguments(c.Tool("get_time"))
