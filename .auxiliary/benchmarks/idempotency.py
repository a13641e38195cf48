"""What an append costs with the canister-id check, per backend and log length.

Run: ``python .auxiliary/benchmarks/idempotency.py [appends] [lengths...]``
(defaults 300 appends, lengths 1,000 and 20,000). For each backend (files,
SQLite, PostgreSQL through a local ``pgserver`` as the tests use; left out
without it) and each length, it fills a conversation to that length, then
times ``appends`` appends of one new canister each and ``appends`` appends of a
canister the conversation already holds (a retry, which records nothing),
``flush`` durability, three rounds, and prints the lowest median of each in
microseconds (wall clock, and the process's CPU time, steadier on a shared
machine; PostgreSQL's own work is not in the latter).

An index makes the check cost the same whatever the log's length: compare the
two lengths. Run it once more with the sources of a version without the check
(``PYTHONPATH`` pointing at them; retries are then plain appends) to see what
the check adds to an append.
"""

from __future__ import annotations

import contextlib
import functools
import random
import statistics
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import canisters as c
from canisters.storage import Store, open_store

ROUNDS = 3


@contextlib.contextmanager
def _postgres() -> Iterator[str | None]:
    """The URL of a PostgreSQL server started for the run (``None`` without
    pgserver)."""
    try:
        import pgserver
    except ImportError:
        yield None
        return
    with tempfile.TemporaryDirectory(prefix="pg") as directory:
        server = pgserver.get_server(directory, cleanup_mode="stop")
        try:
            yield str(server.get_uri())
        finally:
            server.cleanup()


def _schema(server: str, name: str) -> str:
    import psycopg

    with psycopg.connect(server, autocommit=True) as connection:
        connection.execute(f"DROP SCHEMA IF EXISTS {name} CASCADE")
        connection.execute(f"CREATE SCHEMA {name}")
    return f"{server}&options=-csearch_path%3D{name}"


def _timed(call: Callable[[], None]) -> tuple[float, float]:
    wall, cpu = time.perf_counter(), time.process_time()
    call()
    return time.perf_counter() - wall, time.process_time() - cpu


def _measure(store: Store, length: int, appends: int) -> dict[str, tuple[float, float]]:
    name = f"chat{length}"
    held: list[c.Canister] = []
    for start in range(0, length, 1000):
        batch: list[c.Canister] = [
            c.User(f"question {n} " * 8) if n % 2 else c.Assistant(f"answer {n} " * 20)
            for n in range(start, min(length, start + 1000))
        ]
        store.extend(name, batch)
        held.extend(batch)
    rng = random.Random(length)
    best: dict[str, tuple[float, float]] = {}
    for _round in range(ROUNDS):
        fresh: list[tuple[float, float]] = []
        again: list[tuple[float, float]] = []
        for n in range(appends):
            canister = c.User(f"new message {n}")
            fresh.append(_timed(functools.partial(store.append, name, canister)))
            old = rng.choice(held)
            again.append(_timed(functools.partial(store.append, name, old)))
        for kind, times in (("new", fresh), ("retry", again)):
            wall = statistics.median(w for w, _ in times) * 1e6
            cpu = statistics.median(p for _, p in times) * 1e6
            earlier = best.get(kind)
            best[kind] = (
                (wall, cpu)
                if earlier is None
                else (min(earlier[0], wall), min(earlier[1], cpu))
            )
    return best


def main(appends: int, lengths: list[int]) -> None:
    with _postgres() as server, tempfile.TemporaryDirectory() as scratch:
        backends = [
            ("files", str(Path(scratch) / "files")),
            ("sqlite", f"sqlite:///{Path(scratch) / 'store.db'}"),
        ]
        if server is not None:
            backends.append(("postgres", _schema(server, "idempotency")))
        else:
            print("postgres: left out (pip install pgserver to include it)")
        print(
            f"{appends} appends each, best of {ROUNDS} rounds; "
            "median microseconds per append, wall / CPU"
        )
        print(f"{'backend':10} {'length':>7} {'new':>17} {'retry':>17}")
        for backend, location in backends:
            with open_store(location, durability="flush") as store:
                for length in lengths:
                    found = _measure(store, length, appends)
                    cells = " ".join(
                        f"{found[kind][0]:8.0f} / {found[kind][1]:6.0f}"
                        for kind in ("new", "retry")
                    )
                    print(f"{backend:10} {length:>7} {cells}")


if __name__ == "__main__":
    arguments = [int(argument) for argument in sys.argv[1:]]
    main(arguments[0] if arguments else 300, arguments[1:] or [1000, 20000])
