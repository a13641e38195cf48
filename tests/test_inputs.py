"""Hostile and broken input: what the library accepts, what it refuses, and how.

Issues 13 and 20. Every refusal is the library's own exception with a path; every
value accepted is written and read back exactly (see the reliability page).
"""

from __future__ import annotations

import json
import math
from datetime import datetime, timezone
from pathlib import Path
from typing import Any
from unittest import mock

import attrs
import pytest

from canisters import (
    Conversation,
    Image,
    IntegrityError,
    Invocation,
    MalformedPayload,
    ModelError,
    ProviderError,
    Result,
    SerializationError,
    Text,
    UnsupportedContent,
    User,
    providers,
    recording,
    serialization,
)
from canisters._frozen import FrozenDict
from canisters.exceptions import _EXCERPT_LIMIT, _excerpt
from canisters.providers import _common as common
from canisters.providers import openai_chat
from canisters.storage import open_store


def test_a_long_value_is_cut_in_the_message_with_its_length() -> None:
    url = "https://example.com/" + "x" * 4_000_000
    with pytest.raises(ModelError) as caught:
        Image(url="not a url " + url)
    message = str(caught.value)
    assert len(message) < 4 * _EXCERPT_LIMIT
    assert "(4,000,030 characters)" in message
    assert "'not a url https" in message  # the start of the value is kept


def test_excerpt_bounds_every_kind_of_value() -> None:
    nested: dict[str, object] = {}
    level = nested
    for _ in range(10_000):
        level["a"] = level = {}
    assert _excerpt(nested) == "{'a': {'a': {'a': {...}}}}"
    assert _excerpt(FrozenDict(a=1)) == "{'a': 1}"
    assert _excerpt("short") == "'short'"
    assert _excerpt(10**5000) == "<an integer of 16,610 bits>"
    assert _excerpt(b"\x00" * 10_000).endswith("(10,000 bytes)")
    assert _excerpt("\ud800") == "'\\ud800'"
    many = {str(i) * 300: "y" * 500 for i in range(50)}
    assert len(_excerpt(many)) < 4 * _EXCERPT_LIMIT + 40

    class Broken:
        def __repr__(self) -> str:
            raise RuntimeError("no")

    assert _excerpt(Broken()).startswith("<Broken")


# --------------------------------------------------------------------------- #
# NaN, the infinities and lone surrogates are kept exactly

NON_FINITE_TOOL_USE = """{
  "id": NaN, "type": "message", "role": "assistant", "model": "claude",
  "stop_reason": "tool_use", "odd": Infinity,
  "content": [{"type": "tool_use", "id": "toolu_1", "name": "f",
               "input": {"x": NaN, "y": Infinity, "z": -Infinity, "s": "\\ud800!"}}]
}"""


def written(value: Any) -> str:
    """The document of ``value``: equal documents mean equal values, NaN too."""
    return serialization.to_json(value)


def test_non_finite_numbers_and_lone_surrogates_survive_every_round_trip(
    tmp_path: Path,
) -> None:
    # json.loads reads NaN, Infinity and lone surrogate escapes, as the SDKs do.
    body = json.loads(NON_FINITE_TOOL_USE)
    conversation = providers.get("anthropic").parse_response(body)
    arguments = conversation[-1].arguments
    assert math.isnan(arguments["x"]) and arguments["y"] == math.inf
    assert arguments["z"] == -math.inf and arguments["s"] == "\ud800!"
    document = written(conversation)
    assert '"x":NaN,"y":Infinity,"z":-Infinity,"s":"\\ud800!"' in document
    assert written(serialization.from_json(document)) == document
    assert written(serialization.from_json(document.encode())) == document
    lines = serialization.to_jsonl(conversation)
    assert serialization.to_jsonl(serialization.from_jsonl(lines)) == lines
    store = open_store(tmp_path / "store")
    for canister in conversation:
        store.append("c", canister)
    assert written(store.load("c")) == document
    rendered = providers.get("anthropic").render_response(conversation)
    for key in ("id", "odd", "content"):  # NaN is not NaN: compare their JSON
        assert json.dumps(rendered[key]) == json.dumps(body[key])


