"""Store loads read intact records through serialization's fast path: they give
exactly what the general path gives, for intact and damaged logs alike."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import canisters as c
from canisters import storage
from canisters.storage import open_store

from . import strategies
from .budget import examples
from .test_serialization_fast import hooks_only, same


def _location(tmp_path: Path, backend: str) -> str:
    name = c.new_id()
    if backend == "sqlite":
        return f"sqlite:///{tmp_path / (name + '.db')}"
    return str(tmp_path / name)


@pytest.fixture
def stores(tmp_path: Path) -> Iterator[list[Any]]:
    """A file store and an SQLite store, opened once for every example."""
    opened = [
        open_store(_location(tmp_path, backend), durability="flush")
        for backend in ("files", "sqlite")
    ]
    yield opened
    for store in opened:
        store.close()


def _outcome(store: Any, name: str, salvage: bool, *, verify: bool) -> Any:
    try:
        loaded = ("value", store.load(name, salvage=salvage))
    except c.CanistersError as error:
        loaded = ("error", type(error), str(error))
    if not verify:  # what verify finds does not depend on salvage
        return loaded, None
    report = store.verify(name)
    return loaded, [(p.where, p.code, p.message) for p in report.problems]


def _same_outcomes(store: Any, name: str) -> Any:
    """Check that both paths load (strict and salvaging) and verify alike;
    return what the fast path loaded strictly."""
    loaded = None
    for salvage in (False, True):
        with hooks_only():
            expected = _outcome(store, name, salvage, verify=not salvage)
        got = _outcome(store, name, salvage, verify=not salvage)
        assert got[1] == expected[1]
        assert got[0][0] == expected[0][0]
        if got[0][0] == "value":
            assert same(got[0][1], expected[0][1])
        else:
            assert got[0] == expected[0]
        if not salvage:
            loaded = got[0]
    return loaded


SETTINGS = settings(
    max_examples=examples(40),
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture],
)


@SETTINGS
@given(strategies.stored_conversations)
def test_loads_read_as_the_general_path_reads(
    stores: list[Any], conversation: c.Conversation
) -> None:
    """Each conversation drawn, in a file store and an SQLite store."""
    name = c.new_id()
    for store in stores:
        store.extend(name, conversation)
        assert _same_outcomes(store, name) == ("value", conversation)


@SETTINGS
@given(
    strategies.stored_conversations.filter(lambda x: len(x) > 0),
    st.data(),
)
def test_damaged_logs_read_as_the_general_path_reads(
    tmp_path: Path, conversation: c.Conversation, data: st.DataObject
) -> None:
    with open_store(_location(tmp_path, "files"), durability="flush") as store:
        assert isinstance(store, storage.FileStore)
        store.extend("chat", conversation)
        path = store.root / "conversations" / "chat" / "messages.jsonl"
        lines = path.read_bytes().splitlines(keepends=True)
        index = data.draw(st.integers(0, len(lines) - 1))
        line = lines[index]
        action = data.draw(
            st.sampled_from(["edit", "delete", "swap", "insert", "foreign"])
        )
        if action == "edit":
            at = data.draw(st.integers(0, len(line) - 2))
            byte = data.draw(st.sampled_from([b"0", b"1", b"a", b'"', b"}", b" "]))
            lines[index] = line[:at] + byte + line[at + 1 :]
        elif action == "delete":
            del lines[index]
        elif action == "swap":
            lines[index], lines[0] = lines[0], lines[index]
        elif action == "insert":
            lines.insert(index, data.draw(st.sampled_from([line, b"{}\n", b"[]\n"])))
        else:  # the record of the same number in another conversation
            store.extend("other", [c.User("other"), *reversed(conversation)])
            other = store.root / "conversations" / "other" / "messages.jsonl"
            lines[index] = other.read_bytes().splitlines(keepends=True)[index]
        path.write_bytes(b"".join(lines))
        _same_outcomes(store, "chat")
