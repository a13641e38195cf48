"""Record the request bodies pydantic-ai's and LangChain's real models send.

Not run by the tests. Each library's own model (pydantic-ai's ``OpenAIChatModel``,
``OpenAIResponsesModel``, ``AnthropicModel``, ``GoogleModel``; LangChain's
``ChatOpenAI``, ``ChatAnthropic``, ``ChatGoogleGenerativeAI``, ``ChatOllama``) is
given a history; httpx's transports are replaced by one that records the JSON body
and answers 400, so nothing leaves the machine. The bodies are written to
``tests/data/providers/<provider>/peer-*.json`` with their source and the
library versions.

Run from the repository root: ``python .auxiliary/scripts/record_peer_bodies.py``
(needs pydantic-ai-slim, langchain-openai, langchain-anthropic,
langchain-google-genai and langchain-ollama).
"""

from __future__ import annotations

import base64
import contextlib
import json
import warnings
from collections.abc import Callable
from importlib import metadata
from pathlib import Path
from typing import Any

import httpx

OUT = Path(__file__).resolve().parents[2] / "tests" / "data" / "providers"
PNG = base64.b64decode(
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg=="
)
PNG_B64 = base64.b64encode(PNG).decode()
PDF = b"%PDF-1.4\n1 0 obj<<>>endobj\ntrailer<<>>\n%%EOF\n"

recorded: list[dict[str, Any]] = []


class Refused(Exception):
    pass


def _record(request: httpx.Request) -> httpx.Response:
    body = request.read()
    with contextlib.suppress(ValueError):
        recorded.append(json.loads(body))
    return httpx.Response(
        400,
        json={"error": {"message": "recorded", "type": "invalid_request_error"}},
        request=request,
    )


def _sync(self: Any, request: httpx.Request) -> httpx.Response:
    return _record(request)


async def _async(self: Any, request: httpx.Request) -> httpx.Response:
    return _record(request)


httpx.HTTPTransport.handle_request = _sync  # type: ignore[method-assign]
httpx.AsyncHTTPTransport.handle_async_request = _async  # type: ignore[method-assign]
try:  # newer anthropic and google-genai releases ship on httpx2
    import httpx2

    def _record2(request: Any) -> Any:
        body = request.read()
        with contextlib.suppress(ValueError):
            recorded.append(json.loads(body))
        return httpx2.Response(
            400, json={"error": {"message": "recorded"}}, request=request
        )

    def _sync2(self: Any, request: Any) -> Any:
        return _record2(request)

    async def _async2(self: Any, request: Any) -> Any:
        return _record2(request)

    httpx2.HTTPTransport.handle_request = _sync2
    httpx2.AsyncHTTPTransport.handle_async_request = _async2
except ImportError:
    pass


def version(name: str) -> str:
    return metadata.version(name)


def capture(call: Callable[[], Any]) -> dict[str, Any]:
    recorded.clear()
    try:
        call()
    except Exception as error:
        if not recorded:
            raise RuntimeError(f"nothing recorded: {error!r}"[:300]) from error
    return recorded[-1]


def write(
    provider: str,
    library: str,
    model: str,
    case: str,
    notes: str,
    body: dict[str, Any],
    *,
    out: Path = OUT,
    by: str = "record_peer_bodies.py",
) -> None:
    slug = library.split()[0]
    path = out / provider / f"peer-{slug}-{case}-request.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    document = {
        "provider": provider,
        "kind": "request",
        "source": (
            f"{library} {model}, request body recorded through a mocked httpx "
            f"transport by .auxiliary/scripts/{by} (case {case})"
        ),
        "notes": notes,
        "payload": body,
    }
    path.write_text(json.dumps(document, indent=2, ensure_ascii=False) + "\n")


# ------------------------------------------------------------------------- pydantic-ai


