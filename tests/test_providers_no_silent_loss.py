"""No silent loss: every key of every corpus body, into every other format, is
carried or named in the report, and ``unsupported="error"`` refuses what is not
exact (the walk is described in ``silent_loss_support``).

``data/silent-losses-open.json`` names, per body and target, the key patterns
still lost silently and the events still let through under
``unsupported="error"``: the defects not fixed yet. Anything beyond them fails.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from canisters import CanistersError

from .silent_loss_support import (
    FORMATS,
    OPEN,
    cases,
    not_refused,
    patterns,
    translate,
    walk,
)

CASES = cases()
KNOWN: dict[str, Any] = json.loads(OPEN.read_text(encoding="utf-8"))


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
        new = silent - set(KNOWN["silent"].get(name, {}).get(target, ()))
        if new:
            found[target] = sorted(new)
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
        known = KNOWN["not refused"].get(name, {}).get(target, ())
        new = [
            event
            for event in not_refused(kind, source, target, body)
            if event not in known
        ]
        if new:
            found[target] = new
    assert found == {}


def test_the_corpus_holds_every_kind_of_body() -> None:
    kinds = {(source, kind) for _, source, kind, _ in CASES}
    for source in FORMATS:
        assert {(source, "request"), (source, "response")} <= kinds
        assert (source, "error") in kinds
    known = set(KNOWN["silent"]) | set(KNOWN["not refused"])
    assert known <= {case[0] for case in CASES}


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
