"""Gemini ``generateContent`` request settings: everything beside
``systemInstruction`` and ``contents`` (see
:mod:`canisters.providers._requests`).

Neutral fields and their Gemini spelling (camelCase, or the snake_case the API
takes as well, given back as it came): ``model``; ``tools`` (each
``functionDeclarations`` entry a :class:`~canisters.Tool` with ``name``,
``description`` and ``parametersJsonSchema``, or ``parameters`` in Gemini's
OpenAPI subset read as JSON Schema through
:func:`~canisters.providers._rules.from_gemini_schema`; every other tool kind,
``googleSearch``, ``codeExecution``, ``urlContext``..., a
:class:`~canisters.ProviderTool`); ``toolConfig.functionCallingConfig``
(``mode`` ``NONE`` / ``AUTO`` / ``ANY`` and ``allowedFunctionNames``: the
:class:`~canisters.ToolChoice`); ``generationConfig``: ``maxOutputTokens``,
``temperature``, ``topP``, ``topK``, ``stopSequences``, ``seed``,
``presencePenalty``, ``frequencyPenalty``, ``candidateCount``,
``responseLogprobs``, ``logprobs`` (:class:`~canisters.Generation`),
``responseMimeType`` with ``responseSchema`` or ``responseJsonSchema``
(:class:`~canisters.OutputFormat`), ``thinkingConfig`` (``thinkingBudget``:
0 is off, -1 the model's choice; ``thinkingLevel``; ``includeThoughts``:
:class:`~canisters.ReasoningConfig`); ``labels`` (the metadata) and
``serviceTier``.

``extras["gemini"]`` holds ``body``: the other top-level keys
(``safetySettings``, ``cachedContent``, ``store``...) and what is left of
``generationConfig`` and ``toolConfig`` (``responseModalities``,
``speechConfig``, ``mediaResolution``, a ``VALIDATED`` calling mode...) under
the same key, verbatim; and the markers of spellings: ``snake`` (the dotted
paths of keys spelled in snake_case), ``empty`` (objects given empty),
``tools`` (how the declarations and other tool kinds were grouped into entries,
with each ``parameters`` schema as the body gave it), ``response_schema`` (the
``responseSchema`` as given), ``level`` (a ``thinkingLevel`` in capitals). A
tool's extras hold ``declaration``: the other keys of its declaration
(``response``, ``behavior``).

Rendered from another format, a schema goes through
:func:`~canisters.providers.translate_schema`: to ``parameters`` /
``responseSchema`` in the OpenAPI subset by default, to
``parametersJsonSchema`` / ``responseJsonSchema`` when the capability profile
says the model takes JSON Schema (``json_schema=True``); every change is
reported by path. An answer schema's ``strict`` asks for nothing more: Gemini
always holds the answer to its schema (a tool's ``strict`` is dropped,
reported).
"""

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
    Rendering,
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
    render_service_tier,
)
from .messages import _snake

__all__ = ["CONVERSATION_KEYS", "NAME", "parse_settings", "render_settings"]

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


# Parsing ------------------------------------------------------------------------------


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


# Rendering ----------------------------------------------------------------------------


