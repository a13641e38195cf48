"""``canisters convert`` on whole requests, run for real in subprocesses.

A request goes whole when both normalizers read and write whole requests
(:class:`~canisters.providers.RequestNormalizer`); otherwise its conversation
fields alone, with a note. The report is on stderr, one line per field.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

import canisters
from canisters import (
    Conversation,
    Generation,
    OutputFormat,
    ProviderTool,
    ReasoningConfig,
    Request,
    Tool,
    ToolChoice,
    User,
    providers,
)
from canisters.cli import run

from .requests_support import openai_chat_accepts, payload
from .test_cli import EXAMPLE, assert_one_line_error, canisters_cmd

DATA = Path(__file__).parent / "data" / "providers"
WEATHER = {
    "type": "object",
    "properties": {"city": {"type": "string"}},
    "required": ["city"],
}
# A request as another format holds it: what Chat cannot take exactly.
FOREIGN = Request(
    [User("hi")],
    model="claude-sonnet-4-5",
    tools=(
        Tool("get_weather", "Weather", WEATHER),
        ProviderTool("anthropic", {"type": "web_search_20250305", "name": "web"}),
    ),
    tool_choice=ToolChoice("auto", ("get_weather",), parallel=False),
    output=OutputFormat("json_schema", WEATHER),
    generation=Generation(max_output_tokens=1000, temperature=3.5, top_k=40),
    reasoning=ReasoningConfig(enabled=True, budget_tokens=3000),
    extras={"anthropic": {"body": {"container": "c1"}}},
)


def request_file(tmp_path: Path, name: str) -> tuple[Path, dict[str, Any]]:
    body = payload(DATA / "openai-chat" / name)
    path = tmp_path / name
    path.write_text(json.dumps(body), encoding="utf-8")
    return path, body


def neutral_request(tmp_path: Path, request: Request = FOREIGN) -> Path:
    path = tmp_path / "request.json"
    path.write_text(canisters.to_json(request), encoding="utf-8")
    return path


def test_a_request_of_the_same_format_comes_back_whole(tmp_path: Path) -> None:
    path, body = request_file(tmp_path, "peer-pydantic-ai-slim-tool-round-request.json")
    assert {"tools", "tool_choice"} <= set(body)
    out = canisters_cmd(
        "convert", "--from", "openai-chat", "--to", "openai-chat", str(path)
    )
    assert out.returncode == 0, out.stderr
    assert json.loads(out.stdout) == body
    assert out.stderr == ""
    # --model sends another model, nothing else changes.
    renamed = canisters_cmd(
        "convert",
        "--from",
        "openai-chat",
        "--to",
        "openai-chat",
        "--model",
        "gpt-x",
        str(path),
    )
    assert renamed.returncode == 0, renamed.stderr
    assert json.loads(renamed.stdout) == {**body, "model": "gpt-x"}


def test_every_field_not_exact_is_reported_one_line_each(tmp_path: Path) -> None:
    path = neutral_request(tmp_path)
    out = canisters_cmd(
        "convert",
        "--from",
        "canisters",
        "--to",
        "openai-chat",
        "--model",
        "gpt-4.1",
        str(path),
    )
    assert out.returncode == 0, out.stderr
    body = json.loads(out.stdout)
    openai_chat_accepts(body)  # lenient by default: a body to send as it is
    assert body["model"] == "gpt-4.1"
    assert body["temperature"] == 2.0 and "top_k" not in body
    assert [tool["function"]["name"] for tool in body["tools"]] == ["get_weather"]
    lines = out.stderr.splitlines()
    # The same events as the library's report, one line each: what, field, rule.
    report = providers.Report()
    with pytest.warns(providers.FidelityWarning):
        providers.get("openai-chat").render_full_request(
            FOREIGN, model="gpt-4.1", unsupported="drop", report=report
        )
    assert len(lines) == len(report.events) >= 5
    for line, event in zip(lines, report.events, strict=True):
        assert line.startswith(f"canisters: {event.kind} {event.where}: ")
        if event.rule:
            assert line.endswith(f"(rule: {event.rule})")
    wheres = [event.where for event in report.events]
    for field in ("generation.top_k", "generation.temperature", "tools[1]"):
        assert field in wheres
    assert "extras.anthropic.body.container" in wheres
    quiet = canisters_cmd(
        "convert", "--from", "canisters", "--to", "openai-chat", "-q", str(path)
    )
    assert quiet.returncode == 0 and quiet.stderr == ""


def test_strict_fails_on_any_field_not_exact(tmp_path: Path) -> None:
    path = neutral_request(tmp_path)
    base = ("convert", "--from", "canisters", "--to", "openai-chat", "-q", str(path))
    strict = canisters_cmd(*base, "--strict")
    assert_one_line_error(
        strict, "--strict", "generation.top_k (dropped)", "openai-chat"
    )
    assert strict.stdout == ""
    # Without -q the report comes first, then the one error line.
    loud = canisters_cmd(*base[:-2], str(path), "--strict")
    assert loud.returncode == 2
    assert loud.stderr.splitlines()[-1].startswith("canisters: error: --strict: ")
    assert len(loud.stderr.splitlines()) > 1
    # --unsupported error refuses at the first field, naming it.
    refused = canisters_cmd(*base, "--unsupported", "error")
    assert_one_line_error(refused, "openai-chat")
    # A request every field of which goes exactly passes --strict.
    exact = Request([User("hi")], model="m", generation=Generation(temperature=0.5))
    fine = canisters_cmd(
        "convert",
        "--from",
        "canisters",
        "--to",
        "openai-chat",
        "--strict",
        str(neutral_request(tmp_path, exact)),
    )
    assert fine.returncode == 0, fine.stderr
    assert json.loads(fine.stdout) == {
        "model": "m",
        "messages": [{"role": "user", "content": "hi"}],
        "temperature": 0.5,
    }


class ConversationOnly:
    """A plugin normalizer without whole requests: OpenAI Chat's conversation."""

    name = "chat-plugin"

    def parse_request(self, body: Any) -> Conversation:
        return providers.get("openai-chat").parse_request(body)

    def render_request(
        self, conversation: Conversation, **options: Any
    ) -> dict[str, Any]:
        return providers.get("openai-chat").render_request(conversation, **options)

    def parse_response(self, body: Any) -> Conversation:
        return providers.get("openai-chat").parse_response(body)

    def render_response(
        self, conversation: Conversation, **options: Any
    ) -> dict[str, Any]:
        return providers.get("openai-chat").render_response(conversation, **options)