def test_a_big_integer_and_a_lone_surrogate_together_are_written() -> None:
    part = Text("\udc00 and \ud800", extras={"n": 10**30, "nan": math.nan})
    document = written(part)
    assert written(serialization.from_json(document)) == document
    assert serialization.from_json(document) == Text(  # type: ignore[comparison-overlap]
        "\udc00 and \ud800", extras={"n": 10**30, "nan": mock.ANY}
    )


def test_a_surrogate_pair_split_in_two_code_points_is_refused_not_changed() -> None:
    with pytest.raises(SerializationError, match="surrogate pair"):
        written(Text("\ud83d\ude00"))  # JSON would read it back as one emoji


DOCUMENT = '{"format":"canisters.content","version":2,"content":{"type":"text","text":"a","extras":%s}}'
LONG_INTEGER = 1234567890123456789012


@pytest.mark.parametrize("long_integer", [False, True], ids=["fast", "fallback"])
def test_both_ways_of_reading_accept_the_same_documents(long_integer: bool) -> None:
    # A 19-digit integer sends the document to the standard library's reader.
    extra = f'"n":{LONG_INTEGER},' if long_integer else ""
    for value in ("NaN", "-Infinity", '"\\ud800"', "[1e400]"):
        part = serialization.from_json(DOCUMENT % f'{{{extra}"v":{value}}}')
        assert written(serialization.from_json(written(part))) == written(part)
    for broken in ("nan", "[1,]", '"\\ud800', "01", "[" * 10_000 + "]" * 10_000):
        with pytest.raises(SerializationError) as caught:
            serialization.from_json(DOCUMENT % f'{{{extra}"v":{broken}}}')
        assert caught.value.path == "$"


# --------------------------------------------------------------------------- #
# Depth


def nested(depth: int) -> str:
    return "[" * depth + "]" * depth


def deep(levels: int) -> list[Any]:
    """A list nesting ``levels`` levels (built without recursion)."""
    value: list[Any] = []
    for _ in range(levels - 1):
        value = [value]
    return value


def wrapped(text: str, field: str) -> str:
    """``text`` (a JSON document) with the value of every ``field`` put one
    level deeper: a document just beyond the bound, written by json.dumps."""
    document = json.loads(text)
    stack = [document]
    while stack:
        item = stack.pop()
        if isinstance(item, dict):
            if field in item:
                item[field] = [item[field]]
                continue
            stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)
    return json.dumps(document)


# A value in a canister's extras sits four levels down in a conversation
# document ({"canisters": [{"extras": {"v": ...}}]}), one in a part's extras six.
AT_BOUND = serialization.MAX_DEPTH - 4


@pytest.mark.parametrize("backend", ["files", "sqlite"])
def test_the_depth_bound_is_one_for_every_form_and_every_python(
    backend: str, tmp_path: Path
) -> None:
    """MAX_DEPTH counted in the conversation document: each form (document,
    canister document, content document, JSONL, a store, a snapshot) accepts a
    value at the bound and refuses one level more, writing and reading."""
    at_bound = User("hi", extras={"v": deep(AT_BOUND)})
    beyond = User("hi", extras={"v": deep(AT_BOUND + 1)})
    part = Text("a", extras={"v": deep(AT_BOUND - 2)})
    part_beyond = Text("a", extras={"v": deep(AT_BOUND - 1)})
    conversation = Conversation((at_bound, User((part,))))
    for value, field in ((conversation, "v"), (at_bound, "v"), (part, "v")):
        text = written(value)
        assert serialization.from_json(text) == value
        assert serialization.from_json(text.encode()) == value
        with pytest.raises(SerializationError, match="nested too deeply"):
            serialization.from_json(wrapped(text, field))
    for value in (Conversation((beyond,)), beyond, part_beyond):
        with pytest.raises(SerializationError, match="nested too deeply"):
            written(value)  # type: ignore[arg-type]
    lines = serialization.to_jsonl(conversation)
    assert serialization.from_jsonl(lines) == conversation
    with pytest.raises(SerializationError, match="nested too deeply") as caught:
        serialization.from_jsonl(
            "\n".join(wrapped(line, "v") for line in lines.splitlines())
        )
    assert caught.value.path == "line 2"
    with pytest.raises(SerializationError, match="nested too deeply"):
        serialization.to_jsonl([beyond])
    location = (
        str(tmp_path / "store")
        if backend == "files"
        else f"sqlite:///{tmp_path / 'store.db'}"
    )
    with open_store(location) as store:
        store.extend("c", conversation)
        with pytest.raises(SerializationError, match="nested too deeply"):
            store.append("c", beyond)
        assert store.load("c") == conversation
        assert store.verify("c").ok
        snapshot = recording.snapshot(store, "c")
        with open_store(tmp_path / "other") as other:
            recording.restore(other, snapshot)
            assert other.load("c") == conversation


