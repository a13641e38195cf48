# The lambdas handed to Timer.best run before the loop moves on.
# ruff: noqa: B023
"""Benchmark canisters against pydantic-ai's and LangChain's messages.

Run from the repository root, after ``pip install -e '.[benchmarks]'``::

    python .auxiliary/benchmarks/run.py            # full run, a few minutes
    python .auxiliary/benchmarks/run.py --quick    # smaller corpus, fewer repeats
    python .auxiliary/benchmarks/run.py --quick --clock cpu \\
        --report documentation/benchmark-figures.inc  # the documentation's tables

Every measure does the same work with each library on the same deterministic
corpora (:mod:`corpus`: agent runs, short chat turns, and media-heavy chat) in
one run, and reports messages per second (a message is one corpus entry: a
system prompt, a user turn, an assistant text, a tool call or a tool result) and
canisters' speed as a multiple of each peer's. Times are the best of several
repeats. The media corpus holds fewer messages (``--messages`` / 20). The table
goes to stdout and the figures to ``.auxiliary/benchmarks/results/``
(``latest.json`` and a dated copy).
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import importlib.metadata
import json
import os
import platform
import sqlite3
import subprocess
import sys
import tempfile
import time
import tracemalloc
import warnings
from collections.abc import Callable
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import corpus
import orjson
import peers

import canisters
from canisters import providers, storage
from canisters.serialization import structure_canister

HERE = Path(__file__).resolve().parent
PROVIDERS = ("openai-chat", "anthropic", "gemini", "ollama", "openai-responses")
SDKS = ("openai", "anthropic", "google.genai", "ollama", "pydantic", "httpx")
# Ollama takes images only as base64; URL images become a text placeholder.
RENDER_OPTIONS: dict[str, dict[str, Any]] = {"ollama": {"unsupported": "placeholder"}}

CANISTERS, PYDANTIC_AI, LANGCHAIN = "canisters", "pydantic-ai", "langchain"
# The corpora the project sets speed targets for; the others' ratios are reported.
TARGETED = ("agent", "chat")
# The media corpus carries about 60 KB of image bytes per message; it holds
# ``--messages`` divided by this many messages, so that the copies the measures
# keep (base64 texts, rendered bodies) stay a few hundred MB.
MEDIA_SHARE = 20
PLAIN, HAND = "plain orjson/dicts", "hand-written dicts"
FLOOR = "psycopg alone"
# The goals for the media corpus, whole requests and PostgreSQL appends.
MEDIA_GOAL = 1.0
WHOLE_GOAL = 1.3
LITELLM_GOAL, LITELLM_FAR = 1.0, 10.0
FAR_ROUTES = (("openai-chat", "anthropic"), ("openai-chat", "gemini"))
POSTGRES_GOAL = 0.9


# --------------------------------------------------------------------------- #
# Timing


class _Held:
    """What :func:`_charged` allocates: an instance of a class (lists, tuples
    and dicts may come from a free list, which sets off no collection)."""

    __slots__ = ("result",)

    def __init__(self, result: Any) -> None:
        self.result = result


def _charged(result: Any) -> None:
    """Allocate one container while ``result`` (what a timed call returned) is
    alive: a collection the call left pending (canisters pauses the collector
    while it builds, and the collection that was due then runs at the next
    allocation of a container) runs here, inside the timing, as it would in an
    application that keeps what it parsed or rendered, and is charged to that
    call rather than dropped with its result or charged to the next library."""
    held = _Held(result)
    del held


class Timer:
    """Best-of-N timing: at least ``repeat`` runs and until ``budget`` seconds;
    a collection a call leaves pending is charged to it (see :func:`_charged`)."""

    def __init__(
        self, repeat: int, budget: float, clock: Callable[[], float] = time.perf_counter
    ) -> None:
        self.repeat = repeat
        self.budget = budget
        self.clock = clock

    def best(
        self, function: Callable[[], Any], setup: Callable[[], Any] | None = None
    ) -> float:
        best = float("inf")
        spent = 0.0
        runs = 0
        while runs < self.repeat or (spent < self.budget and runs < 50):
            if setup is not None:
                setup()
            gc.collect()
            start = time.perf_counter()
            _charged(function())
            elapsed = time.perf_counter() - start
            best = min(best, elapsed)
            spent += elapsed
            runs += 1
        return best

    def interleaved(self, functions: dict[str, Callable[[], Any]]) -> dict[str, float]:
        """Best time of each function, run in rounds (one run of each per round),
        so that every library meets the same spells of load from other processes.
        """
        best = dict.fromkeys(functions, float("inf"))
        spent = 0.0
        rounds = 0
        while rounds < self.repeat or (spent < self.budget and rounds < 50):
            for label, function in functions.items():
                gc.collect()
                start = self.clock()
                _charged(function())
                elapsed = self.clock() - start
                best[label] = min(best[label], elapsed)
                spent += elapsed
            rounds += 1
        return best


class Results:
    """Figures by operation and library, printed as a table as they come."""

    def __init__(self) -> None:
        self.operations: dict[str, dict[str, dict[str, float]]] = {}

    def add(self, operation: str, library: str, seconds: float, messages: int) -> None:
        entry = {"seconds": seconds, "messages_per_second": messages / seconds}
        self.operations.setdefault(operation, {})[library] = entry

    def compare(
        self,
        operation: str,
        count: int,
        timer: Timer,
        functions: dict[str, Callable[[], Any]],
    ) -> None:
        """Time each library's function for ``operation`` (interleaved) and print."""
        for library, seconds in timer.interleaved(functions).items():
            self.add(operation, library, seconds, count)
        self.print(operation)

    def rate(self, operation: str, library: str) -> float | None:
        entry = self.operations.get(operation, {}).get(library)
        return None if entry is None else entry["messages_per_second"]

    def ratio(self, operation: str, library: str) -> float | None:
        mine, theirs = self.rate(operation, CANISTERS), self.rate(operation, library)
        if mine is None or theirs is None:
            return None
        return mine / theirs

    def print(self, operation: str) -> None:
        rows = self.operations.get(operation, {})
        print(f"\n{operation}")
        for library, entry in rows.items():
            rate = entry["messages_per_second"]
            ratio = self.ratio(operation, library)
            versus = (
                ""
                if library == CANISTERS or ratio is None
                else f"canisters {ratio:5.2f}x"
            )
            print(f"  {library:<22} {rate:>14,.0f} msg/s   {versus}")
        sys.stdout.flush()


