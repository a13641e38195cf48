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
when it is of another format (:func:`foreign`): not one the target's parser
returned last (marked by identity, :func:`mark`, without keeping it alive),
and holding another format's extras and none of the target's (a conversation
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

__all__ = ["crossing", "foreign", "mark"]

_LAST: dict[str, weakref.ref[Conversation]] = {}
# The conversation each format's parser returned last, not kept alive: what a
# relay renders next, told by identity without a look at its canisters.


def mark(conversation: Conversation, provider: str) -> Conversation:
    """Note that ``provider``'s parser returned ``conversation``; return it."""
    _LAST[provider] = weakref.ref(conversation)
    return conversation


def foreign(conversation: Conversation, provider: str) -> bool:
    """Whether ``conversation`` is of another format than ``provider``'s:
    not returned by ``provider``'s parser, and holding another format's extras
    and none of ``provider``'s."""
    last = _LAST.get(provider)
    if last is not None and last() is conversation:
        return False
    other = False
    for canister in conversation.canisters:
        extras = canister.extras
        if extras:
            if provider in extras:
                return False
            other = True
        parts: Any = getattr(canister, "content", None) or ()
        for part in parts:
            extras = part.extras
            if extras:
                if provider in extras:
                    return False
                other = True
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
