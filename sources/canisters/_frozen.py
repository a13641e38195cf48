"""Read-only mappings used for every mapping field of the model."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, NoReturn, TypeVar

from .exceptions import ModelError

__all__ = ["EMPTY", "FrozenDict", "freeze", "thawed"]

K = TypeVar("K")
V = TypeVar("V")


class FrozenDict(dict[K, V]):
    """A ``dict`` that refuses mutation.

    Being a ``dict``, it compares equal to plain dicts and serializes as one.
    The freeze is shallow: nested values are stored as given and should be
    treated as read-only.
    """

    __slots__ = ()

    def _refuse(self, *args: object, **kwargs: object) -> NoReturn:
        raise TypeError(f"{type(self).__name__} is read-only")

    __setitem__ = _refuse
    __delitem__ = _refuse
    clear = _refuse
    pop = _refuse
    popitem = _refuse
    setdefault = _refuse
    update = _refuse
    __ior__ = _refuse

    def __hash__(self) -> int:  # type: ignore[override]
        return hash(tuple(sorted(map(repr, self.items()))))

    def __repr__(self) -> str:
        return f"FrozenDict({dict.__repr__(self)})"

    def __reduce__(self) -> tuple[Any, ...]:
        return (FrozenDict, (dict(self),))

    def __copy__(self) -> FrozenDict[K, V]:
        return self

    def __deepcopy__(self, memo: dict[int, Any]) -> FrozenDict[K, V]:
        return self


EMPTY: FrozenDict[Any, Any] = FrozenDict()


def freeze(value: Mapping[Any, Any] | None) -> FrozenDict[Any, Any]:
    """Return ``value`` as a :class:`FrozenDict` (``None`` becomes empty)."""
    if type(value) is FrozenDict:
        return value
    if value is None or (not value and isinstance(value, Mapping)):
        return EMPTY
    if not isinstance(value, Mapping):
        raise ModelError(f"expected a mapping, got {type(value).__name__}")
    return FrozenDict(value)


def thawed(value: Any) -> Any:
    """A read-only JSON value (frozen mappings, tuples) as plain dicts and
    lists, to write into a body."""
    if isinstance(value, Mapping):
        return {key: thawed(item) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [thawed(item) for item in value]
    return value
