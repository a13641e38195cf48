"""Follow lineage and total what a run cost.

Every canister can carry a ``trace_id`` (one request, one agent run) and a
``parent_id`` (the canister it derives from). :func:`new_trace` makes a trace
id, :func:`with_trace` puts a canister in a trace, :func:`lineage` follows
``parent_id`` back to the root and :func:`trace` selects one trace.
:func:`trace_summary` totals tokens, latency, retries and model calls over a
conversation, per trace and per policy, as a :class:`TraceSummary` of
:class:`TraceTotals`.

:mod:`canisters.recording` re-exports every name here.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any, TypeVar

import attrs

from ._frozen import freeze
from .canisters import Usage, new_id
from .conversation import Conversation, canisters_in
from .exceptions import CanisterNotFound, RecordingError
from .protocols import Canister, Role

__all__ = [
    "TraceSummary",
    "TraceTotals",
    "lineage",
    "new_trace",
    "trace",
    "trace_summary",
    "with_trace",
]

C = TypeVar("C", bound=Canister)


def new_trace() -> str:
    """Return a new trace id."""
    return new_id()


def with_trace(canister: C, trace_id: str | None = None) -> C:
    """Return ``canister`` in trace ``trace_id`` (a new trace when ``None``)."""
    if not attrs.has(type(canister)):
        raise RecordingError(
            f"with_trace needs an attrs canister, got {type(canister).__name__}"
        )
    return attrs.evolve(  # type: ignore[misc]
        canister, trace_id=trace_id if trace_id is not None else new_trace()
    )


def lineage(conversation: Iterable[Canister], canister_id: str) -> Conversation:
    """Return a canister and its ancestors through ``parent_id``, oldest first.

    The chain stops at a canister without a parent or whose parent is not in the
    conversation. Raises :class:`~canisters.CanisterNotFound` when no canister
    has ``canister_id``.
    """
    by_id = {canister.id: canister for canister in conversation}
    if canister_id not in by_id:
        raise CanisterNotFound(canister_id)
    chain: list[Canister] = []
    seen: set[str] = set()
    current: Canister | None = by_id[canister_id]
    while current is not None and current.id not in seen:
        seen.add(current.id)
        chain.append(current)
        parent = current.parent_id
        current = by_id.get(parent) if parent is not None else None
    return Conversation(tuple(reversed(chain)))


def trace(conversation: Iterable[Canister], trace_id: str | None) -> Conversation:
    """Return the canisters of one trace, in order."""
    return Conversation(tuple(c for c in conversation if c.trace_id == trace_id))


@attrs.frozen
class TraceTotals:
    """Execution totals of a group of canisters (a trace, a policy, everything)."""

    canisters: int = 0
    """How many canisters the group holds."""
    model_calls: int = 0
    """How many assistant canisters it holds: one per model response."""
    invocations: int = 0
    """How many invocations it holds."""
    errors: int = 0
    """How many error results it holds."""
    usage: Usage = attrs.field(factory=Usage)
    """Token usage summed over the canisters' metadata."""
    latency_ms: float = 0.0
    """Latency summed over the canisters' metadata, in milliseconds."""
    retries: int = 0
    """Retries summed over the canisters' metadata."""
    cache_hits: int = 0
    """How many canisters were answered from a cache."""

    @property
    def tokens(self) -> int:
        """Input and output tokens together."""
        return self.usage.total_tokens

    def as_dict(self) -> dict[str, Any]:
        """Return the totals as a flat JSON-compatible dict."""
        usage = self.usage
        return {
            "canisters": self.canisters,
            "model_calls": self.model_calls,
            "invocations": self.invocations,
            "errors": self.errors,
            "tokens": usage.total_tokens,
            "input_tokens": usage.input_tokens,
            "output_tokens": usage.output_tokens,
            "cached_tokens": usage.cached_tokens,
            "reasoning_tokens": usage.reasoning_tokens,
            "latency_ms": self.latency_ms,
            "retries": self.retries,
            "cache_hits": self.cache_hits,
        }

    def add(self, canister: Canister) -> TraceTotals:
        """Return these totals with ``canister`` counted in."""
        role = canister.role
        metadata = canister.metadata
        usage, latency, retries, hit = self.usage, self.latency_ms, self.retries, 0
        if metadata is not None:
            if metadata.usage is not None:
                usage = usage + metadata.usage
            if metadata.latency_ms is not None:
                latency += metadata.latency_ms
            if metadata.retries is not None:
                retries += metadata.retries
            hit = 1 if metadata.cache_hit else 0
        return TraceTotals(
            canisters=self.canisters + 1,
            model_calls=self.model_calls + (role is Role.Assistant),
            invocations=self.invocations + (role is Role.Invocation),
            errors=self.errors + (role is Role.Result and canister.error is not None),  # type: ignore[attr-defined]
            usage=usage,
            latency_ms=latency,
            retries=retries,
            cache_hits=self.cache_hits + hit,
        )


@attrs.frozen
class TraceSummary:
    """What :func:`trace_summary` returns."""

    total: TraceTotals
    """Totals over the whole conversation."""
    traces: Mapping[str | None, TraceTotals] = attrs.field(converter=freeze)
    """Totals per ``trace_id`` (``None`` for canisters outside any trace)."""
    policies: Mapping[str | None, TraceTotals] = attrs.field(converter=freeze)
    """Totals per ``policy`` (``None`` for canisters without one)."""

    def as_dict(self) -> dict[str, Any]:
        """Return the summary as JSON-compatible dicts (``None`` keys become "")."""
        return {
            "total": self.total.as_dict(),
            "traces": {k or "": v.as_dict() for k, v in self.traces.items()},
            "policies": {k or "": v.as_dict() for k, v in self.policies.items()},
        }


def trace_summary(conversation: Iterable[Canister]) -> TraceSummary:
    """Total tokens, latency, retries and model calls per trace and per policy."""
    empty = TraceTotals()
    total = empty
    traces: dict[str | None, TraceTotals] = {}
    policies: dict[str | None, TraceTotals] = {}
    for canister in canisters_in(conversation, "trace_summary"):
        total = total.add(canister)
        traces[canister.trace_id] = traces.get(canister.trace_id, empty).add(canister)
        policies[canister.policy] = policies.get(canister.policy, empty).add(canister)
    return TraceSummary(total, traces, policies)
