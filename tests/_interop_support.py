"""Checks shared by the interop tests."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Sequence
from typing import Any

from canisters.protocols import Canister
from canisters.providers import Report


def _projection(canister: Canister) -> tuple[Any, ...]:
    """What any target must carry or report: role, texts, names, ids, arguments."""
    texts = tuple(
        getattr(part, "text", None) for part in getattr(canister, "content", ())
    )
    return (
        canister.role,
        texts,
        getattr(canister, "name", None),
        getattr(canister, "invocation_id", None),
        dict(getattr(canister, "arguments", {}) or {}),
    )


def assert_no_silent_loss(
    original: Sequence[Canister], back: Sequence[Canister], report: Report
) -> None:
    """Every canister that did not come back as it was is named in ``report``."""
    reported = {event.where.split(",")[0] for event in report.events}
    for index, canister in enumerate(original):
        same = index < len(back) and _projection(back[index]) == _projection(canister)
        if not same:
            where = f"canister {index} ({canister.role.value})"
            assert where in reported or len(back) != len(original), (
                where,
                report.events,
            )


def extra_named_without(library: str, module: str) -> str:
    """Hide ``library``, call ``canisters.interop.<module>.from_canisters`` in a
    fresh interpreter, and return the extra the raised MissingExtra names."""
    code = (
        f"import sys; sys.modules[{library!r}] = None\n"
        f"from canisters.interop import {module}\n"
        "from canisters.exceptions import MissingExtra\n"
        "try:\n"
        f"    {module}.from_canisters([])\n"
        "except MissingExtra as error:\n"
        "    print(error.extra)\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    )
    return out.stdout.strip()


def tool_histories() -> Any:
    """Valid conversations with rounds of tool calls and their results, answered in
    the order they were made (what a peer's history without ids can still pair)."""
    from hypothesis import strategies as st

    import canisters as c

    texts = st.text(min_size=1, max_size=8).filter(str.strip)
    names = st.sampled_from(["weather", "time", "search"])

    @st.composite
    def build(draw: Any) -> c.Conversation:
        out: list[Canister] = [c.User(draw(texts))]
        for turn in range(draw(st.integers(1, 3))):
            calls = [
                c.Invocation(
                    name,
                    {"q": draw(st.integers(0, 9))},
                    invocation_id=f"call_{turn}_{number}",
                )
                for number, name in enumerate(
                    draw(st.lists(names, min_size=1, max_size=3))
                )
            ]
            out.extend(calls)
            out.extend(
                c.Result(call.invocation_id, call.name, (c.Text(draw(texts)),))
                for call in calls
            )
        out.append(c.Assistant(draw(texts)))
        return c.Conversation(out)

    return build()
