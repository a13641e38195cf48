"""canisters.interop.langchain against the real langchain-core."""

from __future__ import annotations

import json

import pytest
from hypothesis import HealthCheck, given, settings

import canisters as c
from canisters.interop import langchain as interop
from canisters.providers import Report
from tests.strategies import conversations

from ._interop_support import (
    assert_no_silent_loss,
    extra_named_without,
    tool_histories,
)
from .budget import examples

lc = pytest.importorskip("langchain_core.messages")
fake = pytest.importorskip("langchain_core.language_models.fake_chat_models")


def _history() -> list[lc.BaseMessage]:
    model = fake.FakeMessagesListChatModel(
        responses=[
            lc.AIMessage(
                content=[
                    {"type": "reasoning", "reasoning": "Check the weather."},
                    {"type": "text", "text": "Looking."},
                ],
                tool_calls=[{"name": "weather", "args": {"city": "Paris"}, "id": "c1"}],
                usage_metadata={
                    "input_tokens": 10,
                    "output_tokens": 5,
                    "total_tokens": 15,
                    "input_token_details": {"cache_read": 4},
                    "output_token_details": {"reasoning": 2},
                },
                response_metadata={
                    "model_name": "fake-1",
                    "finish_reason": "tool_calls",
                },
            )
        ]
    )
    prompt = [
        lc.SystemMessage("Be brief."),
        lc.HumanMessage(
            content=[
                {"type": "text", "text": "Weather here?"},
                {"type": "image", "base64": "iVBORw0KGgo=", "mime_type": "image/png"},
                {
                    "type": "image_url",
                    "image_url": {"url": "https://example.com/a.png"},
                },
                {"type": "audio", "url": "https://example.com/a.mp3"},
                {"type": "file", "file_id": "file-1", "mime_type": "application/pdf"},
            ]
        ),
    ]
    reply = model.invoke(prompt)
    return [
        *prompt,
        reply,
        lc.ToolMessage("rainy", tool_call_id="c1", name="weather"),
        lc.ToolMessage("no such city", tool_call_id="c2", status="error"),
        lc.AIMessage(
            [
                {"type": "thinking", "thinking": "done", "signature": "sig-1"},
                "It rains.",
            ]
        ),
    ]


def test_messages_round_trip_exactly() -> None:
    history = _history()
    conversation = interop.to_canisters(history)
    assert interop.from_canisters(conversation) == history
    roles = [x.role for x in conversation]
    assert roles == [
        c.Role.Supervisor,
        c.Role.User,
        c.Role.Assistant,
        c.Role.Invocation,
        c.Role.Result,
        c.Role.Result,
        c.Role.Assistant,
    ]
    user = conversation[1]
    assert [type(p).__name__ for p in user.content] == [  # type: ignore[attr-defined]
        "Text",
        "Image",
        "Image",
        "Audio",
        "File",
    ]
    assert user.content[1].data == b"\x89PNG\r\n\x1a\n"  # type: ignore[attr-defined]
    assistant = conversation[2]
    assert assistant.content[0] == c.Reasoning(  # type: ignore[attr-defined]
        "Check the weather."
    )
    assert assistant.metadata == c.Metadata(
        model="fake-1",
        usage=c.Usage(10, 5, 4, 0, 2),
        finish_reason="tool_calls",
    )
    assert assistant.id == history[2].id
    invocation = conversation.invocations()[0]
    assert (invocation.name, dict(invocation.arguments)) == (
        "weather",
        {"city": "Paris"},
    )
    failed = conversation.results()[1]
    assert failed.error == c.ErrorInfo("TOOL_ERROR", "no such city")
    thinking = conversation[-1].content[0]  # type: ignore[attr-defined]
    assert thinking == c.Reasoning("done", "sig-1", provider="anthropic")


def test_json_form_round_trips() -> None:
    history = _history()
    data = lc.messages_to_dict(history)
    import json

    conversation = interop.from_json(json.dumps(data))
    assert interop.from_canisters(conversation) == history
    assert json.loads(interop.to_json(conversation)) == data


