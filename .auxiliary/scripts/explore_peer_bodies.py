"""Record many more peer request bodies and check their round trips.

Not run by the tests. A sibling of ``record_peer_bodies.py`` (whose mocked
transports and ``capture`` it uses): it gives pydantic-ai's and LangChain's real
models, the ``ollama`` client and the ``google-genai`` SDK a wide set of
histories (system prompts in the middle, thinking with signatures, native tools,
tool returns of every JSON type, retries, audio/video/documents, cache control,
LangChain's v1 content blocks, unicode, empty and long texts ...), writes each
body to ``DIRECTORY/<provider>/peer-<library>-<case>-request.json`` (the corpus
wrapper format) and, with ``--check``, runs every body through
``parse_request`` -> ``render_request`` for its own provider (JSON-exact, as
``tests/test_providers_exact.py`` compares) and renders it for the four others,
validating each render with the target SDK's request types (as
``tests/test_providers_matrix.py`` does).

Run from the repository root::

    python .auxiliary/scripts/explore_peer_bodies.py record /tmp/peers
    python .auxiliary/scripts/explore_peer_bodies.py check /tmp/peers

A body worth keeping is copied into ``tests/data/providers/<provider>/``.
"""

from __future__ import annotations

import base64
import json
import sys
import warnings
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
sys.path[:0] = [str(HERE), str(ROOT), str(ROOT / "sources")]

import record_peer_bodies as rec  # noqa: E402  (patches httpx's transports)

PNG, PNG_B64, PDF = rec.PNG, rec.PNG_B64, rec.PDF
WAV = (
    b"RIFF$\x00\x00\x00WAVEfmt \x10\x00\x00\x00\x01\x00\x01\x00D\xac\x00\x00"
    b"\x88X\x01\x00\x02\x00\x10\x00data\x00\x00\x00\x00"
)
MP4 = b"\x00\x00\x00\x18ftypmp42\x00\x00\x00\x00mp42isom"
LONG = "Lorem ipsum dolor sit amet, consectetur adipiscing elit. " * 400
UNICODE = (
    "Zoë 東京 🚀 — “quotes” \\ back\\slash \u2028 line\nnew\ttab "
    "\u00e9\u0301 \U0001f9d1\u200d\U0001f680"
)
SIG = base64.b64encode(b"signature-bytes-\x00\xff" * 3).decode()


def write(
    directory: Path,
    provider: str,
    library: str,
    model: str,
    case: str,
    notes: str,
    body: dict[str, Any],
) -> None:
    by = "explore_peer_bodies.py, with record_peer_bodies.py's transports"
    rec.write(provider, library, model, case, notes, body, out=directory, by=by)


# ------------------------------------------------------------------------- pydantic-ai


