"""End to end with the real clients: each provider's official SDK sends a rendered
conversation to a local HTTP server that records the request body and answers with
a recorded real response.

The recorded request must hold exactly what ``render_request`` produced, plus the
fields the SDK call itself adds (model, token limits, stream flags), and
``parse_response`` must accept both the raw response body and the SDK's parsed
response object.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

from canisters import Conversation, providers

DATA = Path(__file__).parent / "data" / "providers"


def payload(provider: str, name: str) -> dict[str, Any]:
    case = json.loads((DATA / provider / name).read_text())
    return case["payload"]  # type: ignore[no-any-return]


@dataclass
class Recorder:
    """What the local server received and what it answers."""

    answer: dict[str, Any] = field(default_factory=dict)
    paths: list[str] = field(default_factory=list)
    bodies: list[dict[str, Any]] = field(default_factory=list)


@pytest.fixture
def server() -> Iterator[tuple[str, Recorder]]:
    recorder = Recorder()

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            length = int(self.headers.get("content-length", "0"))
            recorder.paths.append(self.path)
            recorder.bodies.append(json.loads(self.rfile.read(length) or b"{}"))
            data = json.dumps(recorder.answer).encode()
            self.send_response(200)
            self.send_header("content-type", "application/json")
            self.send_header("content-length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def log_message(self, *args: Any) -> None:
            pass

    httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{httpd.server_address[1]}", recorder
    finally:
        httpd.shutdown()
        httpd.server_close()
        thread.join()


def check(
    provider: str,
    recorder: Recorder,
    rendered: dict[str, Any],
    sdk_fields: dict[str, Any],
    sdk_reply: Any,
) -> None:
    (sent,) = recorder.bodies
    assert sent == {**rendered, **sdk_fields}
    normalizer = providers.get(provider)
    from_raw = normalizer.parse_response(recorder.answer)
    from_sdk = normalizer.parse_response(sdk_reply)
    assert [c.role for c in from_sdk] == [c.role for c in from_raw]
    assert from_sdk[0].metadata == from_raw[0].metadata


def rendered_from(provider: str, request: str) -> dict[str, Any]:
    normalizer = providers.get(provider)
    conversation: Conversation = normalizer.parse_request(payload(provider, request))
    return normalizer.render_request(conversation)


def test_openai_chat(server: tuple[str, Recorder]) -> None:
    import openai

    url, recorder = server
    recorder.answer = payload("openai-chat", "plain-text-response.json")
    rendered = rendered_from("openai-chat", "image-url-remote-request.json")
    client = openai.OpenAI(api_key="test", base_url=f"{url}/v1", max_retries=0)
    reply = client.chat.completions.create(model="gpt-4o", **rendered)
    assert recorder.paths == ["/v1/chat/completions"]
    check("openai-chat", recorder, rendered, {"model": "gpt-4o"}, reply)


def test_openai_responses(server: tuple[str, Recorder]) -> None:
    import openai

    url, recorder = server
    recorder.answer = payload(
        "openai-responses", "reasoning-encrypted-then-call-response.json"
    )
    rendered = rendered_from(
        "openai-responses", "agents-sdk-sequential-tool-outputs-request.json"
    )
    client = openai.OpenAI(api_key="test", base_url=f"{url}/v1", max_retries=0)
    reply = client.responses.create(model="gpt-5", **rendered)
    assert recorder.paths == ["/v1/responses"]
    check("openai-responses", recorder, rendered, {"model": "gpt-5"}, reply)


def test_anthropic(server: tuple[str, Recorder]) -> None:
    import anthropic

    url, recorder = server
    recorder.answer = payload("anthropic", "after-tool-error-response.json")
    rendered = rendered_from("anthropic", "tool-result-is-error-request.json")
    client = anthropic.Anthropic(api_key="test", base_url=url, max_retries=0)
    reply = client.messages.create(model="claude-test-model", max_tokens=64, **rendered)
    assert recorder.paths == ["/v1/messages"]
    check(
        "anthropic",
        recorder,
        rendered,
        {"model": "claude-test-model", "max_tokens": 64},
        reply,
    )


def test_gemini(server: tuple[str, Recorder]) -> None:
    from google import genai
    from google.genai import types

    url, recorder = server
    recorder.answer = payload("gemini", "text-with-thought-signature-response.json")
    rendered = rendered_from(
        "gemini", "multi-turn-function-then-new-question-request.json"
    )
    system = {"parts": [{"text": "Answer briefly."}]}
    client = genai.Client(api_key="test", http_options=types.HttpOptions(base_url=url))
    reply = client.models.generate_content(
        model="gemini-2.5-flash",
        contents=rendered["contents"],
        config=types.GenerateContentConfig(system_instruction=system),
    )
    assert recorder.paths[0].endswith("/models/gemini-2.5-flash:generateContent")
    # The SDK puts the system instruction and contents on the wire in the REST
    # casing that render_request produces.
    check(
        "gemini",
        recorder,
        {**rendered, "systemInstruction": system},
        {"generationConfig": {}},
        reply,
    )


def test_gemini_rendered_system_instruction(server: tuple[str, Recorder]) -> None:
    from google import genai
    from google.genai import types

    url, recorder = server
    recorder.answer = payload("gemini", "emoji-text-response.json")
    rendered = rendered_from("gemini", "system-instruction-tools-first-request.json")
    client = genai.Client(api_key="test", http_options=types.HttpOptions(base_url=url))
    reply = client.models.generate_content(
        model="gemini-2.5-pro",
        contents=rendered["contents"],
        config={"system_instruction": rendered["systemInstruction"]},
    )
    check("gemini", recorder, rendered, {"generationConfig": {}}, reply)


def test_ollama(server: tuple[str, Recorder]) -> None:
    import ollama

    url, recorder = server
    recorder.answer = payload("ollama", "tool-call-object-arguments-response.json")
    # The SDK's Message type drops what it does not model before sending: the
    # docs examples' tool-call "type" and "index", and an empty assistant
    # "content" next to tool calls. Those bodies are covered by the round trips
    # of the corpus; this one goes through the client unchanged.
    rendered = rendered_from("ollama", "multi-turn-history-request.json")
    client = ollama.Client(host=url)
    reply = client.chat(model="llama3.2", **rendered)
    assert recorder.paths == ["/api/chat"]
    sdk_fields = {
        key: value for key, value in recorder.bodies[0].items() if key != "messages"
    }
    assert sdk_fields["model"] == "llama3.2"
    assert set(sdk_fields) <= {
        "model",
        "stream",
        "tools",
        "format",
        "options",
        "keep_alive",
        "think",
    }
    check("ollama", recorder, rendered, sdk_fields, reply)


def test_ollama_images(server: tuple[str, Recorder]) -> None:
    import ollama

    url, recorder = server
    recorder.answer = payload("ollama", "vision-answer-images-null-response.json")
    rendered = rendered_from("ollama", "images-base64-list-request.json")
    reply = ollama.Client(host=url).chat(model="llava", **rendered)
    sent = recorder.bodies[0]
    assert sent["messages"] == rendered["messages"]
    check(
        "ollama",
        recorder,
        rendered,
        {k: v for k, v in sent.items() if k != "messages"},
        reply,
    )
