"""Write the figures of one benchmark run as the tables the documentation includes.

Run from the repository root::

    python .auxiliary/benchmarks/report.py              # print the tables
    python .auxiliary/benchmarks/report.py \\
        --output documentation/benchmark-figures.inc --readme README.rst
    python .auxiliary/benchmarks/report.py RESULTS.json --output FILE

It reads a results file of :mod:`run` (``.auxiliary/benchmarks/results/latest.json``
unless one is named) and writes reStructuredText: the machine, the versions and the
command of the run, then its tables. ``run.py --report FILE`` writes the same file at
the end of a run; both also write the results beside it (the same name ending in
``.json``), and a test holds the tables and the README's headline to them.
``documentation/performance.rst`` includes that file, so the page shows the last
run written to it and nothing else. ``--readme FILE`` also rewrites
the headline figure between the ``benchmark-headline`` comments of that file.
"""

from __future__ import annotations

import argparse
import json
import re
from collections.abc import Sequence
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent.parent

CANISTERS, PYDANTIC_AI, LANGCHAIN = "canisters", "pydantic-ai", "langchain"
BASELINES = ("plain orjson/dicts", "hand-written dicts")
NAMES = {LANGCHAIN: "LangChain"}
CORE = (
    "construct from plain dicts",
    "serialize to JSON",
    "serialize to JSONL",
    "parse JSON to typed objects",
    "parse JSONL to typed objects",
    "render to openai-chat",
    "render to anthropic",
    "parse from openai-chat",
    "parse from anthropic",
)
OTHER_PROVIDERS = ("gemini", "ollama", "openai-responses")
# The headline: reading stored chat history back into typed objects.
HEADLINE = ("parse JSON to typed objects [chat]", PYDANTIC_AI)
MARKERS = re.compile(
    r"(\.\. benchmark-headline-start\n)(.*?)(\n\.\. benchmark-headline-end)", re.DOTALL
)


# --------------------------------------------------------------------------- #
# reStructuredText


def table(
    header: list[str], rows: list[list[str]], groups: Sequence[tuple[str, int]] = ()
) -> str:
    """A simple table; ``groups`` (``(title, columns)`` pairs covering every
    column) adds a header row whose titles span that many columns each."""
    widths = [max(len(row[i]) for row in [header, *rows]) for i in range(len(header))]
    spans, column = [], 0
    for title, span in groups:
        spans.append((title or "\\", column, span))
        column += span
    for title, start, span in spans:
        covered = sum(widths[start : start + span]) + 2 * (span - 1)
        widths[start + span - 1] += max(0, len(title) - covered)
    rule = "  ".join("=" * width for width in widths)

    def line(row: list[str]) -> str:
        cells = zip(row, widths, strict=True)
        return "  ".join(cell.ljust(width) for cell, width in cells).rstrip()

    head = []
    if spans:
        covers = [sum(widths[a : a + n]) + 2 * (n - 1) for _, a, n in spans]
        titles = (title for title, _, _ in spans)
        head = [
            "  ".join(t.ljust(w) for t, w in zip(titles, covers, strict=True)).rstrip(),
            "  ".join("-" * w for w in covers),
        ]
    return "\n".join([rule, *head, line(header), rule, *map(line, rows), rule])


def _ratio(value: float | None) -> str:
    return "--" if value is None else f"{value:.2f}x"


def _rate(value: float | None) -> str:
    return "--" if value is None else f"{value:,.0f}"


class Figures:
    """The operations of a results file, with canisters' multiple of each peer."""

    def __init__(self, report: dict[str, Any]) -> None:
        self.operations: dict[str, dict[str, dict[str, float]]] = report["operations"]

    def rate(self, operation: str, library: str) -> float | None:
        entry = self.operations.get(operation, {}).get(library)
        return None if entry is None else entry["messages_per_second"]

    def ratio(self, operation: str, library: str) -> float | None:
        ours, theirs = self.rate(operation, CANISTERS), self.rate(operation, library)
        return None if ours is None or theirs is None else ours / theirs

    def baseline(self, operation: str) -> float | None:
        for library in BASELINES:
            if library in self.operations.get(operation, {}):
                return self.ratio(operation, library)
        return None


