"""canisters.audit: the audit log (memory, standalone file, beside a conversation)."""

from __future__ import annotations

import multiprocessing
import os
import threading
from collections.abc import Callable, Iterator
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import attrs
import orjson
import pytest

import canisters as c
from canisters import recording
from canisters.audit import AUDIT_FILE, AuditEntry, AuditLog, log_view
from canisters.storage import open_store

LogFactory = Callable[[], AuditLog]


def _location(tmp_path: Path, kind: str) -> str:
    if kind == "sqlite":
        return f"sqlite:///{tmp_path / 'store.db'}"
    return str(tmp_path / "store")


@pytest.fixture(params=["memory", "path", "files", "sqlite"])
def make_log(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[LogFactory]:
    """Return a factory of logs that all share one persisted place."""
    kind = str(request.param)
    if kind == "memory":
        log = AuditLog()
        yield lambda: log
    elif kind == "path":
        yield lambda: AuditLog(tmp_path / "logs" / "audit.jsonl")
    else:
        with open_store(_location(tmp_path, kind)) as store:
            yield lambda: AuditLog(store, "run-1")


def test_record_returns_the_entry_it_persists(make_log: LogFactory) -> None:
    log = make_log()
    call = c.Invocation("fs.read", {"path": "README.md"})
    entry = log.record(call, "tool_call_approved", tool="fs.read", granted=True)
    assert entry.canister_id == call.id
    assert entry.decision == "tool_call_approved"
    assert entry.details == {"tool": "fs.read", "granted": True}
    assert entry.timestamp.tzinfo is not None
    assert entry.timestamp.utcoffset() == timezone.utc.utcoffset(None)
    assert entry.id
    assert make_log().entries() == (entry,)


def test_entries_by_id_or_none_and_filters(make_log: LogFactory) -> None:
    log = make_log()
    first = log.record("abc", "planning")
    second = log.record(None, "session_started", user="ada")
    third = log.record("abc", "tool_call_denied", reason="no permission")
    assert log.entries() == (first, second, third)
    assert log.entries(canister_id="abc") == (first, third)
    assert log.entries(decision="session_started") == (second,)
    assert log.entries(canister_id="abc", decision="planning") == (first,)
    assert len(log) == 3
    assert list(log) == [first, second, third]
    assert len({first.id, second.id, third.id}) == 3


def test_details_are_made_json(make_log: LogFactory) -> None:
    log = make_log()
    user = c.User("hello", id="u1")

    @attrs.frozen
    class Decision:
        score: float
        labels: tuple[str, ...]

    entry = log.record(
        user,
        "scored",
        message=user,
        decision=Decision(0.5, ("a",)),
        blob=b"\x00\x01",
        tags={"x"},
        nested={"k": [1, 2, {"deep": None}]},
    )
    details = make_log().entries()[0].details
    assert details == entry.details
    assert details["message"]["id"] == "u1"
    assert details["message"]["text"] == "hello"
    assert details["decision"] == {"score": 0.5, "labels": ["a"]}
    assert details["blob"] == "AAE="
    assert details["tags"] == ["x"]
    assert details["nested"] == {"k": [1, 2, {"deep": None}]}


def test_bad_records_are_refused_and_write_nothing(make_log: LogFactory) -> None:
    log = make_log()
    with pytest.raises(c.SerializationError):
        log.record("x", "decided", thing=object())
    with pytest.raises(c.SerializationError):
        log.record("x", "")
    assert make_log().entries() == ()


def test_exports(make_log: LogFactory) -> None:
    log = make_log()
    entries = [log.record(f"c{i}", "step", n=i) for i in range(3)]
    document = orjson.loads(log.export_json())
    assert document["format"] == "canisters.audit"
    assert document["version"] == 1
    assert [AuditEntry.from_dict(e) for e in document["entries"]] == entries
    lines = log.export_jsonl().splitlines()
    assert [AuditEntry.from_dict(orjson.loads(line)) for line in lines] == entries
    assert document["entries"][0]["details"] == {"n": 0}
    assert AuditLog().export_jsonl() == ""


def test_from_dict_refuses_garbage() -> None:
    good = AuditLog().record("x", "ok").as_dict()
    for broken in (
        {},
        {**good, "timestamp": "yesterday"},
        {**good, "timestamp": "2026-01-01T00:00:00"},
        {**good, "decision": 3},
        {**good, "details": []},
        {**good, "canister_id": 5},
    ):
        with pytest.raises(c.SerializationError):
            AuditEntry.from_dict(broken)


def test_from_dict_reads_timestamps_alike_on_every_python() -> None:
    good = AuditLog().record("x", "ok").as_dict()
    entry = AuditEntry.from_dict({**good, "timestamp": "2026-01-01T00:00:00.5Z"})
    assert entry.timestamp == datetime(2026, 1, 1, 0, 0, 0, 500000, timezone.utc)


def test_constructor_arguments(tmp_path: Path) -> None:
    with pytest.raises(c.StorageError):
        AuditLog(tmp_path / "a.jsonl", "run-1")
    with open_store(tmp_path / "store") as store:
        with pytest.raises(c.StorageError):
            AuditLog(store)
        assert "run-1" in repr(AuditLog(store, "run-1"))
    assert repr(AuditLog()) == "AuditLog(memory)"


def test_standalone_file_is_jsonl_and_survives_a_torn_line(tmp_path: Path) -> None:
    path = tmp_path / "audit.jsonl"
    log = AuditLog(str(path), durability="flush")
    assert log.entries() == ()
    first = log.record("a", "one")
    with open(path, "ab") as file:
        file.write(b'{"id": "torn", "timest')  # a writer killed mid-line
    assert log.entries() == (first,)
    second = log.record("b", "two")
    assert log.entries() == (first, second)
    lines = path.read_bytes().splitlines()
    assert len(lines) == 3
    assert orjson.loads(lines[0])["decision"] == "one"


def test_log_beside_a_conversation_lives_with_it(tmp_path: Path) -> None:
    with open_store(tmp_path / "store") as store:
        log = AuditLog(store, "run-1")
        log.record("x", "approved")
        store.append("run-1", c.User("hi"))
        with open_store(tmp_path / "store") as again:
            assert len(AuditLog(again, "run-1").entries()) == 1
            assert AuditLog(again, "run-2").entries() == ()
        store.delete("run-1")
        assert AuditLog(store, "run-1").entries() == ()


def test_snapshots_carry_the_audit_side_file() -> None:
    assert AUDIT_FILE in recording.CARRIED_SIDE_FILES


# Concurrency -----------------------------------------------------------------------

THREADS = 8
PER_WORKER = 40


def _check_concurrent(log: AuditLog, workers: int) -> None:
    entries = log.entries()
    assert len(entries) == workers * PER_WORKER
    assert len({e.id for e in entries}) == len(entries)
    by_worker: dict[str, list[int]] = {}
    for entry in entries:
        by_worker.setdefault(entry.details["worker"], []).append(entry.details["n"])
    assert len(by_worker) == workers
    for numbers in by_worker.values():
        assert numbers == list(range(PER_WORKER))


def test_threads_share_one_log(make_log: LogFactory) -> None:
    log = make_log()

    def work(worker: int) -> None:
        for n in range(PER_WORKER):
            log.record(f"c{worker}", "tick", worker=str(worker), n=n)

    threads = [threading.Thread(target=work, args=(i,)) for i in range(THREADS)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    _check_concurrent(make_log(), THREADS)


def test_threads_with_a_log_each(make_log: LogFactory) -> None:
    def work(worker: int) -> None:
        log = make_log()
        for n in range(PER_WORKER):
            log.record(None, "tick", worker=str(worker), n=n)

    threads = [threading.Thread(target=work, args=(i,)) for i in range(THREADS)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    _check_concurrent(make_log(), THREADS)


def _process_worker(target: str, conversation_id: str | None, worker: int) -> None:
    if conversation_id is None:
        log = AuditLog(target)
        for n in range(PER_WORKER):
            log.record(None, "tick", worker=str(worker), n=n, pid=os.getpid())
        return
    with open_store(target) as store:
        log = AuditLog(store, conversation_id)
        for n in range(PER_WORKER):
            log.record(None, "tick", worker=str(worker), n=n, pid=os.getpid())


@pytest.mark.parametrize("kind", ["path", "files", "sqlite"])
def test_processes_append_to_one_log(tmp_path: Path, kind: str) -> None:
    if kind == "path":
        target, conversation_id = str(tmp_path / "audit.jsonl"), None
    else:
        target, conversation_id = _location(tmp_path, kind), "run-1"
        open_store(target).close()
    # Forked, not spawned: real processes, without paying an interpreter start each.
    method = "fork" if "fork" in multiprocessing.get_all_start_methods() else "spawn"
    context = multiprocessing.get_context(method)
    processes = [
        context.Process(target=_process_worker, args=(target, conversation_id, i))
        for i in range(4)
    ]
    for process in processes:
        process.start()
    for process in processes:
        process.join(60)
        assert process.exitcode == 0
    if conversation_id is None:
        entries = AuditLog(target).entries()
        _check_concurrent(AuditLog(target), 4)
    else:
        with open_store(target) as store:
            entries = AuditLog(store, conversation_id).entries()
            _check_concurrent(AuditLog(store, conversation_id), 4)
    assert len({e.details["pid"] for e in entries}) == 4


# log_view ----------------------------------------------------------------------


def _flat(view: dict[str, Any]) -> None:
    for key, value in view.items():
        assert isinstance(key, str)
        assert value is None or isinstance(value, (str, int, float, bool)), key


def test_log_view_of_every_role() -> None:
    metadata = c.Metadata(
        model="m-1",
        latency_ms=12.5,
        usage=c.Usage(input_tokens=3, output_tokens=4),
        retries=1,
        finish_reason="stop",
        custom={"ignored": {"nested": True}},
    )
    assistant = c.Assistant(
        (c.Reasoning("secret thoughts"), c.Text("Hello"), c.Text("world")),
        metadata=metadata,
        trace_id="t",
        parent_id="p",
        policy="planner",
        step=2,
    )
    view = log_view(assistant)
    _flat(view)
    assert view["role"] == "assistant"
    assert view["text"] == "Hello\nworld"
    assert view["reasoning_parts"] == 1
    assert "secret" not in str(view)
    assert view["content_types"] == "reasoning,text,text"
    assert (view["model"], view["input_tokens"], view["output_tokens"]) == (
        "m-1",
        3,
        4,
    )
    assert (view["trace_id"], view["parent_id"], view["policy"], view["step"]) == (
        "t",
        "p",
        "planner",
        2,
    )
    assert view["timestamp"] == assistant.timestamp.isoformat()

    call = c.Invocation("search", {"q": "cats", "n": 3})
    view = log_view(call)
    _flat(view)
    assert view["name"] == "search"
    assert view["invocation_id"] == call.invocation_id
    assert orjson.loads(view["arguments"]) == {"q": "cats", "n": 3}

    failed = c.Result(
        call.invocation_id, "search", error=c.ErrorInfo("TIMEOUT", "slow", True)
    )
    view = log_view(failed)
    _flat(view)
    assert view["is_error"] is True
    assert (view["error_code"], view["error_message"], view["retryable"]) == (
        "TIMEOUT",
        "slow",
        True,
    )
    ok = log_view(c.Result(call.invocation_id, "search", "found"))
    assert ok["is_error"] is False
    assert ok["text"] == "found"

    document = c.Document("facts", title="Manual", document_id="doc-7")
    view = log_view(document)
    assert (view["title"], view["document_id"], view["text"]) == (
        "Manual",
        "doc-7",
        "facts",
    )
    picture = log_view(c.User(("look", c.Image(url="https://e.com/a.png"))))
    assert picture["media"] == 1
    assert log_view(c.Supervisor("rules"))["role"] == "supervisor"
    assert "text" not in log_view(c.Assistant(()))


def test_log_view_clips_text() -> None:
    user = c.User("x" * 500)
    assert len(log_view(user)["text"]) == 201
    assert log_view(user, text_limit=None)["text"] == "x" * 500
    call = c.Invocation("f", {"long": "y" * 500})
    assert len(log_view(call, text_limit=50)["arguments"]) == 51


def test_log_view_of_a_subclass() -> None:
    @attrs.frozen
    class Tagged(c.User):
        tag: str = "t"

    view = log_view(Tagged("hi"))
    assert view["role"] == "user"
    assert view["text"] == "hi"


def test_public_surface() -> None:
    from canisters import audit

    assert sorted(audit.__all__) == [
        "AUDIT_FILE",
        "AUDIT_FORMAT",
        "AUDIT_VERSION",
        "AuditEntry",
        "AuditLog",
        "log_view",
    ]


def test_bad_arguments_raise_library_errors() -> None:
    log = AuditLog()
    with pytest.raises(c.SerializationError, match="canister"):
        log.record(5, "approved")  # type: ignore[arg-type]
    with pytest.raises(c.ModelError, match="canister"):
        log_view("not a canister")  # type: ignore[arg-type]
