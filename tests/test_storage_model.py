"""Every backend against an in-memory model of a store, step by step.

A hypothesis state machine creates and extends conversations, forks them at any
canister (forks of forks, at any depth, inside what a fork inherited too),
retries appends (the same canisters again, some of them from other
conversations, some altered under a held id), deletes leaves and tries to delete
parents, collects garbage, reopens the store, copies it, and exports and
imports a conversation. After every step the store must agree with the model:
``conversations()``, each ``load``, ``verify``, ``head`` (a head seen once at a
length stays the same, across forks, imports and copies too), ``origin`` and
``forks``.

The embedded backends run with enough examples to find a fork of a fork that
did not load, or whose appends were screened against what it does not hold
(each found in every one of ten seeds against a copy of the library with the old
fork stops); PostgreSQL (sync, and asyncio behind a blocking face) and blobs in
S3 run on the test servers with fewer.
"""

from __future__ import annotations

import asyncio
import functools
import itertools
import os
import shutil
import tempfile
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, settings
from hypothesis import strategies as st
from hypothesis.stateful import (
    RuleBasedStateMachine,
    initialize,
    invariant,
    precondition,
    rule,
    run_state_machine_as_test,
)

import canisters as c
from canisters.recording import restore, snapshot
from canisters.storage import Fork, Store, copy_store, open_async_store, open_store

from .budget import examples
from .storage_servers import _scratch, new_bucket, schema_location
from .test_storage_async import _Blocking

# A place for one example's store: (open it, remove it).
Place = tuple[Callable[[], Store], Callable[[], None]]

NAMES = ("a", "b", "c")
MOST_CONVERSATIONS = 7
LONG = "a long answer, stored by hash " * 40


def _canister(kind: int, n: int, canister_id: str) -> c.Canister:
    """A canister of one of a few shapes; the small ``n`` makes blobs shared
    between canisters and conversations (a prompt's text is also a file's bytes)."""
    match kind:
        case 0:
            return c.User(f"question {n}", id=canister_id)
        case 1:
            return c.Assistant(f"{LONG}{n % 3}", id=canister_id)
        case 2:
            return c.Supervisor(f"prompt {n % 3}", id=canister_id)
        case 3:
            return c.User((c.Image(data=b"image %d" % (n % 4)),), id=canister_id)
        case _:
            data = f"prompt {n % 3}".encode()
            return c.User((c.File(data=data, filename="p.txt"),), id=canister_id)


