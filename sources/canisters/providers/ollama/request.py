"""Ollama ``/api/chat`` request settings: everything beside ``messages``.

The request settings module of Ollama (see :mod:`canisters.providers._requests`):
:func:`parse_settings` reads a body's fields other than ``messages`` into a
:class:`~canisters.Request`, :func:`render_settings` writes them back, through
the rules of :mod:`canisters.providers._rules`.

Neutral fields and their Ollama spelling: ``model``, ``stream``, ``tools``
(OpenAI Chat's shape: ``type: "function"`` entries are :class:`~canisters.Tool`
s, any other entry a :class:`~canisters.ProviderTool`), ``format``
(``"json"`` or a JSON Schema: :class:`~canisters.OutputFormat`), ``think``
(``true`` / ``false``, or a level such as ``"high"``:
:class:`~canisters.ReasoningConfig`), ``logprobs`` and ``top_logprobs``, and
in ``options``: ``num_predict`` (a positive one), ``temperature``, ``top_p``,
``top_k``, ``stop``, ``seed``, ``presence_penalty`` and ``frequency_penalty``
(:class:`~canisters.Generation`).

Ollama has no tool choice, no strict tools, no caching (``keep_alive`` is how
long the model stays loaded), no user, metadata or service tier: these are
dropped, reported. ``repeat_penalty`` (multiplicative, about 1.1) is not
``frequency_penalty`` (additive): neither is ever sent as the other.

``extras["ollama"]`` of the request holds ``body`` (every other key verbatim:
``keep_alive``, the runner options left in ``options`` such as ``num_ctx``,
``repeat_penalty``, ``min_p`` or ``mirostat``, and a value of another shape)
and the markers of spellings: ``options`` (the body had an ``options`` object
with nothing but neutral settings, perhaps none), ``format: ""`` (plain text
asked for as an empty ``format``), ``tools: []`` (the tools sent as an empty
list). A tool's extras hold ``entry`` and
``function``: the other keys of its entry and of its ``function`` object.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..._frozen import FrozenDict
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
    own_extras,
)
from .._requests_shared import (
    chat_function,
    chat_tool_entries,
)

__all__ = ["CONVERSATION_KEYS", "NAME", "parse_settings", "render_settings"]

NAME = "ollama"
CONVERSATION_KEYS = frozenset({"messages"})

_TOOL_KEYS = frozenset({"type", "function"})
_FUNCTION_KEYS = frozenset({"name", "description", "parameters"})


def _positive(value: object) -> bool:
    return type(value) is int and value > 0


# ``options`` key -> (Generation field, check); ``num_predict`` -1 (no limit)
# and -2 (fill the context) have no neutral spelling and stay in ``options``.
_OPTIONS = {
    "num_predict": ("max_output_tokens", _positive),
    "temperature": ("temperature", is_number),
    "top_p": ("top_p", is_number),
    "top_k": ("top_k", is_int),
    "stop": ("stop", is_strings),
    "seed": ("seed", is_int),
    "presence_penalty": ("presence_penalty", is_number),
    "frequency_penalty": ("frequency_penalty", is_number),
}


# Generation field -> its key in ``options`` (beside ``num_predict``); _SENT_TOP:
# the top-level keys.
_SENT = {
    name: name
    for name in (
        "temperature",
        "top_p",
        "top_k",
        "seed",
        "presence_penalty",
        "frequency_penalty",
        "stop",
    )
}
_SENT_TOP = {"logprobs": "logprobs", "top_logprobs": "top_logprobs"}


# Parsing ------------------------------------------------------------------------------


def parse_settings(body: Mapping[str, Any]) -> Request:
    """The fields of an ``/api/chat`` request body other than ``messages``."""
    fields = Fields(body, skip=CONVERSATION_KEYS)
    marks: dict[str, Any] = {}
    model = fields.take("model", is_str)
    stream = fields.take("stream", is_bool)
    tools = _parse_tools(fields, marks)
    output = _parse_output(fields, marks)
    generation = _parse_generation(fields, marks)
    think = fields.take("think", _thinks)
    reasoning = None
    if isinstance(think, bool):
        reasoning = new_reasoning(think, None, None, None, None)
    elif think is not None:
        reasoning = new_reasoning(None, think, None, None, None)
    return new_request(
        model=model,
        tools=tuple(tools) if tools else (),
        output=output,
        generation=generation,
        reasoning=reasoning,
        stream=stream,
        extras=own_extras(NAME, marks, fields.rest),
    )


def _thinks(value: object) -> bool:
    return isinstance(value, bool) or (isinstance(value, str) and bool(value))


def _parse_tools(
    fields: Fields, marks: dict[str, Any]
) -> list[Tool | ProviderTool] | None:
    entries = fields.rest.get("tools")
    if type(entries) is not list:
        return None
    if not entries:
        fields.take("tools")
        marks["tools"] = []  # sent empty
        return None
    if not all(is_mapping(entry) for entry in entries):
        return None  # kept as it came
    fields.take("tools")
    tools: list[Tool | ProviderTool] = []
    for entry in entries:
        tool = None
        if entry.get("type") == "function":
            # Ollama ignores ``strict``: kept in the tool's extras.
            tool = chat_function(entry.get("function"), entry, NAME, strict=False)
        tools.append(tool or new_provider_tool(NAME, FrozenDict(entry)))
    return tools


def _parse_output(fields: Fields, marks: dict[str, Any]) -> OutputFormat | None:
    raw = fields.rest.get("format")
    if raw == "json":
        output = new_output("json", None, None, None, None)
    elif raw == "":
        output = new_output("text", None, None, None, None)
        marks["format"] = ""
    elif is_mapping(raw):
        output = new_output("json_schema", FrozenDict(raw), None, None, None)
    else:
        return None
    fields.take("format")
    return output  # type: ignore[no-any-return]


def _parse_generation(fields: Fields, marks: dict[str, Any]) -> Generation:
    values: dict[str, Any] = {}
    logprobs = fields.take("logprobs", is_bool)
    if logprobs is not None:
        values["logprobs"] = logprobs
    top = fields.take("top_logprobs", is_int)
    if top is not None:
        values["top_logprobs"] = top
    options = fields.rest.get("options")
    if is_mapping(options):
        inner = Fields(options)
        values.update(inner.read(_OPTIONS))
        if "stop" in values:
            values["stop"] = tuple(values["stop"])
        rest = inner.rest
        if rest:
            fields.rest["options"] = rest  # the runner options, kept
        else:
            fields.take("options")
            marks["options"] = True
    return new_generation(**values) if values else NO_GENERATION


# Rendering ----------------------------------------------------------------------------


def render_settings(request: Request, rendering: Rendering) -> dict[str, Any]:
    """The body's keys other than ``messages``, for ``request``."""
    out: dict[str, Any] = {}
    outcomes = rendering.outcomes
    rendering.write_model(out)
    _render_tools(rendering, out)
    if request.tool_choice is not None:
        _render_choice(request.tool_choice, bool(rendering.tools), outcomes)
    output = request.output
    if not rendering.native:
        output = rules.json_with_tools(
            output, bool(rendering.tools), rendering.capabilities, outcomes
        )
    if output is not None:
        _render_output(output, rendering, out)
    generation = request.generation
    if not rendering.native:
        generation = rules.sampling_with_reasoning(
            generation,
            rules.reasoning_on(request.reasoning),
            rendering.capabilities,
            outcomes,
        )
    kept = dict(rendering.own_body)
    _render_generation(generation, rendering, kept, out)
    if request.reasoning is not None:
        _render_reasoning(request.reasoning, rendering, out)
    if request.cache is not None:
        outcomes.dropped(
            "cache",
            "Ollama has no prompt caching (keep_alive keeps the model loaded)",
        )
    if request.user is not None:
        outcomes.dropped("user", "Ollama takes no end-user id")
    if request.metadata is not None:
        outcomes.dropped("metadata", "Ollama takes no request metadata")
    if request.service_tier is not None:
        rules.service_tier(request.service_tier, rendering.capabilities, outcomes)
    if request.stream is not None:
        out["stream"] = request.stream
    out.update(kept)
    return out


