"""The cross-format rules every provider uses.

- :mod:`.schema`: JSON Schema translation
  (:func:`~canisters.providers.translate_schema`,
  :func:`~canisters.providers.is_strict_compatible`);
- :mod:`.tools`: the tool-choice rules (subsets, parallel calls);
- :mod:`.reasoning`: effort levels and token budgets
  (:class:`~canisters.providers.ReasoningTable`);
- :mod:`.generation`: clamping, stop sequences, service tiers, and the
  effort or budget to send (:func:`.effort_for`, :func:`.budget_for`);
- :mod:`.capabilities`: what a model takes
  (:class:`~canisters.providers.Capabilities`), passed by the caller, with a
  conservative default per format;
- :mod:`.kept`: another format's wire keys kept on a canister or part,
  carried where the target spells the same concept (cache markers, an
  image's detail) and reported where it cannot (:func:`.carry_kept`);
- :mod:`.media`: an image's detail and Gemini's media resolution;
- :mod:`.parameters`: a function's parameters as an object schema;
- :mod:`.levels`: reasoning levels, the nearest one the model takes;
- :mod:`.empty`: empty text left out for another format;
- :mod:`.ids`: each format's rule for call ids, one stable mapping;
- :mod:`.crossing`: the rules of a conversation sent to another format, in
  their order (kept keys, result names, ids, empty text);
- :mod:`.documents`: documents as titled user content where a format has none;
- :mod:`.thinking`: reasoning sent as text;
- :mod:`.finish`: the neutral finish reasons and each format's spelling;
- :mod:`.policy`: the unsupported policy, once (:func:`.policy.apply_policy`);
- :mod:`.paths`: the one grammar of report paths;
- :mod:`.outcomes`: recording (and, under ``unsupported="error"``, refusing)
  what was not translated exactly (:class:`.Outcomes`).

A provider's module spells its own format; what happens across formats is
decided here, in one place, with one behaviour for every target.
"""

from __future__ import annotations

from .capabilities import DEFAULT_CAPABILITIES, Capabilities, capabilities_for
from .generation import (
    TIER_EQUIVALENTS,
    budget_for,
    clamped,
    effort_for,
    effort_off,
    effort_within,
    json_with_tools,
    sampling_with_reasoning,
    service_tier,
    stops,
)
from .outcomes import Outcomes
from .reasoning import DEFAULT_REASONING_TABLE, ReasoningTable
from .schema import (
    GEMINI_MAX_DEPTH,
    SchemaChange,
    SchemaTarget,
    from_gemini_schema,
    is_strict_compatible,
    translate_schema,
)
from .tools import (
    OUTPUT_TOOL,
    disable_parallel,
    forced_with_reasoning,
    narrowed,
    output_as_tool,
    reasoning_on,
    schema_for,
)

__all__ = [
    "DEFAULT_CAPABILITIES",
    "DEFAULT_REASONING_TABLE",
    "GEMINI_MAX_DEPTH",
    "OUTPUT_TOOL",
    "Capabilities",
    "Outcomes",
    "ReasoningTable",
    "SchemaChange",
    "SchemaTarget",
    "TIER_EQUIVALENTS",
    "budget_for",
    "clamped",
    "effort_for",
    "effort_off",
    "effort_within",
    "service_tier",
    "stops",
    "capabilities_for",
    "disable_parallel",
    "forced_with_reasoning",
    "from_gemini_schema",
    "json_with_tools",
    "is_strict_compatible",
    "narrowed",
    "output_as_tool",
    "reasoning_on",
    "sampling_with_reasoning",
    "schema_for",
    "translate_schema",
]
