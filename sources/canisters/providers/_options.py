"""The keyword options of a render, the fidelity report, and the one policy for
what a provider cannot take."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, Literal

import attrs

from ..exceptions import (
    ProviderError,
    _excerpt,
)
from ._rules.capabilities import Capabilities
from ._rules.paths import location
from ._rules.policy import apply_policy
from ._rules.reasoning import ReasoningTable

Unsupported = Literal["error", "drop", "placeholder"]
"""What to do with content a provider cannot take."""

Resolver = Callable[[str], bytes]
"""Turns a URL or a ``sha256:`` content id into bytes, for providers needing them."""


# Options and the fidelity report -----------------------------------------------------


@attrs.frozen
class Event:
    """One thing a conversion did not carry over exactly."""

    kind: Literal[
        "dropped",
        "downgraded",
        "moved",
        "synthesized",
        "placeholder",
        "cut",
        "approximated",
        "conflict",
    ]
    """What happened: dropped, downgraded (e.g. reasoning sent as text), moved
    (e.g. a tool-result image carried in a follow-up user message), synthesized
    (e.g. a made-up id, or a value a format requires), replaced by a
    placeholder, cut (a stream that ended early, read with
    ``truncated="keep"``: the missing end, and each piece left out because it
    did not finish), approximated (a request field sent changed, e.g. a
    temperature clamped), or conflict (request fields the format takes only
    apart, e.g. thinking with a forced tool)."""
    provider: str
    """The provider the conversion was for."""
    where: str
    """The canister and part concerned (``"canister 3 (user), part 1 (audio)"``),
    or the request field (``"generation.temperature"``)."""
    detail: str
    """What exactly, in words."""
    rule: str | None = None
    """For a request field approximated, synthesized or in conflict: the rule
    applied (``"reasoning table: high = 16384 tokens"``)."""


@attrs.define
class Report:
    """Collects the :class:`Event` s of one or more conversions.

    Pass one as ``report=`` to a normalizer's ``render_*`` method::

        report = providers.Report()
        body = normalizer.render_request(conversation, report=report)
        for event in report.events: ...
    """

    events: list[Event] = attrs.field(factory=list)
    """What happened, in order."""

    def add(
        self,
        kind: Any,
        provider: str,
        where: str,
        detail: str,
        rule: str | None = None,
    ) -> None:
        """Record one event."""
        self.events.append(Event(kind, provider, where, detail, rule))

    def __bool__(self) -> bool:
        return bool(self.events)

    def __len__(self) -> int:
        return len(self.events)


def _check_choice(name: str, allowed: tuple[str, ...]) -> Callable[..., None]:
    def check(instance: object, attribute: object, value: object) -> None:
        if value not in allowed:
            raise ProviderError(
                f"option {name} must be one of {', '.join(allowed)}; "
                f"got {_excerpt(value)}"
            )

    return check


def _check_type(name: str, kind: str) -> Callable[..., None]:
    def check(instance: object, attribute: object, value: object) -> None:
        if value is None:
            return
        if kind == "int":
            fits = type(value) is int and value > 0
        elif kind == "str":
            fits = isinstance(value, str)
        else:
            fits = isinstance(
                value, {"Capabilities": Capabilities}.get(kind, ReasoningTable)
            )
        if not fits:
            what = {"int": "a positive int", "str": "a string"}.get(kind, f"a {kind}")
            raise ProviderError(f"option {name} must be {what}; got {_excerpt(value)}")

    return check


@attrs.frozen
class Options:
    """The per-call options of ``render_request`` / ``render_response``.

    They are given as keyword arguments (``render_request(c, unsupported="drop")``).
    """

    unsupported: Unsupported = attrs.field(
        default="error",
        validator=_check_choice("unsupported", ("error", "drop", "placeholder")),
    )
    """Content the provider cannot take: ``"error"`` raises
    :class:`~canisters.UnsupportedContent`, ``"drop"`` drops it with a warning,
    ``"placeholder"`` replaces it with a text marker."""
    resolver: Resolver | None = None
    """Turns a URL or content id into bytes where the provider needs inline data.
    The library itself never fetches anything."""
    media_labels: bool = False
    """Put a text label (``"Media 1: girl wearing a hat"``) before each media part
    that has a ``hint``."""
    incomplete: Literal["skip", "error", "keep"] = attrs.field(
        default="skip", validator=_check_choice("incomplete", ("skip", "error", "keep"))
    )
    """Invocations without a result and results without an invocation, when
    rendering a request: ``"skip"`` leaves them out (reported), ``"error"`` raises
    :class:`~canisters.ProviderError`, ``"keep"`` sends them anyway."""
    reasoning: Literal["drop", "text"] = attrs.field(
        default="drop", validator=_check_choice("reasoning", ("drop", "text"))
    )
    """Reasoning the target provider cannot take back (another provider's, or any
    for providers without reasoning input): drop it, or send its text as text."""
    report: Report | None = None
    """Where to record what the conversion dropped, downgraded, moved or made up."""
    model: str | None = attrs.field(default=None, validator=_check_type("model", "str"))
    """``render_full_request`` only: the model to send, in place of the
    request's (the model names of one provider mean nothing to another)."""
    capabilities: Capabilities | None = attrs.field(
        default=None, validator=_check_type("capabilities", "Capabilities")
    )
    """``render_full_request`` only: what the target model takes
    (:class:`~canisters.providers.Capabilities`); ``None``: the format's
    conservative profile. Never guessed from the model's name."""
    max_tokens: int | None = attrs.field(
        default=None, validator=_check_type("max_tokens", "int")
    )
    """``render_full_request`` only: the output limit sent to a format that
    requires one (Anthropic) when the request has none; ``None``: the capability
    profile's ``default_max_tokens``. Reported as synthesized."""
    reasoning_table: ReasoningTable | None = attrs.field(
        default=None, validator=_check_type("reasoning_table", "ReasoningTable")
    )
    """``render_full_request`` only: how effort levels and token budgets
    translate (:class:`~canisters.providers.ReasoningTable`); ``None``: the
    default table."""

    def note(
        self,
        kind: Any,
        provider: str,
        where: str,
        detail: str,
        rule: str | None = None,
    ) -> None:
        """Record an event in :attr:`report`, if one was given."""
        if self.report is not None:
            self.report.add(kind, provider, where, detail, rule)


