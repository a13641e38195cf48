"""Whole-request figures: ``parse_full_request`` + ``render_full_request``
against the conversation-only ``parse_request`` + ``render_request``.

Run: ``python .auxiliary/benchmarks/requests.py [--repeat N]``.

For a body of its own format, a whole-request round trip reads and writes
every field; the target is at most 1.3x the conversation-only round trip of the
same body. Two workloads, for each normalizer implementing whole requests
(``PROVIDERS``):

* a short agent request: a system prompt, a user turn, a tool call and its
  result, three tools with JSON Schemas, a tool choice, a JSON Schema output
  format and sampling settings (what a gateway forwards on every call);
* recorded requests: every request body under ``tests/data/providers`` of the
  format, summed.

Times are CPU time per body (per corpus, for the recorded one), best of
``--repeat`` rounds, interleaved.
"""

from __future__ import annotations

import argparse
import json
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from canisters import providers

ROOT = Path(__file__).resolve().parents[2]
PROVIDERS = ("openai-chat", "openai-responses", "anthropic", "ollama", "gemini")

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
OLLAMA_AGENT = {
    "model": "qwen3",
    "messages": [
        {"role": "system", "content": "You are a weather assistant."},
        {"role": "user", "content": "Weather in Paris for 3 days?"},
        {
            "role": "assistant",
            "content": "",
            "tool_calls": [
                {"function": {"name": "get_weather", "arguments": {"city": "Paris"}}}
            ],
        },
        {"role": "tool", "tool_name": "get_weather", "content": "Sunny, 21C"},
    ],
    "tools": [
        {"type": "function", "function": tool["function"]} for tool in AGENT["tools"]
    ],
    "format": SCHEMA,
    "options": {"temperature": 0.2, "num_predict": 800, "stop": ["END"], "seed": 7},
    "think": False,
    "stream": False,
}
# The same request in OpenAI Responses' spelling (no stop or seed there).
RESPONSES_AGENT = {
    "model": "gpt-4.1",
    "instructions": "You are a weather assistant.",
    "input": [
        {"role": "user", "content": "Weather in Paris for 3 days?"},
        {
            "type": "function_call",
            "call_id": "call_1",
            "name": "get_weather",
            "arguments": '{"city":"Paris","days":3}',
        },
        {"type": "function_call_output", "call_id": "call_1", "output": "Sunny, 21C"},
    ],
    "tools": [{"type": "function", **tool["function"]} for tool in AGENT["tools"]],
    "tool_choice": "auto",
    "parallel_tool_calls": False,
    "text": {
        "format": {
            "type": "json_schema",
            "name": "answer",
            "schema": SCHEMA,
            "strict": True,
        }
    },
    "temperature": 0.2,
    "max_output_tokens": 800,
    "reasoning": {"effort": "low", "summary": "auto"},
    "store": False,
    "user": "user-1",
}


ANTHROPIC_AGENT = {
    "model": "claude-sonnet-4-5",
    "max_tokens": 800,
    "system": "You are a weather assistant.",
    "messages": [
        {"role": "user", "content": "Weather in Paris for 3 days?"},
        {
            "role": "assistant",
            "content": [
                {
                    "type": "tool_use",
                    "id": "toolu_1",
                    "name": "get_weather",
                    "input": {"city": "Paris", "days": 3},
                }
            ],
        },
        {
            "role": "user",
            "content": [
                {"type": "tool_result", "tool_use_id": "toolu_1", "content": "Sunny"}
            ],
        },
    ],
    "tools": [
        {
            "name": name,
            "description": f"The {name} tool",
            "input_schema": SCHEMA,
            "strict": True,
        }
        for name in ("get_weather", "get_forecast", "get_alerts")
    ],
    "tool_choice": {"type": "auto", "disable_parallel_tool_use": True},
    "output_config": {"format": {"type": "json_schema", "schema": SCHEMA}},
    "temperature": 0.2,
    "stop_sequences": ["END"],
    "metadata": {"user_id": "user-1"},
}
# The same request in Gemini's spelling (the schemas in its OpenAPI subset).
OPENAPI_SCHEMA = {
    "type": "OBJECT",
    "properties": {
        "city": {"type": "STRING", "description": "The city"},
        "days": {"type": "INTEGER", "minimum": 1},
    },
    "required": ["city", "days"],
}
GEMINI_AGENT = {
    "systemInstruction": {"parts": [{"text": "You are a weather assistant."}]},
    "contents": [
        {"role": "user", "parts": [{"text": "Weather in Paris for 3 days?"}]},
        {
            "role": "model",
            "parts": [
                {"functionCall": {"name": "get_weather", "args": {"city": "Paris"}}}
            ],
        },
        {
            "role": "user",
            "parts": [
                {
                    "functionResponse": {
                        "name": "get_weather",
                        "response": {"output": "Sunny, 21C"},
                    }
                }
            ],
        },
    ],
    "tools": [
        {
            "functionDeclarations": [
                {
                    "name": name,
                    "description": f"The {name} tool",
                    "parameters": OPENAPI_SCHEMA,
                }
                for name in ("get_weather", "get_forecast", "get_alerts")
            ]
        }
    ],
    "toolConfig": {"functionCallingConfig": {"mode": "AUTO"}},
    "generationConfig": {
        "temperature": 0.2,
        "maxOutputTokens": 800,
        "stopSequences": ["END"],
        "seed": 7,
        "responseMimeType": "application/json",
        "responseSchema": OPENAPI_SCHEMA,
        "thinkingConfig": {"thinkingBudget": 1024},
    },
}
AGENTS = {
    "openai-chat": AGENT,
    "gemini": GEMINI_AGENT,
    "openai-responses": RESPONSES_AGENT,
    "anthropic": ANTHROPIC_AGENT,
    "ollama": OLLAMA_AGENT,
}
# The Anthropic corpus holds a body the API refused (an orphan tool result),
# given back as it came only with incomplete="keep".
OPTIONS: dict[str, dict[str, Any]] = {"anthropic": {"incomplete": "keep"}}


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


def _pair(name: str, bodies: list[dict[str, Any]]) -> dict[str, Callable[[], Any]]:
    normalizer: Any = providers.get(name)
    parse, render = normalizer.parse_request, normalizer.render_request
    parse_full, render_full = (
        normalizer.parse_full_request,
        normalizer.render_full_request,
    )
    options = OPTIONS.get(name, {})
    for body in bodies:  # the workload is what it claims to be
        assert render_full(parse_full(body), **options) == body

    def conversation() -> None:
        for body in bodies:
            render(parse(body), **options)

    def whole() -> None:
        for body in bodies:
            render_full(parse_full(body), **options)

    return {"conversation": conversation, "whole": whole}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=7)
    arguments = parser.parse_args()
    print("same-format round trip, CPU time per workload (best of rounds)")
    for name in PROVIDERS:
        for label, bodies, number in (
            ("agent request", [AGENTS[name]], 2000),
            ("recorded requests", _recorded(name), 40),
        ):
            best = _best(_pair(name, bodies), arguments.repeat, number)
            ratio = best["whole"] / best["conversation"]
            print(
                f"{name:16} {label:18} ({len(bodies):2} bodies): "
                f"conversation {best['conversation'] * 1e6:8.1f} us, "
                f"whole {best['whole'] * 1e6:8.1f} us, ratio {ratio:.2f}x "
                f"(target <= 1.3x)"
            )


if __name__ == "__main__":
    main()