def pydantic_ai_cases() -> list[tuple[str, str, Any]]:
    from pydantic_ai import messages as m

    def call(name: str, args: Any, call_id: str) -> Any:
        return m.ToolCallPart(tool_name=name, args=args, tool_call_id=call_id)

    def ret(name: str, content: Any, call_id: str) -> Any:
        return m.ToolReturnPart(tool_name=name, content=content, tool_call_id=call_id)

    system = m.SystemPromptPart(content="You are a terse weather assistant.")
    cases: list[tuple[str, str, Any]] = [
        (
            "plain",
            "system prompt and one user text",
            [m.ModelRequest(parts=[system, m.UserPromptPart("Hello")])],
        ),
        (
            "tool-round",
            "a tool call with dict args and its string return, then the next prompt",
            [
                m.ModelRequest(parts=[system, m.UserPromptPart("Weather in Paris?")]),
                m.ModelResponse(
                    parts=[
                        call("get_weather", {"city": "Paris", "days": 2}, "call_abc123")
                    ]
                ),
                m.ModelRequest(
                    parts=[ret("get_weather", "Sunny, 21°C", "call_abc123")]
                ),
                m.ModelResponse(parts=[m.TextPart("It is sunny.")]),
                m.ModelRequest(parts=[m.UserPromptPart("And tomorrow?")]),
            ],
        ),
        (
            "json-args",
            "tool call args given as a JSON string with spaces and its dict return",
            [
                m.ModelRequest(parts=[m.UserPromptPart("Sum 1.50 and 2")]),
                m.ModelResponse(parts=[call("add", '{"b": 2, "a": 1.50}', "call_1")]),
                m.ModelRequest(parts=[ret("add", {"sum": 3.5, "ok": True}, "call_1")]),
            ],
        ),
        (
            "parallel",
            "two parallel tool calls and their returns",
            [
                m.ModelRequest(parts=[m.UserPromptPart("Weather in Paris and Rome?")]),
                m.ModelResponse(
                    parts=[
                        m.TextPart("Checking both."),
                        call("get_weather", {"city": "Paris"}, "call_p"),
                        call("get_weather", {"city": "Rome"}, "call_r"),
                    ]
                ),
                m.ModelRequest(
                    parts=[
                        ret("get_weather", "Sunny", "call_p"),
                        ret("get_weather", "Rain", "call_r"),
                    ]
                ),
            ],
        ),
        (
            "retry",
            "a tool call refused by validation (RetryPromptPart)",
            [
                m.ModelRequest(parts=[m.UserPromptPart("Weather?")]),
                m.ModelResponse(
                    parts=[call("get_weather", {"town": "Paris"}, "call_bad")]
                ),
                m.ModelRequest(
                    parts=[
                        m.RetryPromptPart(
                            content="city is required",
                            tool_name="get_weather",
                            tool_call_id="call_bad",
                        )
                    ]
                ),
            ],
        ),
        (
            "image-url",
            "a user prompt with an image URL",
            [
                m.ModelRequest(
                    parts=[
                        m.UserPromptPart(
                            [
                                "What is this?",
                                m.ImageUrl(url="https://example.com/cat.png"),
                            ]
                        )
                    ]
                )
            ],
        ),
        (
            "image-bytes",
            "a user prompt with inline PNG bytes",
            [
                m.ModelRequest(
                    parts=[
                        m.UserPromptPart(
                            [
                                "Describe",
                                m.BinaryContent(data=PNG, media_type="image/png"),
                            ]
                        )
                    ]
                )
            ],
        ),
        (
            "odd-id",
            "a tool call id with characters outside [a-zA-Z0-9_-]",
            [
                m.ModelRequest(parts=[m.UserPromptPart("Time?")]),
                m.ModelResponse(parts=[call("now", {}, "call:1/a.b")]),
                m.ModelRequest(parts=[ret("now", "12:00", "call:1/a.b")]),
            ],
        ),
        (
            "multi-turn",
            "several text turns",
            [
                m.ModelRequest(parts=[system, m.UserPromptPart("Hi")]),
                m.ModelResponse(parts=[m.TextPart("Hello! How can I help?")]),
                m.ModelRequest(parts=[m.UserPromptPart("Tell me a joke.")]),
                m.ModelResponse(
                    parts=[m.TextPart("Why did the chicken cross the road?")]
                ),
                m.ModelRequest(parts=[m.UserPromptPart("Why?")]),
            ],
        ),
        (
            "tool-image",
            "a tool returning an image (pydantic-ai moves it to a user message)",
            [
                m.ModelRequest(parts=[m.UserPromptPart("Show the chart")]),
                m.ModelResponse(parts=[call("chart", {"kind": "bar"}, "call_img")]),
                m.ModelRequest(
                    parts=[
                        ret(
                            "chart",
                            [
                                "Here it is",
                                m.BinaryContent(data=PNG, media_type="image/png"),
                            ],
                            "call_img",
                        )
                    ]
                ),
            ],
        ),
        (
            "unicode-args",
            "tool call args with unicode, nesting and floats",
            [
                m.ModelRequest(parts=[m.UserPromptPart("Book it")]),
                m.ModelResponse(
                    parts=[
                        call(
                            "book",
                            {
                                "name": "Zoë 東京",
                                "seats": [1, 2],
                                "price": 10.0,
                                "meta": {"vip": None},
                            },
                            "call_u",
                        )
                    ]
                ),
                m.ModelRequest(
                    parts=[ret("book", {"booked": True, "ref": "ÅB-1"}, "call_u")]
                ),
            ],
        ),
        (
            "document",
            "a user prompt with an inline PDF",
            [
                m.ModelRequest(
                    parts=[
                        m.UserPromptPart(
                            [
                                "Summarize",
                                m.BinaryContent(data=PDF, media_type="application/pdf"),
                            ]
                        )
                    ]
                )
            ],
        ),
    ]
    return cases


