"""Rules for generation settings, service tiers and reasoning levels.

Each function takes the value, the :class:`~.capabilities.Capabilities` of the
target and the :class:`~.outcomes.Outcomes` of the call, and returns what to
send (``None``: nothing), noting what it changed.
"""

from __future__ import annotations

from collections.abc import Sequence

import attrs

from ...requests import Generation, OutputFormat, ReasoningConfig
from .capabilities import Capabilities
from .levels import nearest_level
from .outcomes import Outcomes
from .reasoning import ReasoningTable

__all__ = [
    "TIER_EQUIVALENTS",
    "json_with_tools",
    "sampling_with_reasoning",
    "budget_for",
    "clamped",
    "effort_for",
    "effort_off",
    "effort_within",
    "service_tier",
    "stops",
]

TIER_EQUIVALENTS = {
    "standard_only": ("default", "standard"),
    "default": ("standard_only", "standard"),
    "standard": ("default", "standard_only"),
}
"""A tier named in one format's words and its nearest in the others' (OpenAI
``default`` is Anthropic ``standard_only`` and Gemini ``standard``); ``auto``,
``flex`` and ``priority`` are spelled alike."""


def clamped(
    field: str, value: float, bounds: tuple[float, float] | None, outcomes: Outcomes
) -> float:
    """``value`` held within ``bounds``, noted as approximated when moved."""
    if bounds is None:
        return value
    low, high = bounds
    if value < low or value > high:
        sent = min(max(value, low), high)
        outcomes.approximated(
            field, f"{value} clamped to {sent}", f"range {low} to {high}"
        )
        return sent
    return value


def stops(
    values: Sequence[str], capabilities: Capabilities, outcomes: Outcomes
) -> list[str]:
    """The stop sequences sent: without whitespace-only ones for a target
    refusing them, cut to the most the target takes."""
    if not capabilities.blank_stop_sequences:
        kept = [value for value in values if value.strip()]
        if len(kept) != len(values):
            outcomes.approximated(
                "generation.stop",
                f"{len(values) - len(kept)} stop sequences of whitespace only left out",
                "no stop sequence of whitespace only",
            )
            values = kept
    limit = capabilities.max_stop_sequences
    if limit is not None and len(values) > limit:
        outcomes.approximated(
            "generation.stop",
            f"{len(values)} stop sequences cut to the first {limit}",
            f"at most {limit} stop sequences",
        )
        return list(values[:limit])
    return list(values)


def service_tier(
    value: str, capabilities: Capabilities, outcomes: Outcomes
) -> str | None:
    """The tier sent for ``value``: itself when the target takes it, its
    equivalent (:data:`TIER_EQUIVALENTS`, approximated), else nothing
    (dropped)."""
    tiers = capabilities.service_tiers
    if tiers is None:
        outcomes.dropped("service_tier", "the format has no service tiers")
        return None
    if value in tiers:
        return value
    for other in TIER_EQUIVALENTS.get(value, ()):
        if other in tiers:
            outcomes.approximated(
                "service_tier", f"{value!r} sent as {other!r}", "tier equivalents"
            )
            return other
    outcomes.dropped("service_tier", f"{value!r} is not a tier the format takes")
    return None


def effort_for(
    reasoning: ReasoningConfig,
    capabilities: Capabilities,
    table: ReasoningTable,
    outcomes: Outcomes,
    *,
    native: bool = False,
) -> str | None:
    """The effort level to send to a format taking levels: the request's own
    (exact when the model takes it, else the nearest it takes:
    :func:`effort_within`), else one from its budget through ``table``
    (approximated), else ``"none"`` for reasoning turned off when the model
    takes it. Notes the budget, when both were given, as dropped. For a
    request of the target's own format (``native``) its level goes as it
    came."""
    if reasoning.effort is not None:
        if reasoning.budget_tokens is not None:
            outcomes.dropped(
                "reasoning.budget_tokens",
                "the format takes an effort level only; the request's level is sent",
            )
        if reasoning.enabled is False and reasoning.effort != "none":
            # On says nothing beside a level; off contradicts one.
            outcomes.dropped(
                "reasoning.enabled",
                f"reasoning switched off beside effort {reasoning.effort!r}; "
                "the level is sent",
            )
        if native:
            return reasoning.effort
        return effort_within(reasoning.effort, capabilities, table, outcomes)
    if reasoning.budget_tokens is not None and reasoning.enabled is not False:
        effort = table.effort(reasoning.budget_tokens, capabilities.efforts)
        outcomes.approximated(
            "reasoning.budget_tokens",
            f"a budget of {reasoning.budget_tokens} tokens sent as effort {effort!r}",
            table.rule(effort),
        )
        return effort
    if reasoning.enabled is False:
        if "none" in capabilities.efforts:
            outcomes.approximated(
                "reasoning.enabled", "reasoning off sent as effort 'none'", "off = none"
            )
            return "none"
        outcomes.dropped(
            "reasoning.enabled", "the model takes no way to turn reasoning off"
        )
    elif reasoning.enabled is True:
        outcomes.dropped(
            "reasoning.enabled",
            "the format has no on switch; the model's default effort applies",
        )
    return None


