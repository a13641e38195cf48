"""The notebook display's hook.

Canisters and conversations have ``_repr_html_``, but the page that shows them is
:mod:`canisters.html`, a layer above theirs: a lower layer never imports a higher
one. So the display goes through this hook: :mod:`canisters.html` registers its
renderer when it is loaded, and ``canisters/__init__`` registers how to load it
(every import of the package runs that first).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

__all__ = ["notebook_html", "register_loader", "register_renderer"]

_renderer: list[Callable[[Any], str]] = []
_loader: list[Callable[[], object]] = []


def register_renderer(renderer: Callable[[Any], str]) -> None:
    """Show canisters and conversations in notebooks with ``renderer``."""
    _renderer[:] = [renderer]


def register_loader(loader: Callable[[], object]) -> None:
    """Call ``loader`` on the first display, to register the renderer."""
    _loader[:] = [loader]


def notebook_html(value: Any) -> str:
    """The notebook display of ``value`` (a canister or a conversation)."""
    if not _renderer:
        for load in _loader:
            load()
    return _renderer[0](value)
