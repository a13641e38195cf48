"""The immutable :class:`Conversation` sequence and its queries."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Sequence
from typing import Any, overload

import attrs

from ._display import notebook_html
from ._trusted import _trusted
from .canisters import Usage
from .exceptions import CanisterNotFound, ModelError, _excerpt
from .protocols import Canister, InvocationCanister, ResultCanister, Role

__all__ = ["Conversation", "Pair"]


@attrs.frozen
class Pair:
    """An invocation and its result (``None`` while it is pending)."""

    invocation: InvocationCanister
    """The invocation."""
    result: ResultCanister | None
    """Its result, or ``None`` when none has been recorded yet."""


def _canisters(value: Iterable[Canister]) -> tuple[Canister, ...]:
    return canisters_in(value, "Conversation")


@attrs.frozen(eq=False)
class Conversation(Sequence[Canister]):
    """An immutable sequence of canisters.

    ``append`` and ``extend`` return new conversations; the queries never change
    the conversation they are asked of. Two conversations are equal when they hold
    equal canisters in the same order (a conversation also equals a tuple or list
    of the same canisters).
    """

    canisters: tuple[Canister, ...] = attrs.field(default=(), converter=_canisters)
    """The canisters, oldest first."""

    # Sequence protocol ---------------------------------------------------------

    def __len__(self) -> int:
        return len(self.canisters)

    @overload
    def __getitem__(self, index: int) -> Canister: ...

    @overload
    def __getitem__(self, index: slice) -> Conversation: ...

    def __getitem__(self, index: int | slice) -> Canister | Conversation:
        if isinstance(index, slice):
            return _new(self.canisters[index])
        return self.canisters[index]

    def __iter__(self) -> Iterator[Canister]:
        return iter(self.canisters)

    def __eq__(self, other: object) -> bool:
        if isinstance(other, Conversation):
            return self.canisters == other.canisters
        if isinstance(other, (tuple, list)):
            return self.canisters == tuple(other)
        return NotImplemented

    def __hash__(self) -> int:
        return hash(self.canisters)

    def __repr__(self) -> str:
        return f"Conversation({list(self.canisters)!r})"

    def _repr_html_(self) -> str:
        """The notebook display: :mod:`canisters.html`'s view, bounded in size."""
        return notebook_html(self)

    # Building ------------------------------------------------------------------

    def append(self, canister: Canister) -> Conversation:
        """Return a new conversation with ``canister`` added at the end."""
        return _new(self.canisters + _canisters((canister,)))

    def extend(self, canisters: Iterable[Canister]) -> Conversation:
        """Return a new conversation with ``canisters`` added at the end."""
        return _new(self.canisters + _canisters(canisters))

    def index_of(self, canister_id: str) -> int:
        """Return the position of the canister with ``canister_id``.

        Raises :class:`~canisters.CanisterNotFound` when there is none.
        """
        for index, canister in enumerate(self.canisters):
            if canister.id == canister_id:
                return index
        raise CanisterNotFound(canister_id)

    def get(self, canister_id: str) -> Canister:
        """Return the canister with ``canister_id``."""
        return self.canisters[self.index_of(canister_id)]

    def fork(self, at: str) -> Conversation:
        """Return the conversation up to and including the canister with id ``at``."""
        return _new(self.canisters[: self.index_of(at) + 1])

    # Queries -------------------------------------------------------------------

    def invocations(self) -> tuple[InvocationCanister, ...]:
        """Every invocation, in order."""
        return tuple(
            c  # type: ignore[misc]
            for c in self.canisters
            if c.role is Role.Invocation
        )

    def results(self) -> tuple[ResultCanister, ...]:
        """Every result, in order."""
        return tuple(
            c  # type: ignore[misc]
            for c in self.canisters
            if c.role is Role.Result
        )

    def pairs(self) -> tuple[Pair, ...]:
        """Every invocation with its result (the first one recorded), in order."""
        answers: dict[str, ResultCanister] = {}
        for result in self.results():
            answers.setdefault(result.invocation_id, result)
        return tuple(
            Pair(invocation, answers.get(invocation.invocation_id))
            for invocation in self.invocations()
        )

    def pending_invocations(self) -> tuple[InvocationCanister, ...]:
        """Invocations that have no result yet, in order."""
        return tuple(pair.invocation for pair in self.pairs() if pair.result is None)

    def steps(self) -> dict[int | None, Conversation]:
        """Canisters grouped by ``step``, in order of first appearance.

        Canisters without a step are grouped under ``None``.
        """
        groups: dict[int | None, list[Canister]] = {}
        for canister in self.canisters:
            groups.setdefault(canister.step, []).append(canister)
        return {step: _new(tuple(items)) for step, items in groups.items()}

    def usage(self) -> Usage:
        """Token usage summed over every canister's metadata."""
        total = Usage()
        for canister in self.canisters:
            metadata = canister.metadata
            if metadata is not None and metadata.usage is not None:
                total = total + metadata.usage
        return total

    def window(
        self,
        budget: float,
        *,
        size: Callable[[Canister], float] | None = None,
        keep_supervisors: bool = True,
    ) -> Conversation:
        """Return the most recent history that fits ``budget``.

        ``size`` measures a canister (every canister counts 1 by default, so the
        budget is a number of canisters). Trimming drops the oldest canisters first
        and never splits an invocation from its result nor a step in two: such
        groups are kept or dropped whole. With ``keep_supervisors`` the leading
        supervisor canisters are always kept and count against the budget.
        """
        if isinstance(budget, bool) or not isinstance(budget, (int, float)):
            raise ModelError(f"window budget must be a number, got {_excerpt(budget)}")
        if budget < 0:
            raise ModelError(
                f"window budget must not be negative, got {_excerpt(budget)}"
            )
        measure: Callable[[Canister], float] = size or (lambda _canister: 1)
        items = self.canisters
        pinned = 0
        if keep_supervisors:
            while pinned < len(items) and items[pinned].role is Role.Supervisor:
                pinned += 1
        remaining = budget - sum(measure(c) for c in items[:pinned])
        if remaining < 0:
            raise ModelError(
                "window budget is smaller than the leading supervisor canisters"
            )
        blocks = _blocks(items[pinned:])
        kept: list[tuple[Canister, ...]] = []
        for block in reversed(blocks):
            cost = sum(measure(c) for c in block)
            if cost > remaining:
                break
            remaining -= cost
            kept.append(block)
        tail = tuple(c for block in reversed(kept) for c in block)
        return _new(items[:pinned] + tail)


