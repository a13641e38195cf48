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
    Rendering,
    is_mapping,
)
from .._requests_shared import (
    render_service_tier,
)
from .reading import _snake
from .request_parsing import (
    _DECLARATIONS,
    _GENERATION,
    _JSON,
    _MODES_BACK,
    _NESTED,
    CONVERSATION_KEYS,
    NAME,
    _default_layout,
    _unchanged,
    parse_settings,
)

__all__ = ["CONVERSATION_KEYS", "NAME", "parse_settings", "render_settings"]


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
