"""Pairing calls and results, folding turns, and the elements bound to one
provider: what a request sends."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any, NamedTuple

import attrs

from .._frozen import EMPTY, FrozenDict
from .._trusted import _trusted
from ..content import (
    Text,
    _element_type,
    _opaque,
)
from ..conversation import Conversation, canisters_in
from ..exceptions import (
    ModelError,
    ProviderError,
)
from ..protocols import Canister, Role
from ._guards import mine
from ._options import Options, Report, describe, unsupported
from ._rules.provided import settle as settle_provided

# The roles as globals (see _common).
USER = Role.User
SUPERVISOR = Role.Supervisor
INVOCATION = Role.Invocation
RESULT = Role.Result
new_text = _trusted(Text)


# Pairing and folding -----------------------------------------------------------------


def canisters_of(conversation: Iterable[Canister], provider: str) -> list[Canister]:
    """Return the canisters of ``conversation`` as a list, refusing anything else.

    Every ``render_*`` starts here, so that a wrong argument is a
    :class:`~canisters.ProviderError` naming the provider, not an AttributeError.
    """
    try:
        return list(canisters_in(conversation, provider))
    except ModelError as error:
        raise ProviderError(str(error)) from error


def canisters_given(
    conversation: Iterable[Canister], provider: str
) -> Sequence[Canister]:
    """:func:`canisters_of`, without the copy when ``conversation`` is a
    :class:`~canisters.Conversation`: its own tuple, for a render that only reads
    it."""
    if type(conversation) is Conversation:
        return conversation.canisters
    return canisters_of(conversation, provider)


def trial_options(options: Options) -> Options | None:
    """The options of a fast renderer's trial: a pass that renders the canisters
    as they are, pairing invocations and results as it goes, and gives up (for
    the usual way: :func:`request_canisters`, then rendering) when a canister
    has extras or a pair is incomplete. What the trial notes goes to a report of
    its own, which :func:`adopt` hands on once the trial succeeds. ``None`` when
    no trial may run: a resolver (which a trial would call, for nothing when it
    gives up) or ``unsupported="drop"`` (whose warnings it would give twice).
    """
    if options.resolver is not None or options.unsupported == "drop":
        return None
    if options.report is None:
        return options
    trial: Options = attrs.evolve(options, report=Report())
    return trial


def adopt(options: Options, trial: Options) -> None:
    """Record in ``options``' report what a successful trial noted."""
    if trial is not options and options.report is not None and trial.report:
        for event in trial.report.events:
            options.report.add(event.kind, event.provider, event.where, event.detail)


def complete_pairs(
    canisters: Sequence[Canister], options: Options, provider: str
) -> list[Canister]:
    """Leave out invocations without a result and results without an invocation.

    Providers reject a call that is never answered and an answer to no call; what
    happens follows ``options.incomplete``. A result counts only after its
    invocation.
    """
    return _complete_pairs(canisters, options, provider).canisters


class Request(NamedTuple):
    """The canisters a request sends (:func:`request_canisters`)."""

    canisters: list[Canister]
    """What :func:`canisters_of`, then :func:`complete_pairs` give."""
    own: bool
    """Whether any of them keeps extras for the provider. When none does, a
    normalizer may render them the way that holds for canisters without extras,
    which is faster."""
    supervisors: list[int]
    """Where the supervisors are among them."""
    interposed: bool = False
    """Whether a user canister stands after an invocation not yet answered."""


def request_canisters(
    conversation: Iterable[Canister],
    options: Options,
    provider: str,
    *,
    adjacent: bool = False,
) -> Request:
    """Return the canisters a request sends, with what renderers ask of them first
    (in the one pass that pairs invocations and results).

    ``adjacent`` is for providers that want the results of a turn's calls right
    after the calls (OpenAI Chat, Anthropic): a user canister standing between
    calls and their results, as a Gemini turn holding an image and then a
    function response gives, moves after those results (reported as moved).
    """
    canisters = canisters_of(conversation, provider)
    request = _complete_pairs(canisters, options, provider, fresh=canisters)
    if adjacent and request.interposed:
        kept = _results_first(request.canisters, options, provider)
        return request._replace(canisters=kept)
    return request


INTERPOSED = "interposed"
"""The ``extras[provider]`` key of a user canister that the provider's own body
placed between calls and their results (see :func:`mark_interposed`)."""