# --------------------------------------------------------------------------- #
# Measures


def measure_import(results: dict[str, Any], repeat: int) -> None:
    """Time ``import canisters`` and ``import attrs, cattrs`` in fresh processes.

    Both wall time and the process's CPU time are kept (best of ``repeat``); the
    CPU time is what the target is checked on, as it is far less disturbed by
    other processes competing for the cores.
    """
    probe = (
        "import sys, time\n"
        "{before}"
        "wall, cpu = time.perf_counter(), time.process_time()\n"
        "import {module}\n"
        "wall, cpu = time.perf_counter() - wall, time.process_time() - cpu\n"
        "sdks = sorted({{n for n in sys.modules for s in {sdks!r}"
        " if n == s or n.startswith(s + '.')}})\n"
        "print(wall, cpu, ','.join(sdks))\n"
    )
    # Measure what an installed package gives: modules loaded from bytecode. An
    # editable checkout with PYTHONDONTWRITEBYTECODE set would compile every
    # module of canisters on each import, while attrs and cattrs, installed from
    # wheels, load their bytecode. The bytecode goes to a temporary directory.
    environment = dict(os.environ)
    environment.pop("PYTHONDONTWRITEBYTECODE", None)
    environment["PYTHONPYCACHEPREFIX"] = tempfile.mkdtemp(prefix="canisters-pyc-")
    figures: dict[str, Any] = {}
    # The third probe imports attrs and cattrs first and times canisters alone.
    for label, module, before in (
        ("attrs, cattrs", "attrs, cattrs", ""),
        ("canisters", "canisters", ""),
        ("canisters alone", "canisters", "import attrs, cattrs\n"),
    ):
        wall = cpu = float("inf")
        loaded = ""
        source = probe.format(module=module, sdks=SDKS, before=before)
        command = [sys.executable, "-c", source]
        subprocess.run(command, check=True, capture_output=True, env=environment)
        for _ in range(repeat):
            output = subprocess.run(
                command,
                check=True,
                capture_output=True,
                text=True,
                env=environment,
            ).stdout.split()
            wall = min(wall, float(output[0]))
            cpu = min(cpu, float(output[1]))
            loaded = output[2] if len(output) > 2 else ""
        figures[label] = {
            "seconds": wall,
            "cpu_seconds": cpu,
            "sdk_modules": loaded.split(",") if loaded else [],
        }
    # The target: what `import canisters` takes beyond `import attrs, cattrs`.
    # canisters loads cattrs only on first use, so its own cost over attrs and
    # cattrs (the third probe) is larger than this difference; both are kept.
    base, ours = figures["attrs, cattrs"], figures["canisters"]
    figures["extra_seconds"] = ours["seconds"] - base["seconds"]
    figures["extra_cpu_seconds"] = ours["cpu_seconds"] - base["cpu_seconds"]
    results["import"] = figures
    print(
        f"\nimport (fresh process, from bytecode, best of {repeat} runs; "
        "wall / CPU time)"
    )
    for label in ("attrs, cattrs", "canisters"):
        entry = figures[label]
        print(
            f"  import {label:<15} {entry['seconds'] * 1e3:8.1f} ms "
            f"{entry['cpu_seconds'] * 1e3:8.1f} ms"
        )
    print(
        f"  canisters' own cost    {figures['extra_seconds'] * 1e3:8.1f} ms "
        f"{figures['extra_cpu_seconds'] * 1e3:8.1f} ms"
    )
    alone = figures["canisters alone"]
    print(
        f"  (canisters after attrs and cattrs: {alone['seconds'] * 1e3:.1f} ms "
        f"{alone['cpu_seconds'] * 1e3:.1f} ms; it loads cattrs on first use)"
    )
    sdks = ours["sdk_modules"]
    print(f"  SDK modules imported   {', '.join(sdks) if sdks else 'none'}")


