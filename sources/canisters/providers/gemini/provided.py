"""Gemini: the code it ran, as typed content.

An ``executableCode`` part makes a :class:`~canisters.ProviderToolCall`
(``code_execution``, with its language and code) and a
``codeExecutionResult`` part a :class:`~canisters.ProviderToolResult` (its
outcome as the status, its output as standard output). The part stays whole in
the part's extras and goes back to Gemini as it came; what goes to another
provider is decided by :mod:`canisters.providers._rules.provided`.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

from ..._frozen import FrozenDict
from ...exceptions import ModelError
from ...protocols import Content
from ...provided import ProviderToolCall, ProviderToolResult

__all__ = ["KINDS", "native", "part_of", "render"]

NAME: Final = "gemini"
KINDS: Final = ("executableCode", "codeExecutionResult")
"""The part keys read as typed parts (camelCase or the SDK's snake_case)."""
_SNAKE = {
    "executable_code": "executableCode",
    "code_execution_result": "codeExecutionResult",
}


def _text(value: Any) -> str | None:
    return value if isinstance(value, str) else None


def part_of(part: Mapping[str, Any]) -> Content | None:
    """The typed part of a Gemini part holding executed code or its result;
    ``None`` for any other part, or one of another shape."""
    for key in part:
        kind = _SNAKE.get(key, key)
        if kind not in KINDS:
            continue
        value = part[key]
        if not isinstance(value, Mapping):
            return None
        extras = FrozenDict({NAME: {"raw": dict(part)}})
        marker = {"part": kind}
        try:
            if kind == "executableCode":
                arguments = {
                    k: v for k, v in value.items() if k in ("language", "code")
                }
                return ProviderToolCall(
                    "code_execution",
                    arguments,
                    None,
                    NAME,
                    opaque=marker,
                    extras=extras,
                )
            return ProviderToolResult(
                "code_execution",
                None,
                NAME,
                _text(value.get("outcome")),
                stdout=_text(value.get("output")),
                opaque=marker,
                extras=extras,
            )
        except ModelError:
            return None
    return None


def native(part: Content) -> bool:
    """Whether ``part`` goes to Gemini as the part it was read from."""
    held: Any = part
    return (
        isinstance(part, ProviderToolCall | ProviderToolResult)
        and held.provider == NAME
        and "part" in held.opaque
    )


def render(part: Content) -> dict[str, Any]:
    """The Gemini part of a part :func:`native` accepts: the part it was read
    from, or (its extras gone) the part its typed fields say."""
    held: Any = part
    raw = held.extras.get(NAME, {}).get("raw")
    if isinstance(raw, Mapping):
        return dict(raw)
    if isinstance(part, ProviderToolCall):
        return {"executableCode": {k: v for k, v in part.input.items()}}
    result: dict[str, Any] = {}
    if held.status is not None:
        result["outcome"] = held.status
    if held.stdout is not None:
        result["output"] = held.stdout
    return {"codeExecutionResult": result}
