"""Typing the provider content of documents written before it was typed.

Earlier versions kept what a provider added to a reply (Anthropic's server
tool blocks and citations, OpenAI Responses' ``web_search_call`` items and
annotations, Gemini's ``executableCode`` parts and grounding) as the
provider's wire elements, whole, in the extras of a canister or part: they
went back to the same provider exactly, but had no type. Such a canister
still renders to its provider as the reply it came from, and that reply read
again gives the typed parts: :func:`upgrade` does this for each assistant
canister, and keeps the result only where it renders the same reply again,
byte for byte. The canister keeps its id, timestamp and metadata.
"""

from __future__ import annotations

import warnings
from typing import TYPE_CHECKING, Any

import attrs

from .._frozen import FrozenDict
from .._trusted import _trusted
from ..conversation import Conversation
from ..exceptions import CanistersError
from ..protocols import Canister, Role

if TYPE_CHECKING:
    from . import Normalizer

__all__ = ["upgrade"]

_LEGACY = ("opaque", "bound", "unknown")
"""The canister extras through which earlier versions kept elements whole."""

_new_conversation = _trusted(Conversation)


def upgrade(conversation: Conversation, *, get: Any, names: Any) -> Conversation:
    """``conversation`` with the provider content its assistant canisters
    kept untyped made typed (see the module's description); ``get`` and
    ``names`` are the registry's."""
    known = set(names())
    canisters = list(conversation)
    changed = False
    for index, canister in enumerate(canisters):
        if canister.role is not Role.Assistant:
            continue
        for provider in _providers(canister, known):
            upgraded = _retyped(canister, get(provider))
            if upgraded is not None:
                canisters[index] = canister = upgraded
                changed = True
    return _new_conversation(tuple(canisters)) if changed else conversation


def _providers(canister: Canister, known: set[str]) -> list[str]:
    """The formats whose extras ``canister`` or its parts hold."""
    found = dict.fromkeys(name for name in canister.extras if name in known)
    for part in getattr(canister, "content", ()) or ():
        for name in part.extras or ():
            if name in known:
                found[name] = None
    return list(found)


def _retyped(canister: Canister, normalizer: Normalizer) -> Canister | None:
    """``canister`` read again through its provider's reply, or ``None`` when
    that types nothing or would not give the same reply back."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            reply = normalizer.render_response(Conversation([canister]))
            again = list(normalizer.parse_response(reply))
            if len(again) != 1 or again[0].role is not Role.Assistant:
                return None
            typed = again[0]
            if _types(typed) == _types(canister):
                return None  # nothing that was untyped is typed now
            name = normalizer.name
            own = dict(canister.extras.get(name) or {})
            fresh = typed.extras.get(name) or {}
            for key in _LEGACY:
                own.pop(key, None)
                if key in fresh:
                    own[key] = fresh[key]
            extras = (
                {**canister.extras, name: own}
                if own
                else {
                    key: value for key, value in canister.extras.items() if key != name
                }
            )
            upgraded = attrs.evolve(  # type: ignore[misc]
                canister,
                content=getattr(typed, "content", ()),
                extras=FrozenDict(extras),
            )
            if normalizer.render_response(Conversation([upgraded])) != reply:
                return None
    except CanistersError:
        return None
    result: Canister = upgraded
    return result


def _types(canister: Canister) -> list[str]:
    return [part.type for part in getattr(canister, "content", ()) or ()]
