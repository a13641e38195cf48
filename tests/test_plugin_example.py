"""The example plugin (``tests/plugin_example``, the made-up "tiny" format) is
found through the ``canisters.providers`` entry point, passes the conformance
suite on its own corpus, and imports nothing private."""

from __future__ import annotations

import ast
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from canisters import (
    Conversation,
    Image,
    Invocation,
    Result,
    Text,
    UnsupportedContent,
    User,
    providers,
)
from canisters.providers.testing import Corpus, NormalizerConformance

PLUGIN = Path(__file__).parent / "plugin_example"
# What a plugin may import: the library's public modules and its own.
PUBLIC = ("canisters", "canisters.providers", "canisters.providers.kit")


@pytest.fixture
def installed() -> Iterator[None]:
    """The plugin's directory on ``sys.path``, as pip would put the installed
    package and its ``.dist-info``; the registry reads the entry points again."""
    sys.path.insert(0, str(PLUGIN))
    providers._reset_for_tests()
    try:
        yield
    finally:
        sys.path.remove(str(PLUGIN))
        for module in [m for m in sys.modules if m.partition(".")[0] == "tiny_format"]:
            del sys.modules[module]
        providers._reset_for_tests()


def corpus() -> Corpus:
    recorded = Corpus.from_directory(PLUGIN / "data", request_fields=("lines",))
    unknown = {k: v for k, v in recorded.requests.items() if "unknown" in k}
    return Corpus(
        requests=recorded.requests,
        responses=recorded.responses,
        errors=recorded.errors,
        streams=recorded.streams,
        unknown=unknown,
        request_fields=("lines",),
    )


class TestTinyPlugin(NormalizerConformance):
    @pytest.fixture
    def normalizer(self, installed: None) -> Any:
        return providers.get("tiny")

    @pytest.fixture(name="corpus")
    def corpus_fixture(self) -> Corpus:
        return corpus()


def test_the_entry_point_registers_the_plugin(installed: None) -> None:
    assert "tiny" in providers.names()
    normalizer = providers.get("tiny")
    assert type(normalizer).__name__ == "TinyNormalizer"
    assert isinstance(normalizer, providers.RequestNormalizer)
    assert isinstance(normalizer, providers.StreamingNormalizer)
    assert isinstance(normalizer, providers.ErrorNormalizer)
    assert providers.get("tiny") is normalizer


def test_the_corpus_feeds_every_check() -> None:
    found = corpus()
    counts = [len(found.requests), len(found.responses), len(found.errors)]
    assert counts == [3, 2, 2]
    assert len(found.streams) == 1 and len(found.unknown) == 1


def test_other_formats_render_to_the_plugin(installed: None) -> None:
    tiny = providers.get("tiny")
    chat = providers.get("openai-chat").parse_request(
        {
            "messages": [
                {"role": "system", "content": "Be brief."},
                {"role": "user", "content": "Hi"},
            ]
        }
    )
    assert tiny.render_request(chat) == {
        "lines": [
            {"role": "system", "text": "Be brief."},
            {"role": "user", "text": "Hi"},
        ]
    }
    call = Invocation("lookup", {"q": 1})
    rich = Conversation(
        [
            User((Text("see"), Image(url="https://example.com/a.png"))),
            call,
            Result(call.invocation_id, "lookup", "ok"),
        ]
    )
    with pytest.raises(UnsupportedContent):
        tiny.render_request(rich)
    report = providers.Report()
    with pytest.warns(providers.FidelityWarning):
        sent = tiny.render_request(rich, unsupported="drop", report=report)
    assert sent == {"lines": [{"role": "user", "text": "see"}]}
    assert len(report.events) == 3


def _imports(path: Path) -> Iterator[tuple[str, str]]:
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield alias.name, ""
        elif isinstance(node, ast.ImportFrom) and not node.level:
            for alias in node.names:
                yield node.module or "", alias.name


def test_the_plugin_imports_nothing_private() -> None:
    seen = set()
    for path in sorted((PLUGIN / "tiny_format").glob("*.py")):
        for module, name in _imports(path):
            seen.add(module)
            if module.partition(".")[0] == "canisters":
                assert module in PUBLIC, (path.name, module)
            assert not name.startswith("_") or name == "__future__", (path.name, name)
    assert "canisters.providers.kit" in seen
