"""PostgreSQL appends in one statement: the server-side function, the remembered
head, and the general plan they fall back to."""

from __future__ import annotations

import asyncio
from typing import Any

import psycopg
import pytest

import canisters as c
from canisters.storage import open_async_store, open_store
from canisters.storage import postgres as backend
from canisters.storage._postgres import Pipeline, Query
from canisters.storage._postgres_append import FUNCTION


@pytest.fixture
def statements(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """What each append sends: 'alone' (one statement committed with it) or
    'transaction' (a statement or pipeline of the general plan)."""
    sent: list[str] = []
    run = backend._execute

    def counting(connection: Any, op: Any) -> Any:
        if isinstance(op, Query) and op.alone:
            sent.append("alone")
        elif isinstance(op, (Query, Pipeline)):
            sent.append("transaction")
        return run(connection, op)

    monkeypatch.setattr(backend, "_execute", counting)
    return sent


def _verified(store: Any, conversation_id: str) -> list[c.Canister]:
    assert store.verify(conversation_id).ok
    return list(store.load(conversation_id))


def _texts(canisters: list[c.Canister]) -> list[str]:
    return [canister.content[0].text for canister in canisters]


def test_an_append_is_one_statement(postgres_location: str, statements: list[str]):
    canisters = [c.User(f"question {n}") for n in range(5)]
    with open_store(postgres_location) as store:
        statements.clear()  # opening's
        store.append("chat", canisters[0])
        store.extend("chat", canisters[1:4])
        store.append("chat", canisters[4])
        assert statements == ["alone", "alone", "alone"]
        assert _verified(store, "chat") == canisters


def test_another_writer_moves_the_head(postgres_location: str, statements: list[str]):
    with open_store(postgres_location) as one, open_store(postgres_location) as two:
        one.append("chat", c.User("first"))
        two.append("chat", c.User("second"))  # not remembered by one
        statements.clear()
        one.append("chat", c.User("third"))
        # The function refuses the stale head and says the current one: the
        # records are encoded again and sent once more.
        assert statements == ["alone", "alone"]
        assert _texts(_verified(one, "chat")) == ["first", "second", "third"]
        two.append("chat", c.User("fourth"))
        assert _texts(_verified(two, "chat"))[-1] == "fourth"


def test_a_retry_writes_nothing_in_one_statement(
    postgres_location: str, statements: list[str]
) -> None:
    held = [c.User("question"), c.Assistant("answer")]
    with open_store(postgres_location) as store:
        store.extend("chat", held)
        statements.clear()
        store.extend("chat", held)
        store.append("chat", held[1])
        assert statements == ["alone", "alone"]
        fresh = c.User("again")
        store.extend("chat", [held[0], fresh, held[1]])
        assert _verified(store, "chat") == [*held, fresh]
        # Another canister under a held id is refused, and nothing is written.
        impostor = c.User("not the question", id=held[0].id)
        with pytest.raises(c.DuplicateCanister):
            store.extend("chat", [c.User("new"), impostor])
        assert _verified(store, "chat") == [*held, fresh]
        head = store.head("chat")
        store.append("chat", c.User("after the refusal"))
        assert store.head("chat")[0] == head[0] + 1
        assert store.verify("chat").ok


def test_repeats_within_one_append(postgres_location: str) -> None:
    twice = c.User("twice")
    with open_store(postgres_location) as store:
        store.extend("chat", [twice, c.Assistant("between"), twice])
        assert len(_verified(store, "chat")) == 2
        with pytest.raises(c.DuplicateCanister, match="same append"):
            store.extend("chat", [c.User("a", id="x"), c.User("b", id="x")])
        assert len(_verified(store, "chat")) == 2


def test_blobs_are_written_with_the_records(postgres_location: str) -> None:
    image = c.Image(data=bytes(range(256)) * 40)
    message = c.User((c.Text("look"), image))
    with open_store(postgres_location) as store:
        store.append("chat", message)
        store.append("other", c.User((c.Text("again"), image)))
        assert _verified(store, "chat") == [message]
        assert store.load("other")[0].content[1] == image


def test_forks_and_deleted_conversations(
    postgres_location: str, statements: list[str]
) -> None:
    with open_store(postgres_location) as store:
        first = c.User("first")
        store.extend("chat", [first, c.Assistant("reply")])
        child = store.fork("chat", first.id)
        statements.clear()
        store.append(child, c.Assistant("another reply"))
        # A fork's appends check its ancestors too: the general plan.
        assert statements[0] == "alone" and "transaction" in statements
        statements.clear()
        store.append(child, c.User("more"))
        assert "alone" not in statements
        assert _texts(_verified(store, child)) == [
            "first",
            "another reply",
            "more",
        ]
        store.delete(child)
        store.append("gone", c.User("x"))
        store.delete("gone")
        store.append("gone", c.User("y"))
        assert _texts(_verified(store, "gone")) == ["y"]


def test_a_log_indexed_in_part_goes_through_the_general_plan(
    postgres_location: str, statements: list[str]
) -> None:
    canisters = [c.User(f"m{n}") for n in range(4)]
    with open_store(postgres_location) as store:
        store.extend("chat", canisters[:3])
    # As a version of the library without the index left it.
    with psycopg.connect(postgres_location, autocommit=True) as connection:
        connection.execute("DELETE FROM canisters_ids")
        connection.execute("UPDATE canisters_conversations SET indexed = 0")
    with open_store(postgres_location) as store:
        statements.clear()
        store.extend("chat", [canisters[1], canisters[3]])
        assert "transaction" in statements
        assert _verified(store, "chat") == canisters


def test_a_store_made_before_the_function_gets_it(
    postgres_location: str, statements: list[str]
) -> None:
    with open_store(postgres_location) as store:
        store.append("chat", c.User("before"))
    with psycopg.connect(postgres_location, autocommit=True) as connection:
        connection.execute(f"DROP FUNCTION {FUNCTION}")
        # What the previous version created: an older library still running
        # against the database goes on calling it.
        connection.execute(
            "CREATE FUNCTION canisters_append_v2(conv TEXT) RETURNS BOOLEAN "
            "LANGUAGE sql AS 'SELECT false'"
        )
    with open_store(postgres_location) as store:
        statements.clear()  # opening's
        store.append("chat", c.User("after"))  # the head learnt: two statements
        store.append("chat", c.User("again"))
        assert statements == ["alone", "alone", "alone"]
        assert _texts(_verified(store, "chat")) == ["before", "after", "again"]
    with psycopg.connect(postgres_location) as connection:
        found = connection.execute(
            "SELECT p.proname FROM pg_proc p JOIN pg_namespace n "
            "ON n.oid = p.pronamespace WHERE n.nspname = current_schema() "
            "AND p.proname LIKE 'canisters_append_%' ORDER BY p.proname"
        ).fetchall()
    assert [name for (name,) in found] == ["canisters_append_v2", FUNCTION]


def test_what_the_server_splits_comes_back_whole(postgres_location: str) -> None:
    # The records travel as one byte string and their ids and search rows as
    # JSON: ids and texts that JSON escapes, and records of many sizes.
    canisters = [
        c.User("x" * size + ' "quoted" \\ back\nslash, comma é 😀', id=f"id,{size}")
        for size in (0, 1, 200, 5000)
    ] + [c.Assistant("\x01 control \u2028", id="\x01odd")]
    with open_store(postgres_location) as store:
        store.extend("chat", canisters[:2])
        store.extend("chat", canisters[2:])
        store.extend("chat", canisters)  # a retry: held, nothing written
        assert _verified(store, "chat") == canisters
        assert [hit.canister_id for hit in store.search("comma", limit=10)] == [
            canister.id for canister in canisters[:4]
        ]


def test_the_asyncio_store_appends_in_one_statement(
    postgres_location: str, statements: list[str]
) -> None:
    sent: list[str] = []
    run = backend._execute_async

    async def counting(connection: Any, op: Any) -> Any:
        sent.append("alone" if isinstance(op, Query) and op.alone else "other")
        return await run(connection, op)

    async def main() -> list[c.Canister]:
        async with await open_async_store(postgres_location) as store:
            sent.clear()  # opening's
            await store.append("chat", c.User("one"))
            await store.extend("chat", [c.User("two"), c.User("three")])
            return list(await store.load("chat"))

    patch = pytest.MonkeyPatch()
    patch.setattr(backend, "_execute_async", counting)
    try:
        loaded = asyncio.run(main())
    finally:
        patch.undo()
    assert sent[:2] == ["alone", "alone"]
    assert _texts(loaded) == ["one", "two", "three"]
