"""A reply's envelope keys: carried or reported, one rule for every format.

A reply parser keeps the keys of the response envelope it has no neutral
field for (OpenAI Chat's ``system_fingerprint``, Gemini's ``safetyRatings``,
Ollama's durations) verbatim in the extras of the reply's first assistant
turn, so a same-format render writes them back exactly. Rendered for another
format, each such key is, by this one rule (:func:`report_envelope`):

- *carried* when the format declares it read into the neutral model (the
  reply's id, model, creation time, usage counts, finish reason);
- *nothing lost* when its value says nothing (``null``, empty, zero), is the
  format's constant or default (``"object": "chat.completion"``), or is derived from
  carried values (a total equal to input plus output tokens);
- otherwise *dropped*, reported at ``reply <format>.<key path>``, and
  refused under ``unsupported="error"``.

A parser refuses a value that contradicts one of its format's constants
(:func:`check_constants`).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any, ClassVar

import attrs

from ...exceptions import MalformedPayload, _excerpt
from .policy import apply_policy

if TYPE_CHECKING:
    from ...conversation import Conversation
    from .._common import Options

__all__ = [
    "Envelope",
    "check_constants",
    "declare",
    "report_envelope",
    "total",
]


ID = "id"
MODEL = "model"
CREATED = "created"
FINISH = "finish"
USAGE = "usage"
CACHED = "cached_tokens"
CACHE_WRITE = "cache_write_tokens"
REASONING = "reasoning_tokens"
LATENCY = "latency"
MARKER = "marker"
"""The neutral values an envelope key is read into (:attr:`Envelope.carried`)
and a format's reply body writes (:attr:`Envelope.writes`): the reply's id
(``Metadata.custom["response_id"]``), model, creation time (the turn's
timestamp), finish reason, input and output tokens, cached, cache-write and
reasoning tokens, latency; ``MARKER`` is the parser's own bookkeeping (which
keys came in snake case), which says nothing to another format."""


@attrs.frozen
class Envelope:
    """What a format declares of the envelope keys its replies keep.

    The neutral values a key is read into, and a body writes, are named on the
    class (``Envelope.MODEL``, ``Envelope.USAGE``...; see the module)."""

    ID: ClassVar[str] = ID
    MODEL: ClassVar[str] = MODEL
    CREATED: ClassVar[str] = CREATED
    FINISH: ClassVar[str] = FINISH
    USAGE: ClassVar[str] = USAGE
    CACHED: ClassVar[str] = CACHED
    CACHE_WRITE: ClassVar[str] = CACHE_WRITE
    REASONING: ClassVar[str] = REASONING
    LATENCY: ClassVar[str] = LATENCY
    MARKER: ClassVar[str] = MARKER

    entries: tuple[str, ...]
    """The extras entries of a reply's turn holding envelope keys."""
    writes: frozenset[str]
    """The neutral values this format's reply body says (``ID``, ``USAGE``...)."""
    carried: Mapping[str, str] = attrs.field(factory=dict)
    """Key paths (``entry.key.key``) read into the neutral model, each with the
    neutral value it is read into."""
    quiet: Mapping[str, Any] = attrs.field(factory=dict)
    """Key paths with the value that says nothing there: the format's constant
    (``"object": "chat.completion"``) or default (an echoed setting the
    request left alone, as ``"tool_choice": "auto"``); another value is
    reported."""
    derived: Mapping[str, Callable[[Mapping[str, Any]], Any]] = attrs.field(
        factory=dict
    )
    """Key paths whose value follows from the entry's other values (given the
    entry, the value it must have)."""
    positions: frozenset[str] = frozenset()
    """Key paths holding the turn's position among the reply's turns (a
    choice's ``index``)."""


_DECLARED: dict[str, Envelope] = {}


def declare(provider: str, envelope: Envelope) -> None:
    """Declare ``provider``'s reply envelope (see the module's description)."""
    _DECLARED[provider] = envelope


def check_constants(
    body: Mapping[str, Any], constants: Mapping[str, Any], where: str = "$"
) -> None:
    """Refuse a top-level key of ``body`` whose value contradicts the format's
    constant, with :class:`~canisters.exceptions.MalformedPayload`."""
    for key, constant in constants.items():
        if key in body and body[key] != constant:
            raise MalformedPayload(
                f"expected {constant!r}, got {_excerpt(body[key])}", f"{where}.{key}"
            )


def report_envelope(
    conversation: Conversation, provider: str, options: Options
) -> None:
    """Report (refuse under ``unsupported="error"``) every envelope key of
    another format's reply in ``conversation`` that ``provider``'s body does
    not carry."""
    target = _DECLARED.get(provider)
    writes = target.writes if target is not None else frozenset()
    positions: dict[str, int] = {}
    for canister in conversation.canisters:
        for owner, own in canister.extras.items():
            envelope = _DECLARED.get(owner)
            if owner == provider or envelope is None or not isinstance(own, Mapping):
                continue
            position = positions.get(owner, 0)
            found = False
            for entry in envelope.entries:
                value = own.get(entry)
                if isinstance(value, Mapping):
                    found = True
                    walk = _Walk(envelope, value, position, owner, provider, writes)
                    walk.visit(value, entry, options)
            positions[owner] = position + found
            if found and target is not None and MODEL not in writes:
                _report_model(canister, envelope, owner, provider, options)


def _report_model(
    canister: Any, envelope: Envelope, owner: str, provider: str, options: Options
) -> None:
    """The reply's model, where the owner read it into the metadata alone (not
    an envelope key) and ``provider``'s reply body has no place for it."""
    metadata = canister.metadata
    if metadata is None or metadata.model is None:
        return
    if MODEL in envelope.carried.values():
        return  # an envelope key: the walk has reported it
    apply_policy(
        options,
        provider,
        f"reply {owner}.model",
        f"{provider}'s reply has no place for the model ({metadata.model!r})",
        refused_as="reply model",
        stacklevel=4,
    )


@attrs.define
class _Walk:
    envelope: Envelope
    entry: Mapping[str, Any]
    position: int
    owner: str
    provider: str
    writes: frozenset[str]

    def visit(self, value: Any, path: str, options: Options) -> None:
        envelope = self.envelope
        concept = envelope.carried.get(path)
        if concept is not None and (concept == MARKER or concept in self.writes):
            return
        if path in envelope.quiet:
            if envelope.quiet[path] == value:
                return
        elif _says_nothing(value):
            return
        derive = envelope.derived.get(path)
        if derive is not None and derive(self.entry) == value:
            return
        if path in envelope.positions and value == self.position:
            return
        if isinstance(value, Mapping):
            for key, item in value.items():
                self.visit(item, f"{path}.{key}", options)
            return
        key = path.split(".", 1)[1] if "." in path else path
        owner, provider = self.owner, self.provider
        apply_policy(
            options,
            provider,
            f"reply {owner}.{key}",
            f"{owner}'s reply key {key!r} has no equivalent in {provider}",
            refused_as=f"reply key {owner}.{key}",
            stacklevel=4,
        )


def _says_nothing(value: Any) -> bool:
    if value is None or value is False or (value == 0 and not isinstance(value, bool)):
        return True
    return isinstance(value, (list, Mapping, str)) and not value


def total(entry: str, *counts: str) -> Callable[[Mapping[str, Any]], Any]:
    """A derived total: the sum of ``counts`` in the mapping at ``entry``."""

    def derive(envelope: Mapping[str, Any]) -> Any:
        usage = envelope.get(entry)
        if not isinstance(usage, Mapping):
            return None
        return sum(value for key in counts if type(value := usage.get(key)) is int)

    return derive