def test_a_stored_record_nesting_too_deeply_is_unreadable(tmp_path: Path) -> None:
    with open_store(tmp_path / "store") as store:
        store.append("c", User("hi", extras={"v": deep(AT_BOUND)}))
        log = tmp_path / "store" / "conversations" / "c" / "messages.jsonl"
        line = log.read_bytes()
        # One level more, as a hand edit would put it (the digest no longer
        # matters: the depth is seen first).
        log.write_bytes(line.replace(b'"v":[', b'"v":[[', 1).replace(b"]}", b"]]}", 1))
        with pytest.raises(IntegrityError, match="nested too deeply"):
            store.load("c")


def test_json_nested_ten_thousand_deep_is_refused_by_every_reader() -> None:
    deep = nested(10_000)
    with pytest.raises(SerializationError, match="nested too deeply"):
        serialization.from_json(DOCUMENT % f'{{"n":{LONG_INTEGER},"v":{deep}}}')
    header = '{"format":"canisters.conversation","version":2}'
    record = '{"role":"user","id":"a","timestamp":"2024-01-01T00:00:00+00:00","extras":{"v":%s}}'
    with pytest.raises(SerializationError, match="nested too deeply") as caught:
        serialization.from_jsonl(f"{header}\n{record % deep}\n")
    assert caught.value.path == "line 2"
    call = {
        "id": "c",
        "type": "function",
        "function": {"name": "f", "arguments": '{"a":' + deep + "}"},
    }
    with pytest.raises(MalformedPayload) as refused:
        providers.get("openai-chat").parse_request(
            {"messages": [{"role": "assistant", "tool_calls": [call]}]}
        )
    assert refused.value.path == "$.messages[0].tool_calls[0].function.arguments"
    assert "nested too deeply" in str(refused.value)


PROVIDER_DATA = Path(__file__).parent / "data" / "providers"


def _first_bodies() -> list[tuple[str, str, dict[str, Any]]]:
    """The first recorded request and response body of each provider that parses."""
    found = {}
    for path in sorted(PROVIDER_DATA.glob("*/*.json")):
        case = json.loads(path.read_text(encoding="utf-8"))
        name, kind = path.parent.name, case["kind"]
        if kind not in ("request", "response") or (name, kind) in found:
            continue
        normalizer = providers.get(name)
        parse = (
            normalizer.parse_request if kind == "request" else normalizer.parse_response
        )
        try:
            parse(case["payload"])
        except ProviderError:  # an error body
            continue
        found[name, kind] = case["payload"]
    return [(name, kind, body) for (name, kind), body in sorted(found.items())]


def _listed_key(body: dict[str, Any]) -> str:
    """The key of a request body's list of messages, which its parser reads."""
    for key in ("messages", "contents", "input"):
        if isinstance(body.get(key), list) and isinstance(body[key][0], dict):
            return key
    raise AssertionError(f"no list of messages in {sorted(body)}")


@pytest.mark.parametrize(
    ("name", "kind", "body"), _first_bodies(), ids=lambda value: str(value)[:20]
)
def test_provider_bodies_are_held_to_one_depth_bound(
    name: str, kind: str, body: dict[str, Any]
) -> None:
    """A body given as Python objects nesting 10,000 levels is refused at the
    path of the deep value (not $, never RecursionError); one at BODY_DEPTH
    parses and round-trips; one level more is refused. A response is read whole;
    a request parser reads its messages (an unknown key of one is kept), and
    what it does not read, it does not walk."""
    normalizer = providers.get(name)
    parse = normalizer.parse_request if kind == "request" else normalizer.parse_response
    if kind == "request":
        key = _listed_key(body)
        prefix, room = f"$.{key}[0].x", common.BODY_DEPTH - 2

        def holding(value: Any) -> dict[str, Any]:
            first = {**body[key][0], "x": value}
            return {**body, key: [first, *body[key][1:]]}

    else:
        prefix, room = "$.x", common.BODY_DEPTH

        def holding(value: Any) -> dict[str, Any]:
            return {**body, "x": value}

    for where, levels in ((f"{prefix}.a", 10_000), (prefix, room + 1)):
        value: Any = "leaf"
        for _ in range(levels - 1):
            value = {"a": value}
        with pytest.raises(MalformedPayload, match="nested too deeply") as caught:
            parse(holding(value))
        assert caught.value.path.startswith(where)
        if kind == "request":  # beside the messages, it is left alone
            unread = parse({**body, "unread": value})
            assert [c.role for c in unread] == [c.role for c in parse(body)]
    fits = deep(room - 1)
    conversation = parse(holding(fits))
    document = written(conversation)
    assert written(serialization.from_json(document)) == document
    assert serialization.from_jsonl(serialization.to_jsonl(conversation)) == (
        serialization.from_json(document)
    )