def _pydantic_ai_mappers() -> tuple[Any, Any] | None:
    """pydantic-ai's own OpenAI chat and Anthropic mappers (private methods)."""
    try:
        from pydantic_ai.models import ModelRequestParameters
        from pydantic_ai.models.anthropic import AnthropicModel
        from pydantic_ai.models.openai import OpenAIChatModel
        from pydantic_ai.providers.anthropic import AnthropicProvider
        from pydantic_ai.providers.openai import OpenAIProvider
    except ImportError:
        return None
    openai_model = OpenAIChatModel("gpt-4o", provider=OpenAIProvider(api_key="unused"))
    anthropic_model = AnthropicModel(
        "claude-sonnet-4-5", provider=AnthropicProvider(api_key="unused")
    )
    parameters = ModelRequestParameters()
    loop = asyncio.new_event_loop()

    # Each returns what it rendered, held until the round ends, as the other
    # libraries' lists of bodies are: a body dropped at once is never walked
    # by the garbage collector, one held is.
    def openai(all_messages: list[list[Any]]) -> list[Any]:
        async def run() -> list[Any]:
            return [
                await openai_model._map_messages(messages, parameters)
                for messages in all_messages
            ]

        return loop.run_until_complete(run())

    def anthropic(all_messages: list[list[Any]]) -> list[Any]:
        async def run() -> list[Any]:
            return [
                await anthropic_model._map_message(messages, parameters, {})
                for messages in all_messages
            ]

        return loop.run_until_complete(run())

    return openai, anthropic


