"""The neutral request model and the cross-format rules (schemas, reasoning,
capabilities), through the public API."""

from __future__ import annotations

import copy
import json
from typing import Any

import attrs
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
from canisters._frozen import FrozenDict
from canisters.providers import (
    Capabilities,
    ReasoningTable,
    is_strict_compatible,
    translate_schema,
)
from canisters.providers import _rules as rules
from canisters.providers._common import Options
from canisters.providers._requests import BODY, Fields, Rendering, WholeRequests

# The rules' tests use the "drop" policy, which warns as it reports.
quiet = pytest.mark.filterwarnings("ignore::canisters.providers.FidelityWarning")

# The model ----------------------------------------------------------------------------


def test_a_request_holds_every_field() -> None:
    request = Request(
        [User("hi")],
        model="gpt-4.1",
        tools=(
            Tool("get_weather", "Weather", {"type": "object"}, strict=True),
            ProviderTool("anthropic", {"type": "web_search_20250305", "name": "w"}),
        ),
        tool_choice=ToolChoice.tool("get_weather", parallel=False),
        output=OutputFormat("json_schema", {"type": "object"}, name="answer"),
        generation=Generation(max_output_tokens=100, temperature=0.5, stop="END"),
        reasoning=ReasoningConfig(effort="high", budget_tokens=9000),
        cache=CacheConfig(key="k", retention="24h"),
        user="u1",
        metadata={"a": "b"},
        service_tier="flex",
        stream=True,
        extras={"openai-chat": {"body": {"modalities": ["text"]}}},
    )
    assert isinstance(request.conversation, canisters.Conversation)
    assert request.generation.stop == ("END",)
    assert request.tool_choice is not None
    assert request.tool_choice.forced == "get_weather"
    assert request.functions == (request.tools[0],)
    assert request.tool("get_weather") is request.tools[0]
    assert request.tool("nope") is None
    with pytest.raises(TypeError):
        request.metadata["a"] = "c"  # type: ignore[index]
    with pytest.raises(attrs.exceptions.FrozenInstanceError):
        request.model = "x"  # type: ignore[misc]


@pytest.mark.parametrize(
    ("build", "field"),
    [
        (lambda: Tool(""), "name"),
        (lambda: Tool("f", description=3), "description"),  # type: ignore[arg-type]
        (lambda: Tool("f", strict="yes"), "strict"),  # type: ignore[arg-type]
        (lambda: ToolChoice("sometimes"), "mode"),  # type: ignore[arg-type]
        (lambda: ToolChoice("auto", names=(1,)), "names"),  # type: ignore[arg-type]
        (lambda: ToolChoice(names=("f",)), "names"),
        (lambda: OutputFormat("xml"), "type"),  # type: ignore[arg-type]
        (lambda: Generation(max_output_tokens=1.5), "max_output_tokens"),  # type: ignore[arg-type]
        (lambda: Generation(temperature="hot"), "temperature"),  # type: ignore[arg-type]
        (lambda: Generation(logprobs=1), "logprobs"),  # type: ignore[arg-type]
        (lambda: ReasoningConfig(budget_tokens=True), "budget_tokens"),
        (lambda: CacheConfig(key=1), "key"),  # type: ignore[arg-type]
        (lambda: Request(model=3), "model"),  # type: ignore[arg-type]
        (lambda: Request(tools=({"name": "f"},)), "tools"),  # type: ignore[arg-type]
        (lambda: Request(tool_choice="auto"), "tool_choice"),  # type: ignore[arg-type]
        (lambda: Request(generation=None), "generation"),  # type: ignore[arg-type]
        (lambda: Request(extras={"x": 1}), "extras"),
    ],
)
def test_a_field_of_another_type_is_refused(build: Any, field: str) -> None:
    with pytest.raises(canisters.ModelError) as caught:
        build()
    assert caught.value.field == field


# Schema translation -------------------------------------------------------------------

