"""Tool-call ids: each format's rule, repaired by one stable mapping.

Formats constrain call ids differently: Anthropic takes ``^[a-zA-Z0-9_-]+$``,
OpenAI Chat at most 40 characters; Gemini and Ollama take any (or none). A
format declares its rule (:func:`declare`, an :class:`IdRule`). Rendering a
whole request read from another format, every call id that breaks the
target's rule is rewritten (:func:`fit_ids`): unsafe characters replaced, a
long id cut and ended with a digest of the whole, so the same id always gives
the same one, and two ids that would fit to the same one are told apart. The
call and its result get the same id, so they still pair; each rewrite is
reported as synthesized. A request of the target's own format keeps its ids
(the provider decides).

A format whose results carry no tool name (they pair by id alone) declares
so too (``named_results=False``): a result whose name differs from its
call's (Gemini's ``functionResponse.name``, Ollama's ``tool_name``) says
something such a format cannot, and is reported at the result's ``name``
(:func:`check_result_names`), refused under ``unsupported="error"``.
"""

from __future__ import annotations

import hashlib
import re
from typing import TYPE_CHECKING, Any

import attrs

from ..._trusted import _trusted
from ...conversation import Conversation
from ...protocols import Role
from .paths import location
from .policy import apply_policy

if TYPE_CHECKING:
    from .._common import Options

# The canisters are those of a conversation already: built without its checks.
_new_conversation = _trusted(Conversation)

__all__ = [
    "SAFE_CHARACTERS",
    "IdRule",
    "check_result_names",
    "declare",
    "fit_id",
    "fit_ids",
    "rule_of",
]


@attrs.frozen
class IdRule:
    """What a format takes as a call id."""

    unsafe: str | None = None
    """A regular expression matching one character the format refuses
    (``None``: any character)."""
    max_length: int | None = None
    """The longest id taken (``None``: any length)."""


SAFE_CHARACTERS = IdRule(unsafe=r"[^A-Za-z0-9_-]")
"""Ids of letters, digits, ``_`` and ``-`` only (Anthropic's rule)."""

_RULES: dict[str, IdRule] = {}
_NAMELESS: set[str] = set()


def declare(
    provider: str, rule: IdRule | None = None, *, named_results: bool = True
) -> None:
    """Declare ``provider``'s rule for call ids (``None``: any id), and
    whether its results carry the tool's name."""
    if rule is not None:
        _RULES[provider] = rule
    if named_results:
        _NAMELESS.discard(provider)
    else:
        _NAMELESS.add(provider)


def check_result_names(
    conversation: Conversation, provider: str, options: Options
) -> None:
    """Put each result whose name differs from its call's through the
    policy, when ``provider``'s results carry no name (see the module)."""
    if provider not in _NAMELESS:
        return
    names: dict[str, str] = {}
    for index, canister in enumerate(conversation.canisters):
        role = canister.role
        if role is Role.Invocation:
            names[canister.invocation_id] = canister.name  # type: ignore[attr-defined]
        elif role is Role.Result:
            name = canister.name  # type: ignore[attr-defined]
            called = names.get(canister.invocation_id)  # type: ignore[attr-defined]
            if name and called is not None and name != called:
                apply_policy(
                    options,
                    provider,
                    location(index, canister, key="name"),
                    f"the result names {name!r}, its call {called!r}: "
                    f"{provider}'s results carry no name",
                )


def rule_of(provider: str) -> IdRule | None:
    """``provider``'s rule for call ids, if it declared one."""
    return _RULES.get(provider)


def fit_id(value: str, rule: IdRule) -> str:
    """``value`` as ``rule`` takes it: itself when it fits, else with unsafe
    characters replaced by ``_`` and, when too long, cut and ended with a
    digest of ``value`` (the same ``value`` always gives the same id)."""
    fitted = value
    if rule.unsafe is not None:
        fitted = re.sub(rule.unsafe, "_", fitted) or "call_"
    limit = rule.max_length
    if limit is not None and len(fitted) > limit:
        digest = hashlib.sha256(value.encode()).hexdigest()[:12]
        fitted = f"{fitted[: limit - 13]}_{digest}"
    return fitted


def fit_ids(
    conversation: Conversation, provider: str, options: Options
) -> Conversation:
    """``conversation`` with every call id that breaks ``provider``'s rule
    rewritten by :func:`fit_id`, the same for a call and its results, each
    rewrite noted as synthesized."""
    rule = _RULES.get(provider)
    if rule is None:
        return conversation
    canisters = conversation.canisters
    ids = [
        canister.invocation_id  # type: ignore[attr-defined]
        for canister in canisters
        if canister.role is Role.Invocation or canister.role is Role.Result
    ]
    if not ids:
        return conversation
    mapping: dict[str, str] = {}
    taken = set(ids)
    for value in dict.fromkeys(ids):
        fitted = fit_id(value, rule)
        if fitted == value:
            continue
        if fitted in taken:  # another id already reads so: told apart
            digest = hashlib.sha256(value.encode()).hexdigest()[:12]
            fitted = fit_id(f"{fitted}_{digest}", rule)
        mapping[value] = fitted
        taken.add(fitted)
    if not mapping:
        return conversation
    out: list[Any] = []
    for index, canister in enumerate(canisters):
        value = getattr(canister, "invocation_id", None)
        if value in mapping and canister.role in (Role.Invocation, Role.Result):
            options.note(
                "synthesized",
                provider,
                location(index, canister),
                f"tool-call id {value!r} rewritten to {mapping[value]!r} "
                f"({provider}'s rule for call ids)",
            )
            canister = attrs.evolve(canister, invocation_id=mapping[value])  # type: ignore[misc]
        out.append(canister)
    return _new_conversation(tuple(out))