@pytest.fixture
def plugin() -> Any:
    providers.register("chat-plugin", ConversationOnly(), replace=True)
    yield "chat-plugin"
    providers._registered.pop("chat-plugin", None)


@pytest.mark.parametrize("direction", ["to", "from"])
def test_a_plugin_without_whole_requests_gets_the_conversation_with_a_note(
    direction: str, plugin: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # In process: a plugin registered in code is not seen by a subprocess.
    path, body = request_file(tmp_path, "peer-pydantic-ai-slim-tool-round-request.json")
    source, target = (
        ("openai-chat", plugin) if direction == "to" else (plugin, "openai-chat")
    )
    code = run(["convert", "--from", source, "--to", target, str(path)])
    out = capsys.readouterr()
    assert code == 0, out.err
    assert json.loads(out.out) == {"messages": body["messages"]}
    assert out.err.splitlines() == [
        f"canisters: note: {plugin} does not read and write whole requests; "
        "only the conversation fields are translated"
    ]


def test_readme_first_command_gives_a_request_to_send_as_it_is(tmp_path: Path) -> None:
    converted = tmp_path / "converted.json"
    out = canisters_cmd(
        "convert",
        "--from",
        "anthropic",
        "--to",
        "openai-chat",
        str(EXAMPLE),
        "-o",
        str(converted),
    )
    assert out.returncode == 0, out.stderr
    body = json.loads(converted.read_text(encoding="utf-8"))
    openai_chat_accepts(body)
    example = json.loads(EXAMPLE.read_text(encoding="utf-8"))
    assert body["model"] == example["model"]
    assert body["max_completion_tokens"] == example["max_tokens"]
    tool = example["tools"][0]
    assert body["tools"] == [
        {
            "type": "function",
            "function": {
                "name": tool["name"],
                "description": tool["description"],
                "parameters": tool["input_schema"],
            },
        }
    ]
    assert [message["role"] for message in body["messages"]] == [
        "system",
        "user",
        "assistant",
        "tool",
    ]
    assert "Traceback" not in out.stderr