NESTED = {
    "$schema": "https://json-schema.org/draft/2020-12/schema",
    "type": "object",
    "properties": {
        "city": {"type": "string", "format": "email", "examples": ["x"]},
        "unit": {"anyOf": [{"$ref": "#/$defs/Unit"}, {"type": "null"}]},
        "kind": {"const": "weather"},
        "count": {"type": ["integer", "null"], "exclusiveMinimum": 0},
        "pick": {"oneOf": [{"type": "string"}, {"type": "integer"}]},
        "empty": {"type": "object", "properties": {}},
        "level": {"type": "integer", "enum": [1, 2]},
    },
    "required": ["city"],
    "additionalProperties": False,
    "$defs": {"Unit": {"type": "string", "enum": ["C", "F"]}},
}


def test_gemini_schema_changes_are_reported_by_path() -> None:
    original = copy.deepcopy(NESTED)
    schema, changes = translate_schema(NESTED, target="gemini")
    assert original == NESTED  # pure
    assert schema == {
        "type": "object",
        "properties": {
            "city": {"type": "string"},
            "unit": {"type": "string", "enum": ["C", "F"], "nullable": True},
            "kind": {"type": "string", "enum": ["weather"]},
            "count": {"type": "integer", "nullable": True},
            "pick": {"anyOf": [{"type": "string"}, {"type": "integer"}]},
            "empty": {"type": "object"},
            "level": {"type": "integer"},
        },
        "required": ["city"],
    }
    found = {(change.path, change.action) for change in changes}
    assert found == {
        ("$.$defs", "removed"),
        ("$.$schema", "removed"),
        ("$.additionalProperties", "removed"),
        ("$.properties.city.format", "removed"),
        ("$.properties.city.examples", "removed"),
        ("$.properties.unit.anyOf", "nullable"),
        ("$.properties.unit.anyOf", "merged"),
        ("$.properties.unit", "inlined"),
        ("$.properties.kind.const", "enum"),
        ("$.properties.count.type", "nullable"),
        ("$.properties.count.exclusiveMinimum", "removed"),
        ("$.properties.pick.oneOf", "any_of"),
        ("$.properties.empty.properties", "removed"),
        ("$.properties.level.enum", "removed"),
    }


def test_gemini_refuses_recursion_and_depth() -> None:
    recursive = {
        "type": "object",
        "properties": {"child": {"$ref": "#/$defs/Node"}},
        "$defs": {
            "Node": {"type": "object", "properties": {"next": {"$ref": "#/$defs/Node"}}}
        },
    }
    with pytest.raises(canisters.ProviderError, match="refers to itself"):
        translate_schema(recursive, target="gemini")
    deep: dict[str, Any] = {"type": "string"}
    for _ in range(5):
        deep = {"type": "object", "properties": {"a": deep}}
    with pytest.raises(canisters.ProviderError, match=r"\$\.properties\.a.*nests"):
        translate_schema(deep, target="gemini", max_depth=3)
    assert translate_schema(deep, target="gemini", max_depth=5)[1] == []
    with pytest.raises(canisters.ProviderError, match="not a local definition"):
        translate_schema({"$ref": "https://example.com/s.json"}, target="gemini")


def test_gemini_json_schema_needs_fewer_changes() -> None:
    schema, changes = translate_schema(NESTED, target="gemini-json")
    assert schema["$defs"] == NESTED["$defs"]
    assert schema["properties"]["unit"] == NESTED["properties"]["unit"]  # type: ignore[index]
    assert schema["properties"]["kind"] == {"enum": ["weather"]}
    assert {(c.path, c.action) for c in changes} == {
        ("$.$schema", "removed"),
        ("$.properties.city.examples", "removed"),
        ("$.properties.kind.const", "enum"),
        ("$.properties.count.exclusiveMinimum", "removed"),
    }


def test_openai_strict_closes_objects_and_requires_every_property() -> None:
    loose = {
        "type": "object",
        "properties": {"a": {"type": "string"}, "b": {"type": "integer"}},
        "required": ["a"],
    }
    assert not is_strict_compatible(loose)
    schema, changes = translate_schema(loose, target="openai-strict")
    assert schema == {
        "type": "object",
        "properties": {"a": {"type": "string"}, "b": {"type": ["integer", "null"]}},
        "required": ["a", "b"],
        "additionalProperties": False,
    }
    assert {(c.path, c.action) for c in changes} == {
        ("$.additionalProperties", "closed"),
        ("$.properties.b", "required"),
    }
    assert is_strict_compatible(schema)
    assert translate_schema(schema, target="openai-strict") == (schema, [])


