"""Anthropic Messages request settings: everything beside ``system`` and
``messages`` (see :mod:`canisters.providers._requests`).

Neutral fields and their Anthropic spelling: ``model``, ``stream``, ``tools``
(an entry without ``type`` or of ``type: "custom"`` is a
:class:`~canisters.Tool`, its ``input_schema`` the parameters; any other, a
server tool such as ``web_search_20250305`` or ``code_execution_20250825``, a
:class:`~canisters.ProviderTool`), ``tool_choice`` (``auto`` / ``any`` /
``tool`` / ``none``, with ``disable_parallel_tool_use`` as the inverse of
:attr:`~canisters.ToolChoice.parallel`), ``output_config.format``
(``json_schema``: :class:`~canisters.OutputFormat`), ``max_tokens``,
``temperature``, ``top_p``, ``top_k``, ``stop_sequences``
(:class:`~canisters.Generation`), ``thinking`` (``enabled`` with
``budget_tokens``, ``adaptive``, ``disabled``; ``display`` as
``include_thoughts``) and ``output_config.effort``
(:class:`~canisters.ReasoningConfig`), ``metadata.user_id`` (the user) and
``service_tier``.

``extras["anthropic"]`` of the request holds ``body`` (every other key, such
as the top-level ``cache_control``, ``container``, ``mcp_servers``,
``context_management``, ``inference_geo``, and a key whose value has another
shape, verbatim) and the marker ``thinking: "adaptive"`` (reasoning on, spelled
as adaptive thinking). A tool's extras hold the other keys of its entry
(``cache_control``, ``type: "custom"``, ``defer_loading``...), which stay where
they are.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..._frozen import EMPTY, FrozenDict
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
    NO_GENERATION,
    Fields,
    Rendering,
    is_bool,
    is_int,
    is_mapping,
    is_number,
    is_str,
    is_strings,
    new_generation,
    new_output,
    new_provider_tool,
    new_reasoning,
    new_request,
    new_tool,
    new_tool_choice,
    own_extras,
)
from .._requests_shared import (
    render_service_tier,
    tool_choice_names,
)
from .messages import NAME

__all__ = ["CONVERSATION_KEYS", "NAME", "parse_settings", "render_settings"]

CONVERSATION_KEYS = frozenset({"system", "messages"})

_CHOICES = {"auto": "auto", "any": "required", "none": "none"}
_CHOICES_BACK = {"auto": "auto", "required": "any", "none": "none"}
_DISPLAY = {"summarized": True, "omitted": False}
_DISPLAY_BACK = {True: "summarized", False: "omitted"}
_EMPTY_SCHEMA = {"type": "object", "properties": {}}
# Generation field -> wire key, as rendered (before the stop sequences).
_SAMPLING = {"temperature": "temperature", "top_p": "top_p", "top_k": "top_k"}


# Parsing ------------------------------------------------------------------------------

# Wire key -> (Generation field, check), read in one loop.
_GENERATION = {
    "max_tokens": ("max_output_tokens", is_int),
    "temperature": ("temperature", is_number),
    "top_p": ("top_p", is_number),
    "top_k": ("top_k", is_int),
}


def parse_settings(body: Mapping[str, Any]) -> Request:
    """The fields of a Messages request body other than ``system`` and
    ``messages``."""
    fields = Fields(body, skip=CONVERSATION_KEYS)
    marks: dict[str, Any] = {}
    model = fields.take("model", is_str)
    stream = fields.take("stream", is_bool)
    tools = _parse_tools(fields)
    choice = _parse_choice(fields.rest.get("tool_choice"))
    if choice is not None:
        fields.take("tool_choice")
    values = fields.read(_GENERATION)
    rest = fields.rest
    if (stop := fields.take("stop_sequences", is_strings)) is not None:
        values["stop"] = tuple(stop)
    reasoning, output = _parse_thinking(fields, marks)
    metadata = rest.get("metadata")
    user = None
    if (
        is_mapping(metadata)
        and metadata.keys() == {"user_id"}
        and isinstance(metadata["user_id"], str)
    ):
        user = fields.take("metadata")["user_id"]
    tier = fields.take("service_tier", is_str)
    return new_request(
        model=model,
        tools=tuple(tools) if tools else (),
        tool_choice=choice,
        output=output,
        generation=new_generation(**values) if values else NO_GENERATION,
        reasoning=reasoning,
        user=user,
        service_tier=tier,
        stream=stream,
        extras=own_extras(NAME, marks, fields.rest),
    )


_TOOL_FIELDS = {"description": is_str, "input_schema": is_mapping, "strict": is_bool}
_PLAIN_TOOL = frozenset({"name", "description", "input_schema"})


def _parse_tool(entry: Mapping[str, Any]) -> Tool | ProviderTool:
    """A tools entry: a function tool (no ``type``, or ``custom``) named by a
    string, its other keys in its extras; anything else a server tool."""
    name = entry.get("name")
    if entry.get("type", "custom") != "custom" or not isinstance(name, str) or not name:
        return new_provider_tool(NAME, FrozenDict(entry))  # type: ignore[no-any-return]
    schema = entry.get("input_schema")
    if entry.keys() == _PLAIN_TOOL and type(schema) is dict:  # the most common
        description = entry["description"]
        if type(description) is str:
            return new_tool(  # type: ignore[no-any-return]
                name, description, FrozenDict(schema), None, EMPTY
            )
    taken: dict[str, Any] = {}
    extra: dict[str, Any] = {}
    for key, value in entry.items():
        if key == "name":
            continue
        fits = _TOOL_FIELDS.get(key)
        if fits is not None and fits(value):
            taken[key] = value
        else:
            extra[key] = value  # cache_control, type, defer_loading... or a null
    schema = taken.get("input_schema")
    return new_tool(  # type: ignore[no-any-return]
        name,
        taken.get("description"),
        FrozenDict(schema) if schema is not None else None,
        taken.get("strict"),
        FrozenDict({NAME: extra}) if extra else EMPTY,
    )


def _parse_tools(fields: Fields) -> list[Tool | ProviderTool] | None:
    entries = fields.rest.get("tools")
    if type(entries) is not list or not entries:
        return None
    if not all(is_mapping(entry) for entry in entries):
        return None  # kept as it came
    fields.take("tools")
    return [_parse_tool(entry) for entry in entries]


def _parse_choice(raw: object) -> ToolChoice | None:
    """``tool_choice``, when every key of it is understood."""
    if not is_mapping(raw):
        return None
    kind = raw.get("type")
    parallel = raw.get("disable_parallel_tool_use")
    if "disable_parallel_tool_use" in raw and not isinstance(parallel, bool):
        return None  # a null or another shape is kept as it came
    known = {"type", "disable_parallel_tool_use"}
    names: tuple[str, ...] = ()
    if kind == "tool":
        name = raw.get("name")
        if not isinstance(name, str):
            return None
        known.add("name")
        names = (name,)
        mode = "required"
    elif isinstance(kind, str) and kind in _CHOICES:
        mode = _CHOICES[kind]
    else:
        return None
    if not known.issuperset(raw):
        return None
    return new_tool_choice(  # type: ignore[no-any-return]
        mode, names, None if parallel is None else not parallel
    )


def _parse_thinking(
    fields: Fields, marks: dict[str, Any]
) -> tuple[ReasoningConfig | None, OutputFormat | None]:
    """``thinking`` and ``output_config`` (its ``effort`` and ``format``), each
    read when every key of it is understood."""
    enabled = budget = shown = effort = None
    output = None
    raw = fields.rest.get("thinking")
    if is_mapping(raw):
        kind = raw.get("type")
        display = raw.get("display", "summarized")
        keys = {"type", "display"}
        if kind == "enabled" and is_int(raw.get("budget_tokens")):
            keys.add("budget_tokens")
        elif kind == "disabled":
            keys = {"type"}
        elif kind != "adaptive":
            keys = set()
        if keys and keys.issuperset(raw) and display in _DISPLAY:
            fields.take("thinking")
            enabled = kind != "disabled"
            budget = raw.get("budget_tokens")
            shown = _DISPLAY[display] if "display" in raw else None
            if kind == "adaptive":
                marks["thinking"] = "adaptive"
    config = fields.rest.get("output_config")
    if is_mapping(config) and config and {"effort", "format"}.issuperset(config):
        wanted = config.get("effort")
        shape = config.get("format")
        read = _parse_format(shape) if "format" in config else None
        if ("effort" not in config or is_str(wanted)) and (
            "format" not in config or read
        ):
            fields.take("output_config")
            effort, output = wanted, read
    if enabled is None and effort is None:
        return None, output
    reasoning = new_reasoning(enabled, effort, budget, None, shown)
    return reasoning, output


def _parse_format(raw: object) -> OutputFormat | None:
    if (
        is_mapping(raw)
        and raw.keys() == {"type", "schema"}
        and raw["type"] == "json_schema"
        and is_mapping(raw["schema"])
    ):
        return new_output(  # type: ignore[no-any-return]
            "json_schema", FrozenDict(raw["schema"]), None, None, None
        )
    return None


# Rendering ----------------------------------------------------------------------------


def render_settings(request: Request, rendering: Rendering) -> dict[str, Any]:
    """The body's keys other than ``system`` and ``messages``, for ``request``."""
    out: dict[str, Any] = {}
    native = rendering.native
    outcomes = rendering.outcomes
    caps = rendering.capabilities
    rendering.write_model(out)
    reasoning = request.reasoning
    generation = request.generation
    limit = generation.max_output_tokens
    if not native:
        limit = rendering.max_output_tokens(limit)
    if limit is not None:
        out["max_tokens"] = limit
    thinking_on = False
    if reasoning is not None:
        thinking_on = _render_reasoning(reasoning, rendering, out)
    if not native:
        generation = rules.sampling_with_reasoning(
            generation, thinking_on, caps, outcomes
        )
    _render_generation(generation, rendering, out)
    tools = list(rendering.tools)
    choice = request.tool_choice
    if not native:
        choice = rules.forced_with_reasoning(
            choice, _sent(reasoning, thinking_on), caps, outcomes
        )
    if request.output is not None:
        choice = _render_output(request.output, rendering, out, tools, choice)
    if choice is not None:
        _render_choice(choice, rendering, out, tools)
    if tools:
        out["tools"] = [_tool_entry(tool, rendering) for tool in tools]
    if request.user is not None:
        out["metadata"] = {"user_id": request.user}
    if request.metadata is not None:
        outcomes.dropped(
            "metadata", "Anthropic's metadata holds a user id only: the keys are left"
        )
    if request.cache is not None:
        outcomes.dropped(
            "cache",
            "Anthropic caches by cache_control markers, not by a key or a retention",
        )
    render_service_tier(request, rendering, out)
    if request.stream is not None:
        out["stream"] = request.stream
    out.update(rendering.own_body)
    return out


