"""Rendering is a fixed point: what a normalizer renders, it reads back and renders
again unchanged, for every recorded body parsed from any provider."""

from __future__ import annotations

import json
import warnings
from pathlib import Path
from typing import Any

import pytest

from canisters import providers

DATA = Path(__file__).parent / "data" / "providers"


def _case(path: Path) -> dict[str, Any]:
    case: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
    return case


# HTTP error bodies (a top-level "error") hold no conversation to convert.
CASES = [
    path
    for path in sorted(DATA.glob("*/*.json"))
    if "error" not in _case(path)["payload"]
]


@pytest.mark.parametrize("target", providers.names())
@pytest.mark.parametrize("path", CASES, ids=lambda p: f"{p.parent.name}/{p.stem}")
def test_render_parse_render_is_stable(path: Path, target: str) -> None:
    case = _case(path)
    source = providers.get(case["provider"])
    kind = case["kind"]
    parse = source.parse_request if kind == "request" else source.parse_response
    conversation = parse(case["payload"])
    normalizer = providers.get(target)
    render = (
        normalizer.render_request if kind == "request" else normalizer.render_response
    )
    read = normalizer.parse_request if kind == "request" else normalizer.parse_response
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        body = render(conversation, unsupported="placeholder")
        assert render(read(body), unsupported="placeholder") == body
