"""What the public-surface tests share: which public names must carry a docstring."""

from __future__ import annotations

import inspect
import typing


def needs_docstring(value: object) -> bool:
    """Whether ``value`` is a class or function of its own.

    Type aliases such as ``Callable[..., Any]`` are documented where they are
    assigned; ``inspect.isclass`` calls them classes on Python 3.10, so they are
    told apart by having a generic origin.
    """
    if inspect.isfunction(value):
        return True
    return inspect.isclass(value) and typing.get_origin(value) is None