def mark_interposed(canisters: list[Canister], provider: str) -> list[Canister]:
    """Mark, in place, the user canisters a ``provider``'s body placed between
    calls and their results, so that :func:`request_canisters` leaves them where
    they stood when rendering back to that provider (which decides whether it
    accepts them); for any other provider they move as usual."""
    roles = [canister.role for canister in canisters]
    if INVOCATION not in roles or RESULT not in roles:
        return canisters  # nothing stands between calls and results
    first = roles.index(INVOCATION)
    end = len(roles) - roles[::-1].index(RESULT)  # after the last result
    if USER not in roles[first:end]:
        # No user canister after a call and before a result (most bodies).
        return canisters
    held: list[int] = []
    marked: list[int] = []
    open_calls: set[str] = set()
    for index, canister in enumerate(canisters):
        role = canister.role
        if role is RESULT and canister.invocation_id in open_calls:  # type: ignore[attr-defined]
            open_calls.discard(canister.invocation_id)  # type: ignore[attr-defined]
            marked.extend(held)
            if not open_calls:
                held.clear()
        elif role is USER and open_calls:
            held.append(index)
        else:
            held.clear()
            if role is INVOCATION:
                open_calls.add(canister.invocation_id)  # type: ignore[attr-defined]
            elif role is not RESULT:
                open_calls.clear()
    for index in dict.fromkeys(marked):
        canister = canisters[index]
        own = {**canister.extras.get(provider, {}), INTERPOSED: True}
        canisters[index] = attrs.evolve(  # type: ignore[misc]
            canister, extras={**canister.extras, provider: own}
        )
    return canisters


def _results_first(
    canisters: list[Canister], options: Options, provider: str
) -> list[Canister]:
    """Move user canisters that stand between invocations and their results
    after those results (see :func:`request_canisters`)."""
    out: list[Canister] = []
    held: list[tuple[int, Canister]] = []  # users waiting for results to pass
    passed: set[int] = set()  # held users a result went before
    open_calls: set[str] = set()

    def release() -> None:
        for index, user in held:
            out.append(user)
            if index in passed:
                options.note(
                    "moved",
                    provider,
                    describe(index, user),
                    f"{provider} wants the results of calls right after them: "
                    "placed after the results",
                )
        held.clear()

    for index, canister in enumerate(canisters):
        role = canister.role
        if role is RESULT and canister.invocation_id in open_calls:  # type: ignore[attr-defined]
            open_calls.discard(canister.invocation_id)  # type: ignore[attr-defined]
            out.append(canister)
            passed.update(index for index, _ in held)
            if not open_calls:
                release()
        elif (
            role is Role.User
            and open_calls
            and not mine(canister, provider).get(INTERPOSED)
        ):
            held.append((index, canister))
        else:
            release()
            if role is INVOCATION:
                open_calls.add(canister.invocation_id)  # type: ignore[attr-defined]
            elif role is not RESULT:
                open_calls.clear()
            out.append(canister)
    release()
    return out


def _complete_pairs(
    canisters: Sequence[Canister],
    options: Options,
    provider: str,
    fresh: list[Canister] | None = None,
) -> Request:
    """:func:`complete_pairs` as a :class:`Request`; ``canisters`` is returned as
    is when it is ``fresh``, a list of the caller's. Provided parts the
    provider does not write as its own are settled first
    (:mod:`._rules.provided`)."""
    canisters = settle_provided(canisters, options, provider)
    invoked: dict[str, int] = {}
    answered: set[str] = set()
    orphans: list[int] = []
    duplicates: set[int] = set()
    foreign: list[int] = []
    supervisors: list[int] = []
    own = interposed = False
    redacted: list[int] = []
    for index, canister in enumerate(canisters):
        if canister.extras:
            own = own or provider in canister.extras
            if _bound_elsewhere(canister, provider):
                foreign.append(index)
            if REDACTED in canister.extras:
                redacted.append(index)
        role = canister.role
        if role is INVOCATION:
            invoked.setdefault(canister.invocation_id, index)  # type: ignore[attr-defined]
        elif role is RESULT:
            invocation_id = canister.invocation_id  # type: ignore[attr-defined]
            if invocation_id in answered:
                # Rule: one result per call (Anthropic answers 400 to two
                # tool_result blocks for one tool_use): the second is an orphan.
                orphans.append(index)
                duplicates.add(index)
            elif invocation_id in invoked:
                answered.add(invocation_id)
            else:
                orphans.append(index)
        elif role is SUPERVISOR:
            supervisors.append(index)
        elif role is Role.User and len(answered) < len(invoked):
            interposed = True
    if foreign:
        canisters = _without_bound(canisters, foreign, options, provider)
        return _complete_pairs(canisters, options, provider)
    for index in redacted:
        where = describe(index, canisters[index])
        options.note("placeholder", provider, where, "redacted: its placeholder sent")
    if options.incomplete == "keep" or (len(answered) == len(invoked) and not orphans):
        kept = fresh if canisters is fresh else list(canisters)
        return Request(kept, own, supervisors, interposed)
    pending = [index for key, index in invoked.items() if key not in answered]
    if options.incomplete == "error":
        names = [
            describe(index, canisters[index]) for index in sorted(pending + orphans)
        ]
        raise ProviderError(
            f"incomplete invocation/result pairs for {provider}: {'; '.join(names)}"
        )
    skipped = set(pending) | set(orphans)
    for index in sorted(skipped):
        options.note(
            "dropped",
            provider,
            describe(index, canisters[index]),
            "a second result for one invocation skipped"
            if index in duplicates
            else "incomplete invocation/result pair skipped",
        )
    kept = [c for index, c in enumerate(canisters) if index not in skipped]
    supervisors = [index for index, c in enumerate(kept) if c.role is SUPERVISOR]
    return Request(kept, own, supervisors, interposed)


