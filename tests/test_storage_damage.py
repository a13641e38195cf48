"""Stores damaged by hand, by a copy or by an attacker: nothing is lost, every
failure is the library's own error, and tampering is seen."""

from __future__ import annotations

import asyncio
import logging
import sqlite3
from collections.abc import Iterator
from pathlib import Path

import orjson
import pytest

import canisters as c
from canisters import recording, storage
from canisters.audit import AuditLog
from canisters.storage import Store, open_store

PNG = b"\x89PNG\r\n\x1a\n" + bytes(range(256))


@pytest.fixture(params=["files", "sqlite"])
def backend(request: pytest.FixtureRequest) -> str:
    return str(request.param)


@pytest.fixture
def store(tmp_path: Path, backend: str) -> Iterator[Store]:
    if backend == "sqlite":
        location = f"sqlite:///{tmp_path / 'store.db'}"
    else:
        location = str(tmp_path / "store")
    with open_store(location) as opened:
        yield opened


def _log(store: Store, conversation_id: str = "chat") -> Path:
    assert isinstance(store, storage.FileStore)
    return store.root / "conversations" / conversation_id / "messages.jsonl"


def _sql(store: Store, statement: str, *args: object) -> None:
    assert isinstance(store, storage.SQLiteStore)
    with sqlite3.connect(store.path) as connection:
        connection.execute(statement, args)


def _three(store: Store) -> list[c.Canister]:
    canisters: list[c.Canister] = [c.User(f"message {n}") for n in range(3)]
    store.extend("chat", canisters)
    return canisters


# A whole record without its newline ------------------------------------------


def test_a_last_record_missing_only_its_newline_is_kept(tmp_path: Path) -> None:
    with open_store(tmp_path / "store") as store:
        canisters = _three(store)
        log = _log(store)
    log.write_bytes(log.read_bytes()[:-1])  # a hand edit drops the newline
    with open_store(tmp_path / "store") as store:
        assert store.load("chat") == canisters
        report = store.verify("chat")
        assert report.ok and not report.torn_tail and report.records == 3
        assert store.head("chat") == (3, report.head)
        later = c.User("after the edit")
        store.append("chat", later)
        assert store.load("chat") == [*canisters, later]
        assert store.verify("chat").ok
        assert log.read_bytes().count(b"\n") == 4


def test_a_torn_last_record_is_still_dropped(tmp_path: Path) -> None:
    with open_store(tmp_path / "store") as store:
        canisters = _three(store)
        log = _log(store)
    log.write_bytes(log.read_bytes()[:-5])
    with open_store(tmp_path / "store") as store:
        assert store.load("chat") == canisters[:2]
        assert store.verify("chat").torn_tail
        store.append("chat", canisters[2])
        assert store.load("chat") == canisters


# SQLite rows renumbered or retyped ---------------------------------------------


def test_sqlite_renumbered_last_row_is_seen_and_not_appended_to(
    tmp_path: Path,
) -> None:
    with open_store(f"sqlite:///{tmp_path / 's.db'}") as store:
        canisters = _three(store)
        _sql(store, "UPDATE records SET seq = 10 WHERE seq = 2")
        report = store.verify("chat")
        assert [p.code for p in report.problems] == ["chain"]
        assert "numbered 10" in str(report.problems[0])
        with pytest.raises(c.IntegrityError, match="misnumbered"):
            store.append("chat", c.User("more"))
        with pytest.raises(c.IntegrityError):
            store.load("chat")
        assert store.load("chat", salvage=True) == canisters


def test_sqlite_row_renumbered_in_the_middle_is_seen(tmp_path: Path) -> None:
    # The case: UPDATE records SET seq=10 WHERE seq=4, of eight.
    with open_store(f"sqlite:///{tmp_path / 's.db'}") as store:
        store.extend("chat", [c.User(f"message {n}") for n in range(8)])
        _sql(store, "UPDATE records SET seq = 10 WHERE seq = 4")
        assert not store.verify("chat").ok
        with pytest.raises(c.IntegrityError):
            store.load("chat")
        with pytest.raises(c.IntegrityError, match="misnumbered"):
            store.append("chat", c.User("more"))


@pytest.mark.parametrize(
    "statement",
    [
        "UPDATE records SET line = line || x'00' WHERE seq = 1",
        "UPDATE records SET line = CAST(line AS TEXT) || 'x' WHERE seq = 1",
        "UPDATE records SET line = 42 WHERE seq = 1",
    ],
)
def test_sqlite_record_of_another_type_is_an_integrity_problem(
    tmp_path: Path, statement: str
) -> None:
    with open_store(f"sqlite:///{tmp_path / 's.db'}") as store:
        canisters = _three(store)
        _sql(store, statement)
        with pytest.raises(c.IntegrityError):
            store.load("chat")
        assert store.load("chat", salvage=True) == [canisters[0], canisters[2]]
        assert not store.verify("chat").ok


