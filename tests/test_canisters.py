"""Canisters: the envelope, construction rules, subclasses and lineage."""

from __future__ import annotations

import os
import pickle
import warnings
import weakref
from datetime import datetime, timezone
from typing import Any

import attrs
import pytest

import canisters as c
from canisters import protocols as p


def test_envelope_defaults_and_keyword_only() -> None:
    user = c.User(content=(c.Text("hi"),))
    assert user.role is c.Role.User
    assert len(user.id) == 32
    assert user.timestamp.tzinfo is not None
    assert (user.parent_id, user.trace_id, user.policy, user.step, user.metadata) == (
        None,
        None,
        None,
        None,
        None,
    )
    assert user.extras == {}
    with pytest.raises(TypeError):
        c.User((c.Text("hi"),), "an-id")  # type: ignore[misc]


def test_content_accepts_text_parts_and_lists() -> None:
    assert c.User("hi").content == (c.Text("hi"),)
    assert c.User([c.Text("a"), "b"]).content == (c.Text("a"), c.Text("b"))
    assert c.User(c.Image(url="https://e.com/x")).content[0].type == "image"
    with pytest.raises(c.ModelError, match="content"):
        c.User([1])  # type: ignore[list-item]
    with pytest.raises(c.ModelError, match="content"):
        c.User(42)  # type: ignore[arg-type]


def test_ids_are_unique() -> None:
    assert len({c.User("x").id for _ in range(1000)}) == 1000


def test_naive_timestamp_is_refused() -> None:
    with pytest.raises(c.ModelError, match="timezone-aware"):
        c.User("x", timestamp=datetime(2024, 1, 1))
    assert c.User("x", timestamp=datetime(2024, 1, 1, tzinfo=timezone.utc))


@pytest.mark.parametrize("step", [-1, 1.5, "2", True])
def test_bad_step_is_refused(step: object) -> None:
    with pytest.raises(c.ModelError, match="step"):
        c.User("x", step=step)  # type: ignore[arg-type]


def test_empty_id_is_refused() -> None:
    with pytest.raises(c.ModelError, match="id"):
        c.User("x", id="")


def test_invocation_and_result() -> None:
    call = c.Invocation("search", {"q": "hobbit"})
    assert call.invocation_id and call.arguments == {"q": "hobbit"}
    with pytest.raises(TypeError):
        call.arguments["q"] = "x"  # type: ignore[index]
    answer = c.Result(
        call.invocation_id, "search", "found", c.ErrorInfo(c.ErrorCode.TIMEOUT, "slow")
    )
    assert answer.is_error and answer.error is not None
    assert answer.error.code == "TIMEOUT"
    with pytest.raises(c.ModelError):
        c.Invocation(3)  # type: ignore[arg-type]
    with pytest.raises(c.ModelError):
        c.Result(1, "x")  # type: ignore[arg-type]


def test_canisters_are_slotted_and_frozen() -> None:
    for canister in (
        c.User("x"),
        c.Assistant(),
        c.Supervisor("s"),
        c.Document("d", "t", "doc-1"),
        c.Invocation("n"),
        c.Result("i", "n"),
    ):
        assert not hasattr(canister, "__dict__")
        with pytest.raises(attrs.exceptions.FrozenInstanceError):
            canister.step = 3  # type: ignore[misc]


@pytest.mark.parametrize(
    ("value", "protocol"),
    [
        (c.User("x"), p.UserCanister),
        (c.Assistant(), p.AssistantCanister),
        (c.Supervisor("x"), p.SupervisorCanister),
        (c.Document("x"), p.DocumentCanister),
        (c.Invocation("x"), p.InvocationCanister),
        (c.Result("i", "x"), p.ResultCanister),
    ],
)
def test_canisters_satisfy_protocols(value: object, protocol: type) -> None:
    assert isinstance(value, protocol)
    assert isinstance(value, p.Canister)


@attrs.frozen
class Tagged(c.User):
    tag: str = attrs.field(default="", kw_only=True)


def test_subclass_constructs_validates_and_stays_slotted() -> None:
    tagged = Tagged("hi", tag="vip", step=2)
    assert tagged.role is c.Role.User and tagged.tag == "vip"
    assert not hasattr(tagged, "__dict__")
    with pytest.raises(c.ModelError):
        Tagged("hi", timestamp=datetime(2020, 1, 1))


def test_weak_references_only_to_subclasses_that_ask() -> None:
    # The built-in classes save the slot, as tuples and strings do; a subclass
    # declared with @attrs.frozen gets it back, and both still pickle.
    plain = c.User("hi", metadata=c.Metadata(model="m"))
    for value in (plain, plain.content[0], plain.metadata):
        with pytest.raises(TypeError):
            weakref.ref(value)
    tagged = Tagged("hi", tag="vip")
    assert weakref.ref(tagged)() is tagged
    assert pickle.loads(pickle.dumps(plain)) == plain
    assert pickle.loads(pickle.dumps(tagged)) == tagged