# Extras key of a canister a store redacted (storage's tombstones): its content
# is the placeholder text, sent as it is and reported.
REDACTED = "redacted"

BOUND = "bound"
"""Extras key: the names of provider-bound artifacts a canister carries.

A normalizer sets ``extras[provider][BOUND]`` on a canister holding something
only ``provider`` understands: a signature kept in extras, a server-tool item,
a code-execution part kept as an empty text placeholder. Rendering for any
other provider (:func:`complete_pairs`) applies the ``unsupported`` option to
them, but to signatures (:data:`SIGNATURES`), which it drops and reports, and
leaves out the placeholders and the canisters that were nothing else.
"""


SIGNATURES: set[str] = set()
"""The bound names that carry only a signature (Gemini's ``thoughtSignature``),
declared by their normalizer. Another provider cannot check them, so they are
dropped and reported as reasoning signed elsewhere is; every other bound element
holds content (a server tool's call or results, code run and its output) and
follows the ``unsupported`` option."""


def _bound_elsewhere(canister: Canister, provider: str) -> bool:
    for name, data in canister.extras.items():
        if name != provider and BOUND in data:
            return True
    return False


UNKNOWN = "unknown"
"""Extras key, beside :data:`BOUND`: the types among a canister's bound names that
the normalizer does not know (a block, part, item or role a provider added
since). Rendering for another provider applies the ``unsupported`` option to
them (:func:`unsupported`): refused, dropped or replaced by a placeholder, and
reported."""


element_type = _element_type
"""The name an element of a type the normalizer does not know goes by (its
``type``, ``role`` or kind)."""


def opaque_part(provider: str, element: Mapping[str, Any]) -> Text:
    """The part standing for a content element of a type the normalizer does not
    know: an empty text holding the element whole in
    ``extras[provider]["raw"]``, at the element's place among the parts. The
    canister holding it is marked with :func:`bind`."""
    extras = FrozenDict({provider: {"raw": dict(element)}})
    part: Text = new_text("", "text/plain", None, extras)
    return part


def bind_parts(marks: dict[str, Any], parts: Iterable[Any]) -> None:
    """Mark a canister's extras ``marks`` as holding the parts of unknown types
    among ``parts`` (made by :func:`opaque_part`), if any (see :func:`bind`)."""
    found = [
        held[1]
        for part in parts
        # An element kept whole is an empty text: most parts fail the first test.
        if type(part) is Text and not part.text and (held := _opaque(part)) is not None
    ]
    if found:
        bind(marks, [element_type(raw) for raw in found])


def bind(marks: dict[str, Any], types: Iterable[str], *, unknown: bool = True) -> None:
    """Mark a canister's extras ``marks`` (its provider's entry) as holding
    elements of ``types`` that go back to that provider only (:data:`BOUND`),
    and, when ``unknown``, as types the normalizer does not know
    (:data:`UNKNOWN`)."""
    names = list(types)
    if not names:
        return
    marks[BOUND] = [*marks.get(BOUND, ()), *names]
    if unknown:
        marks[UNKNOWN] = [*marks.get(UNKNOWN, ()), *names]


def reply_canisters(
    conversation: Conversation, options: Options, provider: str
) -> Conversation:
    """A reply to render for ``provider``: what another provider's elements
    (server-tool blocks, items of unknown types) left out, each reported as
    in a request (:data:`BOUND`); every canister stays, as the first holds the
    reply's metadata."""
    given = canisters_given(conversation, provider)
    canisters = settle_provided(given, options, provider, reply=True)
    foreign = [
        index
        for index, canister in enumerate(canisters)
        if canister.extras and _bound_elsewhere(canister, provider)
    ]
    if not foreign:
        return conversation if canisters is given else Conversation(tuple(canisters))
    return Conversation(
        tuple(_without_bound(canisters, foreign, options, provider, keep=True))
    )


