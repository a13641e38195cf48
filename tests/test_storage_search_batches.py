"""The SQLite backend's FTS table filled in batches: rows past the mark are
found all the same (read-only too), a batch moves the mark, deleted rows leave
the index consistent, and a store whose triggers indexed each row moves to
batches when opened for writing."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import canisters as c
from canisters import storage


def _fts_count(path: Path, word: str) -> int:
    with sqlite3.connect(path) as connection:
        return int(
            connection.execute(
                "SELECT count(*) FROM search WHERE search MATCH ?", (word,)
            ).fetchone()[0]
        )


def _mark(path: Path) -> int:
    with sqlite3.connect(path) as connection:
        row = connection.execute(
            "SELECT value FROM meta WHERE key = 'search_indexed'"
        ).fetchone()
    return int(row[0])


def _integrity(path: Path) -> None:
    """FTS5's own check of the index against search_rows (raises if they differ)."""
    with sqlite3.connect(path) as connection:
        connection.execute(
            "INSERT INTO search (search, rank) VALUES ('integrity-check', 1)"
        )


def test_rows_past_the_mark_are_found_and_a_search_indexes_them(
    tmp_path: Path,
) -> None:
    path = tmp_path / "store.db"
    with storage.open_store(f"sqlite:///{path}") as store:
        store.extend("chat", [c.User("a walrus"), c.Assistant("another walrus")])
    assert _fts_count(path, "walrus") == 0  # not yet in the FTS table
    with storage.open_store(f"sqlite:///{path}", read_only=True) as store:
        hits = store.search("walrus")
    assert [hit.snippet for hit in hits] == ["a walrus", "another walrus"]
    assert _fts_count(path, "walrus") == 0  # a read-only store writes nothing
    with storage.open_store(f"sqlite:///{path}") as store:
        assert [hit.snippet for hit in store.search("walrus")] == [
            "a walrus",
            "another walrus",
        ]
        assert [hit.snippet for hit in store.search("walrus", kinds=["user"])] == [
            "a walrus"
        ]
    assert _fts_count(path, "walrus") == 2
    assert _mark(path) == 2
    _integrity(path)


def test_enough_waiting_rows_are_indexed_by_the_append(tmp_path: Path) -> None:
    path = tmp_path / "store.db"
    with storage.open_store(f"sqlite:///{path}") as store:
        for number in range(300):
            store.append("chat", c.User(f"walrus number {number}"))
        assert _mark(path) >= 256  # one batch, in an append's transaction
        hits = store.search("walrus", limit=300)
    assert [hit.snippet for hit in hits] == [f"walrus number {n}" for n in range(300)]
    _integrity(path)


def test_deleted_rows_leave_the_index_consistent(tmp_path: Path) -> None:
    """Deleting the last rows moves the mark back: a new row, whose id follows
    the last remaining one, is still past it and gets indexed."""
    path = tmp_path / "store.db"
    with storage.open_store(f"sqlite:///{path}") as store:
        store.append("first", c.User("a walrus"))
        store.append("second", c.User("a later walrus"))
        assert len(store.search("walrus")) == 2  # both indexed
        store.delete("second")
        assert _mark(path) == 1
        store.append("third", c.User("a walrus again"))
        hits = store.search("walrus")
    assert [(hit.conversation_id, hit.snippet) for hit in hits] == [
        ("first", "a walrus"),
        ("third", "a walrus again"),
    ]
    _integrity(path)


def test_a_store_indexed_row_by_row_moves_to_batches(tmp_path: Path) -> None:
    path = tmp_path / "store.db"
    with storage.open_store(f"sqlite:///{path}") as store:
        store.append("chat", c.User("an old walrus"))
        store.search("walrus")
    with sqlite3.connect(path) as connection:  # the older form of the tables
        connection.executescript(
            "DROP TRIGGER search_rows_unindexed;"
            "DELETE FROM meta WHERE key = 'search_indexed';"
            "CREATE TRIGGER search_rows_added AFTER INSERT ON search_rows "
            "BEGIN INSERT INTO search (rowid, text) VALUES (new.id, new.text); END;"
            "CREATE TRIGGER search_rows_removed AFTER DELETE ON search_rows "
            "BEGIN INSERT INTO search (search, rowid, text) "
            "VALUES ('delete', old.id, old.text); END;"
        )
    with storage.open_store(f"sqlite:///{path}") as store:
        assert _mark(path) == 1
        store.append("chat", c.Assistant("a new walrus"))
        assert _fts_count(path, "walrus") == 1  # the new row waits
        assert [hit.snippet for hit in store.search("walrus")] == [
            "an old walrus",
            "a new walrus",
        ]
    with sqlite3.connect(path) as connection:
        triggers = {
            name
            for (name,) in connection.execute(
                "SELECT name FROM sqlite_master WHERE type = 'trigger'"
            )
        }
    assert triggers == {"search_rows_unindexed"}
    _integrity(path)