class StoreMachine(RuleBasedStateMachine):
    """A store and its model: conversations as canister lists, fork origins and
    the heads seen at each length."""

    place: Callable[[], Place]

    def __init__(self) -> None:
        super().__init__()
        self.ids = itertools.count()
        self.open, self.cleanup = self.place()
        self.store: Store = self.open()
        self.conversations: dict[str, list[c.Canister]] = {}
        self.origins: dict[str, Fork] = {}
        self.heads: dict[str, dict[int, str]] = {}
        self.made: list[c.Canister] = []

    def teardown(self) -> None:
        self.store.close()
        self.cleanup()

    # Canisters -----------------------------------------------------------------

    def _new(self, kind: int, n: int) -> c.Canister:
        canister = _canister(kind, n, f"k{next(self.ids)}")
        self.made.append(canister)
        return canister

    def _batch(self, data: st.DataObject) -> list[c.Canister]:
        """New canisters, and canisters made before (as they were, or altered
        under their id), in any order."""
        batch = []
        for _ in range(data.draw(st.integers(0, 4), label="size")):
            choice = data.draw(st.integers(0, 2 if self.made else 0), label="choice")
            if choice == 0:
                kind = data.draw(st.integers(0, 4), label="kind")
                batch.append(self._new(kind, data.draw(st.integers(0, 5), label="n")))
                continue
            old = data.draw(st.sampled_from(self.made), label="again")
            if choice == 2:
                old = c.User(f"altered {next(self.ids)}", id=old.id)
            batch.append(old)
        return batch

    @staticmethod
    def _screened(
        held: list[c.Canister], batch: list[c.Canister]
    ) -> list[c.Canister] | None:
        """What an append records (``None``: it raises ``DuplicateCanister``)."""
        found = {canister.id: canister for canister in held}
        fresh: list[c.Canister] = []
        for canister in batch:
            earlier = found.get(canister.id)
            if earlier is not None:
                if earlier != canister:
                    return None
                continue
            found[canister.id] = canister
            fresh.append(canister)
        return fresh

    def _pick(self, data: st.DataObject, label: str, *, full: bool = False) -> str:
        """Draw a conversation (a non-empty one when ``full``), in the order they
        were made: fork ids are random, their order would make runs differ."""
        found = [k for k, v in self.conversations.items() if v or not full]
        return data.draw(st.sampled_from(found), label=label)

    def _forget(self, conversation_id: str) -> None:
        del self.conversations[conversation_id]
        self.heads.pop(conversation_id, None)
        self.origins.pop(conversation_id, None)

    # Rules -----------------------------------------------------------------------

    def _free(self) -> list[str]:
        """The names no conversation has, while the store may take one more."""
        if len(self.conversations) >= MOST_CONVERSATIONS:
            return []
        return [name for name in NAMES if name not in self.conversations]

    @initialize(size=st.integers(1, 5), kinds=st.lists(st.integers(0, 4), min_size=5))
    def start(self, size: int, kinds: list[int]) -> None:
        """Start with a conversation, so that every run has one to work on."""
        batch = [self._new(kind, n) for n, kind in enumerate(kinds[:size])]
        self.store.extend("a", batch)
        self.conversations["a"] = batch
        self.heads["a"] = {}

    @precondition(lambda self: self._free())
    @rule(data=st.data())
    def create(self, data: st.DataObject) -> None:
        name = data.draw(st.sampled_from(self._free()), label="name")
        batch = self._batch(data)
        fresh = self._screened([], batch)
        if fresh is None:
            with pytest.raises(c.DuplicateCanister):
                self.store.extend(name, batch)
            assert not self.store.exists(name)
            return
        self.store.extend(name, batch)
        self.conversations[name] = fresh
        self.heads[name] = {}

    @precondition(lambda self: self.conversations)
    @rule(data=st.data(), one=st.booleans())
    def extend(self, data: st.DataObject, one: bool) -> None:
        """Extend (or append one canister to) a conversation; retries included."""
        self._extend(self._pick(data, "target"), self._batch(data), one)

    def _extend(self, target: str, batch: list[c.Canister], one: bool) -> None:
        if one:
            batch = batch[:1]
        if not batch:
            return
        held = self.conversations[target]
        fresh = self._screened(held, batch)
        head = self.store.head(target)
        write = (
            functools.partial(self.store.append, target, batch[0])
            if one
            else functools.partial(self.store.extend, target, batch)
        )
        if fresh is None:
            with pytest.raises(c.DuplicateCanister):
                write()
            assert self.store.head(target) == head
            return
        write()
        held.extend(fresh)
        if not fresh:
            assert self.store.head(target) == head

    @precondition(
        lambda self: (
            len(self.conversations) < MOST_CONVERSATIONS
            and any(self.conversations.values())
        )
    )
    @rule(data=st.data(), depth=st.integers(1, 3), one=st.booleans())
    def fork(self, data: st.DataObject, depth: int, one: bool) -> None:
        """Fork a conversation at any canister, then (``depth``) the fork at any
        of its canisters, and so on; then extend the last fork, as a branch
        goes on (canisters its ancestors hold past its fork point included)."""
        parent = self._pick(data, "parent", full=True)
        for _ in range(depth):
            if len(self.conversations) >= MOST_CONVERSATIONS:
                return
            held = self.conversations[parent]
            index = data.draw(st.integers(0, len(held) - 1), label="at")
            at = held[index].id
            child = self.store.fork(parent, at=at)
            assert child not in self.conversations
            self.conversations[child] = held[: index + 1]
            self.origins[child] = Fork(child, parent, at, index + 1)
            self.heads[child] = {
                length: digest
                for length, digest in self.heads[parent].items()
                if length <= index + 1
            }
            parent = child
        self._extend(parent, self._batch(data), one)

    @precondition(lambda self: self.conversations)
    @rule(data=st.data())
    def delete(self, data: st.DataObject) -> None:
        """Delete a conversation: refused while it has forks."""
        target = self._pick(data, "target")
        if any(fork.parent == target for fork in self.origins.values()):
            with pytest.raises(c.StorageError, match="has forks"):
                self.store.delete(target)
            return
        self.store.delete(target)
        self._forget(target)

    @rule()
    def collect_garbage(self) -> None:
        """Collect garbage: every blob left is referenced (the loads after this
        step show that no blob still named went)."""
        self.store.collect_garbage()
        assert set(self.store.content.ids()) <= self.store.referenced_content()

    @rule()
    def reopen(self) -> None:
        self.store.close()
        self.store = self.open()

    @rule()
    def copy(self) -> None:
        """Copy the store into a file store: the same conversations, canisters
        and heads (a fork arrives as a conversation holding its history)."""
        directory = tempfile.mkdtemp(prefix="copy", dir=_scratch())
        try:
            with open_store(Path(directory) / "store", durability="flush") as target:
                report = copy_store(self.store, target)
                assert report.conversations == len(self.conversations)
                assert target.conversations() == sorted(self.conversations)
                for cid, held in self.conversations.items():
                    assert target.load(cid) == held
                    assert target.head(cid) == self.store.head(cid)
                    assert target.origin(cid) is None
        finally:
            shutil.rmtree(directory, ignore_errors=True)

    @precondition(lambda self: any(self.conversations.values()) and self._free())
    @rule(data=st.data())
    def export_and_import(self, data: st.DataObject) -> None:
        """Export a conversation and import it under a free name: a conversation
        of its own with the same canisters and the same chain (an empty one has
        no document: restore refuses it)."""
        name = data.draw(st.sampled_from(self._free()), label="name")
        source = self._pick(data, "source", full=True)
        document = snapshot(self.store, source)
        assert restore(self.store, document, conversation_id=name) == name
        self.conversations[name] = list(self.conversations[source])
        self.heads[name] = dict(self.heads[source])

    # The store agrees with the model -------------------------------------------

    @invariant()
    def agrees(self) -> None:
        store = self.store
        assert store.conversations() == sorted(self.conversations)
        for cid, held in self.conversations.items():
            assert store.load(cid) == held, cid
            report = store.verify(cid)
            assert report.ok, report.problems
            assert report.records == len(held)
            assert store.head(cid) == (report.records, report.head)
            seen = self.heads[cid].setdefault(report.records, report.head)
            assert seen == report.head, f"{cid}: the head at {report.records} moved"
            assert store.origin(cid) == self.origins.get(cid)
            assert store.forks(cid) == sorted(
                (fork for fork in self.origins.values() if fork.parent == cid),
                key=lambda fork: fork.conversation_id,
            )


