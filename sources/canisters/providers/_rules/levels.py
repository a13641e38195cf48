"""Reasoning effort levels: what the target takes, the nearest one otherwise.

The formats name levels on one scale (OpenAI's ``none`` and ``minimal``,
Anthropic's ``xhigh`` and ``max``, Gemini's ``MINIMAL``), but each model takes
only some of them: Anthropic's ``output_config.effort`` takes low, medium,
high, xhigh and max; Gemini's ``thinkingLevel`` minimal, low, medium and high.
A level the target does not take is sent as the nearest level it takes on
:data:`SCALE` (the higher one when two are as near: asking for more effort
rather than less), approximated and reported; a level off the scale is left
out, reported.
"""

from __future__ import annotations

from .outcomes import Outcomes

__all__ = ["SCALE", "nearest_level"]

SCALE = ("none", "minimal", "low", "medium", "high", "xhigh", "max")
"""Every effort level a built-in format names, from least to most."""


def nearest_level(
    effort: str, levels: tuple[str, ...], outcomes: Outcomes, field: str
) -> str | None:
    """``effort`` when ``levels`` (the target's) has it or is empty (the
    target's levels are not known); else the nearest of ``levels`` on
    :data:`SCALE`, noted at ``field`` as approximated; ``None`` (noted as
    dropped) when neither is on the scale."""
    if not levels or effort in levels:
        return effort
    known = [level for level in levels if level in SCALE]
    if effort not in SCALE or not known:
        outcomes.dropped(
            field,
            f"effort {effort!r} is not a level the model takes ({', '.join(levels)})",
        )
        return None
    position = SCALE.index(effort)
    sent = min(
        known,
        key=lambda level: (abs(SCALE.index(level) - position), -SCALE.index(level)),
    )
    outcomes.approximated(
        field,
        f"effort {effort!r} sent as {sent!r}, the nearest level the model takes",
        f"levels taken: {', '.join(levels)}",
    )
    return sent
