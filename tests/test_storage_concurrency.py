"""Several processes write to one store at once: nothing interleaves or is lost."""

from __future__ import annotations

import multiprocessing
import threading
from pathlib import Path

import pytest

import canisters as c
from canisters.storage import open_store

WRITERS = 4
APPENDS = 60
MIXED = 25
PNG = b"\x89PNG\r\n\x1a\n" + bytes(range(256)) * 16


def _location(tmp_path: Path, backend: str) -> str:
    if backend == "sqlite":
        return f"sqlite:///{tmp_path / 'shared.db'}"
    return str(tmp_path / "shared")


def _appender(location: str, writer: int, start: threading.Barrier | None) -> None:
    with open_store(location) as store:
        if start is not None:
            start.wait()
        for index in range(APPENDS):
            text = f"writer {writer} message {index} " * (1 + index % 60)
            canister = c.User(
                (c.Text(text), c.Image(data=PNG + bytes([writer, index]))),
                id=f"w{writer}-{index}",
            )
            if index % 4 == 3:
                store.extend("shared", [canister, c.Assistant(f"w{writer} ok")])
            else:
                store.append("shared", canister)
            store.sidecar("shared", "audit").append_line(f"w{writer} {index}")


def _collector(location: str, rounds: int) -> None:
    with open_store(location) as store:
        for _round in range(rounds):
            store.collect_garbage()


@pytest.fixture(params=["files", "sqlite", "postgres"])
def location(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    if request.param == "postgres":
        return str(request.getfixturevalue("postgres_location"))
    return _location(tmp_path, request.param)


def test_concurrent_processes_append_to_one_conversation(location: str) -> None:
    open_store(location).close()
    context = multiprocessing.get_context("fork")
    start = context.Barrier(WRITERS + 1)
    processes = [
        context.Process(target=_appender, args=(location, writer, start))
        for writer in range(WRITERS)
    ]
    processes.append(context.Process(target=_collector, args=(location, 15)))
    for process in processes:
        process.start()
    start.wait()
    for process in processes:
        process.join(timeout=120)
        assert process.exitcode == 0

    with open_store(location) as store:
        conversation = store.load("shared")
        assert store.verify("shared").ok
        users = [x for x in conversation if x.role is c.Role.User]
        assert len(users) == WRITERS * APPENDS
        assert len(conversation) == WRITERS * APPENDS + WRITERS * (APPENDS // 4)
        for writer in range(WRITERS):
            mine = [x.id for x in users if x.id.startswith(f"w{writer}-")]
            assert mine == [f"w{writer}-{index}" for index in range(APPENDS)]
        for index, canister in enumerate(conversation):
            if canister.role is c.Role.User and canister.id.endswith("-3"):
                # An extend's two canisters stay together.
                assert conversation[index + 1].role is c.Role.Assistant
            if canister.role is c.Role.User:
                data = canister.content[1].data  # type: ignore[attr-defined]
                writer, number = canister.id[1:].split("-")
                assert data == PNG + bytes([int(writer), int(number)])
        lines = store.sidecar("shared", "audit").read_lines()
        assert sorted(lines) == sorted(
            f"w{w} {i}" for w in range(WRITERS) for i in range(APPENDS)
        )
        assert store.stats().blobs >= WRITERS * APPENDS


def test_threads_share_one_store(location: str) -> None:
    with open_store(location) as store:
        errors: list[BaseException] = []

        def work(writer: int) -> None:
            try:
                for index in range(40):
                    store.append("threads", c.User(f"{writer}:{index}"))
                    store.append(f"own-{writer}", c.User(f"{index}"))
            except BaseException as error:  # pragma: no cover - reported below
                errors.append(error)

        threads = [threading.Thread(target=work, args=(n,)) for n in range(4)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        assert not errors
        assert len(store.load("threads")) == 160
        assert store.verify("threads").ok
        for writer in range(4):
            assert len(store.load(f"own-{writer}")) == 40


def _mixed_writer(location: str, writer: int, start: threading.Barrier) -> None:
    with open_store(location) as store:
        start.wait()
        for index in range(MIXED):
            text = f"writer {writer} message {index} " * (1 + index % 40)
            store.append("shared", c.User(text, id=f"s{writer}-{index}"))
            store.append(f"own-{writer}", c.User(text, id=f"o{writer}-{index}"))


def test_eight_processes_append_to_shared_and_own_conversations(location: str) -> None:
    """Eight writers, each through its own connection (or file handles), append
    in turn to one shared conversation and to one of their own."""
    open_store(location).close()
    context = multiprocessing.get_context("fork")
    start = context.Barrier(8)
    processes = [
        context.Process(target=_mixed_writer, args=(location, writer, start))
        for writer in range(8)
    ]
    for process in processes:
        process.start()
    for process in processes:
        process.join(timeout=120)
        assert process.exitcode == 0
    with open_store(location) as store:
        shared = store.load("shared")
        assert store.verify("shared").ok
        assert store.head("shared")[0] == 8 * MIXED
        for writer in range(8):
            mine = [x.id for x in shared if x.id.startswith(f"s{writer}-")]
            assert mine == [f"s{writer}-{index}" for index in range(MIXED)]
            own = store.load(f"own-{writer}")
            assert [x.id for x in own] == [f"o{writer}-{i}" for i in range(MIXED)]
            assert store.verify(f"own-{writer}").ok
        for canister in shared:
            writer, index = canister.id[1:].split("-")
            text = f"writer {writer} message {index} " * (1 + int(index) % 40)
            assert canister.content[0].text == text  # type: ignore[attr-defined]