def pydantic_ai_cases() -> list[tuple[str, str, Any]]:
    from pydantic_ai import messages as m

    def call(name: str, args: Any, call_id: str, **kw: Any) -> Any:
        return m.ToolCallPart(tool_name=name, args=args, tool_call_id=call_id, **kw)

    def ret(name: str, content: Any, call_id: str) -> Any:
        return m.ToolReturnPart(tool_name=name, content=content, tool_call_id=call_id)

    def user(*content: Any) -> Any:
        return m.UserPromptPart(list(content) if len(content) > 1 else content[0])

    def request(*parts: Any) -> Any:
        return m.ModelRequest(parts=list(parts))

    def response(*parts: Any, provider: str | None = None) -> Any:
        return m.ModelResponse(parts=list(parts), provider_name=provider)

    def tool_round(value: Any) -> list[Any]:
        return [
            request(user("Run it")),
            response(call("run", {"x": 1}, "call_v")),
            request(ret("run", value, "call_v")),
        ]

    sys1 = m.SystemPromptPart(content="You are terse.")
    sys2 = m.SystemPromptPart(content="Answer in French.")
    cases: list[tuple[str, str, Any]] = [
        (
            "two-systems",
            "two system prompts, then a user prompt",
            [request(sys1, sys2, user("Hello"))],
        ),
        (
            "system-middle",
            "a system prompt in the middle of the history",
            [
                request(sys1, user("Hi")),
                response(m.TextPart("Hello")),
                request(m.SystemPromptPart(content="Now be formal."), user("Again")),
            ],
        ),
        (
            "return-dict",
            "a tool return that is a nested dict",
            tool_round({"a": [1, 2.5, None], "b": {"c": "é"}, "d": True}),
        ),
        ("return-list", "a tool return that is a list", tool_round([1, "two", 3.0])),
        ("return-int", "a tool return that is a number", tool_round(42)),
        ("return-float", "a tool return that is a float", tool_round(2.50)),
        ("return-none", "a tool return that is None", tool_round(None)),
        ("return-bool", "a tool return that is False", tool_round(False)),
        ("return-empty", "a tool return that is an empty string", tool_round("")),
        (
            "return-json-text",
            "a tool return that is JSON text",
            tool_round('{"b": 1, "a": [true]}'),
        ),
        (
            "retry-plain",
            "a RetryPromptPart with no tool (output validation)",
            [
                request(user("Give a number")),
                response(m.TextPart("five")),
                request(m.RetryPromptPart(content="Please answer with digits")),
            ],
        ),
        (
            "retry-details",
            "a RetryPromptPart with validation error details",
            [
                request(user("Weather?")),
                response(call("get_weather", {"town": 1}, "call_rd")),
                request(
                    m.RetryPromptPart(
                        content=[
                            {
                                "type": "missing",
                                "loc": ("city",),
                                "msg": "Field required",
                                "input": {"town": 1},
                            }
                        ],
                        tool_name="get_weather",
                        tool_call_id="call_rd",
                    )
                ),
            ],
        ),
        (
            "text-and-calls",
            "an assistant response with text, two calls and text after",
            [
                request(user("Paris and Rome?")),
                response(
                    m.TextPart("Checking."),
                    call("get_weather", {"city": "Paris"}, "call_a"),
                    call("get_weather", '{"city":"Rome"}', "call_b"),
                ),
                request(
                    ret("get_weather", "Sunny", "call_a"),
                    ret("get_weather", "Rain", "call_b"),
                    user("And Oslo?"),
                ),
            ],
        ),
        (
            "two-texts",
            "an assistant response with two text parts",
            [
                request(user("Hi")),
                response(m.TextPart("Hello."), m.TextPart("How are you?")),
                request(user("Fine")),
            ],
        ),
        (
            "empty-texts",
            "empty user prompt and empty assistant text",
            [
                request(user("")),
                response(m.TextPart("")),
                request(user("Hello?")),
            ],
        ),
        (
            "unicode-long",
            "unicode and a very long text",
            [request(user(UNICODE)), response(m.TextPart(LONG)), request(user("ok"))],
        ),
        (
            "no-args",
            "a tool call with None args and empty-string args",
            [
                request(user("Now?")),
                response(call("now", None, "call_n1"), call("now", "", "call_n2")),
                request(ret("now", "1", "call_n1"), ret("now", "2", "call_n2")),
            ],
        ),
        (
            "args-formatting",
            "tool call args as JSON text with odd spacing, key order and numbers",
            [
                request(user("Add")),
                response(
                    call(
                        "add",
                        '{ "b" : 2.0 ,"a":1e3, "c": "\\u00e9", "d": [ ] }',
                        "call_fmt",
                    )
                ),
                request(ret("add", "ok", "call_fmt")),
            ],
        ),
        (
            "thinking-anthropic",
            "Anthropic thinking with a signature, text and a tool call in history",
            [
                request(user("Weather?")),
                response(
                    m.ThinkingPart(
                        "Let me think.", signature=SIG, provider_name="anthropic"
                    ),
                    m.TextPart("Checking."),
                    call("get_weather", {"city": "Paris"}, "toolu_01"),
                    provider="anthropic",
                ),
                request(ret("get_weather", "Sunny", "toolu_01")),
            ],
        ),
        (
            "redacted-thinking",
            "Anthropic redacted thinking in history",
            [
                request(user("Hi")),
                response(
                    m.ThinkingPart(
                        "",
                        id="redacted_thinking",
                        signature="EmwKAhgBEgy3va3pzix",
                        provider_name="anthropic",
                    ),
                    m.TextPart("Hello"),
                    provider="anthropic",
                ),
                request(user("Again")),
            ],
        ),
        (
            "thinking-openai",
            "OpenAI Responses reasoning with encrypted content and ids",
            [
                request(user("Weather?")),
                response(
                    m.ThinkingPart(
                        "Summary of thought.",
                        id="rs_123",
                        signature="gAAAAABencrypted==",
                        provider_name="openai",
                    ),
                    m.TextPart("Checking.", id="msg_456", provider_name="openai"),
                    call(
                        "get_weather",
                        {"city": "Paris"},
                        "call_o1",
                        id="fc_789",
                        provider_name="openai",
                    ),
                    provider="openai",
                ),
                request(ret("get_weather", "Sunny", "call_o1")),
            ],
        ),
        (
            "thinking-gemini",
            "Gemini thought and thought signatures in history",
            [
                request(user("Weather?")),
                response(
                    m.ThinkingPart("Thinking about it.", provider_name="google-gla"),
                    m.TextPart(
                        "Checking.",
                        provider_name="google-gla",
                        provider_details={"thought_signature": SIG},
                    ),
                    call(
                        "get_weather",
                        {"city": "Paris"},
                        "call_g1",
                        provider_name="google-gla",
                        provider_details={"thought_signature": SIG},
                    ),
                    provider="google-gla",
                ),
                request(ret("get_weather", "Sunny", "call_g1")),
            ],
        ),
        (
            "thinking-foreign",
            "a thinking part from another provider in history",
            [
                request(user("Hi")),
                response(
                    m.ThinkingPart("Hmm.", signature="abc", provider_name="other"),
                    m.TextPart("Hello"),
                    provider="other",
                ),
                request(user("Again")),
            ],
        ),
        (
            "native-web-search",
            "a native web search call and its return in history",
            [
                request(user("News?")),
                response(
                    m.NativeToolCallPart(
                        tool_name="web_search",
                        args={"query": "news"},
                        tool_call_id="srvtoolu_01",
                        provider_name="anthropic",
                    ),
                    m.NativeToolReturnPart(
                        tool_name="web_search",
                        content=[
                            {
                                "type": "web_search_result",
                                "url": "https://example.com",
                                "title": "Example",
                                "encrypted_content": "enc",
                                "page_age": None,
                            }
                        ],
                        tool_call_id="srvtoolu_01",
                        provider_name="anthropic",
                    ),
                    m.TextPart("Here is the news."),
                    provider="anthropic",
                ),
                request(user("More")),
            ],
        ),
        (
            "native-openai-web-search",
            "an OpenAI native web search call in history",
            [
                request(user("News?")),
                response(
                    m.NativeToolCallPart(
                        tool_name="web_search",
                        args={"type": "search", "query": "news"},
                        tool_call_id="ws_01",
                        provider_name="openai",
                    ),
                    m.NativeToolReturnPart(
                        tool_name="web_search",
                        content={"status": "completed"},
                        tool_call_id="ws_01",
                        provider_name="openai",
                    ),
                    m.TextPart("News.", id="msg_1", provider_name="openai"),
                    provider="openai",
                ),
                request(user("More")),
            ],
        ),
        (
            "image-detail",
            "an image URL with detail (vendor_metadata)",
            [
                request(
                    user(
                        "What?",
                        m.ImageUrl(
                            url="https://example.com/a.jpg",
                            vendor_metadata={"detail": "high"},
                        ),
                    )
                )
            ],
        ),
        (
            "audio-url",
            "an audio URL",
            [request(user("Transcribe", m.AudioUrl(url="https://example.com/a.mp3")))],
        ),
        (
            "audio-bytes",
            "inline WAV bytes",
            [request(user("Transcribe", m.BinaryContent(WAV, media_type="audio/wav")))],
        ),
        (
            "video-url",
            "a video URL",
            [request(user("Describe", m.VideoUrl(url="https://example.com/v.mp4")))],
        ),
        (
            "video-bytes",
            "inline MP4 bytes",
            [request(user("Describe", m.BinaryContent(MP4, media_type="video/mp4")))],
        ),
        (
            "document-url",
            "a PDF by URL",
            [
                request(
                    user("Summarize", m.DocumentUrl(url="https://example.com/d.pdf"))
                )
            ],
        ),
        (
            "text-document",
            "a text/plain document as bytes",
            [
                request(
                    user(
                        "Summarize",
                        m.BinaryContent(b"plain notes\n", media_type="text/plain"),
                    )
                )
            ],
        ),
        (
            "youtube",
            "a YouTube video URL",
            [
                request(
                    user(
                        "Describe",
                        m.VideoUrl(url="https://www.youtube.com/watch?v=dQw4w9WgXcQ"),
                    )
                )
            ],
        ),
        (
            "cache-point",
            "a CachePoint in the user prompt",
            [request(sys1, user("Long context", m.CachePoint(), "Question?"))],
        ),
        (
            "tool-return-multimodal",
            "a tool return of a document and text",
            tool_round(["see", m.BinaryContent(PDF, media_type="application/pdf")]),
        ),
        (
            "user-images",
            "several images and texts in one prompt",
            [
                request(
                    user(
                        "one",
                        m.BinaryContent(PNG, media_type="image/png"),
                        "two",
                        m.ImageUrl(url="https://example.com/b.png"),
                    )
                )
            ],
        ),
        (
            "user-then-user",
            "two user prompt parts in one request",
            [request(user("First"), user("Second"))],
        ),
        (
            "instructions",
            "a request with instructions and a system prompt",
            [m.ModelRequest(parts=[sys1, user("Hi")], instructions="Use short words.")],
        ),
        (
            "thinking-plain",
            "a thinking part without signature or provider in history",
            [
                request(user("Hi")),
                response(m.ThinkingPart("Hmm, a greeting."), m.TextPart("Hello")),
                request(user("Again")),
            ],
        ),
        (
            "thinking-openai-chat",
            "a thinking part sent back to an OpenAI-compatible chat model",
            [
                request(user("Hi")),
                response(
                    m.ThinkingPart(
                        "Hmm.", provider_name="openai", id="reasoning_content"
                    ),
                    m.TextPart("Hello"),
                    provider="openai",
                ),
                request(user("Again")),
            ],
        ),
        (
            "thinking-openai-summaries",
            "an OpenAI reasoning item split in two summaries, no encrypted content",
            [
                request(user("Hi")),
                response(
                    m.ThinkingPart("First.", id="rs_9", provider_name="openai"),
                    m.ThinkingPart("Second.", id="rs_9", provider_name="openai"),
                    m.TextPart("Hello", id="msg_9", provider_name="openai"),
                    provider="openai",
                ),
                request(user("Again")),
            ],
        ),
        (
            "file-part",
            "a model-generated image (FilePart) in history",
            [
                request(user("Draw")),
                response(
                    m.FilePart(m.BinaryContent(PNG, media_type="image/png")),
                    m.TextPart("Here."),
                ),
                request(user("Nice")),
            ],
        ),
        (
            "uploaded-file",
            "an uploaded file reference",
            [
                request(
                    user(
                        "Read",
                        m.UploadedFile(
                            file_id="file-abc123",
                            provider_name="openai",
                            media_type="application/pdf",
                        ),
                    )
                )
            ],
        ),
        (
            "binary-image-detail",
            "inline image bytes with detail",
            [
                request(
                    user(
                        "What?",
                        m.BinaryContent(
                            PNG,
                            media_type="image/png",
                            vendor_metadata={"detail": "low"},
                        ),
                    )
                )
            ],
        ),
        (
            "return-image-only",
            "a tool return that is only an image",
            tool_round(m.BinaryContent(PNG, media_type="image/png")),
        ),
        (
            "return-nested-unicode",
            "a tool return dict with unicode keys and floats",
            tool_round({"ключ": 1.0, "emoji🚀": [0.1, 1e-07, 12345678901234567890]}),
        ),
        (
            "retry-then-answer",
            "a retried call, its second attempt and the answer",
            [
                request(user("Weather?")),
                response(call("get_weather", {"town": "Paris"}, "call_1")),
                request(
                    m.RetryPromptPart(
                        content="city is required",
                        tool_name="get_weather",
                        tool_call_id="call_1",
                    )
                ),
                response(call("get_weather", {"city": "Paris"}, "call_2")),
                request(ret("get_weather", "Sunny", "call_2")),
                response(m.TextPart("Sunny.")),
                request(user("Thanks")),
            ],
        ),
        (
            "results-swapped",
            "two calls answered in reverse order",
            [
                request(user("A and B?")),
                response(call("f", {"n": 1}, "call_1"), call("f", {"n": 2}, "call_2")),
                request(ret("f", "two", "call_2"), ret("f", "one", "call_1")),
            ],
        ),
        (
            "unanswered-call",
            "a call with no result, then a new user prompt",
            [
                request(user("Go")),
                response(call("f", {}, "call_u")),
                request(user("Never mind")),
            ],
        ),
        (
            "orphan-result",
            "a tool return whose call is not in the history",
            [request(ret("f", "late", "call_gone"), user("And?"))],
        ),
        (
            "duplicate-ids",
            "two rounds reusing the same call id",
            [
                request(user("Go")),
                response(call("f", {"n": 1}, "same")),
                request(ret("f", "1", "same")),
                response(call("f", {"n": 2}, "same")),
                request(ret("f", "2", "same")),
            ],
        ),
        (
            "user-before-result",
            "a user prompt before the tool return in one request",
            [
                request(user("Go")),
                response(call("f", {}, "call_o")),
                request(user("Also this"), ret("f", "ok", "call_o")),
            ],
        ),
        (
            "cache-point-tool",
            "a CachePoint after a tool return's request",
            [
                request(user("Run")),
                response(call("run", {}, "call_c")),
                request(
                    ret("run", "done", "call_c"), user("Next", m.CachePoint(ttl="1h"))
                ),
            ],
        ),
    ]
    return cases