@pytest.mark.parametrize("target", ["gemini", "gemini-json", "openai-strict"])
def test_a_translation_given_again_is_the_same_and_its_own(target: Any) -> None:
    # Translations are remembered: what comes back the second time is equal,
    # a copy of its own, and tells apart what a plain key would not.
    first = translate_schema(NESTED, target=target)
    first[0]["mutated"] = True
    first[1].clear()
    again = translate_schema(copy.deepcopy(NESTED), target=target)
    assert again == translate_schema(FrozenDict(NESTED), target=target)
    assert "mutated" not in again[0]
    assert again[1]
    number: dict[str, Any] = {"type": "object", "properties": {}}
    for bound in (1, 1.0, True, None, float("inf")):
        number["properties"] = {"n": {"type": "number", "maximum": bound}}
        translated = translate_schema(number, target=target)[0]
        maximum = translated["properties"]["n"].get("maximum", "gone")
        assert maximum == "gone" or type(maximum) is type(bound)
    reordered = {"properties": {"b": {}, "a": {}}, "type": "object"}
    for schema in (reordered, {**reordered, "properties": {"a": {}, "b": {}}}):
        translated = translate_schema(schema, target=target)[0]
        assert list(translated["properties"]) == list(schema["properties"])


@pytest.mark.parametrize("target", ["openai", "anthropic", "ollama"])
def test_json_schema_targets_take_the_schema_as_it_is(target: Any) -> None:
    assert translate_schema(NESTED, target=target) == (NESTED, [])


def test_a_schema_that_is_not_an_object_is_refused() -> None:
    with pytest.raises(canisters.ProviderError):
        translate_schema([], target="gemini")  # type: ignore[arg-type]


# Reasoning table and capabilities -----------------------------------------------------


def test_reasoning_table_maps_both_ways_and_is_overridable() -> None:
    table = ReasoningTable()
    assert table.budget("high") == 16384
    assert table.budget("none") is None
    assert table.effort(16384) == "high"
    assert table.effort(3000) == "medium"
    assert table.effort(10**6) == "xhigh"
    assert table.effort(3000, ("low", "high")) == "high"
    mine = ReasoningTable({"high": 4096, "low": 1024})
    assert list(mine.budgets) == ["low", "high"]
    assert mine.effort(2000) == "high"
    with pytest.raises(canisters.ProviderError):
        ReasoningTable({"low": -1})


def test_capabilities_default_per_format_and_are_an_option() -> None:
    assert providers.capabilities_for("anthropic").default_max_tokens == 4096
    assert providers.capabilities_for("openai-chat").max_stop_sequences == 4
    mine = Capabilities(temperature=(0, 1))
    assert mine.temperature == (0.0, 1.0)
    assert providers.capabilities_for("anthropic", mine) is mine
    with pytest.raises(canisters.ProviderError, match="capabilities"):
        providers.get("openai-chat").render_full_request(Request(), capabilities={})
    with pytest.raises(canisters.ProviderError, match="max_tokens"):
        providers.get("openai-chat").render_full_request(Request(), max_tokens=0)


# Request documents --------------------------------------------------------------------


def test_a_request_document_round_trips() -> None:
    request = Request(
        [User("hi")],
        model="m",
        tools=(
            Tool(
                "f", "does f", {"type": "object"}, strict=False, extras={"p": {"a": 1}}
            ),
            ProviderTool("gemini", {"googleSearch": {}}),
        ),
        tool_choice=ToolChoice("auto", ("f",), parallel=True),
        output=OutputFormat("json"),
        generation=Generation(temperature=0.0, stop=("x",), seed=1),
        reasoning=ReasoningConfig(enabled=False, include_thoughts=True),
        cache=CacheConfig(key="k"),
        metadata={"a": "b"},
        stream=False,
        extras={"openai-chat": {"body": {"store": True}}},
    )
    text = canisters.to_json(request)
    assert '"format":"canisters.request"' in text
    assert canisters.from_json(text) == request
    assert canisters.from_json(canisters.to_json(Request())) == Request()