def measure_core(
    specs: list[list[corpus.Spec]], timer: Timer, results: Results, label: str
) -> dict[str, Any]:
    """Construct, serialize, parse, render and parse-from-provider; ``label``
    (the corpus's name) ends each operation's name."""
    from langchain_core import messages as lc
    from pydantic import TypeAdapter
    from pydantic_ai.messages import ModelMessage
    from pydantic_ai.messages import ModelMessagesTypeAdapter as adapter

    one_adapter: Any = TypeAdapter(ModelMessage)
    count = corpus.message_count(specs)
    ours = [peers.canisters_from_specs(s) for s in specs]
    theirs_pa = [peers.pydantic_ai_from_specs(s) for s in specs]
    theirs_lc = [peers.langchain_from_specs(s) for s in specs]
    plain = [peers.records_from_specs(s, binary=False) for s in specs]
    binary = [peers.records_from_specs(s, binary=True) for s in specs]

    def compare(operation: str, functions: dict[str, Callable[[], Any]]) -> None:
        results.compare(f"{operation} [{label}]", count, timer, functions)

    compare(
        "construct from plain dicts",
        {
            CANISTERS: lambda: [peers.canisters_from_specs(s) for s in specs],
            PYDANTIC_AI: lambda: [peers.pydantic_ai_from_specs(s) for s in specs],
            LANGCHAIN: lambda: [peers.langchain_from_specs(s) for s in specs],
            PLAIN: lambda: [peers.records_from_specs(s, binary=True) for s in specs],
        },
    )

    dumps, loads = orjson.dumps, orjson.loads
    compare(
        "serialize to JSON",
        {
            CANISTERS: lambda: [canisters.to_json(c) for c in ours],
            PYDANTIC_AI: lambda: [adapter.dump_json(m) for m in theirs_pa],
            LANGCHAIN: lambda: [dumps(lc.messages_to_dict(m)) for m in theirs_lc],
            PLAIN: lambda: [dumps(r) for r in plain],
        },
    )

    # JSONL: one message per line. pydantic-ai and LangChain have no JSONL of
    # their own; each writes one JSON document per message of theirs.
    def jsonl(lines: list[bytes]) -> bytes:
        return b"\n".join(lines) + b"\n"

    compare(
        "serialize to JSONL",
        {
            CANISTERS: lambda: [canisters.to_jsonl(c) for c in ours],
            PYDANTIC_AI: lambda: [
                jsonl([one_adapter.dump_json(x) for x in m]) for m in theirs_pa
            ],
            LANGCHAIN: lambda: [
                jsonl([dumps(d) for d in lc.messages_to_dict(m)]) for m in theirs_lc
            ],
            PLAIN: lambda: [jsonl([dumps(x) for x in r]) for r in plain],
        },
    )

    ours_json = [canisters.to_json(c) for c in ours]
    pa_json = [adapter.dump_json(m) for m in theirs_pa]
    lc_json = [dumps(lc.messages_to_dict(m)) for m in theirs_lc]
    plain_json = [dumps(r) for r in plain]
    assert [canisters.from_json(t) for t in ours_json] == ours
    compare(
        "parse JSON to typed objects",
        {
            CANISTERS: lambda: [canisters.from_json(t) for t in ours_json],
            PYDANTIC_AI: lambda: [adapter.validate_json(t) for t in pa_json],
            LANGCHAIN: lambda: [lc.messages_from_dict(loads(t)) for t in lc_json],
            PLAIN: lambda: [loads(t) for t in plain_json],
        },
    )
    for texts in (ours_json, pa_json, lc_json, plain_json):
        texts.clear()  # the media corpus's are large

    ours_jsonl = [canisters.to_jsonl(c) for c in ours]
    pa_jsonl = [jsonl([one_adapter.dump_json(x) for x in m]) for m in theirs_pa]
    lc_jsonl = [jsonl([dumps(d) for d in lc.messages_to_dict(m)]) for m in theirs_lc]
    plain_jsonl = [jsonl([dumps(x) for x in r]) for r in plain]
    assert [canisters.from_jsonl(t) for t in ours_jsonl] == ours
    compare(
        "parse JSONL to typed objects",
        {
            CANISTERS: lambda: [canisters.from_jsonl(t) for t in ours_jsonl],
            PYDANTIC_AI: lambda: [
                [one_adapter.validate_json(line) for line in t.splitlines()]
                for t in pa_jsonl
            ],
            LANGCHAIN: lambda: [
                lc.messages_from_dict([loads(line) for line in t.splitlines()])
                for t in lc_jsonl
            ],
            PLAIN: lambda: [[loads(x) for x in t.splitlines()] for t in plain_jsonl],
        },
    )
    for texts in (ours_jsonl, pa_jsonl, lc_jsonl, plain_jsonl):
        texts.clear()

    mappers = _pydantic_ai_mappers()
    try:  # LangChain's Anthropic mapping lives in langchain-anthropic
        from langchain_anthropic.chat_models import (
            _format_messages as anthropic_mapping,
        )
    except ImportError:
        anthropic_mapping = None
    hand_written = {
        "openai-chat": peers.openai_from_records,
        "anthropic": peers.anthropic_from_records,
    }
    rendered: dict[str, list[dict[str, Any]]] = {}
    checks: dict[str, bool] = {}
    warnings.simplefilter("ignore", providers.FidelityWarning)
    for name in PROVIDERS:
        normalizer = providers.get(name)
        options = RENDER_OPTIONS.get(name, {})
        rendered[name] = [normalizer.render_request(c, **options) for c in ours]
        functions: dict[str, Callable[[], Any]] = {
            CANISTERS: lambda: [normalizer.render_request(c, **options) for c in ours]
        }
        if name == "openai-chat":
            functions[LANGCHAIN] = lambda: [
                lc.convert_to_openai_messages(m) for m in theirs_lc
            ]
        if name == "anthropic" and anthropic_mapping is not None:
            functions[LANGCHAIN] = lambda: [
                anthropic_mapping(m, model="claude-sonnet-4-5") for m in theirs_lc
            ]
        if mappers is not None and name in ("openai-chat", "anthropic"):
            mapper = mappers[0] if name == "openai-chat" else mappers[1]
            functions[PYDANTIC_AI] = lambda: mapper(theirs_pa)
        if name in hand_written:
            mapping = hand_written[name]
            functions[HAND] = lambda: [mapping(r) for r in binary]
            checks[name] = [mapping(r) for r in binary] == rendered[name]
        compare(f"render to {name}", functions)

    openai_bodies = rendered["openai-chat"]
    for name in PROVIDERS:
        normalizer = providers.get(name)
        bodies = rendered.pop(name)
        functions = {CANISTERS: lambda: [normalizer.parse_request(b) for b in bodies]}
        if name in ("openai-chat", "anthropic"):
            # convert_to_messages reads OpenAI-style dicts: it is given the
            # same conversations' OpenAI chat messages in both cases.
            functions[LANGCHAIN] = lambda: [
                lc.convert_to_messages(b["messages"]) for b in openai_bodies
            ]
        if name == "openai-chat":
            functions[HAND] = lambda: [peers.parse_openai_records(b) for b in bodies]
        compare(f"parse from {name}", functions)
    return {"hand_written_output_equal": checks}