def describe(report: dict[str, Any]) -> str:
    """The paragraph that says where, with what and how the figures were taken."""
    machine = report["machine"]
    versions = ", ".join(
        f"{name} {version}"
        for name, version in machine["versions"].items()
        if version is not None
    )
    argv = report.get("argv", [])
    quick = "--quick" in argv
    repeat = report.get("repeat") or (3 if quick else 7)
    corpora = report.get("corpora", {})
    sizes = "; ".join(
        f"{label}: {corpus['messages']:,} messages in {corpus['conversations']:,} "
        "conversations"
        + (
            f", {corpus['payload_bytes'] / 1e6:,.1f} MB of images"
            if corpus.get("payload_bytes", 0) >= 1e6
            else ""
        )
        for label, corpus in corpora.items()
    )
    clock = (
        "CPU time of the benchmark's process"
        if report.get("clock") == "cpu"
        else "wall-clock time"
    )
    mode = "quick mode (``--quick``)" if quick else "full mode"
    return (
        f"Measured {report['date'][:10]} in {mode} with ``{report['command']}``, "
        f"on an {machine['cpu']} ({machine['cpus']} CPUs, shared with other work), "
        f"{machine['implementation']} {machine['python']} on "
        f"{machine['system'].split()[0]}; {versions}. Corpora: {sizes}. Each figure "
        f"is the best of at least {repeat} interleaved rounds, timed on the {clock} "
        "(storage on the wall clock)."
    )


def core(figures: Figures, labels: list[str]) -> str:
    """canisters as a multiple of each peer, per operation and corpus."""
    header, groups = ["operation"], [("", 1)]
    for label in labels:
        header += ["pydantic-ai", "LangChain", "dicts"]
        groups.append((label, 3))
    rows = []
    for operation in CORE:
        if not any(f"{operation} [{label}]" in figures.operations for label in labels):
            continue
        row = [operation]
        for label in labels:
            name = f"{operation} [{label}]"
            row += [
                _ratio(figures.ratio(name, PYDANTIC_AI)),
                _ratio(figures.ratio(name, LANGCHAIN)),
                _ratio(figures.baseline(name)),
            ]
        rows.append(row)
    return table(header, rows, groups)


def rates(figures: Figures, labels: list[str]) -> str:
    """canisters' messages per second, every provider included."""
    operations = [
        *CORE,
        *(f"render to {provider}" for provider in OTHER_PROVIDERS),
        *(f"parse from {provider}" for provider in OTHER_PROVIDERS),
    ]
    rows = [
        [
            operation,
            *(
                _rate(figures.rate(f"{operation} [{label}]", CANISTERS))
                for label in labels
            ),
        ]
        for operation in operations
        if any(f"{operation} [{label}]" in figures.operations for label in labels)
    ]
    return table(["canisters, messages per second", *labels], rows)


def memory(report: dict[str, Any]) -> str | None:
    held = report.get("memory_bytes_per_message")
    if not held:
        return None
    labels = list(held)
    libraries = list(held[labels[0]])
    rows = [
        [
            NAMES.get(library, library),
            *(
                f"{held[label][library]:,.0f}"
                + (
                    ""
                    if library == CANISTERS
                    else f" ({held[label][CANISTERS] / held[label][library]:.2f}x)"
                )
                for label in labels
            ),
        ]
        for library in libraries
    ]
    return table(["bytes held per message", *labels], rows)


def imports(report: dict[str, Any]) -> str | None:
    figures = report.get("import")
    if not figures:
        return None
    rows = [
        [shown, f"{figures[label]['cpu_seconds'] * 1e3:.1f}"]
        for label, shown in (
            ("attrs, cattrs", "``import attrs, cattrs``"),
            ("canisters", "``import canisters``"),
            ("canisters alone", "``import canisters`` after attrs and cattrs"),
        )
        if label in figures
    ]
    sdks = figures["canisters"]["sdk_modules"]
    rows.append(["provider SDK modules loaded", ", ".join(sdks) if sdks else "none"])
    return table(["fresh process, from bytecode", "CPU ms"], rows)


def storage(figures: Figures) -> str | None:
    rows = []
    for operation, libraries in figures.operations.items():
        if not operation.startswith("store "):
            continue
        for library in libraries:
            if library != CANISTERS:
                rows.append(
                    [
                        operation,
                        _rate(figures.rate(operation, CANISTERS)),
                        library,
                        _rate(figures.rate(operation, library)),
                        _ratio(figures.ratio(operation, library)),
                    ]
                )
    if not rows:
        return None
    header = ["canisters appended", "canisters", "against", "msg/s", "ratio"]
    return table(header, rows)


def goals(report: dict[str, Any]) -> str | None:
    """Every ratio the project sets a goal for, media, whole requests and
    storage among them, with its goal and whether this run met it."""
    checks = report.get("targets") or []
    if not checks:
        return None
    rows = [
        [
            entry["target"],
            f"{entry['value']:.2f}" + ("x" if entry["goal"].endswith("x") else ""),
            entry["goal"],
            "met" if entry["met"] else "**not met**",
        ]
        for entry in checks
    ]
    return table(["ratio", "this run", "goal", "result"], rows)


