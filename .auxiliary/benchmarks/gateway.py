"""Gateway figures: ``parse_request`` on the bodies a gateway translates.

Run: ``python .auxiliary/benchmarks/gateway.py [--repeat N] [--each]`` (``--each``
also times every recorded body alone, the slowest against LangChain first).

A gateway reads every request it forwards, and most requests are short: a system
prompt and a few turns. The corpus benchmark (``run.py``) reads whole
conversations of 10 to 1,000 messages, where the cost per message dominates;
here the cost per body shows. Two workloads, each against LangChain's
``convert_to_messages`` on the body's ``messages`` (the nearest peer;
LangChain keeps Anthropic's content blocks as they are and leaves media as
text, where canisters reads every block into typed parts and media into bytes):

* short requests: a system prompt and 1, 2, 4, 10 or 30 short turns, and 2
  turns offering 20 tools (the definitions an agent sends on every call), for
  ``openai-chat`` and ``anthropic``; for ``openai-chat``, bodies shaped as
  clients send them too: an agent loop whose replies are the SDK's
  ``model_dump()`` (``refusal``, ``annotations``, unset fields as ``null``),
  one whose tool-call arguments have ``json.dumps``' spacing, an image URL
  with ``detail``; for ``anthropic``, an agent loop of text and ``tool_use``
  blocks under a cached system block, its results as strings or as
  pydantic-ai's lists of texts with ``is_error: false``, an image URL;
* recorded requests: every request body under ``tests/data/providers`` that
  both read (SDK test cassettes, real API traffic, bodies pydantic-ai and
  LangChain sent; mostly one to seven messages, many with images, documents,
  tool rounds and cache control), summed per provider.

Times are CPU time per body, best of ``--repeat`` rounds, interleaved.
"""

from __future__ import annotations

import argparse
import json
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from langchain_core import messages as lc

from canisters import providers

ROOT = Path(__file__).resolve().parents[2]
PROVIDERS = ("openai-chat", "anthropic")


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


def short_bodies(name: str, turns: int) -> dict[str, Any]:
    """A request of a system prompt and ``turns`` short alternating turns."""
    messages = [
        {
            "role": "user" if index % 2 == 0 else "assistant",
            "content": f"turn {index}: could you check whether this is right?",
        }
        for index in range(turns)
    ]
    if name == "anthropic":
        return {
            "model": "m",
            "max_tokens": 512,
            "system": "Be brief.",
            "messages": messages,
        }
    system = {"role": "system", "content": "Be brief."}
    return {"model": "m", "messages": [system, *messages]}


def with_tools(name: str, body: dict[str, Any], count: int) -> dict[str, Any]:
    """``body`` offering ``count`` tools of eight parameters each (about 1.2 KB
    apiece), as an agent's requests do on every call."""
    tools = []
    for index in range(count):
        schema = {
            "type": "object",
            "properties": {
                f"p{number}": {
                    "type": "string",
                    "description": f"parameter {number} of tool {index}, in words",
                    "enum": ["low", "medium", "high"],
                }
                for number in range(8)
            },
            "required": ["p0"],
        }
        description = f"Tool {index}: looks something up and reports it. " * 3
        tools.append(
            {
                "name": f"tool_{index}",
                "description": description,
                "input_schema": schema,
            }
            if name == "anthropic"
            else {
                "type": "function",
                "function": {
                    "name": f"tool_{index}",
                    "description": description,
                    "parameters": schema,
                },
            }
        )
    return {**body, "tools": tools}


def _call(number: int, arguments: str) -> dict[str, Any]:
    return {
        "id": f"call_{number:024d}",
        "type": "function",
        "function": {"name": "get_weather", "arguments": arguments},
    }


def _sdk_reply(content: str | None, calls: list[Any] | None = None) -> dict[str, Any]:
    """An assistant reply sent back as the OpenAI SDK's ``model_dump()`` of it."""
    return {
        "content": content,
        "refusal": None,
        "role": "assistant",
        "annotations": [],
        "audio": None,
        "function_call": None,
        "tool_calls": calls,
    }


def _plain_reply(content: str | None, calls: list[Any] | None = None) -> dict[str, Any]:
    return {
        "role": "assistant",
        "content": content,
        **({"tool_calls": calls} if calls else {}),
    }