def pydantic_ai_settings_cases() -> list[tuple[str, str, Any, dict[str, Any]]]:
    """Cases run with model settings that change the conversation fields."""
    from pydantic_ai import messages as m

    history = [
        m.ModelRequest(
            parts=[m.SystemPromptPart(content="Rules."), m.UserPromptPart("Hi")]
        ),
        m.ModelResponse(parts=[m.TextPart("Hello")]),
        m.ModelRequest(parts=[m.UserPromptPart("Weather?")]),
        m.ModelResponse(
            parts=[
                m.ToolCallPart(
                    tool_name="get_weather", args={"city": "Oslo"}, tool_call_id="t1"
                )
            ]
        ),
        m.ModelRequest(
            parts=[
                m.ToolReturnPart(
                    tool_name="get_weather", content="Snow", tool_call_id="t1"
                )
            ]
        ),
    ]
    return [
        (
            "cache-settings",
            "anthropic_cache_instructions and anthropic_cache_messages",
            history,
            {"anthropic_cache_instructions": True, "anthropic_cache_messages": "1h"},
        ),
        (
            "send-reasoning-ids",
            "openai_send_reasoning_ids off",
            history,
            {"openai_send_reasoning_ids": False},
        ),
    ]


def run_pydantic_ai(directory: Path) -> None:
    from pydantic_ai.direct import model_request_sync

    models, parameters, lib = rec.pydantic_ai_models(responses="gpt-5")
    from pydantic_ai.models.openai import OpenAIChatModel
    from pydantic_ai.providers.openai import OpenAIProvider

    o3 = OpenAIChatModel("o3", provider=OpenAIProvider(api_key="x"))
    models.append(("openai-chat", o3, "OpenAIChatModel('o3')"))
    for provider, model, model_name in models:
        prefix = "o3-" if model is o3 else ""
        for case, notes, history in pydantic_ai_cases():
            try:
                body = rec.capture(
                    lambda model=model, history=history: model_request_sync(
                        model, history, model_request_parameters=parameters
                    )
                )
            except Exception as error:
                print("not recorded:", provider, "pydantic-ai", case, repr(error)[:200])
                continue
            write(directory, provider, lib, model_name, prefix + case, notes, body)
        for case, notes, history, settings in pydantic_ai_settings_cases():
            try:
                body = rec.capture(
                    lambda model=model, history=history, settings=settings: (
                        model_request_sync(
                            model,
                            history,
                            model_settings=settings,
                            model_request_parameters=parameters,
                        )
                    )
                )
            except Exception as error:
                print("not recorded:", provider, "pydantic-ai", case, repr(error)[:200])
                continue
            write(directory, provider, lib, model_name, prefix + case, notes, body)


# ------------------------------------------------------------------------- LangChain