# Where each example's store lives ------------------------------------------------

_SCHEMAS = itertools.count()


def _directory(kind: str, blobs: Callable[[], dict[str, Any]]) -> Place:
    directory = tempfile.mkdtemp(prefix="model", dir=_scratch())
    location = (
        f"sqlite:///{directory}/store.db" if kind == "sqlite" else f"{directory}/store"
    )
    # What a crash would lose is not what this test looks at: no waiting on disk.
    options = {"durability": "flush", **blobs()}
    return (
        functools.partial(open_store, location, **options),
        lambda: shutil.rmtree(directory, ignore_errors=True),
    )


def _postgres(
    server: str,
    blobs: Callable[[], dict[str, Any]],
    loop: asyncio.AbstractEventLoop | None,
) -> Place:
    """A schema of its own; with ``loop``, opened as the native asyncio store
    (its coroutines run on ``loop``, behind a blocking face)."""
    import psycopg

    schema = f"model{os.getpid()}x{next(_SCHEMAS)}"
    location = schema_location(server, schema)

    def drop() -> None:
        with psycopg.connect(server, autocommit=True) as connection:
            connection.execute(f"DROP SCHEMA {schema} CASCADE")

    options = blobs()

    def opened() -> Store:
        if loop is None:
            return open_store(location, **options)
        store = asyncio.run_coroutine_threadsafe(
            open_async_store(location, **options), loop
        ).result()
        blocking: Store = _Blocking(store, loop)  # type: ignore[assignment]
        return blocking

    return opened, drop


# (backend, examples, steps): the embedded backends search deeper; the servers
# run what fits in a few seconds each.
BACKENDS = [
    ("files", 100, 25),
    ("sqlite", 100, 25),
    ("postgres", 10, 20),
    ("postgres-async", 10, 12),
    ("files+s3", 10, 12),
]


@pytest.mark.parametrize(
    ("backend", "count", "steps"), BACKENDS, ids=[b[0] for b in BACKENDS]
)
def test_the_store_follows_the_model(
    backend: str, count: int, steps: int, request: pytest.FixtureRequest
) -> None:
    kind, _, s3 = backend.partition("+")
    kind, _, native = kind.partition("-")
    if s3:
        endpoint = request.getfixturevalue("s3_endpoint")

        def blobs() -> dict[str, Any]:
            return {"blobs": f"s3://{new_bucket(endpoint)}/blobs"}
    else:

        def blobs() -> dict[str, Any]:
            return {}

    loop = asyncio.new_event_loop() if native else None
    if kind == "postgres":
        server = request.getfixturevalue("postgres_server")

        def place() -> Place:
            return _postgres(server, blobs, loop)
    else:

        def place() -> Place:
            return _directory(kind, blobs)

    machine = type(
        f"{kind.title()}Machine", (StoreMachine,), {"place": staticmethod(place)}
    )
    if loop is None:
        _run(machine, count, steps)
        return
    thread = threading.Thread(target=loop.run_forever, daemon=True)
    thread.start()
    try:
        _run(machine, count, steps)
    finally:
        loop.call_soon_threadsafe(loop.stop)
        thread.join()
        loop.close()


def _run(machine: type[StoreMachine], count: int, steps: int) -> None:
    run_state_machine_as_test(
        machine,
        settings=settings(
            max_examples=examples(count),
            stateful_step_count=steps,
            deadline=None,
            suppress_health_check=[HealthCheck.too_slow],
        ),
    )
