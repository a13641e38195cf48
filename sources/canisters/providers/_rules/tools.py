"""Tool-choice rules shared by the formats.

The tool-choice algebra (:class:`~canisters.ToolChoice`: none, auto,
required, one named tool, a subset) does not line up across formats:

- OpenAI (Chat and Responses) takes every form: a subset is
  ``allowed_tools``;
- Gemini takes a subset only under ``ANY`` (required): under ``AUTO`` its
  names are refused, so the subset is rendered by offering only those tools
  (:func:`narrowed`, reported as approximated);
- Anthropic forces one named tool (``{"type": "tool"}``) but no subset of
  several: a subset is rendered as ``auto``/``any`` over only those tools
  (:func:`narrowed`, reported);
- Ollama has no tool choice at all: anything but ``auto`` is dropped,
  reported;
- whether calls may run in parallel is ``parallel_tool_calls`` on OpenAI and
  the inverse ``disable_parallel_tool_use`` inside Anthropic's tool choice
  (:func:`disable_parallel`); Gemini and Ollama have no such setting;
- a forced choice conflicts with reasoning on Anthropic
  (:func:`forced_with_reasoning`);
- a model without native structured output gets the answer's schema as a
  forced tool (:func:`output_as_tool`).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from ...requests import OutputFormat, ProviderTool, ReasoningConfig, Tool, ToolChoice
from .capabilities import Capabilities
from .outcomes import Outcomes
from .schema import SchemaTarget, translate_schema

__all__ = [
    "OUTPUT_TOOL",
    "schema_for",
    "disable_parallel",
    "forced_with_reasoning",
    "narrowed",
    "output_as_tool",
    "reasoning_on",
]


def narrowed(
    tools: Iterable[Tool | ProviderTool], names: Sequence[str]
) -> tuple[list[Tool | ProviderTool], list[str]]:
    """The tools left when only ``names`` may be called, and the names of the
    function tools left out. Provider-executed tools are kept: a subset names
    function tools only."""
    kept: list[Tool | ProviderTool] = []
    removed: list[str] = []
    allowed = set(names)
    for tool in tools:
        if isinstance(tool, Tool) and tool.name not in allowed:
            removed.append(tool.name)
        else:
            kept.append(tool)
    return kept, removed


def disable_parallel(parallel: bool | None) -> Any:
    """Anthropic's ``disable_parallel_tool_use`` for a neutral ``parallel``
    (``None`` stays ``None``: not said)."""
    return None if parallel is None else not parallel


def reasoning_on(reasoning: ReasoningConfig | None) -> bool:
    """Whether ``reasoning`` asks for reasoning (on, or an effort other than
    ``"none"``, or a budget)."""
    if reasoning is None or reasoning.enabled is False:
        return False
    return bool(
        reasoning.enabled
        or (reasoning.effort is not None and reasoning.effort != "none")
        or reasoning.budget_tokens
    )


def forced_with_reasoning(
    choice: ToolChoice | None,
    reasoning: ReasoningConfig | None,
    capabilities: Capabilities,
    outcomes: Outcomes,
) -> ToolChoice | None:
    """The tool choice to send when reasoning is on: a forced choice (one
    tool, or ``required``) becomes ``auto`` over the same names for a model
    that refuses to be forced while reasoning (Anthropic: "Thinking may not be
    enabled when tool_choice forces tool use"), noted as a conflict."""
    if (
        choice is None
        or choice.mode != "required"
        or capabilities.forced_tool_with_reasoning
        or not reasoning_on(reasoning)
    ):
        return choice
    outcomes.conflict(
        "tool_choice",
        "a forced tool choice with reasoning on, which the model refuses",
        "the choice is sent as auto; reasoning is kept",
    )
    return ToolChoice("auto", choice.names, choice.parallel)


OUTPUT_TOOL = "final_answer"
"""The name of the tool that carries a structured answer when the model takes
no native structured output and the format has none."""


def output_as_tool(output: OutputFormat, outcomes: Outcomes) -> Tool:
    """The tool whose input is the structured answer (``capabilities.
    structured_output == "tool"``): force it, and read its call's arguments as
    the answer. Noted as approximated."""
    name = output.name or OUTPUT_TOOL
    outcomes.approximated(
        "output",
        f"a JSON Schema answer asked for as the forced tool {name!r}",
        "structured output by a forced tool",
    )
    return Tool(
        name,
        output.description or "Give the final answer in this shape.",
        output.schema if output.schema is not None else {"type": "object"},
        output.strict,
    )


def schema_for(
    schema: Mapping[str, Any],
    target: SchemaTarget,
    field: str,
    outcomes: Outcomes,
    rule: str,
) -> dict[str, Any]:
    """``schema`` translated for ``target`` (see
    :func:`~canisters.providers.translate_schema`), each change noted as
    approximated at ``field`` + its path (``tools[0].parameters.properties.a``)
    by ``rule``; a schema that cannot be translated raises
    :class:`~canisters.ProviderError`."""
    translated, changes = translate_schema(schema, target=target)
    for change in changes:
        outcomes.approximated(
            f"{field}{change.path[1:]}", f"{change.action}: {change.detail}", rule
        )
    return translated
