"""Write documentation/request-matrix.inc: what each request field becomes from
each format to each other one.

Run: ``python .auxiliary/scripts/request_matrix.py`` (``--check`` only compares
with the committed file; ``-o FILE`` writes elsewhere). Generic over the
registered normalizers that read and write whole requests
(:class:`~canisters.providers.RequestNormalizer`): run it again when one is
added.

Each row is one neutral field, set alone on a sample request of one user
message (with two function tools for the tool rows). The request goes to each
source format as that format writes it (``render_full_request``), is read back
from there (``parse_full_request``, so the source's own spelling is what is
translated), and is rendered for each other format with
``unsupported="drop"``; the cell says what the report holds for the field:
*exact*, *approximated* (the rule), *dropped*, *synthesized* (the rule) or
*conflict* (the rule). *n/a*: the source format cannot say the field exactly
itself. The first table starts from the neutral request itself.
"""

from __future__ import annotations

import argparse
import sys
import warnings
from collections.abc import Callable
from pathlib import Path
from typing import Any

import attrs

from canisters import (
    CacheConfig,
    Generation,
    OutputFormat,
    ReasoningConfig,
    Request,
    Tool,
    ToolChoice,
    User,
    providers,
)

ROOT = Path(__file__).resolve().parents[2]
OUTPUT = ROOT / "documentation" / "request-matrix.inc"
NEUTRAL = "neutral"

WEATHER = {
    "type": "object",
    "properties": {"city": {"type": "string"}},
    "required": ["city"],
}
STRICT = {**WEATHER, "additionalProperties": False}
TOOLS = (
    Tool("get_weather", "The weather in a city.", WEATHER),
    Tool("get_time", "The time in a city.", WEATHER),
)
BASE = Request([User("What is the weather in Paris?")], model="sample-model")

Row = tuple[str, str, Callable[[Request], Request]]


def _with(**changes: Any) -> Callable[[Request], Request]:
    return lambda request: attrs.evolve(request, **changes)


def _tools(**changes: Any) -> Callable[[Request], Request]:
    """The field set on a request offering :data:`TOOLS`."""
    return _with(tools=TOOLS, **changes)


def _generation(**values: Any) -> Callable[[Request], Request]:
    return _with(generation=Generation(**values))


ROWS: list[Row] = [
    ("function tools", "tools", _tools()),
    (
        "strict function tools",
        "tools",
        _with(
            tools=tuple(
                attrs.evolve(tool, parameters=STRICT, strict=True) for tool in TOOLS
            )
        ),
    ),
    ("tool choice: none", "tool_choice", _tools(tool_choice=ToolChoice("none"))),
    (
        "tool choice: required",
        "tool_choice",
        _tools(tool_choice=ToolChoice("required")),
    ),
    (
        "tool choice: one tool forced",
        "tool_choice",
        _tools(tool_choice=ToolChoice.tool("get_weather")),
    ),
    (
        "tool choice: a subset of tools",
        "tool_choice",
        _tools(tool_choice=ToolChoice("auto", ("get_weather",))),
    ),
    (
        "tool choice: parallel calls off",
        "tool_choice",
        _tools(tool_choice=ToolChoice(parallel=False)),
    ),
    ("output: JSON", "output", _with(output=OutputFormat("json"))),
    (
        "output: JSON Schema",
        "output",
        _with(output=OutputFormat("json_schema", STRICT, name="weather", strict=True)),
    ),
    (
        "max output tokens",
        "generation.max_output_tokens",
        _generation(max_output_tokens=500),
    ),
    ("temperature", "generation.temperature", _generation(temperature=0.5)),
    ("top_p", "generation.top_p", _generation(top_p=0.9)),
    ("top_k", "generation.top_k", _generation(top_k=40)),
    ("stop sequences", "generation.stop", _generation(stop=("END",))),
    ("seed", "generation.seed", _generation(seed=7)),
    (
        "presence penalty",
        "generation.presence_penalty",
        _generation(presence_penalty=0.5),
    ),
    (
        "frequency penalty",
        "generation.frequency_penalty",
        _generation(frequency_penalty=0.5),
    ),
    ("candidates", "generation.candidates", _generation(candidates=2)),
    (
        "log probabilities",
        "generation.logprobs",
        _generation(logprobs=True, top_logprobs=3),
    ),
    ("reasoning effort", "reasoning", _with(reasoning=ReasoningConfig(effort="high"))),
    (
        "reasoning budget",
        "reasoning",
        # With room for it: a budget must stay under the output limit.
        _with(
            reasoning=ReasoningConfig(enabled=True, budget_tokens=4096),
            generation=Generation(max_output_tokens=16000),
        ),
    ),
    ("cache key", "cache", _with(cache=CacheConfig(key="session-1"))),
    ("user", "user", _with(user="user-1")),
    ("metadata", "metadata", _with(metadata={"team": "docs"})),
    ("service tier", "service_tier", _with(service_tier="default")),
]