def test_sqlite_blob_of_another_type_is_an_integrity_problem(tmp_path: Path) -> None:
    with open_store(f"sqlite:///{tmp_path / 's.db'}") as store:
        image = c.User(content=(c.Image(data=PNG),))
        store.extend("chat", [c.User("first"), image])
        _sql(store, "UPDATE blobs SET data = data || x'00'")
        with pytest.raises(c.IntegrityError):
            store.load("chat")
        assert [x.role for x in store.load("chat", salvage=True)] == [c.Role.User]
        assert [p.code for p in store.verify("chat").problems] == ["content"]
        content_id = next(iter(store.referenced_content()))
        with pytest.raises(c.IntegrityError):
            store.content.get(content_id)


# Malformed side data: the library's own errors ---------------------------------


def test_fork_json_holding_a_list_is_an_integrity_error(tmp_path: Path) -> None:
    with open_store(tmp_path / "store") as store:
        first = c.User("first")
        store.append("chat", first)
        child = store.fork("chat", first.id)
        (store.root / "conversations" / child / "fork.json").write_bytes(b"[1, 2]")
        with pytest.raises(c.IntegrityError, match=r"fork\.json"):
            store.load(child)
        with pytest.raises(c.IntegrityError, match=r"fork\.json"):
            store.head(child)


def test_head_of_a_garbage_last_line_is_an_integrity_error(store: Store) -> None:
    _three(store)
    if isinstance(store, storage.FileStore):
        with _log(store).open("ab") as handle:
            handle.write(b"\x00garbage{{\n")
    else:
        _sql(store, "INSERT INTO records VALUES ('chat', 3, x'00676172')")
    with pytest.raises(c.IntegrityError, match="unreadable"):
        store.head("chat")
    with pytest.raises(c.IntegrityError, match="unreadable"):
        store.append("chat", c.User("more"))


def _spoil_side_file(store: Store, name: str) -> None:
    """Put a line of bytes that are not UTF-8 into a side file."""
    if isinstance(store, storage.FileStore):
        path = store.root / "conversations" / "chat" / "sidecars" / f"{name}.log"
        with path.open("ab") as handle:
            handle.write(b"\xff\xfe not utf-8\n")
    else:
        _sql(
            store,
            "INSERT INTO sidecars VALUES ('chat', ?, 1000, CAST(x'fffe41' AS TEXT))",
            name,
        )


def test_side_files_that_are_not_utf8_raise_integrity_errors(store: Store) -> None:
    recorder = recording.Recorder(store, "chat", "prompt-1")
    recorder.record(c.User("hello"))
    audit = AuditLog(store, "chat")
    audit.record(None, "allowed")
    _spoil_side_file(store, "audit")
    _spoil_side_file(store, recording.PROMPT_KEY_FILE)
    with pytest.raises(c.IntegrityError, match="not UTF-8"):
        store.sidecar("chat", "audit").read_lines()
    with pytest.raises(c.IntegrityError, match="not UTF-8"):
        audit.entries()
    with pytest.raises(c.IntegrityError, match="not UTF-8"):
        recording.resume(store, "chat", "prompt-1")
    with pytest.raises(c.IntegrityError, match="not UTF-8"):
        recording.snapshot(store, "chat")
    assert store.load("chat") == [recorder.conversation[0]]


# restore() writes nothing from a bad snapshot ----------------------------------


def _snapshot() -> dict[str, object]:
    with open_store("sqlite:///:memory:") as source:
        recording.Recorder(source, "chat", "key").record(
            c.User(content=(c.Text("look"), c.Image(data=PNG)))
        )
        AuditLog(source, "chat").record(None, "allowed")
        document: dict[str, object] = orjson.loads(recording.snapshot(source, "chat"))
    return document


@pytest.mark.parametrize(
    ("side_files", "message"),
    [
        ({"../x": ["line"]}, "side-file name"),
        ({"audit": ["one", "two\rthree"]}, "line break"),
        ({"audit": ["one", "two\nthree"]}, "line break"),
    ],
)
def test_restore_refuses_a_bad_snapshot_before_writing(
    store: Store, side_files: dict[str, list[str]], message: str
) -> None:
    document = _snapshot()
    document["side_files"] = side_files
    with pytest.raises(c.SnapshotRestoreError, match=message):
        recording.restore(store, orjson.dumps(document))
    assert store.conversations() == []
    assert list(store.content.ids()) == []
    assert not store.exists("chat")
    assert recording.restore(store, orjson.dumps(_snapshot())) == "chat"


