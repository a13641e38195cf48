"""Whole-request figures: ``parse_full_request`` + ``render_full_request``
against the conversation-only ``parse_request`` + ``render_request``.

Run: ``python .auxiliary/benchmarks/requests.py [--repeat N]``.

For a body of its own format, a whole-request round trip reads and writes
every field; the target is at most 1.3x the conversation-only round trip of the
same body. Two workloads, for ``openai-chat`` and ``gemini`` (the normalizers
implementing whole requests):

* a short agent request: a system prompt, a user turn, a tool call and its
  result, three tools with JSON Schemas, a tool choice, a JSON Schema output
  format and sampling settings (what a gateway forwards on every call), for
  another format as the OpenAI Chat one translates to it;
* recorded requests: every request body under ``tests/data/providers`` of the
  format, summed.

Times are CPU time per body (per corpus, for the recorded one), best of
``--repeat`` rounds, interleaved.
"""

from __future__ import annotations

import argparse
import json
import time
import warnings
from collections.abc import Callable
from pathlib import Path
from typing import Any

from canisters import providers

ROOT = Path(__file__).resolve().parents[2]
PROVIDERS = ("openai-chat", "gemini")

SCHEMA = {
    "type": "object",
    "properties": {
        "city": {"type": "string", "description": "The city"},
        "days": {"type": "integer", "minimum": 1},
    },
    "required": ["city", "days"],
    "additionalProperties": False,
}
AGENT = {
    "model": "gpt-4.1",
    "messages": [
        {"role": "system", "content": "You are a weather assistant."},
        {"role": "user", "content": "Weather in Paris for 3 days?"},
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {
                    "id": "call_1",
                    "type": "function",
                    "function": {
                        "name": "get_weather",
                        "arguments": '{"city":"Paris","days":3}',
                    },
                }
            ],
        },
        {"role": "tool", "tool_call_id": "call_1", "content": "Sunny, 21C"},
    ],
    "tools": [
        {
            "type": "function",
            "function": {
                "name": name,
                "description": f"The {name} tool",
                "parameters": SCHEMA,
                "strict": True,
            },
        }
        for name in ("get_weather", "get_forecast", "get_alerts")
    ],
    "tool_choice": "auto",
    "parallel_tool_calls": False,
    "response_format": {
        "type": "json_schema",
        "json_schema": {"name": "answer", "schema": SCHEMA, "strict": True},
    },
    "temperature": 0.2,
    "max_completion_tokens": 800,
    "stop": ["END"],
    "seed": 7,
    "user": "user-1",
}


def _best(
    functions: dict[str, Callable[[], Any]], repeat: int, number: int
) -> dict[str, float]:
    """CPU seconds per call of each function, best of ``repeat`` interleaved rounds."""
    best = dict.fromkeys(functions, float("inf"))
    for _ in range(repeat):
        for label, function in functions.items():
            start = time.process_time()
            for _ in range(number):
                function()
            best[label] = min(best[label], (time.process_time() - start) / number)
    return best


def _recorded(name: str) -> list[dict[str, Any]]:
    directory = ROOT / "tests" / "data" / "providers" / name
    return [
        json.loads(path.read_text())["payload"]
        for path in sorted(directory.glob("*-request.json"))
    ]


def _agent(name: str) -> dict[str, Any]:
    """The agent request in ``name``'s format."""
    if name == "openai-chat":
        return AGENT
    request = providers.get("openai-chat").parse_full_request(AGENT)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        body: dict[str, Any] = providers.get(name).render_full_request(
            request, unsupported="drop"
        )
    return body


def _pair(name: str, bodies: list[dict[str, Any]]) -> dict[str, Callable[[], Any]]:
    normalizer: Any = providers.get(name)
    parse, render = normalizer.parse_request, normalizer.render_request
    parse_full, render_full = (
        normalizer.parse_full_request,
        normalizer.render_full_request,
    )
    for body in bodies:  # the workload is what it claims to be
        assert render_full(parse_full(body)) == body

    def conversation() -> None:
        for body in bodies:
            render(parse(body))

    def whole() -> None:
        for body in bodies:
            render_full(parse_full(body))

    return {"conversation": conversation, "whole": whole}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=7)
    arguments = parser.parse_args()
    print("same-format round trip, CPU time per workload (best of rounds)")
    for name in PROVIDERS:
        for label, bodies, number in (
            ("agent request", [_agent(name)], 2000),
            ("recorded requests", _recorded(name), 40),
        ):
            best = _best(_pair(name, bodies), arguments.repeat, number)
            ratio = best["whole"] / best["conversation"]
            print(
                f"{name:12} {label:18} ({len(bodies):2} bodies): "
                f"conversation {best['conversation'] * 1e6:8.1f} us, "
                f"whole {best['whole'] * 1e6:8.1f} us, ratio {ratio:.2f}x "
                f"(target <= 1.3x)"
            )


if __name__ == "__main__":
    main()
