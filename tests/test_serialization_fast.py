"""The msgspec fast path of from_json / from_jsonl gives exactly what the hooks give.

``from_json`` first decodes a document into wire structs and converts them; on
anything unusual it falls back to the hooks. These tests compare the fast path
with the hooks alone (the fast path turned off) on every kind of input: same
objects, field by field and type by type, and the same errors.
"""

from __future__ import annotations

import gc
import json
import tracemalloc
from collections.abc import Callable, Iterator
from contextlib import contextmanager, nullcontext
from datetime import datetime, timedelta, timezone
from typing import Any

import attrs
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import canisters as c
from canisters import _wire as w
from canisters import serialization as s

from . import strategies
from .budget import examples

WHEN = "2025-01-01T00:00:00+00:00"
ENVELOPE = f'"id": "u", "timestamp": "{WHEN}"'


@contextmanager
def hooks_only() -> Iterator[None]:
    """Turn the fast path off: every document goes through the hooks."""
    saved = w._FAST[:]
    w._FAST[:] = [None]
    try:
        yield
    finally:
        w._FAST[:] = saved


def fast() -> w._Fast:
    path = w.fast()
    assert path is not None
    return path


def same(a: Any, b: Any) -> bool:
    """Equal, and of the same types all the way down (1 is not 1.0, dict is not
    FrozenDict, list is not tuple), with the same keys in the same order.

    A walk with a stack, not recursion: values nest up to MAX_DEPTH levels, more
    than some Pythons' recursion allows beside pytest's own frames."""
    pending = [(a, b)]
    while pending:
        a, b = pending.pop()
        if type(a) is not type(b):
            return False
        if attrs.has(type(a)):
            pending.extend(
                (getattr(a, f.name), getattr(b, f.name)) for f in attrs.fields(type(a))
            )
        elif isinstance(a, dict):
            if list(a) != list(b):
                return False
            pending.extend((a[k], b[k]) for k in a)
        elif isinstance(a, (list, tuple)):
            if len(a) != len(b):
                return False
            pending.extend(zip(a, b, strict=True))
        elif isinstance(a, (float, datetime)):
            if repr(a) != repr(b):
                return False
        elif not bool(a == b):
            return False
    return True


def outcome(function: Callable[[], Any]) -> tuple[str, Any]:
    try:
        return "value", function()
    except c.SerializationError as error:
        return "error", (error.path, str(error))


def check_against_hooks(text: str | bytes, reader: Callable[[Any], Any]) -> None:
    """Whatever the fast path accepts, the hooks accept and read the same; with
    the fast path on or off, ``reader`` gives the same value or the same error."""
    with hooks_only():
        expected = outcome(lambda: reader(text))
    got = outcome(lambda: reader(text))
    assert got[0] == expected[0], (got, expected)
    if got[0] == "error":
        assert got == expected
    else:
        assert same(got[1], expected[1])
    wire = {c.from_json: fast().from_json, c.from_jsonl: fast().from_jsonl}[reader]
    try:
        direct = wire(text)
    except Exception:  # refused: the hooks read it
        return
    assert expected[0] == "value" and same(direct, expected[1])


def canister_document(record: object) -> str:
    return json.dumps(
        {"format": "canisters.canister", "version": 2, "canister": record},
        ensure_ascii=False,
    )


# --------------------------------------------------------------------------- #
# Documents written by to_json / to_jsonl


@settings(max_examples=examples(200), deadline=None)
@given(strategies.conversations)
def test_fast_path_reads_written_conversations_as_the_hooks_do(
    conversation: c.Conversation,
) -> None:
    text = c.to_json(conversation)
    read = fast().from_json(text)  # served by the fast path, no fallback
    with hooks_only():
        assert same(read, c.from_json(text))
    assert read == conversation
    lines = c.to_jsonl(conversation)
    read = fast().from_jsonl(lines)
    with hooks_only():
        assert same(read, c.from_jsonl(lines))
    assert same(c.from_jsonl(lines.encode()), read)