def _agent_loop(
    reply: Callable[..., dict[str, Any]], arguments: str, result: str
) -> dict[str, Any]:
    """A system prompt, a question, three rounds of two tool calls and their
    results, an answer and a follow-up, with ten tool definitions."""
    messages: list[dict[str, Any]] = [
        {"role": "system", "content": "You are a helpful assistant. Use tools."},
        {"role": "user", "content": "What is the weather in Paris and in Oslo?"},
    ]
    for turn in range(3):
        calls = [_call(turn * 2 + index, arguments) for index in range(2)]
        messages.append(reply(None, calls))
        messages += [
            {"role": "tool", "tool_call_id": call["id"], "content": result}
            for call in calls
        ]
    messages.append(reply("Paris will be sunny, Oslo will have snow."))
    messages.append({"role": "user", "content": "Thanks! And the day after?"})
    return with_tools("openai-chat", {"model": "m", "messages": messages}, 10)


def _anthropic_loop(listed: bool) -> dict[str, Any]:
    """The agent loop of :func:`_agent_loop` as Anthropic clients send it: a
    system prompt as a block with ``cache_control``, text blocks, a reply of a
    text and two ``tool_use`` blocks, one user message of two ``tool_result``
    blocks per round; ``listed``: results as a list of one text with
    ``is_error: false`` (pydantic-ai's form), else as a string (the SDK's
    examples, LangChain's)."""

    def result(call_id: str) -> dict[str, Any]:
        text = '{"temperature": 21, "sky": "sunny"}'
        if listed:
            return {
                "tool_use_id": call_id,
                "type": "tool_result",
                "content": [{"text": text, "type": "text"}],
                "is_error": False,
            }
        return {"type": "tool_result", "tool_use_id": call_id, "content": text}

    def text(value: str) -> dict[str, Any]:
        return {"type": "text", "text": value}

    messages: list[dict[str, Any]] = [
        {"role": "user", "content": [text("What is the weather in Paris and Oslo?")]}
    ]
    for turn in range(3):
        calls = [
            {
                "type": "tool_use",
                "id": f"toolu_01{turn * 2 + index:022d}",
                "name": "get_weather",
                "input": {"city": "Paris"},
            }
            for index in range(2)
        ]
        messages.append(
            {"role": "assistant", "content": [text("Let me look."), *calls]}
        )
        messages.append(
            {"role": "user", "content": [result(call["id"]) for call in calls]}
        )
    messages.append(
        {
            "role": "assistant",
            "content": [text("Paris will be sunny, Oslo will have snow.")],
        }
    )
    messages.append({"role": "user", "content": [text("Thanks! And the day after?")]})
    system = [
        {
            "type": "text",
            "text": "You are a helpful assistant. Use tools.",
            "cache_control": {"type": "ephemeral"},
        }
    ]
    body = {"model": "m", "max_tokens": 1024, "system": system, "messages": messages}
    return with_tools("anthropic", body, 10)


def client_bodies(name: str) -> dict[str, dict[str, Any]]:
    """Bodies shaped as clients send them, beyond the recorded ones, by label."""
    if name == "anthropic":
        image = {"type": "url", "url": "https://example.com/photos/boardwalk.jpg"}
        return {
            "agent loop, string results": _anthropic_loop(listed=False),
            "agent loop, listed results": _anthropic_loop(listed=True),
            "system + image URL": {
                "model": "m",
                "max_tokens": 1024,
                "system": "Describe images.",
                "messages": [
                    {
                        "role": "user",
                        "content": [
                            {"type": "text", "text": "What is in this image?"},
                            {"type": "image", "source": image},
                        ],
                    }
                ],
            },
        }
    if name != "openai-chat":
        return {}
    image = {"url": "https://example.com/photos/boardwalk.jpg", "detail": "high"}
    return {
        "agent loop, SDK replies": _agent_loop(
            _sdk_reply, '{"city":"Paris"}', '{"temperature": 21, "sky": "sunny"}'
        ),
        "agent loop, json.dumps args": _agent_loop(
            _plain_reply, '{"city": "Paris"}', "Sunny, 21 C"
        ),
        "system + image URL": {
            "model": "m",
            "messages": [
                {"role": "system", "content": "Describe images."},
                {
                    "role": "user",
                    "content": [
                        {"type": "text", "text": "What is in this image?"},
                        {"type": "image_url", "image_url": image},
                    ],
                },
            ],
        },
    }


