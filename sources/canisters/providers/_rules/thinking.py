"""Reasoning sent as text: one spelling for every format.

Reasoning a format cannot take back (another provider's, or any for a format
without reasoning input) is dropped, or, with the ``reasoning="text"`` option,
sent as text (reported as downgraded). The text is the same for every target:
wrapped in ``<think>`` tags, as pydantic-ai and the open reasoning models
write it, so the model reads it as earlier thinking rather than as something
it said.
"""

from __future__ import annotations

from typing import Any

__all__ = ["as_text"]


def as_text(part: Any) -> str:
    """The text a :class:`~canisters.Reasoning` part is sent as."""
    return f"<think>\n{part.text}\n</think>"
