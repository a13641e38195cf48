"""Hostile tool schemas: bombs of references, malformed keywords, arbitrary
values. :func:`~canisters.providers.translate_schema` and the reading of
Gemini's schemas either translate, or refuse with the library's
:class:`~canisters.ProviderError`; their work and what they keep are bounded."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import canisters
from canisters import providers
from canisters.providers import _rules as rules
from canisters.providers import translate_schema
from canisters.providers._rules import schema as schema_rules

from .budget import examples

TARGETS = ("gemini", "gemini-json", "openai", "openai-strict", "anthropic", "ollama")


def bomb(levels: int) -> dict[str, Any]:
    """A schema whose definitions each refer to the next one twice: inlined,
    it doubles at every level."""
    definitions: dict[str, Any] = {
        f"d{n}": {
            "type": "object",
            "properties": {
                "a": {"$ref": f"#/$defs/d{n + 1}"},
                "b": {"$ref": f"#/$defs/d{n + 1}"},
            },
        }
        for n in range(levels)
    }
    definitions[f"d{levels}"] = {"type": "string"}
    return {
        "type": "object",
        "properties": {"x": {"$ref": "#/$defs/d0"}},
        "$defs": definitions,
    }


def test_a_schema_bomb_is_refused_for_gemini_before_it_grows() -> None:
    small, changes = translate_schema(bomb(6), target="gemini")
    assert sum(change.action == "inlined" for change in changes) == 2**7 - 1
    assert "$ref" not in json.dumps(small)
    for levels in (14, 20, 30):
        with pytest.raises(canisters.ProviderError, match="grow by more than"):
            translate_schema(bomb(levels), target="gemini")
    # The JSON Schema targets keep the references: nothing to refuse.
    kept, _ = translate_schema(bomb(40), target="gemini-json")
    assert kept["$defs"]["d0"] == bomb(40)["$defs"]["d0"]


def test_a_bomb_with_a_large_definition_is_refused_after_few_inlinings() -> None:
    large = {"type": "string", "description": "d" * 300_000}
    schema = {
        "type": "object",
        "properties": {name: {"$ref": "#/$defs/large"} for name in "abcd"},
        "$defs": {"large": large},
    }
    once = {**schema, "properties": {"a": {"$ref": "#/$defs/large"}}}
    assert translate_schema(once, target="gemini")[0]["properties"]["a"] == large
    with pytest.raises(canisters.ProviderError, match="1,000,000 characters"):
        translate_schema(schema, target="gemini")


def test_a_whole_request_with_a_bomb_is_refused_for_gemini() -> None:
    body = {
        "model": "gpt-4o",
        "messages": [{"role": "user", "content": "hi"}],
        "tools": [
            {
                "type": "function",
                "function": {"name": "f", "parameters": bomb(20)},
            }
        ],
    }
    request = providers.get("openai-chat").parse_full_request(body)
    with pytest.raises(canisters.ProviderError, match="grow by more than"):
        providers.get("gemini").render_full_request(request)


def test_large_translations_are_not_remembered() -> None:
    schema_rules._REMEMBERED.clear()
    large = {
        "type": "object",
        "properties": {f"p{n}": {"type": "string"} for n in range(5000)},
    }
    for target in ("gemini", "gemini-json", "openai-strict"):
        first = translate_schema(large, target=target)  # type: ignore[arg-type]
        assert translate_schema(large, target=target) == first  # type: ignore[arg-type]
    rules.from_gemini_schema(large)
    assert not schema_rules._REMEMBERED
    translate_schema(bomb(6), target="gemini")
    assert len(schema_rules._REMEMBERED) == 1


@pytest.mark.parametrize(
    "schema",
    [
        {"anyOf": None},
        {"anyOf": 5},
        {"anyOf": {"type": "string"}},
        {"type": ["string", "integer"], "anyOf": 5},
        {"type": "string", "format": ["date-time"]},
        {"type": {"a": 1}, "format": "int32"},
        {"type": [["x"]], "format": {}},
    ],
    ids=repr,
)
@pytest.mark.parametrize("target", TARGETS)
def test_malformed_keywords_are_refused_or_removed_never_a_builtin_error(
    schema: dict[str, Any], target: Any
) -> None:
    try:
        translated, _changes = translate_schema(schema, target=target)
    except canisters.ProviderError as error:
        refusal = str(error)
    else:
        refusal = ""
    if refusal:
        assert refusal.startswith("$")
        return
    if target == "gemini":  # a format Gemini cannot take is removed
        assert isinstance(translated.get("format", ""), str)


# Fuzzing ---------------------------------------------------------------------------

KEYWORDS = [
    "type",
    "format",
    "anyOf",
    "oneOf",
    "allOf",
    "properties",
    "items",
    "required",
    "enum",
    "const",
    "nullable",
    "$ref",
    "$defs",
    "definitions",
    "additionalProperties",
    "prefixItems",
    "example",
    "propertyOrdering",
    "not",
    "description",
]
LEAVES = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-(2**70), 2**70),
    st.floats(allow_nan=True, allow_infinity=True),
    st.sampled_from(
        [
            "string",
            "object",
            "array",
            "null",
            "integer",
            "number",
            "date-time",
            "int32",
            "enum",
            "#/$defs/a",
            "#/$defs/b",
            "#/definitions/a",
            "https://example.com/s.json",
            "",
        ]
    ),
)
SCHEMAS = st.recursive(
    LEAVES,
    lambda inner: st.one_of(
        st.lists(inner, max_size=4),
        st.dictionaries(st.sampled_from(KEYWORDS), inner, max_size=5),
        st.dictionaries(st.sampled_from(["a", "b", "c"]), inner, max_size=3),
    ),
    max_leaves=30,
)
FUZZ = settings(
    max_examples=examples(150),
    deadline=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.too_slow],
)


@FUZZ
@given(
    body=st.dictionaries(st.sampled_from(KEYWORDS), SCHEMAS, max_size=6),
    definitions=st.dictionaries(st.sampled_from(["a", "b"]), SCHEMAS, max_size=2),
    target=st.sampled_from(TARGETS),
)
def test_arbitrary_schemas_translate_or_are_refused_with_the_library_error(
    body: dict[str, Any], definitions: dict[str, Any], target: Any
) -> None:
    for schema in (body, {**body, "$defs": definitions}):
        try:
            translated, changes = translate_schema(schema, target=target)
        except canisters.ProviderError:
            pass
        else:
            assert isinstance(translated, dict)
            assert all(change.path.startswith("$") for change in changes)
        try:
            rules.from_gemini_schema(schema)
        except canisters.ProviderError:
            pass