def _compare(
    label: str, body: dict[str, Any], parse: Callable[[Any], Any], repeat: int
) -> None:
    figures = _best(
        {
            "canisters": lambda: parse(body),
            "langchain": lambda: lc.convert_to_messages(body["messages"]),
        },
        repeat,
        200,
    )
    ours, theirs = figures["canisters"], figures["langchain"]
    print(
        f"  {label:<28} canisters {ours * 1e6:7.1f} us  "
        f"langchain {theirs * 1e6:7.1f} us  canisters {theirs / ours:5.2f}x"
    )


def recorded_bodies(name: str) -> list[dict[str, Any]]:
    """The recorded request bodies of ``name`` that canisters and LangChain read."""
    return list(recorded(name).values())


def recorded(name: str) -> dict[str, dict[str, Any]]:
    """:func:`recorded_bodies` by the name of the file holding each."""
    normalizer = providers.get(name)
    bodies = {}
    for path in sorted((ROOT / "tests" / "data" / "providers" / name).glob("*.json")):
        case = json.loads(path.read_text())
        if case.get("kind") != "request":
            continue
        body = case["payload"]
        try:
            normalizer.parse_request(body)
            lc.convert_to_messages(body["messages"])
        except Exception:  # bodies one of them refuses are not compared
            continue
        bodies[path.stem] = body
    return bodies


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeat", type=int, default=7, help="rounds per measure")
    parser.add_argument(
        "--each", action="store_true", help="also time each recorded body, worst first"
    )
    arguments = parser.parse_args(argv)
    repeat = arguments.repeat
    print("parse_request against LangChain's convert_to_messages (CPU time per body)")
    for name in PROVIDERS:
        normalizer = providers.get(name)
        print(f"\n[{name}] short requests")
        for turns, tools in ((1, 0), (2, 0), (4, 0), (10, 0), (30, 0), (2, 20)):
            body = with_tools(name, short_bodies(name, turns), tools)
            shape = f"system + {turns:>2} turns" + (
                f" + {tools} tools" if tools else ""
            )
            _compare(shape, body, normalizer.parse_request, repeat)
        clients = client_bodies(name)
        if clients:
            print(f"[{name}] bodies as clients send them")
        for label, body in clients.items():
            _compare(label, body, normalizer.parse_request, repeat)
        bodies = recorded_bodies(name)
        figures = _best(
            {
                "canisters": lambda bodies=bodies, parse=normalizer.parse_request: [
                    parse(body) for body in bodies
                ],
                "langchain": lambda bodies=bodies: [
                    lc.convert_to_messages(body["messages"]) for body in bodies
                ],
            },
            repeat,
            5,
        )
        ours, theirs = figures["canisters"], figures["langchain"]
        print(
            f"[{name}] {len(bodies)} recorded requests  canisters "
            f"{ours * 1e3:6.2f} ms  langchain {theirs * 1e3:6.2f} ms  "
            f"canisters {theirs / ours:5.2f}x"
        )
        if arguments.each:
            _each(name, normalizer.parse_request, repeat)
    return 0


def _each(name: str, parse: Callable[[Any], Any], repeat: int) -> None:
    """Each recorded body of ``name``, the slowest against LangChain first."""
    rows = []
    for label, body in recorded(name).items():
        figures = _best(
            {
                "canisters": lambda body=body: parse(body),
                "langchain": lambda body=body: lc.convert_to_messages(body["messages"]),
            },
            repeat,
            20,
        )
        rows.append((figures["langchain"] / figures["canisters"], label, figures))
    for ratio, label, figures in sorted(rows):
        print(
            f"  {label:<56} canisters {figures['canisters'] * 1e6:7.1f} us  "
            f"langchain {figures['langchain'] * 1e6:7.1f} us  canisters {ratio:5.2f}x"
        )


if __name__ == "__main__":
    raise SystemExit(main())
