"""Property-based fuzzing of every input the library parses (issue 13).

Real provider bodies (``data/providers``) and the library's own documents are
mutated -- a value replaced by a hostile one, a key dropped, an item repeated --
and fed to the public parsers. Only the library's exceptions may escape, each
with a path, and whatever parses also serializes and reads back exactly.

The number of examples is modest for CI; ``CANISTERS_FUZZ_EXAMPLES`` raises it
for a longer local run.
"""

from __future__ import annotations

import copy
import json
import math
import os
import re
import warnings
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from canisters import (
    CanistersError,
    Conversation,
    MalformedPayload,
    SerializationError,
    providers,
    serialization,
)
from canisters.providers import Report, streams

from .budget import examples

EXAMPLES = int(os.environ.get("CANISTERS_FUZZ_EXAMPLES", "150"))
FUZZ = settings(
    max_examples=examples(EXAMPLES),
    deadline=None,
    derandomize=True,  # the same examples on every run: CI stays reproducible
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)

DATA = Path(__file__).parent / "data" / "providers"
CASES = [
    (path.parent.name, case["kind"], case["payload"])
    for path in sorted(DATA.glob("*/*.json"))
    if (case := json.loads(path.read_text()))["kind"] in ("request", "response")
]

nested: Any = "deep"
for _ in range(60):
    nested = {"a": [nested]}
HOSTILE: list[Any] = [
    None,
    True,
    0,
    -1,
    1,
    2**64,
    10**400,
    1.5,
    math.nan,
    math.inf,
    -math.inf,
    "",
    "x",
    "\ud800",
    "\udc00 lone",
    "é" * 3,
    "data:image/png;base64,!!",
    "https://example.com/a.png",
    "sha256:" + "0" * 64,
    "not a url " + "u" * 5000,
    [],
    [None],
    [[]],
    {},
    {"type": []},
    {"type": "text"},
    {"role": []},
    {"type": {}},
    nested,
]
# The bare exception types a parser's safety net would name: never expected.
STRAY = re.compile(
    r"^(KeyError|TypeError|ValueError|AttributeError|IndexError|RecursionError|"
    r"OverflowError|UnicodeEncodeError|UnicodeDecodeError): "
)


