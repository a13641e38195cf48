"""Whole-request figures: ``parse_full_request`` + ``render_full_request``
against the conversation-only ``parse_request`` + ``render_request``.

Run: ``python .auxiliary/benchmarks/whole_requests.py [--repeat N]``.

For a body of its own format, a whole-request round trip reads and writes
every field; the target is at most 1.3x the conversation-only round trip of the
same body. Two workloads, for each normalizer implementing whole requests
(``PROVIDERS``):

* a short agent request: a system prompt, a user turn, a tool call and its
  result, three tools with JSON Schemas, a tool choice, a JSON Schema output
  format and sampling settings (what a gateway forwards on every call);
* recorded requests: every request body under ``tests/data/providers`` of the
  format, summed.

Then whole-request translation against LiteLLM (``pip install litellm``, in
the ``benchmarks`` extra), in the same run: the agent request read from OpenAI
Chat and written as an Anthropic, a Gemini and an Ollama body, and the same
request spelled in Anthropic and Gemini written as OpenAI Chat (the routes
LiteLLM has). LiteLLM does each through its own provider classes, without a
network call: ``AnthropicConfig().map_openai_params`` then
``transform_request``; ``GoogleAIStudioGeminiConfig().map_openai_params`` then
``transform_request_body``; ``OllamaChatConfig().map_openai_params`` then
``transform_request``; ``LiteLLMAnthropicMessagesAdapter
().translate_anthropic_to_openai``; ``GoogleGenAIAdapter
().translate_generate_content_to_completion``. Canisters does it with
``parse_full_request`` and ``render_full_request`` (``unsupported="drop"``,
the outcomes in a report) when both formats are
:class:`~canisters.providers.RequestNormalizer` s; for a format that is not
one yet, the conversation only (``parse_request`` / ``render_request``), and
the line says so. The target is 10x LiteLLM per request.

Times are CPU time per body (per corpus, for the recorded one), best of
``--repeat`` rounds, interleaved. LiteLLM rewrites some of the bodies it is
given, so each of its calls gets a fresh copy, made before the clock starts.
"""

from __future__ import annotations

import argparse
import importlib.metadata
import json
import logging
import os
import sys
import time
import warnings
from collections.abc import Callable
from pathlib import Path
from typing import Any

import attrs
import orjson

from canisters import providers

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
PROVIDERS = ("openai-chat", "openai-responses", "anthropic", "ollama", "gemini")
ANTHROPIC_MODEL = "claude-sonnet-4-5"
GEMINI_MODEL = "gemini-2.5-flash"
OLLAMA_MODEL = "qwen3"
# The model each target is sent, the same on both sides.
MODELS = {"anthropic": ANTHROPIC_MODEL, "gemini": GEMINI_MODEL, "ollama": OLLAMA_MODEL}

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


