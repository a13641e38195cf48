"""Open Responses (``open-responses``): the dialect of OpenAI Responses.

Every corpus body (tests/data/providers/open-responses, see its SOURCE.md)
goes back exactly; what the specification adds (raw reasoning, extension
item types, ``allowed_tools`` without a mode, typed message items) is read
and written; rendered requests and replies are validated against the
specification's component schemas (tests/data/open-responses, see its
SOURCE.md) with ``jsonschema``. The specification's compliance suite runs
in tests/test_open_responses_compliance.py.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from canisters import Assistant, Reasoning, User, providers
from canisters.providers import Report

jsonschema = pytest.importorskip("jsonschema")

DATA = Path(__file__).parent / "data"
CORPUS = DATA / "providers" / "open-responses"
SCHEMA = json.loads((DATA / "open-responses" / "openapi-components.json").read_text())
NAME = "open-responses"


def _load(path: Path) -> dict[str, Any]:
    return json.loads(path.read_text(encoding="utf-8"))  # type: ignore[no-any-return]


def _bodies(kind: str) -> list[Path]:
    return sorted(CORPUS.glob(f"*-{kind}.json"))


def _validator(name: str) -> Any:
    schema = {**SCHEMA, "$ref": f"#/components/schemas/{name}"}
    return jsonschema.Draft202012Validator(schema)


def _errors(name: str, body: Any) -> list[str]:
    return sorted(
        f"{'.'.join(map(str, error.absolute_path))}: {error.message}"
        for error in _validator(name).iter_errors(body)
    )


normalizer = providers.get(NAME)


def test_the_corpus_has_each_kind() -> None:
    assert len(_bodies("request")) >= 10
    assert _bodies("response")
    assert sorted((CORPUS / "errors").glob("*.json"))


@pytest.mark.parametrize("path", _bodies("request"), ids=lambda path: path.stem)
def test_a_request_goes_back_exactly(path: Path) -> None:
    body = _load(path)["payload"]
    request = normalizer.parse_full_request(body)
    assert normalizer.render_full_request(request, incomplete="keep") == body
    conversation = normalizer.parse_request(body)
    rendered = normalizer.render_request(conversation, incomplete="keep")
    assert rendered == {
        key: body[key] for key in ("instructions", "input") if key in body
    }


@pytest.mark.parametrize("path", _bodies("response"), ids=lambda path: path.stem)
def test_a_reply_goes_back_exactly(path: Path) -> None:
    body = _load(path)["payload"]
    assert normalizer.render_response(normalizer.parse_response(body)) == body


@pytest.mark.parametrize(
    "path", sorted((CORPUS / "errors").glob("*.json")), ids=lambda path: path.stem
)
def test_an_error_goes_back_exactly(path: Path) -> None:
    record = _load(path)
    reply = normalizer.parse_error(record["payload"], status=record["status"])
    assert normalizer.render_error(reply) == (record["status"], record["payload"])


# What the dialect adds -------------------------------------------------------------

# Items of the specification's own examples (src/pages/specification.mdx):
# the extension item of "Items are extensible" and the reasoning item of
# "Reasoning", set in replies made here.
_EXTENSION = {
    "id": "ws_0df093a2d268cd7f0068efe79ac9408190b9833ec01e5d05ed",
    "type": "openai:web_search_call",
    "status": "completed",
    "action": {"type": "search", "query": "weather: San Francisco, CA"},
}
_SPEC_REASONING = {
    "type": "reasoning",
    "status": "completed",
    "summary": [{"type": "summary_text", "text": "Determined the task."}],
    "content": [{"type": "output_text", "text": "User asked: where to eat."}],
    "encrypted_content": None,
}


def _reply(*output: dict[str, Any]) -> dict[str, Any]:
    return {
        "id": "resp_1",
        "object": "response",
        "created_at": 1,
        "status": "completed",
        "model": "m",
        "output": list(output),
    }


def test_raw_reasoning_is_the_reasoning_text_and_goes_back() -> None:
    item = {
        "type": "reasoning",
        "id": "rs_1",
        "summary": [],
        "content": [{"type": "reasoning_text", "text": "step one"}],
    }
    body = _reply(item)
    conversation = normalizer.parse_response(body)
    part = conversation[0].content[0]
    assert isinstance(part, Reasoning)
    assert (part.text, part.provider, part.id) == ("step one", NAME, "rs_1")
    assert normalizer.render_response(conversation) == body


def test_the_specifications_reasoning_item_goes_back_as_it_came() -> None:
    body = _reply(_SPEC_REASONING)
    conversation = normalizer.parse_response(body)
    assert conversation[0].content[0].text == "User asked: where to eat."
    assert normalizer.render_response(conversation) == body


def test_the_summary_beside_raw_reasoning_is_reported_elsewhere() -> None:
    conversation = normalizer.parse_response(_reply(_SPEC_REASONING))
    report = Report()
    providers.get("openai-chat").render_request(
        [User("q"), *conversation], report=report
    )
    assert report.events


def test_openai_responses_keeps_raw_reasoning_as_before() -> None:
    body = _reply(_SPEC_REASONING)
    base = providers.get("openai-responses")
    conversation = base.parse_response(body)
    assert conversation[0].content[0].text == "Determined the task."
    assert base.render_response(conversation) == body


def test_plain_reasoning_of_another_format_goes_as_raw_reasoning() -> None:
    conversation = [User("q"), Assistant([Reasoning("thought"), "answer"])]
    body = normalizer.render_request(conversation)
    item = dict(body["input"][1])
    assert item.pop("id").startswith("rs_")
    assert item == {
        "type": "reasoning",
        "summary": [],
        "content": [{"type": "reasoning_text", "text": "thought"}],
    }


def test_an_extension_item_is_kept_whole_and_known() -> None:
    body = _reply(_EXTENSION)
    conversation = normalizer.parse_response(body)
    assert normalizer.render_response(conversation) == body
    extras = conversation[0].extras[NAME]
    assert "unknown" not in extras
    report = Report()
    providers.get("anthropic").render_request(
        [User("q"), *conversation, User("more")], report=report, unsupported="drop"
    )
    assert any("openai:web_search_call" in str(event) for event in report.events)


def test_allowed_tools_without_a_mode_is_a_subset_of_functions() -> None:
    body = _load(CORPUS / "spec-allowed-tools-request.json")["payload"]
    request = normalizer.parse_full_request(body)
    assert request.tool_choice.names == ("get_latest_sales_report",)
    assert request.tool_choice.mode == "auto"
    chat = providers.get("openai-chat").render_full_request(request)
    assert chat["tool_choice"]["type"] == "allowed_tools"


def test_request_message_items_are_typed() -> None:
    body = normalizer.render_request([User("hello")])
    assert body["input"] == [{"type": "message", "role": "user", "content": "hello"}]


def test_a_stream_grows_raw_reasoning() -> None:
    # Events made here in the specification's shapes (ResponseReasoningDelta/
    # DoneStreamingEvent), around an extension event that is skipped.
    response = {**_reply(), "status": "in_progress"}
    item = {"type": "reasoning", "id": "rs_1", "summary": [], "content": []}
    part = {"type": "reasoning_text", "text": ""}
    common = {"item_id": "rs_1", "output_index": 0, "content_index": 0}
    events = [
        {"type": "response.created", "sequence_number": 0, "response": response},
        {"type": "response.output_item.added", "output_index": 0, "item": item},
        {"type": "response.content_part.added", **common, "part": part},
        {"type": "response.reasoning.delta", **common, "delta": "step "},
        {"type": "acme:trace_event", "sequence_number": 4, "latency_ms": 3},
        {"type": "response.reasoning.delta", **common, "delta": "one"},
        {"type": "response.reasoning.done", **common, "text": "step one"},
        {
            "type": "response.output_item.done",
            "output_index": 0,
            "item": {**item, "content": [{**part, "text": "step one"}]},
        },
        {
            "type": "response.completed",
            "response": {**response, "status": "completed", "output": []},
        },
    ]
    conversation = normalizer.parse_stream(events)
    assert conversation[0].content[0].text == "step one"
    assert conversation[0].content[0].provider == NAME


# The specification's schema ----------------------------------------------------------

_OTHERS = ("openai-responses", "openai-chat", "anthropic", "gemini", "ollama")


def _foreign_requests() -> list[tuple[str, Path]]:
    found = []
    for name in _OTHERS:
        found += [(name, path) for path in _bodies_of(name, "request")[:12]]
    return found


def _bodies_of(name: str, kind: str) -> list[Path]:
    return sorted((DATA / "providers" / name).glob(f"*-{kind}.json"))


def _reasoning_content_only(errors: list[str], body: dict[str, Any]) -> bool:
    """Whether the only problems are raw reasoning in input items, which the
    specification's prose allows and its ReasoningItemParam types as null."""
    return any(
        item.get("type") == "reasoning" and "content" in item
        for item in body.get("input", ())
        if isinstance(item, dict)
    )


