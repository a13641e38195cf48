"""Gemini whole requests: reading the settings (see
:mod:`canisters.providers.gemini.request`, which renders them)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..._frozen import EMPTY, FrozenDict
from ...exceptions import ProviderError
from ...requests import (
    Generation,
    OutputFormat,
    ProviderTool,
    ReasoningConfig,
    Request,
    Tool,
    ToolChoice,
)
from .. import _rules as rules
from .._requests import (
    BODY,
    NO_GENERATION,
    Fields,
    is_bool,
    is_int,
    is_mapping,
    is_number,
    is_str,
    is_string_map,
    is_strings,
    new_generation,
    new_output,
    new_provider_tool,
    new_reasoning,
    new_request,
    new_tool,
    new_tool_choice,
)
from .reading import _snake

__all__ = ["CONVERSATION_KEYS", "NAME", "parse_settings"]

NAME = "gemini"
CONVERSATION_KEYS = frozenset({"contents", "systemInstruction", "system_instruction"})

_SYSTEM = ("systemInstruction", "system_instruction")
_NESTED = ("generationConfig", "toolConfig")
_MODES = {"NONE": "none", "AUTO": "auto", "ANY": "required"}
_MODES_BACK = {"none": "NONE", "auto": "AUTO", "required": "ANY"}
_JSON = "application/json"

# generationConfig key -> (Generation field, check), read in one loop.
_GENERATION = {
    "maxOutputTokens": ("max_output_tokens", is_int),
    "temperature": ("temperature", is_number),
    "topP": ("top_p", is_number),
    "topK": ("top_k", is_int),
    "seed": ("seed", is_int),
    "presencePenalty": ("presence_penalty", is_number),
    "frequencyPenalty": ("frequency_penalty", is_number),
    "candidateCount": ("candidates", is_int),
    "responseLogprobs": ("logprobs", is_bool),
    "logprobs": ("top_logprobs", is_int),
}


class _Reader:
    """Takes keys in either spelling, noting the dotted paths spelled in
    snake_case."""

    __slots__ = ("empty", "snake")

    def __init__(self) -> None:
        self.snake: list[str] = []
        self.empty: list[str] = []

    def take(self, fields: Fields, name: str, fits: Any, path: str) -> Any:
        value = fields.take(name, fits) if name in fields.rest else None
        if value is None:
            snake = _snake(name)
            if snake != name and snake in fields.rest:
                value = fields.take(snake, fits)
                if value is not None:
                    self.snake.append(path)
        return value

    def spelled(self, path: str, name: str) -> str:
        return _snake(name) if path in self.snake else name

    def nested(self, fields: Fields, name: str) -> tuple[str, Fields | None]:
        """The object ``name`` (a top-level key) as a :class:`Fields` of its
        own, and how it was spelled."""
        raw = self.take(fields, name, is_mapping, name)
        key = self.spelled(name, name)
        if raw is None:
            return key, None
        if not raw:
            self.empty.append(name)
        return key, Fields(raw)


def parse_settings(body: Mapping[str, Any]) -> Request:
    """The fields of a ``generateContent`` body other than the conversation."""
    fields = Fields(body, skip=CONVERSATION_KEYS)
    read = next((key for key in _SYSTEM if body.get(key) is not None), None)
    for key in _SYSTEM:  # a system key the conversation did not read is kept
        if key in body and key != read:
            fields.rest[key] = body[key]
    reader = _Reader()
    marks: dict[str, Any] = {}
    model = fields.take("model", is_str)
    tools = _parse_tools(fields, reader, marks)
    key, config = reader.nested(fields, "toolConfig")
    choice = None
    if config is not None:
        choice = _parse_choice(config, reader)
        if config.rest:
            fields.rest[key] = config.rest
    key, config = reader.nested(fields, "generationConfig")
    generation, output, reasoning = NO_GENERATION, None, None
    if config is not None:
        generation = _parse_generation(config, reader)
        output = _parse_output(config, reader, marks)
        reasoning = _parse_thinking(config, reader, marks)
        if config.rest:
            fields.rest[key] = config.rest
    labels = reader.take(fields, "labels", is_string_map, "labels")
    tier = reader.take(fields, "serviceTier", is_str, "serviceTier")
    if reader.snake:
        marks["snake"] = reader.snake
    if reader.empty:
        marks["empty"] = reader.empty
    if fields.rest:
        marks[BODY] = fields.rest
    return new_request(
        model=model,
        tools=tuple(tools),
        tool_choice=choice,
        output=output,
        generation=generation,
        reasoning=reasoning,
        metadata=FrozenDict(labels) if labels is not None else None,
        service_tier=tier,
        extras=FrozenDict({NAME: marks}) if marks else EMPTY,
    )


def _declaration(raw: object) -> tuple[Tool, dict[str, Any]] | None:
    """A function declaration as a tool and the marks of its spelling;
    ``None`` when it is not shaped as one."""
    if type(raw) is dict and len(raw) == 3:
        # The commonest shape: a name, a description and a JSON Schema.
        name, description = raw.get("name"), raw.get("description")
        schema = raw.get("parametersJsonSchema")
        if (
            type(name) is str
            and name
            and type(description) is str
            and type(schema) is dict
        ):
            return new_tool(name, description, FrozenDict(schema), None, EMPTY), {}
    if not is_mapping(raw):
        return None
    name = raw.get("name")
    description = raw.get("description", "")
    if not isinstance(name, str) or not name or not isinstance(description, str):
        return None
    given = [key for key in _SCHEMA_KEYS if key in raw]
    if len(given) > 1 or (given and not is_mapping(raw[given[0]])):
        return None
    mark: dict[str, Any] = {}
    parameters: Any = None
    if given:
        key = given[0]
        parameters = raw[key]
        if key == "parameters":
            try:
                parameters = _read_openapi(parameters)
            except ProviderError:
                return None
            mark = {"key": key, "schema": raw[key]}
        elif key != "parametersJsonSchema":
            mark = {"key": key}
    other = {key: value for key, value in raw.items() if key not in _DECLARATION_KEYS}
    tool = new_tool(
        name,
        raw.get("description"),
        parameters
        if parameters is None or type(parameters) is FrozenDict
        else FrozenDict(parameters),
        None,
        FrozenDict({NAME: {"declaration": other}}) if other else EMPTY,
    )
    return tool, mark


_READ: dict[int, tuple[FrozenDict[str, Any], Any]] = {}


def _read_openapi(original: Mapping[str, Any]) -> FrozenDict[str, Any]:
    """``original``, in Gemini's OpenAPI subset, as JSON Schema; remembered,
    so that rendering the same request back needs not read it again."""
    schema: FrozenDict[str, Any] = FrozenDict(rules.from_gemini_schema(original)[0])
    if len(_READ) >= 512:
        _READ.clear()
    _READ[id(schema)] = (schema, original)
    return schema


def _unchanged(schema: Mapping[str, Any], original: Any) -> bool:
    """Whether ``schema`` is what ``original`` (a body's OpenAPI schema) reads
    as: the body's schema can go back as it came."""
    known = _READ.get(id(schema))
    if known is not None and known[0] is schema and known[1] is original:
        return True
    return rules.from_gemini_schema(original)[0] == schema


_SCHEMA_KEYS = ("parameters", "parametersJsonSchema", "parameters_json_schema")
_DECLARATION_KEYS = frozenset({"name", "description", *_SCHEMA_KEYS})
_DECLARATIONS = ("functionDeclarations", "function_declarations")


def _parse_tools(
    fields: Fields, reader: _Reader, marks: dict[str, Any]
) -> list[Tool | ProviderTool]:
    entries = fields.rest.get("tools")
    if type(entries) is not list or not entries:
        return []
    if not all(is_mapping(entry) for entry in entries):
        return []  # kept as it came
    fields.take("tools")
    tools: list[Tool | ProviderTool] = []
    layout: list[dict[str, Any]] = []
    for entry in entries:
        keys = [key for key in _DECLARATIONS if key in entry]
        read = None
        if len(keys) == 1 and type(entry[keys[0]]) is list and entry[keys[0]]:
            read = [_declaration(item) for item in entry[keys[0]]]
        if read is None or None in read:
            tools.append(new_provider_tool(NAME, FrozenDict(entry)))
            layout.append({"functions": 0, "other": True})
            continue
        other = {key: value for key, value in entry.items() if key != keys[0]}
        tools.extend(tool for tool, _ in read)  # type: ignore[misc]
        if other:
            tools.append(new_provider_tool(NAME, FrozenDict(other)))
        described: dict[str, Any] = {"functions": len(read), "other": bool(other)}
        if keys[0] != _DECLARATIONS[0]:
            described["key"] = keys[0]
        spellings = [mark for _, mark in read]  # type: ignore[misc]
        if any(spellings):
            described["declarations"] = spellings
        layout.append(described)
    if layout != _default_layout(tools):
        marks["tools"] = layout
    return tools


def _default_layout(tools: list[Tool | ProviderTool]) -> list[dict[str, Any]]:
    """How tools are grouped into entries when nothing says otherwise: every
    function in one entry where the first one is, every other kind alone."""
    layout: list[dict[str, Any]] = []
    functions: dict[str, Any] | None = None
    for tool in tools:
        if isinstance(tool, Tool):
            if functions is None:
                functions = {"functions": 0, "other": False}
                layout.append(functions)
            functions["functions"] += 1
        else:
            layout.append({"functions": 0, "other": True})
    return layout


def _parse_choice(config: Fields, reader: _Reader) -> ToolChoice | None:
    raw = config.rest.get(
        "functionCallingConfig", config.rest.get("function_calling_config")
    )
    if not is_mapping(raw):
        return None
    mode = raw.get("mode")
    if mode not in _MODES:
        return None
    names = None
    spelled = [
        key for key in ("allowedFunctionNames", "allowed_function_names") if key in raw
    ]
    if len(raw) != 1 + len(spelled) or len(spelled) > 1:
        return None
    if spelled:
        names = raw[spelled[0]]
        if not is_strings(names):
            return None
    path = "toolConfig.functionCallingConfig"
    reader.take(config, "functionCallingConfig", is_mapping, path)
    if spelled and spelled[0] != "allowedFunctionNames":
        reader.snake.append(f"{path}.allowedFunctionNames")
    return new_tool_choice(_MODES[mode], tuple(names or ()), None)  # type: ignore[no-any-return]


def _parse_generation(config: Fields, reader: _Reader) -> Generation:
    rest = config.rest
    values: dict[str, Any] = {}
    # Only the keys present are looked at; camelCase first, so that a key given
    # in both spellings is read in camelCase and the other one kept.
    for key in sorted((key for key in rest if key in _SPELLINGS), key=_snake_last):
        camel, name, fits = _SPELLINGS[key]
        value = rest[key]
        if name in values or not fits(value):
            continue
        del rest[key]
        values[name] = tuple(value) if name == "stop" else value
        if key != camel:
            reader.snake.append(f"generationConfig.{camel}")
    return new_generation(**values) if values else NO_GENERATION


_SPELLINGS = {
    spelling: (camel, name, fits)
    for camel, (name, fits) in {
        **_GENERATION,
        "stopSequences": ("stop", is_strings),
    }.items()
    for spelling in (camel, _snake(camel))
}


def _snake_last(key: str) -> bool:
    return _SPELLINGS[key][0] != key


def _parse_output(
    config: Fields, reader: _Reader, marks: dict[str, Any]
) -> OutputFormat | None:
    rest = config.rest
    mimes = [key for key in ("responseMimeType", "response_mime_type") if key in rest]
    schemas = [key for key in _OUTPUT_SCHEMAS if key in rest]
    if len(mimes) != 1 or len(schemas) > 1:
        return None
    mime = rest[mimes[0]]
    if mime == "text/plain" and not schemas:
        output = new_output("text", None, None, None, None)
    elif mime == _JSON and not schemas:
        output = new_output("json", None, None, None, None)
    elif mime == _JSON and is_mapping(rest[schemas[0]]):
        schema = rest[schemas[0]]
        if schemas[0] in ("responseSchema", "response_schema"):
            try:
                schema = _read_openapi(schema)
            except ProviderError:
                return None
            marks["response_schema"] = rest[schemas[0]]
        else:
            schema = FrozenDict(schema)
        output = new_output("json_schema", schema, None, None, None)
        name = (
            "responseJsonSchema"
            if "Json" in schemas[0] or "json" in schemas[0]
            else "responseSchema"
        )
        reader.take(config, name, None, f"generationConfig.{name}")
    else:
        return None
    reader.take(config, "responseMimeType", None, "generationConfig.responseMimeType")
    return output  # type: ignore[no-any-return]


_OUTPUT_SCHEMAS = (
    "responseSchema",
    "response_schema",
    "responseJsonSchema",
    "response_json_schema",
)
_THINKING = {
    "thinkingBudget": "thinking_budget",
    "thinkingLevel": "thinking_level",
    "includeThoughts": "include_thoughts",
}


def _parse_thinking(
    config: Fields, reader: _Reader, marks: dict[str, Any]
) -> ReasoningConfig | None:
    path = "generationConfig.thinkingConfig"
    raw = config.rest.get("thinkingConfig", config.rest.get("thinking_config"))
    if not is_mapping(raw) or not raw:
        return None
    values: dict[str, Any] = {}
    snake: list[str] = []
    for camel, snake_key in _THINKING.items():
        keys = [key for key in (camel, snake_key) if key in raw]
        if len(keys) > 1:
            return None
        if keys:
            values[camel] = raw[keys[0]]
            if keys[0] == snake_key:
                snake.append(f"{path}.{camel}")
    if len(values) != len(raw) or None in values.values():
        return None  # keys not known here, or nulls: kept whole
    budget = values.get("thinkingBudget")
    level = values.get("thinkingLevel")
    thoughts = values.get("includeThoughts")
    if (
        (budget is not None and (not is_int(budget) or budget < -1))
        or (
            level is not None
            and not (isinstance(level, str) and level in (level.lower(), level.upper()))
        )
        or (thoughts is not None and not is_bool(thoughts))
    ):
        return None
    reader.take(config, "thinkingConfig", is_mapping, path)
    reader.snake.extend(snake)
    enabled = None
    if budget == 0:
        enabled, budget = False, None
    elif budget == -1:
        enabled, budget = True, None
    if level is not None and level != level.lower():
        marks["level"] = "upper"
    effort = level.lower() if level is not None else None
    return new_reasoning(enabled, effort, budget, None, thoughts)  # type: ignore[no-any-return]