def render_settings(request: Request, rendering: Rendering) -> dict[str, Any]:
    """The body's keys other than the conversation's, for ``request``."""
    out: dict[str, Any] = {}
    own = rendering.own
    snake = frozenset(own.get("snake", ()))

    def spelled(path: str) -> str:
        name = path.rpartition(".")[2]
        return _snake(name) if path in snake else name

    outcomes = rendering.outcomes
    if rendering.model is not None:
        if rendering.native and request.model is not None:
            out["model"] = rendering.model  # a body that had one, as it came
        else:
            # Rule of the API: the model is in the URL
            # (models/{model}:generateContent), the SDK's model argument.
            outcomes.moved(
                "model",
                f"{rendering.model!r} goes in the URL (models/{rendering.model}"
                ":generateContent) or as the SDK's model argument, not in the body",
            )
    native = rendering.native
    tools = list(rendering.tools)
    choice = request.tool_choice
    output = request.output
    caps = rendering.capabilities
    if not native:
        output = rules.json_with_tools(output, bool(tools), caps, outcomes)
        if output is not None and output.type == "json_schema":
            if caps.structured_output == "none":
                outcomes.dropped("output", "the model takes no structured output")
                output = None
            elif caps.structured_output == "tool":
                tool = rules.output_as_tool(output, outcomes)
                tools.append(tool)
                if choice is not None and choice.mode is not None:
                    outcomes.conflict(
                        "tool_choice",
                        "the answer is asked for as a forced tool",
                        "the tool choice gives way to the answer's tool",
                    )
                choice = ToolChoice.tool(tool.name)
                output = None
        choice = rules.forced_with_reasoning(choice, request.reasoning, caps, outcomes)
        if choice is not None and choice.mode == "auto" and choice.names:
            tools, removed = rules.narrowed(tools, choice.names)
            outcomes.approximated(
                "tool_choice.names",
                "Gemini refuses names under AUTO: only the tools named are offered"
                + (f" ({', '.join(removed)} left out)" if removed else ""),
                "a subset under auto = a filtered tool list",
            )
            choice = ToolChoice("auto", (), choice.parallel)
    if tools:
        out[spelled("tools")] = _render_tools(tools, rendering)
    if choice is not None:
        _render_choice(choice, rendering, out, spelled)
    config: dict[str, Any] = {}
    _render_generation(request.generation, request, rendering, config, spelled)
    if output is not None:
        _render_output(output, rendering, config, spelled)
    if request.reasoning is not None:
        _render_reasoning(request.reasoning, rendering, config, spelled)
    empty = own.get("empty", ())
    if config or "generationConfig" in empty:
        out[spelled("generationConfig")] = config
    if "toolConfig" in empty and spelled("toolConfig") not in out:
        out[spelled("toolConfig")] = {}
    if request.metadata is not None:
        if all(isinstance(value, str) for value in request.metadata.values()):
            out["labels"] = dict(request.metadata)
        else:
            outcomes.dropped("metadata", "Gemini's labels take strings only")
    render_service_tier(request, rendering, out, spelled("serviceTier"))
    if request.user is not None:
        outcomes.dropped("user", "Gemini takes no end-user id")
    if request.cache is not None:
        outcomes.dropped(
            "cache", "Gemini caches through a cachedContents resource, not a key"
        )
    if request.stream is not None:
        outcomes.dropped(
            "stream", "Gemini streams through streamGenerateContent, not a field"
        )
    for provider in ("openai-chat", "openai-responses"):
        store = rendering.claim(provider, "store")
        if isinstance(store, bool) and "store" not in rendering.own_body:
            out["store"] = store
    for key, value in rendering.own_body.items():
        present = out.get(key)
        if is_mapping(present) and is_mapping(value) and key in _NESTED_SPELLINGS:
            out[key] = {**present, **value}  # what is left of a nested object
        else:
            out[key] = value
    return out


_NESTED_SPELLINGS = frozenset({*_NESTED, *(_snake(key) for key in _NESTED)})


def _render_tools(
    tools: list[Tool | ProviderTool], rendering: Rendering
) -> list[dict[str, Any]]:
    layout = rendering.own.get("tools") if rendering.native else None
    if layout is None or not _fits(layout, tools):
        layout = _default_layout(tools)
    entries: list[dict[str, Any]] = []
    position = 0
    for described in layout:
        entry: dict[str, Any] = {}
        count = described["functions"]
        if count:
            marks = described.get("declarations") or [{}] * count
            entry[described.get("key", _DECLARATIONS[0])] = [
                _declaration_body(tool, mark, rendering)  # type: ignore[arg-type]
                for tool, mark in zip(
                    tools[position : position + count], marks, strict=True
                )
            ]
            position += count
        if described["other"]:
            entry.update(tools[position].body)  # type: ignore[union-attr]
            position += 1
        entries.append(entry)
    return entries


