"""to_json and to_jsonl look for NaN and the infinities only where a float can be.

orjson writes NaN, Infinity and -Infinity as ``null``; the standard library then
writes the value exactly. Which values are searched is decided while the records
are built: the built-in classes hand over every value they do not check to be a
string, an int, a bool, bytes or a datetime, any other hook its whole record.
These tests hold the output to the way that searched the whole written text
(``b"null" in`` the bytes, then a walk of the whole value), byte for byte, with
a non-finite number, a big integer, a lone surrogate or a plain value put in each
place that may hold one, and through registered classes.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import attrs
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import canisters as c
from canisters import serialization as s

from . import strategies
from .budget import examples


def searched_json(value: Any) -> str:
    """What to_json wrote before: the whole output searched for ``null``."""
    document = s._document(value)
    limit = s.MAX_DEPTH - s._SHIFTS[document["format"]]
    return s._encode_json(document, limit)[0].decode()


def searched_jsonl(conversation: c.Conversation) -> str:
    """What to_jsonl wrote before: each line searched for ``null`` on its own."""
    header = {"format": s.CONVERSATION_FORMAT, "version": s.FORMAT_VERSION}
    lines = [s._encode_json(header)[0]]
    for record in s._records(conversation):
        lines.append(s._encode_json(record, s.MAX_DEPTH - s._LINE_SHIFT)[0])
    lines.append(b"")
    return b"\n".join(lines).decode()


def assert_written_as_before(conversation: c.Conversation) -> None:
    text = c.to_json(conversation)
    assert text == searched_json(conversation)
    lines = c.to_jsonl(conversation)
    assert lines == searched_jsonl(conversation)
    for canister in conversation:
        assert c.to_json(canister) == searched_json(canister)
    # Read back, the same text is written again (NaN != NaN, but its text is),
    # where the classes take what was put in (a float is no token count).
    try:
        back = c.from_json(text)
    except c.SerializationError:
        return
    assert c.to_json(back) == text
    assert c.to_jsonl(c.from_jsonl(lines)) == lines


ODD_VALUES = [
    math.nan,
    math.inf,
    -math.inf,
    1.5,
    None,
    10**30,
    2**63,
    "\ud800 lone",
    "plain",
]

Place = Callable[[Any, Any], Any]


def _part(part: Any) -> Place:
    """Add ``part`` (built from the value) to a canister that holds content."""

    def place(canister: Any, value: Any) -> Any:
        if not hasattr(canister, "content"):
            return canister
        return attrs.evolve(canister, content=(*canister.content, part(value)))

    return place


def _metadata(**fields: Any) -> Place:
    def place(canister: Any, value: Any) -> Any:
        values = {
            key: value if given is None else given(value)
            for key, given in fields.items()
        }
        return attrs.evolve(canister, metadata=c.Metadata(**values))

    return place


def _only(cls: type, **fields: Callable[[Any], Any]) -> Place:
    def place(canister: Any, value: Any) -> Any:
        if type(canister) is not cls:
            return canister
        return attrs.evolve(canister, **{k: f(value) for k, f in fields.items()})

    return place


def _same(value: Any) -> Any:
    return value


# Every place of a built-in canister that an odd value was put in: the JSON
# values, which take any, and the typed fields, which the constructors now check
# (a value of another type is refused there, naming the field: see
# _placed_or_refused).
PLACES: dict[str, Place] = {
    "parent_id": lambda x, v: attrs.evolve(x, parent_id=v),
    "trace_id": lambda x, v: attrs.evolve(x, trace_id=v),
    "policy": lambda x, v: attrs.evolve(x, policy=v),
    "extras": lambda x, v: attrs.evolve(x, extras={"openai": {"k": [v]}}),
    "extras and step": lambda x, v: attrs.evolve(x, step=3, extras={"o": v}),
    "metadata.model": _metadata(model=None),
    "metadata.latency_ms": _metadata(model=lambda v: "m", latency_ms=None),
    "metadata.quality": _metadata(quality=None),
    "metadata.custom": _metadata(model=lambda v: "m", custom=lambda v: {"a": {"b": v}}),
    "metadata.finish_reason": _metadata(finish_reason=None),
    "metadata.retries": _metadata(retries=None),
    "metadata.cache_hit": _metadata(cache_hit=None),
    "metadata.usage": _metadata(usage=lambda v: c.Usage(input_tokens=v)),
    "arguments": _only(c.Invocation, arguments=lambda v: {"a": [1, {"b": v}]}),
    "error.code": _only(c.Result, error=lambda v: c.ErrorInfo(v, "m")),
    "error.message": _only(c.Result, error=lambda v: c.ErrorInfo("X", v)),
    "error.retryable": _only(c.Result, error=lambda v: c.ErrorInfo("X", "m", v)),
    "error.details": _only(
        c.Result, error=lambda v: c.ErrorInfo("X", "m", details={"d": v})
    ),
    "document.title": _only(c.Document, title=_same),
    "document.document_id": _only(c.Document, document_id=_same),
    "text.mime_type": _part(lambda v: c.Text("t", v)),
    "text.id": _part(lambda v: c.Text("t", id=v)),
    "text.extras": _part(lambda v: c.Text("t", extras={"x": v})),
    "media.mime_type": _part(lambda v: c.Image(data=b"\x89PNG", mime_type=v)),
    "media.hint": _part(lambda v: c.Audio(url="https://a.test/x.wav", hint=v)),
    "media.id": _part(lambda v: c.Video(refs={"openai": "file-1"}, id=v)),
    "media.extras": _part(
        lambda v: c.Image(url="https://a.test/i.png", extras={"e": [v]})
    ),
    "file.filename": _part(lambda v: c.File(data=b"%PDF", filename=v)),
    "reasoning.signature": _part(lambda v: c.Reasoning("r", v, None, "anthropic")),
    "reasoning.redacted": _part(lambda v: c.Reasoning("", None, v, "openai")),
    "reasoning.provider": _part(lambda v: c.Reasoning("r", provider=v)),
    "reasoning.id": _part(lambda v: c.Reasoning("r", id=v)),
    "reasoning.extras": _part(lambda v: c.Reasoning("r", extras={"x": v})),
}


@settings(max_examples=examples(50), deadline=None)
@given(
    strategies.conversations,
    st.data(),
)
def test_written_as_when_the_whole_text_was_searched(
    conversation: c.Conversation, data: st.DataObject
) -> None:
    canisters = list(conversation)
    for _ in range(data.draw(st.integers(0, 3))):
        if not canisters:
            break
        index = data.draw(st.integers(0, len(canisters) - 1))
        place = data.draw(st.sampled_from(sorted(PLACES)))
        value = data.draw(st.sampled_from(ODD_VALUES))
        placed = _placed_or_refused(place, [canisters[index]], value)
        canisters[index] = placed[0] if placed else canisters[index]
    assert_written_as_before(c.Conversation(canisters))


def _placed_or_refused(place: str, canisters: list[Any], value: Any) -> list[Any]:
    """The canisters with ``value`` put in ``place``; none when the classes refuse
    it, which they must do naming the field that does not take it."""
    try:
        return [PLACES[place](canister, value) for canister in canisters]
    except c.ModelError as error:
        refused = error
    named = {place.split(".")[-1], "input_tokens"}  # usage: its first count
    assert refused.field in named, (place, refused)
    return []


@pytest.mark.parametrize("value", ODD_VALUES, ids=repr)
@pytest.mark.parametrize("place", sorted(PLACES))
def test_every_place_that_may_hold_a_float(place: str, value: Any) -> None:
    base = [
        c.Supervisor("be brief"),
        c.User(("hi", c.Image(data=b"\x89PNG\r\n")), step=1),
        c.Assistant("hello", metadata=c.Metadata(model="m"), step=1),
        c.Invocation("f", {"x": 1}, invocation_id="i1", step=2),
        c.Result("i1", "f", "ok", step=2),
        c.Document("notes", "title", "d1"),
    ]
    placed = _placed_or_refused(place, base, value)
    if not placed:
        return
    conversation = c.Conversation(placed)
    assert_written_as_before(conversation)
    # A true-ish retryable is written as true.
    if isinstance(value, float) and not math.isfinite(value) and "retry" not in place:
        text = c.to_json(conversation)
        assert ("NaN" if math.isnan(value) else "Infinity") in text


@attrs.frozen
class Reading(c.User):
    """An application canister with a float of its own."""

    score: float = 0.0


@attrs.frozen
class Gauge:
    """An application content part with a float of its own."""

    type = "gauge"
    level: float = 0.0


c.register_canister(Reading, "non-finite-reading")
c.register_content(Gauge, "non-finite-gauge")


@pytest.mark.parametrize("value", [math.nan, -math.inf, 0.5, 2.5e300], ids=repr)
def test_registered_classes_hand_over_their_whole_records(value: float) -> None:
    conversation = c.Conversation(
        [
            Reading("r", score=value),
            c.User(("a", Gauge(value))),
            c.Assistant((Gauge(value),), metadata=c.Metadata(model="m")),
        ]
    )
    assert_written_as_before(conversation)
    assert c.to_json(Gauge(value)) == searched_json(Gauge(value))


def test_a_replaced_built_in_hook_hands_over_its_whole_record(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    def out(part: c.Text) -> dict[str, Any]:
        return {"type": "text", "text": part.text, "score": math.inf}

    monkeypatch.setitem(s._CONTENT_OUT, c.Text, ("text", out))
    monkeypatch.setitem(
        s._CANISTER_OUT,
        c.Result,
        ("result", lambda x: {"role": "result", "n": math.nan}),
    )
    part = c.Text("t", mime_type="text/markdown")  # not the inline plain text
    conversation = c.Conversation([c.User((part,)), c.Result("i", "f", "ok")])
    text = c.to_json(conversation)
    assert text == searched_json(conversation)
    assert '"score":Infinity' in text and '"n":NaN' in text
    assert c.to_jsonl(conversation) == searched_jsonl(conversation)


@pytest.mark.parametrize("size", [0, 1, 63, 64, 65, 129, 200])
@pytest.mark.parametrize("odd", [None, math.nan, 10**30, "\ud800"], ids=repr)
def test_long_conversations_are_written_line_for_line(size: int, odd: Any) -> None:
    # to_jsonl joins the lines of long conversations 64 at a time.
    items: list[Any] = []
    for index in range(size):
        if index % 3 == 0:
            items.append(c.User(f"question {index}"))
        elif index % 3 == 1:
            items.append(c.Invocation("f", {"i": index}, invocation_id=f"i{index}"))
        else:
            items.append(c.Result(f"i{index - 1}", "f", f"answer {index}"))
    if size and odd is not None:
        items[size // 2 + 1 if size > 2 else 0] = c.Invocation("f", {"odd": odd})
    conversation = c.Conversation(items)
    lines = c.to_jsonl(conversation)
    assert lines == searched_jsonl(conversation)
    assert lines.count("\n") == size + 1 and lines.endswith("}\n")


@pytest.mark.parametrize("where", [0, 255, 256, 700])
@pytest.mark.parametrize("padding", [0, 1 << 20], ids=["short", "over 1 MB"])
def test_collected_values_are_searched_slice_by_slice(where: int, padding: int) -> None:
    # The collected values are packed 256 at a time, whatever the size of the
    # document (a long text makes it larger than a megabyte): a non-finite
    # number is found in any slice, first or last.
    items: list[Any] = [c.User("x" * padding)]
    items += [c.Invocation("f", {"i": index}) for index in range(701)]
    items[where + 1] = c.Invocation("f", {"odd": [1, {"deep": -math.inf}]})
    conversation = c.Conversation(items)
    text = c.to_json(conversation)
    assert text == searched_json(conversation)
    assert '"deep":-Infinity' in text
    assert c.to_jsonl(conversation) == searched_jsonl(conversation)


@pytest.mark.parametrize(
    "value",
    # Each integer packs with the bytes cb 7f f0, cb ff ff or cb ff f1, as a
    # non-finite float's do, without being one: the walk then settles it.
    [0xCB7FF0, 0xCBFFFF12, -0x34000F],
    ids=repr,
)
def test_bytes_that_look_like_a_packed_nan_are_not_one(value: Any) -> None:
    conversation = c.Conversation([c.Invocation("f", {"v": value, "n": None})])
    text = c.to_json(conversation)
    assert text == searched_json(conversation)
    assert "NaN" not in text and "Infinity" not in text
    assert c.from_json(text) == conversation
