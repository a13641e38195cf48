"""Conversation: an immutable sequence and its queries."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

import canisters as c
from canisters.protocols import Canister


def _agent_run() -> tuple[c.Conversation, c.Invocation, c.Invocation]:
    first = c.Invocation("weather", {"city": "Oslo"}, step=1)
    second = c.Invocation("time", {}, step=1)
    conversation = c.Conversation(
        [
            c.Supervisor("Be brief.", step=0),
            c.User("Weather and time in Oslo?", step=0),
            c.Assistant(step=1, metadata=c.Metadata(usage=c.Usage(10, 5))),
            first,
            second,
            c.Result(first.invocation_id, "weather", "rain", step=1),
            c.Assistant(
                "It rains.", step=2, metadata=c.Metadata(usage=c.Usage(20, 7, 4))
            ),
        ]
    )
    return conversation, first, second


def test_sequence_behaviour_and_immutability() -> None:
    conversation, _, _ = _agent_run()
    assert len(conversation) == 7
    assert conversation[1].role is c.Role.User
    assert isinstance(conversation[1:3], c.Conversation) and len(conversation[1:3]) == 2
    longer = conversation.append(c.User("thanks"))
    assert len(longer) == 8 and len(conversation) == 7
    assert len(conversation.extend([c.User("a"), c.User("b")])) == 9
    assert conversation == list(conversation)
    with pytest.raises(c.ModelError):
        conversation.append("not a canister")  # type: ignore[arg-type]
    with pytest.raises(AttributeError):
        conversation.canisters = ()  # type: ignore[misc]


def test_canisters_are_checked_once_when_they_join() -> None:
    # append, extend, slices, fork, steps and window make conversations of
    # canisters already checked: each is looked at when it joins, not again at
    # every append (which made building a conversation a canister at a time
    # quadratic).
    looked = []

    class Counted(c.User):
        @property
        def role(self) -> c.Role:  # type: ignore[override]
            looked.append(self)
            return c.Role.User

    first = Counted("first")
    conversation = c.Conversation([first])
    assert len(looked) == 1
    for number in range(50):
        conversation = conversation.append(c.User(f"turn {number}"))
    conversation = conversation.extend([c.User("x"), c.User("y")])
    assert isinstance(conversation[0:10], c.Conversation)
    assert conversation.fork(at=conversation[5].id)[0] is first
    assert len(looked) == 1 and len(conversation) == 53
    with pytest.raises(c.ModelError, match="item 1 is not a canister"):
        conversation.extend([c.User("ok"), 3])  # type: ignore[list-item]


def test_pairs_and_pending() -> None:
    conversation, first, second = _agent_run()
    pairs = conversation.pairs()
    assert [pair.invocation for pair in pairs] == [first, second]
    assert pairs[0].result is not None and pairs[0].result.content == (c.Text("rain"),)
    assert pairs[1].result is None
    assert conversation.pending_invocations() == (second,)


def test_steps_group_in_order() -> None:
    conversation, _, _ = _agent_run()
    steps = conversation.steps()
    assert list(steps) == [0, 1, 2]
    assert [x.role for x in steps[1]] == [
        c.Role.Assistant,
        c.Role.Invocation,
        c.Role.Invocation,
        c.Role.Result,
    ]


def test_fork_and_lookup() -> None:
    conversation, first, _ = _agent_run()
    forked = conversation.fork(at=first.id)
    assert forked[-1] == first and len(forked) == 4
    assert conversation.get(first.id) == first
    with pytest.raises(c.CanisterNotFound, match="nope"):
        conversation.fork(at="nope")


def test_usage_totals() -> None:
    conversation, _, _ = _agent_run()
    assert conversation.usage() == c.Usage(30, 12, 4)


def test_window_keeps_groups_whole() -> None:
    conversation, _, _ = _agent_run()
    # The supervisor is pinned; step 1 (4 canisters) cannot be split.
    assert [x.role for x in conversation.window(3)] == [
        c.Role.Supervisor,
        c.Role.Assistant,
    ]
    assert len(conversation.window(6)) == 6
    assert conversation.window(100) == conversation
    sized = conversation.window(40, size=lambda x: 10)
    assert len(sized) == 2
    without = conversation.window(2, keep_supervisors=False)
    assert [x.role for x in without] == [c.Role.Assistant]
    with pytest.raises(c.ModelError):
        conversation.window(-1)


@given(st.integers(0, 12), st.lists(st.booleans(), min_size=1, max_size=10))
def test_window_never_splits_a_pair(budget: int, answered: list[bool]) -> None:
    items: list[Canister] = []
    for step, done in enumerate(answered):
        call = c.Invocation("f")
        items.append(c.User("go"))
        items.append(call)
        if done:
            items.append(c.User("meanwhile"))
            items.append(c.Result(call.invocation_id, "f", "ok"))
        del step
    conversation = c.Conversation(items)
    window = conversation.window(budget)
    assert len(window) <= budget
    assert window == list(conversation)[len(conversation) - len(window) :]
    kept = {x.invocation_id for x in window.invocations()}
    for result in window.results():
        assert result.invocation_id in kept
    for invocation in window.invocations():
        full = next(p for p in conversation.pairs() if p.invocation == invocation)
        if full.result is not None:
            assert full.result in window


@pytest.mark.parametrize("budget", ["3", None, True])
def test_window_budget_must_be_a_number(budget: object) -> None:
    with pytest.raises(c.ModelError, match="number"):
        c.Conversation([c.User("x")]).window(budget)  # type: ignore[arg-type]
