"""Redaction beyond the conformance suite: no byte of the erased content left in
the files a store keeps, tombstones that were edited, and tombstones carried by
export, import and copy."""

from __future__ import annotations

import json
import subprocess
import sys
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest

import canisters as c
from canisters import providers, recording, storage

SECRET = "correct-horse-battery-staple"


def _files(root: Path) -> bytes:
    return b"".join(path.read_bytes() for path in root.rglob("*") if path.is_file())


def _chat() -> list[c.Canister]:
    return [
        c.User(f"the key is {SECRET}"),
        c.Assistant("ok"),
        c.User(("y" * 3000 + SECRET,)),  # stored by hash
    ]


@pytest.mark.parametrize("backend", ["files", "sqlite"])
def test_no_byte_of_the_content_stays_on_disk(backend: str, tmp_path: Path) -> None:
    """After redaction and garbage collection, no file of the store holds the
    erased text: not the log, the blobs, the search index, SQLite's free pages
    or its write-ahead log."""
    where = (
        str(tmp_path / "store")
        if backend == "files"
        else f"sqlite:///{tmp_path / 'store.db'}"
    )
    chat = _chat()
    with storage.open_store(where) as store:
        store.extend("chat", chat)
        for number in range(50):  # pages beside the secret's, for SQLite
            store.append(f"other-{number}", c.User(f"filler {number} " * 20))
        assert SECRET.encode() in _files(tmp_path)
        for canister in (chat[0], chat[2]):
            store.redact("chat", canister.id, reason="leaked key")
        store.collect_garbage()
        assert store.verify("chat").ok
        assert store.search("staple", limit=5) == []
    assert SECRET.encode() not in _files(tmp_path)
    assert b"battery" not in _files(tmp_path)


def test_a_live_reader_and_writer_see_the_redaction(tmp_path: Path) -> None:
    """Another handle (its log open, its id index read) keeps appending and
    refuses the erased canister appended again."""
    chat = _chat()
    with (
        storage.open_store(tmp_path / "store") as first,
        storage.open_store(tmp_path / "store") as second,
    ):
        first.extend("chat", chat)
        fork = second.fork("chat", at=chat[1].id)
        second.append(fork, c.User("fork"))
        second.append("chat", c.User("more"))
        first.redact("chat", chat[0].id, reason="x")
        second.append("chat", c.User("still more"))
        second.append(fork, chat[1])  # held by the prefix: nothing recorded
        with pytest.raises(c.DuplicateCanister):
            second.append("chat", chat[0])
        assert second.verify("chat").ok
        assert second.verify(fork).ok
        assert len(second.load("chat")) == 5
        assert len(second.load(fork)) == 3


def _tombstone_line(store: storage.FileStore, number: int) -> tuple[Path, list[bytes]]:
    path = store.root / "conversations" / "chat" / "messages.jsonl"
    return path, path.read_bytes().splitlines(keepends=True)


def test_an_edited_tombstone_is_a_problem(tmp_path: Path) -> None:
    """A tombstone whose reason was changed no longer matches its seal; one made
    by hand without a seal is no tombstone: both are reported as edits."""
    with storage.FileStore(tmp_path / "store") as store:
        chat = _chat()
        store.extend("chat", chat)
        store.redact("chat", chat[0].id, reason="leaked key")
        path, lines = _tombstone_line(store, 0)
        edited = lines[0].replace(b"leaked key", b"routine   ")
        path.write_bytes(b"".join([edited, *lines[1:]]))
        problems = store.verify("chat").problems
        assert [(p.code, p.message) for p in problems] == [
            ("digest", "the tombstone does not match its seal (edited)")
        ]
        with pytest.raises(c.IntegrityError):
            store.load("chat")
        unsealed = lines[0].replace(b',"seal":"', b',"seam":"')
        path.write_bytes(b"".join([unsealed, *lines[1:]]))
        assert [p.code for p in store.verify("chat").problems] == ["digest"]


@pytest.mark.parametrize("target", ["files", "sqlite"])
def test_tombstones_survive_export_import_and_copy(target: str, tmp_path: Path) -> None:
    chat = _chat()
    with storage.open_store(tmp_path / "source") as source:
        source.extend("chat", chat)
        source.redact("chat", chat[0].id, reason="erased")
        expected = source.load("chat")
        document = recording.snapshot(source, "chat")
        assert SECRET not in document.split("y" * 100)[0]
        where = (
            str(tmp_path / "target")
            if target == "files"
            else f"sqlite:///{tmp_path / 'target.db'}"
        )
        with storage.open_store(where) as destination:
            report = storage.copy_store(source, destination)
            assert report.conversations == 1
            assert destination.load("chat") == expected
            assert destination.verify("chat").ok
            assert destination.head("chat")[0] == source.head("chat")[0]
            assert storage.copy_store(source, destination).skipped == 0
            restored = recording.restore(destination, document, conversation_id="back")
            assert destination.load(restored) == expected
    assert expected[0].extras["redacted"]["reason"] == "erased"