@pytest.mark.parametrize(
    ("record", "path"),
    [
        ({"model": 3}, "$.request.model"),
        ({"tools": [{"type": "mystery"}]}, "$.request.tools[0].type"),
        ({"tools": [{"type": "function", "name": ""}]}, "$.request.tools[0].name"),
        ({"tools": {}}, "$.request.tools"),
        ({"generation": {"top_k": "many"}}, "$.request.generation.top_k"),
        ({"generation": {"warmth": 1}}, "$.request.generation.warmth"),
        ({"output": []}, "$.request.output"),
        ({"colour": "red"}, "$.request.colour"),
        ({"canisters": [{"role": "nobody"}]}, "$.request.canisters[0].role"),
    ],
)
def test_a_bad_request_document_says_where(record: Any, path: str) -> None:
    document = {"format": "canisters.request", "version": 2, "request": record}
    with pytest.raises(canisters.SerializationError) as caught:
        canisters.from_json(json.dumps(document))
    assert caught.value.path == path


# The rules a provider's request module applies ----------------------------------------


def outcomes(**options: Any) -> tuple[rules.Outcomes, providers.Report]:
    report = providers.Report()
    return rules.Outcomes(Options(report=report, **options), "x"), report


def kinds(report: providers.Report) -> list[tuple[str, str]]:
    return [(event.kind, event.where) for event in report.events]


ANTHROPIC = providers.capabilities_for("anthropic")
THINKING = ReasoningConfig(enabled=True, budget_tokens=2048)


def test_a_forced_tool_gives_way_to_reasoning_where_the_model_wants() -> None:
    noted, report = outcomes(unsupported="drop")
    forced = ToolChoice.tool("f", parallel=False)
    assert rules.forced_with_reasoning(
        forced, THINKING, ANTHROPIC, noted
    ) == ToolChoice("auto", ("f",), False)
    assert kinds(report) == [("conflict", "tool_choice")]
    same = providers.capabilities_for("openai-chat")
    assert rules.forced_with_reasoning(forced, THINKING, same, noted) is forced
    assert rules.forced_with_reasoning(forced, None, ANTHROPIC, noted) is forced
    strict, _ = outcomes()
    with pytest.raises(canisters.UnsupportedContent, match="tool_choice"):
        rules.forced_with_reasoning(forced, THINKING, ANTHROPIC, strict)


def test_sampling_gives_way_to_reasoning_where_the_model_wants() -> None:
    noted, report = outcomes(unsupported="drop")
    generation = Generation(temperature=0.3, top_k=5, top_p=0.9, max_output_tokens=9)
    sent = rules.sampling_with_reasoning(generation, True, ANTHROPIC, noted)
    assert sent == Generation(max_output_tokens=9)
    assert kinds(report) == [
        ("conflict", "generation.temperature"),
        ("conflict", "generation.top_k"),
        ("conflict", "generation.top_p"),
    ]
    assert (
        rules.sampling_with_reasoning(generation, False, ANTHROPIC, noted) is generation
    )


def test_json_beside_tools_gives_way_where_the_model_wants() -> None:
    noted, report = outcomes(unsupported="drop")
    gemini = providers.capabilities_for("gemini")
    json_out = OutputFormat("json")
    assert rules.json_with_tools(json_out, True, gemini, noted) is None
    assert rules.json_with_tools(json_out, False, gemini, noted) is json_out
    assert kinds(report) == [("conflict", "output")]


def test_structured_output_as_a_forced_tool() -> None:
    noted, report = outcomes(unsupported="drop")
    tool = rules.output_as_tool(OutputFormat("json_schema", {"type": "object"}), noted)
    assert tool == Tool(rules.OUTPUT_TOOL, tool.description, {"type": "object"})
    assert kinds(report) == [("approximated", "output")]