def pydantic_ai_models(
    responses: str = "gpt-4o",
) -> tuple[list[tuple[str, Any, str]], Any, str]:
    """pydantic-ai's four models (provider, model, description), the request
    parameters (one function tool) and the library's name and version."""
    from pydantic_ai.models import ModelRequestParameters
    from pydantic_ai.models.anthropic import AnthropicModel
    from pydantic_ai.models.google import GoogleModel
    from pydantic_ai.models.openai import OpenAIChatModel, OpenAIResponsesModel
    from pydantic_ai.providers.anthropic import AnthropicProvider
    from pydantic_ai.providers.google import GoogleProvider
    from pydantic_ai.providers.openai import OpenAIProvider
    from pydantic_ai.tools import ToolDefinition

    tools = [
        ToolDefinition(
            name="get_weather",
            description="Weather for a city",
            parameters_json_schema={
                "type": "object",
                "properties": {"city": {"type": "string"}},
            },
        )
    ]
    parameters = ModelRequestParameters(function_tools=tools)
    lib = f"pydantic-ai-slim {version('pydantic-ai-slim')}"
    models: list[tuple[str, Any, str]] = [
        (
            "openai-chat",
            OpenAIChatModel("gpt-4o", provider=OpenAIProvider(api_key="x")),
            f"OpenAIChatModel (openai {version('openai')})",
        ),
        (
            "openai-responses",
            OpenAIResponsesModel(responses, provider=OpenAIProvider(api_key="x")),
            f"OpenAIResponsesModel (openai {version('openai')})",
        ),
        (
            "anthropic",
            AnthropicModel(
                "claude-sonnet-4-5", provider=AnthropicProvider(api_key="x")
            ),
            f"AnthropicModel (anthropic {version('anthropic')})",
        ),
        (
            "gemini",
            GoogleModel(
                "gemini-2.5-flash",
                provider=GoogleProvider(api_key="x", http_client=httpx.AsyncClient()),
            ),
            f"GoogleModel (google-genai {version('google-genai')})",
        ),
    ]
    return models, parameters, lib


def run_pydantic_ai() -> None:
    from pydantic_ai.direct import model_request_sync

    models, parameters, lib = pydantic_ai_models()
    for provider, model, model_name in models:
        for case, notes, history in pydantic_ai_cases():
            try:
                body = capture(
                    lambda model=model, history=history: model_request_sync(
                        model, history, model_request_parameters=parameters
                    )
                )
            except RuntimeError as error:
                print("not recorded:", provider, case, error)
                continue
            write(provider, lib, model_name, case, notes, body)


# ------------------------------------------------------------------------- LangChain


