"""A model call that ended in a provider's refusal, recorded and found on resume."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

import canisters as c
from canisters import providers, recording
from canisters.audit import AuditLog
from canisters.providers import ErrorReply, ErrorResponse
from canisters.recording import PROVIDER_ERROR, Recorder, resume
from canisters.storage import Store, open_store

OVERLOADED = (
    Path(__file__).parent
    / "data"
    / "providers"
    / "anthropic"
    / "errors"
    / "overloaded-529.json"
)


@pytest.fixture(params=["files", "sqlite"])
def store(tmp_path: Path, request: pytest.FixtureRequest) -> Iterator[Store]:
    location = (
        str(tmp_path / "store")
        if request.param == "files"
        else f"sqlite:///{tmp_path / 'store.db'}"
    )
    with open_store(location) as opened:
        yield opened


def refusal() -> ErrorResponse:
    body = json.loads(OVERLOADED.read_text(encoding="utf-8"))["payload"]
    with pytest.raises(ErrorResponse) as raised:
        providers.get("anthropic").parse_response(body)
    return raised.value


def test_a_refused_call_is_audited_and_known_on_resume(store: Store) -> None:
    recorder = Recorder(store, "run", prompt_key="p/1")
    question = recorder.record(c.User("What is 2 + 2?"))
    refused = refusal()
    failed = recorder.record_error(refused, model="claude", attempt=1)
    assert failed.reply == refused.reply and failed.after == question.id
    assert failed.step == question.step  # the answer would have come in its step
    assert recorder.failed_call == failed
    assert len(recorder.conversation) == 1  # a refusal is no message

    entries = AuditLog(store, "run").entries(decision=PROVIDER_ERROR)
    assert len(entries) == 1
    details = entries[0].details
    assert entries[0].canister_id == question.id
    assert details["kind"] == "overloaded" and details["provider"] == "anthropic"
    assert details["model"] == "claude" and details["attempt"] == 1

    resumed = resume(store, "run", prompt_key="p/1")
    assert resumed.failed_call == failed
    assert resumed.pending == ()

    answer = resumed.recorder.record(c.Assistant("4"))
    assert resumed.recorder.failed_call is None  # the retry answered
    assert resume(store, "run").failed_call is None
    assert resumed.recorder.failures() == (failed,)
    assert answer.step == failed.step


def test_a_refusal_before_any_canister(store: Store) -> None:
    recorder = Recorder(store, "empty")
    failed = recorder.record_error(ErrorReply("rate_limited", "slow down"))
    assert failed.after is None and failed.step == 0
    assert Recorder(store, "empty").failed_call == failed


def test_the_refusal_travels_in_a_snapshot(store: Store, tmp_path: Path) -> None:
    recorder = Recorder(store, "run")
    recorder.record(c.User("hi"))
    failed = recorder.record_error(ErrorReply("server_error", "boom", status=500))
    document = recording.snapshot(store, "run")
    with open_store(tmp_path / "other") as other:
        recording.restore(other, document)
        assert resume(other, "run").failed_call == failed


def test_record_error_refuses_what_is_not_a_refusal(store: Store) -> None:
    recorder = Recorder(store, "run")
    with pytest.raises(c.RecordingError, match="ErrorReply"):
        recorder.record_error({"error": "x"})  # type: ignore[arg-type]
    with pytest.raises(c.SerializationError, match="details"):
        recorder.record_error(ErrorReply("unknown"), thing=object())
    assert recorder.failures() == ()