def _sent(reasoning: ReasoningConfig | None, on: bool) -> ReasoningConfig | None:
    """The reasoning as it was sent (on or not), for the rules that depend on it."""
    return reasoning if on else None


def _tool_entry(tool: Tool | ProviderTool, rendering: Rendering) -> dict[str, Any]:
    if isinstance(tool, ProviderTool):
        return dict(tool.body)
    entry: dict[str, Any] = {"name": tool.name}
    if tool.description is not None:
        entry["description"] = tool.description
    parameters = rendering.parameters(tool)
    if parameters is not None:
        entry["input_schema"] = dict(parameters)
    elif not rendering.native:
        rendering.outcomes.synthesized(
            f"{rendering.where(tool)}.parameters",
            "the tool has no parameters; an empty object schema sent",
            "Anthropic requires an input_schema",
        )
        entry["input_schema"] = dict(_EMPTY_SCHEMA)
    if tool.strict is not None:
        entry["strict"] = tool.strict
    entry.update(rendering.tool_extras(tool))
    return entry


def _render_choice(
    choice: ToolChoice,
    rendering: Rendering,
    out: dict[str, Any],
    tools: list[Tool | ProviderTool],
) -> None:
    outcomes = rendering.outcomes
    mode, names = choice.mode, choice.names
    disable = rules.disable_parallel(choice.parallel)
    if mode is None:
        if not disable:  # not said, or parallel calls allowed: the default
            return
        outcomes.synthesized(
            "tool_choice.mode",
            "auto, Anthropic's default, sent to carry disable_parallel_tool_use",
            "Anthropic says parallel calls inside the tool choice",
        )
        mode = "auto"
    names = tool_choice_names(mode, names, outcomes)
    result: dict[str, Any]
    if mode == "required" and len(names) == 1:
        result = {"type": "tool", "name": names[0]}
    else:
        if names:
            kept, removed = rules.narrowed(tools, names)
            tools[:] = kept
            outcomes.approximated(
                "tool_choice.names",
                f"only {', '.join(names)} may be called: sent as {_CHOICES_BACK[mode]}"
                f" over those tools ({', '.join(removed) or 'none'} left out)",
                "Anthropic forces one tool only: a subset offers only its tools",
            )
        result = {"type": _CHOICES_BACK[mode]}
    if disable is not None and mode == "none" and not rendering.native:
        outcomes.dropped(
            "tool_choice.parallel", "no tool may be called: parallel calls are moot"
        )
    elif disable is not None:
        result["disable_parallel_tool_use"] = disable
    out["tool_choice"] = result


