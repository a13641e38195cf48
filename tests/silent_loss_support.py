"""The no-silent-loss walk: is every key of a corpus body carried or reported?

For one body of format S and a target format T, the body is translated the way
a user would (``parse_full_request`` / ``render_full_request`` for requests,
``parse_response`` / ``render_response`` for replies, ``parse_error`` /
``render_error`` for error bodies), under ``unsupported="drop"``, giving the
target body and the report's events. Then every key path of the input, at every
depth, is probed: the key is deleted, and its value changed (a string gets a
character in its middle, a number one more, a boolean flipped, a null becomes
a string), and the body is translated again. A change the source format refuses
(a required key, a value out of its enumeration) proves the key is read. A key
is lost silently when another value of it is taken and leaves both the target
body and the report exactly as they were: nothing of it reached the target, and
the report does not name it. (A key whose only value the format fixes, as
OpenAI's ``"type": "function"``, says no more than its absence.)

This is how "carried with the same meaning, or named in the report" is checked
without a map between the input's key paths and the report's words: a carried
key moves the output, a reported one moves the report. What the report names
answers for every key within it: a key whose deletion takes away a mention of
its name (``extras.gemini.body.toolConfig``), an element of a list whose
deletion takes away a mention of its type (``server_tool_use``) or a part the
report speaks of (``canister 1 (user), part 2 (audio)``). A key holding an
object or a list answers through the keys within it (deleting an object equal
to the format's default changes nothing); an empty one says nothing either way.

Keys of one shape are probed once per body, which bounds the walk: a pattern
writes list indexes as ``*``, with the element's type where it has one
(``messages.*.content.*[image_url].image_url.detail``). Every body is walked
into every other format. Values that differ between two translations of the
same body (ids made up for a reply, the time a reply is written) are set aside
before comparing.

What the report names answers for an element also when the element has no
type: by a key it holds (Gemini's parts: ``element (toolCall,
toolResponse)``), by its role (a message of a role the format does not know:
``element (control)``), by the name it holds (a tool a narrowed tool choice
leaves out: ``(send_email left out)``), or as the canister it is (Anthropic's
``tool_result`` block is a result: ``canister 1 (result)``). As each shape is probed once,
through its first element, a key found lost is checked once more against the
elements that hold it: one the report names answers for it.

``python -m tests.silent_loss_support`` (from the repository root) prints, per
body and target, the key patterns lost silently and the events let through
under ``unsupported="error"`` (the test fails on any).
"""

from __future__ import annotations

import copy
import json
import re
import sys
import time
import warnings
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from canisters import CanistersError, UnsupportedContent, providers
from canisters.providers._common import SIGNATURES

DATA = Path(__file__).parent / "data"
CORPUS = DATA / "providers"
FORMATS = providers.names()

Key = tuple[str | int, ...]
Outcome = tuple[Any, tuple[tuple[Any, ...], ...]]

# What a render may still report under unsupported="error": values made up or
# moved, which lose nothing, and what other options decide (reasoning="drop",
# incomplete="skip"), empty content, which holds nothing to lose, and another
# provider's signatures and references (an item id), dropped as reasoning
# signed elsewhere is; and a model the request never named (a Gemini request's
# is in its URL), which the user gives.
ALLOWED_UNDER_ERROR = (
    ("synthesized", None),
    ("moved", None),
    ("downgraded", None),
    ("dropped", "reasoning the provider cannot take back"),
    ("dropped", "incomplete invocation/result pair skipped"),
    ("dropped", "empty text"),
    ("dropped", "empty text block"),
    ("dropped", "an empty message"),
    ("dropped", "a message of empty text only"),
    ("dropped", "message with no content"),
    ("dropped", "SIGNATURES"),
    ("dropped", "REFERENCES"),
    ("dropped", "NO MODEL"),
)


