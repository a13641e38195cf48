"""Finish reasons: one neutral set, each format's spelling, nothing silent.

A reply's :attr:`~canisters.Metadata.finish_reason` is one of
:data:`FINISH_REASONS` when the parser knows the format's value, else the
format's own value as it came (Gemini's ``LANGUAGE`` reads as
``"language"``), so the raw value is never lost. A reply with no finish
reason (an Ollama reply without ``done_reason``) ended in tool calls when it
holds invocations, else it stopped (:func:`finish_of`).

Rendering a reply for a format: a neutral reason goes as the format spells it
(a table of the format); where the format has no exact equivalent, as its
nearest, reported as approximated; a reason outside the neutral set is sent
as it is (never as ``"stop"``), reported; both refused under
``unsupported="error"``.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, Any

from ...protocols import Role
from .policy import apply_policy

if TYPE_CHECKING:
    from .._common import Options

__all__ = ["FINISH_REASONS", "finish_of", "render_finish"]

FINISH_REASONS = frozenset(
    {"stop", "length", "tool_calls", "content_filter", "refusal", "pause"}
)
"""The neutral finish reasons: the turn ended (``stop``), reached the output
or context limit (``length``), called tools (``tool_calls``), was stopped or
blocked by a safety filter (``content_filter``, also a prompt blocked before
any answer), the model refused (``refusal``), or a long turn was paused to be
continued (``pause``)."""


def finish_of(finish: str | None, canisters: Iterable[Any]) -> str:
    """``finish``, or when the reply gives none: ``"tool_calls"`` for a reply
    holding invocations, else ``"stop"``."""
    if finish is not None:
        return finish
    for canister in canisters:
        if canister.role is Role.Invocation:
            return "tool_calls"
    return "stop"


def render_finish(
    finish: str,
    spelling: Mapping[str, tuple[str, bool]],
    provider: str,
    options: Options,
    unknown: str | None = None,
) -> str:
    """The format's value for ``finish``: ``spelling[finish]`` is (its value,
    whether it is exact); a value that is not exact is approximated, one
    outside :data:`FINISH_REASONS` sent as it is (as ``unknown`` when the
    format's field cannot hold it): both reported, and refused under
    ``unsupported="error"`` (:func:`.policy.apply_policy`)."""
    found = spelling.get(finish)
    if found is None:
        sent = finish if unknown is None else unknown
        detail = (
            f"finish reason {finish!r} has no {provider} equivalent; sent as {sent!r}"
        )
        rule = "unknown finish reasons are kept"
    else:
        sent, exact = found
        if exact:
            return sent
        detail = f"finish reason {finish!r} sent as {sent!r}"
        rule = "the nearest finish reason"
    apply_policy(
        options,
        provider,
        "finish_reason",
        f"{detail} ({rule})",
        kind="approximated",
        detail=detail,
        rule=rule,
    )
    return sent
