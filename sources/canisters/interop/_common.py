"""What the interop modules share: lazy imports, the fidelity check, and the
error for what another library refused."""

from __future__ import annotations

import importlib
from collections.abc import Sequence
from types import ModuleType
from typing import Any

import attrs

from ..exceptions import MalformedPayload, MissingExtra, _excerpt
from ..protocols import Canister
from ..providers.kit import Report, describe

__all__ = ["refused", "report_losses", "require"]


def require(module: str, extra: str) -> ModuleType:
    """Import ``module``, or raise :class:`~canisters.MissingExtra` naming ``extra``."""
    try:
        return importlib.import_module(module)
    except ImportError as error:
        raise MissingExtra(module, extra) from error


def refused(what: str, error: Exception) -> MalformedPayload:
    """The library's error for input another library refused (``what`` names
    the form expected): where its first complaint is and what it says, in a
    line. pydantic's own message quotes each value whole, however long."""
    listed = getattr(error, "errors", None)
    try:
        found = listed(include_input=False, include_url=False) if listed else []
    except Exception:  # an ``errors`` that is not pydantic's
        found = []
    if not found:
        return MalformedPayload(f"not {what}: {_excerpt(str(error))}")
    first = found[0]
    where = ".".join(str(step) for step in first.get("loc", ())) or "the top"
    more = f" (and {len(found) - 1} more)" if len(found) > 1 else ""
    return MalformedPayload(
        f"not {what}: at {where}: {_excerpt(str(first.get('msg', '')))}{more}"
    )


def _field_names(item: Any) -> list[str]:
    return [field.name for field in attrs.fields(type(item))]


def _differences(original: Any, back: Any, target: str) -> list[str]:
    """Names of the fields of ``original`` that ``back`` does not give back."""
    lost: list[str] = []
    for name in _field_names(original):
        if name in ("id", "content"):
            continue
        before = getattr(original, name)
        after = getattr(back, name, None)
        if name == "extras":
            before = {k: v for k, v in before.items() if k != target}
            after = {k: v for k, v in (after or {}).items() if k != target}
            if before and before != after:
                lost.append(f"extras of {', '.join(sorted(before))}")
            continue
        if name == "mime_type" and before is None:
            continue  # inferred on the way, nothing lost
        if before != after:
            lost.append(name)
    return lost


def report_losses(
    original: Sequence[Canister],
    back: Sequence[Canister],
    target: str,
    report: Report,
) -> None:
    """Record in ``report`` what of ``original`` did not survive a round trip.

    ``back`` is what reading the converted conversation gives. Canisters are
    aligned in order by role; ids are not compared (the other side has none for
    most canisters), everything else is: a changed or missing field is reported
    as ``dropped`` on its canister or part, a canister that did not come back as
    itself (merged into a neighbour, or given another role) as ``downgraded``.
    """
    same_length = len(original) == len(back)
    position = 0
    for index, canister in enumerate(original):
        where = describe(index, canister)
        match = None
        if same_length:
            match = back[index]
        elif position < len(back) and back[position].role is canister.role:
            match = back[position]
            position += 1
        if match is None or match.role is not canister.role:
            became = "" if match is None else f" (became {match.role.value})"
            report.add(
                "downgraded",
                target,
                where,
                f"not kept as a {canister.role.value} canister of its own{became}",
            )
            continue
        lost = _differences(canister, match, target)
        if lost:
            report.add("dropped", target, where, f"{', '.join(lost)} not kept")
        parts = getattr(canister, "content", ())
        returned = getattr(match, "content", ())
        if len(returned) > len(parts):
            report.add(
                "synthesized",
                target,
                where,
                f"comes back with {len(returned)} parts instead of {len(parts)}",
            )
        for part_index, part in enumerate(parts):
            part_where = describe(index, canister, part_index, part)
            if part_index >= len(returned) or type(returned[part_index]) is not type(
                part
            ):
                report.add("dropped", target, part_where, "part not kept as it was")
                continue
            lost = _differences(part, returned[part_index], target)
            if lost:
                report.add("dropped", target, part_where, f"{', '.join(lost)} not kept")