def test_restore_refuses_a_bad_target_id(store: Store) -> None:
    with pytest.raises(c.SnapshotRestoreError, match="conversation id"):
        recording.restore(store, orjson.dumps(_snapshot()), conversation_id="../up")
    assert list(store.content.ids()) == []


def test_salvage_logs_what_it_skips(
    store: Store, caplog: pytest.LogCaptureFixture
) -> None:
    image = c.User(content=(c.Image(data=PNG),))
    store.extend("chat", [c.User("first"), image, c.User("last")])
    (content_id,) = store.referenced_content()
    if isinstance(store, storage.FileStore):
        store.content.path(content_id).unlink()
    else:
        _sql(store, "DELETE FROM blobs")
    with caplog.at_level(logging.WARNING, logger="canisters.storage"):
        salvaged = store.load("chat", salvage=True)
    assert [x.id for x in salvaged] == [salvaged[0].id, salvaged[1].id]
    assert image.id not in {x.id for x in salvaged}
    assert content_id in caplog.text
    assert image.id in caplog.text


# PostgreSQL rows edited behind the store's back ----------------------------------

_CHANGED = (
    "UPDATE canisters_records SET line = overlay(line placing 'X'::bytea "
    "from position('message 1'::bytea in line) + 8) WHERE seq = 1"
)


@pytest.mark.parametrize(
    ("statement", "codes", "salvaged"),
    [
        pytest.param(_CHANGED, ["digest"], [0, 2], id="content-changed"),
        pytest.param(
            "UPDATE canisters_records SET line = 'not a record'::bytea WHERE seq = 1",
            ["unreadable", "chain"],
            [0, 2],
            id="record-replaced",
        ),
        pytest.param(
            "DELETE FROM canisters_records WHERE seq >= 1",
            ["head"],
            [0],
            id="last-records-deleted",
        ),
        pytest.param(
            "DELETE FROM canisters_records WHERE seq = 1",
            ["chain"],
            [0, 2],
            id="middle-record-deleted",
        ),
        pytest.param(
            "UPDATE canisters_records SET seq = 10 WHERE seq = 2",
            ["chain"],
            [0, 1, 2],
            id="seq-changed",
        ),
        pytest.param(
            "UPDATE canisters_records SET seq = seq + 5 WHERE seq < 2",
            ["chain", "chain", "chain", "chain", "head"],
            [2, 0, 1],
            id="rows-reordered",
        ),
        pytest.param(
            "UPDATE canisters_conversations SET head = repeat('0', 64)",
            ["head"],
            [0, 1, 2],
            id="kept-head-changed",
        ),
        pytest.param(
            "UPDATE canisters_conversations SET length = 7",
            ["head"],
            [0, 1, 2],
            id="kept-length-changed",
        ),
    ],
)
def test_postgres_rows_edited_with_sql_are_seen(
    postgres_location: str, statement: str, codes: list[str], salvaged: list[int]
) -> None:
    """Rows changed with SQL behind the store's back: verify names each problem,
    load refuses, salvage keeps what holds; the async face sees the same."""
    import psycopg

    with open_store(postgres_location) as store:
        canisters = _three(store)
        with psycopg.connect(postgres_location, autocommit=True) as connection:
            assert connection.execute(statement).rowcount > 0
        report = store.verify("chat")
        assert [p.code for p in report.problems] == codes, report.problems
        with pytest.raises(c.IntegrityError, match="salvage"):
            store.load("chat")
        expected = [canisters[n] for n in salvaged]
        assert store.load("chat", salvage=True) == expected

    async def through_the_async_face() -> None:
        async with await storage.open_async_store(postgres_location) as native:
            assert await native.verify("chat") == report
            with pytest.raises(c.IntegrityError, match="salvage"):
                await native.load("chat")
            assert await native.load("chat", salvage=True) == expected

    asyncio.run(through_the_async_face())


# Tampering a chain cannot show: records cut from the end ------------------------


