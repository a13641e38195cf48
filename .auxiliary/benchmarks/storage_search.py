"""Search figures: query latency and throughput, and what the index costs an append.

Run: ``python .auxiliary/benchmarks/storage.py search [sizes...]`` (default
100,000 and 1,000,000 canisters), or this module directly with the same sizes.
For each size, a store of that many canisters (conversations of 50; each
canister 30 words drawn from a vocabulary of 20,000 with Zipf's law, as natural
text is) is built on SQLite (FTS5) and PostgreSQL (``tsvector`` and GIN; a
server started through ``pgserver``), and on the file backend (a scan) up to
100,000 canisters. Printed per backend: the build's append rate (``flush``
durability, one ``extend`` of 50 per conversation), then for four kinds of
query (a rare word, a common word, two words, a prefix) the hits found, the
median and 95th-percentile latency of ``search(query, limit=20)`` and the
queries per second one thread runs (``SEARCH_BACKENDS=sqlite,postgres`` in the
environment limits the backends). Then the append cost of the index: the same
10,000 canisters appended one by one with the index and with its writing
patched out, on each database.
"""

from __future__ import annotations

import os
import random
import statistics
import string
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import canisters as c
from canisters.storage import Store, open_store

VOCABULARY = 20_000
WORDS_PER_CANISTER = 30
PER_CONVERSATION = 50
RUNS = 30
# The file backend scans: measured up to this size only.
FILE_SCAN_UP_TO = 100_000


def _vocabulary(rng: random.Random) -> list[str]:
    words: dict[str, None] = {}
    while len(words) < VOCABULARY:
        length = rng.randint(4, 9)
        words["".join(rng.choices(string.ascii_lowercase, k=length))] = None
    return list(words)


def _canisters(count: int, seed: int = 7) -> Iterator[list[c.Canister]]:
    """Conversations of ``PER_CONVERSATION`` canisters, ``count`` in all."""
    rng = random.Random(seed)
    words = _vocabulary(random.Random(1))
    weights = [1 / rank for rank in range(1, VOCABULARY + 1)]
    made = 0
    while made < count:
        size = min(PER_CONVERSATION, count - made)
        batch: list[c.Canister] = []
        for index in range(size):
            text = " ".join(rng.choices(words, weights, k=WORDS_PER_CANISTER))
            batch.append(c.User(text) if index % 2 == 0 else c.Assistant(text))
        made += size
        yield batch


def queries() -> dict[str, list[str]]:
    """Queries of four kinds, ``RUNS`` each, drawn from the vocabulary."""
    words = _vocabulary(random.Random(1))
    return {
        "rare word (rank 5,000+)": [words[5000 + n * 37] for n in range(RUNS)],
        "common word (rank 10-40)": [words[10 + n] for n in range(RUNS)],
        "two words (ranks 50-200)": [
            f"{words[50 + n]} {words[100 + 3 * n]}" for n in range(RUNS)
        ],
        "prefix (3 letters*)": [words[200 + n][:3] + "*" for n in range(RUNS)],
    }


def build(store: Store, count: int) -> float:
    """Fill ``store`` with ``count`` canisters; return the append rate."""
    started = time.perf_counter()
    for number, conversation in enumerate(_canisters(count)):
        store.extend(f"c{number:07d}", conversation)
    return count / (time.perf_counter() - started)


def measure(store: Store) -> list[str]:
    """Lines of figures for every kind of query."""
    lines = []
    for kind, texts in queries().items():
        store.search(texts[0], limit=20)  # warm the caches
        times = []
        hits = 0
        for text in texts:
            started = time.perf_counter()
            found = store.search(text, limit=20)
            times.append(time.perf_counter() - started)
            hits += len(found)
        times.sort()
        median = statistics.median(times)
        p95 = times[int(len(times) * 0.95) - 1]
        lines.append(
            f"  {kind}: {hits / len(texts):.1f} hits of 20; median "
            f"{median * 1000:.2f} ms, p95 {p95 * 1000:.2f} ms, "
            f"{len(texts) / sum(times):,.{0 if sum(times) < len(texts) / 10 else 1}f} "
            "queries/s"
        )
    return lines


