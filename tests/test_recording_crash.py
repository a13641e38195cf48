"""A real crash: an agent process killed with SIGKILL, then resumed by another.

The agent (the script below, run as its own process) records a supervisor and a
user message, then two assistant turns of two parallel invocations each, whose
handlers sleep, then a final answer. Its progress markers on stdout let the test
kill it at every point: after each record, as a handler starts, in the middle of
its sleep, after it returns but before its result is recorded. A second process
resumes the conversation, runs only what is pending, and finishes the loop. The
final conversation must validate with every invocation answered exactly once,
and no handler whose result was recorded before the kill may run again.
"""

from __future__ import annotations

import collections
import os
import random
import signal
import subprocess
import sys
import time
import traceback
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any, TypeVar

import pytest

from canisters import Assistant, Invocation, Result, Role, Supervisor, User
from canisters.protocols import Canister
from canisters.recording import Recorder, recorded_prompt_key, resume, run_pending
from canisters.storage import open_store
from canisters.validation import validate

C = TypeVar("C", bound=Canister)

CITIES = [("Paris", "Rome"), ("Oslo", "Lima")]
PROMPT_KEY = "weather/v1"


def agent(location: str, ledger: str, phase: str, sleep: float, out: int) -> None:
    """The agent loop: resume when the conversation exists, then finish it.

    Progress markers go to file descriptor ``out``, one per line; each handler
    run is noted in the ``ledger`` file with its idempotency key and ``phase``.
    """

    def mark(what: str) -> None:
        os.write(out, (what + "\n").encode())

    def note(line: str) -> None:
        fd = os.open(ledger, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
        try:
            os.write(fd, (line + "\n").encode())
        finally:
            os.close(fd)

    def tool(arguments: Mapping[str, Any], *, idempotency_key: str) -> Any:
        mark("begin")
        note(f"begin {idempotency_key} {phase}")
        time.sleep(sleep)
        note(f"end {idempotency_key} {phase}")
        mark("end")
        return {"city": arguments["city"], "letters": len(arguments["city"])}

    class MarkingRecorder(Recorder):
        def record(self, canister: C) -> C:
            recorded = super().record(canister)
            mark("record")
            return recorded

        def record_all(self, canisters: Iterable[Canister]) -> tuple[Canister, ...]:
            recorded = super().record_all(canisters)
            mark("record")
            return recorded

    handlers = {"weather": tool, "time": tool}
    with open_store(location) as store:
        if store.exists("run"):
            resumption = resume(store, "run", prompt_key=PROMPT_KEY)
            mark("resumed")
            run_pending(resumption, handlers)
            recorder = MarkingRecorder(store, "run", PROMPT_KEY)
        else:
            recorder = MarkingRecorder(store, "run", PROMPT_KEY)
            recorder.record(Supervisor("You report the weather."))
            recorder.record(User("Weather in Paris and Rome, then in Oslo and Lima?"))
        while True:
            conversation = recorder.conversation
            if conversation.pending_invocations():
                run_pending(recorder, handlers)
                continue
            turns = sum(1 for c in conversation if c.role is Role.Assistant)
            if turns < len(CITIES):
                first, second = CITIES[turns]
                recorder.record_all(
                    [
                        Assistant(f"Checking {first} and {second}."),
                        Invocation("weather", {"city": first}),
                        Invocation("time", {"city": second}),
                    ]
                )
                run_pending(recorder, handlers)
            elif turns == len(CITIES):
                recorder.record(Assistant("Here is the weather."))
            else:
                break
    mark("done")


SLEEP = 0.05
ROOT = Path(__file__).resolve().parent.parent
LAUNCH = (
    "import sys; sys.path.insert(0, sys.argv[1]); "
    "from tests.test_recording_crash import agent; "
    "agent(sys.argv[2], sys.argv[3], sys.argv[4], float(sys.argv[5]), 1)"
)


class _Agent:
    """A running agent process and the stream of its progress markers.

    Forked from the test process by default (fast: the library is already
    imported), or started as a fresh interpreter.
    """

    def __init__(
        self, location: str, ledger: Path, phase: str, *, fresh: bool = False
    ) -> None:
        self.process: subprocess.Popen[bytes] | None = None
        if fresh:
            arguments = [str(ROOT), location, str(ledger), phase, str(SLEEP)]
            self.process = subprocess.Popen(
                [sys.executable, "-c", LAUNCH, *arguments], stdout=subprocess.PIPE
            )
            self.pid = self.process.pid
            assert self.process.stdout is not None
            self.markers = self.process.stdout
            return
        read, write = os.pipe()
        pid = os.fork()
        if pid == 0:  # pragma: no cover - the child
            os.close(read)
            status = 0
            try:
                agent(location, str(ledger), phase, SLEEP, write)
            except BaseException:
                traceback.print_exc()
                status = 1
            os._exit(status)
        os.close(write)
        self.pid = pid
        self.markers = os.fdopen(read, "rb")

    def _alive(self) -> bool:
        if self.process is not None:
            return self.process.poll() is None
        try:
            pid, _ = os.waitpid(self.pid, os.WNOHANG)
        except ChildProcessError:
            return False
        if pid == 0:
            return True
        self._status = 0
        return False

    def wait(self) -> int:
        """Drain the markers, reap the process and return its exit code."""
        self.markers.read()
        self.markers.close()
        if self.process is not None:
            return self.process.wait()
        if hasattr(self, "_status"):
            return self._status
        _, status = os.waitpid(self.pid, 0)
        return os.waitstatus_to_exitcode(status)

    def kill_at(self, marker: int, delay: float) -> bool:
        """Kill ``delay`` seconds after the ``marker``-th progress line.

        Returns whether the process was still alive to be killed.
        """
        for _ in range(marker):
            if not self.markers.readline():
                break
        if delay:
            time.sleep(delay)
        return self._kill()

    def kill_after(self, seconds: float) -> bool:
        """Kill ``seconds`` after the start; returns whether it was still alive."""
        time.sleep(seconds)
        return self._kill()

    def _kill(self) -> bool:
        alive = self._alive()
        if alive:
            os.kill(self.pid, signal.SIGKILL)
        self.wait()
        return alive


def _location(tmp_path: Path, backend: str) -> str:
    if backend == "sqlite":
        return f"sqlite:///{tmp_path / 'store.db'}"
    return str(tmp_path / "store")


def _answered(location: str) -> set[str]:
    with open_store(location) as store:
        if not store.exists("run"):
            return set()
        return {
            c.invocation_id  # type: ignore[attr-defined]
            for c in store.load("run")
            if c.role is Role.Result
        }


def _finish(location: str, ledger: Path, phase: str = "resume", **kw: Any) -> None:
    assert _Agent(location, ledger, phase, **kw).wait() == 0


def _check(
    location: str,
    ledger: Path,
    answered_at_kill: set[str],
    later: str = "resume",
    most_runs: int = 2,
) -> None:
    """The final conversation is whole and nothing answered ran again."""
    with open_store(location) as store:
        conversation = store.load("run")
        assert recorded_prompt_key(store, "run") == PROMPT_KEY
    validate(conversation)
    assert conversation.pending_invocations() == ()
    assistants = [c for c in conversation if isinstance(c, Assistant)]
    invocations = [c for c in conversation if isinstance(c, Invocation)]
    results = [c for c in conversation if isinstance(c, Result)]
    assert len(assistants) == 3
    assert len(invocations) == 4
    assert {i.arguments["city"] for i in invocations} == {
        city for pair in CITIES for city in pair
    }
    answers = collections.Counter(r.invocation_id for r in results)
    assert all(answers[i.invocation_id] == 1 for i in invocations)
    assert len(results) == 4
    steps = {i.invocation_id: i.step for i in invocations}
    for result in results:
        assert result.error is None, result.error
        assert result.step == steps[result.invocation_id]
    runs: collections.Counter[str] = collections.Counter()
    ends: collections.Counter[str] = collections.Counter()
    for line in ledger.read_text().splitlines():
        event, key, phase = line.split()
        if event == "begin":
            runs[key] += 1
            assert not (phase == later and key in answered_at_kill), (
                f"{key} ran again after its result was recorded"
            )
        else:
            ends[key] += 1
    for invocation in invocations:
        # Once, plus once per process killed between its start and its record.
        assert 1 <= runs[invocation.invocation_id] <= most_runs
        assert ends[invocation.invocation_id] >= 1


def _scenario(tmp_path: Path, backend: str, marker: int, delay: float) -> bool:
    location = _location(tmp_path, backend)
    ledger = tmp_path / "ledger"
    killed = _Agent(location, ledger, "first").kill_at(marker, delay)
    answered = _answered(location)
    _finish(location, ledger)
    _check(location, ledger, answered)
    return killed


# A full run prints 19 progress lines: 8 records, 4 x (begin, end) of handlers,
# then "done". Killing right after each of them, and half a handler's sleep
# later (inside a handler, or between a handler's return and its record),
# covers every point of the loop; each backend gets every line once.
BACKENDS = ("files", "sqlite")
KILL_POINTS = [
    (marker, delay, BACKENDS[(marker + late) % 2])
    for marker in range(19)
    for late, delay in enumerate((0.0, SLEEP / 2))
]


@pytest.mark.parametrize(
    ("marker", "delay", "backend"),
    KILL_POINTS,
    ids=[f"{m}-{'late' if d else 'now'}-{b}" for m, d, b in KILL_POINTS],
)
def test_killed_agent_resumes(
    tmp_path: Path, marker: int, delay: float, backend: str
) -> None:
    killed = _scenario(tmp_path, backend, marker, delay)
    # Only the last few steps finish faster than a late kill can land.
    assert killed or marker >= 15


@pytest.mark.parametrize("backend", ["files", "sqlite"])
def test_killed_agent_resumes_after_random_delays(tmp_path: Path, backend: str) -> None:
    rng = random.Random(20260)
    for index in range(4):
        directory = tmp_path / str(index)
        directory.mkdir()
        location = _location(directory, backend)
        ledger = directory / "ledger"
        _Agent(location, ledger, "first").kill_after(rng.uniform(0.0, 0.35))
        answered = _answered(location)
        _finish(location, ledger)
        _check(location, ledger, answered)


def test_fresh_interpreters_and_a_killed_resume(tmp_path: Path) -> None:
    location = _location(tmp_path, "files")
    ledger = tmp_path / "ledger"
    assert _Agent(location, ledger, "first", fresh=True).kill_at(4, SLEEP / 2)
    answered = _answered(location)
    # The second process dies inside its first handler; the third finishes.
    assert _Agent(location, ledger, "resume", fresh=True).kill_at(2, SLEEP / 2)
    answered_again = _answered(location)
    assert answered <= answered_again
    _finish(location, ledger, "final", fresh=True)
    _check(location, ledger, answered, "resume", most_runs=3)
    _check(location, ledger, answered_again, "final", most_runs=3)
