"""Reasoning effort levels and token budgets: the explicit, overridable table."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import attrs

from ..._frozen import FrozenDict
from ...exceptions import ProviderError

__all__ = ["DEFAULT_REASONING_TABLE", "ReasoningTable"]

_BUDGETS = {
    "minimal": 1024,
    "low": 2048,
    "medium": 8192,
    "high": 16384,
    "xhigh": 32768,
}


def _budgets(value: Mapping[str, Any]) -> FrozenDict[str, int]:
    if not isinstance(value, Mapping) or not value:
        raise ProviderError("a ReasoningTable needs a mapping of levels to budgets")
    for level, budget in value.items():
        if not isinstance(level, str) or type(budget) is not int or budget <= 0:
            raise ProviderError(
                f"a ReasoningTable maps level names to positive ints; got "
                f"{level!r}: {budget!r}"
            )
    return FrozenDict(sorted(value.items(), key=lambda item: item[1]))


@attrs.frozen
class ReasoningTable:
    """How an effort level becomes a token budget and back.

    No format shares a scale (``"high"`` is 4,096 tokens in LiteLLM, 16,384 in
    pydantic-ai); this table is the one the translation uses, and every use is
    reported as approximated, naming the table's entry. Pass your own as the
    ``reasoning_table=`` option::

        table = providers.ReasoningTable({"low": 1024, "medium": 4096, "high": 8192})
    """

    budgets: Mapping[str, int] = attrs.field(
        factory=lambda: dict(_BUDGETS), converter=_budgets
    )
    """Each level's budget in tokens (the default: minimal 1024, low 2048,
    medium 8192, high 16384, xhigh 32768)."""

    def budget(self, effort: str) -> int | None:
        """The budget of level ``effort``; ``None`` for a level not in the table."""
        return self.budgets.get(effort)

    def effort(self, budget: int, levels: tuple[str, ...] = ()) -> str:
        """The level for ``budget``: the smallest level whose budget covers it
        (the largest level when none does), among ``levels`` when given (and
        present in the table)."""
        table = [
            (level, size)
            for level, size in self.budgets.items()
            if not levels or level in levels
        ] or list(self.budgets.items())
        for level, size in table:
            if size >= budget:
                return level
        return table[-1][0]

    def rule(self, effort: str) -> str:
        """The entry used, in words, for a report."""
        return f"reasoning table: {effort} = {self.budgets.get(effort)} tokens"


DEFAULT_REASONING_TABLE = ReasoningTable()
"""The table used when the caller passes none."""