# The agent request in Gemini's spelling: a reverse direction's input.
GEMINI = {
    "systemInstruction": {"parts": [{"text": "You are a weather assistant."}]},
    "contents": [
        {"role": "user", "parts": [{"text": "Weather in Paris for 3 days?"}]},
        {
            "role": "model",
            "parts": [
                {
                    "functionCall": {
                        "name": "get_weather",
                        "args": {"city": "Paris", "days": 3},
                    }
                }
            ],
        },
        {
            "role": "user",
            "parts": [
                {
                    "functionResponse": {
                        "name": "get_weather",
                        "response": {"result": "Sunny, 21C"},
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
                    "parametersJsonSchema": SCHEMA,
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
        "responseJsonSchema": SCHEMA,
    },
}
BODIES = {"openai-chat": AGENT, "anthropic": ANTHROPIC_AGENT, "gemini": GEMINI}


def _best(
    functions: dict[str, Callable[[], Any]], repeat: int, number: int
) -> dict[str, float]:
    """CPU seconds per call of each function, best of ``repeat`` interleaved rounds.

    A function with a ``prepare`` attribute has it called before each round's
    clock starts, with ``number``: what the round's calls consume (fresh copies
    of a body for a callee that rewrites its input).
    """
    best = dict.fromkeys(functions, float("inf"))
    for _ in range(repeat):
        for label, function in functions.items():
            prepare = getattr(function, "prepare", None)
            if prepare is not None:
                prepare(number)
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


def _floor() -> Callable[[], Any]:
    """The agent request's whole round trip with its settings written by hand
    for its exact shape: no check, no option, no other shape, the parts built by
    the trusted constructors. No general parser does less; the ratio of this
    to the conversation-only round trip is the floor of the whole one's."""
    from canisters import Generation, Request
    from canisters._trusted import _trusted
    from canisters.providers import _requests as kit

    normalizer: Any = providers.get("openai-chat")
    parse, render = normalizer.parse_request, normalizer.render_request
    new_request, new_generation = _trusted(Request), _trusted(Generation)
    mark = kit.FrozenDict({"openai-chat": kit.EMPTY})

    def read(body: dict[str, Any]) -> Request:
        tools = tuple(
            kit.new_tool(
                function["name"],
                function["description"],
                kit.FrozenDict(function["parameters"]),
                function["strict"],
                kit.EMPTY,
            )
            for function in (entry["function"] for entry in body["tools"])
        )
        shape = body["response_format"]["json_schema"]
        output = kit.new_output(
            "json_schema", kit.FrozenDict(shape["schema"]), shape["name"], None, True
        )
        generation = new_generation(
            body["max_completion_tokens"], body["temperature"], None, None,
            tuple(body["stop"]), body["seed"], None, None, None, None, None,
        )  # fmt: skip
        choice = kit.new_tool_choice(
            body["tool_choice"], (), body["parallel_tool_calls"]
        )
        return new_request(  # type: ignore[no-any-return]
            parse(body), body["model"], tools, choice, output, generation,
            None, None, body["user"], None, None, None, mark,
        )  # fmt: skip

    def write(request: Request) -> dict[str, Any]:
        out: dict[str, Any] = {"model": request.model}
        out.update(render(request.conversation))
        out["tools"] = [
            {
                "type": "function",
                "function": {
                    "name": tool.name,
                    "description": tool.description,
                    "parameters": dict(tool.parameters),
                    "strict": tool.strict,
                },
            }
            for tool in request.tools
        ]
        choice, output, generation = (
            request.tool_choice,
            request.output,
            request.generation,
        )
        assert choice is not None
        assert output is not None
        assert output.schema is not None
        assert generation.stop is not None
        out["tool_choice"] = choice.mode
        out["parallel_tool_calls"] = choice.parallel
        out["response_format"] = {
            "type": "json_schema",
            "json_schema": {
                "name": output.name,
                "schema": dict(output.schema),
                "strict": output.strict,
            },
        }
        out["temperature"] = generation.temperature
        out["max_completion_tokens"] = generation.max_output_tokens
        out["stop"] = list(generation.stop)
        out["seed"] = generation.seed
        out["user"] = request.user
        return out

    assert write(read(AGENT)) == AGENT

    def floor() -> None:
        write(read(AGENT))

    return floor


def same_format(repeat: int) -> list[dict[str, Any]]:
    """Whole against conversation-only, same-format round trips: printed, and
    returned as ``{"format", "workload", "conversation", "whole"}`` (seconds)."""
    print("same-format round trip, CPU time per workload (best of rounds)")
    figures: list[dict[str, Any]] = []
    for name in PROVIDERS:
        for label, bodies, number in (
            ("agent request", [AGENTS[name]], 2000),
            ("recorded requests", _recorded(name), 40),
        ):
            functions = _pair(name, bodies)
            if label == "agent request" and name == "openai-chat":
                functions["floor"] = _floor()
            best = _best(functions, repeat, number)
            ratio = best["whole"] / best["conversation"]
            figures.append(
                {
                    "format": name,
                    "workload": label,
                    "conversation": best["conversation"],
                    "whole": best["whole"],
                }
            )
            print(
                f"{name:16} {label:18} ({len(bodies):2} bodies): "
                f"conversation {best['conversation'] * 1e6:8.1f} us, "
                f"whole {best['whole'] * 1e6:8.1f} us, ratio {ratio:.2f}x "
                f"(target <= 1.3x)"
            )
            if "floor" in best:
                print(
                    f"{'':16} {'':18} {'':12}  floor (settings by hand, unchecked)"
                    f" {best['floor'] * 1e6:8.1f} us, ratio "
                    f"{best['floor'] / best['conversation']:.2f}x"
                )
    return figures


# Translation against LiteLLM ---------------------------------------------------------


def _import_litellm() -> Any:
    """LiteLLM, or ``None`` when it is not installed.

    Run as a script, this file's directory leads ``sys.path``, where this file
    would shadow the ``requests`` package LiteLLM imports: it is taken off
    first. LiteLLM is kept from fetching its model price map.
    """
    sys.path[:] = [entry for entry in sys.path if Path(entry or ".").resolve() != HERE]
    os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
    try:
        import litellm
    except ImportError:
        return None
    logging.getLogger("LiteLLM").setLevel(logging.ERROR)
    return litellm


def _fresh(raw: bytes) -> Callable[[], Any]:
    """A callable giving a fresh copy of the JSON ``raw`` per call, the copies
    made by its ``prepare(number)`` (see :func:`_best`)."""
    copies: list[Any] = []

    def take() -> Any:
        return copies.pop()

    def prepare(number: int) -> None:
        copies[:] = [orjson.loads(raw) for _ in range(number)]

    take.prepare = prepare  # type: ignore[attr-defined]
    return take


def _litellm_routes() -> dict[tuple[str, str], Callable[[Callable[[], Any]], Any]]:
    """LiteLLM's translation of a body, per (source, target): each takes a
    callable giving the body and returns the translated body."""
    from litellm.google_genai.adapters.transformation import GoogleGenAIAdapter
    from litellm.llms.anthropic.chat.transformation import AnthropicConfig
    from litellm.llms.anthropic.messages.adapters.transformation import (
        LiteLLMAnthropicMessagesAdapter,
    )
    from litellm.llms.gemini.chat.transformation import GoogleAIStudioGeminiConfig
    from litellm.llms.ollama.chat.transformation import OllamaChatConfig
    from litellm.llms.vertex_ai.gemini.transformation import transform_request_body

    anthropic, gemini = AnthropicConfig(), GoogleAIStudioGeminiConfig()
    ollama = OllamaChatConfig()
    from_anthropic, from_gemini = (
        LiteLLMAnthropicMessagesAdapter(),
        GoogleGenAIAdapter(),
    )

    def params(body: dict[str, Any]) -> dict[str, Any]:
        return {k: v for k, v in body.items() if k not in ("model", "messages")}

    def to_anthropic(fresh: Callable[[], Any]) -> Any:
        body = fresh()
        mapped = anthropic.map_openai_params(
            params(body), {}, ANTHROPIC_MODEL, drop_params=True
        )
        return anthropic.transform_request(
            ANTHROPIC_MODEL, body["messages"], mapped, {}, {}
        )

    def to_gemini(fresh: Callable[[], Any]) -> Any:
        body = fresh()
        mapped = gemini.map_openai_params(
            params(body), {}, GEMINI_MODEL, drop_params=True
        )
        return transform_request_body(
            body["messages"], GEMINI_MODEL, mapped, "gemini", {}, None
        )

    def to_ollama(fresh: Callable[[], Any]) -> Any:
        body = fresh()
        mapped = ollama.map_openai_params(
            params(body), {}, OLLAMA_MODEL, drop_params=True
        )
        return ollama.transform_request(OLLAMA_MODEL, body["messages"], mapped, {}, {})

    def anthropic_to_chat(fresh: Callable[[], Any]) -> Any:
        return from_anthropic.translate_anthropic_to_openai(fresh())[0]

    def gemini_to_chat(fresh: Callable[[], Any]) -> Any:
        body = fresh()
        return from_gemini.translate_generate_content_to_completion(
            GEMINI_MODEL,
            body.pop("contents"),
            body.pop("generationConfig"),
            **body,
        )

    return {
        ("openai-chat", "anthropic"): to_anthropic,
        ("openai-chat", "gemini"): to_gemini,
        ("openai-chat", "ollama"): to_ollama,
        ("anthropic", "openai-chat"): anthropic_to_chat,
        ("gemini", "openai-chat"): gemini_to_chat,
    }


WHOLE = "whole request"

# What the target model takes, as LiteLLM assumes it for the models named.
_CAPABILITIES = {
    "anthropic": {"structured_output": "native"},
}


def _canisters_route(source: str, target: str) -> tuple[str, Callable[[], Any]]:
    """How canisters translates a body of ``source`` to ``target``: the whole
    request when both are request normalizers, else the conversation only."""
    reader: Any = providers.get(source)
    writer: Any = providers.get(target)
    body = BODIES[source]
    if isinstance(reader, providers.RequestNormalizer) and isinstance(
        writer, providers.RequestNormalizer
    ):
        options: dict[str, Any] = {"unsupported": "drop"}
        if target in _CAPABILITIES:
            options["capabilities"] = attrs.evolve(
                providers.capabilities_for(target), **_CAPABILITIES[target]
            )
        if target in MODELS:
            options["model"] = MODELS[target]
        parse, render = reader.parse_full_request, writer.render_full_request

        def whole() -> Any:
            return render(parse(body), report=providers.Report(), **options)

        return WHOLE, whole
    parse_conversation, render_conversation = (
        reader.parse_request,
        writer.render_request,
    )

    def conversation() -> Any:
        return render_conversation(parse_conversation(body), unsupported="drop")

    return "CONVERSATION ONLY (no whole-request support yet)", conversation


def _check(label: str, litellm_body: Any, ours: Any) -> None:
    """Both sides did the work claimed: the tools came across (and, for a
    conversation-only translation, the messages did)."""
    assert litellm_body.get("tools"), "LiteLLM lost the tools"
    if label == WHOLE:
        assert ours.get("tools"), "canisters lost the tools"
    else:
        assert ours.get("messages") or ours.get("contents")


def translation(repeat: int) -> list[dict[str, Any]]:
    """Whole-request translation, canisters against LiteLLM: printed, and
    returned as ``{"source", "target", "canisters", "litellm"}`` (seconds)."""
    figures: list[dict[str, Any]] = []
    litellm = _import_litellm()
    if litellm is None:
        print("\ntranslation against LiteLLM: skipped (pip install litellm)")
        return figures
    version = importlib.metadata.version("litellm")
    print(
        f"\ntranslation of the agent request against LiteLLM {version}"
        f" (in-process provider classes), CPU time per request (best of rounds)"
    )
    routes = _litellm_routes()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # LiteLLM's own and FidelityWarning
        for (source, target), route in routes.items():
            fresh = _fresh(orjson.dumps(BODIES[source]))
            label, ours = _canisters_route(source, target)
            fresh.prepare(1)  # type: ignore[attr-defined]
            _check(label, route(fresh), ours())

            def theirs(route: Any = route, fresh: Any = fresh) -> Any:
                return route(fresh)

            theirs.prepare = fresh.prepare  # type: ignore[attr-defined]
            best = _best({"canisters": ours, "litellm": theirs}, repeat, 300)
            ratio = best["litellm"] / best["canisters"]
            ours_us, theirs_us = best["canisters"] * 1e6, best["litellm"] * 1e6
            figures.append(
                {
                    "source": source,
                    "target": target,
                    "canisters": best["canisters"],
                    "litellm": best["litellm"],
                }
            )
            print(
                f"{source:>11} -> {target:11}: canisters {ours_us:7.1f} us"
                f" [{label}], LiteLLM {theirs_us:7.1f} us, "
                f"canisters {ratio:.1f}x faster (target >= 10x)"
            )
    return figures


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=7)
    parser.add_argument(
        "--skip-litellm", action="store_true", help="only the same-format figures"
    )
    arguments = parser.parse_args()
    same_format(arguments.repeat)
    if not arguments.skip_litellm:
        translation(arguments.repeat)


if __name__ == "__main__":
    main()
