"""Type checks of the public constructors.

A value of the wrong type in a field (a number as a ``mime_type``, a string as
a token count) would be written, then refused on reading, and a store holding
it could no longer load its conversation. The constructors refuse it instead,
naming the field. Parsers build through trusted constructors and check the
values they read themselves. Internal.
"""

from __future__ import annotations

from .exceptions import ModelError, _excerpt


def refuse(owner: object, name: str, what: str) -> ModelError:
    """The error for ``owner``'s field ``name``, which is not ``what``."""
    value = getattr(owner, name)
    return ModelError(
        f"{type(owner).__name__}.{name} must be {what}, got {_excerpt(value)}",
        field=name,
    )


def text_or_none(owner: object, *names: str) -> None:
    """Refuse a field among ``names`` holding neither a string nor ``None``."""
    for name in names:
        value = getattr(owner, name)
        if value is not None and not isinstance(value, str):
            raise refuse(owner, name, "a string or None")


def whole(value: object) -> bool:
    """Whether ``value`` is an int, and not a bool."""
    return isinstance(value, int) and not isinstance(value, bool)


def number(value: object) -> bool:
    """Whether ``value`` is an int or a float, and not a bool."""
    return isinstance(value, (int, float)) and not isinstance(value, bool)
