"""Print a results file of :mod:`run` as reStructuredText tables.

Used to refresh ``documentation/performance.rst``::

    python .auxiliary/benchmarks/report.py [.auxiliary/benchmarks/results/latest.json]
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent


def _table(header: list[str], rows: list[list[str]]) -> str:
    widths = [max(len(row[i]) for row in [header, *rows]) for i in range(len(header))]
    rule = "  ".join("=" * width for width in widths)

    def line(row: list[str]) -> str:
        cells = zip(row, widths, strict=True)
        return "  ".join(cell.ljust(width) for cell, width in cells).rstrip()

    return "\n".join([rule, line(header), rule, *map(line, rows), rule])


def operations(report: dict[str, Any]) -> str:
    """One row per operation: messages per second, and canisters' multiple of
    each peer's in parentheses."""
    columns = ["canisters", "pydantic-ai", "langchain"]
    rows = []
    for operation, libraries in report["operations"].items():
        ours = libraries["canisters"]["messages_per_second"]
        baselines = [name for name in libraries if name not in columns]
        row = [operation]
        for library in [*columns, *baselines[:1]]:
            entry = libraries.get(library)
            if entry is None:
                row.append("--")
                continue
            rate = entry["messages_per_second"]
            cell = f"{rate:,.0f}"
            if library != "canisters":
                cell += f" ({ours / rate:.2f}x)"
            if library in baselines:
                cell += f" {library}"
            row.append(cell)
        rows.append(row if baselines else [*row, "--"])
    header = ["operation", "canisters", "pydantic-ai", "LangChain", "baseline"]
    return _table(header, rows)


def targets(report: dict[str, Any]) -> str:
    rows = [
        [
            check["target"],
            check["goal"].replace("0.7692307692307692", "0.77"),
            f"{check['value']:.2f}",
            "met" if check["met"] else "not met",
        ]
        for check in report.get("targets", ())
    ]
    return _table(["target", "goal", "measured", ""], rows)


def reported(report: dict[str, Any]) -> str:
    """The same ratios on the corpora the issue sets no target for (media)."""
    rows = [[entry["ratio"], f"{entry['value']:.2f}"] for entry in report["reported"]]
    return _table(["reported, no target", "measured"], rows)


def main() -> int:
    path = Path(sys.argv[1]) if len(sys.argv) > 1 else HERE / "results/latest.json"
    report = json.loads(path.read_text())
    machine = report["machine"]
    versions = ", ".join(
        f"{name} {version}" for name, version in machine["versions"].items()
    )
    corpora = report.get("corpora") or {"agent": report["corpus"]}
    described = "; ".join(
        f"[{label}] {corpus['messages']:,} messages in {corpus['conversations']} "
        f"conversations (seed {corpus['seed']}"
        + (
            f", {corpus['payload_bytes'] / 1e6:,.1f} MB of inline media"
            if corpus.get("payload_bytes")
            else ""
        )
        + ")"
        for label, corpus in corpora.items()
    )
    print(
        f"Measured {report['date'][:10]} on an {machine['cpu']} "
        f"({machine['cpus']} CPUs), {machine['implementation']} {machine['python']} "
        f"on {machine['system'].split()[0]}, with {versions}; corpora: "
        f"{described}; command: ``{report['command']}``.\n"
    )
    if report.get("targets"):
        print(targets(report), end="\n\n")
    if report.get("reported"):
        print(reported(report), end="\n\n")
    memory = report.get("memory_bytes_per_message", {})
    if memory and not isinstance(next(iter(memory.values())), dict):
        memory = {"agent": memory}  # a results file from before the chat corpus
    if memory:
        labels = list(memory)
        libraries = list(memory[labels[0]])
        print(
            _table(
                ["library", *(f"bytes per message [{label}]" for label in labels)],
                [
                    [library, *(f"{memory[label][library]:,.0f}" for label in labels)]
                    for library in libraries
                ],
            ),
            end="\n\n",
        )
    imports = report.get("import")
    if imports:
        print(
            _table(
                ["import", "wall ms", "CPU ms"],
                [
                    [
                        shown,
                        f"{imports[label]['seconds'] * 1e3:.1f}",
                        f"{imports[label]['cpu_seconds'] * 1e3:.1f}",
                    ]
                    for label, shown in (
                        ("attrs, cattrs", "attrs, cattrs"),
                        ("canisters", "canisters"),
                        ("canisters alone", "canisters, after attrs and cattrs"),
                    )
                    if label in imports
                ],
            ),
            end="\n\n",
        )
    print(operations(report))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