@settings(max_examples=examples(200), deadline=None)
@given(strategies.canisters_)
def test_fast_path_reads_written_canisters_as_the_hooks_do(canister: Any) -> None:
    text = c.to_json(canister)
    read = fast().from_json(text)
    with hooks_only():
        assert same(read, c.from_json(text))
    assert same(c.from_json(text.encode()), read)


@given(strategies.parts)
def test_fast_path_reads_written_parts_as_the_hooks_do(part: Any) -> None:
    text = c.to_json(part)
    read = fast().from_json(text)
    with hooks_only():
        assert same(read, c.from_json(text))


def test_big_integers_stay_exact() -> None:
    call = c.Invocation(
        "f",
        {"big": 2**64, "neg": -(2**70), "list": [10**30, 1.5], "max": 2**63 - 1},
        step=2**64,
        metadata=c.Metadata(
            latency_ms=10**30,  # type: ignore[arg-type]
            retries=2**65,
            usage=c.Usage(input_tokens=2**70),
        ),
    )
    text = c.to_json(call)
    read = fast().from_json(text)
    assert read == call
    assert read.arguments["big"] == 2**64 and type(read.arguments["big"]) is int
    assert read.metadata.latency_ms == 10**30  # type: ignore[union-attr]
    with hooks_only():
        assert same(c.from_json(text), read)
    check_against_hooks(text, c.from_json)


@pytest.mark.parametrize("path", ["fast", "hooks"])
def test_recurring_strings_are_shared_within_a_document(path: str) -> None:
    conversation = c.Conversation(
        [
            c.Invocation("lookup", {"q": 1}, invocation_id="call-1", trace_id="t"),
            c.Result("call-1", "lookup", "ok", policy="runtime", trace_id="t"),
            c.Assistant("a", metadata=c.Metadata(model="m", finish_reason="stop")),
            c.Assistant("b", metadata=c.Metadata(model="m", finish_reason="stop")),
            c.Assistant(
                [c.Reasoning("r", "sig", provider="anthropic")],
                metadata=c.Metadata(model="m", finish_reason="stop", retries=1),
                policy="runtime",
            ),
            c.Assistant([c.Reasoning("s", "sig", provider="anthropic")]),
        ]
    )
    # Each string is made anew, as it is when read from text.
    text = c.to_json(conversation)
    with hooks_only() if path == "hooks" else nullcontext():
        call, result, first, second, third, fourth = c.from_json(text)
    assert result.invocation_id is call.invocation_id
    assert result.name is call.name
    assert result.trace_id is call.trace_id
    assert third.policy is result.policy
    assert third.metadata.model is first.metadata.model
    assert third.metadata.finish_reason is first.metadata.finish_reason
    assert fourth.content[0].provider is third.content[0].provider
    if path == "fast":
        assert first.metadata is second.metadata


@pytest.mark.parametrize("path", ["fast", "hooks"])
def test_strings_read_are_not_kept_once_their_canisters_are_gone(path: str) -> None:
    # sys.intern shared them until CPython 3.12 made interned strings immortal:
    # there, each trace id, policy, tool and model name read stayed for good.
    def document(n: int) -> str:
        unique = f"{n:032x}"
        return c.to_json(
            c.Conversation(
                [
                    c.Invocation(f"tool-{unique}", trace_id=f"t-{unique}"),
                    c.Assistant(
                        "a",
                        policy=f"p-{unique}",
                        metadata=c.Metadata(
                            model=f"m-{unique}", finish_reason=f"f-{unique}"
                        ),
                    ),
                ]
            )
        )

    texts = [document(n) for n in range(20_000)]
    with hooks_only() if path == "hooks" else nullcontext():
        c.from_json(texts[0])
        gc.collect()
        tracemalloc.start()
        try:
            before = tracemalloc.get_traced_memory()[0]
            for text in texts:
                c.from_json(text)
            gc.collect()
            kept = tracemalloc.get_traced_memory()[0] - before
        finally:
            tracemalloc.stop()
    # 100,000 distinct strings were read, some 10 MB of them; the hooks' table
    # keeps at most 4,096 short ones.
    assert kept < 1_000_000, kept


