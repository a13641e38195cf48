"""canisters.recording: Recorder, resume, run_pending, snapshots, lineage."""

from __future__ import annotations

import asyncio
import base64
import contextlib
import copy
import dataclasses
import hashlib
import json
import sqlite3
import subprocess
import sys
import threading
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any, ClassVar

import orjson
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import canisters as c
from canisters import recording
from canisters.recording import Recorder, resume, run_pending
from canisters.storage import Store, open_store
from canisters.storage.files import FileStore
from canisters.storage.sqlite import SQLiteStore
from canisters.validation import validate

from .budget import examples

PNG = b"\x89PNG\r\n\x1a\n" + bytes(range(256)) * 8


def _location(tmp_path: Path, backend: str, name: str = "store") -> str:
    if backend == "sqlite":
        return f"sqlite:///{tmp_path / (name + '.db')}"
    return str(tmp_path / name)


@pytest.fixture(params=["files", "sqlite"])
def backend(request: pytest.FixtureRequest) -> str:
    return str(request.param)


@pytest.fixture
def store(tmp_path: Path, backend: str) -> Iterator[Store]:
    with open_store(_location(tmp_path, backend)) as opened:
        yield opened


def _turn(recorder: Recorder, *names: str) -> tuple[c.Invocation, ...]:
    recorded = recorder.record_all(
        [c.Assistant("let me check"), *(c.Invocation(n, {"n": n}) for n in names)]
    )
    return tuple(x for x in recorded if isinstance(x, c.Invocation))


# Recorder ----------------------------------------------------------------------


def test_record_is_durable_before_returning(tmp_path: Path, backend: str) -> None:
    location = _location(tmp_path, backend)
    with open_store(location) as store:
        recorder = Recorder(store, "run-1")
        user = recorder.record(c.User("hi"))
        with open_store(location) as other:
            assert list(other.load("run-1")) == [user]


def test_record_returns_the_canister_with_its_step(store: Store) -> None:
    recorder = Recorder(store, "run-1")
    user = c.User("hi")
    recorded = recorder.record(user)
    assert recorded.step == 0
    assert recorded.id == user.id
    assert recorded.content == user.content


def test_steps_follow_assistant_turns(store: Store) -> None:
    recorder = Recorder(store, "run-1")
    supervisor = recorder.record(c.Supervisor("be brief"))
    user = recorder.record(c.User("weather in Paris and Rome?"))
    paris, rome = _turn(recorder, "paris", "rome")
    answer_rome = recorder.record(c.Result(rome.invocation_id, "rome", "sunny"))
    answer_paris = recorder.record(c.Result(paris.invocation_id, "paris", "rain"))
    final = recorder.record(c.Assistant("rain in Paris, sun in Rome"))
    follow_up = recorder.record(c.User("thanks"))
    reply = recorder.record(c.Assistant("you are welcome"))
    steps = [x.step for x in store.load("run-1")]
    assert steps == [0, 0, 0, 0, 0, 0, 0, 1, 2, 2]
    assert (supervisor.step, user.step, paris.step, rome.step) == (0, 0, 0, 0)
    assert (answer_rome.step, answer_paris.step) == (0, 0)
    assert (final.step, follow_up.step, reply.step) == (1, 2, 2)
    assert recorder.step == 2


def test_results_keep_their_invocation_step_when_late(store: Store) -> None:
    recorder = Recorder(store, "run-1")
    recorder.record(c.User("go"))
    (slow,) = _turn(recorder, "slow")
    recorder.record(c.User("still there?"))
    recorder.record(c.Assistant("waiting"))
    late = recorder.record(c.Result(slow.invocation_id, "slow", "done"))
    assert slow.step == 0
    assert late.step == 0


def test_invocations_after_results_start_a_new_step(store: Store) -> None:
    recorder = Recorder(store, "run-1")
    recorder.record(c.User("go"))
    (first,) = _turn(recorder, "first")
    recorder.record(c.Result(first.invocation_id, "first", "ok"))
    policy_call = recorder.record(c.Invocation("audit", policy="guard"))
    assert (first.step, policy_call.step) == (0, 1)


def test_explicit_steps_are_kept_and_move_the_clock(store: Store) -> None:
    recorder = Recorder(store, "run-1")
    assert recorder.record(c.User("go", step=7)).step == 7
    assert recorder.record(c.Assistant("ok")).step == 7
    assert recorder.record(c.User("again")).step == 8
    assert recorder.record(c.Document("old", step=3)).step == 3
    assert recorder.record(c.Assistant("next")).step == 8


def test_recorder_trace_id_fills_missing_traces(store: Store) -> None:
    trace = recording.new_trace()
    recorder = Recorder(store, "run-1", trace_id=trace)
    assert recorder.trace_id == trace
    assert recorder.record(c.User("a")).trace_id == trace
    assert recorder.record(c.User("b", trace_id="other")).trace_id == "other"