def _render_tools(rendering: Rendering, out: dict[str, Any]) -> None:
    if not rendering.tools:
        if rendering.own.get("tools") == []:
            out["tools"] = []
        return

    def function_body(tool: Tool, extra: Mapping[str, Any]) -> dict[str, Any]:
        function: dict[str, Any] = {"name": tool.name}
        if tool.description is not None:
            function["description"] = tool.description
        parameters = rendering.parameters(tool)
        if parameters is not None:
            function["parameters"] = dict(parameters)
        if tool.strict:
            rendering.outcomes.dropped(
                f"{rendering.where(tool)}.strict",
                "Ollama has no strict mode: the arguments are not held to the schema",
            )
        if extra:
            function.update(extra.get("function", ()))
        return function

    out["tools"] = chat_tool_entries(rendering, function_body)


def _render_choice(choice: ToolChoice, tools: bool, outcomes: rules.Outcomes) -> None:
    """Ollama has no tool choice: the model may call any tool offered, or
    none. Plain ``auto`` is what it does (and ``none`` when no tool is
    offered); anything else is dropped."""
    if choice.parallel is not None:
        outcomes.dropped(
            "tool_choice.parallel",
            "Ollama has no setting for parallel calls: the model decides",
        )
    mode, names = choice.mode, choice.names
    if mode is None or (mode == "auto" and not names) or (mode == "none" and not tools):
        return
    if mode == "none":
        reason = "the model may still call the tools offered"
    elif mode == "required" and len(names) == 1:
        reason = f"the model is not forced to call {names[0]!r}"
    elif mode == "required":
        reason = "the model is not forced to call a tool"
    else:
        reason = "every tool offered may be called, not only those named"
    outcomes.dropped("tool_choice", f"Ollama has no tool choice: {reason}")