def test_reasoning_without_its_provider_is_refused_as_the_hooks_refuse_it() -> None:
    record = {
        **json.loads("{" + ENVELOPE + "}"),
        "role": "assistant",
        "content": [{"type": "reasoning", "text": "r", "signature": "sig"}],
    }
    text = canister_document(record)
    check_against_hooks(text, c.from_json)
    with pytest.raises(c.SerializationError, match="provider"):
        c.from_json(text)
    fine = canister_document(
        {**record, "content": [{"type": "reasoning", "text": "r", "provider": ""}]}
    )
    check_against_hooks(fine, c.from_json)
    assert c.from_json(fine).content[0].provider == ""


# --------------------------------------------------------------------------- #
# Anything else


GOOD: dict[str, Any] = {
    "role": "user",
    "id": "u",
    "timestamp": WHEN,
    "content": [{"type": "text", "text": "x"}],
}
KEYS = [
    "role",
    "id",
    "timestamp",
    "parent_id",
    "trace_id",
    "policy",
    "content",
    "step",
    "metadata",
    "name",
    "invocation_id",
    "arguments",
    "error",
    "extras",
    "title",
    "document_id",
    "unknown",
]


def perturb(record: dict[str, Any], changes: list[tuple[str, Any]]) -> None:
    """Apply ``changes`` to ``record``: ``None`` deletes a key, anything else sets it."""
    for key, value in changes:
        if value is None and key in record:
            del record[key]
        else:
            record[key] = value


@settings(max_examples=examples(300), deadline=None)
@given(
    strategies.canisters_,
    st.lists(
        st.tuples(st.sampled_from(KEYS), st.none() | strategies.json_values),
        max_size=3,
    ),
)
def test_perturbed_records_read_as_the_hooks_read_them(
    canister: Any, changes: list[tuple[str, Any]]
) -> None:
    record = s.unstructure_canister(canister)
    perturb(record, changes)
    check_against_hooks(canister_document(record), c.from_json)


@settings(max_examples=examples(300), deadline=None)
@given(
    strategies.parts,
    st.lists(
        st.tuples(
            st.sampled_from(
                [
                    "type",
                    "text",
                    "mime_type",
                    "id",
                    "extras",
                    "data",
                    "url",
                    "content_id",
                    "refs",
                    "hint",
                    "filename",
                    "signature",
                    "redacted",
                    "provider",
                    "unknown",
                ]
            ),
            st.none() | strategies.json_values,
        ),
        max_size=3,
    ),
)
def test_perturbed_parts_read_as_the_hooks_read_them(
    part: Any, changes: list[tuple[str, Any]]
) -> None:
    record = s.unstructure_content(part)
    perturb(record, changes)
    check_against_hooks(canister_document({**GOOD, "content": [record]}), c.from_json)


@settings(max_examples=examples(300), deadline=None)
@given(
    st.from_regex(
        r"-?\d{1,5}-\d{1,2}-\d{1,2}([T t_]\d{1,2}(:\d\d(:\d\d([.,]\d{0,12})?)?)?)?"
        r"([Zz]|[+-]\d\d(:?\d\d(:\d\d(\.\d{1,6})?)?)?)?",
        fullmatch=True,
    )
)
def test_timestamps_read_as_the_hooks_read_them(timestamp: str) -> None:
    check_against_hooks(
        canister_document({**GOOD, "timestamp": timestamp}), c.from_json
    )


@settings(max_examples=examples(300), deadline=None)
@given(st.text(alphabet="AQgw+/=_-09 \n", max_size=12))
def test_base64_reads_as_the_hooks_read_it(data: str) -> None:
    part = {"type": "image", "data": data, "mime_type": "image/png"}
    check_against_hooks(canister_document({**GOOD, "content": [part]}), c.from_json)


