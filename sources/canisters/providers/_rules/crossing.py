"""The cross-format rules of a conversation, applied in one place.

A conversation rendered for another format than the one it was read from goes
through, in this order: another format's kept wire keys carried or reported
(:mod:`.kept`); a result named unlike its call checked where results carry no
name (:mod:`.ids`); call ids fitted to the target's rule by one stable mapping
(:mod:`.ids`); empty text left out (:mod:`.empty`). ``render_full_request``
applies them here (:func:`crossing`), before the format renders the
conversation.

Of a request read from the target's own format (its extras name the format),
only the first two apply: its ids and empty text go back as they came.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ...conversation import Conversation
from .empty import renumbered, without_empty_text
from .ids import check_result_names, fit_ids
from .kept import carry_kept
from .outcomes import Outcomes

if TYPE_CHECKING:
    from .._common import Options

__all__ = ["crossing", "renumbered"]


def crossing(
    conversation: Conversation, provider: str, options: Options, *, native: bool
) -> tuple[Conversation, list[int] | None]:
    """``conversation`` as the rules send it to ``provider`` (see the module),
    with where each canister kept stood (``None``: all stood where they stand;
    give it to :func:`renumbered` for the events the renderer adds). Of a
    request read from ``provider`` (``native``), the ids and empty text go as
    they came."""
    conversation = carry_kept(conversation, provider, Outcomes(options, provider))
    check_result_names(conversation, provider, options)
    if native:
        return conversation, None
    conversation = fit_ids(conversation, provider, options)
    return without_empty_text(conversation, provider, options)
