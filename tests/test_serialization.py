"""Serialization: converter, JSON/JSONL documents, registration, migrations, errors."""

from __future__ import annotations

import json
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import attrs
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import canisters as c
from canisters import protocols as p
from canisters import serialization as s

from . import strategies
from .budget import examples

DATA = Path(__file__).parent / "data" / "serialization"
WHEN = "2025-01-01T00:00:00+00:00"


@settings(max_examples=examples(150), deadline=None)
@given(strategies.conversations)
def test_conversation_round_trip_is_exact(conversation: c.Conversation) -> None:
    assert c.from_json(c.to_json(conversation)) == conversation
    assert c.from_jsonl(c.to_jsonl(conversation)) == conversation


@settings(max_examples=examples(150), deadline=None)
@given(strategies.canisters_)
def test_canister_round_trip_keeps_the_class(canister: Any) -> None:
    back = c.from_json(c.to_json(canister))
    assert back == canister and type(back) is type(canister)


@given(strategies.parts)
def test_content_round_trip(part: Any) -> None:
    back = c.from_json(c.to_json(part))
    assert back == part and type(back) is type(part)


def test_document_shape() -> None:
    user = c.User(
        [c.Text("hi"), c.Image(data=b"\x00\xff", mime_type="image/png")],
        id="u",
        timestamp=datetime(2025, 1, 1, tzinfo=timezone.utc),
    )
    document = json.loads(c.to_json(user))
    assert document == {
        "format": "canisters.canister",
        "version": s.FORMAT_VERSION,
        "canister": {
            "role": "user",
            "id": "u",
            "timestamp": WHEN,
            "content": [
                {"type": "text", "text": "hi"},
                {"type": "image", "data": "AP8=", "mime_type": "image/png"},
            ],
        },
    }
    lines = c.to_jsonl(c.Conversation([user])).splitlines()
    assert json.loads(lines[0]) == {
        "format": "canisters.conversation",
        "version": s.FORMAT_VERSION,
    }
    assert json.loads(lines[1])["role"] == "user"


def test_converter_structures_through_protocols() -> None:
    call = c.Invocation("f", {"a": 1})
    record = s.converter.unstructure(call)
    assert record["role"] == "invocation"
    assert s.converter.structure(record, p.InvocationCanister) == call
    assert s.converter.structure(record, p.Canister) == call
    assert s.converter.structure(record, c.Invocation) == call
    with pytest.raises(c.SerializationError, match="expected a user canister"):
        s.converter.structure(record, p.UserCanister)
    conversation = c.Conversation([call])
    assert (
        s.converter.structure(s.converter.unstructure(conversation), c.Conversation)
        == conversation
    )
    part = c.Audio(url="https://e.com/a.wav")
    assert s.converter.structure(s.converter.unstructure(part), p.Content) == part


def test_make_converter_builds_independent_converters() -> None:
    mine = s.make_converter()
    assert mine is not s.converter
    assert mine.structure(mine.unstructure(c.Text("x")), c.Text) == c.Text("x")


@attrs.frozen
class Flagged(c.User):
    """An application's user canister with an extra field."""

    flag: str = attrs.field(default="none", kw_only=True)
    score: int = attrs.field(default=0, kw_only=True)


@attrs.frozen
class Standalone:
    """Not a subclass: satisfies UserCanister structurally."""

    role = c.Role.User
    content: tuple[p.Content, ...] = ()
    id: str = attrs.field(factory=c.new_id)
    timestamp: datetime = attrs.field(factory=lambda: datetime.now(timezone.utc))
    parent_id: str | None = None
    trace_id: str | None = None
    policy: str | None = None
    step: int | None = None
    metadata: c.Metadata | None = None
    extras: dict[str, Any] = attrs.field(factory=dict)
    channel: str = "sms"


@attrs.frozen
class Sticker:
    """An application content part."""

    type = "sticker"
    name: str
    id: str | None = None
    extras: dict[str, Any] = attrs.field(factory=dict)


c.register_canister(Flagged, "flagged-user")
c.register_canister(Standalone, "standalone-user")
c.register_content(Sticker, "sticker")


def test_registered_subclass_round_trips_as_itself() -> None:
    flagged = Flagged([c.Text("hi"), Sticker("cat")], flag="vip", score=3, step=1)
    back = c.from_json(c.to_json(flagged))
    assert type(back) is Flagged and back == flagged
    assert c.from_json(c.to_json(c.Conversation([flagged]))) == c.Conversation(
        [flagged]
    )
    assert json.loads(c.to_json(flagged))["canister"]["role"] == "flagged-user"