@settings(max_examples=examples(300), deadline=None)
@given(
    st.sampled_from(
        [
            '{"format": "canisters.conversation", "version": 2, "canisters": [%s]}',
            '{"format": "canisters.canister", "version": 2, "canister": %s}',
            '{"format": "canisters.content", "version": 2, "content": %s}',
            '{"format": "canisters.canister", "version": 1, "canister": %s}',
            '{"format": "canisters.canister", "version": 2.0, "canister": %s}',
            '{"version": 2, "format": "canisters.canister", "canister": %s, "x": 1}',
            '{"format": "canisters.canister", "canister": %s}',
        ]
    ),
    st.sampled_from(
        [
            json.dumps(GOOD),
            json.dumps({**GOOD, "role": "assistant", "role": "user"}),  # noqa: F601
            f'{{"role": "user", "role": "result", {ENVELOPE}}}',
            f'{{"role": "user", "id": "u", "id": "v", "timestamp": "{WHEN}"}}',
            '{"type": "text", "text": "a", "text": "b"}',
            '{"type": "text", "type": "image", "text": "a"}',
            f'{{"role": "user", "id": "\\ud800", "timestamp": "{WHEN}"}}',
            f'{{"role": "user", {ENVELOPE}, "step": 1e400}}',
            f'{{"role": "user", {ENVELOPE}, "step": NaN}}',
            f'{{"role": "user", {ENVELOPE}, "step": -0}}',
            f'{{"role": "user", {ENVELOPE}, "step": 1.0}}',
            f'{{"role": "user", {ENVELOPE}, "step": true}}',
            f'{{"role": "user", {ENVELOPE}, "extras": []}}',
            f'{{"role": "user", {ENVELOPE}, "extras": 0}}',
            f'{{"role": "user", {ENVELOPE}, "content": null}}',
            '{"type": "reasoning", "signature": "s"}',
            '{"type": "image", "url": "relative/path.png"}',
        ]
    ),
)
def test_unusual_documents_read_as_the_hooks_read_them(frame: str, inner: str) -> None:
    check_against_hooks(frame % inner, c.from_json)
    check_against_hooks((frame % inner).encode(), c.from_json)


@settings(max_examples=examples(300), deadline=None)
@given(st.text() | st.binary())
def test_arbitrary_text_reads_as_the_hooks_read_it(text: str | bytes) -> None:
    check_against_hooks(text, c.from_json)
    check_against_hooks(text, c.from_jsonl)


JSON_EDGES = [
    '"\\ud800"',
    '"\\udc00x"',
    "1e400",
    "-1e400",
    "1e-400",
    "NaN",
    "Infinity",
    "123456789012345678901234567890",
    "-0",
    "-0.0",
    "\ufeff{}",
    '{"a": 1, "a": 2}',
    "{} x",
    "[" * 2000 + "]" * 2000,
    '"\\u0000"',
    "01",
    "[1,]",
    "9223372036854775808",
    "-9223372036854775809",
    "1" * 5000,
    "4.9e-324",
    "0.30000000000000004",
]


@pytest.mark.parametrize("text", JSON_EDGES)
def test_json_edge_cases_read_as_before(text: str) -> None:
    for raw in (text, text.encode()):
        with hooks_only():
            expected = outcome(lambda raw=raw: s._loads(raw))
        got = outcome(lambda raw=raw: s._loads(raw))
        assert got[0] == expected[0]
        assert got == expected if got[0] == "error" else same(got[1], expected[1])


@settings(max_examples=examples(300), deadline=None)
@given(strategies.json_values)
def test_json_values_read_as_before(value: Any) -> None:
    text = json.dumps(value, ensure_ascii=False)
    with hooks_only():
        expected = s._loads(text)
    assert same(s._loads(text), expected)