def _render_output(
    output: OutputFormat,
    rendering: Rendering,
    out: dict[str, Any],
    tools: list[Tool | ProviderTool],
    choice: ToolChoice | None,
) -> ToolChoice | None:
    """Sends ``output``; returns the tool choice to send (the forced output tool,
    when the answer goes as a tool)."""
    outcomes = rendering.outcomes
    caps = rendering.capabilities
    if output.type == "text":
        return choice  # Anthropic's only answer without a format
    if output.type == "json" or output.schema is None:
        outcomes.dropped("output", "Anthropic has no JSON answer without a schema")
        return choice
    if caps.structured_output == "none":
        outcomes.dropped("output", "the model takes no structured output")
        return choice
    if rendering.native or caps.structured_output == "native":
        if not rendering.native:
            for name in ("name", "description"):
                if getattr(output, name) is not None:
                    outcomes.dropped(
                        f"output.{name}", "Anthropic's output format has no " + name
                    )
            if output.strict is False:
                outcomes.approximated(
                    "output.strict",
                    "a schema not held strictly sent as Anthropic's, always held",
                    "Anthropic's output format is always strict",
                )
        config = out.setdefault("output_config", {})
        config["format"] = {"type": "json_schema", "schema": dict(output.schema)}
        return choice
    tool = rules.output_as_tool(output, outcomes)
    tools.append(tool)
    parallel = choice.parallel if choice is not None else None
    if choice is not None and choice.mode is not None:
        outcomes.conflict(
            "tool_choice",
            "a tool choice beside a structured answer sent as a forced tool",
            f"the output tool {tool.name!r} is forced in its place",
        )
    if out.get("thinking", {}).get("type") in ("enabled", "adaptive") and (
        not caps.forced_tool_with_reasoning
    ):
        outcomes.conflict(
            "output",
            "the answer's tool cannot be forced while thinking is on",
            f"the output tool {tool.name!r} is offered under auto; thinking is kept",
        )
        return ToolChoice("auto", parallel=parallel)
    return ToolChoice("required", (tool.name,), parallel)