@quiet
def test_budgets_and_efforts_translate_through_the_table() -> None:
    noted, report = outcomes(unsupported="drop")
    table = ReasoningTable()
    assert (
        rules.budget_for(ReasoningConfig(effort="low"), ANTHROPIC, table, noted) == 2048
    )
    assert (
        rules.budget_for(ReasoningConfig(budget_tokens=100), ANTHROPIC, table, noted)
        == 1024
    )
    assert (
        rules.budget_for(ReasoningConfig(effort="none"), ANTHROPIC, table, noted)
        is None
    )
    both = ReasoningConfig(effort="high", budget_tokens=5000)
    assert rules.budget_for(both, ANTHROPIC, table, noted) == 5000
    chat = providers.capabilities_for("openai-chat")
    assert rules.effort_for(both, chat, table, noted) == "high"
    assert rules.effort_for(ReasoningConfig(enabled=False), chat, table, noted) is None
    with_none = Capabilities(efforts=("none", "low"))
    assert (
        rules.effort_for(ReasoningConfig(enabled=False), with_none, table, noted)
        == "none"
    )
    assert kinds(report) == [
        ("approximated", "reasoning.effort"),
        ("approximated", "reasoning.budget_tokens"),
        ("dropped", "reasoning.effort"),
        ("dropped", "reasoning.budget_tokens"),
        ("dropped", "reasoning.enabled"),
        ("approximated", "reasoning.enabled"),
    ]


@quiet
def test_service_tiers_translate_or_drop() -> None:
    noted, report = outcomes(unsupported="drop")
    assert (
        rules.service_tier(
            "standard_only", providers.capabilities_for("openai-chat"), noted
        )
        == "default"
    )
    assert rules.service_tier("default", ANTHROPIC, noted) == "standard_only"
    assert rules.service_tier("flex", ANTHROPIC, noted) is None
    gemini = providers.capabilities_for("gemini")
    assert rules.service_tier("flex", gemini, noted) == "flex"
    assert rules.service_tier("default", gemini, noted) == "standard"
    assert rules.service_tier("scale", gemini, noted) is None
    assert rules.service_tier("auto", Capabilities(), noted) is None
    assert [kind for kind, _ in kinds(report)] == [
        "approximated",
        "approximated",
        "dropped",
        "approximated",
        "dropped",
        "dropped",
    ]


@quiet
def test_an_effort_the_model_lacks_becomes_its_nearest_level() -> None:
    noted, report = outcomes(unsupported="drop")
    table = providers.ReasoningTable()
    gemini3 = Capabilities(reasoning="effort", efforts=("low", "high"))
    assert rules.effort_within("high", gemini3, table, noted) == "high"
    assert rules.effort_within("medium", gemini3, table, noted) == "high"
    assert rules.effort_within("minimal", gemini3, table, noted) == "low"
    assert rules.effort_within("xhigh", gemini3, table, noted) == "high"
    assert rules.effort_within("medium", Capabilities(efforts=()), table, noted) == (
        "medium"
    )
    assert [event.rule for event in report.events] == [
        "reasoning table: high = 16384 tokens",
        "reasoning table: low = 2048 tokens",
        "reasoning table: high = 16384 tokens",
    ]


def test_a_gemini_schema_reads_back_as_json_schema() -> None:
    gemini = {
        "type": "OBJECT",
        "properties": {
            "city": {"type": "STRING", "nullable": True, "example": "Paris"},
            "unit": {"type": "STRING", "format": "enum", "enum": ["C", "F"]},
            "any": {"anyOf": [{"type": "INTEGER"}], "nullable": True},
        },
        "propertyOrdering": ["city", "unit"],
    }
    schema, changes = rules.from_gemini_schema(gemini)
    assert schema == {
        "type": "object",
        "properties": {
            "city": {"type": ["string", "null"], "examples": ["Paris"]},
            "unit": {"type": "string", "enum": ["C", "F"]},
            "any": {"anyOf": [{"type": "integer"}, {"type": "null"}]},
        },
        "propertyOrdering": ["city", "unit"],  # kept, not dropped unreported
    }
    assert {(c.path, c.action) for c in changes} == {
        ("$.properties.city.nullable", "nullable"),
        ("$.properties.city.example", "renamed"),
        ("$.properties.unit.format", "removed"),
        ("$.properties.any.nullable", "nullable"),
    }


# Every built-in request module ---------------------------------------------------------