def places(value: Any, path: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    """Every path to a value inside ``value`` (keys and indexes), root first."""
    found = [path]
    if isinstance(value, dict):
        for key, item in value.items():
            found += places(item, (*path, key))
    elif isinstance(value, list):
        for index, item in enumerate(value):
            found += places(item, (*path, index))
    return found


def mutated(value: Any, path: tuple[Any, ...], operation: str, new: Any) -> Any:
    """A copy of ``value`` with the item at ``path`` replaced, dropped or doubled."""
    if not path:
        return new if operation == "replace" else value
    head, rest = path[0], path[1:]
    copy: Any = dict(value) if isinstance(value, dict) else list(value)
    if rest:
        copy[head] = mutated(value[head], rest, operation, new)
    elif operation == "replace":
        copy[head] = new
    elif operation == "drop":
        del copy[head]
    elif isinstance(copy, list):
        copy.insert(head, copy[head])
    else:
        copy[f"{head}_"] = copy[head]  # an unknown key beside a known one
    return copy


@st.composite
def mutations(draw: st.DrawFn, document: Any) -> Any:
    for _ in range(draw(st.integers(1, 3))):
        path = draw(st.sampled_from(places(document)))
        operation = draw(st.sampled_from(["replace", "replace", "drop", "double"]))
        document = mutated(document, path, operation, draw(st.sampled_from(HOSTILE)))
    return document


def written(value: Any) -> str:
    return serialization.to_json(value)


def assert_located(
    error: CanistersError, *, root: bool = True, near: str | None = None
) -> None:
    """A refusal is the library's own, says where, and is not a stray exception;
    ``root``: whether it may be located at the document's root ``$``; ``near``:
    the path of the field that was changed, which it must locate (see _near)."""
    assert not STRAY.match(getattr(error, "reason", str(error))), error
    path = getattr(error, "path", None)
    if isinstance(error, (MalformedPayload, SerializationError)):
        assert isinstance(path, str) and path, error
        # A path in the document, a line of a stream, or in an OpenTelemetry
        # attribute (named before its own path).
        assert path.startswith(("$", "line ", "gen_ai.")), error
        assert root or path != "$", error
        assert near is None or _near(path, near), (near, error)
    assert len(str(error)) < 2_000, "a message quotes a whole value"


def assert_round_trips(conversation: Conversation) -> None:
    """Written, read back and written again: the same document, the same JSONL."""
    document = written(conversation)
    assert written(serialization.from_json(document)) == document
    assert written(serialization.from_json(document.encode())) == document
    lines = serialization.to_jsonl(conversation)
    assert serialization.to_jsonl(serialization.from_jsonl(lines)) == lines


@FUZZ
@given(st.data())
def test_mutated_provider_bodies_parse_or_are_refused_with_a_path(
    data: st.DataObject,
) -> None:
    name, kind, payload = data.draw(st.sampled_from(CASES), label="case")
    body = data.draw(mutations(payload), label="body")
    normalizer = providers.get(name)
    parse = normalizer.parse_request if kind == "request" else normalizer.parse_response
    try:
        conversation = parse(body)
    except CanistersError as error:
        # Only what is wrong with the body as a whole is reported at its root.
        assert_located(error, root=not isinstance(body, dict))
        return
    assert_round_trips(conversation)


def documents() -> list[Any]:
    """The library's own documents: every recorded body parsed and written."""
    found = []
    for name, kind, payload in CASES:
        normalizer = providers.get(name)
        parse = (
            normalizer.parse_request if kind == "request" else normalizer.parse_response
        )
        try:
            found.append(json.loads(written(parse(payload))))
        except CanistersError:  # recorded error bodies
            continue
    return found


DOCUMENTS = documents()


@FUZZ
@given(st.data())
def test_mutated_documents_read_or_are_refused_with_a_path(data: st.DataObject) -> None:
    document = data.draw(mutations(data.draw(st.sampled_from(DOCUMENTS))))
    text = json.dumps(document, ensure_ascii=data.draw(st.booleans()))
    try:
        read = serialization.from_json(text)
    except CanistersError as error:
        assert_located(error)
    else:
        first = written(read)
        assert written(serialization.from_json(first)) == first
    records = document.get("canisters") if isinstance(document, dict) else None
    if isinstance(records, list):
        header = {key: value for key, value in document.items() if key != "canisters"}
        lines = "\n".join(json.dumps(line) for line in [header, *records]) + "\n"
        try:
            conversation = serialization.from_jsonl(lines)
        except CanistersError as error:
            assert_located(error)
        else:
            assert_round_trips(conversation)


def _interop_documents() -> list[tuple[str, Any]]:
    """Each recorded body's conversation as the other libraries write it:
    LangChain's and pydantic-ai's JSON, OpenTelemetry's GenAI attributes."""
    from canisters.interop import langchain, otel, pydantic_ai

    writers: dict[str, Any] = {
        "langchain": lambda c: json.loads(langchain.to_json(c, report=Report())),
        "pydantic-ai": lambda c: json.loads(pydantic_ai.to_json(c, report=Report())),
        "otel": lambda c: otel.to_otel(c, report=Report()),
    }
    found = []
    for document in DOCUMENTS:
        conversation = serialization.from_json(json.dumps(document))
        for form, write in writers.items():
            try:
                found.append((form, write(conversation)))
            except SerializationError:  # an image URL some pydantic-ai cannot write
                continue
    return found


INTEROP = _interop_documents()


@FUZZ
@given(st.data())
def test_mutated_interop_documents_read_or_are_refused(data: st.DataObject) -> None:
    """What LangChain, pydantic-ai and OpenTelemetry hand over, mutated: read
    into canisters that round-trip, or refused with the library's own error."""
    from canisters.interop import langchain, otel, pydantic_ai

    form, written_by = data.draw(st.sampled_from(INTEROP), label="document")
    document = data.draw(mutations(written_by), label="mutated")
    try:
        if form == "otel":
            conversation = otel.from_otel(document)
        elif form == "langchain":
            conversation = langchain.from_json(json.dumps(document))
        else:
            conversation = pydantic_ai.from_json(json.dumps(document))
    except CanistersError as error:
        assert_located(error)
        return
    assert_round_trips(conversation)


def test_the_fuzzed_inputs_cover_every_provider_and_hostile_kind() -> None:
    assert {name for name, _kind, _payload in CASES} == set(providers.names()) - {
        name for name in providers.names() if not (DATA / name).is_dir()
    }
    assert len(DOCUMENTS) >= 50
    kinds = {type(value) for value in HOSTILE}
    assert {type(None), bool, int, float, str, list, dict} <= kinds


# Streams --------------------------------------------------------------------------

WIRES = [
    (path.parent.name, path.read_bytes())
    for path in sorted((DATA.parent / "streams").glob("*/*"))
    if path.suffix in (".sse", ".ndjson")
]
STREAMS = [(name, list(streams.read_events(wire))) for name, wire in WIRES]


@FUZZ
@given(st.data())
def test_raw_streams_with_bytes_changed_read_or_are_refused(
    data: st.DataObject,
) -> None:
    """Recorded raw streams with bytes changed, cut out or put in, given whole
    or in chunks: read into a reply, or refused with the library's error."""
    name, wire = data.draw(st.sampled_from(WIRES), label="stream")
    changed = bytearray(wire)
    for _ in range(data.draw(st.integers(1, 4))):
        at = data.draw(st.integers(0, len(changed) - 1))
        edit = data.draw(st.sampled_from(["set", "cut", "put"]))
        byte = data.draw(st.sampled_from(list(b'{}[]":,\n\r \x00\xff\xc3ae0')))
        if edit == "set":
            changed[at] = byte
        elif edit == "cut":
            del changed[at : at + data.draw(st.integers(1, 40))]
        else:
            changed.insert(at, byte)
    size = data.draw(st.sampled_from([0, 1, 7, 4096]))
    given = bytes(changed)
    chunks: Any = (
        given if not size else [given[n : n + size] for n in range(0, len(given), size)]
    )
    try:
        conversation = providers.get(name).parse_stream(  # type: ignore[attr-defined]
            streams.read_events(chunks), truncated="keep"
        )
    except CanistersError as error:
        assert_located(error)
        return
    assert_round_trips(conversation)


@FUZZ
@given(st.data())
def test_mutated_streams_accumulate_or_are_refused_with_a_path(
    data: st.DataObject,
) -> None:
    """Recorded streams with events changed, dropped or repeated: fed one event
    at a time with a snapshot now and then, and finished keeping what was
    complete, they give a reply or the library's error naming the event."""
    name, recorded = data.draw(st.sampled_from(STREAMS), label="stream")
    events = data.draw(mutations(recorded), label="events")
    normalizer = providers.get(name)
    if not isinstance(events, list):
        with pytest.raises(CanistersError) as caught:
            normalizer.parse_stream(events)  # type: ignore[attr-defined]
        assert_located(caught.value)
        return
    accumulator = normalizer.accumulator()  # type: ignore[attr-defined]
    kept = copy.deepcopy(events)
    try:
        for number, event in enumerate(events):
            accumulator.feed(event)
            if number % 3 == 0:
                accumulator.snapshot()
        conversation = accumulator.finish(truncated="keep", report=Report())
    except CanistersError as error:
        assert_located(error)
        return
    finally:
        assert events == kept, "the accumulator changed the caller's events"
    assert_round_trips(conversation)


def test_the_fuzzed_streams_cover_every_streaming_provider() -> None:
    # No stream an Open Responses server sent was found recorded (the
    # conformance test's THIN says so too): its events are OpenAI Responses'
    # own, which are fuzzed.
    unrecorded = {"open-responses"}
    assert {name for name, _events in STREAMS} == set(providers.names()) - unrecorded
    assert all(events for _name, events in STREAMS)


@pytest.mark.parametrize("value", HOSTILE, ids=repr)
def test_every_hostile_value_in_an_argument_round_trips(value: Any) -> None:
    body = {
        "messages": [
            {"role": "user", "content": "hi"},
            {
                "role": "assistant",
                "tool_calls": [
                    {
                        "id": "c1",
                        "type": "function",
                        "function": {"name": "f", "arguments": "{}"},
                        "extra": value,
                    }
                ],
            },
        ]
    }
    try:
        conversation = providers.get("openai-chat").parse_request(body)
    except CanistersError as error:
        assert_located(error)
        return
    assert_round_trips(conversation)


# Every field of the recorded bodies, one by one ------------------------------------

# The values the field-by-field test puts in place of each field: JSON's other
# kinds of value where a field expects one (1e400 reads as an infinite float).
FIELD_VALUES: list[Any] = [[], {}, json.loads("1e400"), "x" * 10, None]


def _shape(path: tuple[Any, ...]) -> tuple[Any, ...]:
    return tuple("*" if isinstance(step, int) else step for step in path)


def _field_cases() -> list[tuple[str, str, Any, tuple[Any, ...]]]:
    """Each field of each provider's recorded bodies, once per shape of its path
    (``$.messages[*].content[*].type``) and kind of body."""
    seen: set[tuple[str, str, tuple[Any, ...]]] = set()
    found = []
    for name, kind, payload in CASES:
        for path in places(payload)[1:]:
            key = (name, kind, _shape(path))
            if key not in seen:
                seen.add(key)
                found.append((name, kind, payload, path))
    return found


FIELD_CASES = _field_cases()


def _path_text(path: tuple[Any, ...]) -> str:
    return "$" + "".join(
        f"[{step}]" if isinstance(step, int) else f".{step}" for step in path
    )


_LAST_STEP = re.compile(r"(\.[^.\[]+|\[\d+\])$")


def _near(reported: str, field: str) -> bool:
    """Whether ``reported`` names the changed ``field``, a place holding it, a
    place inside it, or a field beside it (an item's ``type`` decided by its
    ``role``)."""
    return (
        field.startswith(reported)
        or reported.startswith(field)
        or _LAST_STEP.sub("", reported) == _LAST_STEP.sub("", field)
    )


@pytest.mark.parametrize("provider", sorted({name for name, *_ in FIELD_CASES}))
def test_every_field_of_every_body_changed_is_refused_at_its_path(
    provider: str,
) -> None:
    """Each field of the recorded bodies set to a value of another kind parses,
    or is refused with the library's error located at (or beside) that field,
    never at the root ``$``; what parses round-trips."""
    checked = 0
    for name, kind, payload, path in FIELD_CASES:
        if name != provider:
            continue
        normalizer = providers.get(name)
        parse = (
            normalizer.parse_request if kind == "request" else normalizer.parse_response
        )
        try:
            parse(payload)
        except CanistersError:
            whole = False  # an error body: refused as a whole, wherever it is changed
        else:
            whole = True
        field = _path_text(path)
        for value in FIELD_VALUES:
            checked += 1
            try:
                conversation = parse(mutated(payload, path, "replace", value))
            except CanistersError as error:
                assert_located(error, root=False, near=field if whole else None)
                continue
            assert_round_trips(conversation)
    # The reasoning servers' bodies are OpenAI Chat's plainest shapes, with one
    # field more: fewer distinct paths.
    assert checked >= (350 if provider == "openai-chat-reasoning" else 400)


# Whole requests ---------------------------------------------------------------------

REQUESTS = [(name, payload) for name, kind, payload in CASES if kind == "request"]
# Hostile values for the settings only a whole request reads.
SETTINGS = ["tool_choice", "response_format", "generationConfig", "text", "format",
            "temperature", "stop", "metadata", "thinking", "reasoning"]  # fmt: skip
KEYWORDS = ["type", "format", "anyOf", "oneOf", "allOf", "properties", "items",
            "required", "enum", "const", "nullable", "$ref", "$defs"]  # fmt: skip
SCHEMA_LEAVES = st.sampled_from(
    [None, True, 5, 1.5, "string", "object", "null", "date-time", "#/$defs/a", ""]
)
SCHEMAS = st.recursive(
    SCHEMA_LEAVES,
    lambda inner: st.one_of(
        st.lists(inner, max_size=3),
        st.dictionaries(st.sampled_from(KEYWORDS), inner, max_size=4),
        st.dictionaries(st.sampled_from(["a", "b"]), inner, max_size=2),
    ),
    max_leaves=20,
)


def _tools(provider: str, schema: Any) -> tuple[str, Any]:
    """A request's tools, of ``provider``'s shape, with ``schema`` as the
    parameters of one function."""
    if provider == "anthropic":
        return "tools", [{"name": "f", "input_schema": schema}]
    if provider == "openai-responses":
        return "tools", [{"type": "function", "name": "f", "parameters": schema}]
    if provider == "gemini":
        key = (
            "parameters"
            if isinstance(schema, dict) and "$defs" not in schema
            else ("parametersJsonSchema")
        )
        return "tools", [{"functionDeclarations": [{"name": "f", key: schema}]}]
    return "tools", [
        {"type": "function", "function": {"name": "f", "parameters": schema}}
    ]


@FUZZ
@given(st.data())
def test_mutated_whole_requests_read_and_render_or_are_refused(
    data: st.DataObject,
) -> None:
    """Recorded request bodies mutated -- a tool's schema and the settings too
    -- read as whole requests and rendered for every provider, or refused with
    the library's error: nothing else escapes a gateway translating them."""
    name, payload = data.draw(st.sampled_from(REQUESTS), label="case")
    body = data.draw(mutations(payload), label="body")
    if isinstance(body, dict):
        if data.draw(st.booleans(), label="tools"):
            key, tools = _tools(name, data.draw(
                st.dictionaries(st.sampled_from(KEYWORDS), SCHEMAS, max_size=5),
                label="schema",
            ))  # fmt: skip
            body = {**body, key: tools}
        if data.draw(st.booleans(), label="setting"):
            key = data.draw(st.sampled_from(SETTINGS), label="key")
            body = {**body, key: data.draw(st.sampled_from(HOSTILE), label="value")}
    try:
        request = providers.get(name).parse_full_request(  # type: ignore[attr-defined]
            body
        )
    except CanistersError as error:
        assert_located(error, root=not isinstance(body, dict))
        return
    unsupported = data.draw(st.sampled_from(["drop", "error"]), label="unsupported")
    for target in sorted(providers.names()):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", providers.FidelityWarning)
            try:
                providers.get(target).render_full_request(  # type: ignore[attr-defined]
                    request, unsupported=unsupported, report=Report()
                )
            except CanistersError as error:
                refusal = str(error)
            else:
                refusal = ""
        # The net under the rendering of settings names a stray error so.
        assert "cannot render the request's settings" not in refusal, refusal
        assert not STRAY.match(refusal), refusal