def effort_within(
    effort: str,
    capabilities: Capabilities,
    table: ReasoningTable,
    outcomes: Outcomes,
) -> str | None:
    """``effort`` when the model takes that level (or its profile names no
    levels), else the level of the model's closest to it through ``table``:
    the smallest covering the level's budget (approximated); for a level the
    table does not know (``"none"``, ``"max"``) or levels it has none of, the
    nearest on the scale of levels (``levels.nearest_level``)."""
    levels = capabilities.efforts
    if not levels or effort in levels:
        return effort
    budget = table.budget(effort)
    if budget is None or not any(table.budget(level) for level in levels):
        return nearest_level(effort, levels, outcomes, "reasoning.effort")
    level = table.effort(budget, levels)
    outcomes.approximated(
        "reasoning.effort",
        f"effort {effort!r} sent as {level!r}, a level the model takes",
        table.rule(level),
    )
    return level


def effort_off(reasoning: ReasoningConfig, outcomes: Outcomes, sent: str) -> bool:
    """Whether ``reasoning`` turns reasoning off by its effort alone (effort
    ``"none"``, no budget, not switched off already), for a format that turns
    reasoning off by a switch or a budget rather than a level: then noted as
    approximated, ``sent`` saying how the target spells off."""
    if (
        reasoning.effort != "none"
        or reasoning.enabled is False
        or reasoning.budget_tokens is not None
    ):
        return False
    outcomes.approximated(
        "reasoning.effort",
        f"effort 'none' sent as {sent}",
        "effort 'none' is reasoning off",
    )
    return True


def budget_for(
    reasoning: ReasoningConfig,
    capabilities: Capabilities,
    table: ReasoningTable,
    outcomes: Outcomes,
) -> int | None:
    """The token budget to send to a format taking budgets: the request's own
    (exact; raised to the model's minimum, approximated), else one from its
    effort level through ``table`` (approximated). Notes the effort, when both
    were given, as dropped; ``None`` when neither was."""
    budget = reasoning.budget_tokens
    if budget is not None:
        if reasoning.effort is not None:
            outcomes.dropped(
                "reasoning.effort",
                "the format takes a token budget only; the request's budget is sent",
            )
    elif reasoning.effort is not None:
        budget = table.budget(reasoning.effort)
        if budget is None:
            if reasoning.effort != "none":
                outcomes.dropped(
                    "reasoning.effort",
                    f"effort {reasoning.effort!r} is not in the reasoning table",
                )
            return None
        outcomes.approximated(
            "reasoning.effort",
            f"effort {reasoning.effort!r} sent as a budget of {budget} tokens",
            table.rule(reasoning.effort),
        )
    if budget is None:
        return None
    least = capabilities.min_budget_tokens
    if least is not None and budget < least:
        outcomes.approximated(
            "reasoning.budget_tokens",
            f"a budget of {budget} tokens raised to {least}",
            f"the model's minimum budget is {least}",
        )
        budget = least
    return budget


def sampling_with_reasoning(
    generation: Generation,
    reasoning_is_on: bool,
    capabilities: Capabilities,
    outcomes: Outcomes,
) -> Generation:
    """The generation settings to send while reasoning is on, to a model that
    takes no sampling settings then (Anthropic: no ``temperature`` or
    ``top_k``, ``top_p`` only from 0.95): those are left out, each noted as a
    conflict settled in favour of the reasoning."""
    if capabilities.sampling_with_reasoning or not reasoning_is_on:
        return generation
    changes: dict[str, None] = {}
    for name in ("temperature", "top_k"):
        if getattr(generation, name) is not None:
            changes[name] = None
    if generation.top_p is not None and generation.top_p < 0.95:
        changes["top_p"] = None
    for name in changes:
        outcomes.conflict(
            f"generation.{name}",
            f"{name} with reasoning on, which the model refuses",
            f"{name} left out; reasoning is kept",
        )
    return attrs.evolve(generation, **changes) if changes else generation


def json_with_tools(
    output: OutputFormat | None,
    has_tools: bool,
    capabilities: Capabilities,
    outcomes: Outcomes,
) -> OutputFormat | None:
    """The output format to send beside tools, to a model that refuses a JSON
    answer in a request with tools (Gemini 2.5): left out, noted as a conflict
    settled in favour of the tools."""
    if (
        output is None
        or output.type == "text"
        or not has_tools
        or capabilities.tools_with_json
    ):
        return output
    outcomes.conflict(
        "output",
        "a JSON answer in a request with tools, which the model refuses",
        "the output format left out; the tools are kept",
    )
    return None
