"""Search beyond the conformance suite: snippets, an index made for an older
store, a read-only store, and ``canisters store search`` / ``reindex``."""

from __future__ import annotations

import json
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

import canisters as c
from canisters import storage
from canisters.storage import InvalidQuery, SearchHit


def _cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "canisters", *args],
        capture_output=True,
        text=True,
        check=False,
    )


def test_marked_puts_marks_around_each_match() -> None:
    hit = SearchHit("chat", "c1", "user", "red apples, red pears", ((0, 3), (12, 15)))
    assert hit.marked() == "[red] apples, [red] pears"
    assert hit.marked("<b>", "</b>") == "<b>red</b> apples, <b>red</b> pears"
    assert SearchHit("chat", "c1", "user", "plain").marked() == "plain"


def test_a_long_text_is_cut_around_its_first_match(tmp_path: Path) -> None:
    with storage.open_store(tmp_path / "store") as store:
        store.append("chat", c.User("lorem ipsum " * 40 + "Needle\nin a haystack"))
        (hit,) = store.search("needle", limit=1)
    assert "\n" not in hit.snippet
    assert hit.snippet.startswith("…")
    assert hit.marked().count("[Needle]") == 1


def test_a_query_that_is_not_a_string_is_refused(tmp_path: Path) -> None:
    with (
        storage.open_store(tmp_path / "store") as store,
        pytest.raises(InvalidQuery, match="is a string"),
    ):
        store.search(42, limit=1)  # type: ignore[arg-type]


def test_an_sqlite_store_made_before_search_is_indexed_when_opened(
    tmp_path: Path,
) -> None:
    """A store whose search tables are missing (made by an older version) is
    indexed when first opened for writing; read-only, it says what to do."""
    path = tmp_path / "old.db"
    first, second = c.User("an older walrus"), c.Assistant("x" * 3000 + " walrus")
    with storage.open_store(f"sqlite:///{path}") as store:
        store.extend("chat", [first, second])
    with sqlite3.connect(path) as connection:
        for table in ("search", "search_rows"):
            connection.execute(f"DROP TABLE {table}")
        connection.execute("DELETE FROM meta WHERE key = 'search'")
    with (
        storage.open_store(f"sqlite:///{path}", read_only=True) as store,
        pytest.raises(c.StorageError, match="no search index"),
    ):
        store.search("walrus", limit=5)
    with storage.open_store(f"sqlite:///{path}") as store:
        found = store.search("walrus", limit=5)
    assert [hit.canister_id for hit in found] == [first.id, second.id]


def test_reindex_rebuilds_an_emptied_index(tmp_path: Path) -> None:
    where = f"sqlite:///{tmp_path / 'store.db'}"
    with storage.open_store(where) as store:
        store.extend("chat", [c.User("hello otter"), c.Assistant("hi otter")])
    with sqlite3.connect(tmp_path / "store.db") as connection:
        connection.execute("DELETE FROM search_rows")
    with storage.open_store(where) as store:
        assert store.search("otter", limit=5) == []
    out = _cli("store", "reindex", where)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "indexed 2 canisters"
    with storage.open_store(where) as store:
        assert len(store.search("otter", limit=5)) == 2


@pytest.mark.parametrize("backend", ["file", "sqlite"])
def test_store_search_command(backend: str, tmp_path: Path) -> None:
    where = (
        str(tmp_path / "store")
        if backend == "file"
        else f"sqlite:///{tmp_path / 'store.db'}"
    )
    question, answer = c.User("Where is my parcel?"), c.Assistant("Your parcel left")
    with storage.open_store(where) as store:
        store.extend("chat-1", [question, answer])
        store.append("chat-2", c.User("no match here"))
    out = _cli("store", "search", where, "parcel")
    assert out.returncode == 0, out.stderr
    lines = out.stdout.splitlines()
    assert [line.split("  ")[:3] for line in lines] == [
        ["chat-1", question.id, "user"],
        ["chat-1", answer.id, "assistant"],
    ]
    assert lines[0].endswith("Where is my parcel?")
    assert "2 hits" in out.stderr
    out = _cli("store", "search", where, "parcel", "--json", "-k", "assistant")
    assert json.loads(out.stdout) == [
        {
            "conversation": "chat-1",
            "canister": answer.id,
            "kind": "assistant",
            "snippet": "Your parcel left",
            "marks": [[5, 11]],
        }
    ]
    out = _cli("store", "search", where, "parcel", "--limit", "1", "-c", "chat-1")
    assert len(out.stdout.splitlines()) == 1
    out = _cli("store", "search", where, "?!")
    assert out.returncode == 2
    assert "no word to look for" in out.stderr
    if backend == "file":
        out = _cli("store", "reindex", where)
        assert "keeps no index" in out.stdout


@pytest.mark.parametrize("backend", ["sqlite", "postgres"])
def test_a_frequent_word_is_found_in_order_too(
    backend: str, tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    """Past a few thousand matches the databases read their rows in order rather
    than sort the matches: the hits are the same as the file backend's."""
    location = (
        f"sqlite:///{tmp_path / 'store.db'}"
        if backend == "sqlite"
        else request.getfixturevalue("postgres_location")
    )
    stores = [storage.open_store(location), storage.open_store(tmp_path / "files")]
    for store in stores:
        for number in range(44, 0, -1):  # stored out of the order of their ids
            store.extend(
                f"chat-{number:02d}",
                [c.User(f"common word {n}", id=f"u{number}-{n}") for n in range(25)]
                + [c.Assistant(f"common {n}", id=f"a{number}-{n}") for n in range(25)],
            )
    sqlite_hits, file_hits = (
        [(h.conversation_id, h.canister_id) for h in store.search("common", limit=30)]
        for store in stores
    )
    assert sqlite_hits == file_hits
    assert sqlite_hits[:2] == [("chat-01", "u1-0"), ("chat-01", "u1-1")]
    assert len(sqlite_hits) == 30
    answers = stores[0].search("common", limit=30, kinds=["assistant"])
    assert [h.canister_id for h in answers[:2]] == ["a1-0", "a1-1"]
    for store in stores:
        store.close()