def test_jsonl_errors_are_unchanged() -> None:
    header = json.dumps({"format": "canisters.conversation", "version": 2})
    for text in (
        f"{header}\n{json.dumps(GOOD)}\n{{broken\n",
        f"{header}\n{json.dumps({**GOOD, 'step': -1})}\n",
        f"{header}\n{json.dumps({**GOOD, 'role': 'robot'})}\n",
        f'{{"format": "canisters.conversation", "version": 2.0}}\n{json.dumps(GOOD)}\n',
        f'{{"format": "canisters.conversation", "version": 1}}\n{json.dumps(GOOD)}\n',
        f"{header}\r\n{json.dumps(GOOD)}\r\n\r\n",
        "\n\n",
        b"\xff\xfe",
    ):
        check_against_hooks(text, c.from_jsonl)


def test_replacing_a_built_in_hook_turns_the_fast_path_off(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(w, "_FAST", [])
    monkeypatch.setitem(s._CONTENT_IN, "text", s._CONTENT_IN["text"])
    monkeypatch.setitem(s._CONTENT_OUT, c.Text, s._CONTENT_OUT[c.Text])
    assert w.fast() is not None

    def shout(record: Any) -> c.Text:
        return c.Text(str(record["text"]).upper())

    s.register_content(
        c.Text, "text", unstructure=lambda part: {"text": part.text}, structure=shout
    )
    assert w.fast() is None
    assert c.from_json(c.to_json(c.User("hi"))).content == (c.Text("HI"),)


# Timestamps in every form Python 3.11's fromisoformat reads, with the value it
# gives, but for a fraction of more than six digits, which is rounded half up to
# the microsecond; the library reads them alike on every supported Python (3.10
# through a backport), on the fast path (msgspec reads the RFC 3339 forms) and
# through the hooks.
TIMESTAMP_FORMS = [
    ("2025-01-01T00:00:00.5Z", datetime(2025, 1, 1, 0, 0, 0, 500000, timezone.utc)),
    ("2025-01-01T00:00:00z", datetime(2025, 1, 1, tzinfo=timezone.utc)),
    ("20250101T000000Z", datetime(2025, 1, 1, tzinfo=timezone.utc)),
    (
        "2025-01-01T00:00:00.123456789+00:00",
        datetime(2025, 1, 1, 0, 0, 0, 123457, timezone.utc),
    ),
    (
        "2025-01-01T00:00:00.1234565Z",
        datetime(2025, 1, 1, 0, 0, 0, 123457, timezone.utc),
    ),
    (
        "2025-01-01T00:00:00.123456499999+00:00",
        datetime(2025, 1, 1, 0, 0, 0, 123456, timezone.utc),
    ),
    ("2025-12-31T23:59:59.9999995Z", datetime(2026, 1, 1, tzinfo=timezone.utc)),
    (
        "2025-01-01T00:00:00,1234567-02:00",
        datetime(2025, 1, 1, 0, 0, 0, 123457, timezone(timedelta(hours=-2))),
    ),
    (
        "2025-01-01 12:30+0530",
        datetime(2025, 1, 1, 12, 30, tzinfo=timezone(timedelta(hours=5, minutes=30))),
    ),
    ("2025-W01-3T00:00Z", datetime(2025, 1, 1, tzinfo=timezone.utc)),
]


@pytest.mark.parametrize(("text", "moment"), TIMESTAMP_FORMS)
def test_timestamps_read_alike_on_every_python(text: str, moment: datetime) -> None:
    canister = {**GOOD, "timestamp": text}
    document = json.dumps(
        {"format": "canisters.canister", "version": 2, "canister": canister}
    )
    fast = c.from_json(document)
    with hooks_only():
        slow = c.from_json(document)
    assert fast.timestamp == slow.timestamp == moment
    assert fast.timestamp.utcoffset() == moment.utcoffset()
    # The offset is the standard library's, on either path and every Python
    # (3.10's backport has a class of its own), timezone.utc for zero.
    assert type(fast.timestamp.tzinfo) is type(slow.timestamp.tzinfo) is timezone
    if not moment.utcoffset():
        assert fast.timestamp.tzinfo is slow.timestamp.tzinfo is timezone.utc


_OFFSETS = {
    "Z": timezone.utc,
    "z": timezone.utc,
    "+00:00": timezone.utc,
    "-00:00": timezone.utc,
    "+05:30": timezone(timedelta(hours=5, minutes=30)),
    "-11:45": timezone(-timedelta(hours=11, minutes=45)),
}


@settings(max_examples=examples(200), deadline=None)
@given(
    seconds=st.integers(0, 10**11),
    fraction=st.text("0123456789", min_size=1, max_size=12),
    offset=st.sampled_from(sorted(_OFFSETS)),
    separator=st.sampled_from(["T", "t", " "]),
)
def test_the_fast_path_and_the_hooks_read_every_fraction_alike(
    seconds: int, fraction: str, offset: str, separator: str
) -> None:
    """Whatever the digits of the fraction (msgspec rounds them on the fast path,
    the hooks round what fromisoformat truncates), the same instant."""
    moment = datetime(1970, 1, 1, tzinfo=timezone.utc) + timedelta(seconds=seconds)
    text = moment.strftime(f"%Y-%m-%d{separator}%H:%M:%S.") + fraction + offset
    document = json.dumps(
        {
            "format": "canisters.canister",
            "version": 2,
            "canister": {**GOOD, "timestamp": text},
        }
    )
    fast = c.from_json(document)
    with hooks_only():
        slow = c.from_json(document)
    digits = (fraction + "000000")[:6]
    exact = moment.replace(
        microsecond=int(digits), tzinfo=_OFFSETS[offset]
    ) + timedelta(microseconds=len(fraction) > 6 and fraction[6] >= "5")
    assert fast.timestamp == slow.timestamp == exact
    assert fast.timestamp.utcoffset() == slow.timestamp.utcoffset()
    # Every one of these forms is RFC 3339: the fast path reads it itself.
    reader = w.fast()
    assert reader is not None
    assert reader.from_json(document).timestamp == exact  # type: ignore[union-attr]


# --------------------------------------------------------------------------- #
# The depth bound: the fast path and the hooks accept and refuse the same


def _deep(levels: int) -> list[Any]:
    value: list[Any] = []
    for _ in range(levels - 1):
        value = [value]
    return value


def _one_deeper(text: str) -> str:
    """``text`` (a document, or JSONL) with every value of a ``"v"`` key one
    level deeper."""
    if text.count("\n") > 1:
        return "\n".join(_one_deeper(line) for line in text.splitlines())
    document = json.loads(text)
    stack = [document]
    while stack:
        item = stack.pop()
        if isinstance(item, dict):
            if "v" in item:
                item["v"] = [item["v"]]
            else:
                stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)
    return json.dumps(document)