def _render_generation(
    generation: Generation, rendering: Rendering, out: dict[str, Any]
) -> None:
    outcomes = rendering.outcomes
    out.update(rendering.settings(generation, _SAMPLING))
    if generation.stop is not None:
        stop = rendering.stops(generation.stop)
        if stop or rendering.native:
            out["stop_sequences"] = stop
    for name in (
        "seed",
        "presence_penalty",
        "frequency_penalty",
        "candidates",
        "logprobs",
        "top_logprobs",
    ):
        if getattr(generation, name) is not None:
            outcomes.dropped(f"generation.{name}", f"Anthropic has no {name}")


def _render_reasoning(
    reasoning: ReasoningConfig, rendering: Rendering, out: dict[str, Any]
) -> bool:
    """Sends ``thinking`` and ``output_config.effort``; tells whether thinking
    is on."""
    if rendering.native:
        thinking: dict[str, Any] | None = None
        if reasoning.enabled is False:
            thinking = {"type": "disabled"}
        elif reasoning.enabled:
            if (
                rendering.own.get("thinking") == "adaptive"
                or reasoning.budget_tokens is None
            ):
                thinking = {"type": "adaptive"}
            else:
                thinking = {"type": "enabled", "budget_tokens": reasoning.budget_tokens}
            if reasoning.include_thoughts is not None:
                thinking["display"] = _DISPLAY_BACK[reasoning.include_thoughts]
        if thinking is not None:
            out["thinking"] = thinking
        if reasoning.effort is not None:
            out.setdefault("output_config", {})["effort"] = reasoning.effort
        return bool(reasoning.enabled)
    return _foreign_reasoning(reasoning, rendering, out)


