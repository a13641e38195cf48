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
  (:func:`disable_parallel`); Gemini and Ollama have no such setting.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from ...requests import ProviderTool, Tool

__all__ = ["disable_parallel", "narrowed"]


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
