"""The settings of a tiny request beside its ``lines``: ``model`` and
``temperature``; any other key is kept verbatim."""

from __future__ import annotations

from typing import Any

from canisters import Generation, Request
from canisters.providers import kit

from .messages import NAME

CONVERSATION_KEYS = frozenset({"lines"})


def parse_settings(body: Any) -> Request:
    """The request's fields other than its lines."""
    fields = kit.Fields(body, skip=CONVERSATION_KEYS)
    model = fields.take("model", kit.is_str)
    temperature = fields.take("temperature", kit.is_number)
    extras = {NAME: {kit.BODY: fields.rest}} if fields.rest else None
    return Request(
        model=model, generation=Generation(temperature=temperature), extras=extras
    )


def render_settings(request: Request, rendering: kit.Rendering) -> dict[str, Any]:
    """The body's keys other than ``lines``; what tiny has no key for is reported."""
    out: dict[str, Any] = {}
    if rendering.model is not None:
        out["model"] = rendering.model
    generation = request.generation
    if generation.temperature is not None:
        out["temperature"] = rendering.temperature(generation.temperature)
    if generation != Generation(temperature=generation.temperature):
        rendering.outcomes.dropped("generation", "tiny takes a temperature only")
    for field in ("tool_choice", "output", "reasoning", "cache", "user"):
        if getattr(request, field) is not None:
            rendering.outcomes.dropped(field, f"tiny has no {field}")
    if rendering.tools:
        rendering.outcomes.dropped("tools", "tiny has no tools")
    out.update(rendering.own_body)
    return out
