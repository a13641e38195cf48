"""Whole requests, as a downstream application types them (checked by
``mypy --strict``, never run by pytest)."""

from __future__ import annotations

from typing import Any

from typing_extensions import assert_type

import canisters
from canisters import (
    Generation,
    OutputFormat,
    ProviderTool,
    ReasoningConfig,
    Request,
    Result,
    ResultBuilder,
    Tool,
    ToolChoice,
    providers,
)
from canisters.validation import argument_problems

tool = Tool("get_weather", "Weather", {"type": "object"}, strict=True)
request = Request(
    [canisters.User("hi")],
    model="gpt-4.1",
    tools=(tool, ProviderTool("anthropic", {"type": "web_search_20250305"})),
    tool_choice=ToolChoice.tool("get_weather"),
    output=OutputFormat("json"),
    generation=Generation(temperature=0.5, stop=("END",)),
    reasoning=ReasoningConfig(effort="high"),
)
assert_type(request.tools, tuple[Tool | ProviderTool, ...])
assert_type(request.functions, tuple[Tool, ...])
assert_type(request.tool("get_weather"), Tool | None)
assert_type(request.generation.stop, tuple[str, ...] | None)
assert_type(ToolChoice("auto").forced, str | None)

chat = providers.get("openai-chat")
if isinstance(chat, providers.RequestNormalizer):
    parsed = chat.parse_full_request({"model": "m", "messages": []})
    assert_type(parsed, Request)
    report = providers.Report()
    body = chat.render_full_request(
        parsed,
        unsupported="drop",
        report=report,
        model="gpt-4.1",
        capabilities=providers.Capabilities(temperature=(0, 1)),
        reasoning_table=providers.ReasoningTable({"low": 1024}),
    )
    assert_type(body, dict[str, Any])
    for event in report.events:
        assert_type(event.rule, str | None)

schema, changes = providers.translate_schema({"type": "object"}, target="gemini")
assert_type(schema, dict[str, Any])
assert_type(changes, list[providers.SchemaChange])
assert_type(providers.is_strict_compatible(schema), bool)

loaded = canisters.from_json(canisters.to_json(request))
if isinstance(loaded, Request):
    assert_type(loaded.model, str | None)

assert_type(argument_problems(tool, {"city": "Paris"}), tuple[str, ...])
canisters.validate(request.conversation, tools=request.tools)
call = canisters.Invocation("get_weather", {})
assert_type(ResultBuilder.respond_to(call).check_arguments(tool), Result | None)