@pytest.mark.parametrize("levels", [200, 300, 480])
@pytest.mark.parametrize("awkward", [None, {1: "int key"}, {"big": 10**30}])
def test_the_depth_bound_holds_whatever_the_body_holds(
    levels: int, awkward: dict[Any, Any] | None
) -> None:
    """Bodies under the bound parse and one over it is refused at its path, at
    depths on both sides of the 254 levels orjson writes (which settles most
    bodies at once) and with values orjson refuses (keys that are not strings,
    integers beyond 64 bits), which are walked instead."""
    chat = providers.get("openai-chat")

    def body(value: Any) -> dict[str, Any]:
        message = {"role": "user", "content": "hi", "x": value}
        if awkward is not None:
            message["metadata"] = awkward
        return {"messages": [message]}

    assert len(chat.parse_request(body(deep(levels)))) == 1
    response: dict[str, Any] = {"choices": [], "x": deep(levels)}
    if awkward is not None:
        response["metadata"] = awkward
    assert len(chat.parse_response(response)) == 0  # read whole, and held
    too_deep = body([deep(common.BODY_DEPTH - 3)])
    with pytest.raises(MalformedPayload, match="nested too deeply") as caught:
        chat.parse_request(too_deep)
    assert caught.value.path.startswith("$.messages[0].x[0]")
    with pytest.raises(MalformedPayload, match="nested too deeply") as caught:
        chat.parse_response({**response, "x": [deep(common.BODY_DEPTH - 1)]})
    assert caught.value.path.startswith("$.x[0]")
    # The same body given by keyword is held to the same bound.
    with pytest.raises(MalformedPayload, match="nested too deeply"):
        chat.parse_request(body=too_deep)
    with pytest.raises(MalformedPayload, match="nested too deeply"):
        openai_chat.NORMALIZER.parse_request(body=too_deep)


def test_tool_call_arguments_are_held_to_their_bound() -> None:
    """An argument string holding the deepest arguments the model can write
    parses; one level more is refused at its path, as when written."""

    def body(levels: int) -> dict[str, Any]:
        call = {
            "id": "c",
            "type": "function",
            "function": {"name": "f", "arguments": json.dumps({"a": deep(levels - 1)})},
        }
        return {
            "messages": [
                {"role": "assistant", "tool_calls": [call]},
                {"role": "tool", "tool_call_id": "c", "content": "ok"},
            ]
        }

    chat = providers.get("openai-chat")
    at_bound = body(common.ARGUMENTS_DEPTH)
    conversation = chat.parse_request(at_bound)
    assert serialization.from_json(written(conversation)) == conversation
    rendered = chat.render_request(conversation)["messages"][0]["tool_calls"][0]
    sent = at_bound["messages"][0]["tool_calls"][0]["function"]["arguments"]
    assert json.loads(rendered["function"]["arguments"]) == json.loads(sent)
    with pytest.raises(MalformedPayload, match="nested too deeply") as caught:
        chat.parse_request(body(common.ARGUMENTS_DEPTH + 1))
    assert caught.value.path == "$.messages[0].tool_calls[0].function.arguments"
    arguments = {"a": deep(common.ARGUMENTS_DEPTH)}
    too_deep = Conversation(
        (
            User("hi"),
            Invocation(name="f", arguments=arguments, invocation_id="c"),
            Result(invocation_id="c", name="f", content=(Text("ok"),)),
        )
    )
    with pytest.raises(ProviderError, match="nested too deeply"):
        chat.render_request(too_deep)


