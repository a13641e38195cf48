"""Prompt-cache markers: positional on Anthropic, nowhere else.

Anthropic marks what to cache with ``cache_control`` on system blocks, content
blocks and tools; a request read from Anthropic keeps each marker where it is
(in the extras of the part, canister or tool). No other format has positional
markers: rendering such a conversation for another format reports each marker
as dropped (the tools' markers are reported with the tools' other extras).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ...conversation import Conversation
from .outcomes import Outcomes

__all__ = ["MARKER_FORMATS", "cache_markers"]

MARKER_FORMATS = frozenset({"anthropic"})
"""The formats whose bodies carry positional cache markers."""


def _marked(extras: Any) -> bool:
    own = extras.get("anthropic")
    block = own.get("block") if isinstance(own, Mapping) else None
    return isinstance(block, Mapping) and "cache_control" in block


def cache_markers(
    conversation: Conversation, provider: str, outcomes: Outcomes
) -> None:
    """Note each cache marker of ``conversation`` as dropped when ``provider``
    has no positional markers."""
    if provider in MARKER_FORMATS:
        return
    reason = f"{provider} has no positional cache markers"
    for index, canister in enumerate(conversation.canisters):
        if canister.extras and _marked(canister.extras):
            outcomes.dropped(f"conversation[{index}].cache_control", reason)
        for number, part in enumerate(getattr(canister, "content", None) or ()):
            if part.extras and _marked(part.extras):
                outcomes.dropped(
                    f"conversation[{index}].content[{number}].cache_control", reason
                )
