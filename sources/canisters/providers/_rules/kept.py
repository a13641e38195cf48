"""Another format's wire keys kept on a canister or part: carried or reported.

A parser keeps the keys of a message, block or part it has no neutral field
for verbatim in the extras of the canister or part (OpenAI Chat's ``name`` on
a message, ``cache_control`` on a part, ``detail`` on an image). Rendered for
the same format they go back as they came. Rendered for another format, each
such key is, by this one rule:

- *carried* when it has a meaning the target spells too (a :class:`Spelling`
  of both formats names the same ``concept``): it is written into the
  target's own extras, where the target's renderer sends it
  (``cache_control`` on a Chat part becomes Anthropic's cache marker;
  ``detail`` becomes Gemini's ``mediaResolution``);
- *nothing lost* when its value says nothing (``null``, an empty list or
  object, or the concept's default such as ``detail: "auto"``);
- *not sent*, reported as dropped but never refused, when it is a reference
  only its own format resolves (an OpenAI Responses item ``id``): another
  format has nothing to resolve it against, as it has nothing to check
  another's signature against;
- otherwise *dropped*, reported at the path of the key
  (``canister 1 (user), part 0 (text).cache_control``, :mod:`.paths`) and
  refused under
  ``unsupported="error"``.

A format declares which of its extras entries hold wire keys, and how it
spells each concept, with :func:`declare`. A format not declared has nothing
reported (its extras are all markers, as far as this rule knows).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, Literal

import attrs

from ..._frozen import FrozenDict
from ..._trusted import _trusted
from ...conversation import Conversation
from ...protocols import Canister
from ...provided import CitedText
from .outcomes import Outcomes
from .paths import location
from .policy import apply_policy

# The canisters are those of a conversation already: built without its checks.
_new_conversation = _trusted(Conversation)

__all__ = [
    "Declaration",
    "Spelling",
    "carry_kept",
    "declare",
    "declared",
    "settle_citations",
]

Level = Literal["canister", "part"]


@attrs.frozen
class Spelling:
    """How one format spells a concept several formats share.

    ``read`` turns the wire value into the concept's neutral value (``None``:
    the wire value is not one the concept knows; reported), ``write`` the
    neutral value into the wire value (``None``: the format cannot say it;
    reported). Both default to the value as it is. ``default`` is the
    neutral value that says nothing (never reported).
    """

    concept: str
    """The shared meaning (``"cache_control"``, ``"detail"``)."""
    level: Level
    """Whether the key sits on a canister (message, block) or a part."""
    entry: str
    """The extras entry holding the key (``"outer"``, ``"block"``)."""
    key: str
    """The wire key."""
    read: Callable[[Any], Any] | None = None
    write: Callable[[Any], Any] | None = None
    default: Any = None
    kinds: frozenset[str] | None = None
    """The part types (``"image"``) or canister roles the target takes it on;
    ``None``: any."""
    sends: bool = True
    """Whether the format's renderer sends the key when it comes from another
    format (OpenAI Chat reads ``cache_control`` from clients that target
    Anthropic, but OpenAI's API takes no such key)."""


@attrs.frozen
class Declaration:
    """What :func:`declare` records for one format."""

    canister: tuple[str, ...]
    """The extras entries of a canister holding wire keys verbatim."""
    part: tuple[str, ...]
    """The extras entries of a part holding wire keys verbatim."""
    spellings: tuple[Spelling, ...]
    """The concepts this format spells."""
    quiet: Mapping[str, Any] = attrs.field(factory=dict)
    """Kept keys whose value here says nothing another format needs (a
    default spelled out, such as Anthropic's ``is_error: false``)."""
    references: frozenset[str] = frozenset()
    """Kept keys holding references only this format resolves (an item
    ``id``): reported elsewhere as not sent, never refused."""
    typed: frozenset[str] = frozenset()
    """Kept keys holding a list of entries each read as a citation of typed
    content, the citation keeping its entry in ``opaque`` (OpenAI's
    ``annotations``): an entry some citation of the holder holds, or one that
    :func:`settle_citations` saw settled, is that rule's business; only the
    others are reported here."""

    def reading(self, level: Level, entry: str, key: str) -> Spelling | None:
        """The spelling of ``key`` kept in ``entry``, if it is a concept's."""
        for spelling in self.spellings:
            if (
                spelling.level == level
                and spelling.entry == entry
                and spelling.key == key
            ):
                return spelling
        return None

    def writing(self, concept: str, level: Level, kind: str) -> Spelling | None:
        """How this format writes ``concept`` on a ``kind`` at ``level``."""
        for spelling in self.spellings:
            if (
                spelling.concept == concept
                and spelling.sends
                and spelling.level == level
                and (spelling.kinds is None or kind in spelling.kinds)
            ):
                return spelling
        return None


_DECLARED: dict[str, Declaration] = {}
LOADERS: list[Callable[[str], object]] = []
"""Called with a format's name when a request holds extras of a format not
declared yet (the registry imports the format's module, which declares)."""


def declare(
    provider: str,
    *,
    canister: tuple[str, ...] = (),
    part: tuple[str, ...] = (),
    spellings: tuple[Spelling, ...] = (),
    quiet: Mapping[str, Any] | None = None,
    references: frozenset[str] = frozenset(),
    typed: frozenset[str] = frozenset(),
) -> None:
    """Declare ``provider``'s extras entries holding wire keys, and how it
    spells shared concepts (see the module's description)."""
    _DECLARED[provider] = Declaration(
        canister, part, spellings, dict(quiet or {}), references, typed
    )


def _held(holder: Any) -> list[Any]:
    """The entries the citations of ``holder`` (a part, or a canister of
    parts) keep."""
    parts = getattr(holder, "content", None) or (holder,)
    return [
        citation.opaque
        for part in parts
        if isinstance(part, CitedText)
        for citation in part.citations
    ]


def _unheld(value: Any, held: list[Any]) -> Any:
    """``value`` (a typed key's list) without the entries in ``held``."""
    if not isinstance(value, (list, tuple)) or not held:
        return value
    return [entry for entry in value if entry not in held]


def settle_citations(extras: Mapping[str, Any], held: list[Any]) -> Any:
    """``extras`` without the entries of typed keys (:data:`Declaration.typed`)
    that ``held`` holds: the opaque entries of citations whose rule has
    settled them (carried, or reported), for a holder that no longer has
    them as typed content."""
    changed = False
    out: dict[str, Any] = dict(extras)
    for owner, own in extras.items():
        declaration = declared(owner) if isinstance(own, Mapping) else None
        if declaration is None or not declaration.typed:
            continue
        rewritten = dict(own)
        for entry in (*declaration.canister, *declaration.part):
            kept = own.get(entry)
            if not isinstance(kept, Mapping):
                continue
            for key in declaration.typed & kept.keys():
                rest = _unheld(kept[key], held)
                if rest != kept[key]:
                    rewritten[entry] = {**rewritten[entry], key: rest}
                    changed = True
        out[owner] = rewritten
    return FrozenDict(out) if changed else extras


def declared(provider: str) -> Declaration | None:
    """``provider``'s declaration, loading its module first if needed."""
    found = _DECLARED.get(provider)
    if found is None:
        for load in LOADERS:
            try:
                load(provider)
            except Exception:
                return None
        found = _DECLARED.get(provider)
    return found


def carry_kept(
    conversation: Conversation, provider: str, outcomes: Outcomes
) -> Conversation:
    """``conversation`` with the other formats' kept keys that ``provider``
    spells too written into its own extras; every other such key that says
    something reported as dropped (refused under ``unsupported="error"``)."""
    canisters = conversation.canisters
    changed: dict[int, Canister] = {}
    target = declared(provider)
    for index, canister in enumerate(canisters):
        if not _holds(canister.extras, provider, "canister"):
            parts: Any = getattr(canister, "content", None) or ()
            for part in parts:
                if part.extras and _holds(part.extras, provider, "part"):
                    break
            else:
                continue
        rewritten = _canister(canister, index, provider, target, outcomes)
        if rewritten is not canister:
            changed[index] = rewritten
    if not changed:
        return conversation
    return _new_conversation(
        tuple(changed.get(index, canister) for index, canister in enumerate(canisters))
    )


def _holds(extras: Mapping[str, Any], provider: str, level: Level) -> bool:
    """Whether ``extras`` hold another format's kept wire keys (most hold
    only markers, or nothing): told before any other work."""
    if not extras or len(extras) == (provider in extras):
        return False
    for owner, own in extras.items():
        if owner != provider and own:
            declaration = _DECLARED.get(owner) or declared(owner)
            if declaration is not None:
                entries = (
                    declaration.canister if level == "canister" else declaration.part
                )
                for entry in entries:
                    if entry in own:
                        return True
    return False


def _foreign(
    extras: Mapping[str, Any], provider: str, level: Level
) -> list[tuple[str, str, str, Any, Declaration]]:
    """The kept wire keys of other formats in ``extras``: (format, entry, key,
    value, its declaration)."""
    found = []
    for owner, own in extras.items():
        if owner == provider or not isinstance(own, Mapping):
            continue
        declaration = declared(owner)
        if declaration is None:
            continue
        for entry in declaration.canister if level == "canister" else declaration.part:
            kept = own.get(entry)
            if isinstance(kept, Mapping):
                for key, value in kept.items():
                    found.append((owner, entry, str(key), value, declaration))
    return found


def _says_nothing(value: Any, key: str = "", declaration: Any = None) -> bool:
    if value is None or (isinstance(value, (list, dict, Mapping)) and not value):
        return True
    quiet = declaration.quiet if declaration is not None else {}
    return key in quiet and quiet[key] == value and type(quiet[key]) is type(value)


def _canister(
    canister: Canister,
    index: int,
    provider: str,
    target: Declaration | None,
    outcomes: Outcomes,
) -> Canister:
    role = canister.role._value_
    adopted: dict[str, dict[str, Any]] = {}
    last_part: dict[str, dict[str, Any]] = {}
    parts: tuple[Any, ...] = tuple(getattr(canister, "content", None) or ())
    for owner, entry, key, value, declaration in _foreign(
        canister.extras, provider, "canister"
    ):
        where = location(index, canister, key=key)
        if key in declaration.typed:
            value = _unheld(value, _held(canister))
        spelling = declaration.reading("canister", entry, key)
        neutral = _neutral(spelling, value)
        if _says_nothing(value, key, declaration) or (
            spelling is not None and neutral == spelling.default
        ):
            continue
        if spelling is not None and neutral is not None and target is not None:
            # A message-level key the target spells on its blocks: on the
            # message's last part (how Anthropic reads a marker on a message).
            written = target.writing(spelling.concept, "canister", role)
            slot = adopted
            if written is None and parts:
                written = target.writing(spelling.concept, "part", parts[-1].type)
                slot = last_part
            if written is not None:
                wire = _wire(written, neutral)
                if wire is not None:
                    slot.setdefault(written.entry, {})[written.key] = wire
                    continue
        _lost(outcomes, where, owner, key, value, provider, spelling, declaration)
    new_parts = list(parts)
    for number, part in enumerate(parts):
        plain = not part.extras or len(part.extras) == (provider in part.extras)
        if plain and not (last_part and number == len(parts) - 1):
            continue
        new_parts[number] = _part(
            part,
            location(index, canister, number, part),
            provider,
            target,
            outcomes,
            last_part if number == len(parts) - 1 else {},
        )
    if not adopted and all(
        new is old for new, old in zip(new_parts, parts, strict=True)
    ):
        return canister
    changes: dict[str, Any] = {}
    if adopted:
        changes["extras"] = _merged(canister.extras, provider, adopted)
    if parts:
        changes["content"] = tuple(new_parts)
    return attrs.evolve(canister, **changes)  # type: ignore[misc]


def _part(
    part: Any,
    where: str,
    provider: str,
    target: Declaration | None,
    outcomes: Outcomes,
    given: dict[str, dict[str, Any]],
) -> Any:
    adopted: dict[str, dict[str, Any]] = {
        entry: dict(values) for entry, values in given.items()
    }
    for owner, entry, key, value, declaration in _foreign(
        part.extras, provider, "part"
    ):
        if key in declaration.typed:
            value = _unheld(value, _held(part))
        spelling = declaration.reading("part", entry, key)
        neutral = _neutral(spelling, value)
        if _says_nothing(value, key, declaration) or (
            spelling is not None and neutral == spelling.default
        ):
            continue
        if spelling is not None and neutral is not None and target is not None:
            written = target.writing(spelling.concept, "part", part.type)
            if written is not None:
                wire = _wire(written, neutral)
                if wire is not None:
                    adopted.setdefault(written.entry, {})[written.key] = wire
                    continue
        _lost(
            outcomes,
            f"{where}.{key}",
            owner,
            key,
            value,
            provider,
            spelling,
            declaration,
        )
    if not adopted:
        return part
    return attrs.evolve(part, extras=_merged(part.extras, provider, adopted))


def _lost(
    outcomes: Outcomes,
    where: str,
    owner: str,
    key: str,
    value: Any,
    provider: str,
    spelling: Spelling | None,
    declaration: Declaration,
) -> None:
    """Report a kept key not carried: a reference as not sent, any other
    through the policy."""
    if spelling is None and key in declaration.references:
        outcomes.options.note(
            "dropped",
            provider,
            where,
            f"{owner}-only reference {key} {_short(value)} not sent to {provider}",
        )
        return
    # A key of a canister or part: refused as where it is, as content is.
    apply_policy(
        outcomes.options,
        provider,
        where,
        _reason(owner, key, value, provider, spelling),
    )


def _neutral(spelling: Spelling | None, value: Any) -> Any:
    if spelling is None or spelling.read is None:
        return value
    return spelling.read(value)


def _wire(spelling: Spelling, neutral: Any) -> Any:
    return neutral if spelling.write is None else spelling.write(neutral)


def _merged(
    extras: Mapping[str, Any], provider: str, adopted: dict[str, dict[str, Any]]
) -> FrozenDict[str, Any]:
    own = dict(extras.get(provider) or {})
    for entry, values in adopted.items():
        own[entry] = {**(own.get(entry) or {}), **values}
    return FrozenDict({**extras, provider: own})


def _reason(
    owner: str, key: str, value: Any, provider: str, spelling: Spelling | None
) -> str:
    if spelling is None:
        return f"{owner}'s key {key!r} has no equivalent in {provider}"
    return (
        f"{owner}'s {key} ({spelling.concept}) {_short(value)} cannot be said "
        f"in {provider}"
    )


def _short(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."
