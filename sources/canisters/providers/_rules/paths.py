"""The one grammar of report paths.

Every :class:`~canisters.providers.Event` names where it happened by one
grammar, whichever rule or renderer reports it:

- a field of the request: its name, then ``.name`` for a field within and
  ``[i]`` for an element (``generation.top_k``, ``tools[1].parameters.type``,
  ``extras.gemini.body.safetySettings``, ``model``; of a reply:
  ``finish_reason``);
- a place in the conversation: ``canister i (role)``, then
  ``, part j (kind)`` for a part of it (``canister 3 (user), part 1 (audio)``),
  then ``.key`` for a wire key a parser kept there (``canister 1 (user).name``,
  ``canister 0 (supervisor), part 0 (text).cache_control``). ``i`` counts the
  canisters of the conversation as given, ``j`` the parts of the canister.

:func:`location` writes a place; a field is written as its path.
"""

from __future__ import annotations

from typing import Any

__all__ = ["location"]


def location(
    index: int,
    canister: Any,
    part_index: int | None = None,
    part: Any = None,
    key: str | None = None,
) -> str:
    """The path of canister ``index`` (and of its part ``part_index``, and of
    the kept wire ``key`` there)."""
    # _value_: what .value gives, without the enum's descriptor (a quarter of
    # the cost of this function on the parts rendered through it).
    where = f"canister {index} ({canister.role._value_})"
    if part_index is not None:
        kind = getattr(part, "type", type(part).__name__)
        where = f"{where}, part {part_index} ({kind})"
    return where if key is None else f"{where}.{key}"
