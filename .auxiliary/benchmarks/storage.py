"""Storage figures: append and load speed, load memory, bytes on disk, dedup.

Run: ``python .auxiliary/benchmarks/storage.py [canisters] [loads]`` (defaults
100,000 and 3); ``python .auxiliary/benchmarks/storage.py search [sizes...]``
prints the search figures instead (see ``storage_search.py``). Backends:
files, SQLite and PostgreSQL (a local server started here through
``pgserver``, as the tests do; left out when it is not installed). Prints,
for each backend, the append rate (``flush`` durability, in batches of one;
for PostgreSQL ``synchronous_commit`` off, over a Unix socket), the best
load rate of ``loads`` runs, both in wall-clock and in CPU time (the process's
own, steadier on a shared machine), the peak memory of ``load`` (tracemalloc)
against the size of the log and of the loaded conversation, and bytes on disk
against a plain JSONL dump of the same conversations (many conversations sharing
system prompts and images).
"""

from __future__ import annotations

import contextlib
import os
import random
import sys
import tempfile
import time
import tracemalloc
from collections.abc import Iterator
from pathlib import Path

import canisters as c
from canisters.storage import open_store

PROMPTS = [f"You are assistant number {n}. " * 60 for n in range(3)]
IMAGES = [os.urandom(40_000) for _ in range(5)]


def _conversation(rng: random.Random, length: int) -> list[c.Canister]:
    canisters: list[c.Canister] = [c.Supervisor(rng.choice(PROMPTS))]
    for turn in range(length // 2):
        if turn % 10 == 0:
            content = (c.Text(f"look at this {turn}"), c.Image(data=rng.choice(IMAGES)))
            canisters.append(c.User(content))
        else:
            canisters.append(c.User(f"question {turn} " * rng.randint(1, 20)))
        canisters.append(c.Assistant(f"answer {turn} " * rng.randint(5, 60), step=turn))
    return canisters


def _size(path: Path) -> int:
    if path.is_file():
        return path.stat().st_size
    return sum(p.stat().st_size for p in path.rglob("*") if p.is_file())


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


def _database_size(location: str) -> int:
    import psycopg

    with psycopg.connect(location) as connection:
        row = connection.execute(
            "SELECT sum(pg_total_relation_size(c.oid)) FROM pg_class c "
            "JOIN pg_namespace n ON n.oid = c.relnamespace "
            "WHERE c.relkind = 'r' AND n.nspname = current_schema()"
        ).fetchone()
    return int(row[0]) if row is not None and row[0] is not None else 0


def _schema(server: str, name: str) -> str:
    import psycopg

    with psycopg.connect(server, autocommit=True) as connection:
        connection.execute(f"CREATE SCHEMA IF NOT EXISTS {name}")
    return f"{server}&options=-csearch_path%3D{name}"


def main(count: int, loads: int) -> None:
    with _postgres() as server:
        run(count, loads, server)


def run(count: int, loads: int, server: str | None) -> None:
    rng = random.Random(1)
    long_conversation = _conversation(rng, count)
    corpus = [_conversation(rng, 40) for _ in range(200)]
    with tempfile.TemporaryDirectory() as scratch:
        root = Path(scratch)
        backends = [
            ("files", str(root / "files")),
            ("sqlite", f"sqlite:///{root / 'store.db'}"),
        ]
        if server is not None:
            backends.append(("postgres", _schema(server, "long")))
        else:
            print("postgres: left out (pip install pgserver to include it)")
        for backend, location in backends:
            with open_store(location, durability="flush") as store:
                started, cpu = time.perf_counter(), time.process_time()
                for canister in long_conversation:
                    store.append("long", canister)
                appended = time.perf_counter() - started
                appended_cpu = time.process_time() - cpu
                log_bytes = store.stats().log_bytes
            loading = loading_cpu = float("inf")
            for _ in range(loads):
                with open_store(location) as store:
                    started, cpu = time.perf_counter(), time.process_time()
                    loaded = store.load("long")
                    loading = min(loading, time.perf_counter() - started)
                    loading_cpu = min(loading_cpu, time.process_time() - cpu)
                    del loaded
            with open_store(location) as store:
                tracemalloc.start()
                loaded = store.load("long")
                held, peak = tracemalloc.get_traced_memory()
                tracemalloc.stop()
                assert len(loaded) == len(long_conversation)
                del loaded
            total = len(long_conversation)
            print(
                f"{backend}: {total:,} canisters; "
                f"append {total / appended:,.0f}/s (flush; "
                f"{total / appended_cpu:,.0f}/s of CPU); "
                f"load {total / loading:,.0f}/s ({total / loading_cpu:,.0f}/s of CPU); "
                f"log {log_bytes / 2**20:.1f} MiB; loaded conversation holds "
                f"{held / 2**20:.1f} MiB, load peaks at {peak / 2**20:.1f} MiB "
                f"({peak / held:.2f}x the result, {peak / log_bytes:.2f}x the log)"
            )
            corpus_location = {
                "files": str(root / f"{backend}-corpus"),
                "sqlite": f"sqlite:///{root / 'corpus.db'}",
                "postgres": _schema(server or "", "corpus"),
            }[backend]
            with open_store(corpus_location, durability="flush") as store:
                for index, conversation in enumerate(corpus):
                    store.extend(f"c{index}", conversation)
            corpus_disk = (
                _database_size(corpus_location)
                if backend == "postgres"
                else _size(
                    root / f"{backend}-corpus"
                    if backend == "files"
                    else root / "corpus.db"
                )
            )
            plain = sum(len(c.to_jsonl(conversation)) for conversation in corpus)
            print(
                f"{backend}: corpus of {len(corpus)} conversations: "
                f"{corpus_disk / 2**20:.1f} MiB on disk against "
                f"{plain / 2**20:.1f} MiB of plain JSONL ({plain / corpus_disk:.1f}x)"
            )


if __name__ == "__main__":
    if sys.argv[1:2] == ["search"]:
        sys.path.insert(0, str(Path(__file__).parent))
        import storage_search

        with _postgres() as url:
            sizes = [int(n) for n in sys.argv[2:]] or [100_000, 1_000_000]
            storage_search.run(sizes, url, _schema)
        sys.exit(0)
    main(
        int(sys.argv[1]) if len(sys.argv) > 1 else 100_000,
        int(sys.argv[2]) if len(sys.argv) > 2 else 3,
    )