def test_records_cut_from_the_end_are_seen(store: Store) -> None:
    _three(store)
    kept = store.head("chat")
    assert store.verify("chat").ok
    if isinstance(store, storage.FileStore):
        log = _log(store)
        log.write_bytes(b"".join(log.read_bytes().splitlines(keepends=True)[:1]))
    else:
        _sql(store, "DELETE FROM records WHERE seq > 0")
    report = store.verify("chat")
    assert [p.code for p in report.problems] == ["head"]
    assert "removed from its end" in str(report.problems[0])
    assert report.records == 1 and store.head("chat") != kept


def test_a_dropped_sqlite_records_table_is_seen(tmp_path: Path) -> None:
    location = f"sqlite:///{tmp_path / 's.db'}"
    with open_store(location) as store:
        _three(store)
        _sql(store, "DROP TABLE records")
    with open_store(location) as store:
        assert store.load("chat") == []
        report = store.verify("chat")
        assert [p.code for p in report.problems] == ["head"]
        assert "3" in str(report.problems[0])


def test_a_rewritten_tail_is_seen(store: Store) -> None:
    canisters = _three(store)
    if isinstance(store, storage.FileStore):
        log = _log(store)
        log.write_bytes(b"".join(log.read_bytes().splitlines(keepends=True)[:2]))
    else:
        _sql(store, "DELETE FROM records WHERE seq = 2")
    # A well-formed record takes the removed one's place: the chain holds.
    store.append("chat", c.User("forged"))
    assert len(store.load("chat")) == len(canisters)
    assert store.verify("chat").ok  # the append moved the kept head along
    kept = store.head("chat")
    assert store.verify("chat").head == kept[1]


def test_a_deleted_kept_head_is_reported(tmp_path: Path) -> None:
    with open_store(tmp_path / "store") as store:
        _three(store)
        (store.root / "conversations" / "chat" / "head.json").unlink()
        assert [p.code for p in store.verify("chat").problems] == ["head"]
        store.append("chat", c.User("more"))
        assert store.verify("chat").ok


def test_forks_keep_their_own_heads(store: Store) -> None:
    canisters = _three(store)
    child = store.fork("chat", canisters[1].id)
    assert store.verify(child).ok
    store.append(child, c.User("in the fork"))
    assert store.verify(child).ok and store.verify(child).records == 3
    assert store.verify("chat").ok


# Read-only stores ----------------------------------------------------------------


def test_a_store_opened_read_only_writes_nothing(store: Store, tmp_path: Path) -> None:
    canisters = _three(store)
    store.sidecar("chat", "audit").append_line("seen")
    store.close()
    if isinstance(store, storage.FileStore):
        location = str(store.root)
        (store.root / "gc.lock").unlink()
    else:
        location = f"sqlite:///{store.path}"
    before = _files(tmp_path)
    with open_store(location, read_only=True) as reader:
        assert reader.load("chat") == canisters
        assert reader.verify("chat").ok
        assert reader.conversations() == ["chat"]
        assert reader.stats().records == 3
        assert reader.sidecar("chat", "audit").read_lines() == ["seen"]
        assert reader.collect_garbage(dry_run=True).removed == ()
        for write in (
            lambda: reader.append("chat", c.User("more")),
            lambda: reader.sidecar("chat", "audit").append_line("x"),
            lambda: reader.content.put(b"data"),
            lambda: reader.fork("chat", canisters[0].id),
            lambda: reader.delete("chat"),
            lambda: reader.collect_garbage(),
        ):
            with pytest.raises(c.StorageError):
                write()
    assert _files(tmp_path) == before


def _files(root: Path) -> list[tuple[str, int, int]]:
    """Every file, size and time (SQLite's -wal / -shm files aside)."""
    return sorted(
        (path.name, path.stat().st_size, path.stat().st_mtime_ns)
        for path in root.rglob("*")
        if not path.name.endswith(("-wal", "-shm"))
    )


def test_read_only_needs_an_existing_store(tmp_path: Path) -> None:
    with pytest.raises(c.StorageError, match="not a canisters store"):
        open_store(tmp_path / "nothing", read_only=True)
    with pytest.raises(c.StorageError, match="no such database"):
        open_store(f"sqlite:///{tmp_path / 'nothing.db'}", read_only=True)
    assert list(tmp_path.iterdir()) == []


def test_messages_quote_long_values_cut(tmp_path: Path) -> None:
    with (
        open_store(tmp_path / "store") as store,
        pytest.raises(storage.InvalidIdentifier) as caught,
    ):
        store.load("x" * 4_000_000)
    assert len(str(caught.value)) < 400
    with pytest.raises(c.ModelError) as refused:
        open_store(tmp_path / "other", durability="y" * 1_000_000)  # type: ignore[arg-type]
    assert len(str(refused.value)) < 400