def langchain_cases(
    provider: str, *, everywhere: bool = True
) -> list[tuple[str, str, list[Any]]]:
    """The histories; with ``everywhere``, each provider's own shapes are given
    to every model (a history recorded with one provider, sent to another)."""
    from langchain_core.messages import (
        AIMessage,
        HumanMessage,
        SystemMessage,
        ToolMessage,
    )

    def ai_call(name: str, args: dict[str, Any], call_id: str, text: Any = "") -> Any:
        return AIMessage(
            content=text,
            tool_calls=[
                {"name": name, "args": args, "id": call_id, "type": "tool_call"}
            ],
        )

    def tool_round(content: Any, **kw: Any) -> list[Any]:
        return [
            HumanMessage("Run it"),
            ai_call("run", {"x": 1}, "call_v"),
            ToolMessage(content, tool_call_id="call_v", **kw),
        ]

    cases: list[tuple[str, str, list[Any]]] = [
        (
            "two-systems",
            "two system messages first",
            [SystemMessage("Be terse."), SystemMessage("Be kind."), HumanMessage("Hi")],
        ),
        (
            "system-middle",
            "a system message in the middle",
            [
                SystemMessage("Be terse."),
                HumanMessage("Hi"),
                AIMessage("Hello"),
                SystemMessage("Now be formal."),
                HumanMessage("Again"),
            ],
        ),
        (
            "system-blocks",
            "a system message as a list of text blocks",
            [
                SystemMessage(
                    [
                        {"type": "text", "text": "Rule one."},
                        {"type": "text", "text": "Rule two."},
                    ]
                ),
                HumanMessage("Hi"),
            ],
        ),
        ("result-number", "a tool result '42'", tool_round("42")),
        ("result-null", "a tool result 'null'", tool_round("null")),
        ("result-list-json", "a tool result JSON list text", tool_round("[1, 2, 3]")),
        ("result-empty", "an empty tool result", tool_round("")),
        (
            "result-error",
            "a tool result with status error",
            tool_round("boom: failed", status="error"),
        ),
        (
            "result-two-text-blocks",
            "a tool result of two text blocks",
            tool_round([{"type": "text", "text": "a"}, {"type": "text", "text": "b"}]),
        ),
        (
            "result-string-list",
            "a tool result as a list of strings",
            tool_round(["a", "b"]),
        ),
        (
            "ai-blocks",
            "an AI message whose content is a list of text blocks",
            [
                HumanMessage("Hi"),
                AIMessage(
                    [
                        {"type": "text", "text": "Hello."},
                        {"type": "text", "text": "Yes?"},
                    ]
                ),
                HumanMessage("Bye"),
            ],
        ),
        (
            "ai-text-two-calls",
            "an AI message with text and two calls",
            [
                HumanMessage("Paris and Rome?"),
                AIMessage(
                    content="Checking both.",
                    tool_calls=[
                        {
                            "name": "get_weather",
                            "args": {"city": "Paris"},
                            "id": "call_1",
                            "type": "tool_call",
                        },
                        {
                            "name": "get_weather",
                            "args": {"city": "Rome", "n": 1.5},
                            "id": "call_2",
                            "type": "tool_call",
                        },
                    ],
                ),
                ToolMessage("Sunny", tool_call_id="call_1"),
                ToolMessage("Rain", tool_call_id="call_2"),
                HumanMessage("Thanks"),
            ],
        ),
        (
            "empty-ai",
            "an empty AI message between human messages",
            [HumanMessage("Hi"), AIMessage(""), HumanMessage("Hello?")],
        ),
        (
            "unicode-long",
            "unicode and very long texts",
            [HumanMessage(UNICODE), AIMessage(LONG), HumanMessage("ok")],
        ),
        (
            "image-detail",
            "an image URL part with detail",
            [
                HumanMessage(
                    [
                        {"type": "text", "text": "What?"},
                        {
                            "type": "image_url",
                            "image_url": {
                                "url": "https://example.com/a.jpg",
                                "detail": "low",
                            },
                        },
                    ]
                )
            ],
        ),
        (
            "image-url-string",
            "an image_url part whose value is a plain string",
            [
                HumanMessage(
                    [
                        {"type": "text", "text": "What?"},
                        {
                            "type": "image_url",
                            "image_url": f"data:image/png;base64,{PNG_B64}",
                        },
                    ]
                )
            ],
        ),
        (
            "std-image-base64",
            "a standard image block with base64 data",
            [
                HumanMessage(
                    [
                        {"type": "text", "text": "What?"},
                        {"type": "image", "base64": PNG_B64, "mime_type": "image/png"},
                    ]
                )
            ],
        ),
        (
            "std-image-url",
            "a standard image block with a URL",
            [
                HumanMessage(
                    [
                        {"type": "text", "text": "What?"},
                        {"type": "image", "url": "https://example.com/a.png"},
                    ]
                )
            ],
        ),
        (
            "std-file-pdf",
            "a standard file block with base64 PDF",
            [
                HumanMessage(
                    [
                        {"type": "text", "text": "Summarize"},
                        {
                            "type": "file",
                            "base64": base64.b64encode(PDF).decode(),
                            "mime_type": "application/pdf",
                            "filename": "doc.pdf",
                        },
                    ]
                )
            ],
        ),
        (
            "std-audio",
            "a standard audio block with base64 WAV",
            [
                HumanMessage(
                    [
                        {"type": "text", "text": "Transcribe"},
                        {
                            "type": "audio",
                            "base64": base64.b64encode(WAV).decode(),
                            "mime_type": "audio/wav",
                        },
                    ]
                )
            ],
        ),
        (
            "ai-reasoning-v1",
            "an AI message with v1 reasoning and text blocks",
            [
                HumanMessage("Hi"),
                AIMessage(
                    content=[
                        {"type": "reasoning", "reasoning": "Think."},
                        {"type": "text", "text": "Hello"},
                    ],
                    response_metadata={"output_version": "v1"},
                ),
                HumanMessage("Again"),
            ],
        ),
        (
            "ai-v1-tool-call",
            "an AI message in v1 content blocks with a tool call",
            [
                HumanMessage("Weather?"),
                AIMessage(
                    content=[
                        {"type": "text", "text": "Checking."},
                        {
                            "type": "tool_call",
                            "id": "call_v1",
                            "name": "get_weather",
                            "args": {"city": "Oslo"},
                        },
                    ],
                    tool_calls=[
                        {
                            "name": "get_weather",
                            "args": {"city": "Oslo"},
                            "id": "call_v1",
                            "type": "tool_call",
                        }
                    ],
                    response_metadata={"output_version": "v1"},
                ),
                ToolMessage("Snow", tool_call_id="call_v1"),
            ],
        ),
    ]
    cases += [
        (
            "results-swapped",
            "two calls answered in reverse order",
            [
                HumanMessage("A and B?"),
                AIMessage(
                    content="",
                    tool_calls=[
                        {
                            "name": "f",
                            "args": {"n": 1},
                            "id": "c1",
                            "type": "tool_call",
                        },
                        {
                            "name": "f",
                            "args": {"n": 2},
                            "id": "c2",
                            "type": "tool_call",
                        },
                    ],
                ),
                ToolMessage("two", tool_call_id="c2"),
                ToolMessage("one", tool_call_id="c1"),
            ],
        ),
        (
            "unanswered-call",
            "a call with no result, then a new human message",
            [HumanMessage("Go"), ai_call("f", {}, "c_u"), HumanMessage("Never mind")],
        ),
        (
            "orphan-result",
            "a tool message whose call is not in the history",
            [HumanMessage("Go"), ToolMessage("late", tool_call_id="gone")],
        ),
        (
            "human-between",
            "a human message between a call and its result",
            [
                HumanMessage("Go"),
                ai_call("f", {}, "c_b"),
                HumanMessage("Hurry"),
                ToolMessage("ok", tool_call_id="c_b"),
            ],
        ),
        (
            "names",
            "human and AI messages with a name",
            [
                HumanMessage("Hi", name="alice"),
                AIMessage("Hello", name="bot"),
                HumanMessage("Bye", name="alice"),
            ],
        ),
        (
            "consecutive-humans",
            "two human messages in a row",
            [
                HumanMessage("One"),
                HumanMessage("Two"),
                AIMessage("Ok"),
                HumanMessage("3"),
            ],
        ),
        (
            "ai-calls-no-text-blocks",
            "an AI message with an empty list content and a call",
            [
                HumanMessage("Weather?"),
                AIMessage(
                    content=[],
                    tool_calls=[
                        {
                            "name": "get_weather",
                            "args": {},
                            "id": "call_e",
                            "type": "tool_call",
                        }
                    ],
                ),
                ToolMessage("Sunny", tool_call_id="call_e", name="get_weather"),
            ],
        ),
        (
            "result-json-object",
            "a tool result that is a JSON object with nesting and unicode",
            tool_round('{"temp": 21.0, "city": "Zürich", "tags": ["a", null]}'),
        ),
        (
            "result-artifact",
            "a tool message with an artifact and a name",
            [
                HumanMessage("Run it"),
                ai_call("run", {"x": 1}, "call_v"),
                ToolMessage(
                    "done", tool_call_id="call_v", name="run", artifact={"raw": 1}
                ),
            ],
        ),
        (
            "human-image-text-order",
            "an image before text in a human message",
            [
                HumanMessage(
                    [
                        {
                            "type": "image_url",
                            "image_url": {"url": f"data:image/jpeg;base64,{PNG_B64}"},
                        },
                        {"type": "text", "text": "What?"},
                    ]
                )
            ],
        ),
    ]
    if provider == "anthropic" or everywhere:
        cases += [
            (
                "thinking",
                "an AI message with a thinking block with signature, text and tool_use",
                [
                    HumanMessage("Weather?"),
                    AIMessage(
                        content=[
                            {
                                "type": "thinking",
                                "thinking": "Let me see.",
                                "signature": SIG,
                            },
                            {"type": "text", "text": "Checking."},
                            {
                                "type": "tool_use",
                                "id": "toolu_01",
                                "name": "get_weather",
                                "input": {"city": "Paris"},
                            },
                        ],
                        tool_calls=[
                            {
                                "name": "get_weather",
                                "args": {"city": "Paris"},
                                "id": "toolu_01",
                                "type": "tool_call",
                            }
                        ],
                    ),
                    ToolMessage("Sunny", tool_call_id="toolu_01"),
                ],
            ),
            (
                "redacted-thinking",
                "an AI message with a redacted thinking block",
                [
                    HumanMessage("Hi"),
                    AIMessage(
                        content=[
                            {"type": "redacted_thinking", "data": "EmwKAhgB"},
                            {"type": "text", "text": "Hello"},
                        ]
                    ),
                    HumanMessage("Again"),
                ],
            ),
            (
                "cache-control",
                "cache_control on system, human and tool blocks",
                [
                    SystemMessage(
                        [
                            {
                                "type": "text",
                                "text": "Long rules",
                                "cache_control": {"type": "ephemeral"},
                            }
                        ]
                    ),
                    HumanMessage(
                        [
                            {
                                "type": "text",
                                "text": "Question",
                                "cache_control": {"type": "ephemeral", "ttl": "1h"},
                            }
                        ]
                    ),
                    ai_call("get_weather", {"city": "Paris"}, "toolu_cc"),
                    ToolMessage(
                        [
                            {
                                "type": "text",
                                "text": "Sunny",
                                "cache_control": {"type": "ephemeral"},
                            }
                        ],
                        tool_call_id="toolu_cc",
                    ),
                ],
            ),
            (
                "server-tool",
                "server tool use and web search result blocks in an AI message",
                [
                    HumanMessage("News?"),
                    AIMessage(
                        content=[
                            {
                                "type": "server_tool_use",
                                "id": "srvtoolu_1",
                                "name": "web_search",
                                "input": {"query": "news"},
                            },
                            {
                                "type": "web_search_tool_result",
                                "tool_use_id": "srvtoolu_1",
                                "content": [
                                    {
                                        "type": "web_search_result",
                                        "url": "https://e.com",
                                        "title": "E",
                                        "encrypted_content": "x",
                                        "page_age": None,
                                    }
                                ],
                            },
                            {
                                "type": "text",
                                "text": "News.",
                                "citations": [
                                    {
                                        "type": "web_search_result_location",
                                        "url": "https://e.com",
                                        "title": "E",
                                        "encrypted_index": "i",
                                        "cited_text": "n",
                                    }
                                ],
                            },
                        ]
                    ),
                    HumanMessage("More"),
                ],
            ),
            (
                "tool-result-document",
                "a tool result holding a document block",
                tool_round(
                    [
                        {"type": "text", "text": "doc"},
                        {
                            "type": "document",
                            "source": {
                                "type": "text",
                                "media_type": "text/plain",
                                "data": "hello",
                            },
                        },
                    ]
                ),
            ),
            (
                "document-url",
                "an Anthropic document block by URL with citations",
                [
                    HumanMessage(
                        [
                            {
                                "type": "document",
                                "source": {"type": "url", "url": "https://e.com/d.pdf"},
                                "citations": {"enabled": True},
                                "title": "D",
                            },
                            {"type": "text", "text": "Summarize"},
                        ]
                    )
                ],
            ),
            (
                "native-image-base64",
                "Anthropic-native base64 image in a human message and a tool result",
                [
                    HumanMessage(
                        [
                            {
                                "type": "image",
                                "source": {
                                    "type": "base64",
                                    "media_type": "image/png",
                                    "data": PNG_B64,
                                },
                            },
                            {"type": "text", "text": "and?"},
                        ]
                    ),
                    ai_call("chart", {}, "toolu_img"),
                    ToolMessage(
                        [
                            {
                                "type": "image",
                                "source": {
                                    "type": "base64",
                                    "media_type": "image/png",
                                    "data": PNG_B64,
                                },
                            }
                        ],
                        tool_call_id="toolu_img",
                    ),
                ],
            ),
            (
                "search-result",
                "a tool result holding a search_result block",
                tool_round(
                    [
                        {
                            "type": "search_result",
                            "source": "https://e.com",
                            "title": "E",
                            "content": [{"type": "text", "text": "found"}],
                            "citations": {"enabled": True},
                        }
                    ]
                ),
            ),
            (
                "thinking-only-call",
                "thinking then a tool_use only, empty text",
                [
                    HumanMessage("Weather?"),
                    AIMessage(
                        content=[
                            {"type": "thinking", "thinking": "", "signature": SIG},
                            {"type": "text", "text": ""},
                            {
                                "type": "tool_use",
                                "id": "toolu_t",
                                "name": "get_weather",
                                "input": {"city": "X"},
                            },
                        ],
                        tool_calls=[
                            {
                                "name": "get_weather",
                                "args": {"city": "X"},
                                "id": "toolu_t",
                                "type": "tool_call",
                            }
                        ],
                    ),
                    ToolMessage("ok", tool_call_id="toolu_t"),
                ],
            ),
            (
                "image-source-url",
                "an Anthropic image block by URL",
                [
                    HumanMessage(
                        [
                            {
                                "type": "image",
                                "source": {"type": "url", "url": "https://e.com/a.png"},
                            },
                            {"type": "text", "text": "What?"},
                        ]
                    )
                ],
            ),
        ]
    if provider == "openai-responses" or everywhere:
        cases += [
            (
                "reasoning-items",
                "encrypted reasoning, text and a function call, with ids",
                [
                    HumanMessage("Weather?"),
                    AIMessage(
                        content=[
                            {
                                "type": "reasoning",
                                "id": "rs_1",
                                "summary": [
                                    {"type": "summary_text", "text": "Thought."}
                                ],
                                "encrypted_content": "gAAAA==",
                            },
                            {
                                "type": "text",
                                "text": "Checking.",
                                "id": "msg_1",
                                "annotations": [],
                            },
                        ],
                        tool_calls=[
                            {
                                "name": "get_weather",
                                "args": {"city": "Paris"},
                                "id": "call_r1",
                                "type": "tool_call",
                            }
                        ],
                        additional_kwargs={
                            "__openai_function_call_ids__": {"call_r1": "fc_1"}
                        },
                        response_metadata={"id": "resp_1"},
                    ),
                    ToolMessage("Sunny", tool_call_id="call_r1"),
                ],
            ),
            (
                "v1-reasoning",
                "an AI message in v1 format with reasoning and tool call",
                [
                    HumanMessage("Weather?"),
                    AIMessage(
                        content=[
                            {
                                "type": "reasoning",
                                "id": "rs_2",
                                "reasoning": "Thought.",
                                "extras": {"encrypted_content": "gAAAA=="},
                            },
                            {"type": "text", "text": "Checking.", "id": "msg_2"},
                            {
                                "type": "tool_call",
                                "id": "call_r2",
                                "name": "get_weather",
                                "args": {"city": "Rome"},
                                "extras": {"item_id": "fc_2"},
                            },
                        ],
                        tool_calls=[
                            {
                                "name": "get_weather",
                                "args": {"city": "Rome"},
                                "id": "call_r2",
                                "type": "tool_call",
                            }
                        ],
                        response_metadata={
                            "output_version": "v1",
                            "model_provider": "openai",
                        },
                    ),
                    ToolMessage("Rain", tool_call_id="call_r2"),
                ],
            ),
            (
                "refusal",
                "an AI message with a refusal block",
                [
                    HumanMessage("Bad"),
                    AIMessage(content=[{"type": "refusal", "refusal": "I can't."}]),
                    HumanMessage("Ok"),
                ],
            ),
            (
                "input-file",
                "an input_file part by file id and an input_image with detail",
                [
                    HumanMessage(
                        [
                            {"type": "input_text", "text": "Read"},
                            {"type": "input_file", "file_id": "file-abc"},
                            {
                                "type": "input_image",
                                "image_url": "https://e.com/a.png",
                                "detail": "high",
                            },
                        ]
                    )
                ],
            ),
        ]
    if provider == "gemini" or everywhere:
        cases += [
            (
                "thought-signature",
                "an AI message with a function call thought signature",
                [
                    HumanMessage("Weather?"),
                    AIMessage(
                        content="",
                        tool_calls=[
                            {
                                "name": "get_weather",
                                "args": {"city": "Paris"},
                                "id": "c1",
                                "type": "tool_call",
                            }
                        ],
                        additional_kwargs={
                            "__gemini_function_call_thought_signatures__": {"c1": SIG}
                        },
                    ),
                    ToolMessage("Sunny", tool_call_id="c1", name="get_weather"),
                ],
            ),
            (
                "thinking-blocks",
                "an AI message with thinking and signed text blocks",
                [
                    HumanMessage("Hi"),
                    AIMessage(
                        content=[
                            {"type": "thinking", "thinking": "Hmm.", "signature": SIG},
                            {
                                "type": "text",
                                "text": "Hello",
                                "extras": {"signature": SIG},
                            },
                        ]
                    ),
                    HumanMessage("Again"),
                ],
            ),
            (
                "media-blocks",
                "media blocks with mime types and file uri",
                [
                    HumanMessage(
                        [
                            {"type": "text", "text": "Describe"},
                            {
                                "type": "media",
                                "mime_type": "video/mp4",
                                "file_uri": "gs://b/v.mp4",
                            },
                            {"type": "media", "mime_type": "audio/wav", "data": WAV},
                        ]
                    )
                ],
            ),
        ]
    if provider == "ollama" or everywhere:
        cases += [
            (
                "images-two",
                "a human message with two images",
                [
                    HumanMessage(
                        [
                            {"type": "text", "text": "Compare"},
                            {
                                "type": "image_url",
                                "image_url": {
                                    "url": f"data:image/png;base64,{PNG_B64}"
                                },
                            },
                            {
                                "type": "image_url",
                                "image_url": f"data:image/png;base64,{PNG_B64}",
                            },
                        ]
                    )
                ],
            ),
            (
                "reasoning",
                "an AI message with reasoning_content",
                [
                    HumanMessage("Hi"),
                    AIMessage(
                        "Hello", additional_kwargs={"reasoning_content": "Greeting."}
                    ),
                    HumanMessage("Again"),
                ],
            ),
        ]
    return cases