def measure_memory(specs: list[list[corpus.Spec]], label: str) -> dict[str, Any]:
    """Bytes held per message by the typed objects each library parses from JSON."""
    from langchain_core import messages as lc
    from pydantic_ai.messages import ModelMessagesTypeAdapter as adapter

    count = corpus.message_count(specs)
    texts = {
        CANISTERS: [canisters.to_json(peers.canisters_from_specs(s)) for s in specs],
        PYDANTIC_AI: [
            adapter.dump_json(peers.pydantic_ai_from_specs(s)) for s in specs
        ],
        LANGCHAIN: [
            orjson.dumps(lc.messages_to_dict(peers.langchain_from_specs(s)))
            for s in specs
        ],
        PLAIN: [orjson.dumps(peers.records_from_specs(s, binary=False)) for s in specs],
    }
    parse: dict[str, Callable[[Any], Any]] = {
        CANISTERS: canisters.from_json,
        PYDANTIC_AI: adapter.validate_json,
        LANGCHAIN: lambda text: lc.messages_from_dict(orjson.loads(text)),
        PLAIN: orjson.loads,
    }
    for library in parse:  # warm caches so they are not counted
        parse[library](texts[library][0])
    figures: dict[str, Any] = {}
    for library, function in parse.items():
        gc.collect()
        tracemalloc.start()
        before = tracemalloc.get_traced_memory()[0]
        held = [function(text) for text in texts[library]]
        gc.collect()
        after = tracemalloc.get_traced_memory()[0]
        tracemalloc.stop()
        figures[library] = (after - before) / count
        del held
    print(
        f"\nmemory held per message [{label}] "
        "(typed objects parsed from JSON, tracemalloc)"
    )
    for library, size in figures.items():
        ratio = figures[CANISTERS] / size
        versus = "" if library == CANISTERS else f"canisters {ratio:5.2f}x"
        print(f"  {library:<22} {size:>10,.0f} B   {versus}")
    return figures


def measure_store(
    specs: list[list[corpus.Spec]], fsync_count: int, timer: Timer, results: Results
) -> None:
    """Append one canister at a time, then load; file and SQLite backends."""
    ours = [peers.canisters_from_specs(s) for s in specs]
    plain = [peers.records_from_specs(s, binary=False) for s in specs]
    count = corpus.message_count(specs)
    root = Path(tempfile.mkdtemp(prefix="canisters-bench-"))
    runs = iter(range(10**6))
    state: dict[str, Any] = {}

    def fresh(kind: str, durability: str) -> Callable[[], None]:
        def setup() -> None:
            where = root / f"{kind}-{next(runs)}"
            # An absolute path gives sqlite://// (four slashes), as open_store wants.
            location = f"sqlite:///{where}.db" if kind == "sqlite" else str(where)
            state["store"] = storage.open_store(location, durability=durability)

        return setup

    def append_all(conversations: list[canisters.Conversation]) -> Callable[[], None]:
        def run() -> None:
            store = state["store"]
            for index, conversation in enumerate(conversations):
                for canister in conversation:
                    store.append(f"c{index}", canister)

        return run

    def plain_jsonl(
        sync: bool, records: list[list[dict[str, Any]]]
    ) -> Callable[[], None]:
        def run() -> None:
            for index, conversation in enumerate(records):
                path = root / f"plain-{next(runs)}-{index}.jsonl"
                with open(path, "ab") as file:
                    for record in conversation:
                        file.write(orjson.dumps(record) + b"\n")
                        file.flush()
                        if sync:
                            os.fsync(file.fileno())

        return run

    def plain_sqlite(
        sync: bool, records: list[list[dict[str, Any]]]
    ) -> Callable[[], None]:
        def run() -> None:
            db = sqlite3.connect(root / f"plain-{next(runs)}.db", isolation_level=None)
            db.execute("PRAGMA journal_mode=WAL")
            db.execute(f"PRAGMA synchronous={'FULL' if sync else 'NORMAL'}")
            db.execute("CREATE TABLE m (c TEXT, n INTEGER, record BLOB)")
            for index, conversation in enumerate(records):
                for number, record in enumerate(conversation):
                    db.execute("BEGIN IMMEDIATE")
                    db.execute(
                        "INSERT INTO m VALUES (?, ?, ?)",
                        (f"c{index}", number, orjson.dumps(record)),
                    )
                    db.execute("COMMIT")
            state["db"] = db

        return run

    # The fsync runs use a prefix of the corpus: each append waits for the disk.
    few_ours, few_plain, few = [], [], 0
    for conversation, records in zip(ours, plain, strict=True):
        if few >= fsync_count:
            break
        few_ours.append(conversation)
        few_plain.append(records)
        few += len(conversation)

    for kind in ("file", "sqlite"):
        operation = f"store append, {kind}, flush"
        results.add(
            operation,
            CANISTERS,
            timer.best(append_all(ours), fresh(kind, "flush")),
            count,
        )
        store = state["store"]
        loaded = [store.load(f"c{index}") for index in range(len(ours))]
        assert loaded == ours, f"{kind} store did not give back what was appended"
        if kind == "file":
            results.add(operation, PLAIN, timer.best(plain_jsonl(False, plain)), count)
        else:
            results.add(operation, PLAIN, timer.best(plain_sqlite(False, plain)), count)
        results.print(operation)

        operation = f"store load, {kind}"
        results.add(
            operation,
            CANISTERS,
            timer.best(lambda: [store.load(f"c{index}") for index in range(len(ours))]),
            count,
        )
        if kind == "file":
            paths = []
            for index, records in enumerate(plain):
                path = root / f"load-{index}.jsonl"
                path.write_bytes(b"".join(orjson.dumps(r) + b"\n" for r in records))
                paths.append(path)

            def load_plain() -> None:
                for path in paths:
                    typed = [
                        structure_canister(orjson.loads(line))
                        for line in path.read_bytes().splitlines()
                    ]
                    canisters.Conversation(typed)

            results.add(
                operation, "plain JSONL + structure", timer.best(load_plain), count
            )
        else:
            plain_sqlite(False, plain)()
            db = state["db"]

            def load_rows() -> None:
                for index in range(len(plain)):
                    rows = db.execute(
                        "SELECT record FROM m WHERE c = ? ORDER BY n", (f"c{index}",)
                    ).fetchall()
                    canisters.Conversation(
                        [structure_canister(orjson.loads(r[0])) for r in rows]
                    )

            results.add(
                operation, "plain SQLite + structure", timer.best(load_rows), count
            )
        results.print(operation)
        store.close()

        operation = f"store append, {kind}, fsync"
        quick = Timer(2, 0.0)
        results.add(
            operation,
            CANISTERS,
            quick.best(append_all(few_ours), fresh(kind, "fsync")),
            few,
        )
        state["store"].close()
        if kind == "file":
            results.add(operation, PLAIN, quick.best(plain_jsonl(True, few_plain)), few)
        else:
            results.add(
                operation, PLAIN, quick.best(plain_sqlite(True, few_plain)), few
            )
        results.print(operation)
    measure_postgres(results, 100 if fsync_count <= 100 else 300)


