"""A store survives a writer killed with SIGKILL at random moments.

A child process appends canisters (with blobs, so every append writes blob files
and then the log record) in a loop, reporting each id once its append returned;
the parent kills it at a random moment, then checks that the store loads, that
every reported canister is there, in order, and that the chain verifies. Many
rounds run against the same conversation, so later rounds also append after
whatever the previous kill left behind.
"""

from __future__ import annotations

import multiprocessing
import os
import random
import signal
import time
from pathlib import Path

import pytest

import canisters as c
from canisters.storage import open_store

ROUNDS = 40


def _location(tmp_path: Path, backend: str) -> str:
    if backend == "sqlite":
        return f"sqlite:///{tmp_path / 'crash.db'}"
    return str(tmp_path / "crash")


def _writer(location: str, report: int, round_number: int) -> None:
    with open_store(location) as store:
        index = 0
        while True:
            index += 1
            unique = f"{round_number}-{index}".encode()
            canister = c.User(
                (
                    c.Text(f"round {round_number} message {index} " * 40),
                    c.Image(data=unique * 2000, mime_type="image/png"),
                ),
                id=f"r{round_number}-m{index}",
            )
            if index % 3:
                store.append("chat", canister)
            else:
                store.extend("chat", [canister, c.Assistant("ok " * (index % 500))])
            os.write(report, canister.id.encode() + b"\n")


@pytest.fixture(params=["files", "sqlite", "postgres"])
def location(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    if request.param == "postgres":
        return str(request.getfixturevalue("postgres_location"))
    return _location(tmp_path, request.param)


def test_sigkill_at_random_moments_loses_nothing(location: str) -> None:
    # A server store takes longer to open: kill later, in fewer rounds.
    server = location.startswith("postgresql://")
    rounds, late = (10, 0.2) if server else (ROUNDS, 0.0)
    context = multiprocessing.get_context("fork")
    rng = random.Random(20240601)
    acknowledged: list[str] = []
    loaded_ids: list[str] = []
    for round_number in range(rounds):
        reader, writer = os.pipe()
        child = context.Process(target=_writer, args=(location, writer, round_number))
        child.start()
        os.close(writer)
        time.sleep(late + rng.uniform(0.005, 0.06))
        assert child.pid is not None
        os.kill(child.pid, signal.SIGKILL)
        child.join()
        with os.fdopen(reader, "rb") as stream:
            reported = stream.read().decode().split("\n")
        acknowledged.extend(line for line in reported[:-1] if line)

        with open_store(location) as store:
            if not store.exists("chat"):
                assert not acknowledged
                continue
            # A strict load checks what verify checks (the chain, the kept
            # head, every blob), raising at the first problem.
            conversation = store.load("chat")
        ids = [x.id for x in conversation if x.role is c.Role.User]
        # Nothing loaded before is lost or changed; every acknowledged append is in.
        assert ids[: len(loaded_ids)] == loaded_ids
        assert set(acknowledged) <= set(ids)
        assert [i for i in ids if i in set(acknowledged)] == acknowledged
        for canister in conversation:
            if canister.role is c.Role.User:
                assert canister.content[1].data  # type: ignore[attr-defined]
        loaded_ids = ids
    assert acknowledged
    with open_store(location) as store:
        report = store.verify("chat")
    assert report.ok, report.problems
    assert report.records >= len(acknowledged)