@contextmanager
def _without_index() -> Iterator[None]:
    """Patch out the writing of the search index (SQLite and PostgreSQL)."""
    from canisters.storage import _postgres, _postgres_append, _search_sqlite

    saved = (
        _search_sqlite.SQLiteSearch._index_search,
        _postgres.postgres_appended,
        _postgres_append.postgres_rows,
    )

    def nothing(*_args: Any) -> None:
        return None

    _search_sqlite.SQLiteSearch._index_search = nothing  # type: ignore[method-assign]
    _postgres.postgres_appended = nothing  # type: ignore[assignment]
    _postgres_append.postgres_rows = nothing  # type: ignore[assignment]
    try:
        yield
    finally:
        _search_sqlite.SQLiteSearch._index_search = saved[0]  # type: ignore[method-assign]
        _postgres.postgres_appended = saved[1]  # type: ignore[assignment]
        _postgres_append.postgres_rows = saved[2]  # type: ignore[assignment]


def append_cost(location_of: Callable[[str], str]) -> str:
    """Appends of single canisters with and without the index, two rounds each
    (alternated, the best kept), in wall-clock and in this process's CPU time
    (steadier on a shared machine; a server's own work is not in it)."""
    sample = [x for conversation in _canisters(10_000, seed=3) for x in conversation]
    rates = {"with": [0.0, 0.0], "without": [0.0, 0.0]}
    for round_ in range(2):
        for mode, best in rates.items():
            patch = _without_index() if mode == "without" else _nothing()
            location = location_of(f"{mode}{round_}")
            with patch, open_store(location, durability="flush") as store:
                started, cpu = time.perf_counter(), time.process_time()
                for number, canister in enumerate(sample):
                    store.append(f"a{number // PER_CONVERSATION}", canister)
                wall = len(sample) / (time.perf_counter() - started)
                used = len(sample) / (time.process_time() - cpu)
            best[0], best[1] = max(best[0], wall), max(best[1], used)
    (wall, cpu), (bare, bare_cpu) = rates["with"], rates["without"]
    return (
        f"  append one canister: {wall:,.0f}/s with the index, {bare:,.0f}/s "
        f"without (+{bare / wall - 1:.0%} per append); of CPU: {cpu:,.0f}/s and "
        f"{bare_cpu:,.0f}/s (+{bare_cpu / cpu - 1:.0%})"
    )


@contextmanager
def _nothing() -> Iterator[None]:
    yield


def run(
    sizes: list[int], server: str | None, schema: Callable[[str, str], str]
) -> None:
    with tempfile.TemporaryDirectory() as scratch:
        root = Path(scratch)
        for size in sizes:
            backends = [("sqlite", f"sqlite:///{root / f'search{size}.db'}")]
            if server is not None:
                backends.append(("postgres", schema(server, f"search{size}")))
            if size <= FILE_SCAN_UP_TO:
                backends.append(("files (scan)", str(root / f"files{size}")))
            wanted = os.environ.get("SEARCH_BACKENDS")  # "sqlite,postgres": those
            for backend, location in backends:
                if wanted and backend.split()[0] not in wanted.split(","):
                    continue
                with open_store(location, durability="flush") as store:
                    rate = build(store, size)
                with open_store(location) as store:
                    print(
                        f"{backend}, {size:,} canisters "
                        f"(built at {rate:,.0f} canisters/s):"
                    )
                    for line in measure(store):
                        print(line)
                    sys.stdout.flush()
        print("append cost of the index, 10,000 canisters appended one by one:")
        print("sqlite:")
        print(append_cost(lambda name: f"sqlite:///{root / f'cost-{name}.db'}"))
        if server is not None:
            print("postgres:")
            print(append_cost(lambda name: schema(server, f"cost{name}")))


if __name__ == "__main__":
    sys.path.insert(0, str(Path(__file__).parent))
    import storage

    with storage._postgres() as url:
        run(
            [int(n) for n in sys.argv[1:]] or [100_000, 1_000_000], url, storage._schema
        )