@pytest.mark.parametrize("path", _bodies("request"), ids=lambda path: path.stem)
def test_a_corpus_request_against_the_schema(path: Path) -> None:
    body = _load(path)["payload"]
    errors = _errors("CreateResponseBody", body)
    hosted = any(tool.get("type") != "function" for tool in body.get("tools", ()))
    untyped = any(
        isinstance(item, dict) and "type" not in item for item in body.get("input", ())
    )
    if hosted or untyped:
        # The schema's tools are functions only (hosted tools are prose), and
        # its message items require a type, which the specification's own
        # allowed_tools example leaves out: the schema refuses those.
        assert errors
        return
    assert errors == []


@pytest.mark.parametrize(
    ("name", "path"),
    _foreign_requests(),
    ids=lambda value: str(getattr(value, "stem", value)),
)
def test_a_request_rendered_from_another_format_against_the_schema(
    name: str, path: Path
) -> None:
    source = providers.get(name)
    body = _load(path)["payload"]
    try:
        conversation = source.parse_request(body)
    except Exception:  # a body only its own full parser reads
        pytest.skip("not a conversation this format reads alone")
    rendered = normalizer.render_request(
        conversation, report=Report(), unsupported="drop"
    )
    errors = _errors("CreateResponseBody", rendered)
    if errors and _reasoning_content_only(errors, rendered):
        return
    kept_whole = any(
        isinstance(item, dict)
        and item.get("type") not in ("message", "function_call", "function_call_output")
        for item in rendered.get("input", ())
    )
    if kept_whole:  # items the schema has no member for (server tools)
        return
    assert errors == [], (name, path.name)