def test_values_nested_beyond_orjsons_limit_are_written_and_read() -> None:
    # A content document holds the part's extras three levels down: with
    # {"v": [...]} around it, a value nesting MAX_DEPTH - 6 levels (beyond
    # orjson's 254) sits at the bound, in that document as in a conversation's.
    value = json.loads(nested(serialization.MAX_DEPTH - 6))
    part = Text("a", extras={"v": value})
    document = written(part)
    assert serialization.from_json(document) == part
    conversation = Conversation((User((part,)),))
    assert serialization.from_json(written(conversation)) == conversation
    lines = serialization.to_jsonl(conversation)
    assert serialization.from_jsonl(lines) == conversation
    deeper = Text("a", extras={"v": [value]})
    with pytest.raises(SerializationError, match="nested too deeply"):
        written(deeper)
    with pytest.raises(SerializationError, match="nested too deeply"):
        serialization.to_jsonl(Conversation((User((deeper,)),)))


def test_a_value_too_deep_to_write_raises_the_librarys_error() -> None:
    value: list[Any] = []
    for _ in range(10_000):
        value = [value]
    with pytest.raises(SerializationError, match="nested too deeply"):
        written(Text("a", extras={"v": value}))


# --------------------------------------------------------------------------- #
# Every refusal is the library's, with the exact path


def test_an_unhashable_block_type_is_refused_at_its_path() -> None:
    body = {"messages": [{"role": "assistant", "content": [{"type": []}]}]}
    with pytest.raises(MalformedPayload) as caught:
        providers.get("anthropic").parse_request(body)
    assert caught.value.path == "$.messages[0].content[0].type"
    assert caught.value.reason == "unknown block type []"


def test_an_ollama_duration_beyond_a_float_stays_in_the_envelope() -> None:
    body = {
        "model": "m",
        "message": {"role": "assistant", "content": "hi"},
        "done": True,
        "total_duration": 10**400,
    }
    normalizer = providers.get("ollama")
    reply = normalizer.parse_response(body)
    assert reply[0].metadata is not None and reply[0].metadata.latency_ms is None
    assert normalizer.render_response(reply)["total_duration"] == 10**400
    document = written(reply)
    assert written(serialization.from_json(document)) == document


@pytest.mark.parametrize(
    "field",
    [
        "total_duration",
        "load_duration",
        "prompt_eval_count",
        "prompt_eval_duration",
        "eval_count",
        "eval_duration",
    ],
)
@pytest.mark.parametrize(
    "value", [10**400, 2**64, -1, math.inf, -math.inf, math.nan, 1.5, True, "x"]
)
def test_ollama_counts_and_durations_of_any_value_are_kept(
    field: str, value: Any
) -> None:
    """Huge, negative, fractional or non-finite: the reply parses, its envelope
    keeps the value, and it is written, read back and rendered to every provider
    (never OverflowError): carried where the target has a place for it, else
    reported, and refused under ``unsupported="error"``."""
    body = {
        "model": "m",
        "message": {"role": "assistant", "content": "hi"},
        "done": True,
        field: value,
    }
    reply = providers.get("ollama").parse_response(body)
    document = written(reply)
    assert written(serialization.from_json(document)) == document
    rendered = providers.get("ollama").render_response(reply)
    assert json.dumps(rendered[field]) == json.dumps(value)
    for name in providers.names():
        report = providers.Report()
        target = providers.get(name)
        target.render_response(reply, unsupported="drop", report=report)
        if report.events:
            with pytest.raises(UnsupportedContent):
                target.render_response(reply, unsupported="error")
        else:
            target.render_response(reply, unsupported="error")


@pytest.mark.parametrize(
    ("document", "path"),
    [
        (
            '{"format":"canisters.conversation","version":1,"canisters":5}',
            "$.canisters",
        ),
        (
            '{"format":"canisters.conversation","version":1,"canisters":[{"kind":"parts","parts":5}]}',
            "$.canisters[0].parts",
        ),
        (
            '{"format":"canisters.conversation","version":1,"canisters":[{"kind":"parts","role_hint_for_llm":{"a":1}}]}',
            "$.canisters[0].role",
        ),
        (
            '{"format":"canisters.canister","version":1,"canister":{"kind":"parts","parts":{}}}',
            "$.canister.parts",
        ),
    ],
)
def test_version_1_documents_of_the_wrong_shape_are_refused_with_a_path(
    document: str, path: str
) -> None:
    with pytest.raises(SerializationError) as caught:
        serialization.from_json(document)
    assert caught.value.path == path


