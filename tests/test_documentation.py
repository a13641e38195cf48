"""The documentation's examples run as written."""

from __future__ import annotations

import importlib.util
import json
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

import canisters

ROOT = Path(__file__).resolve().parent.parent
DOCS = ROOT / "documentation"
BLOCK = re.compile(r"^\.\. code-block:: python\n\n((?:(?:   .*)?\n)+)", re.MULTILINE)


def _blocks(page: Path) -> list[str]:
    return [
        "\n".join(line[3:] for line in block.splitlines())
        for block in BLOCK.findall(page.read_text(encoding="utf-8"))
    ]


@pytest.mark.parametrize(
    "page", ["guide.rst", "interop.rst", "streaming.rst", "viewing.rst"]
)
def test_page_examples_run_in_order(page: str) -> None:
    blocks = _blocks(DOCS / page)
    assert blocks, f"{page} has no python examples"
    namespace: dict[str, object] = {"__name__": f"docs_{page}"}
    for number, block in enumerate(blocks, 1):
        try:
            exec(compile(block, f"{page} block {number}", "exec"), namespace)
        except Exception as error:  # pragma: no cover - the message is the point
            pytest.fail(f"{page} block {number} failed: {error!r}\n{block}")


def test_readme_taste_runs() -> None:
    for block in _blocks(ROOT / "README.rst"):
        exec(compile(block, "README.rst", "exec"), {})


def _report_module() -> Any:
    path = ROOT / ".auxiliary" / "benchmarks" / "report.py"
    spec = importlib.util.spec_from_file_location("benchmark_report", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_performance_figures_are_the_report_of_the_saved_run() -> None:
    # The page shows what report.py writes from the run saved beside the tables,
    # and the README's headline is that run's too: neither is edited by hand.
    report = _report_module()
    figures = DOCS / "benchmark-figures.inc"
    results = json.loads(figures.with_suffix(".json").read_text(encoding="utf-8"))
    assert figures.read_text(encoding="utf-8") == report.render(results)
    assert ".. include:: benchmark-figures.inc" in (DOCS / "performance.rst").read_text(
        encoding="utf-8"
    )
    readme = (ROOT / "README.rst").read_text(encoding="utf-8")
    headline = report.MARKERS.search(readme)
    assert headline is not None
    assert headline[2].strip() == report.headline(results)


def test_multimodal_example_prints_a_valid_conversation() -> None:
    out = subprocess.run(
        [sys.executable, str(DOCS / "examples" / "multimodal.py")],
        capture_output=True,
        text=True,
        check=True,
    )
    document = json.loads(out.stdout)
    conversation = canisters.from_json(json.dumps(document))
    assert isinstance(conversation, canisters.Conversation)
    canisters.validate(conversation)
    roles = [c.role for c in conversation]
    assert canisters.Role.Invocation in roles and canisters.Role.Result in roles
    assert any(
        part.type == "image" for c in conversation for part in getattr(c, "content", ())
    )


def test_request_matrix_is_the_scripts_output() -> None:
    # The providers page's table of whole requests across formats is what
    # request_matrix.py writes for the normalizers registered now: run the
    # script again when one changes.
    path = ROOT / ".auxiliary" / "scripts" / "request_matrix.py"
    spec = importlib.util.spec_from_file_location("request_matrix", path)
    assert spec is not None and spec.loader is not None
    matrix = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(matrix)
    committed = (DOCS / "request-matrix.inc").read_text(encoding="utf-8")
    assert committed == matrix.render()
    assert ".. include:: request-matrix.inc" in (DOCS / "providers.rst").read_text(
        encoding="utf-8"
    )
    for name in matrix.whole_request_providers():
        assert f"to {name}" in committed