def test_neutral_conversation_to_langchain() -> None:
    conversation = c.Conversation(
        [
            c.Supervisor("Be kind."),
            c.User(["Hi", c.Image(url="https://example.com/x.png")]),
            c.Assistant(
                "Calling.", metadata=c.Metadata(model="m", usage=c.Usage(3, 4, 1))
            ),
            c.Invocation("f", {"x": 1}, invocation_id="i1"),
            c.Invocation("g", {}, invocation_id="i2"),
            c.Result("i1", "f", "42"),
            c.Result("i2", "g", (), c.ErrorInfo("TOOL_ERROR", "boom")),
        ]
    )
    messages = interop.from_canisters(conversation)
    assert [type(m).__name__ for m in messages] == [
        "SystemMessage",
        "HumanMessage",
        "AIMessage",
        "ToolMessage",
        "ToolMessage",
    ]
    ai = messages[2]
    assert [call["id"] for call in ai.tool_calls] == ["i1", "i2"]
    assert ai.usage_metadata["input_tokens"] == 3
    assert ai.usage_metadata["input_token_details"]["cache_read"] == 1
    assert ai.response_metadata["model_name"] == "m"
    assert messages[1].content[1] == {
        "type": "image",
        "url": "https://example.com/x.png",
    }
    assert messages[4].status == "error" and messages[4].content == "boom"
    assert messages[3].name == "f"
    back = interop.to_canisters(messages)
    assert [x.role for x in back] == [x.role for x in conversation]
    assert [x.id for x in back][:3] == [x.id for x in conversation][:3]


def test_losses_are_reported() -> None:
    report = Report()
    interop.from_canisters(
        [
            c.Document("ref", title="T"),
            c.User([c.Image(content_id="sha256:" + "0" * 64)]),
        ],
        report=report,
    )
    wheres = [event.where for event in report.events]
    assert "canister 0 (document)" in wheres
    assert "canister 1 (user), part 0 (image)" in wheres


@settings(
    max_examples=examples(40), deadline=None, suppress_health_check=list(HealthCheck)
)
@given(conversations)
def test_generated_conversations_lose_nothing_silently(
    conversation: c.Conversation,
) -> None:
    report = Report()
    messages = interop.from_canisters(conversation, report=report)
    assert_no_silent_loss(conversation, interop.to_canisters(messages), report)


def test_bad_input_raises_the_library_error() -> None:
    with pytest.raises(c.MalformedPayload):
        interop.to_canisters([{"role": "user"}])  # type: ignore[list-item]
    with pytest.raises(c.MalformedPayload):
        interop.from_json("[{}]")
    # What LangChain refuses is said in a line, however long the value.
    with pytest.raises(c.MalformedPayload) as caught:
        interop.from_json(json.dumps([{"type": "x" * 5000, "data": {}}]))
    assert len(str(caught.value)) < 400
    # A block of an unknown kind is kept whole; a media block's fields are checked.
    odd = [{"type": "human", "data": {"content": [{"type": {}}, "hi"]}}]
    read = interop.from_json(json.dumps(odd))
    assert read[0].content[0].extras["langchain"]["block"] == {"type": {}}  # type: ignore[attr-defined]
    image = {"type": "image", "url": "https://x/a.png", "mime_type": 5}
    with pytest.raises(c.MalformedPayload) as caught:
        interop.from_json(json.dumps([{"type": "human", "data": {"content": [image]}}]))
    assert caught.value.path.endswith(".mime_type")


def test_missing_library_names_the_extra() -> None:
    assert extra_named_without("langchain_core", "langchain") == "langchain"


@settings(
    max_examples=examples(30), deadline=None, suppress_health_check=list(HealthCheck)
)
@given(conversations)
def test_messages_written_from_canisters_round_trip_exactly(
    conversation: c.Conversation,
) -> None:
    messages = interop.from_canisters(conversation)
    assert interop.from_canisters(interop.to_canisters(messages)) == messages


def test_a_tool_message_without_a_name_takes_its_calls() -> None:
    history = [
        lc.HumanMessage("Weather in Paris?"),
        lc.AIMessage(
            "", tool_calls=[{"name": "weather", "args": {"city": "Paris"}, "id": "c1"}]
        ),
        lc.ToolMessage("3 degrees", tool_call_id="c1"),
        lc.AIMessage("3 degrees."),
    ]
    conversation = interop.to_canisters(history)
    c.validate(conversation)
    assert conversation[2].name == "weather"  # type: ignore[attr-defined]
    assert interop.from_canisters(conversation) == history
    # A name given, even one that differs, is kept as it was.
    named = [*history[:2], lc.ToolMessage("3", tool_call_id="c1", name="")]
    assert interop.from_canisters(interop.to_canisters(named)) == named