def test_a_version_1_jsonl_record_of_the_wrong_shape_names_its_line() -> None:
    text = '{"format":"canisters.conversation","version":1}\n\n{"kind":"parts","parts":5}\n'
    with pytest.raises(SerializationError) as caught:
        serialization.from_jsonl(text)
    assert caught.value.path == "line 3: $.parts"


@pytest.mark.parametrize("document", [None, 5, [], "text"])
def test_migrate_refuses_what_is_not_a_document(document: Any) -> None:
    with pytest.raises(SerializationError, match="expected a document object"):
        serialization.migrate(document)


def test_a_failing_migration_raises_the_librarys_error() -> None:
    def broken(document: dict[str, Any]) -> dict[str, Any]:
        raise KeyError("x" * 10_000)

    saved = serialization._MIGRATIONS[1]
    serialization.register_migration(1)(broken)
    try:
        with pytest.raises(
            SerializationError, match="migration from version 1 failed: KeyError"
        ) as caught:
            serialization.migrate({"format": "canisters.conversation", "version": 1})
        assert len(str(caught.value)) < 400
    finally:
        serialization.register_migration(1)(saved)


@pytest.mark.parametrize("name", ["openai-chat", "openai-responses"])
def test_rendering_arguments_too_deep_to_encode_raises_the_librarys_error(
    name: str,
) -> None:
    value: dict[str, Any] = {}
    level = value
    for _ in range(10_000):
        level["a"] = level = {}
    conversation = Conversation(
        (
            User("hi"),
            Invocation(name="f", arguments=value, invocation_id="c1"),
            Result(invocation_id="c1", name="f", content=(Text("ok"),)),
        )
    )
    with pytest.raises(ProviderError, match="nested too deeply"):
        providers.get(name).render_request(conversation)


@pytest.mark.parametrize(
    ("name", "body", "path"),
    [
        (
            "openai-chat",
            {
                "messages": [
                    {
                        "role": "user",
                        "content": [{"type": "image_url", "image_url": {"url": "x"}}],
                    }
                ]
            },
            "$.messages[0].content[0].image_url.url",
        ),
        (
            "anthropic",
            {
                "messages": [
                    {
                        "role": "user",
                        "content": [
                            {"type": "image", "source": {"type": "url", "url": "x"}}
                        ],
                    }
                ]
            },
            "$.messages[0].content[0].source.url",
        ),
        (
            "gemini",
            {
                "contents": [
                    {
                        "role": "user",
                        "parts": [
                            {"fileData": {"fileUri": "x", "mimeType": "video/mp4"}}
                        ],
                    }
                ]
            },
            "$.contents[0].parts[0].fileData.fileUri",
        ),
        (
            "openai-responses",
            {
                "input": [
                    {
                        "role": "user",
                        "content": [{"type": "input_file", "file_url": "x"}],
                    }
                ]
            },
            "$.input[0].content[0].file_url",
        ),
        (
            "openai-responses",
            {"input": [{"role": "user", "content": [{"type": "input_file"}]}]},
            "$.input[0].content[0]",
        ),
    ],
)
def test_a_value_the_model_refuses_is_reported_at_its_path(
    name: str, body: dict[str, Any], path: str
) -> None:
    with pytest.raises(MalformedPayload) as caught:
        providers.get(name).parse_request(body)
    assert caught.value.path == path


def test_expect_url_and_built_locate_what_they_refuse() -> None:
    assert (
        common.expect_url("https://a.example/x.png", "$.u") == "https://a.example/x.png"
    )
    with pytest.raises(MalformedPayload) as caught:
        common.expect_url("x" * 5000, "$.u")
    assert caught.value.path == "$.u" and "(5,000 characters)" in caught.value.reason
    assert common.built(Text, "$.p", text="hi") == Text("hi")
    with pytest.raises(MalformedPayload) as refused:
        common.built(Image, "$.p")
    assert refused.value.path == "$.p" and "needs a source" in refused.value.reason


