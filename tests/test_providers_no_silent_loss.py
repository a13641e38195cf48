"""No silent loss: every key of every corpus body, into every other format, is
carried or named in the report, and ``unsupported="error"`` refuses what is not
exact (the walk is described in ``silent_loss_support``). Any key lost
silently, and any event let through under ``unsupported="error"``, fails.
"""

from __future__ import annotations

from typing import Any

import pytest

from canisters import CanistersError

from .silent_loss_support import (
    FORMATS,
    cases,
    not_refused,
    patterns,
    translate,
    walk,
)

CASES = cases()


@pytest.mark.parametrize(
    ("name", "source", "kind", "body"), CASES, ids=[case[0] for case in CASES]
)
def test_every_key_is_carried_or_reported(
    name: str, source: str, kind: str, body: Any
) -> None:
    found = {}
    for target in FORMATS:
        if target == source:
            continue
        try:
            silent, probed = walk(kind, source, target, body)
        except CanistersError:
            continue  # the render refuses the body: loud, not silent
        assert probed == len(patterns(body))
        if silent:
            found[target] = sorted(silent)
    assert found == {}


@pytest.mark.parametrize(
    ("name", "source", "kind", "body"), CASES, ids=[case[0] for case in CASES]
)
def test_unsupported_error_refuses_what_is_not_exact(
    name: str, source: str, kind: str, body: Any
) -> None:
    found = {}
    for target in FORMATS:
        if target == source:
            continue
        try:
            translate(kind, source, target, body)
        except CanistersError:
            continue
        let_through = not_refused(kind, source, target, body)
        if let_through:
            found[target] = let_through
    assert found == {}


def test_the_corpus_holds_every_kind_of_body() -> None:
    kinds = {(source, kind) for _, source, kind, _ in CASES}
    for source in FORMATS:
        assert {(source, "request"), (source, "response")} <= kinds
        assert (source, "error") in kinds


def test_the_walk_finds_a_key_dropped_silently(monkeypatch: pytest.MonkeyPatch) -> None:
    """The walk itself: a key the translation ignores is found, a carried one,
    a reported one (and the keys within it) and a required one are not."""
    from . import silent_loss_support as support

    def fake(
        kind: str, source: str, target: str, body: Any, unsupported: str = "drop"
    ) -> Any:
        if body.get("required") != 0:
            raise CanistersError("required must be 0")
        events = (("dropped", "body.reported", "", None),) if "reported" in body else ()
        return {"carried": body.get("carried")}, events

    monkeypatch.setattr(support, "translate", fake)
    body = {
        "carried": 1,
        "reported": {"within": True},
        "ignored": {"deep": "x", "empty": []},
        "required": 0,
    }
    silent, probed = support.walk("request", "a", "b", body)
    assert silent == {"ignored.deep"}
    assert probed == 7


def test_the_walk_takes_an_element_the_report_names_for_what_it_holds(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """An element of no type the report names by a key it holds, by its role
    or as the canister it is answers for the keys within it, also where it is
    not the first element of its shape; an element it does not name does
    not."""
    from . import silent_loss_support as support

    def fake(
        kind: str, source: str, target: str, body: Any, unsupported: str = "drop"
    ) -> Any:
        events = []
        for index, item in enumerate(body.get("items", [])):
            if "toolCall" in item:
                events.append(("dropped", f"element (toolCall) {index}", "", None))
            elif item.get("role") == "control":
                events.append(("dropped", "element (control)", "", None))
            elif item.get("type") == "tool_result" and item.get("orphan"):
                events.append(("dropped", f"canister {index} (result)", "", None))
        kept = [item.get("text") for item in body.get("items", [])]
        return {"kept": kept}, tuple(events)

    monkeypatch.setattr(support, "translate", fake)
    body = {
        "items": [
            {"type": "tool_result", "text": "one"},
            {"type": "tool_result", "content": "b", "orphan": True},
            {"toolCall": {"args": "x"}, "sig": "s"},
            {"role": "user", "content": "lost"},
            {"role": "control", "content": "thinking"},
        ]
    }
    silent, _ = support.walk("request", "a", "b", body)
    # The orphan result's content (the first of its shape) is held by the
    # result the report names, the call's keys by the element it names; the
    # user message's keys (and the first result's type) nothing carries.
    assert silent == {"items.*[tool_result].type", "items.*.role", "items.*.content"}