def test_protocol_conforming_class_is_accepted() -> None:
    value = Standalone(content=(c.Text("hi"),), channel="web")
    assert isinstance(value, p.UserCanister)
    back = c.from_json(c.to_json(c.Conversation([value, c.Assistant("hey")])))
    assert isinstance(back, c.Conversation) and back[0] == value
    c.validate(back)


def test_unregistered_subclass_is_refused_not_truncated() -> None:
    @attrs.frozen
    class Secret(c.User):
        secret: str = attrs.field(default="", kw_only=True)

    with pytest.raises(c.SerializationError, match="register_canister"):
        c.to_json(Secret("x", secret="s"))


def test_registration_errors() -> None:
    with pytest.raises(c.SerializationError, match="already registered"):
        c.register_canister(Standalone, "flagged-user")
    with pytest.raises(c.SerializationError, match="already registered for User"):
        c.register_canister(Standalone, "user")
    with pytest.raises(c.SerializationError, match="Role"):
        c.register_canister(Sticker, "x")
    with pytest.raises(c.SerializationError, match="type"):
        c.register_content(Flagged, "y")


def test_older_version_documents_migrate() -> None:
    conversation = c.from_json((DATA / "version-1-conversation.json").read_text())
    assert isinstance(conversation, c.Conversation)
    roles = [x.role for x in conversation]
    assert roles == [
        c.Role.Supervisor,
        c.Role.User,
        c.Role.Invocation,
        c.Role.Result,
        c.Role.Invocation,
        c.Role.Result,
    ]
    user = conversation[1]
    assert isinstance(user, c.User) and user.step == 0 and user.policy == "user"
    image, document, text = user.content
    assert isinstance(image, c.Image) and image.hint == "girl wearing a hat"
    assert isinstance(document, c.File) and document.mime_type == "application/pdf"
    assert text == c.Text("Put the dress on her.")
    call, answer = conversation[2], conversation[3]
    assert (
        isinstance(call, c.Invocation)
        and call.name == "search_web"
        and call.arguments == {"query": "fancy dress"}
    )
    assert isinstance(answer, c.Result) and answer.content == (
        c.Text('{"hits":3}', "application/json"),
    )
    failed = conversation[5]
    assert isinstance(failed, c.Result) and failed.error == c.ErrorInfo(
        "TIMEOUT", "renderer timed out", True
    )
    c.validate(conversation)


def test_newer_version_is_refused() -> None:
    with pytest.raises(c.SerializationError, match="newer"):
        c.from_json(
            '{"format": "canisters.conversation", "version": 99, "canisters": []}'
        )


def test_large_numbers_and_unicode_survive() -> None:
    call = c.Invocation(
        "f",
        {
            "big": 2**100,
            "neg": -(2**90),
            "f": 1.0e308,
            "tiny": 5e-324,
            "s": "日本\u0000😀",
        },
    )
    assert c.from_json(c.to_json(call)) == call


def _canister_doc(record: dict[str, Any]) -> str:
    return json.dumps(
        {
            "format": "canisters.canister",
            "version": s.FORMAT_VERSION,
            "canister": record,
        }
    )


GOOD = {
    "role": "user",
    "id": "u",
    "timestamp": WHEN,
    "content": [{"type": "text", "text": "x"}],
}