def test_a_response_without_content_is_refused_at_content() -> None:
    with pytest.raises(MalformedPayload) as caught:
        providers.get("anthropic").parse_response({"role": "assistant"})
    assert caught.value.path == "$.content"


@pytest.mark.parametrize(
    ("record", "path"),
    [
        ('{"type":"image","url":"x"}', "$.content.url"),
        ('{"type":"image","content_id":"sha256:x"}', "$.content.content_id"),
        ('{"type":"image","url":"https://a.example","refs":{"p":5}}', "$.content.refs"),
    ],
)
def test_a_document_value_the_model_refuses_is_reported_at_its_field(
    record: str, path: str
) -> None:
    with pytest.raises(SerializationError) as caught:
        serialization.from_json(
            f'{{"format":"canisters.content","version":2,"content":{record}}}'
        )
    assert caught.value.path == path


def test_model_errors_name_their_field() -> None:
    with pytest.raises(ModelError) as caught:
        Image(url="x")
    assert caught.value.field == "url"
    with pytest.raises(ModelError) as refused:
        User("hi", step=-1)
    assert refused.value.field == "step"
    assert ModelError("plain").field is None


def test_a_snapshot_keeps_non_finite_numbers_surrogates_and_big_integers(
    tmp_path: Path,
) -> None:
    store = open_store(tmp_path / "store")
    canisters = [
        User("hi"),
        Invocation(
            name="f",
            arguments={"x": math.nan, "y": -math.inf, "s": "\ud800", "n": 10**30},
            invocation_id="c1",
        ),
    ]
    for canister in canisters:
        store.append("c", canister)
    text = recording.snapshot(store, "c")
    other = open_store(tmp_path / "other")
    recording.restore(other, text)
    assert written(other.load("c")) == written(Conversation(tuple(canisters)))


def _anthropic_positions(value: Any) -> dict[str, dict[str, Any]]:
    """Anthropic request bodies holding ``value`` at each place a parser keeps
    a value without reading it, most in shapes its fast way reads."""
    text = {"type": "text", "text": "hi"}
    use = {"type": "tool_use", "id": "toolu_1", "name": "f", "input": {"a": 1}}
    url = {"type": "url", "url": "https://example.com/a.png"}
    image = {"type": "image", "source": url}

    def user(*blocks: Any) -> dict[str, Any]:
        return {"role": "user", "content": list(blocks)}

    def after_call(*blocks: Any, call: dict[str, Any] = use) -> dict[str, Any]:
        return {
            "messages": [
                user(text),
                {"role": "assistant", "content": [text, call]},
                user(*blocks),
            ]
        }

    answer = {"type": "tool_result", "tool_use_id": "toolu_1", "content": "ok"}
    return {
        "call arguments": after_call(answer, call={**use, "input": {"a": value}}),
        "call key": after_call(answer, call={**use, "cache_control": value}),
        "text cache_control": {"messages": [user({**text, "cache_control": value})]},
        "text citations": {"messages": [user(text, {**text, "citations": value})]},
        "image cache_control": {"messages": [user({**image, "cache_control": value})]},
        "image source key": {
            "messages": [user(text, {**image, "source": {**url, "x": value}})]
        },
        "result key": after_call({**answer, "x": value}),
        "result image": after_call(
            {**answer, "content": [text, {**image, "source": {**url, "x": value}}]}
        ),
        "thinking key": {
            "messages": [
                user(text),
                {
                    "role": "assistant",
                    "content": [
                        {
                            "type": "thinking",
                            "thinking": "t",
                            "signature": "s",
                            "x": value,
                        },
                        text,
                    ],
                },
            ]
        },
        "document": {
            "messages": [
                user({"type": "document", "source": url, "citations": value}, text)
            ]
        },
        "server tool block": {
            "messages": [
                user(text),
                {
                    "role": "assistant",
                    "content": [
                        {
                            "type": "server_tool_use",
                            "id": "srvtoolu_1",
                            "name": "web_search",
                            "input": value,
                        },
                        text,
                    ],
                },
            ]
        },
        "system block": {
            "system": [{**text, "cache_control": value}],
            "messages": [user(text)],
        },
        "message key": {"messages": [{**user(text), "x": value}]},
    }