def _fits(layout: Any, tools: list[Tool | ProviderTool]) -> bool:
    """Whether ``layout`` (a body's grouping) groups ``tools``."""
    position = 0
    for described in layout:
        count = described["functions"]
        chunk = tools[position : position + count]
        if len(chunk) < count or not all(isinstance(tool, Tool) for tool in chunk):
            return False
        position += count
        if described["other"]:
            if position >= len(tools) or not isinstance(tools[position], ProviderTool):
                return False
            position += 1
    return position == len(tools)


def _declaration_body(
    tool: Tool, mark: Mapping[str, Any], rendering: Rendering
) -> dict[str, Any]:
    declaration: dict[str, Any] = {"name": tool.name}
    if tool.description is not None:
        declaration["description"] = tool.description
    schema = rendering.parameters(tool)
    place = rendering.where(tool)
    where = f"{place}.parameters"
    if schema is not None:
        key = mark.get("key")
        if key == "parameters":
            original = mark["schema"]
            if _unchanged(schema, original):
                declaration[key] = dict(original)
            else:
                declaration[key] = rules.schema_for(
                    schema, "gemini", where, rendering.outcomes, _OPENAPI
                )
        elif rendering.native:
            declaration[key or "parametersJsonSchema"] = dict(schema)
        elif rendering.capabilities.json_schema:
            declaration["parametersJsonSchema"] = rules.schema_for(
                schema, "gemini-json", where, rendering.outcomes, _JSON_FIELDS
            )
        else:
            declaration["parameters"] = rules.schema_for(
                schema, "gemini", where, rendering.outcomes, _OPENAPI
            )
    if tool.strict and not rendering.native:
        rendering.outcomes.dropped(
            f"{place}.strict",
            "Gemini has no strict flag per function",
        )
    extra = rendering.tool_extras(tool)
    if extra:
        declaration.update(extra.get("declaration", ()))
    return declaration


_OPENAPI = "Gemini's OpenAPI schema subset"
_JSON_FIELDS = "Gemini's JSON Schema fields"


def _render_choice(
    choice: ToolChoice, rendering: Rendering, out: dict[str, Any], spelled: Any
) -> None:
    if choice.parallel is False:
        rendering.outcomes.dropped(
            "tool_choice.parallel", "Gemini has no way to forbid parallel calls"
        )
    if choice.mode is None:
        return
    names = choice.names
    if choice.mode == "none" and names and not rendering.native:
        rendering.outcomes.dropped(
            "tool_choice.names", "no tool may be called: the names are left out"
        )
        names = ()
    path = "toolConfig.functionCallingConfig"
    calling: dict[str, Any] = {"mode": _MODES_BACK[choice.mode]}
    if names:
        calling[spelled(f"{path}.allowedFunctionNames")] = list(names)
    out[spelled("toolConfig")] = {spelled(path): calling}


def _render_generation(
    generation: Generation,
    request: Request,
    rendering: Rendering,
    config: dict[str, Any],
    spelled: Any,
) -> None:
    outcomes = rendering.outcomes
    caps = rendering.capabilities
    if not rendering.native:
        generation = rules.sampling_with_reasoning(
            generation, rules.reasoning_on(request.reasoning), caps, outcomes
        )
    for key, (name, _) in _GENERATION.items():
        value = getattr(generation, name)
        if name == "max_output_tokens":
            value = rendering.max_output_tokens(value)
        if value is None:
            continue
        if name == "temperature":
            value = rendering.temperature(value)
        config[spelled(f"generationConfig.{key}")] = value
    if generation.stop is not None:
        config[spelled("generationConfig.stopSequences")] = rendering.stops(
            generation.stop
        )