def _without_bound(
    canisters: Sequence[Canister],
    foreign: list[int],
    options: Options,
    provider: str,
    *,
    keep: bool = False,
) -> list[Canister]:
    kept = list(canisters)
    for index in reversed(foreign):
        canister = kept[index]
        owners = [
            name
            for name, data in canister.extras.items()
            if name != provider and BOUND in data
        ]
        where = describe(index, canister)
        placeholders: list[Text] = []
        for owner in owners:
            data = canister.extras[owner]
            unknown = list(dict.fromkeys(data.get(UNKNOWN, ())))
            if unknown:
                text = unsupported(
                    options,
                    provider,
                    f"{where}, element ({', '.join(unknown)})",
                    f"{owner} type the library does not know",
                )
                if text is not None:
                    placeholders.append(new_text(text, "text/plain", None, EMPTY))
            names = [name for name in data[BOUND] if name not in unknown]
            signatures = [name for name in names if name in SIGNATURES]
            held = [name for name in names if name not in SIGNATURES]
            if held:
                text = unsupported(
                    options,
                    provider,
                    f"{where}, element ({', '.join(dict.fromkeys(held))})",
                    f"{owner}-only {', '.join(held)} not sent to {provider}",
                )
                if text is not None:
                    placeholders.append(new_text(text, "text/plain", None, EMPTY))
            if signatures:
                options.note(
                    "dropped",
                    provider,
                    where,
                    f"{owner}-only {', '.join(signatures)} not sent to {provider}",
                )
        extras = {k: v for k, v in canister.extras.items() if k not in owners}
        if canister.role in (Role.Assistant, Role.User, Role.Supervisor):
            # Placeholders: empty texts standing for the owner's wire items.
            content = tuple(
                part
                for part in canister.content  # type: ignore[attr-defined]
                if not (
                    part.type == "text"
                    and not part.text
                    and any(owner in part.extras for owner in owners)
                )
            ) + tuple(placeholders)
            if not content and canister.role is not Role.User and not keep:
                del kept[index]
                continue
            kept[index] = attrs.evolve(canister, content=content, extras=extras)  # type: ignore[misc]
        else:
            kept[index] = attrs.evolve(canister, extras=extras)  # type: ignore[misc]
    return kept


def positions(canisters: Iterable[Canister]) -> dict[str, int]:
    """Map each canister id to its first index: where a canister kept or
    rewritten by :func:`complete_pairs` stood in the conversation."""
    found: dict[str, int] = {}
    for index, canister in enumerate(canisters):
        found.setdefault(canister.id, index)
    return found


def joins_alternating(provider: str) -> Callable[[Canister, Canister], bool]:
    """Join rule for providers that need alternating roles (Anthropic).

    A canister joins the previous turn when both have the same wire role, unless
    it was parsed from a separate message (``extras[provider]["split"]``).
    """

    def joins(previous: Canister, canister: Canister) -> bool:
        return not mine(canister, provider).get("split")

    return joins


def joins_step(provider: str) -> Callable[[Canister, Canister], bool]:
    """Join rule for folding invocations into the assistant turn before them.

    An invocation joins the previous assistant or invocation of the same step
    (``None`` matches any), unless it was parsed from a separate message
    (``extras[provider]["split"]``). Everything else starts a new message.
    """

    def joins(previous: Canister, canister: Canister) -> bool:
        if canister.role is not Role.Invocation:
            return False
        steps = (previous.step, canister.step)
        if None not in steps and steps[0] != steps[1]:
            return False
        return not mine(canister, provider).get("split")

    return joins


def group_turns(
    canisters: Iterable[Canister],
    wire_role: Callable[[Canister], str],
    joins: Callable[[Canister, Canister], bool],
) -> list[tuple[str, list[Canister]]]:
    """Group canisters into wire messages.

    ``wire_role`` names the message role each canister goes into; a canister
    starts a new message when its role differs from the previous one's or when
    ``joins(previous_canister, canister)`` says no. Folding an assistant turn with its
    invocations and merging consecutive user turns are both this function with
    different ``joins`` rules.
    """
    turns: list[tuple[str, list[Canister]]] = []
    for canister in canisters:
        role = wire_role(canister)
        if turns and turns[-1][0] == role and joins(turns[-1][1][-1], canister):
            turns[-1][1].append(canister)
        else:
            turns.append((role, [canister]))
    return turns