def measure_postgres(results: Results, appends: int) -> None:
    """PostgreSQL appends of one canister and of 20 against the same transaction
    with psycopg alone (:mod:`pgappend`), on a server started for the run
    (left out without pgserver)."""
    import pgappend
    import storage as storage_figures

    with storage_figures._postgres() as server:
        if server is None:
            print("\npostgres: left out (pip install pgserver to include it)")
            return
        found = pgappend.measure(server, appends)
    for size, figures in found.items():
        operation = (
            "store append, postgres, flush"
            if size == 1
            else f"store append, postgres, {size} at once"
        )
        results.add(operation, CANISTERS, figures["canisters"], size)
        results.add(operation, FLOOR, figures["floor"], size)
        results.print(operation)


def measure_requests(repeat: int) -> dict[str, Any]:
    """Whole requests (:mod:`whole_requests`): same-format round trips against
    the conversation-only ones, and translation against LiteLLM."""
    import whole_requests

    print()
    return {
        "same_format": whole_requests.same_format(repeat),
        "translation": whole_requests.translation(repeat),
    }


def measure_scaling(sizes: list[int], timer: Timer, results: Results) -> None:
    """Serialize and parse one conversation of each size, with each library."""
    from langchain_core import messages as lc
    from pydantic_ai.messages import ModelMessagesTypeAdapter as adapter

    for size in sizes:
        specs = corpus.conversation(size, seed=size)
        loops = max(1, 20_000 // size)
        count = size * loops
        ours = peers.canisters_from_specs(specs)
        pa = peers.pydantic_ai_from_specs(specs)
        lcm = peers.langchain_from_specs(specs)
        ours_json, pa_json = canisters.to_json(ours), adapter.dump_json(pa)
        lc_json = orjson.dumps(lc.messages_to_dict(lcm))
        few = Timer(min(timer.repeat, 3), 0.0, timer.clock)
        dumps, loads = orjson.dumps, orjson.loads
        results.compare(
            f"serialize, one conversation of {size:,}",
            count,
            few,
            {
                CANISTERS: lambda: [canisters.to_json(ours) for _ in range(loops)],
                PYDANTIC_AI: lambda: [adapter.dump_json(pa) for _ in range(loops)],
                LANGCHAIN: lambda: [
                    dumps(lc.messages_to_dict(lcm)) for _ in range(loops)
                ],
            },
        )
        results.compare(
            f"parse, one conversation of {size:,}",
            count,
            few,
            {
                CANISTERS: lambda: [
                    canisters.from_json(ours_json) for _ in range(loops)
                ],
                PYDANTIC_AI: lambda: [
                    adapter.validate_json(pa_json) for _ in range(loops)
                ],
                LANGCHAIN: lambda: [
                    lc.messages_from_dict(loads(lc_json)) for _ in range(loops)
                ],
            },
        )


# --------------------------------------------------------------------------- #
# Targets and the report


def targets(
    results: Results,
    labels: list[str],
    memory: dict[str, dict[str, float]],
    imports: dict[str, Any] | None,
    requests: dict[str, Any] | None = None,
) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """Check the project's speed targets against this run's figures on the
    corpora they are set for (:data:`TARGETED`); on the others, report the same
    ratios with no target. Return the checks and the reported ratios."""
    checks: list[dict[str, Any]] = []
    reported: list[dict[str, Any]] = []

    def check(name: str, value: float, goal: str, met: bool) -> None:
        label = name[1 : name.index("]")] if name.startswith("[") else None
        if label is None or label in TARGETED:
            checks.append({"target": name, "value": value, "goal": goal, "met": met})
        else:
            reported.append({"ratio": name, "value": value})

    def at_least(name: str, operation: str, library: str, goal: float) -> None:
        value = results.ratio(operation, library)
        if value is not None:
            check(name, value, f">= {goal:.2f}x", value >= goal)

    for label in labels:
        for verb, operation in (
            ("serialize", "serialize to JSON"),
            ("serialize", "serialize to JSONL"),
            ("parse", "parse JSON to typed objects"),
            ("parse", "parse JSONL to typed objects"),
        ):
            kind = "JSONL" if "JSONL" in operation else "JSON"
            name = f"[{label}] {verb} {kind} vs"
            operation = f"{operation} [{label}]"
            at_least(f"{name} pydantic-ai", operation, PYDANTIC_AI, 4.0)
            at_least(
                f"{name} LangChain",
                operation,
                LANGCHAIN,
                1.5 if verb == "serialize" else 2.5,
            )
        for provider in ("openai-chat", "anthropic"):
            operation = f"render to {provider} [{label}]"
            name = f"[{label}] render {provider} vs"
            at_least(f"{name} LangChain", operation, LANGCHAIN, 3.0)
            at_least(f"{name} pydantic-ai", operation, PYDANTIC_AI, 3.0)
            at_least(f"{name} hand-written", operation, HAND, 1 / 1.2)
        for provider in ("openai-chat", "anthropic"):
            operation = f"parse from {provider} [{label}]"
            name = f"[{label}] parse {provider} vs LangChain"
            at_least(name, operation, LANGCHAIN, 1.5)
        if label in memory:
            figures = memory[label]
            ratio = figures[CANISTERS] / figures[PYDANTIC_AI]
            check(f"[{label}] memory vs pydantic-ai", ratio, "<= 0.70x", ratio <= 0.7)
    if "media" in labels:
        for operation in results.operations:
            if operation.endswith(" [media]"):
                value = results.ratio(operation, LANGCHAIN)
                if value is not None:
                    name = f"media: {operation[: -len(' [media]')]} vs LangChain"
                    check(name, value, f">= {MEDIA_GOAL:.2f}x", value >= MEDIA_GOAL)
        figures = memory.get("media")
        if figures is not None:
            ratio = figures[CANISTERS] / figures[LANGCHAIN]
            check("media: memory vs LangChain", ratio, "<= 1.00x", ratio <= 1.0)
    for operation in results.operations:
        if operation.startswith("store append, postgres"):
            value = results.ratio(operation, FLOOR)
            if value is not None:
                name = operation.replace("store append, ", "") + " vs psycopg alone"
                goal = POSTGRES_GOAL
                check(name, value, f">= {goal:.2f}x", value >= goal)
    for entry in (requests or {}).get("same_format", []):
        value = entry["whole"] / entry["conversation"]
        name = f"whole/conversation, {entry['format']} {entry['workload']}"
        check(name, value, f"<= {WHOLE_GOAL:.2f}x", value <= WHOLE_GOAL)
    for entry in (requests or {}).get("translation", []):
        value = entry["litellm"] / entry["canisters"]
        route = (entry["source"], entry["target"])
        goal = LITELLM_FAR if route in FAR_ROUTES else LITELLM_GOAL
        name = f"whole request {route[0]} -> {route[1]} vs LiteLLM"
        check(name, value, f">= {goal:.2f}x", value >= goal)
    if imports is not None:
        extra = imports["extra_cpu_seconds"] * 1e3
        check("import canisters, extra CPU ms", extra, "<= 20 ms", extra <= 20)
        sdks = imports["canisters"]["sdk_modules"]
        check("no SDK imported", len(sdks), "0 modules", not sdks)
    if checks:
        print("\ntargets (canisters as a multiple of each peer)")
    for entry in checks:
        mark = "met" if entry["met"] else "NOT MET"
        target, value, goal = entry["target"], entry["value"], entry["goal"]
        print(f"  {target:<58} {value:8.2f}   goal {goal:<10} {mark}")
    if reported:
        print("\nreported, no target (canisters as a multiple of each peer)")
    for entry in reported:
        print(f"  {entry['ratio']:<44} {entry['value']:8.2f}")
    return checks, reported


def machine() -> dict[str, Any]:
    cpu = platform.processor() or platform.machine()
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    versions = {}
    for package in (
        "canisters",
        "attrs",
        "cattrs",
        "orjson",
        "pydantic",
        "pydantic-ai-slim",
        "langchain-core",
        "langchain-anthropic",
    ):
        try:
            versions[package] = importlib.metadata.version(package)
        except importlib.metadata.PackageNotFoundError:
            versions[package] = None
    return {
        "cpu": cpu,
        "cpus": os.cpu_count(),
        "python": platform.python_version(),
        "implementation": platform.python_implementation(),
        "system": f"{platform.system()} {platform.release()}",
        "versions": versions,
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--quick", action="store_true", help="small corpus, few repeats"
    )
    parser.add_argument(
        "--messages",
        type=int,
        help=f"messages in each corpus (the media corpus holds 1/{MEDIA_SHARE} of "
        "them)",
    )
    parser.add_argument(
        "--corpus",
        default="agent,chat,media",
        help="comma-separated corpora for core and memory: agent, chat, media",
    )
    parser.add_argument("--repeat", type=int, help="minimum repeats per measure")
    parser.add_argument("--seed", type=int, default=0, help="corpus seed")
    parser.add_argument(
        "--clock",
        choices=("wall", "cpu"),
        default="wall",
        help="what the core and scaling sections time: wall time, or this "
        "process's CPU time (less disturbed by other processes on a shared "
        "machine)",
    )
    parser.add_argument(
        "--only",
        default="import,core,memory,store,requests,scaling",
        help="comma-separated sections: import, core, memory, store, requests, scaling",
    )
    parser.add_argument(
        "--output", type=Path, default=HERE / "results", help="results directory"
    )
    parser.add_argument(
        "--report",
        type=Path,
        metavar="FILE",
        help="also write the figures as the reStructuredText tables the "
        "documentation includes (see report.py)",
    )
    arguments = parser.parse_args(argv)
    quick = arguments.quick
    messages = arguments.messages or (3_000 if quick else 10_000)
    repeat = arguments.repeat or (3 if quick else 7)
    # The store section waits for the disk: it is always timed on the wall clock.
    clock = time.process_time if arguments.clock == "cpu" else time.perf_counter
    timer = Timer(repeat, 0.3 if quick else 1.5, clock)
    sections = set(arguments.only.split(","))
    sizes = [10, 100, 1_000, 10_000] + ([] if quick else [100_000])

    info = machine()
    print(
        f"canisters benchmarks: {info['cpu']}, {info['cpus']} CPUs, "
        f"Python {info['python']}"
    )
    print("versions:", ", ".join(f"{k} {v}" for k, v in info["versions"].items()))
    labels = arguments.corpus.split(",")
    corpora = {
        label: corpus.CORPORA[label](
            max(2, messages // MEDIA_SHARE) if label == "media" else messages,
            arguments.seed,
        )
        for label in labels
    }
    for label, specs in corpora.items():
        payload = corpus.payload_bytes(specs)
        print(
            f"corpus [{label}]: {corpus.message_count(specs):,} messages in "
            f"{len(specs)} conversations (seed {arguments.seed}), "
            f"{payload / 1e6:,.1f} MB of inline media"
            + (f" (--messages / {MEDIA_SHARE})" if label == "media" else "")
        )
    print(f"best of >= {repeat} runs")

    results = Results()
    report: dict[str, Any] = {
        "command": " ".join(
            [
                "python .auxiliary/benchmarks/run.py",
                *(sys.argv[1:] if argv is None else argv),
            ]
        ),
        "argv": sys.argv[1:] if argv is None else argv,
        "date": datetime.now(timezone.utc).isoformat(timespec="seconds"),
        "machine": info,
        "clock": arguments.clock,
        "quick": quick,
        "repeat": repeat,
        "corpora": {
            label: {
                "messages": corpus.message_count(specs),
                "conversations": len(specs),
                "seed": arguments.seed,
                "payload_bytes": corpus.payload_bytes(specs),
            }
            for label, specs in corpora.items()
        },
    }
    imports: dict[str, Any] = {}
    memory: dict[str, dict[str, float]] = {}
    if "import" in sections:
        measure_import(imports, 15 if not quick else 7)
        report["import"] = imports["import"]
    if "core" in sections:
        report["checks"] = {
            label: measure_core(specs, timer, results, label)
            for label, specs in corpora.items()
        }
    if "memory" in sections:
        memory = {
            label: measure_memory(specs, label) for label, specs in corpora.items()
        }
        report["memory_bytes_per_message"] = memory
    if "store" in sections:
        store_specs = corpus.corpus(1_000 if quick else 5_000, arguments.seed + 1)
        measure_store(
            store_specs, 100 if quick else 300, Timer(min(repeat, 3), 0.0), results
        )
    requests: dict[str, Any] | None = None
    if "requests" in sections:
        requests = measure_requests(repeat)
        report["requests"] = requests
    if "scaling" in sections:
        measure_scaling(sizes, timer, results)
    report["operations"] = results.operations
    if "core" in sections or "store" in sections:  # the store's floors too
        report["targets"], report["reported"] = targets(
            results, labels, memory, imports.get("import"), requests
        )

    arguments.output.mkdir(parents=True, exist_ok=True)
    stamp = datetime.now(timezone.utc).strftime("%Y%m%dT%H%M%SZ")
    text = json.dumps(report, indent=2)
    (arguments.output / f"results-{stamp}.json").write_text(text)
    (arguments.output / "latest.json").write_text(text)
    print(f"\nresults written to {arguments.output / 'latest.json'}")
    if arguments.report is not None:
        if str(HERE) not in sys.path:  # whole_requests takes it out (see there)
            sys.path.insert(0, str(HERE))
        import report as tables

        tables.write(report, arguments.report)
        print(f"tables written to {arguments.report} (and its .json)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