def _openai_chat_positions(value: Any) -> dict[str, dict[str, Any]]:
    """OpenAI Chat request bodies holding ``value`` at each place a parser
    keeps a value without reading it, most in shapes its fast way reads."""
    text = {"type": "text", "text": "hi"}
    image = {"type": "image_url", "image_url": {"url": "https://example.com/a.png"}}
    call = {
        "id": "call_1",
        "type": "function",
        "function": {"name": "f", "arguments": '{"a":1}'},
    }

    def messages(*items: Any) -> dict[str, Any]:
        return {"messages": list(items)}

    user = {"role": "user", "content": "hi"}
    return {
        "name": messages({**user, "name": value}),
        "user key": messages({"role": "user", "content": [text], "x": value}),
        "part key": messages(
            {"role": "user", "content": [image, {**text, "x": value}]}
        ),
        "image key": messages(
            {
                "role": "user",
                "content": [
                    text,
                    {**image, "image_url": {**image["image_url"], "x": value}},
                ],
            }
        ),
        "system key": messages({"role": "system", "content": "s", "x": value}, user),
        "assistant key": messages(
            user, {"role": "assistant", "content": "ok", "x": value}
        ),
        "calls key": messages(
            user,
            {"role": "assistant", "content": None, "tool_calls": [call], "x": value},
        ),
        "call key": messages(
            user,
            {
                "role": "assistant",
                "content": None,
                "tool_calls": [{**call, "x": value}],
            },
        ),
        "tool key": messages(
            user,
            {"role": "assistant", "content": None, "tool_calls": [call]},
            {"role": "tool", "tool_call_id": "call_1", "content": "r", "x": value},
        ),
        "function message": messages(
            user,
            {"role": "function", "name": "f", "content": "r", "x": value},
        ),
    }


_KEEPING: dict[str, tuple[Any, tuple[str, ...]]] = {
    "anthropic": (_anthropic_positions, ("system", "messages")),
    "openai-chat": (_openai_chat_positions, ("messages",)),
}


@pytest.mark.parametrize(
    ("name", "position"),
    [(name, at) for name, (made, _) in _KEEPING.items() for at in sorted(made(None))],
)
def test_request_parsers_hold_what_they_keep_unread(name: str, position: str) -> None:
    """The Anthropic and OpenAI Chat request parsers hold to the depth bound
    only what they keep without reading (guarded_keeping): wherever a body
    keeps a value, a value nesting too deeply is refused with the message and
    path the net over the whole of the keys they read gives, and one within
    the bound parses to what the general way reads."""
    import importlib

    module = importlib.import_module(f"canisters.providers.{name.replace('-', '_')}")
    made, keys = _KEEPING[name]
    reference = common.guarded_reading(*keys)(
        lambda body: module.messages.parse_request(body, fast=False)
    )
    for levels in (10_000, common.BODY_DEPTH + 1):
        body = made(deep(levels))[position]
        with pytest.raises(MalformedPayload, match="nested too deeply") as caught:
            module.NORMALIZER.parse_request(body)
        with pytest.raises(MalformedPayload) as expected:
            reference(body)
        assert (caught.value.path, str(caught.value)) == (
            expected.value.path,
            str(expected.value),
        )
    fits = made(deep(200))[position]
    assert _numbered(module.NORMALIZER.parse_request(fits)) == _numbered(
        reference(fits)
    )


def _numbered(conversation: Any) -> str:
    """``conversation``'s repr with its ids and timestamps numbered."""
    moment = datetime(2020, 1, 1, tzinfo=timezone.utc)
    return repr(
        [
            attrs.evolve(canister, id=str(index), timestamp=moment)
            for index, canister in enumerate(conversation)
        ]
    )


def test_anthropic_requests_tell_a_deep_body_before_a_malformed_one() -> None:
    """A body that nests too deeply and is malformed beyond the deep value is
    refused for its depth, as when the whole body was held before reading."""
    from canisters.providers import anthropic

    messages = [
        {"role": "user", "content": "hi", "x": deep(common.BODY_DEPTH + 1)},
        {"role": "robot", "content": "?"},
    ]
    with pytest.raises(MalformedPayload, match="nested too deeply") as caught:
        anthropic.NORMALIZER.parse_request({"messages": messages})
    assert caught.value.path.startswith("$.messages[0].x")
    with pytest.raises(MalformedPayload, match="unknown role"):
        anthropic.NORMALIZER.parse_request(
            {"messages": [messages[0] | {"x": 1}, messages[1]]}
        )