def scaling(figures: Figures) -> str | None:
    sizes = [
        operation.rsplit(" ", 1)[1]
        for operation in figures.operations
        if operation.startswith("serialize, one conversation of ")
    ]
    if not sizes:
        return None
    rows = []
    for size in sizes:
        row = [size]
        for verb in ("serialize", "parse"):
            operation = f"{verb}, one conversation of {size}"
            row += [
                _rate(figures.rate(operation, CANISTERS)),
                _ratio(figures.ratio(operation, PYDANTIC_AI)),
                _ratio(figures.ratio(operation, LANGCHAIN)),
            ]
        rows.append(row)
    header = ["messages", *["msg/s", "pydantic-ai", "LangChain"] * 2]
    groups = [("", 1), ("serialize (to_json)", 3), ("parse (from_json)", 3)]
    return table(header, rows, groups)


def headline(report: dict[str, Any]) -> str | None:
    """One sentence: the headline ratio, the run and the command."""
    operation, library = HEADLINE
    value = Figures(report).ratio(operation, library)
    if value is None:
        return None
    return (
        f"Reading stored chat history back into typed objects "
        f"(``from_json``, chat corpus) runs at {value:.1f}x the speed of "
        f"pydantic-ai's ``ModelMessagesTypeAdapter.validate_json`` (run of "
        f"{report['date'][:10]}: ``{report['command']}``)."
    )


def render(report: dict[str, Any]) -> str:
    """The whole file the performance page includes."""
    figures = Figures(report)
    labels = list(report.get("corpora", {})) or ["agent"]
    parts = [
        ".. Written by .auxiliary/benchmarks/report.py from one run of "
        ".auxiliary/benchmarks/run.py.\n   Do not edit: run the benchmarks again.",
        describe(report),
        "**canisters' speed as a multiple of each peer's** (above 1.00x, canisters "
        "is faster; *dicts* is plain ``orjson`` on equivalent dicts, or the "
        "hand-written mapping for the provider rows):",
        core(figures, labels),
        "**canisters' throughput**, messages per second:",
        rates(figures, labels),
    ]
    for title, text in (
        (
            "**Memory** held by the typed objects parsed from JSON (smaller is "
            "better; canisters' size as a multiple of each library's):",
            memory(report),
        ),
        ("**Import time**, best of several fresh processes:", imports(report)),
        (
            "**Storage**, appending one canister at a time (PostgreSQL: one and "
            "20 per append) and loading back, against plain ``orjson`` lines in a "
            "file or rows in SQLite, and PostgreSQL's same transaction written with "
            "psycopg alone:",
            storage(figures),
        ),
        (
            "**Goals**: each ratio the project sets a goal for, in this run "
            "(canisters as a multiple of the peer or floor named; whole requests "
            "as whole over conversation-only time):",
            goals(report),
        ),
        (
            "**One long conversation**, serialized and parsed whole; canisters' "
            "messages per second and its multiple of each peer's:",
            scaling(figures),
        ),
    ):
        if text is not None:
            parts += [title, text]
    return "\n\n".join(parts) + "\n"


def write(report: dict[str, Any], path: Path) -> None:
    """Write the tables to ``path`` and the results they come from beside it
    (``path`` with the suffix ``.json``), so that a test can hold one to the
    other."""
    path.write_text(render(report), encoding="utf-8")
    path.with_suffix(".json").write_text(
        json.dumps(report, indent=1) + "\n", encoding="utf-8"
    )


def write_headline(report: dict[str, Any], path: Path) -> None:
    """Replace the text between the ``benchmark-headline`` comments of ``path``."""
    sentence = headline(report)
    text = path.read_text(encoding="utf-8")
    if sentence is None or not MARKERS.search(text):
        raise SystemExit(f"{path}: no benchmark-headline comments or no figure")
    path.write_text(
        MARKERS.sub(lambda m: m[1] + "\n" + sentence + "\n" + m[3], text),
        encoding="utf-8",
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "results",
        nargs="?",
        type=Path,
        default=HERE / "results/latest.json",
        help="a results file of run.py (default: results/latest.json)",
    )
    parser.add_argument("--output", type=Path, help="write the tables to this file")
    parser.add_argument(
        "--readme", type=Path, help="rewrite the headline figure in this file"
    )
    arguments = parser.parse_args(argv)
    report = json.loads(arguments.results.read_text(encoding="utf-8"))
    text = render(report)
    if arguments.output is None:
        print(text, end="")
    else:
        write(report, arguments.output)
        print(f"tables written to {arguments.output} (and its .json)")
    if arguments.readme is not None:
        write_headline(report, arguments.readme)
        print(f"headline written to {arguments.readme}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