def langchain_cases() -> list[tuple[str, str, list[Any]]]:
    from langchain_core.messages import (
        AIMessage,
        HumanMessage,
        SystemMessage,
        ToolMessage,
    )

    def ai_call(name: str, args: dict[str, Any], call_id: str, text: str = "") -> Any:
        return AIMessage(
            content=text,
            tool_calls=[
                {"name": name, "args": args, "id": call_id, "type": "tool_call"}
            ],
        )

    image_block = {
        "type": "image_url",
        "image_url": {"url": f"data:image/png;base64,{PNG_B64}"},
    }
    return [
        (
            "plain",
            "system message and one human text",
            [SystemMessage("Be terse."), HumanMessage("Hello")],
        ),
        (
            "tool-round",
            "a tool call and its string result, then the next prompt",
            [
                HumanMessage("Weather in Paris?"),
                ai_call("get_weather", {"city": "Paris"}, "call_abc"),
                ToolMessage("Sunny", tool_call_id="call_abc"),
                AIMessage("It is sunny."),
                HumanMessage("Thanks"),
            ],
        ),
        (
            "tool-text-blocks",
            "a tool message whose content is a list of text blocks",
            [
                HumanMessage("Weather?"),
                ai_call("get_weather", {"city": "Paris"}, "call_tb"),
                ToolMessage(
                    [{"type": "text", "text": "Sunny"}], tool_call_id="call_tb"
                ),
            ],
        ),
        (
            "tool-image",
            "a tool message whose content parts hold an image",
            [
                HumanMessage("Show the chart"),
                ai_call("chart", {"kind": "bar"}, "call_ti"),
                ToolMessage(
                    [{"type": "text", "text": "chart:"}, image_block],
                    tool_call_id="call_ti",
                ),
            ],
        ),
        (
            "image",
            "a human message with a data-URL image part",
            [HumanMessage([{"type": "text", "text": "What is this?"}, image_block])],
        ),
        (
            "empty-user",
            "a human message with empty content",
            [HumanMessage("Hi"), AIMessage("Hello"), HumanMessage("")],
        ),
        (
            "parallel",
            "two tool calls in one AI message and two results",
            [
                HumanMessage("Paris and Rome?"),
                AIMessage(
                    content="",
                    tool_calls=[
                        {
                            "name": "get_weather",
                            "args": {"city": "Paris"},
                            "id": "call_1",
                            "type": "tool_call",
                        },
                        {
                            "name": "get_weather",
                            "args": {"city": "Rome"},
                            "id": "call_2",
                            "type": "tool_call",
                        },
                    ],
                ),
                ToolMessage("Sunny", tool_call_id="call_1"),
                ToolMessage("Rain", tool_call_id="call_2"),
            ],
        ),
        (
            "odd-id",
            "a tool call id with characters outside [a-zA-Z0-9_-]",
            [
                HumanMessage("Time?"),
                ai_call("now", {}, "call:1/a.b"),
                ToolMessage("12:00", tool_call_id="call:1/a.b"),
            ],
        ),
        (
            "json-result",
            "a tool result that is JSON text, args with floats and unicode",
            [
                HumanMessage("Book"),
                ai_call(
                    "book", {"name": "Zoë", "price": 10.0, "seats": [1, 2]}, "call_j"
                ),
                ToolMessage('{"booked": true, "ref": "AB-1"}', tool_call_id="call_j"),
            ],
        ),
        (
            "multi-turn",
            "system and several text turns",
            [
                SystemMessage("You are kind."),
                HumanMessage("Hi"),
                AIMessage("Hello!"),
                HumanMessage("Joke?"),
                AIMessage("Knock knock."),
                HumanMessage("Who's there?"),
            ],
        ),
        (
            "tool-text-and-call",
            "an AI message with text and a tool call",
            [
                HumanMessage("Weather?"),
                ai_call(
                    "get_weather", {"city": "Oslo"}, "call_tc", text="Let me check."
                ),
                ToolMessage("Snow", tool_call_id="call_tc"),
            ],
        ),
        (
            "human-blocks",
            "a human message as a list of two text blocks",
            [
                HumanMessage(
                    [
                        {"type": "text", "text": "First."},
                        {"type": "text", "text": "Second."},
                    ]
                )
            ],
        ),
    ]


def run_langchain() -> None:
    from langchain_anthropic import ChatAnthropic
    from langchain_google_genai import ChatGoogleGenerativeAI
    from langchain_ollama import ChatOllama
    from langchain_openai import ChatOpenAI

    def tool_schema() -> dict[str, Any]:
        return {
            "type": "function",
            "function": {
                "name": "get_weather",
                "description": "Weather for a city",
                "parameters": {
                    "type": "object",
                    "properties": {"city": {"type": "string"}},
                },
            },
        }

    models: list[tuple[str, str, Any]] = [
        (
            "openai-chat",
            f"langchain-openai {version('langchain-openai')} ChatOpenAI",
            lambda: ChatOpenAI(model="gpt-4o", api_key="x", max_retries=0),
        ),
        (
            "openai-responses",
            f"langchain-openai {version('langchain-openai')} "
            "ChatOpenAI(use_responses_api=True)",
            lambda: ChatOpenAI(
                model="gpt-4o", api_key="x", max_retries=0, use_responses_api=True
            ),
        ),
        (
            "anthropic",
            f"langchain-anthropic {version('langchain-anthropic')} ChatAnthropic",
            lambda: ChatAnthropic(
                model="claude-sonnet-4-5", api_key="x", max_retries=0
            ),
        ),
        (
            "gemini",
            f"langchain-google-genai {version('langchain-google-genai')} "
            "ChatGoogleGenerativeAI",
            lambda: ChatGoogleGenerativeAI(
                model="gemini-2.5-flash", google_api_key="x", max_retries=0
            ),
        ),
        (
            "ollama",
            f"langchain-ollama {version('langchain-ollama')} ChatOllama",
            lambda: ChatOllama(model="llama3.2"),
        ),
    ]
    for provider, model_name, make in models:
        lib = f"langchain (langchain-core {version('langchain-core')})"
        for case, notes, history in langchain_cases():
            model = make().bind_tools([tool_schema()])
            try:
                body = capture(
                    lambda model=model, history=history: model.invoke(history)
                )
            except RuntimeError as error:
                print("not recorded:", provider, case, error)
                continue
            write(provider, lib, model_name, case, notes, body)


if __name__ == "__main__":
    warnings.simplefilter("ignore")
    run_pydantic_ai()
    run_langchain()
