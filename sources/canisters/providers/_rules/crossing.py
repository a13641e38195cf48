"""The cross-format rules of a conversation, applied in one place.

A conversation rendered for another format than the one it was read from goes
through, in this order: another format's kept wire keys carried or reported
(:mod:`.kept`); a result named unlike its call checked where results carry no
name (:mod:`.ids`); call ids fitted to the target's rule by one stable mapping
(:mod:`.ids`); empty text left out (:mod:`.empty`). ``render_request`` and
``render_full_request`` both apply them here (:func:`crossing`), before the
format renders the conversation, so a conversation alone and a whole request
are translated alike.

What is of the target's own format goes back as it came (only the first two
rules apply to it): a whole request whose extras name the format. A whole
request built by hand gets every rule. A conversation alone gets the rules
when it is of another format (:func:`foreign`): the one another format's
parser returned last, or not one the target's parser returned last (told by
identity, :func:`slot`, without keeping it alive) and holding another format's
extras and none of the target's (a conversation
read from the target and stored keeps its extras). A conversation holding no
format's extras (built by hand, or read from a format that kept nothing for
it) tells nothing of where it came from: the format renders it by its own
rules.
"""

from __future__ import annotations

import weakref
from typing import TYPE_CHECKING, Any

from ...conversation import Conversation
from .empty import without_empty_text
from .ids import check_result_names, fit_ids
from .kept import carry_kept
from .outcomes import Outcomes

if TYPE_CHECKING:
    from .._common import Options

__all__ = ["crossing", "foreign", "note", "seen", "slot"]

# id of a conversation -> (a weak reference to it, whether it is foreign)
_SEEN: dict[str, dict[int, tuple[weakref.ref[Conversation], bool]]] = {}
_BOUND = 1024  # conversations told per format before the table starts anew


def seen(provider: str) -> dict[int, Any]:
    """The conversations told of for ``provider`` lately, by identity, each
    with whether it is foreign: a conversation rendered again is told without
    a look at its canisters. Its keys are ids, checked against the weak
    reference."""
    found = _SEEN.get(provider)
    if found is None:
        found = _SEEN.setdefault(provider, {})
    return found


# one item: a weak reference to a conversation, or None
_SLOTS: dict[str, list[weakref.ref[Conversation] | None]] = {}


def slot(provider: str) -> list[Any]:
    """The slot holding a weak reference to the conversation ``provider``'s
    parser returned last (what a relay renders next): its parser's wrapper
    stores into it, its renderer tells that conversation by identity, without
    a look at its canisters or a table."""
    found = _SLOTS.get(provider)
    if found is None:
        found = _SLOTS.setdefault(provider, [None])
    return found


def note(
    told: dict[int, Any],
    conversation: Conversation,
    is_foreign: bool,
) -> None:
    """Record in ``told`` (a :func:`seen` table) what ``conversation`` is."""
    if len(told) >= _BOUND:
        told.clear()
    told[id(conversation)] = (weakref.ref(conversation), is_foreign)


def foreign(conversation: Conversation, provider: str) -> bool:
    """Whether ``conversation`` is of another format than ``provider``'s:
    not returned by ``provider``'s parser, and holding another format's extras
    and none of ``provider``'s (told once per conversation: :func:`seen`)."""
    last = slot(provider)[0]
    if last is not None and last() is conversation:
        return False
    for owner, other_slot in _SLOTS.items():  # what another parser returned last
        read = other_slot[0]
        if owner != provider and read is not None and read() is conversation:
            return True
    told = seen(provider)
    entry = told.get(id(conversation))
    if entry is not None and entry[0]() is conversation:
        return bool(entry[1])
    other = False
    for canister in conversation.canisters:
        extras = canister.extras
        if extras:
            if provider in extras:
                note(told, conversation, False)
                return False
            other = True
        parts: Any = getattr(canister, "content", None) or ()
        for part in parts:
            extras = part.extras
            if extras:
                if provider in extras:
                    note(told, conversation, False)
                    return False
                other = True
    note(told, conversation, other)
    return other


def crossing(
    conversation: Conversation, provider: str, options: Options, *, native: bool
) -> tuple[Conversation, list[int] | None]:
    """``conversation`` as the rules send it to ``provider`` (see the module),
    with where each canister kept stood (``None``: all stood where they stand;
    give it to :func:`.empty.renumbered` for the events the renderer adds). Of a
    request read from ``provider`` (``native``), the ids and empty text go as
    they came."""
    conversation = carry_kept(conversation, provider, Outcomes(options, provider))
    check_result_names(conversation, provider, options)
    if native:
        return conversation, None
    conversation = fit_ids(conversation, provider, options)
    return without_empty_text(conversation, provider, options)