def _render_output(
    output: OutputFormat, rendering: Rendering, out: dict[str, Any]
) -> None:
    outcomes = rendering.outcomes
    if output.type == "text":
        if rendering.own.get("format") == "":
            out["format"] = ""
        return  # plain text is what Ollama answers without a format
    if rendering.capabilities.structured_output == "none":
        outcomes.dropped("output", "the model takes no structured output")
        return
    if output.type == "json" or output.schema is None:
        if output.type == "json_schema":
            outcomes.approximated(
                "output.schema",
                "a JSON Schema output without a schema sent as JSON",
                'no schema = "json"',
            )
        out["format"] = "json"
        return
    out["format"] = dict(output.schema)
    for name in ("name", "description"):
        if getattr(output, name) is not None:
            outcomes.dropped(
                f"output.{name}", f"Ollama's format is the schema alone, no {name}"
            )


def _render_generation(
    generation: Generation,
    rendering: Rendering,
    kept: dict[str, Any],
    out: dict[str, Any],
) -> None:
    outcomes = rendering.outcomes
    options: dict[str, Any] = {}
    limit = rendering.max_output_tokens(generation.max_output_tokens)
    if limit is not None:
        options["num_predict"] = limit
    options.update(rendering.settings(generation, _SENT))
    if generation.candidates is not None and generation.candidates != 1:
        outcomes.dropped("generation.candidates", "Ollama generates one answer")
    if "options" in kept:
        runner = kept.pop("options")
        if is_mapping(runner):
            options.update(runner)  # the runner options kept
        elif not options:
            kept["options"] = runner  # not an object, and nothing replaces it
    if options or rendering.own.get("options"):
        out["options"] = options
    out.update(rendering.settings(generation, _SENT_TOP))


def _render_reasoning(
    reasoning: ReasoningConfig, rendering: Rendering, out: dict[str, Any]
) -> None:
    outcomes = rendering.outcomes
    caps = rendering.capabilities
    effort, budget, enabled = (
        reasoning.effort,
        reasoning.budget_tokens,
        reasoning.enabled,
    )
    if rendering.native:
        think: Any = effort if effort is not None else enabled
    elif caps.reasoning == "none":
        think = None
        if rules.reasoning_on(reasoning) or enabled is not None:
            outcomes.dropped("reasoning", "the model takes no reasoning setting")
    elif (effort is None and budget is None) or enabled is False:
        think = enabled  # on or off: the switch, exactly
        if enabled is False and (effort is not None or budget is not None):
            outcomes.dropped(
                "reasoning.effort" if effort is not None else "reasoning.budget_tokens",
                "reasoning is off: think is false",
            )
    elif caps.reasoning == "effort" and (effort is None or effort in caps.efforts):
        think = rules.effort_for(reasoning, caps, rendering.reasoning_table, outcomes)
        if think == "none":
            think = False
    else:
        think = rules.reasoning_on(reasoning)
        given = "reasoning.effort" if effort is not None else "reasoning.budget_tokens"
        what = f"effort {effort!r}" if effort is not None else f"a budget of {budget}"
        rule = (
            f"the model's levels are {', '.join(caps.efforts)}; else on or off"
            if caps.reasoning == "effort"
            else "the model takes reasoning on or off only"
        )
        outcomes.approximated(
            given, f"{what} sent as think: {str(think).lower()}", rule
        )
        if effort is not None and budget is not None:
            outcomes.dropped("reasoning.budget_tokens", rule)
    if think is not None:
        out["think"] = think
    if reasoning.summary is not None:
        outcomes.dropped("reasoning.summary", "Ollama returns no reasoning summary")
    if reasoning.include_thoughts is False and rules.reasoning_on(reasoning):
        outcomes.dropped(
            "reasoning.include_thoughts",
            "Ollama returns the thinking whenever think is on",
        )
