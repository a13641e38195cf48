"""Empty text: carried by no format, left out for every other one.

An empty text part says nothing, and formats differ on whether they take one:
Anthropic refuses an empty text block, Gemini takes ``{"text": ""}`` parts
that mean nothing, Ollama joins texts with a newline (so ``""`` then ``"go"``
becomes ``"\\ngo"``), Responses sends an empty assistant message. The rule,
for a request rendered for another format than its own: every empty text part
is left out (reported as dropped: nothing is lost, but the body differs from
the source's), and a user, assistant or system message left with nothing is
left out too, as is a message with no content at all (a message of tool calls
alone reads as one, Anthropic's ``"system": []`` too). A request read from the
target's own format goes back as it came. A part standing for an element of a type the
library does not know (an empty text holding the element) is not empty text.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

import attrs

from ..._trusted import _trusted
from ...conversation import Conversation
from ...protocols import Role
from .paths import location

if TYPE_CHECKING:
    from .._common import Options, Report

# The canisters are those of a conversation already: built without its checks.
_new_conversation = _trusted(Conversation)

__all__ = ["without_empty_text", "renumbered"]

_MESSAGES = (Role.User, Role.Assistant, Role.Supervisor)


def _empty(part: Any) -> bool:
    if part.type != "text" or part.text:
        return False
    return not any(
        isinstance(own, Mapping) and "raw" in own for own in part.extras.values()
    )


def _hollow(canister: Any, provider: str) -> bool:
    """A message with no content, holding nothing bound to a format (what a
    message of tool calls alone, a server-tool item, or Anthropic's
    ``"system": []`` reads as)."""
    return (
        canister.role in _MESSAGES
        and not canister.content
        and not any(
            isinstance(own, Mapping) and "bound" in own
            for owner, own in canister.extras.items()
            if owner != provider
        )
    )


def without_empty_text(
    conversation: Conversation, provider: str, options: Options
) -> tuple[Conversation, list[int] | None]:
    """``conversation`` without its empty text parts and the messages left
    with nothing, each noted as dropped; and where each canister kept stood
    (``None``: all stood where they stand)."""
    canisters = conversation.canisters
    out: list[Any] = []
    kept: list[int] = []
    changed = False
    for index, canister in enumerate(canisters):
        if _hollow(canister, provider):
            changed = True
            options.note(
                "dropped", provider, location(index, canister), "an empty message"
            )
            continue
        if canister.role not in _MESSAGES or not any(
            not part.text and part.type == "text" and _empty(part)
            for part in canister.content  # type: ignore[attr-defined]
            if part.type == "text"
        ):
            out.append(canister)
            kept.append(index)
            continue
        changed = True
        parts = []
        for number, part in enumerate(canister.content):  # type: ignore[attr-defined]
            if _empty(part):
                options.note(
                    "dropped",
                    provider,
                    location(index, canister, number, part),
                    "empty text",
                )
            else:
                parts.append(part)
        if not parts:
            options.note(
                "dropped",
                provider,
                location(index, canister),
                "a message of empty text only",
            )
            continue
        out.append(attrs.evolve(canister, content=tuple(parts)))  # type: ignore[misc]
        kept.append(index)
    if not changed:
        return conversation, None
    return _new_conversation(tuple(out)), kept if len(kept) != len(canisters) else None


_CANISTER = re.compile(r"canister (\d+)")


def renumbered(report: Report | None, since: int, kept: list[int] | None) -> None:
    """Name, in the events of ``report`` from ``since`` on, each canister by
    where it stood before :func:`without_empty_text` left some out."""
    if report is None or kept is None:
        return
    events = report.events
    for position in range(since, len(events)):
        event = events[position]
        where = _CANISTER.sub(
            lambda match: (
                f"canister {kept[int(match.group(1))]}"
                if int(match.group(1)) < len(kept)
                else match.group(0)
            ),
            event.where,
        )
        if where != event.where:
            events[position] = attrs.evolve(event, where=where)