# Each place the model holds a JSON value, holding one ({"v": ...}) that reaches
# MAX_DEPTH in the conversation document: the deeper the place, the shallower.
AT_THE_BOUND = [
    c.User("hi", extras={"v": _deep(s.MAX_DEPTH - 4)}),
    c.Invocation(name="f", arguments={"v": _deep(s.MAX_DEPTH - 4)}, invocation_id="i"),
    c.Assistant("hi", metadata=c.Metadata(custom={"v": _deep(s.MAX_DEPTH - 5)})),
    c.Result(
        invocation_id="i",
        name="f",
        error=c.ErrorInfo(code="x", message="m", details={"v": _deep(s.MAX_DEPTH - 5)}),
    ),
    c.User((c.Text("a", extras={"v": _deep(s.MAX_DEPTH - 6)}),)),
]


@pytest.mark.parametrize(
    "canister", AT_THE_BOUND, ids=["extras", "arguments", "custom", "details", "part"]
)
def test_fast_path_and_hooks_hold_values_to_the_same_depth(
    canister: c.Canister,
) -> None:
    texts = [
        (c.to_json(c.Conversation((canister,))), c.from_json),
        (c.to_json(canister), c.from_json),
        (c.to_jsonl([canister]), c.from_jsonl),
    ]
    if len(getattr(canister, "content", ())) == 1 and canister.content[0].extras:  # type: ignore[attr-defined]
        texts.append((c.to_json(canister.content[0]), c.from_json))  # type: ignore[attr-defined]
    for text, reader in texts:
        check_against_hooks(text, reader)
        assert outcome(lambda text=text, reader=reader: reader(text))[0] == "value"
        deeper = _one_deeper(text)
        check_against_hooks(deeper, reader)
        refused = outcome(lambda text=deeper, reader=reader: reader(text))
        assert refused[0] == "error" and "nested too deeply" in refused[1][1]