_new = _trusted(Conversation)
"""A conversation of canisters already checked (those of another one), without
checking each again: ``append`` would otherwise check every canister held at
each call, a Python loop over the whole conversation per canister added."""


def canisters_in(conversation: Iterable[Canister], caller: str) -> tuple[Canister, ...]:
    """Return the canisters of ``conversation``, refusing anything that is not one.

    ``caller`` names the function for the error message. (Internal: the intake of
    every function that takes a conversation.)
    """
    if isinstance(conversation, Conversation):
        return conversation.canisters
    if isinstance(conversation, (str, bytes)) or not isinstance(conversation, Iterable):
        raise ModelError(
            f"{caller} takes a conversation, got {type(conversation).__name__}"
        )
    items = conversation if type(conversation) is tuple else tuple(conversation)
    for index, item in enumerate(items):
        if not isinstance(getattr(item, "role", None), Role):
            raise ModelError(
                f"{caller}: item {index} is not a canister ({type(item).__name__})"
            )
    return items


def _blocks(items: Sequence[Canister]) -> list[tuple[Canister, ...]]:
    """Split ``items`` into runs that must be kept or dropped together.

    A run ends only where no step continues across the boundary and no invocation
    before it waits for a result after it.
    """
    last_index_of_step: dict[int, int] = {}
    last_result_of: dict[str, int] = {}
    for index, canister in enumerate(items):
        if canister.step is not None:
            last_index_of_step[canister.step] = index
        if canister.role is Role.Result:
            last_result_of[canister.invocation_id] = index  # type: ignore[attr-defined]
    blocks: list[tuple[Canister, ...]] = []
    start = 0
    reach = -1
    for index, canister in enumerate(items):
        reach = max(reach, index)
        if canister.step is not None:
            reach = max(reach, last_index_of_step[canister.step])
        if canister.role is Role.Invocation:
            invocation_id: Any = canister.invocation_id  # type: ignore[attr-defined]
            reach = max(reach, last_result_of.get(invocation_id, index))
        if index == reach:
            blocks.append(tuple(items[start : index + 1]))
            start = index + 1
    return blocks