def _render_output(
    output: OutputFormat, rendering: Rendering, config: dict[str, Any], spelled: Any
) -> None:
    outcomes = rendering.outcomes
    mime = spelled("generationConfig.responseMimeType")
    if output.type == "text":
        config[mime] = "text/plain"
        return
    config[mime] = _JSON
    if output.type == "json" or output.schema is None:
        if output.type == "json_schema":
            outcomes.approximated(
                "output.schema",
                "a JSON Schema output without a schema sent as JSON",
                "no schema = any JSON",
            )
        return
    original = rendering.own.get("response_schema") if rendering.native else None
    if original is not None and _unchanged(output.schema, original):
        config[spelled("generationConfig.responseSchema")] = dict(original)
    elif rendering.native and original is None:
        config[spelled("generationConfig.responseJsonSchema")] = dict(output.schema)
    elif rendering.capabilities.json_schema:
        config["responseJsonSchema"] = rules.schema_for(
            output.schema, "gemini-json", "output.schema", outcomes, _JSON_FIELDS
        )
    else:
        config["responseSchema"] = rules.schema_for(
            output.schema, "gemini", "output.schema", outcomes, _OPENAPI
        )
    if output.name is not None:
        outcomes.dropped("output.name", "Gemini names no answer schema")
    if output.description is not None:
        outcomes.dropped("output.description", "Gemini takes no answer description")


def _render_reasoning(
    reasoning: ReasoningConfig,
    rendering: Rendering,
    config: dict[str, Any],
    spelled: Any,
) -> None:
    path = "generationConfig.thinkingConfig"
    thinking: dict[str, Any] = {}
    budget_key = spelled(f"{path}.thinkingBudget")
    level_key = spelled(f"{path}.thinkingLevel")
    if rendering.native:
        if reasoning.budget_tokens is not None:
            thinking[budget_key] = reasoning.budget_tokens
        elif reasoning.enabled is not None:
            thinking[budget_key] = 0 if reasoning.enabled is False else -1
        if reasoning.effort is not None:
            upper = rendering.own.get("level") == "upper"
            thinking[level_key] = (
                reasoning.effort.upper() if upper else reasoning.effort
            )
    else:
        _foreign_reasoning(reasoning, rendering, thinking)
    if reasoning.include_thoughts is not None:
        thinking[spelled(f"{path}.includeThoughts")] = reasoning.include_thoughts
    elif reasoning.summary is not None:
        rendering.outcomes.approximated(
            "reasoning.summary",
            f"a {reasoning.summary!r} summary asked for as includeThoughts",
            "Gemini's thoughts are summaries",
        )
        thinking["includeThoughts"] = True
    if reasoning.summary is not None and reasoning.include_thoughts is not None:
        rendering.outcomes.dropped(
            "reasoning.summary", "Gemini returns thought summaries of one kind"
        )
    if thinking:
        config[spelled(path)] = thinking


def _foreign_reasoning(
    reasoning: ReasoningConfig, rendering: Rendering, thinking: dict[str, Any]
) -> None:
    outcomes = rendering.outcomes
    caps = rendering.capabilities
    table = rendering.reasoning_table
    if caps.reasoning == "none":
        if reasoning.enabled or reasoning.effort or reasoning.budget_tokens:
            outcomes.dropped("reasoning", "the model does not reason")
        return
    if caps.reasoning == "effort":
        effort = rules.effort_for(reasoning, caps, table, outcomes)
        if effort is not None:
            thinking["thinkingLevel"] = effort
        return
    if rules.effort_off(reasoning, outcomes, "a budget of 0 (thinking off)"):
        thinking["thinkingBudget"] = 0
        return
    if reasoning.enabled is False:
        thinking["thinkingBudget"] = 0
        for name in ("effort", "budget_tokens"):
            if getattr(reasoning, name) is not None:
                outcomes.dropped(
                    f"reasoning.{name}", "reasoning is off: no budget is sent"
                )
        return
    budget = rules.budget_for(reasoning, caps, table, outcomes)
    if budget is not None:
        thinking["thinkingBudget"] = budget
    elif reasoning.enabled is True and reasoning.effort is None:
        thinking["thinkingBudget"] = -1  # the model's own choice