def test_the_schemas_own_example_reply_lacks_required_fields() -> None:
    # The example of ResponseResource does not validate against it: it is
    # kept as it came, and these are the differences.
    body = _load(CORPUS / "spec-openapi-response-resource-example-response.json")
    errors = _errors("ResponseResource", body["payload"])
    assert errors
    assert all("required property" in error or "reasoning" in error for error in errors)


@pytest.mark.parametrize(
    ("name", "path"),
    [
        (name, path)
        for name in ("openai-chat", "anthropic", "gemini", "ollama")
        for path in _bodies_of(name, "response")[:6]
    ],
    ids=lambda value: str(getattr(value, "stem", value)),
)
def test_a_reply_rendered_from_another_format_against_the_schema(
    name: str, path: Path
) -> None:
    conversation = providers.get(name).parse_response(_load(path)["payload"])
    rendered = normalizer.render_response(
        conversation, report=Report(), unsupported="drop"
    )
    if any(item.get("type") not in _ITEM_TYPES for item in rendered["output"]):
        return  # another format's server-tool blocks kept out of the schema
    errors = _errors("ResponseResource", rendered)
    if conversation[0].metadata is None or conversation[0].metadata.model is None:
        # A reply that names no model: nothing to write (a known difference).
        errors = [error for error in errors if "'model'" not in error]
    assert errors == [], path.name


_ITEM_TYPES = ("message", "function_call", "reasoning")


# Replies from another format have the shape the compliance suite checks
# (tests/test_open_responses_compliance.py runs the suite itself): a
# ResponseResource whose output holds an assistant message with output_text,
# or a function call with call_id, name and arguments.


def _from_chat(message: dict[str, Any], finish: str) -> dict[str, Any]:
    chat = {
        "id": "chatcmpl-1",
        "object": "chat.completion",
        "created": 1,
        "model": "m",
        "choices": [{"index": 0, "message": message, "finish_reason": finish}],
    }
    reply = providers.get("openai-chat").parse_response(chat)
    return normalizer.render_response(reply)  # type: ignore[no-any-return]


def test_compliance_basic_reply_shape() -> None:
    reply = _from_chat({"role": "assistant", "content": "Hello!"}, "stop")
    assert _errors("ResponseResource", reply) == []
    assert reply["status"] == "completed"
    message = reply["output"][0]
    assert message["type"] == "message" and message["role"] == "assistant"
    assert message["content"][0]["type"] == "output_text"


def test_compliance_tool_calling_reply_shape() -> None:
    call = {
        "id": "call_1",
        "type": "function",
        "function": {"name": "get_weather", "arguments": '{"location":"Paris"}'},
    }
    message = {"role": "assistant", "content": None, "tool_calls": [call]}
    reply = _from_chat(message, "tool_calls")
    assert _errors("ResponseResource", reply) == []
    calls = [item for item in reply["output"] if item["type"] == "function_call"]
    assert calls and {"call_id", "name", "arguments"} <= calls[0].keys()