def test_usage_adds_up() -> None:
    total = c.Usage(1, 2, 3, 4, 5) + c.Usage(10, 20, 30, 40, 50)
    assert total == c.Usage(11, 22, 33, 44, 55)
    assert total.total_tokens == 33


def test_child_of_keeps_the_trace() -> None:
    parent = c.User("q", trace_id="trace-1")
    child = c.child_of(parent, c.Assistant("a"))
    assert child.parent_id == parent.id and child.trace_id == "trace-1"
    orphan = c.child_of(c.User("q"), c.Assistant("a", trace_id="t2"))
    assert orphan.trace_id == "t2"


def test_child_of_needs_a_parent_canister() -> None:
    with pytest.raises(c.ModelError, match="parent"):
        c.child_of(5, c.User("x"))  # type: ignore[arg-type]


def test_new_ids_are_32_hex_digits_and_never_repeat() -> None:
    made = [c.new_id() for _ in range(1000)]  # several batches of random bytes
    assert len(set(made)) == len(made)
    assert all(len(i) == 32 and int(i, 16) >= 0 for i in made)
    assert len({c.User("x").id for _ in range(200)}) == 200


@pytest.mark.skipif(not hasattr(os, "fork"), reason="needs os.fork")
def test_a_forked_process_makes_ids_of_its_own() -> None:
    c.new_id()  # ids are left over from the batch this took
    reading, writing = os.pipe()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)  # fork with threads
        child = os.fork()
    if child == 0:  # pragma: no cover - runs in the child
        os.write(writing, "".join(c.new_id() for _ in range(3)).encode())
        os._exit(0)
    os.close(writing)
    os.waitpid(child, 0)
    theirs = os.read(reading, 200).decode()
    os.close(reading)
    ours = "".join(c.new_id() for _ in range(3))
    assert len(theirs) == 96
    assert {theirs[i : i + 32] for i in range(0, 96, 32)}.isdisjoint(
        {ours[i : i + 32] for i in range(0, 96, 32)}
    )


@pytest.mark.parametrize(
    ("build", "field"),
    [
        (lambda: c.Text("a", mime_type=5), "mime_type"),
        (lambda: c.Text("a", id=5), "id"),
        (lambda: c.Image(url="https://x.test/a.png", mime_type=5), "mime_type"),
        (lambda: c.Audio(url="https://x.test/a.wav", hint=b"x"), "hint"),
        (lambda: c.File(data=b"%PDF", filename=3), "filename"),
        (lambda: c.Reasoning("r", provider=5), "provider"),
        (lambda: c.Reasoning("r", "sig", None, 5), "provider"),
        (lambda: c.User("a", parent_id=5), "parent_id"),
        (lambda: c.User("a", trace_id=["t"]), "trace_id"),
        (lambda: c.Assistant("a", metadata={"model": "m"}), "metadata"),  # type: ignore[arg-type]
        (lambda: c.Document("a", title=5), "title"),
        (lambda: c.Metadata(model=5), "model"),
        (lambda: c.Metadata(latency_ms="12"), "latency_ms"),
        (lambda: c.Metadata(retries=True), "retries"),
        (lambda: c.Metadata(cache_hit="yes"), "cache_hit"),
        (lambda: c.Metadata(usage={"input_tokens": 1}), "usage"),  # type: ignore[arg-type]
        (lambda: c.Usage(1.0, 2), "input_tokens"),
        (lambda: c.Usage(1, "2"), "output_tokens"),
        (lambda: c.ErrorInfo(5, "m"), "code"),
        (lambda: c.ErrorInfo("X", None), "message"),  # type: ignore[arg-type]
        (lambda: c.ErrorInfo("X", "m", "no"), "retryable"),  # type: ignore[arg-type]
    ],
)
def test_a_field_of_another_type_is_refused_where_it_is_given(
    build: Any, field: str
) -> None:
    # Written, it would be refused on reading: a store holding it could not
    # load its conversation.
    with pytest.raises(c.ModelError) as caught:
        build()
    assert caught.value.field == field
    assert field in str(caught.value)


def test_fields_of_their_types_still_build() -> None:
    metadata = c.Metadata(
        model="m", latency_ms=12, usage=c.Usage(1, 2), cache_hit=False, retries=0
    )
    reply = c.Assistant("a", metadata=metadata, parent_id="p", trace_id="t")
    assert c.from_json(c.to_json(c.Conversation([reply]))) == [reply]
    assert c.ErrorInfo(c.ErrorCode.TIMEOUT, "slow", True).code == "TIMEOUT"