@pytest.mark.parametrize(
    ("name", "bad"),
    [
        ("openai-chat", {"messages": "nope"}),
        ("openai-responses", {"input": 3}),
        ("ollama", {"messages": "nope"}),
        ("anthropic", {"messages": "nope"}),
    ],
)
def test_malformed_bodies_raise_the_librarys_error(
    name: str, bad: dict[str, Any]
) -> None:
    normalizer = providers.get(name)
    assert isinstance(normalizer, providers.RequestNormalizer)
    with pytest.raises(providers.MalformedPayload):
        normalizer.parse_full_request(bad)
    with pytest.raises(providers.MalformedPayload):
        normalizer.parse_full_request(3)
    with pytest.raises(canisters.ProviderError, match="takes a Request"):
        normalizer.render_full_request(bad)


# A request settings module of one's own -----------------------------------------------


class _Settings:
    """A minimal request settings module: a format taking ``model``, a
    required ``limit`` and OpenAI Chat's ``store``."""

    NAME = "tiny"
    CONVERSATION_KEYS = frozenset({"messages"})

    @staticmethod
    def parse_settings(body: Any) -> Request:
        fields = Fields(body, skip=_Settings.CONVERSATION_KEYS)
        model = fields.take("model", lambda v: isinstance(v, str))
        limit = fields.take("limit", lambda v: type(v) is int)
        extras = {"tiny": {BODY: fields.rest}} if fields.rest else None
        return Request(
            model=model, generation=Generation(max_output_tokens=limit), extras=extras
        )

    @staticmethod
    def render_settings(request: Request, rendering: Rendering) -> dict[str, Any]:
        out: dict[str, Any] = {}
        if rendering.model is not None:
            out["model"] = rendering.model
        limit = rendering.max_output_tokens(request.generation.max_output_tokens)
        if limit is not None:
            out["limit"] = limit
        store = rendering.claim("openai-chat", "store")
        if store is not None:
            out["store"] = store
        out.update(rendering.own_body)
        return out


class _Tiny(WholeRequests):
    name = "tiny"
    request_settings = _Settings()

    def parse_request(self, body: Any) -> canisters.Conversation:
        return providers.get("openai-chat").parse_request(body)

    def render_request(self, conversation: Any, **options: Any) -> dict[str, Any]:
        return providers.get("openai-chat").render_request(conversation, **options)


def test_a_settings_module_is_all_a_format_needs() -> None:
    tiny = _Tiny()
    body = {
        "model": "t",
        "messages": [{"role": "user", "content": "hi"}],
        "limit": 5,
        "x": [1],
    }
    assert tiny.render_full_request(tiny.parse_full_request(body)) == body
    chat = providers.get("openai-chat").parse_full_request(
        {"model": "gpt", "messages": [], "store": True, "verbosity": "low"}
    )
    report = providers.Report()
    with pytest.warns(providers.FidelityWarning, match="verbosity"):
        sent = tiny.render_full_request(
            chat, unsupported="drop", report=report, model="t", max_tokens=77
        )
    assert sent == {
        "model": "t",
        "messages": [],
        "store": True,
    }  # no default limit: none
    assert kinds(report) == [("dropped", "extras.openai-chat.body.verbosity")]
    profile = Capabilities(default_max_tokens=100)
    report = providers.Report()
    sent = tiny.render_full_request(Request(), capabilities=profile, report=report)
    assert sent == {"messages": [], "limit": 100}
    assert [(e.kind, e.rule) for e in report.events] == [
        ("synthesized", "the profile's default")
    ]
    sent = tiny.render_full_request(Request(), capabilities=profile, max_tokens=7)
    assert sent["limit"] == 7


def test_a_schema_too_deep_for_python_is_refused() -> None:
    deep: dict[str, Any] = {}
    for _ in range(5000):
        deep = {"items": deep}
    for target in ("openai", "gemini-json", "openai-strict"):
        with pytest.raises(canisters.ProviderError, match="too deeply"):
            translate_schema(deep, target=target)  # type: ignore[arg-type]
    with pytest.raises(canisters.ProviderError, match="nests more than"):
        translate_schema(deep, target="gemini")
    with pytest.raises(canisters.ProviderError, match="too deeply"):
        rules.from_gemini_schema(deep)