DEFAULT_OPTIONS = Options()


_OPTION_NAMES = frozenset(field.name for field in attrs.fields(Options))
# The options built last and the keyword arguments they were built from: a
# whole request's rendering builds them for its settings and again for its
# conversation, from the same values.
_last_options: tuple[dict[str, Any], Options] | None = None


def options_from(options: Mapping[str, Any]) -> Options:
    """Build :class:`~canisters.providers.Options` from keyword arguments;
    unknown names raise."""
    global _last_options
    if not options:
        return DEFAULT_OPTIONS
    last = _last_options
    if last is not None and len(last[0]) == len(options):
        for name, value in last[0].items():
            if options.get(name, options) is not value:
                break
        else:
            return last[1]  # the same values (Options are immutable)
    unknown = sorted(set(options) - _OPTION_NAMES)
    if unknown:
        known = ", ".join(sorted(_OPTION_NAMES))
        raise ProviderError(f"unknown option(s) {', '.join(unknown)}; known: {known}")
    built = Options(**options)
    _last_options = (dict(options), built)
    return built


# Unsupported content and reasoning ---------------------------------------------------


describe = location
"""Name a canister (and a part of it) for errors and reports, by the one grammar
of report paths (:func:`~canisters.providers._rules.paths.location`, itself:
no call more on the parts rendered through it)."""


def unsupported(options: Options, provider: str, where: str, reason: str) -> str | None:
    """Apply the unsupported-content policy; the one place every normalizer uses.

    Raises :class:`~canisters.UnsupportedContent` under ``"error"``; under
    ``"drop"`` warns and returns ``None``; under ``"placeholder"`` returns the text
    to put in the part's place. Both non-raising outcomes are reported.
    """
    return apply_policy(
        options, provider, where, reason, placeholder=True, stacklevel=4
    )


def reasoning_action(
    part: Any,
    provider: str,
    options: Options,
    where: str,
    *,
    native: bool,
    plain: bool = False,
) -> Literal["native", "text", "drop"]:
    """Decide how a :class:`~canisters.Reasoning` part goes to ``provider``.

    ``native`` says whether the provider takes back reasoning that a signature
    or redacted blob binds: such reasoning goes natively only to the provider
    that issued it. ``plain`` says whether the provider takes reasoning as plain
    text (Ollama's ``thinking``, the ``reasoning_content`` of the OpenAI Chat
    dialects): then its own reasoning, and another format's that nothing binds,
    goes natively, and another provider's item id on it is reported
    (:func:`note_foreign_reasoning_id`). Everything else follows
    ``options.reasoning`` and is reported.
    """
    bound = part.signature is not None or part.redacted is not None
    if native and bound and part.provider == provider:
        return "native"
    if plain and (part.provider == provider or not bound):
        note_foreign_reasoning_id(part, provider, options, where)
        return "native"
    if options.reasoning == "text" and part.text:
        options.note("downgraded", provider, where, "reasoning sent as text")
        return "text"
    options.note("dropped", provider, where, "reasoning the provider cannot take back")
    return "drop"


def note_foreign_reasoning_id(
    part: Any, provider: str, options: Options, where: str
) -> None:
    """Report the item id of another provider's :class:`~canisters.Reasoning`
    (OpenAI Responses' ``rs_`` ids) that goes to ``provider`` as its text:
    nothing there resolves it."""
    if part.id is not None and part.provider != provider:
        options.note(
            "dropped",
            provider,
            f"{where}.id",
            f"{part.provider}-only reference id {part.id!r} not sent to {provider}",
        )