@pytest.mark.parametrize(
    ("text", "path", "message"),
    [
        ("{not json", "$", "not JSON"),
        ("[]", "$", "document object"),
        ('{"format": "mystery", "version": 2}', "$.format", "unknown document format"),
        (_canister_doc({**GOOD, "role": "robot"}), "$.canister.role", "unknown role"),
        (
            _canister_doc({k: v for k, v in GOOD.items() if k != "id"}),
            "$.canister.id",
            "missing field",
        ),
        (
            _canister_doc({k: v for k, v in GOOD.items() if k != "timestamp"}),
            "$.canister.timestamp",
            "missing field",
        ),
        (_canister_doc({**GOOD, "id": 5}), "$.canister.id", "expected str"),
        (_canister_doc({**GOOD, "step": "3"}), "$.canister.step", "expected int"),
        (
            _canister_doc({**GOOD, "timestamp": "2025-01-01T00:00:00"}),
            "$.canister.timestamp",
            "no timezone",
        ),
        (
            _canister_doc({**GOOD, "timestamp": "yesterday"}),
            "$.canister.timestamp",
            "invalid ISO 8601",
        ),
        (
            _canister_doc({**GOOD, "content": [{"type": "hologram"}]}),
            "$.canister.content[0].type",
            "unknown content type",
        ),
        (
            _canister_doc({**GOOD, "content": [{"type": "text"}]}),
            "$.canister.content[0].text",
            "missing field",
        ),
        (
            _canister_doc({**GOOD, "content": [{"type": "text", "text": 3}]}),
            "$.canister.content[0].text",
            "expected str",
        ),
        (
            _canister_doc({**GOOD, "content": [{"type": "image", "data": "@@@"}]}),
            "$.canister.content[0].data",
            "invalid base64",
        ),
        (
            _canister_doc({**GOOD, "content": [{"type": "image", "data": "QQ"}]}),
            "$.canister.content[0].data",
            "invalid base64",
        ),
        (
            _canister_doc({**GOOD, "content": [{"type": "image"}]}),
            "$.canister.content[0]",
            "needs a source",
        ),
        (
            _canister_doc({**GOOD, "content": "text"}),
            "$.canister.content",
            "list of content",
        ),
        (
            _canister_doc({**GOOD, "metadata": {"model": 3}}),
            "$.canister.metadata.model",
            "expected str",
        ),
        (
            _canister_doc({**GOOD, "metadata": {"usage": {"input_tokens": "3"}}}),
            "$.canister.metadata.usage.input_tokens",
            "expected int",
        ),
        (
            _canister_doc(
                {
                    "role": "result",
                    "id": "r",
                    "timestamp": WHEN,
                    "invocation_id": "i",
                    "name": "n",
                    "error": {"code": 1},
                }
            ),
            "$.canister.error.code",
            "expected str",
        ),
        (
            _canister_doc(
                {
                    "role": "invocation",
                    "id": "i",
                    "timestamp": WHEN,
                    "name": "f",
                    "invocation_id": "x",
                    "arguments": [1],
                }
            ),
            "$.canister.arguments",
            "expected dict",
        ),
        (
            _canister_doc(
                {"role": "flagged-user", "id": "u", "timestamp": WHEN, "score": "high"}
            ),
            "$.canister.score",
            "expected int",
        ),
        (
            '{"format": "canisters.conversation", "version": 2, "canisters": [{"role": "user"}]}',
            "$.canisters[0].id",
            "missing field",
        ),
        (
            '{"format": "canisters.conversation", "version": 2, "canisters": {}}',
            "$.canisters",
            "list of canisters",
        ),
    ],
)
def test_malformed_input_names_the_path(text: str, path: str, message: str) -> None:
    with pytest.raises(c.SerializationError) as caught:
        c.from_json(text)
    assert caught.value.path == path
    assert message in str(caught.value)


def test_malformed_jsonl() -> None:
    with pytest.raises(c.SerializationError, match="header"):
        c.from_jsonl('{"role": "user"}\n')
    with pytest.raises(c.SerializationError, match="no header"):
        c.from_jsonl("\n\n")
    header = json.dumps(
        {"format": "canisters.conversation", "version": s.FORMAT_VERSION}
    )
    with pytest.raises(c.SerializationError) as caught:
        c.from_jsonl(f"{header}\n{json.dumps(GOOD)}\n{{broken\n")
    assert caught.value.path == "line 3"
    with pytest.raises(c.SerializationError) as caught:
        c.from_jsonl(f"{header}\n{json.dumps({**GOOD, 'step': -1})}\n")
    assert caught.value.path.startswith("line 2")
    with pytest.raises(c.SerializationError):
        c.from_jsonl(b"\xff\xfe")


def test_non_serializable_values_raise_our_error() -> None:
    with pytest.raises(c.SerializationError):
        c.to_json(c.Invocation("f", {"x": object()}))
    with pytest.raises(c.SerializationError):
        c.to_json(42)  # type: ignore[arg-type]
    with pytest.raises(c.SerializationError):
        c.from_json(42)  # type: ignore[arg-type]


@settings(max_examples=examples(200), deadline=None)
@given(st.text() | st.binary())
def test_arbitrary_input_raises_only_serialization_error(text: str | bytes) -> None:
    try:
        c.from_json(text)
    except c.SerializationError:
        pass
    try:
        c.from_jsonl(text)
    except c.SerializationError:
        pass


@settings(max_examples=examples(200), deadline=None)
@given(
    st.dictionaries(
        st.sampled_from(
            [
                "role",
                "id",
                "timestamp",
                "content",
                "step",
                "metadata",
                "name",
                "invocation_id",
                "arguments",
                "error",
                "extras",
            ]
        ),
        strategies.json_values,
    )
)
def test_arbitrary_records_raise_only_serialization_error(
    record: dict[str, Any],
) -> None:
    try:
        c.from_json(_canister_doc(record))
    except c.SerializationError:
        pass