def test_recorder_refuses_non_canisters(store: Store) -> None:
    with pytest.raises(c.RecordingError):
        Recorder(store, "run-1").record(c.Text("not a canister"))  # type: ignore[type-var]
    assert not store.exists("run-1")


def test_record_all_is_one_write_and_keeps_state_on_failure(store: Store) -> None:
    recorder = Recorder(store, "run-1")
    recorder.record(c.User("go"))
    with pytest.raises(c.RecordingError):
        recorder.record_all([c.Assistant("x"), "nope"])  # type: ignore[list-item]
    assert len(store.load("run-1")) == 1
    assert recorder.record(c.Assistant("y")).step == 0
    assert recorder.record_all([]) == ()


def test_recorder_is_thread_safe(store: Store) -> None:
    recorder = Recorder(store, "run-1")

    def work(n: int) -> None:
        for i in range(20):
            recorder.record(c.User(f"{n}-{i}"))

    threads = [threading.Thread(target=work, args=(n,)) for n in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert len(store.load("run-1")) == 80
    assert recorder.conversation == store.load("run-1")


def test_recorder_on_an_existing_conversation_continues_it(store: Store) -> None:
    first = Recorder(store, "run-1", prompt_key="p/1")
    first.record(c.User("go"))
    _turn(first, "a")
    second = Recorder(store, "run-1")
    assert second.prompt_key == "p/1"
    assert second.conversation == first.conversation
    assert second.record(c.User("next")).step == 1


# Prompt identity ------------------------------------------------------------------


def test_prompt_key_is_recorded_at_the_start(store: Store) -> None:
    recorder = Recorder(store, "run-1", prompt_key="triage/v3")
    assert recording.recorded_prompt_key(store, "run-1") is None
    recorder.record(c.User("go"))
    assert recording.recorded_prompt_key(store, "run-1") == "triage/v3"


def test_resume_checks_the_prompt_key(store: Store) -> None:
    Recorder(store, "run-1", prompt_key="triage/v3").record(c.User("go"))
    assert resume(store, "run-1", "triage/v3").prompt_key == "triage/v3"
    assert resume(store, "run-1").prompt_key == "triage/v3"
    with pytest.raises(c.PromptMismatch) as caught:
        resume(store, "run-1", "triage/v4")
    assert (caught.value.recorded, caught.value.given) == ("triage/v3", "triage/v4")
    assert isinstance(caught.value, ValueError)
    with pytest.raises(c.PromptMismatch):
        Recorder(store, "run-1", prompt_key="triage/v4")


def test_a_conversation_without_a_key_matches_no_key(store: Store) -> None:
    Recorder(store, "run-1").record(c.User("go"))
    assert resume(store, "run-1").prompt_key is None
    with pytest.raises(c.PromptMismatch):
        resume(store, "run-1", "anything")


def test_a_crashed_start_does_not_leave_a_stale_key(store: Store) -> None:
    recording._write_prompt_key(store, "run-1", "stale")
    Recorder(store, "run-1").record(c.User("go"))
    assert recording.recorded_prompt_key(store, "run-1") is None
    Recorder(store, "run-2", prompt_key="new").record(c.User("go"))
    assert resume(store, "run-2", "new").prompt_key == "new"


# Resume ------------------------------------------------------------------------


def test_resume_unknown_conversation(store: Store) -> None:
    with pytest.raises(c.ConversationNotFound):
        resume(store, "nope")


def test_resume_reports_pending_in_order_and_continues(store: Store) -> None:
    recorder = Recorder(store, "run-1", prompt_key="k")
    recorder.record(c.User("go"))
    a, b, d = _turn(recorder, "a", "b", "d")
    recorder.record(c.Result(b.invocation_id, "b", "done"))
    resumption = resume(store, "run-1", "k")
    assert resumption.conversation_id == "run-1"
    assert resumption.conversation == store.load("run-1")
    assert [p.invocation_id for p in resumption.pending] == [
        a.invocation_id,
        d.invocation_id,
    ]
    late = resumption.recorder.record(c.Result(a.invocation_id, "a", "ok"))
    assert late.step == a.step
    assert resumption.recorder.record(c.Assistant("next")).step == 1


def test_resume_wraps_unreadable_records(store: Store, monkeypatch: Any) -> None:
    Recorder(store, "run-1").record(c.User("go"))

    def broken(conversation_id: str, **_: Any) -> c.Conversation:
        raise c.SerializationError("bad record", "$.canister.role")

    monkeypatch.setattr(store, "load", broken)
    with pytest.raises(c.SnapshotRestoreError):
        resume(store, "run-1")


# run_pending -------------------------------------------------------------------


def _pending_run(store: Store) -> tuple[Recorder, tuple[c.Invocation, ...]]:
    recorder = Recorder(store, "run-1")
    recorder.record(c.User("go"))
    calls = _turn(recorder, "add", "fail", "missing")
    return recorder, calls


def test_run_pending_runs_only_what_is_pending(store: Store) -> None:
    recorder = Recorder(store, "run-1", trace_id="t-1")
    recorder.record(c.User("go"))
    done, todo = _turn(recorder, "echo", "echo")
    recorder.record(c.Result(done.invocation_id, "echo", "already"))
    seen: list[Mapping[str, Any]] = []

    def echo(arguments: Mapping[str, Any]) -> str:
        seen.append(arguments)
        return "fresh"

    results = run_pending(resume(store, "run-1"), {"echo": echo})
    assert len(seen) == 1
    (result,) = results
    assert result.invocation_id == todo.invocation_id
    assert result.content == (c.Text("fresh"),)
    assert result.step == todo.step
    assert result.parent_id == todo.id
    assert result.trace_id == "t-1"
    assert result.policy == "runtime"
    assert result.metadata is not None
    assert result.metadata.latency_ms is not None
    assert run_pending(resume(store, "run-1"), {"echo": echo}) == ()
    assert len(seen) == 1
    final = store.load("run-1")
    validate(final)
    assert final.pending_invocations() == ()


def test_handler_outcomes_become_results(store: Store) -> None:
    recorder, (add, fail, missing) = _pending_run(store)

    def failing(arguments: Mapping[str, Any]) -> None:
        raise RuntimeError("disk full")

    results = run_pending(
        recorder, {"add": lambda arguments: {"sum": 3}, "fail": failing}
    )
    by_name = {r.name: r for r in results}
    assert by_name["add"].error is None
    assert by_name["add"].content == (c.Text('{"sum":3}', "application/json"),)
    error = by_name["fail"].error
    assert error is not None
    assert (error.code, error.message, error.retryable) == (
        "TOOL_ERROR",
        "disk full",
        False,
    )
    assert error.details == {"exception": "builtins.RuntimeError"}
    missing_error = by_name["missing"].error
    assert missing_error is not None
    assert missing_error.code == c.ErrorCode.NOT_FOUND.value
    assert [r.invocation_id for r in results] == [
        add.invocation_id,
        fail.invocation_id,
        missing.invocation_id,
    ]
    validate(store.load("run-1"))


class _Flaky(Exception):
    code = "RATE_LIMITED"
    retryable = True
    details: ClassVar[dict[str, int]] = {"retry_after": 3}


@pytest.mark.parametrize(
    ("error", "code", "retryable"),
    [
        (TimeoutError("slow"), "TIMEOUT", True),
        (asyncio.TimeoutError(), "TIMEOUT", True),
        (ConnectionResetError("reset"), "TOOL_ERROR", True),
        (ValueError("bad"), "TOOL_ERROR", False),
        (_Flaky("wait"), "RATE_LIMITED", True),
    ],
)
def test_exception_mapping(
    store: Store, error: Exception, code: str, retryable: bool
) -> None:
    recorder = Recorder(store, "run-1")
    _turn(recorder, "tool")

    def raising(arguments: Mapping[str, Any]) -> None:
        raise error

    (result,) = run_pending(recorder, {"tool": raising})
    assert result.error is not None
    assert (result.error.code, result.error.retryable) == (code, retryable)
    assert result.error.message
    if isinstance(error, _Flaky):
        assert result.error.details is not None
        assert result.error.details["retry_after"] == 3


def test_base_exceptions_propagate_and_leave_the_invocation_pending(
    store: Store,
) -> None:
    recorder = Recorder(store, "run-1")
    _turn(recorder, "tool")

    def interrupted(arguments: Mapping[str, Any]) -> None:
        raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        run_pending(recorder, {"tool": interrupted})
    assert len(resume(store, "run-1").pending) == 1
    (result,) = run_pending(recorder, {"tool": lambda arguments: "ok"})
    assert result.error is None


def test_handlers_may_return_error_info_results_and_unserializable_values(
    store: Store,
) -> None:
    recorder = Recorder(store, "run-1")
    _a, b, _d = _turn(recorder, "a", "b", "d")
    mine = c.Result(b.invocation_id, "b", "custom", policy="tool-b")
    results = run_pending(
        recorder,
        {
            "a": lambda arguments: c.ErrorInfo("DENIED", "not allowed"),
            "b": lambda arguments: mine,
            "d": lambda arguments: object(),
        },
    )
    assert results[0].error == c.ErrorInfo("DENIED", "not allowed")
    assert results[1].policy == "tool-b"
    assert results[1].step == b.step
    assert results[2].error is not None
    assert results[2].error.code == "TOOL_ERROR"


def test_idempotency_key_is_the_invocation_id(store: Store) -> None:
    recorder = Recorder(store, "run-1")
    keyed, _plain = _turn(recorder, "keyed", "plain")
    keys: list[str] = []

    def with_key(arguments: Mapping[str, Any], *, idempotency_key: str) -> str:
        keys.append(idempotency_key)
        return "ok"

    def without(arguments: Mapping[str, Any], **options: Any) -> str:
        assert options == {}
        return "ok"

    run_pending(recorder, {"keyed": with_key, "plain": without})
    assert keys == [keyed.invocation_id]


def test_on_pending_interrupt_answers_without_running(store: Store) -> None:
    _recorder, calls = _pending_run(store)

    def never(arguments: Mapping[str, Any]) -> None:
        raise AssertionError("must not run")

    results = run_pending(
        resume(store, "run-1"), {"add": never}, on_pending="interrupt"
    )
    assert [r.invocation_id for r in results] == [x.invocation_id for x in calls]
    for result in results:
        assert result.error is not None
        assert result.error.code == "INTERRUPTED"
        assert result.error.retryable
    validate(store.load("run-1"))


def test_on_pending_abort_raises_and_records_nothing(store: Store) -> None:
    _pending_run(store)
    before = store.load("run-1")
    with pytest.raises(c.PendingInvocations) as caught:
        run_pending(resume(store, "run-1"), {}, on_pending="abort")
    assert "3 pending" in str(caught.value)
    assert store.load("run-1") == before
    finished = Recorder(store, "run-2")
    finished.record(c.User("hi"))
    assert run_pending(finished, {}, on_pending="abort") == ()


def test_bad_arguments_to_run_pending(store: Store) -> None:
    recorder, _ = _pending_run(store)
    with pytest.raises(c.RecordingError):
        run_pending(recorder, {}, on_pending="later")  # type: ignore[arg-type]
    with pytest.raises(c.RecordingError):
        run_pending("run-1", {})  # type: ignore[arg-type]


def test_sync_run_pending_awaits_async_handlers(store: Store) -> None:
    recorder = Recorder(store, "run-1")
    _turn(recorder, "tool")

    async def tool(arguments: Mapping[str, Any]) -> str:
        await asyncio.sleep(0)
        return "async ok"

    (result,) = run_pending(recorder, {"tool": tool})
    assert result.content == (c.Text("async ok"),)


def test_sync_run_pending_in_an_event_loop_refuses_async_handlers(
    store: Store,
) -> None:
    recorder = Recorder(store, "run-1")
    _turn(recorder, "tool")

    async def tool(arguments: Mapping[str, Any]) -> str:
        return "x"

    async def main() -> None:
        with pytest.raises(c.RecordingError):
            run_pending(recorder, {"tool": tool})

    asyncio.run(main())
    assert len(recorder.pending()) == 1


# arun_pending ------------------------------------------------------------------


def test_arun_pending_runs_async_and_sync_handlers_concurrently(
    store: Store,
) -> None:
    recorder = Recorder(store, "run-1")
    first, second, third = _turn(recorder, "left", "right", "sync")
    both_started = threading.Barrier(2, timeout=5)
    started: list[str] = []

    async def left(arguments: Mapping[str, Any]) -> str:
        started.append("left")
        await asyncio.wait_for(gate.wait(), 5)
        return "L"

    async def right(arguments: Mapping[str, Any], *, idempotency_key: str) -> str:
        started.append("right")
        gate.set()
        return idempotency_key

    def sync(arguments: Mapping[str, Any]) -> str:
        both_started.wait()
        return "S"

    async def main() -> tuple[c.Result, ...]:
        global gate
        gate = asyncio.Event()
        runner = asyncio.ensure_future(
            recording.arun_pending(
                resume(store, "run-1"), {"left": left, "right": right, "sync": sync}
            )
        )
        await asyncio.to_thread(both_started.wait)
        return await runner

    results = asyncio.run(main())
    assert [r.invocation_id for r in results] == [
        first.invocation_id,
        second.invocation_id,
        third.invocation_id,
    ]
    assert [r.content[0].text for r in results] == [  # type: ignore[attr-defined]
        "L",
        second.invocation_id,
        "S",
    ]
    final = store.load("run-1")
    validate(final)
    assert final.pending_invocations() == ()


gate: asyncio.Event


def test_arun_pending_respects_concurrency(store: Store) -> None:
    recorder = Recorder(store, "run-1")
    _turn(recorder, *["t"] * 4)
    running = 0
    peak = 0

    async def tool(arguments: Mapping[str, Any]) -> str:
        nonlocal running, peak
        running += 1
        peak = max(peak, running)
        await asyncio.sleep(0.01)
        running -= 1
        return "ok"

    results = asyncio.run(recording.arun_pending(recorder, {"t": tool}, concurrency=2))
    assert len(results) == 4
    assert peak == 2
    with pytest.raises(c.RecordingError):
        asyncio.run(recording.arun_pending(recorder, {}, concurrency=0))


def test_arun_pending_modes_and_errors(store: Store) -> None:
    recorder, _calls = _pending_run(store)

    async def failing(arguments: Mapping[str, Any]) -> None:
        raise TimeoutError("too slow")

    with pytest.raises(c.PendingInvocations):
        asyncio.run(recording.arun_pending(recorder, {}, on_pending="abort"))
    results = asyncio.run(
        recording.arun_pending(
            recorder, {"add": lambda arguments: 1, "fail": failing}, concurrency=1
        )
    )
    codes = [r.error.code if r.error else None for r in results]
    assert codes == [None, "TIMEOUT", "NOT_FOUND"]
    assert asyncio.run(recording.arun_pending(recorder, {})) == ()
    validate(store.load("run-1"))


def test_arun_pending_interrupt(store: Store) -> None:
    recorder, calls = _pending_run(store)
    results = asyncio.run(recording.arun_pending(recorder, {}, on_pending="interrupt"))
    assert {r.error.code for r in results if r.error} == {"INTERRUPTED"}
    assert len(results) == len(calls)


def test_cancelling_arun_pending_leaves_invocations_pending(store: Store) -> None:
    recorder = Recorder(store, "run-1")
    _turn(recorder, "slow", "fast")

    async def slow(arguments: Mapping[str, Any]) -> str:
        await asyncio.sleep(30)
        return "never"

    async def main() -> None:
        task = asyncio.ensure_future(
            recording.arun_pending(
                recorder, {"slow": slow, "fast": lambda arguments: "ok"}
            )
        )
        while len(recorder.pending()) > 1:
            await asyncio.sleep(0.005)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task

    asyncio.run(main())
    pending = resume(store, "run-1").pending
    assert [p.name for p in pending] == ["slow"]


def test_concurrent_runners_never_run_an_invocation_twice(store: Store) -> None:
    recorder = Recorder(store, "run-1")
    _turn(recorder, *["t"] * 6)
    runs: list[str] = []
    lock = threading.Lock()

    def tool(arguments: Mapping[str, Any], *, idempotency_key: str) -> str:
        with lock:
            runs.append(idempotency_key)
        return "ok"

    threads = [
        threading.Thread(target=run_pending, args=(recorder, {"t": tool}))
        for _ in range(4)
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert sorted(runs) == sorted(set(runs))
    assert len(runs) == 6
    validate(store.load("run-1"))


# Snapshots ---------------------------------------------------------------------


def _rich(store: Store) -> c.Conversation:
    content_id = store.content.put(PNG)
    recorder = Recorder(store, "run-1", prompt_key="vision/v1")
    recorder.record(c.Supervisor("describe images " * 200))
    recorder.record(
        c.User(("what is this?", c.Image(content_id=content_id, hint="a chart")))
    )
    recorder.record(c.User(c.Image(data=PNG, mime_type="image/png")))
    (_call,) = _turn(recorder, "zoom")
    run_pending(recorder, {"zoom": lambda arguments: "zoomed"})
    return store.load("run-1")


@pytest.mark.parametrize("target", ["files", "sqlite"])
def test_snapshot_restores_into_another_store(
    store: Store, tmp_path: Path, target: str
) -> None:
    original = _rich(store)
    text = recording.snapshot(store, "run-1")
    document = orjson.loads(text)
    assert document["format"] == "canisters.snapshot"
    assert list(document["content"]) == ["sha256:" + hashlib.sha256(PNG).hexdigest()]
    with open_store(_location(tmp_path, target, "other")) as other:
        assert recording.restore(other, text) == "run-1"
        assert other.load("run-1") == original
        assert other.content.get(original[1].content[1].content_id) == PNG  # type: ignore[attr-defined]
        assert resume(other, "run-1", "vision/v1").pending == ()
        assert recording.snapshot(other, "run-1") == text


def test_restore_into_the_same_store_gets_a_new_id(store: Store) -> None:
    original = _rich(store)
    text = recording.snapshot(store, "run-1")
    copy = recording.restore(store, text)
    assert copy != "run-1"
    assert store.load(copy) == original
    assert recording.restore(store, text, conversation_id="named") == "named"
    with pytest.raises(c.SnapshotRestoreError):
        recording.restore(store, text, conversation_id="named")


def test_snapshot_of_unknown_conversation(store: Store) -> None:
    with pytest.raises(c.ConversationNotFound):
        recording.snapshot(store, "nope")


def _tampered(text: str, change: Any) -> str:
    document = orjson.loads(text)
    change(document)
    return orjson.dumps(document).decode()


def _swap_blob(document: dict[str, Any]) -> None:
    key = next(iter(document["content"]))
    document["content"][key] = base64.b64encode(b"other bytes").decode()


@pytest.mark.parametrize(
    "broken",
    [
        lambda text: "not json",
        lambda text: b"\xff\xfe",
        lambda text: "[]",
        lambda text: _tampered(text, lambda d: d.update(format="other")),
        lambda text: _tampered(text, lambda d: d.update(version=99)),
        lambda text: _tampered(text, lambda d: d.update(conversation_id=3)),
        lambda text: _tampered(text, lambda d: d.update(prompt_key=[])),
        lambda text: _tampered(text, lambda d: d.update(content=[])),
        lambda text: _tampered(text, lambda d: d.update(content={})),
        lambda text: _tampered(text, _swap_blob),
        lambda text: _tampered(
            text, lambda d: d["content"].update({next(iter(d["content"])): "@@"})
        ),
        lambda text: _tampered(
            text, lambda d: d["conversation"]["canisters"][0].update(role="robot")
        ),
        lambda text: _tampered(text, lambda d: d["conversation"].update(canisters=[])),
    ],
)
def test_unreadable_snapshots_raise_and_write_nothing(
    store: Store, tmp_path: Path, broken: Any
) -> None:
    _rich(store)
    text = recording.snapshot(store, "run-1")
    with open_store(tmp_path / "empty") as other:
        with pytest.raises(c.SnapshotRestoreError):
            recording.restore(other, broken(text))
        assert other.conversations() == []


def test_snapshot_carries_the_audit_log(store: Store, tmp_path: Path) -> None:
    from canisters.audit import AuditLog

    _rich(store)
    log = AuditLog(store, "run-1")
    log.record("x", "approved", by="test")
    text = recording.snapshot(store, "run-1")
    with open_store(tmp_path / "other") as other:
        recording.restore(other, text)
        assert AuditLog(other, "run-1").entries() == log.entries()


# Lone surrogates in a snapshot (issue 34) ---------------------------------------------


@dataclasses.dataclass(frozen=True)
class _Key:
    """A step naming an object's key itself, not the value under it."""

    name: str

    def __str__(self) -> str:
        return f"<key {self.name}>"


Path_ = tuple[Any, ...]

# Objects whose keys are data (the others' keys name fields: another name is
# another field, not the same text changed).
_DATA_KEYS = frozenset(("side_files", "content", "arguments", "extras", "custom"))


def _string_paths(value: Any, path: Path_ = ()) -> Iterator[Path_]:
    """The path of every string in a JSON value, and of every key that is data."""
    if isinstance(value, dict):
        for key, item in value.items():
            if path and path[-1] in _DATA_KEYS:
                yield (*path, _Key(key))
            yield from _string_paths(item, (*path, key))
    elif isinstance(value, list):
        for index, item in enumerate(value):
            yield from _string_paths(item, (*path, index))
    elif isinstance(value, str):
        yield path


def _with_lone_surrogate(document: dict[str, Any], path: Path_) -> dict[str, Any]:
    """A copy of ``document`` whose string at ``path`` ends in a lone surrogate."""
    changed = copy.deepcopy(document)
    *above, last = path
    holder: Any = changed
    for step in above:
        holder = holder[step]
    if isinstance(last, _Key):
        holder[last.name + "\ud800"] = holder.pop(last.name)
    else:
        holder[last] += "\ud800"
    return changed


def _contents(store: Store) -> object:
    """Everything a store holds: its files' bytes, or its database's rows."""
    if isinstance(store, FileStore):
        return {
            str(path.relative_to(store.root)): path.read_bytes()
            for path in sorted(store.root.rglob("*"))
            if path.is_file()
        }
    assert isinstance(store, SQLiteStore)
    with contextlib.closing(sqlite3.connect(store.path)) as connection:
        tables = [
            name
            for (name,) in connection.execute(
                "SELECT name FROM sqlite_master WHERE type = 'table'"
            )
        ]
        return {
            table: sorted(
                connection.execute(f"SELECT * FROM {table}").fetchall(), key=repr
            )
            for table in tables
        }


def _surrogate_snapshot(store: Store) -> dict[str, Any]:
    from canisters.audit import AuditLog

    _rich(store)
    AuditLog(store, "run-1").record("x", "approved", by="test")
    document: dict[str, Any] = json.loads(recording.snapshot(store, "run-1"))
    assert document["side_files"]["audit"] and document["prompt_key"]
    return document


_PNG_ID = "sha256:" + hashlib.sha256(PNG).hexdigest()

# What a store cannot write: a side-file line is UTF-8 text, and ids and content
# keys have their own shapes. Everything else a snapshot holds is kept exactly.
_REFUSED_AT = (
    ("format",),
    ("conversation_id",),
    ("side_files", _Key("audit")),
    ("side_files", "audit", 0),
    ("content", _Key(_PNG_ID)),
)
_KEPT_AT = (
    ("prompt_key",),
    ("conversation", "canisters", 0, "content", 0, "text"),  # a system prompt
    ("conversation", "canisters", 1, "content", 0, "text"),
)


def test_every_string_of_a_snapshot_with_a_lone_surrogate_is_kept_or_refused(
    store: Store, tmp_path: Path, backend: str
) -> None:
    document = _surrogate_snapshot(store)
    paths = list(_string_paths(document))
    assert set(_REFUSED_AT) | set(_KEPT_AT) <= set(paths)
    kept, refused = set(), set()
    with open_store(_location(tmp_path, backend, "target")) as target:
        for path in paths:
            changed = _with_lone_surrogate(document, path)
            before = _contents(target)
            try:
                # json.dumps writes the lone surrogate as its \uXXXX escape.
                restored = recording.restore(target, json.dumps(changed))
            except c.SnapshotRestoreError:
                refused.add(path)
                assert _contents(target) == before, path
                continue
            kept.add(path)
            again = json.loads(recording.snapshot(target, restored))
            assert again == {**changed, "conversation_id": restored}, path
            if path == ("prompt_key",):
                assert resume(target, restored, document["prompt_key"] + "\ud800")
    assert set(_REFUSED_AT) <= refused
    assert set(_KEPT_AT) <= kept


@pytest.mark.parametrize(
    "path", [*_REFUSED_AT, *_KEPT_AT], ids=lambda path: ".".join(map(str, path))
)
def test_store_import_of_a_snapshot_with_a_lone_surrogate(
    store: Store,
    tmp_path: Path,
    backend: str,
    path: Path_,
    capsys: pytest.CaptureFixture[str],
) -> None:
    from canisters.cli import run

    document = _with_lone_surrogate(_surrogate_snapshot(store), path)
    snapshot = tmp_path / "snapshot.json"
    snapshot.write_text(json.dumps(document), encoding="ascii")
    where = _location(tmp_path, backend, "target")
    with open_store(where) as target:
        target.append("other", c.User("already here"))
        before = _contents(target)
    code = run(["store", "import", where, str(snapshot)])
    err = capsys.readouterr().err
    with open_store(where, read_only=True) as target:
        if path in _REFUSED_AT:
            assert code == 2, err
            assert err.startswith(f"canisters: error: {snapshot}: cannot restore")
            assert len(err.splitlines()) == 1
            assert _contents(target) == before
        else:
            assert code == 0, err
            restored = json.loads(recording.snapshot(target, "run-1"))
            assert restored == document


def test_a_side_file_line_with_a_lone_surrogate_is_refused_before_any_write(
    store: Store,
) -> None:
    store.sidecar("chat", "notes").append_line("fine")
    before = _contents(store)
    for line in ("\ud800", "text then \udfff", "\ud83d\ude00 split", "a\x00b"):
        with pytest.raises(c.ModelError) as caught:
            store.sidecar("chat", "notes").append_line(line)
        assert "side-file line" in str(caught.value)
    assert _contents(store) == before
    assert store.sidecar("chat", "notes").read_lines() == ["fine"]


def test_a_prompt_key_with_a_lone_surrogate_is_kept(store: Store) -> None:
    key = "triage/\udc80v3"
    recorder = Recorder(store, "run-1", prompt_key=key)
    recorder.record(c.User("hi"))
    assert recording.recorded_prompt_key(store, "run-1") == key
    assert resume(store, "run-1", key).prompt_key == key
    with pytest.raises(c.PromptMismatch):
        resume(store, "run-1", "triage/v3")


def test_a_prompt_key_no_document_can_hold_is_refused_before_any_write(
    store: Store,
) -> None:
    before = _contents(store)
    with pytest.raises(c.SerializationError, match="surrogate pair"):
        Recorder(store, "run-1", prompt_key="\ud83d\ude00")
    with pytest.raises(c.ModelError, match="prompt key"):
        Recorder(store, "run-1", prompt_key=3)  # type: ignore[arg-type]
    assert _contents(store) == before


# Lineage and summaries ------------------------------------------------------------


def test_lineage_helpers() -> None:
    trace = recording.new_trace()
    assert trace != recording.new_trace()
    user = recording.with_trace(c.User("go"), trace)
    assert user.trace_id == trace
    assert recording.with_trace(c.User("x")).trace_id is not None
    assistant = c.child_of(user, c.Assistant("thinking"))
    call = c.child_of(assistant, c.Invocation("f"))
    result = c.child_of(call, c.Result(call.invocation_id, "f", "ok"))
    other = c.User("unrelated", trace_id="t-2")
    looping = c.User("loop", id="loop", parent_id="loop")
    conversation = c.Conversation([user, assistant, call, other, result, looping])
    assert list(recording.lineage(conversation, result.id)) == [
        user,
        assistant,
        call,
        result,
    ]
    assert list(recording.lineage(conversation, user.id)) == [user]
    assert list(recording.lineage(conversation, "loop")) == [looping]
    assert list(recording.trace(conversation, trace)) == [
        user,
        assistant,
        call,
        result,
    ]
    with pytest.raises(c.CanisterNotFound):
        recording.lineage(conversation, "missing")

    class Plain:
        role = c.Role.User

    with pytest.raises(c.RecordingError):
        recording.with_trace(Plain())  # type: ignore[type-var]


def test_trace_summary() -> None:
    def answer(tokens: int, latency: float, retries: int, **kw: Any) -> c.Assistant:
        usage = c.Usage(input_tokens=tokens, output_tokens=1)
        metadata = c.Metadata(
            model="m", latency_ms=latency, usage=usage, retries=retries, **kw
        )
        return c.Assistant("a", metadata=metadata, trace_id="t1", policy="planner")

    call = c.Invocation("f", trace_id="t1", policy="planner")
    conversation = c.Conversation(
        [
            c.User("go"),
            answer(10, 100.0, 1),
            call,
            c.Result(
                call.invocation_id,
                "f",
                error=c.ErrorInfo("TOOL_ERROR", "x"),
                trace_id="t1",
                policy="runtime",
                metadata=c.Metadata(latency_ms=5.5),
            ),
            answer(20, 50.0, 0, cache_hit=True),
            c.Assistant("other", trace_id="t2", policy="critic"),
        ]
    )
    summary = recording.trace_summary(conversation)
    t1 = summary.traces["t1"]
    assert (t1.model_calls, t1.invocations, t1.errors) == (2, 1, 1)
    assert t1.tokens == 32
    assert t1.latency_ms == 155.5
    assert (t1.retries, t1.cache_hits, t1.canisters) == (1, 1, 4)
    assert summary.traces[None].canisters == 1
    assert summary.policies["planner"].model_calls == 2
    assert summary.policies["runtime"].errors == 1
    assert summary.policies["critic"].tokens == 0
    assert summary.total.canisters == 6
    assert summary.total.model_calls == 3
    flat = summary.as_dict()
    assert flat["traces"]["t1"]["tokens"] == 32
    assert flat["traces"][""]["canisters"] == 1
    assert orjson.loads(orjson.dumps(flat)) == flat
    assert recording.trace_summary([]).total == recording.TraceTotals()


# Properties --------------------------------------------------------------------

roles = st.lists(
    st.sampled_from(["user", "assistant", "invoke", "answer", "supervisor"]),
    max_size=30,
)


@settings(max_examples=examples(60), deadline=None)
@given(roles)
def test_step_rules_hold_for_any_sequence(
    tmp_path_factory: Any, plan: list[str]
) -> None:
    with open_store(tmp_path_factory.mktemp("steps")) as store:
        recorder = Recorder(store, "run")
        recorder.record(c.User("start"))
        waiting: list[c.Invocation] = []
        for kind in plan:
            if kind == "user":
                recorder.record(c.User("u"))
            elif kind == "supervisor":
                recorder.record(c.Supervisor("s"))
            elif kind == "assistant":
                recorder.record(c.Assistant("a"))
            elif kind == "invoke":
                waiting.append(recorder.record(c.Invocation("f")))
            elif waiting:
                call = waiting.pop(0)
                recorder.record(c.Result(call.invocation_id, "f", "ok"))
        conversation = store.load("run")
        steps_of = {i.invocation_id: i.step for i in conversation.invocations()}
        last = 0
        assistants: dict[int | None, int] = {}
        for canister in conversation:
            assert canister.step is not None
            if isinstance(canister, c.Result):
                assert canister.step == steps_of[canister.invocation_id]
                continue
            assert canister.step in (last, last + 1)
            last = canister.step
            if isinstance(canister, c.Assistant):
                assistants[canister.step] = assistants.get(canister.step, 0) + 1
        assert all(count == 1 for count in assistants.values())
        resumed = Recorder(store, "run")
        assert resumed.step == recorder.step
        for probe in (c.User("n"), c.Assistant("n"), c.Invocation("f")):
            assert resumed._clock.assign(probe) == recorder._clock.assign(probe)


# The documented example ------------------------------------------------------------


def test_the_resume_example_runs() -> None:
    root = Path(__file__).resolve().parent.parent
    script = root / "documentation" / "examples" / "resume.py"
    completed = subprocess.run(
        [sys.executable, str(script)], capture_output=True, text=True, timeout=120
    )
    assert completed.returncode == 0, completed.stderr
    assert "killed while looking up Rome" in completed.stdout
    assert "pending: weather({'city': 'Rome'})" in completed.stdout
    assert "ran 1 pending invocation(s)" in completed.stdout
    assert completed.stdout.count("tool_call_approved") == 2


def test_public_surface() -> None:
    assert sorted(recording.__all__) == sorted(
        [
            "CARRIED_SIDE_FILES",
            "FailedCall",
            "Handler",
            "OnPending",
            "PROMPT_KEY_FILE",
            "PROVIDER_ERROR",
            "Recorder",
            "Resumption",
            "SNAPSHOT_FORMAT",
            "SNAPSHOT_VERSION",
            "TraceSummary",
            "TraceTotals",
            "arun_pending",
            "lineage",
            "new_trace",
            "recorded_prompt_key",
            "restore",
            "resume",
            "run_pending",
            "snapshot",
            "trace",
            "trace_summary",
            "with_trace",
        ]
    )
    for name in recording.__all__:
        assert getattr(recording, name) is not None
    for error in ("PromptMismatch", "SnapshotRestoreError", "ConversationNotFound"):
        assert issubclass(getattr(c, error), c.CanistersError)
