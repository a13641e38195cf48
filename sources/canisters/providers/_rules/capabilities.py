"""What a model accepts, as the caller says it: the capability profiles.

A translation depends on the model as much as on the format (Anthropic's
newer models take a native output format, older ones need a forced tool;
Gemini 2.5 takes a thinking budget, Gemini 3 a level). The library never
guesses this from a model's name: the caller passes a :class:`Capabilities`
as the ``capabilities=`` option of ``render_full_request``, and without one
the conservative profile of the format (:data:`DEFAULT_CAPABILITIES`) applies.
"""

from __future__ import annotations

from typing import Any, Literal

import attrs

from ...exceptions import ProviderError

__all__ = ["DEFAULT_CAPABILITIES", "Capabilities", "capabilities_for"]


def _range(value: Any) -> tuple[float, float] | None:
    if value is None:
        return None
    try:
        low, high = value
        return (float(low), float(high))
    except (TypeError, ValueError):
        raise ProviderError(
            f"a temperature range is two numbers, got {value!r}"
        ) from None


@attrs.frozen
class Capabilities:
    """What one model takes, for the translation of a request to it.

    Every field has the conservative value (what the oldest current model of
    the format takes); Evolve a default profile to describe a
    newer model (``attrs.evolve``)::

        caps = attrs.evolve(
            providers.capabilities_for("anthropic"), structured_output="native"
        )
        body = normalizer.render_full_request(request, capabilities=caps)
    """

    structured_output: Literal["native", "tool", "none"] = "native"
    """How a JSON Schema answer is asked for: the format's own field
    (``"native"``), a forced tool whose input is the answer (``"tool"``), or not
    at all (``"none"``: dropped, reported)."""
    json_mode: bool = True
    """Whether the model takes "any JSON object" without a schema."""
    reasoning: Literal["effort", "budget", "switch", "none"] = "effort"
    """How reasoning is configured: an effort level, a token budget, only on
    or off, or not at all."""
    efforts: tuple[str, ...] = ("low", "medium", "high")
    """The effort levels the model takes (``reasoning="effort"``)."""
    min_budget_tokens: int | None = None
    """The smallest reasoning budget taken (Anthropic: 1024)."""
    temperature: tuple[float, float] | None = attrs.field(
        default=(0.0, 2.0), converter=_range
    )
    """The temperature range taken (a value outside is clamped, reported);
    ``None``: any."""
    max_stop_sequences: int | None = None
    """How many stop sequences are taken (more are cut, reported); ``None``:
    any number."""
    blank_stop_sequences: bool = True
    """Whether a stop sequence of whitespace only is taken (Anthropic: no; such
    a one is left out, reported)."""
    default_max_tokens: int | None = None
    """The output limit sent when the format requires one and the request has
    none (Anthropic); the ``max_tokens=`` option overrides it."""
    sampling_with_reasoning: bool = True
    """Whether temperature, top_p and top_k are taken while reasoning is on
    (Anthropic: no)."""
    forced_tool_with_reasoning: bool = True
    """Whether a forced tool choice is taken while reasoning is on (Anthropic:
    no)."""
    json_schema: bool = True
    """Whether schemas (tool parameters, the answer's) go as JSON Schema; when
    not, in the format's own dialect (Gemini's OpenAPI subset, ``parameters``
    and ``responseSchema``, rather than ``parametersJsonSchema`` and
    ``responseJsonSchema``), each change reported."""
    tools_with_json: bool = True
    """Whether a JSON answer may be asked for in a request with tools (Gemini
    2.5: no)."""
    service_tiers: tuple[str, ...] | None = None
    """The service tier names taken; ``None``: the format has no tiers."""


DEFAULT_CAPABILITIES: dict[str, Capabilities] = {
    "openai-chat": Capabilities(
        efforts=("low", "medium", "high"),
        max_stop_sequences=4,
        service_tiers=("auto", "default", "flex", "priority", "scale"),
    ),
    "openai-responses": Capabilities(
        efforts=("low", "medium", "high"),
        service_tiers=("auto", "default", "flex", "priority", "scale"),
    ),
    "anthropic": Capabilities(
        structured_output="tool",
        json_mode=False,
        reasoning="budget",
        # output_config.effort's levels, for a profile set to reasoning="effort"
        efforts=("low", "medium", "high", "xhigh", "max"),
        min_budget_tokens=1024,
        temperature=(0.0, 1.0),
        blank_stop_sequences=False,
        default_max_tokens=4096,
        sampling_with_reasoning=False,
        forced_tool_with_reasoning=False,
        service_tiers=("auto", "standard_only"),
    ),
    # Converse: Anthropic's thinking budget in additionalModelRequestFields,
    # serviceTier's types.
    "bedrock-converse": Capabilities(
        reasoning="budget",
        min_budget_tokens=1024,
        service_tiers=("default", "priority", "flex"),
    ),
    "gemini": Capabilities(
        reasoning="budget",
        # thinkingLevel's levels, for a profile set to reasoning="effort"
        efforts=("minimal", "low", "medium", "high"),
        max_stop_sequences=5,
        json_schema=False,
        tools_with_json=False,
        service_tiers=("standard", "flex", "priority"),
    ),
    "ollama": Capabilities(
        reasoning="switch",
        efforts=(),
        temperature=None,
    ),
    # The OpenAI-compatible reasoning servers take OpenAI's levels; OpenRouter
    # its reasoning.effort's (or a budget in reasoning.max_tokens).
    "openai-chat-reasoning": Capabilities(efforts=("low", "medium", "high")),
    "openrouter": Capabilities(efforts=("minimal", "low", "medium", "high")),
    # The Open Responses schema's ReasoningEffortEnum and ServiceTierEnum.
    "open-responses": Capabilities(
        efforts=("none", "low", "medium", "high", "xhigh"),
        service_tiers=("auto", "default", "flex", "priority"),
    ),
}
"""The conservative profile of each built-in format."""


def capabilities_for(provider: str, given: Capabilities | None = None) -> Capabilities:
    """``given``, or the default profile of ``provider`` (a plugin's format
    without one gets :class:`Capabilities`' own defaults)."""
    if given is not None:
        if not isinstance(given, Capabilities):
            raise ProviderError(
                f"option capabilities must be a Capabilities, got "
                f"{type(given).__name__}"
            )
        return given
    return DEFAULT_CAPABILITIES.get(provider) or Capabilities()