def _allowed(kind: str, detail: str) -> bool:
    for allowed, words in ALLOWED_UNDER_ERROR:
        if allowed != kind:
            continue
        if words is None or words == detail:
            return True
        if words == "REFERENCES" and re.fullmatch(
            r"\S+-only reference \S+ .+ not sent to \S+", detail
        ):
            return True
        if words == "NO MODEL" and detail.startswith("the request names no model"):
            return True
        if words == "SIGNATURES":
            named = re.fullmatch(r"\S+-only (.+) not sent to \S+", detail)
            if named and set(named.group(1).split(", ")) <= SIGNATURES:
                return True
    return False


def cases() -> list[tuple[str, str, str, Any]]:
    """Every corpus body: ``(id, provider, kind, payload)``."""
    found = []
    for path in sorted(CORPUS.rglob("*.json")):
        case = json.loads(path.read_text(encoding="utf-8"))
        name = path.relative_to(CORPUS).as_posix()
        found.append((name, case["provider"], case["kind"], case["payload"]))
    return found


def translate(
    kind: str, source: str, target: str, body: Any, unsupported: str = "drop"
) -> Outcome:
    """The target body and the report's events for ``body`` of ``source``."""
    report = providers.Report()
    reader, writer = providers.get(source), providers.get(target)
    body = copy.deepcopy(body)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        if kind == "request":
            read = reader.parse_full_request(body)
            out: Any = writer.render_full_request(
                read, report=report, unsupported=unsupported
            )
        elif kind == "response":
            conversation = reader.parse_response(body)
            out = writer.render_response(
                conversation, report=report, unsupported=unsupported
            )
        else:
            out = writer.render_error(
                reader.parse_error(body), report=report, unsupported=unsupported
            )
    events = tuple((e.kind, e.where, e.detail, e.rule) for e in report.events)
    return out, events


def keys(value: Any, prefix: Key = ()) -> Iterator[Key]:
    """Every key path of ``value``, parents before children, and the path of
    every element of a list."""
    if isinstance(value, dict):
        for key, item in value.items():
            yield (*prefix, key)
            yield from keys(item, (*prefix, key))
    elif isinstance(value, list):
        for index, item in enumerate(value):
            yield (*prefix, index)
            yield from keys(item, (*prefix, index))


def _name(value: Any, step: str | int) -> str | None:
    """What the report would call the key ``step`` of ``value``: its name, or
    for an element of a list the ``type`` it has, or its one key (``None``:
    it has neither)."""
    if isinstance(step, str):
        return step
    item = value[step]
    if not isinstance(item, dict):
        return None
    kind = item.get("type")
    if kind is None and len(item) == 1:
        # A member of a union spelled by its one key (Bedrock's blocks,
        # Gemini's parts: {"reasoningContent": {...}}).
        kind = next(iter(item))
    return kind if isinstance(kind, str) else None


def pattern(body: Any, key: Key) -> str:
    """The shape of ``key``: list indexes as ``*``, with the element's type
    where it has one (``messages.*.content.*[image_url].image_url.detail``)."""
    text = ""
    for step in key:
        if isinstance(step, int):
            name = _name(body, step)
            text += ".*" if name is None else f".*[{name}]"
        else:
            text += f".{step}"
        body = body[step]
    return text[1:]


def patterns(body: Any) -> set[str]:
    """The shapes the walk probes in ``body``."""
    return {pattern(body, key) for key in keys(body)}


def _at(value: Any, key: Key) -> Any:
    for step in key:
        value = value[step]
    return value