# --------------------------------------------------------------------------- #
# JSON values nesting deeply, wherever the model holds them


DEEP_PLACES: dict[str, Callable[[Any], c.Canister]] = {
    "a canister's extras": lambda v: c.User("hi", extras={"v": v}),
    "an invocation's arguments": lambda v: c.Invocation(
        "f", {"v": v}, invocation_id="call"
    ),
    "metadata's custom": lambda v: c.Assistant(
        "a", metadata=c.Metadata(model="m", custom={"v": v})
    ),
    "an error's details": lambda v: c.Result(
        "call", "f", error=c.ErrorInfo("tool_error", "m", details={"v": v})
    ),
    "a text part's extras": lambda v: c.User((c.Text("a", extras={"v": v}),)),
    "an image's extras": lambda v: c.User(
        (c.Image(url="https://example.com/a.png", extras={"v": v}),)
    ),
    "a reasoning part's extras": lambda v: c.Assistant(
        (c.Reasoning("r", extras={"v": v}),)
    ),
}


@pytest.mark.parametrize("depth", [3, 488, 495, 500, 3000])
@pytest.mark.parametrize("place", DEEP_PLACES)
def test_values_nesting_deeply_anywhere_read_as_the_hooks_read_them(
    place: str, depth: int
) -> None:
    """The fast path leaves every document holding a value that may nest too
    deeply to the hooks, wherever the value is held; a value that may not, it
    reads itself, as the hooks do."""
    canister = DEEP_PLACES[place]("PLACEHOLDER")
    nested = "[" * depth + "]" * depth
    others = [c.User("before"), c.Assistant("after", metadata=c.Metadata(model="m"))]
    conversation = c.Conversation((others[0], canister, others[1]))
    for text, reader in (
        (c.to_json(conversation), c.from_json),
        (c.to_json(canister), c.from_json),
        (c.to_jsonl(conversation), c.from_jsonl),
    ):
        deep_text = text.replace('"PLACEHOLDER"', nested)
        check_against_hooks(deep_text, reader)
        if depth == 3:  # far from the bound: the fast path reads it
            wire = fast().from_json if reader is c.from_json else fast().from_jsonl
            assert same(wire(deep_text), reader(deep_text))
        if depth >= 500:  # beyond the bound in every form
            with pytest.raises(c.SerializationError, match="nested too deeply"):
                reader(deep_text)


@pytest.mark.parametrize("running", [True, False])
def test_reading_leaves_the_garbage_collector_as_it_found_it(running: bool) -> None:
    """The readers pause the cyclic garbage collector while they build, and give
    it back as they found it: running, or paused by the application, whether
    the document is read or refused."""
    conversation = c.Conversation([c.User("hi"), c.Assistant("hello")])
    documents = [
        (c.to_json(conversation), c.from_json),
        (c.to_jsonl(conversation), c.from_jsonl),
        (
            '{"format": "canisters.conversation", "version": 1, "canisters": [1]}',
            c.from_json,
        ),
        ("not json", c.from_jsonl),
    ]
    seen: list[bool] = []
    was = gc.isenabled()
    try:
        (gc.enable if running else gc.disable)()
        for text, reader in documents:
            try:
                assert reader(text) == conversation
            except c.SerializationError:
                pass
            seen.append(gc.isenabled())
    finally:
        (gc.enable if was else gc.disable)()
    assert seen == [running] * len(documents)