def whole_request_providers() -> list[str]:
    """The registered providers whose normalizer reads and writes whole requests."""
    return [
        name
        for name in sorted(providers.names())
        if isinstance(providers.get(name), providers.RequestNormalizer)
    ]


def _concerns(where: str, prefix: str) -> bool:
    return where == prefix or where.startswith((f"{prefix}.", f"{prefix}["))


def _render(target: str, request: Request) -> tuple[dict[str, Any], list[Any]]:
    report = providers.Report()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", providers.FidelityWarning)
        body = providers.get(target).render_full_request(
            request, unsupported="drop", report=report
        )
    return body, list(report.events)


def outcome(events: list[Any], prefix: str) -> str:
    """The cell: what the report says about the field under ``prefix``."""
    said: list[str] = []
    for event in events:
        if not _concerns(event.where, prefix):
            continue
        text = event.kind if event.rule is None else f"{event.kind} ({event.rule})"
        if text not in said:
            said.append(text)
    return "; ".join(said) or "exact"


def source_request(source: str, request: Request, prefix: str) -> Request | None:
    """``request`` as ``source`` spells it, read back; ``None`` when the source
    cannot say the field exactly."""
    if source == NEUTRAL:
        return request
    body, events = _render(source, request)
    if any(_concerns(event.where, prefix) for event in events):
        return None
    return providers.get(source).parse_full_request(body)


def table(source: str, targets: list[str]) -> list[str]:
    """The table of one source format: a row per field, a column per target."""
    title = "From the neutral request" if source == NEUTRAL else f"From {source}"
    lines = [
        f".. list-table:: {title}",
        "   :header-rows: 1",
        "   :stub-columns: 1",
        "",
        "   * - field",
        *(f"     - to {target}" for target in targets),
    ]
    for label, prefix, make in ROWS:
        request = source_request(source, make(BASE), prefix)
        lines.append(f"   * - {label}")
        for target in targets:
            if request is None:
                cell = "n/a"
            else:
                cell = outcome(_render(target, request)[1], prefix)
            lines.append(f"     - {cell}")
    return [*lines, ""]


def render() -> str:
    """The whole ``.inc`` file."""
    whole = whole_request_providers()
    lines = [
        ".. Written by .auxiliary/scripts/request_matrix.py.",
        "   Do not edit: run it again.",
        "",
    ]
    for source in [NEUTRAL, *whole]:
        targets = [target for target in whole if target != source]
        if targets:
            lines += table(source, targets)
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("-o", "--output", type=Path, default=OUTPUT)
    parser.add_argument("--check", action="store_true", help="compare, do not write")
    args = parser.parse_args(argv)
    text = render()
    if args.check:
        same = args.output.exists() and args.output.read_text(encoding="utf-8") == text
        if not same:
            print(f"{args.output} differs: run request_matrix.py", file=sys.stderr)
        return 0 if same else 1
    args.output.write_text(text, encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