def _foreign_reasoning(
    reasoning: ReasoningConfig, rendering: Rendering, out: dict[str, Any]
) -> bool:
    outcomes = rendering.outcomes
    caps = rendering.capabilities
    table = rendering.reasoning_table
    if not rules.reasoning_on(reasoning):
        if reasoning.enabled is False or rules.effort_off(
            reasoning, outcomes, "thinking disabled"
        ):
            out["thinking"] = {"type": "disabled"}
        for name in ("summary", "include_thoughts"):
            if getattr(reasoning, name) is not None:
                outcomes.dropped(f"reasoning.{name}", "thinking is not turned on")
        return False
    if reasoning.summary is not None:
        outcomes.approximated(
            "reasoning.summary",
            f"summary {reasoning.summary!r} sent as thinking display 'summarized'",
            "Anthropic's thinking is summarized or omitted",
        )
    thinking: dict[str, Any]
    if caps.reasoning == "effort":
        effort = rules.effort_for(reasoning, caps, table, outcomes)
        thinking = {"type": "adaptive"}
        if effort is not None:
            out.setdefault("output_config", {})["effort"] = effort
    elif caps.reasoning == "budget":
        budget = rules.budget_for(reasoning, caps, table, outcomes)
        if budget is None:
            budget = caps.min_budget_tokens or 1024
            outcomes.approximated(
                "reasoning.enabled",
                f"reasoning on without a budget sent with {budget} tokens",
                "the model's minimum budget",
            )
        limit = out.get("max_tokens")
        if isinstance(limit, int) and budget >= limit:
            raised = budget + limit
            outcomes.conflict(
                "reasoning.budget_tokens",
                f"a budget of {budget} tokens is not below max_tokens {limit}",
                f"max_tokens raised to {raised} (the budget plus the request's limit)",
            )
            out["max_tokens"] = raised
        thinking = {"type": "enabled", "budget_tokens": budget}
    else:
        outcomes.dropped("reasoning", "the model takes no thinking configuration")
        return False
    shown = reasoning.include_thoughts
    if shown is None and reasoning.summary is not None:
        shown = True
    if shown is not None:
        thinking["display"] = _DISPLAY_BACK[shown]
    out["thinking"] = thinking
    return True