@attrs.frozen
class Watched(c.User):
    """A canister whose out hook notes whether the collector runs."""


_WATCHED: list[bool] = []


def _watched_out(canister: Watched) -> dict[str, Any]:
    _WATCHED.append(gc.isenabled())
    return {"role": "gc-watched", "id": canister.id}


c.register_canister(
    Watched, "gc-watched", unstructure=_watched_out, structure=lambda r: Watched("x")
)


@pytest.mark.parametrize("running", [True, False])
def test_writers_pause_the_collector_and_give_it_back(running: bool) -> None:
    """to_json and to_jsonl pause the cyclic garbage collector while they write
    (a registered hook sees it paused), and give it back as they found it,
    whether the value is written or refused."""
    seen = _WATCHED
    seen.clear()
    refused = c.Conversation([c.Invocation("f", {"x": object()})])
    after: list[bool] = []
    was = gc.isenabled()
    try:
        (gc.enable if running else gc.disable)()
        c.to_json(c.Conversation([Watched("x")]))
        after.append(gc.isenabled())
        c.to_jsonl([Watched("x")])
        after.append(gc.isenabled())
        for write in (c.to_json, c.to_jsonl):
            with pytest.raises(c.SerializationError):
                write(refused)
            after.append(gc.isenabled())
    finally:
        (gc.enable if was else gc.disable)()
    assert seen == [False, False]
    assert after == [running] * 4


def test_the_header_to_jsonl_writes_is_known_without_decoding(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """from_jsonl knows the header line to_jsonl writes by its text; a current
    header spelled otherwise is decoded, and the conversation reads the same."""
    conversation = c.Conversation(
        [c.User("hi", id="u", timestamp=datetime(2025, 1, 1, tzinfo=timezone.utc))]
    )
    text = c.to_jsonl(conversation)
    assert text.startswith(w._HEADER_LINE)
    assert w._HEADER_LINE.encode() == w._HEADER_LINE_BYTES
    decoded: list[Any] = []
    path = fast()
    real = path.any
    monkeypatch.setattr(path, "any", lambda data: decoded.append(data) or real(data))
    assert c.from_jsonl(text) == conversation
    assert c.from_jsonl(text.encode()) == conversation
    assert decoded == []
    rest = text[len(w._HEADER_LINE) - 1 :]  # from the header's newline on
    for header in (
        '{"version": 2, "format": "canisters.conversation"}',
        '{"format":"canisters.conversation","version":2} ',
    ):
        assert c.from_jsonl(header + rest) == conversation
    assert len(decoded) == 2


@pytest.mark.parametrize("running", [True, False])
@pytest.mark.parametrize("form", ["json", "jsonl"])
def test_documents_are_read_and_written_with_the_collector_paused(
    running: bool, form: str
) -> None:
    """Reading and writing a document make thousands of containers without
    cycles: no collection starts while they are made, however low the
    collector's threshold, and the collector is given back as it was found
    (running, or paused by the application), when the text is refused too."""
    from .test_providers_registry import _collections_during

    read = c.from_json if form == "json" else c.from_jsonl
    write = c.to_json if form == "json" else c.to_jsonl
    conversation = c.Conversation(
        [item for n in range(50) for item in (c.User(f"q{n}"), c.Assistant(f"a{n}"))]
    )
    text = write(conversation)
    out: list[Any] = []

    def refused() -> None:
        with pytest.raises(c.SerializationError):
            read('{"format": "canisters.conversation", "version": 2, ')

    was = gc.isenabled()
    try:
        (gc.enable if running else gc.disable)()
        # Calling them may make a container before the collector pauses.
        few = ((0, running), (1, running))
        assert _collections_during(lambda: out.append(read(text))) in few
        assert _collections_during(lambda: out.append(write(conversation))) in few
        assert out == [conversation, text]
        assert _collections_during(refused)[1] is running
    finally:
        (gc.enable if was else gc.disable)()