def test_postgres_live_rows_forget_the_content(postgres_location: str) -> None:
    """PostgreSQL: no live row of any table holds the erased text (the old row
    versions wait for VACUUM as dead tuples: see the storage documentation)."""
    import psycopg

    chat = _chat()
    with storage.open_store(postgres_location) as store:
        store.extend("chat", chat)
        for canister in (chat[0], chat[2]):
            store.redact("chat", canister.id, reason="leaked key")
        store.collect_garbage()
        assert store.verify("chat").ok
    with psycopg.connect(postgres_location, autocommit=True) as connection:
        tables = [
            "canisters_records",
            "canisters_blobs",
            "canisters_search",
            "canisters_sidecars",
            "canisters_ids",
        ]
        for table in tables:
            rows = connection.execute(f"SELECT t::text FROM {table} AS t").fetchall()
            assert rows or table == "canisters_blobs", table
            for (row,) in rows:
                assert "battery" not in row, table
                assert b"battery".hex() not in row, table


def _cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "canisters", *args],
        capture_output=True,
        text=True,
        check=False,
    )


@pytest.mark.parametrize("backend", ["files", "sqlite"])
def test_store_redact_and_expire_commands(backend: str, tmp_path: Path) -> None:
    where = (
        str(tmp_path / "store")
        if backend == "files"
        else f"sqlite:///{tmp_path / 'store.db'}"
    )
    old = datetime.now(timezone.utc) - timedelta(days=200)
    chat = _chat()
    with storage.open_store(where) as store:
        store.extend("chat", chat)
        store.append("ancient", c.User("old news", timestamp=old))
        store.append("dusty", c.User("older news", timestamp=old))
    out = _cli("store", "redact", where, "chat", chat[0].id, "--reason", "leaked key")
    assert out.returncode == 0, out.stderr
    assert out.stdout == f"redacted user {chat[0].id} (record 0 of chat)\n"
    out = _cli("store", "redact", where, "chat", "nope", "--reason", "x")
    assert out.returncode == 2
    assert "nope" in out.stderr
    out = _cli("store", "verify", where, "chat")
    assert out.returncode == 0, out.stdout
    assert "intact" in out.stdout
    assert "chat: record 0 (user) redacted on " in out.stderr
    assert out.stderr.rstrip().endswith("UTC: leaked key")
    out = _cli("store", "expire", where, "--days", "90", "--dry-run")
    assert out.stdout == "ancient\ndusty\nwould delete 2 conversations, kept 1\n"
    out = _cli("store", "expire", where, "--days", "90", "--redact")
    assert out.stdout == (
        "ancient\ndusty\nredacted 2 conversations (2 canisters), kept 1\n"
    )
    out = _cli("store", "expire", where, "--days", "90")
    assert out.stdout.endswith("deleted 2 conversations, kept 1\n")
    with storage.open_store(where) as store:
        assert store.conversations() == ["chat"]
        assert store.load("chat")[0].extras["redacted"]["reason"] == "leaked key"


@pytest.mark.parametrize("provider", sorted(providers.names()))
def test_a_provider_gets_the_placeholder_reported(
    provider: str, tmp_path: Path
) -> None:
    chat = _chat()
    with storage.open_store(tmp_path / "store") as store:
        store.extend("chat", chat)
        store.redact("chat", chat[0].id, reason="erased on request")
        conversation = store.load("chat")
    report = providers.Report()
    body = providers.get(provider).render_request(conversation, report=report)
    assert "[redacted: erased on request]" in json.dumps(body)
    assert SECRET not in json.dumps(body).split("y" * 50)[0]
    assert [(e.kind, e.where) for e in report.events] == [
        ("placeholder", "canister 0 (user)")
    ]


@pytest.mark.parametrize("backend", ["files", "sqlite"])
def test_a_read_only_store_refuses_to_redact(backend: str, tmp_path: Path) -> None:
    where = (
        str(tmp_path / "store")
        if backend == "files"
        else f"sqlite:///{tmp_path / 'store.db'}"
    )
    chat = _chat()
    with storage.open_store(where) as store:
        store.extend("chat", chat)
    with storage.open_store(where, read_only=True) as store:
        with pytest.raises(c.StorageError, match="read-only"):
            store.redact("chat", chat[0].id, reason="x")
        assert store.load("chat") == chat


def test_odd_records_are_redacted_or_refused_cleanly(tmp_path: Path) -> None:
    """A record holding an integer past 64 bits is redacted (its step left out);
    one whose id cannot be written as UTF-8 is refused with a StorageError."""
    big, odd = c.User("x", step=2**70), c.User("y", id="bad\ud800id")
    with storage.open_store(tmp_path / "store") as store:
        store.extend("chat", [big, odd])
        assert store.redact("chat", big.id, reason="r").seq == 0
        assert store.load("chat")[0].step is None
        with pytest.raises(c.StorageError, match="cannot be redacted"):
            store.redact("chat", odd.id, reason="r")
        verification = store.verify("chat")
        assert verification.ok
        assert len(verification.redactions) == 1