def run_langchain(directory: Path) -> None:
    from langchain_anthropic import ChatAnthropic
    from langchain_google_genai import ChatGoogleGenerativeAI
    from langchain_ollama import ChatOllama
    from langchain_openai import ChatOpenAI

    version = rec.version
    tool = {
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
    models: list[tuple[str, str, str, Any]] = [
        (
            "openai-chat",
            "",
            f"langchain-openai {version('langchain-openai')} ChatOpenAI",
            lambda: ChatOpenAI(model="gpt-4o", api_key="x", max_retries=0),
        ),
        (
            "openai-responses",
            "",
            f"langchain-openai {version('langchain-openai')} "
            "ChatOpenAI(use_responses_api=True)",
            lambda: ChatOpenAI(
                model="gpt-5", api_key="x", max_retries=0, use_responses_api=True
            ),
        ),
        (
            "openai-responses",
            "v1-",
            f"langchain-openai {version('langchain-openai')} "
            "ChatOpenAI(use_responses_api=True, output_version='v1')",
            lambda: ChatOpenAI(
                model="gpt-5",
                api_key="x",
                max_retries=0,
                use_responses_api=True,
                output_version="v1",
            ),
        ),
        (
            "openai-chat",
            "v1-",
            f"langchain-openai {version('langchain-openai')} "
            "ChatOpenAI(output_version='v1')",
            lambda: ChatOpenAI(
                model="gpt-4o", api_key="x", max_retries=0, output_version="v1"
            ),
        ),
        (
            "anthropic",
            "",
            f"langchain-anthropic {version('langchain-anthropic')} ChatAnthropic",
            lambda: ChatAnthropic(
                model="claude-sonnet-4-5", api_key="x", max_retries=0
            ),
        ),
        (
            "gemini",
            "",
            f"langchain-google-genai {version('langchain-google-genai')} "
            "ChatGoogleGenerativeAI",
            lambda: ChatGoogleGenerativeAI(
                model="gemini-2.5-flash", google_api_key="x", max_retries=0
            ),
        ),
        (
            "ollama",
            "",
            f"langchain-ollama {version('langchain-ollama')} ChatOllama",
            lambda: ChatOllama(model="llama3.2"),
        ),
        (
            "openai-chat",
            "o3-",
            f"langchain-openai {version('langchain-openai')} ChatOpenAI(model='o3')",
            lambda: ChatOpenAI(model="o3", api_key="x", max_retries=0),
        ),
        (
            "anthropic",
            "v1-",
            f"langchain-anthropic {version('langchain-anthropic')} "
            "ChatAnthropic(output_version='v1')",
            lambda: ChatAnthropic(
                model="claude-sonnet-4-5",
                api_key="x",
                max_retries=0,
                output_version="v1",
            ),
        ),
        (
            "gemini",
            "v1-",
            f"langchain-google-genai {version('langchain-google-genai')} "
            "ChatGoogleGenerativeAI(output_version='v1')",
            lambda: ChatGoogleGenerativeAI(
                model="gemini-3-pro-preview",
                google_api_key="x",
                max_retries=0,
                output_version="v1",
            ),
        ),
    ]
    lib = f"langchain (langchain-core {version('langchain-core')})"
    for provider, prefix, model_name, make in models:
        for case, notes, history in langchain_cases(provider):
            try:
                model = make().bind_tools([tool])
                body = rec.capture(
                    lambda model=model, history=history: model.invoke(history)
                )
            except Exception as error:
                print(
                    "not recorded:",
                    provider,
                    "langchain",
                    prefix + case,
                    repr(error)[:200],
                )
                continue
            write(directory, provider, lib, model_name, prefix + case, notes, body)


# ------------------------------------------------------------------------- ollama


def run_ollama(directory: Path) -> None:
    import ollama

    lib = f"ollama {rec.version('ollama')}"
    client = ollama.Client(host="http://localhost:11434")
    call = {
        "function": {"name": "get_weather", "arguments": {"city": "Paris", "n": 2.0}}
    }
    cases: list[tuple[str, str, list[Any]]] = [
        (
            "plain",
            "system, user, assistant, user as dicts",
            [
                {"role": "system", "content": "Be terse."},
                {"role": "user", "content": "Hi"},
                {"role": "assistant", "content": "Hello"},
                {"role": "user", "content": "Again"},
            ],
        ),
        (
            "tool-round",
            "assistant tool call with dict arguments and a tool result with tool_name",
            [
                {"role": "user", "content": "Weather?"},
                {"role": "assistant", "content": "", "tool_calls": [call]},
                {"role": "tool", "content": "Sunny", "tool_name": "get_weather"},
            ],
        ),
        (
            "tool-no-name",
            "a tool result without tool_name, two calls",
            [
                {"role": "user", "content": "Weather?"},
                {
                    "role": "assistant",
                    "content": "Checking",
                    "tool_calls": [call, call],
                },
                {"role": "tool", "content": "Sunny"},
                {"role": "tool", "content": '{"t": 21}'},
            ],
        ),
        (
            "images-bytes",
            "a user message with image bytes (client encodes base64)",
            [{"role": "user", "content": "What?", "images": [PNG]}],
        ),
        (
            "images-b64",
            "a user message with a base64 image string",
            [{"role": "user", "content": "What?", "images": [PNG_B64, PNG_B64]}],
        ),
        (
            "thinking",
            "an assistant message with thinking",
            [
                {"role": "user", "content": "Hi"},
                {"role": "assistant", "content": "Hello", "thinking": "Greet back."},
                {"role": "user", "content": "Again"},
            ],
        ),
        (
            "message-objects",
            "ollama.Message objects with tool calls",
            [
                ollama.Message(role="user", content="Weather?"),
                ollama.Message(
                    role="assistant",
                    tool_calls=[
                        ollama.Message.ToolCall(
                            function=ollama.Message.ToolCall.Function(
                                name="get_weather", arguments={"city": "Oslo"}
                            )
                        )
                    ],
                ),
                ollama.Message(role="tool", content="Snow", tool_name="get_weather"),
            ],
        ),
        (
            "empty-and-unicode",
            "an empty user message and unicode",
            [
                {"role": "user", "content": UNICODE},
                {"role": "assistant", "content": ""},
                {"role": "user", "content": ""},
            ],
        ),
        (
            "two-systems",
            "two system messages, one in the middle",
            [
                {"role": "system", "content": "A"},
                {"role": "user", "content": "Hi"},
                {"role": "system", "content": "B"},
                {"role": "user", "content": "Hi again"},
            ],
        ),
        (
            "no-args",
            "a tool call with empty arguments",
            [
                {"role": "user", "content": "Now?"},
                {
                    "role": "assistant",
                    "content": "",
                    "tool_calls": [{"function": {"name": "now", "arguments": {}}}],
                },
                {"role": "tool", "content": "12:00", "tool_name": "now"},
            ],
        ),
    ]
    cases += [
        (
            "thinking-and-calls",
            "an assistant message with thinking, content and two tool calls",
            [
                {"role": "user", "content": "Weather?"},
                {
                    "role": "assistant",
                    "content": "Checking.",
                    "thinking": "Two cities.",
                    "tool_calls": [
                        call,
                        {"function": {"name": "get_weather", "arguments": {}}},
                    ],
                },
                {"role": "tool", "content": "Sunny", "tool_name": "get_weather"},
                {"role": "tool", "content": "", "tool_name": "get_weather"},
            ],
        ),
        (
            "assistant-images",
            "an assistant message with an image and a user message with only images",
            [
                {"role": "user", "content": "", "images": [PNG_B64]},
                {"role": "assistant", "content": "An image", "images": [PNG_B64]},
            ],
        ),
        (
            "nested-args",
            "tool call arguments with nesting, floats, unicode and null",
            [
                {"role": "user", "content": "Book"},
                {
                    "role": "assistant",
                    "content": "",
                    "tool_calls": [
                        {
                            "function": {
                                "name": "book",
                                "arguments": {
                                    "who": "Zoë",
                                    "seats": [1, 2.5],
                                    "meta": {"vip": None, "ok": True},
                                },
                            }
                        }
                    ],
                },
                {"role": "tool", "content": '{"ok": true}', "tool_name": "book"},
            ],
        ),
        (
            "tool-index",
            "tool calls carrying an index",
            [
                {"role": "user", "content": "Weather?"},
                {
                    "role": "assistant",
                    "content": "",
                    "tool_calls": [
                        {
                            "function": {
                                "index": 0,
                                "name": "get_weather",
                                "arguments": {"city": "A"},
                            }
                        },
                        {
                            "function": {
                                "index": 1,
                                "name": "get_weather",
                                "arguments": {"city": "B"},
                            }
                        },
                    ],
                },
                {"role": "tool", "content": "1", "tool_name": "get_weather"},
                {"role": "tool", "content": "2", "tool_name": "get_weather"},
            ],
        ),
    ]
    cases += [
        (
            "orphan-and-unanswered",
            "a tool result without a call and a call without a result",
            [
                {"role": "tool", "content": "late", "tool_name": "f"},
                {"role": "user", "content": "Go"},
                {
                    "role": "assistant",
                    "content": "",
                    "tool_calls": [{"function": {"name": "g", "arguments": {}}}],
                },
                {"role": "user", "content": "Never mind"},
            ],
        ),
        (
            "results-swapped",
            "results in an order other than the calls'",
            [
                {"role": "user", "content": "Go"},
                {
                    "role": "assistant",
                    "content": "",
                    "tool_calls": [
                        {"function": {"name": "a", "arguments": {}}},
                        {"function": {"name": "b", "arguments": {}}},
                    ],
                },
                {"role": "tool", "content": "B", "tool_name": "b"},
                {"role": "tool", "content": "A", "tool_name": "a"},
            ],
        ),
    ]
    for case, notes, messages in cases:
        try:
            body = rec.capture(
                lambda messages=messages: client.chat(
                    model="llama3.2", messages=messages
                )
            )
        except Exception as error:
            print("not recorded:", "ollama client", case, repr(error)[:200])
            continue
        write(directory, "ollama", lib, "Client.chat", case, notes, body)


# ------------------------------------------------------------------------- google-genai


def run_genai(directory: Path) -> None:
    from google import genai
    from google.genai import types as t

    lib = f"google-genai {rec.version('google-genai')}"
    client = genai.Client(api_key="x")
    sig = base64.b64decode(SIG)

    def content(role: str, *parts: Any) -> Any:
        return t.Content(role=role, parts=list(parts))

    fc = t.Part(
        function_call=t.FunctionCall(
            name="get_weather", args={"city": "Paris", "n": 2.0}
        )
    )
    fr = t.Part(
        function_response=t.FunctionResponse(
            name="get_weather", response={"output": "Sunny"}
        )
    )
    cases: list[tuple[str, str, Any, Any]] = [
        ("string", "contents as a plain string", "Hello", None),
        ("strings", "contents as a list of strings", ["Hello", "World"], None),
        (
            "system",
            "a system instruction string and a turn",
            [content("user", t.Part(text="Hi"))],
            t.GenerateContentConfig(system_instruction="Be terse."),
        ),
        (
            "system-parts",
            "a system instruction as a list of strings",
            [content("user", t.Part(text="Hi"))],
            t.GenerateContentConfig(system_instruction=["Rule one.", "Rule two."]),
        ),
        (
            "function-round",
            "a function call and its response",
            [
                content("user", t.Part(text="Weather?")),
                content("model", fc),
                content("user", fr),
            ],
            None,
        ),
        (
            "function-ids",
            "function calls and responses with ids",
            [
                content("user", t.Part(text="Weather?")),
                content(
                    "model",
                    t.Part(
                        function_call=t.FunctionCall(
                            id="c1", name="get_weather", args={"city": "Paris"}
                        )
                    ),
                    t.Part(
                        function_call=t.FunctionCall(
                            id="c2", name="get_weather", args={"city": "Rome"}
                        )
                    ),
                ),
                content(
                    "user",
                    t.Part(
                        function_response=t.FunctionResponse(
                            id="c1", name="get_weather", response={"output": "Sunny"}
                        )
                    ),
                    t.Part(
                        function_response=t.FunctionResponse(
                            id="c2", name="get_weather", response={"error": "down"}
                        )
                    ),
                ),
            ],
            None,
        ),
        (
            "thought-signatures",
            "thought parts and signatures on text and function call",
            [
                content("user", t.Part(text="Weather?")),
                content(
                    "model",
                    t.Part(text="Thinking.", thought=True),
                    t.Part(text="Checking.", thought_signature=sig),
                    t.Part(
                        function_call=t.FunctionCall(
                            name="get_weather", args={"city": "Paris"}
                        ),
                        thought_signature=sig,
                    ),
                ),
                content("user", fr),
            ],
            None,
        ),
        (
            "inline-data",
            "inline image and audio bytes",
            [
                content(
                    "user",
                    t.Part(text="Describe"),
                    t.Part.from_bytes(data=PNG, mime_type="image/png"),
                    t.Part.from_bytes(data=WAV, mime_type="audio/wav"),
                )
            ],
            None,
        ),
        (
            "file-data",
            "file data by URI with a display name, and a video with metadata",
            [
                content(
                    "user",
                    t.Part(text="Describe"),
                    t.Part(
                        file_data=t.FileData(
                            file_uri="https://generativelanguage.googleapis.com/v1beta/files/abc",
                            mime_type="application/pdf",
                            display_name="doc",
                        )
                    ),
                    t.Part(
                        file_data=t.FileData(
                            file_uri="https://www.youtube.com/watch?v=x",
                            mime_type="video/mp4",
                        ),
                        video_metadata=t.VideoMetadata(
                            start_offset="1s", end_offset="5s", fps=2.0
                        ),
                    ),
                )
            ],
            None,
        ),
        (
            "code-execution",
            "executable code and its result in history",
            [
                content("user", t.Part(text="Compute")),
                content(
                    "model",
                    t.Part(
                        executable_code=t.ExecutableCode(
                            language="PYTHON", code="print(1)"
                        )
                    ),
                    t.Part(
                        code_execution_result=t.CodeExecutionResult(
                            outcome="OUTCOME_OK", output="1\n"
                        )
                    ),
                    t.Part(text="It is 1."),
                ),
                content("user", t.Part(text="Thanks")),
            ],
            None,
        ),
        (
            "function-response-parts",
            "a function response with multimodal parts",
            [
                content("user", t.Part(text="Chart?")),
                content(
                    "model", t.Part(function_call=t.FunctionCall(name="chart", args={}))
                ),
                content(
                    "user",
                    t.Part(
                        function_response=t.FunctionResponse(
                            name="chart",
                            response={"output": "see image"},
                            parts=[
                                t.FunctionResponsePart(
                                    inline_data=t.FunctionResponseBlob(
                                        mime_type="image/png", data=PNG
                                    )
                                )
                            ],
                        )
                    ),
                ),
            ],
            None,
        ),
        (
            "parts-list",
            "contents as a list of Parts (one user turn)",
            [t.Part(text="Hi"), t.Part.from_bytes(data=PNG, mime_type="image/png")],
            None,
        ),
        (
            "unicode-empty",
            "unicode text, empty text part, a model turn",
            [
                content("user", t.Part(text=UNICODE), t.Part(text="")),
                content("model", t.Part(text=LONG)),
                content("user", t.Part(text="ok")),
            ],
            None,
        ),
        (
            "dict-contents",
            "contents given as dicts with snake_case keys",
            [
                {"role": "user", "parts": [{"text": "Hi"}]},
                {
                    "role": "model",
                    "parts": [
                        {"function_call": {"name": "f", "args": {"a": [1, 2.5]}}}
                    ],
                },
                {
                    "role": "user",
                    "parts": [
                        {
                            "function_response": {
                                "name": "f",
                                "response": {"result": {"x": None}},
                            }
                        }
                    ],
                },
            ],
            None,
        ),
    ]
    cases += [
        (
            "content-object",
            "contents as one Content object",
            content("user", t.Part(text="Hi")),
            None,
        ),
        (
            "no-role",
            "a Content with no role and a string system instruction as Content",
            [t.Content(parts=[t.Part(text="Hi")])],
            t.GenerateContentConfig(
                system_instruction=t.Content(parts=[t.Part(text="Be terse.")])
            ),
        ),
        (
            "empty-signed-text",
            "a model turn ending with an empty text part carrying a signature",
            [
                content("user", t.Part(text="Hi")),
                content(
                    "model",
                    t.Part(text="Hello"),
                    t.Part(text="", thought_signature=sig),
                ),
                content("user", t.Part(text="Again")),
            ],
            None,
        ),
        (
            "call-no-args",
            "function calls with no args and empty args, responses of odd shapes",
            [
                content("user", t.Part(text="Now?")),
                content(
                    "model",
                    t.Part(function_call=t.FunctionCall(name="now")),
                    t.Part(function_call=t.FunctionCall(name="now", args={})),
                ),
                content(
                    "user",
                    t.Part(
                        function_response=t.FunctionResponse(name="now", response={})
                    ),
                    t.Part(
                        function_response=t.FunctionResponse(
                            name="now",
                            response={"result": [1, 2], "meta": {"x": 1.0}},
                        )
                    ),
                ),
            ],
            None,
        ),
        (
            "media-resolution",
            "inline data with a media resolution and display name",
            [
                content(
                    "user",
                    t.Part(
                        inline_data=t.Blob(
                            mime_type="image/png", data=PNG, display_name="dot.png"
                        ),
                        media_resolution=t.PartMediaResolution(
                            level="MEDIA_RESOLUTION_HIGH"
                        ),
                    ),
                    t.Part(text="What?"),
                )
            ],
            None,
        ),
        (
            "function-response-scheduling",
            "a function response with will_continue and scheduling",
            [
                content("user", t.Part(text="Go")),
                content("model", fc),
                content(
                    "user",
                    t.Part(
                        function_response=t.FunctionResponse(
                            name="get_weather",
                            response={"output": "partial"},
                            will_continue=False,
                            scheduling="WHEN_IDLE",
                        )
                    ),
                ),
            ],
            None,
        ),
        (
            "function-role",
            "function responses in a turn with role function, text after",
            [
                content("user", t.Part(text="Go")),
                content("model", fc),
                content("function", fr),
                content("model", t.Part(text="Done")),
            ],
            None,
        ),
        (
            "thought-part-signed",
            "a thought part with its signature and an empty function args",
            [
                content("user", t.Part(text="Hi")),
                content(
                    "model",
                    t.Part(text="Deep thought.", thought=True, thought_signature=sig),
                    t.Part(text="Hello"),
                ),
                content("user", t.Part(text="Again")),
            ],
            None,
        ),
    ]
    cases += [
        (
            "helpers",
            "UserContent/ModelContent and Part.from_* helpers, strings mixed in",
            [
                t.UserContent(
                    parts=[
                        "Hi",
                        t.Part.from_uri(
                            file_uri="gs://b/a.pdf", mime_type="application/pdf"
                        ),
                    ]
                ),
                t.ModelContent(
                    parts=[t.Part.from_function_call(name="f", args={"x": 1.5})]
                ),
                t.UserContent(
                    parts=[t.Part.from_function_response(name="f", response={"y": [1]})]
                ),
            ],
            None,
        ),
        (
            "thought-false",
            "parts with thought=False and an image before a function response",
            [
                content("user", t.Part(text="Plot", thought=False)),
                content(
                    "model", t.Part(function_call=t.FunctionCall(name="plot", args={}))
                ),
                content(
                    "user",
                    t.Part.from_bytes(data=PNG, mime_type="image/png"),
                    t.Part(
                        function_response=t.FunctionResponse(
                            name="plot", response={"output": "ok"}
                        )
                    ),
                ),
            ],
            None,
        ),
        (
            "mixed-list",
            "a list mixing strings and Parts",
            ["Describe", t.Part.from_bytes(data=PNG, mime_type="image/png"), "briefly"],
            t.GenerateContentConfig(system_instruction=t.Part(text="Be terse.")),
        ),
        (
            "unanswered-call",
            "a function call without a response, then text",
            [
                content("user", t.Part(text="Go")),
                content(
                    "model", t.Part(function_call=t.FunctionCall(name="f", args={}))
                ),
                content("user", t.Part(text="Never mind")),
            ],
            None,
        ),
    ]
    for case, notes, contents, config in cases:
        try:
            body = rec.capture(
                lambda contents=contents, config=config: client.models.generate_content(
                    model="gemini-2.5-flash", contents=contents, config=config
                )
            )
        except Exception as error:
            print("not recorded:", "google-genai", case, repr(error)[:200])
            continue
        write(
            directory,
            "gemini",
            lib,
            "Client.models.generate_content",
            case,
            notes,
            body,
        )


# ------------------------------------------------------------------------- check


def check(paths: list[Path], *, cross: bool = True) -> int:
    from tests.providers_support import fields
    from tests.test_providers_exact import REQUEST_FIELDS, exact
    from tests.test_providers_matrix import validate

    import canisters
    from canisters import providers

    names = tuple(REQUEST_FIELDS)
    total = same = 0
    files = [
        p
        for path in paths
        for p in ([path] if path.is_file() else sorted(path.glob("*/*.json")))
    ]
    for path in files:
        case = json.loads(path.read_text())
        name, body = case["provider"], case["payload"]
        label = f"{name}/{path.stem}"
        total += 1
        normalizer = providers.get(name)
        try:
            conversation = normalizer.parse_request(body)
        except Exception as error:
            print("PARSE", label, repr(error)[:300])
            continue
        report = providers.Report()
        try:
            rendered = normalizer.render_request(
                conversation, incomplete="keep", report=report
            )
        except Exception as error:
            print("RENDER", label, repr(error)[:300])
            continue
        wanted = fields(body, REQUEST_FIELDS[name])
        if exact(rendered) == exact(wanted) and not report.events:
            same += 1
        else:
            print(
                "DIFF", label, [(e.kind, e.where, e.detail) for e in report.events][:3]
            )
            a, b = exact(wanted), exact(rendered)
            at = next(
                (i for i, (x, y) in enumerate(zip(a, b, strict=False)) if x != y),
                min(len(a), len(b)),
            )
            print("   want:", a[max(0, at - 120) : at + 160])
            print("   got: ", b[max(0, at - 120) : at + 160])
        for target in names if cross else ():
            if target == name:
                continue
            other = providers.get(target)
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                try:
                    out = other.render_request(conversation)
                except canisters.UnsupportedContent:
                    out = other.render_request(conversation, unsupported="drop")
                except Exception as error:
                    print("CROSS-RENDER", label, "->", target, repr(error)[:300])
                    continue
            try:
                validate(target, out)
            except Exception as error:
                print(
                    "CROSS-INVALID",
                    label,
                    "->",
                    target,
                    str(error)[:300].replace("\n", " "),
                )
    print(f"{same}/{total} exact")
    return 0


if __name__ == "__main__":
    warnings.simplefilter("ignore")
    command, target = sys.argv[1], Path(sys.argv[2])
    if command in ("check", "same"):
        sys.exit(check([Path(a) for a in sys.argv[2:]], cross=command == "check"))
    if command == "record":
        only = set(sys.argv[3:])
        if not only or "pydantic-ai" in only:
            run_pydantic_ai(target)
        if not only or "langchain" in only:
            run_langchain(target)
        if not only or "ollama" in only:
            run_ollama(target)
        if not only or "genai" in only:
            run_genai(target)