def changes(body: Any, key: Key) -> Iterator[Any]:
    """``body`` without ``key``, then with its value changed."""
    changed = copy.deepcopy(body)
    del _at(changed, key[:-1])[key[-1]]
    yield changed
    value = _at(body, key)
    if isinstance(value, bool):
        other: Any = not value
    elif isinstance(value, int):
        other = value + 1
    elif isinstance(value, float):
        other = value / 2 + 0.25
    elif isinstance(value, str):
        # Inside, not at the end: a base64 payload's end may be padding a
        # lenient decoder skips.
        other = value[: len(value) // 2] + "x" + value[len(value) // 2 :]
    elif value is None:
        other = "x"
    else:
        return
    changed = copy.deepcopy(body)
    _at(changed, key[:-1])[key[-1]] = other
    yield changed


def _differences(a: Any, b: Any, prefix: Key = ()) -> Iterator[Key]:
    if isinstance(a, dict) and isinstance(b, dict) and a.keys() == b.keys():
        for key in a:
            yield from _differences(a[key], b[key], (*prefix, key))
    elif isinstance(a, list) and isinstance(b, list) and len(a) == len(b):
        for index, (x, y) in enumerate(zip(a, b, strict=True)):
            yield from _differences(x, y, (*prefix, index))
    elif a != b:
        yield prefix


def _masked(value: Any, varies: set[Key], prefix: Key = ()) -> Any:
    if prefix in varies:
        return "<varies>"
    if isinstance(value, dict):
        return {k: _masked(v, varies, (*prefix, k)) for k, v in value.items()}
    if isinstance(value, list):
        return [_masked(v, varies, (*prefix, i)) for i, v in enumerate(value)]
    return value


def walk(kind: str, source: str, target: str, body: Any) -> tuple[set[str], int]:
    """The key patterns of ``body`` lost silently into ``target``, and how many
    patterns were probed. A translation failing with anything but the library's
    own exception fails the walk."""
    first = translate(kind, source, target, body)
    second = int(time.time())
    again = translate(kind, source, target, body)
    assert again[1] == first[1], "the report differs between two translations"
    varies = set(_differences(first[0], again[0]))
    base = (_masked(first[0], varies), first[1])

    def differs(out: Any, events: tuple[Any, ...]) -> bool:
        nonlocal base, second
        if (_masked(out, varies), events) == base:
            return False
        if events == base[1] and int(time.time()) != second:
            # A clock second passed: a time the renderer writes (a reply's
            # created_at) may be all that moved.
            second = int(time.time())
            varies.update(
                _differences(first[0], translate(kind, source, target, body)[0])
            )
            base = (_masked(first[0], varies), first[1])
            return (_masked(out, varies), events) != base
        return True

    silent: set[str] = set()
    named: set[Key] = set()
    seen: set[str] = set()
    for key in keys(body):
        shape = pattern(body, key)
        if shape in seen:
            continue
        seen.add(shape)
        if any(key[:depth] in named for depth in range(1, len(key))):
            continue  # within a key the report names
        value = _at(body, key)
        name = _name(_at(body, key[:-1]), key[-1])
        if isinstance(key[-1], int):
            # An element of a list: named by the report (by its type, or as
            # the part it is), or answered for by the keys within it.
            if _named(body, key, name, base[1], kind, (source, target)):
                named.add(key)
            continue
        if value in ({}, []):
            continue  # an empty object or list says nothing, present or not
        changed_value = False  # another value of the key was taken
        for number, changed in enumerate(changes(body, key)):
            try:
                out, events = translate(kind, source, target, changed)
            except CanistersError:
                continue
            changed_value = changed_value or number > 0
            if name is not None and _fewer(name, base[1], events):
                named.add(key)
            if differs(out, events):
                break
        else:
            # Lost when another value of it was taken and changed nothing. A
            # key whose value the format fixes (OpenAI's "type": "function")
            # says nothing more than its absence; one holding others is
            # answered for by them.
            if changed_value and not _within_named(
                body, key, base[1], kind, (source, target)
            ):
                silent.add(shape)
    return silent, len(seen)


def _within_named(
    body: Any,
    key: Key,
    before: tuple[Any, ...],
    kind: str,
    direction: tuple[str, str],
) -> bool:
    """Whether an element holding ``key`` is one the report names (each shape
    is named once, by its first element: this one may be another)."""
    for depth in range(len(key) - 1, 0, -1):
        if isinstance(key[depth - 1], int):
            element = key[:depth]
            name = _name(_at(body, element[:-1]), element[-1])
            if _named(body, element, name, before, kind, direction):
                return True
    return False


def _named(
    body: Any,
    key: Key,
    name: str | None,
    before: tuple[Any, ...],
    kind: str,
    direction: tuple[str, str],
) -> bool:
    """Whether the report (``before``) names the element at ``key``: by its
    type ``name`` (for an element of no type, by a key it holds), by its role
    or the name it holds, or as a part."""
    source, target = direction
    changed = copy.deepcopy(body)
    del _at(changed, key[:-1])[key[-1]]
    try:
        after = translate(kind, source, target, changed)[1]
    except CanistersError:
        return False
    # By its type, or as a part the report speaks of (which it calls by the
    # neutral kind: Anthropic's "thinking" block is a "part 1 (reasoning)").
    # An element of no type by a key it holds (Gemini's parts: the report's
    # "element (toolCall, toolResponse)") or by its role (a message of a role
    # the format does not know: "element (control)").
    item = _at(body, key)
    names = [name] if name is not None else list(item) if isinstance(item, dict) else []
    role = item.get("role") if isinstance(item, dict) else None
    if isinstance(role, str) and role:
        names.append(role)
    # Or by the name it holds (a tool a narrowed tool choice leaves out:
    # "only a may be called ... (b left out)").
    called = item.get("name") if isinstance(item, dict) else None
    if isinstance(called, str) and called:
        names.append(called)
    by_name = any(_fewer(word, before, after) for word in names)
    # Or as the part or the canister it is: a block that is a canister of its
    # own (Anthropic's tool_result is a result) by its neutral kind.
    return (
        by_name
        or _fewer(", part ", before, after)
        or any(_fewer(f" ({kind})", before, after) for kind in _BLOCK_CANISTERS)
    )


_BLOCK_CANISTERS = ("invocation", "result", "document")
"""The neutral kinds of canisters some formats spell as blocks of a message."""


def _fewer(name: str, before: tuple[Any, ...], after: tuple[Any, ...]) -> bool:
    """Whether the report mentions ``name`` fewer times in ``after``: deleting
    the key took away what the report said of it."""

    def count(events: tuple[Any, ...]) -> int:
        return sum(f"{event[1]} {event[2]}".count(name) for event in events)

    return count(after) < count(before)


def not_refused(kind: str, source: str, target: str, body: Any) -> list[str]:
    """What a render under ``unsupported="error"`` let through without refusing:
    the events it reported that the policy should have refused (see
    :data:`ALLOWED_UNDER_ERROR`)."""
    try:
        _, events = translate(kind, source, target, body, unsupported="error")
    except UnsupportedContent:
        return []
    return [
        f"{event[0]}: {event[1]}: {event[2]}"
        for event in events
        if not _allowed(event[0], event[2])
    ]


def survey() -> dict[str, Any]:
    """What is lost silently, per body and target, and what a render under
    ``unsupported="error"`` lets through."""
    losses: dict[str, dict[str, list[str]]] = {}
    unrefused: dict[str, dict[str, list[str]]] = {}
    for name, source, kind, body in cases():
        for target in FORMATS:
            if target == source:
                continue
            try:
                silent, _ = walk(kind, source, target, body)
            except CanistersError:
                continue
            if silent:
                losses.setdefault(name, {})[target] = sorted(silent)
            let_through = not_refused(kind, source, target, body)
            if let_through:
                unrefused.setdefault(name, {})[target] = let_through
    return {"silent": losses, "not refused": unrefused}


if __name__ == "__main__":
    json.dump(survey(), sys.stdout, indent=1, sort_keys=True)
    sys.stdout.write("\n")