@settings(
    max_examples=examples(30), deadline=None, suppress_health_check=list(HealthCheck)
)
@given(tool_histories())
def test_histories_without_optional_fields_validate_and_round_trip(
    conversation: c.Conversation,
) -> None:
    """LangChain's optional ``ToolMessage.name`` left out: the results still
    name their calls' tools, and the messages come back as they were."""
    messages = [
        message.model_copy(update={"name": None})
        if isinstance(message, lc.ToolMessage)
        else message
        for message in interop.from_canisters(conversation)
    ]
    read = interop.to_canisters(messages)
    c.validate(read)
    assert [getattr(x, "name", None) for x in read] == [
        getattr(x, "name", None) for x in conversation
    ]
    assert interop.from_canisters(read) == messages


def test_standard_citation_and_server_tool_blocks_read_as_typed_parts() -> None:
    """LangChain's standard blocks for a search the provider ran and for a
    cited answer read as the typed parts, and write back as they came."""
    content = [
        {
            "type": "server_tool_call",
            "name": "web_search",
            "args": {"query": "claude shannon birth date"},
            "id": "srvtoolu_1",
        },
        {
            "type": "server_tool_result",
            "tool_call_id": "srvtoolu_1",
            "status": "success",
            "output": {
                "results": [
                    {
                        "url": "https://en.wikipedia.org/wiki/Claude_Shannon",
                        "title": "Claude Shannon - Wikipedia",
                    }
                ]
            },
        },
        {
            "type": "text",
            "text": "Claude Shannon was born on April 30, 1916.",
            "annotations": [
                {
                    "type": "citation",
                    "url": "https://en.wikipedia.org/wiki/Claude_Shannon",
                    "title": "Claude Shannon - Wikipedia",
                    "start_index": 0,
                    "end_index": 41,
                    "cited_text": "Claude Elwood Shannon (April 30, 1916 ...",
                },
                {"type": "citation", "title": "A document"},
            ],
        },
        {"type": "server_tool_result", "tool_call_id": "x", "status": "error"},
    ]
    history = [lc.HumanMessage("When?"), lc.AIMessage(content=content)]
    conversation = interop.to_canisters(history)
    call, result, cited, failed = conversation[1].content  # type: ignore[attr-defined]
    assert call == c.ProviderToolCall(
        "web_search", {"query": "claude shannon birth date"}, "srvtoolu_1"
    )
    assert (result.name, result.call_id, result.is_error) == (
        "web_search",
        "srvtoolu_1",
        False,
    )
    assert result.hits == (
        c.SearchHit(
            "https://en.wikipedia.org/wiki/Claude_Shannon",
            "Claude Shannon - Wikipedia",
        ),
    )
    assert isinstance(cited, c.CitedText)
    first, second = cited.citations
    assert first.source == c.UrlSource(
        "https://en.wikipedia.org/wiki/Claude_Shannon", "Claude Shannon - Wikipedia"
    )
    assert (first.start, first.end) == (0, 41)
    assert second.source == c.DocumentSource(None, "A document")
    assert failed.is_error and failed.name == "server_tool"
    assert interop.from_canisters(conversation) == history
    json_form = c.from_json(c.to_json(conversation))
    assert interop.from_canisters(json_form) == history


def test_blocks_the_typed_parts_cannot_hold_are_kept_whole() -> None:
    odd = [
        {"type": "text", "text": "x", "annotations": [{"type": "citation", "k": 1}]},
        {
            "type": "text",
            "text": "y",
            "annotations": [{"type": "citation", "end_index": -1}],
        },
        {"type": "server_tool_call", "name": "s", "args": {}, "extra": True},
        {"type": "server_tool_result", "tool_call_id": "c", "status": "weird"},
    ]
    history = [lc.HumanMessage("q"), lc.AIMessage(content=odd)]
    conversation = interop.to_canisters(history)
    assert all(
        type(part) is c.Text
        for part in conversation[1].content  # type: ignore[attr-defined]
    )
    assert interop.from_canisters(conversation) == history
