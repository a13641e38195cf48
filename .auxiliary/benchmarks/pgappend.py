"""PostgreSQL appends against the floor: the same transaction with psycopg alone.

Run: ``python .auxiliary/benchmarks/pgappend.py [appends] [rounds]`` (defaults
300 and 3; needs ``pgserver``, in the ``benchmarks`` extra, for a local server
on a Unix socket). :func:`measure` is also what ``run.py``'s store section
calls.

The floor is the least a hash-chained append asks of the server, written
directly with psycopg on one plain connection (``synchronous_commit`` off, as
the store's ``flush`` durability sets it): lock the conversation's head row
(``SELECT ... FOR UPDATE``), insert the record (one row per canister, each
``orjson`` line built against the head just read), move the head, commit. The
store does more: it keeps the canister-id index, refuses a canister id held
already (idempotent retries), takes the lock garbage collection waits for, and
hashes each record. Each workload runs ``appends`` times per round, canisters
and the floor in turn (A B A B ...), one conversation each that grows as it
goes; the figure is the lowest of the rounds' medians, wall clock.
"""

from __future__ import annotations

import hashlib
import statistics
import sys
import time
import uuid
from typing import Any

import orjson

import canisters as c
from canisters.serialization import unstructure_canister
from canisters.storage import open_store

GOAL = 0.9
BATCH = 20


def _schema(server: str) -> str:
    import psycopg

    name = f"append_{uuid.uuid4().hex[:8]}"
    with psycopg.connect(server, autocommit=True) as connection:
        connection.execute(f"CREATE SCHEMA {name}")
    return f"{server}&options=-csearch_path%3D{name}"


class Floor:
    """Appends with psycopg alone: lock the head, insert, move the head, commit."""

    def __init__(self, location: str) -> None:
        import psycopg

        self.connection = psycopg.connect(location)
        execute = self.connection.execute
        execute("SET synchronous_commit = off")
        execute(
            "CREATE TABLE conversations (id TEXT PRIMARY KEY, length BIGINT, head TEXT)"
        )
        execute(
            "CREATE TABLE records (conversation TEXT, seq BIGINT, line BYTEA, "
            "PRIMARY KEY (conversation, seq))"
        )
        self.connection.commit()

    def append(self, conversation_id: str, records: list[dict[str, Any]]) -> None:
        connection = self.connection
        row = connection.execute(
            "SELECT length, head FROM conversations WHERE id = %s FOR UPDATE",
            (conversation_id,),
        ).fetchone()
        if row is None:
            connection.execute(
                "INSERT INTO conversations VALUES (%s, 0, '')", (conversation_id,)
            )
            row = (0, "")
        length, head = row
        rows = []
        for seq, record in enumerate(records, length):
            line = orjson.dumps({"seq": seq, "prev": head, "canister": record})
            head = hashlib.sha256(line).hexdigest()
            rows.append((conversation_id, seq, line))
        if len(rows) == 1:
            connection.execute("INSERT INTO records VALUES (%s, %s, %s)", rows[0])
        else:
            connection.cursor().executemany(
                "INSERT INTO records VALUES (%s, %s, %s)", rows
            )
        connection.execute(
            "UPDATE conversations SET length = %s, head = %s WHERE id = %s",
            (length + len(rows), head, conversation_id),
        )
        connection.commit()

    def close(self) -> None:
        self.connection.close()


def _batches(size: int, count: int, tag: str) -> list[list[c.Canister]]:
    return [
        [
            c.User(f"question {tag} {n}.{k} " * 4)
            if k % 2 == 0
            else c.Assistant(f"answer {tag} {n}.{k} " * 8)
            for k in range(size)
        ]
        for n in range(count)
    ]


def measure(server: str, appends: int = 300, rounds: int = 3) -> dict[str, Any]:
    """Median seconds per append of canisters and of the floor, one canister and
    :data:`BATCH` at a time: ``{size: {"canisters": s, "floor": s}}``."""
    location = _schema(server)
    found: dict[int, dict[str, float]] = {}
    with open_store(location, durability="flush") as store:
        floor = Floor(_schema(server))
        try:
            for size in (1, BATCH):
                for round_number in range(rounds):
                    tag = f"{size}-{round_number}"
                    ours_batches = _batches(size, appends, tag)
                    plain = [
                        [unstructure_canister(canister) for canister in batch]
                        for batch in _batches(size, appends, tag)
                    ]
                    ours: list[float] = []
                    theirs: list[float] = []
                    conversation = f"c{size}"
                    for batch, records in zip(ours_batches, plain, strict=True):
                        started = time.perf_counter()
                        store.extend(conversation, batch)
                        ours.append(time.perf_counter() - started)
                        started = time.perf_counter()
                        floor.append(conversation, records)
                        theirs.append(time.perf_counter() - started)
                    best = found.setdefault(size, {})
                    for name, times in (("canisters", ours), ("floor", theirs)):
                        median = statistics.median(times)
                        best[name] = min(best.get(name, median), median)
        finally:
            floor.close()
    return found


def _print(found: dict[int, dict[str, float]]) -> None:
    for size, figures in found.items():
        ours, floor = figures["canisters"], figures["floor"]
        ratio = floor / ours
        print(
            f"postgres append, {size} canister{'s' if size > 1 else ''} at once: "
            f"canisters {ours * 1e6:7.0f} us, psycopg floor {floor * 1e6:7.0f} us, "
            f"{ratio:.2f}x the floor (goal >= {GOAL:.1f}x)"
        )


def main(appends: int, rounds: int) -> None:
    import storage

    with storage._postgres() as server:
        if server is None:
            print("postgres: left out (pip install pgserver to include it)")
            return
        _print(measure(server, appends, rounds))


def floor_ratio(found: dict[int, dict[str, float]], size: int) -> float:
    """Canisters' speed as a multiple of the floor's (above 1, faster)."""
    return found[size]["floor"] / found[size]["canisters"]


if __name__ == "__main__":
    arguments = [int(argument) for argument in sys.argv[1:]]
    main(
        arguments[0] if arguments else 300,
        arguments[1] if len(arguments) > 1 else 3,
    )
