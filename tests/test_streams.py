"""Streamed responses: hand-made event lists for every built-in normalizer.

Each stream is checked against the non-streamed response body it stands for,
written by hand beside it: ``parse_stream`` must give what ``parse_response``
gives for that body, and ``render_response`` of it must be a body the
provider's SDK type accepts. The shapes follow the SDKs' event types and the
providers' documentation of their streams.
"""

from __future__ import annotations

import base64
import copy
import itertools
import json
import math
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from canisters import Conversation, Invocation, Text, providers
from canisters.providers import MalformedPayload, ProviderError, Report, streams

from .budget import examples
from .providers_support import anonymous


def check_equivalent(
    name: str, events: list[Any], body: dict[str, Any]
) -> Conversation:
    """The stream parses to what its non-streamed body parses to."""
    normalizer = providers.get(name)
    streamed = normalizer.parse_stream(events)  # type: ignore[attr-defined]
    whole = normalizer.parse_response(body)
    assert anonymous(streamed) == anonymous(whole)
    return streamed  # type: ignore[no-any-return]


def split(text: str, cuts: Iterable[int]) -> list[str]:
    """``text`` cut at the given offsets (each taken modulo its length)."""
    points = sorted({cut % (len(text) + 1) for cut in cuts} | {0, len(text)})
    return [text[a:b] for a, b in itertools.pairwise(points)] or [""]


def bad(name: str, events: list[Any], path: str, words: str) -> None:
    with pytest.raises(MalformedPayload) as caught:
        providers.get(name).parse_stream(events)  # type: ignore[attr-defined]
    assert caught.value.path == path, str(caught.value)
    assert words in str(caught.value)


def refused(name: str, events: list[Any], path: str, kind: str) -> None:
    """The stream holds the provider's error event at ``path``, of ``kind``."""
    with pytest.raises(providers.ErrorResponse) as caught:
        providers.get(name).parse_stream(events)  # type: ignore[attr-defined]
    assert caught.value.path == path, str(caught.value)
    assert caught.value.reply.kind == kind


def check_accumulator_semantics(name: str, events: list[Any]) -> None:
    """feed() gives nothing until the end, then the reply finish() gives, with
    the ids every snapshot already used."""
    accumulator = providers.get(name).accumulator()  # type: ignore[attr-defined]
    first_ids: list[str] = []
    for number, event in enumerate(events[:-1]):
        assert accumulator.feed(event) == (), number
        snapshot = accumulator.snapshot()
        if snapshot and not first_ids:
            first_ids = [snapshot[0].id]
    assert not accumulator.complete
    completed = accumulator.feed(events[-1])
    assert accumulator.complete
    final = accumulator.finish()
    assert completed == tuple(final) and completed
    assert accumulator.snapshot() == final
    assert final[0].id == first_ids[0]
    assert accumulator.events == len(events)
    with pytest.raises(MalformedPayload) as caught:
        accumulator.feed(events[0])
    assert caught.value.path == f"$[{len(events)}]"


STREAMS_DATA = Path(__file__).parent / "data" / "streams"


# Anthropic ---------------------------------------------------------------------------

A_START = {
    "type": "message_start",
    "message": {
        "id": "msg_01",
        "type": "message",
        "role": "assistant",
        "model": "claude-sonnet-4-5",
        "content": [],
        "stop_reason": None,
        "stop_sequence": None,
        "usage": {
            "input_tokens": 472,
            "cache_creation_input_tokens": 0,
            "cache_read_input_tokens": 100,
            "output_tokens": 2,
        },
    },
}
SIGNATURE = "EqQBCkgIARABGAIiQL2" + "x" * 80 + "/+=="


def a_block(index: int, block: dict[str, Any]) -> dict[str, Any]:
    return {"type": "content_block_start", "index": index, "content_block": block}


def a_delta(index: int, **delta: Any) -> dict[str, Any]:
    return {"type": "content_block_delta", "index": index, "delta": delta}


def a_stop(index: int) -> dict[str, Any]:
    return {"type": "content_block_stop", "index": index}


def a_end(stop: str, output: int) -> list[dict[str, Any]]:
    return [
        {
            "type": "message_delta",
            "delta": {"stop_reason": stop, "stop_sequence": None},
            "usage": {"output_tokens": output},
        },
        {"type": "message_stop"},
    ]


def anthropic_tools_stream(
    thinking: list[str], text: list[str], paris: list[str], rome: list[str]
) -> list[dict[str, Any]]:
    return [
        A_START,
        a_block(0, {"type": "thinking", "thinking": "", "signature": ""}),
        *(a_delta(0, type="thinking_delta", thinking=piece) for piece in thinking),
        a_delta(0, type="signature_delta", signature=SIGNATURE),
        a_stop(0),
        {"type": "ping"},
        a_block(1, {"type": "text", "text": ""}),
        *(a_delta(1, type="text_delta", text=piece) for piece in text),
        a_stop(1),
        a_block(
            2, {"type": "tool_use", "id": "toolu_01", "name": "weather", "input": {}}
        ),
        *(a_delta(2, type="input_json_delta", partial_json=piece) for piece in paris),
        a_stop(2),
        a_block(
            3, {"type": "tool_use", "id": "toolu_02", "name": "weather", "input": {}}
        ),
        *(a_delta(3, type="input_json_delta", partial_json=piece) for piece in rome),
        a_stop(3),
        *a_end("tool_use", 89),
    ]


THOUGHT = "The user wants both cities. I will call the tool twice."
SAID = "Let me check the weather in Paris and in Rome."
PARIS = '{"city": "Paris", "unit": "celsius"}'
ROME = '{"city": "Rome", "unit": "celsius"}'

A_TOOLS = anthropic_tools_stream(
    ["The user wants both cities.", " I will call the tool twice."],
    ["Let me check", " the weather in Paris", " and in Rome."],
    ["", '{"city": ', '"Par', 'is", "unit": "cel', 'sius"}'],
    ['{"city": "Rome", ', '"unit": "celsius"}'],
)
A_TOOLS_BODY = {
    "id": "msg_01",
    "type": "message",
    "role": "assistant",
    "model": "claude-sonnet-4-5",
    "content": [
        {"type": "thinking", "thinking": THOUGHT, "signature": SIGNATURE},
        {"type": "text", "text": SAID},
        {
            "type": "tool_use",
            "id": "toolu_01",
            "name": "weather",
            "input": {"city": "Paris", "unit": "celsius"},
        },
        {
            "type": "tool_use",
            "id": "toolu_02",
            "name": "weather",
            "input": {"city": "Rome", "unit": "celsius"},
        },
    ],
    "stop_reason": "tool_use",
    "stop_sequence": None,
    "usage": {
        "input_tokens": 472,
        "cache_creation_input_tokens": 0,
        "cache_read_input_tokens": 100,
        "output_tokens": 89,
    },
}


def test_anthropic_stream_equals_the_whole_response() -> None:
    anthropic = pytest.importorskip("anthropic")
    conversation = check_equivalent("anthropic", A_TOOLS, A_TOOLS_BODY)
    head = conversation[0]
    reasoning = head.content[0]  # type: ignore[attr-defined]
    assert reasoning.signature == SIGNATURE and reasoning.text == THOUGHT
    assert head.metadata is not None and head.metadata.finish_reason == "tool_calls"
    assert head.metadata.usage is not None and head.metadata.usage.output_tokens == 89
    assert head.metadata.usage.input_tokens == 572
    assert [c.arguments for c in conversation[1:]] == [  # type: ignore[attr-defined]
        {"city": "Paris", "unit": "celsius"},
        {"city": "Rome", "unit": "celsius"},
    ]
    rendered = providers.get("anthropic").render_response(conversation)
    assert rendered == A_TOOLS_BODY
    anthropic.types.Message.model_validate(rendered)


def test_anthropic_text_and_citations() -> None:
    citation = {
        "type": "char_location",
        "cited_text": "The grass is green.",
        "document_index": 0,
        "document_title": "Facts",
        "start_char_index": 0,
        "end_char_index": 19,
    }
    events = [
        A_START,
        a_block(0, {"type": "text", "text": ""}),
        a_delta(0, type="text_delta", text="The grass "),
        a_delta(0, type="citations_delta", citation=citation),
        a_delta(0, type="text_delta", text="is green."),
        a_stop(0),
        *a_end("end_turn", 12),
    ]
    body = {
        **A_TOOLS_BODY,
        "content": [
            {"type": "text", "text": "The grass is green.", "citations": [citation]}
        ],
        "stop_reason": "end_turn",
        "usage": {**A_TOOLS_BODY["usage"], "output_tokens": 12},
    }
    conversation = check_equivalent("anthropic", events, body)
    assert providers.get("anthropic").render_response(conversation) == body


def test_anthropic_redacted_thinking_and_final_usage_counts() -> None:
    events = [
        A_START,
        a_block(0, {"type": "redacted_thinking", "data": "EmwKAhgBEgy3va3pzix"}),
        a_stop(0),
        a_block(1, {"type": "text", "text": ""}),
        a_delta(1, type="text_delta", text="Done."),
        a_stop(1),
        {
            "type": "message_delta",
            "delta": {"stop_reason": "end_turn", "stop_sequence": None},
            "usage": {
                "output_tokens": 7,
                "input_tokens": 500,
                "cache_read_input_tokens": None,
            },
        },
        {"type": "message_stop"},
    ]
    body = {
        **A_TOOLS_BODY,
        "content": [
            {"type": "redacted_thinking", "data": "EmwKAhgBEgy3va3pzix"},
            {"type": "text", "text": "Done."},
        ],
        "stop_reason": "end_turn",
        "usage": {**A_TOOLS_BODY["usage"], "input_tokens": 500, "output_tokens": 7},
    }
    check_equivalent("anthropic", events, body)


def test_anthropic_sdk_event_objects() -> None:
    pytest.importorskip("anthropic")
    import pydantic
    from anthropic.types import RawMessageStreamEvent

    adapter: Any = pydantic.TypeAdapter(RawMessageStreamEvent)
    # The SDK's stream drops pings before they become objects.
    objects = [adapter.validate_python(e) for e in A_TOOLS if e["type"] != "ping"]
    check_equivalent("anthropic", objects, A_TOOLS_BODY)


def test_anthropic_accumulator() -> None:
    check_accumulator_semantics("anthropic", A_TOOLS)
    accumulator = providers.get("anthropic").accumulator()  # type: ignore[attr-defined]
    assert accumulator.snapshot() == Conversation()
    # Up to the middle of the Paris arguments: '{"city": "Par'.
    cut = next(
        n
        for n, e in enumerate(A_TOOLS)
        if e.get("delta", {}).get("partial_json") == '"Par'
    )
    for event in A_TOOLS[: cut + 1]:
        accumulator.feed(event)
    snapshot = accumulator.snapshot()
    assert snapshot[0].content == (  # type: ignore[attr-defined]
        snapshot[0].content[0],  # type: ignore[attr-defined]
        Text(SAID),
    )
    call = snapshot[1]
    assert isinstance(call, Invocation) and call.arguments == {}
    assert call.extras["anthropic"]["partial_arguments"] == '{"city": "Par'
    assert snapshot[0].metadata.finish_reason is None  # type: ignore[union-attr]


@settings(max_examples=examples(30), deadline=None)
@given(
    st.lists(st.integers(0, 200), max_size=6),
    st.lists(st.integers(0, 200), max_size=6),
    st.lists(st.integers(0, 200), max_size=6),
)
def test_anthropic_any_split_gives_the_same_reply(
    thinking: list[int], text: list[int], arguments: list[int]
) -> None:
    events = anthropic_tools_stream(
        split(THOUGHT, thinking), split(SAID, text), split(PARIS, arguments), [ROME]
    )
    check_equivalent("anthropic", events, A_TOOLS_BODY)


def test_anthropic_bad_streams() -> None:
    name = "anthropic"
    bad(name, [A_START, "oops"], "$[1]", "expected an object")
    bad(
        name,
        [a_block(0, {"type": "text", "text": ""})],
        "$[0].type",
        "before message_start",
    )
    bad(name, [A_START, A_START], "$[1].type", "a second message_start")
    bad(
        name,
        [A_START, a_delta(0, type="text_delta", text="x")],
        "$[1].index",
        "never started",
    )
    bad(
        name,
        [A_START, a_block(1, {"type": "text", "text": ""})],
        "$[1].index",
        "out of order",
    )
    text_block = [A_START, a_block(0, {"type": "text", "text": ""})]
    bad(
        name,
        [*text_block, a_stop(0), a_delta(0, type="text_delta", text="x")],
        "$[3].index",
        "after its content_block_stop",
    )
    bad(
        name,
        [*text_block, a_delta(0, type="input_json_delta", partial_json="{")],
        "$[2].delta.type",
        "input_json_delta for a 'text' block",
    )
    bad(
        name,
        [*text_block, a_delta(0, type="thinking_delta", thinking="x")],
        "$[2].delta.type",
        "thinking_delta for a 'text' block",
    )
    bad(
        name,
        [*text_block, a_delta(0, type=7)],
        "$[2].delta.type",
        "unknown delta type",
    )
    bad(
        name,
        [*text_block, a_delta(0, type="text_delta", text=3)],
        "$[2].delta.text",
        "expected a string",
    )
    bad(name, [*text_block, {"type": "message_stop"}], "$[2]", "block 0 is still open")
    tool = [
        A_START,
        a_block(0, {"type": "tool_use", "id": "t", "name": "f", "input": {}}),
    ]
    bad(
        name,
        [*tool, a_delta(0, type="input_json_delta", partial_json='{"a": '), a_stop(0)],
        "$[3]",
        "not valid JSON",
    )
    bad(
        name,
        [*tool, a_delta(0, type="input_json_delta", partial_json="[1]"), a_stop(0)],
        "$[3]",
        "not a JSON object",
    )
    overloaded = {
        "type": "error",
        "error": {"type": "overloaded_error", "message": "Overloaded"},
    }
    refused(name, [A_START, overloaded], "$[1]", "overloaded")
    bad(name, A_TOOLS[:-1], f"$[{len(A_TOOLS) - 1}]", "before message_stop")
    bad(
        name,
        [*A_TOOLS, {"type": "message_stop"}],
        f"$[{len(A_TOOLS)}]",
        "after the end",
    )
    with pytest.raises(MalformedPayload):
        providers.get(name).parse_stream("data: {}")  # type: ignore[attr-defined]
    # A newer event type is skipped, as Anthropic asks of clients.
    newer = [A_TOOLS[0], {"type": "sparkle", "index": 9}, *A_TOOLS[1:]]
    check_equivalent(name, newer, A_TOOLS_BODY)


def test_accumulator_refuses_events_after_a_failure() -> None:
    accumulator = providers.get("anthropic").accumulator()  # type: ignore[attr-defined]
    with pytest.raises(MalformedPayload):
        accumulator.feed(a_stop(0))
    with pytest.raises(ProviderError, match="failed at an earlier event"):
        accumulator.feed(A_START)
    with pytest.raises(ProviderError, match="truncated must be"):
        providers.get("anthropic").accumulator().finish(truncated="maybe")  # type: ignore[attr-defined]


def test_anthropic_truncated_stream_kept_with_a_report() -> None:
    # Cut in the middle of the Paris call: the thinking and the text are complete.
    cut = next(
        n
        for n, e in enumerate(A_TOOLS)
        if e.get("delta", {}).get("partial_json") == '"Par'
    )
    report = Report()
    conversation = providers.get(
        "anthropic"
    ).parse_stream(  # type: ignore[attr-defined]
        A_TOOLS[: cut + 1], truncated="keep", report=report
    )
    body = {
        **A_TOOLS_BODY,
        "content": A_TOOLS_BODY["content"][:2],
        "stop_reason": None,
        "usage": A_START["message"]["usage"],
    }
    assert anonymous(conversation) == anonymous(
        providers.get("anthropic").parse_response(body)
    )
    assert [event.kind for event in report.events] == ["cut", "cut"]
    assert report.events[0].where == f"$[{cut + 1}]"
    assert "before message_stop" in report.events[0].detail
    assert report.events[1].where == "block 2 (tool_use)"
    empty = Report()
    assert (
        providers.get("anthropic").parse_stream([], truncated="keep", report=empty)
        == Conversation()
    )  # type: ignore[attr-defined]
    assert [event.kind for event in empty.events] == ["cut"]


# OpenAI Chat -------------------------------------------------------------------------


def chunk(choices: list[dict[str, Any]], **extra: Any) -> dict[str, Any]:
    return {
        "id": "chatcmpl-1",
        "object": "chat.completion.chunk",
        "created": 1741569952,
        "model": "gpt-4.1-2025-04-14",
        "service_tier": "default",
        "system_fingerprint": "fp_1",
        "choices": choices,
        **extra,
    }


def c_delta(
    delta: dict[str, Any], finish: str | None = None, index: int = 0
) -> dict[str, Any]:
    return {"index": index, "delta": delta, "logprobs": None, "finish_reason": finish}


USAGE = {
    "prompt_tokens": 82,
    "completion_tokens": 41,
    "total_tokens": 123,
    "prompt_tokens_details": {"cached_tokens": 0, "audio_tokens": 0},
    "completion_tokens_details": {"reasoning_tokens": 0, "audio_tokens": 0},
}


def call_delta(
    index: int, call_id: str | None, name: str | None, arguments: str
) -> dict[str, Any]:
    delta: dict[str, Any] = {"index": index}
    if call_id is not None:
        delta.update(id=call_id, type="function")
        delta["function"] = {"name": name, "arguments": arguments}
    else:
        delta["function"] = {"arguments": arguments}
    return delta


def chat_tools_stream(
    text: list[str], paris: list[str], rome: list[str]
) -> list[dict[str, Any]]:
    """Text, then two parallel calls whose argument pieces interleave; usage last."""
    events = [
        chunk(
            [c_delta({"role": "assistant", "content": "", "refusal": None})], usage=None
        )
    ]
    events += [chunk([c_delta({"content": piece})], usage=None) for piece in text]
    events.append(
        chunk(
            [c_delta({"tool_calls": [call_delta(0, "call_P", "weather", "")]})],
            usage=None,
        )
    )
    events.append(
        chunk(
            [c_delta({"tool_calls": [call_delta(1, "call_R", "weather", "")]})],
            usage=None,
        )
    )
    for number in range(max(len(paris), len(rome))):
        pieces = (
            [call_delta(0, None, None, paris[number])] if number < len(paris) else []
        )
        if number < len(rome):
            pieces.append(call_delta(1, None, None, rome[number]))
        events.append(chunk([c_delta({"tool_calls": pieces})], usage=None))
    events.append(chunk([c_delta({}, "tool_calls")], usage=None))
    events.append(chunk([], usage=USAGE))
    return events


C_TOOLS = chat_tools_stream(
    ["Let me check", " the weather."],
    ['{"ci', 'ty": "Paris", ', '"unit": "celsius"}'],
    ['{"city": "Rome", "unit": "celsius"}'],
)
C_TOOLS_BODY = {
    "id": "chatcmpl-1",
    "object": "chat.completion",
    "created": 1741569952,
    "model": "gpt-4.1-2025-04-14",
    "service_tier": "default",
    "system_fingerprint": "fp_1",
    "choices": [
        {
            "index": 0,
            "message": {
                "role": "assistant",
                "content": "Let me check the weather.",
                "refusal": None,
                "tool_calls": [
                    {
                        "id": "call_P",
                        "type": "function",
                        "function": {"name": "weather", "arguments": PARIS},
                    },
                    {
                        "id": "call_R",
                        "type": "function",
                        "function": {"name": "weather", "arguments": ROME},
                    },
                ],
            },
            "logprobs": None,
            "finish_reason": "tool_calls",
        }
    ],
    "usage": USAGE,
}


def test_openai_chat_stream_equals_the_whole_response() -> None:
    openai = pytest.importorskip("openai")
    conversation = check_equivalent("openai-chat", C_TOOLS, C_TOOLS_BODY)
    head = conversation[0]
    assert head.metadata is not None and head.metadata.usage is not None
    assert head.metadata.usage.input_tokens == 82
    assert head.metadata.finish_reason == "tool_calls"
    assert [c.invocation_id for c in conversation[1:]] == ["call_P", "call_R"]  # type: ignore[attr-defined]
    rendered = providers.get("openai-chat").render_response(conversation)
    assert rendered == C_TOOLS_BODY
    openai.types.chat.ChatCompletion.model_validate(rendered)
    chunks = [openai.types.chat.ChatCompletionChunk.model_validate(e) for e in C_TOOLS]
    check_equivalent("openai-chat", chunks, C_TOOLS_BODY)


def test_openai_chat_two_choices_without_usage() -> None:
    events = [
        chunk(
            [
                c_delta({"role": "assistant", "content": ""}, index=0),
                c_delta({"role": "assistant", "content": ""}, index=1),
            ]
        ),
        chunk([c_delta({"content": "Hel"}, index=1)]),
        chunk([c_delta({"content": "Bonj"}, index=0)]),
        chunk([c_delta({"content": "lo"}, "stop", index=1)]),
        chunk([c_delta({"content": "our"}, index=0)]),
        chunk([c_delta({}, "length", index=0)]),
    ]
    body = {
        **{k: v for k, v in C_TOOLS_BODY.items() if k != "usage"},
        "choices": [
            {
                "index": 0,
                "message": {"role": "assistant", "content": "Bonjour"},
                "logprobs": None,
                "finish_reason": "length",
            },
            {
                "index": 1,
                "message": {"role": "assistant", "content": "Hello"},
                "logprobs": None,
                "finish_reason": "stop",
            },
        ],
    }
    check_equivalent("openai-chat", events, body)
    check_accumulator_semantics("openai-chat", events)


def test_openai_chat_refusal_logprobs_and_trailing_usage() -> None:
    token = {"token": "No", "logprob": -0.1, "bytes": [78, 111], "top_logprobs": []}
    events = [
        chunk(
            [
                {
                    **c_delta({"role": "assistant", "refusal": ""}),
                    "logprobs": {"content": [], "refusal": [token]},
                }
            ]
        ),
        chunk([c_delta({"refusal": "I can't help with that."}, "stop")]),
        # Some servers send the usage chunk without announcing it.
        chunk([], usage=USAGE),
    ]
    body = {
        **C_TOOLS_BODY,
        "choices": [
            {
                "index": 0,
                "message": {
                    "role": "assistant",
                    "content": None,
                    "refusal": "I can't help with that.",
                },
                "logprobs": {"content": [], "refusal": [token]},
                "finish_reason": "stop",
            }
        ],
    }
    check_equivalent("openai-chat", events, body)
    accumulator = providers.get("openai-chat").accumulator()  # type: ignore[attr-defined]
    assert accumulator.feed(events[0]) == ()
    assert accumulator.feed(events[1])  # the reply is complete without the usage
    assert accumulator.feed(events[2]) == ()
    head = accumulator.finish()[0]
    assert head.metadata is not None and head.metadata.usage is not None


def test_openai_chat_accumulator() -> None:
    check_accumulator_semantics("openai-chat", C_TOOLS)
    accumulator = providers.get("openai-chat").accumulator()  # type: ignore[attr-defined]
    for event in C_TOOLS[:6]:  # both calls started, one argument piece each
        accumulator.feed(event)
    snapshot = accumulator.snapshot()
    assert snapshot[0].content == (Text("Let me check the weather."),)  # type: ignore[attr-defined]
    paris, rome = snapshot[1], snapshot[2]
    assert paris.extras["openai-chat"]["partial_arguments"] == '{"ci'  # type: ignore[union-attr]
    assert rome.arguments == {"city": "Rome", "unit": "celsius"}  # type: ignore[union-attr]
    assert "partial_arguments" not in rome.extras.get("openai-chat", {})
    # Finished but waiting for the announced usage chunk.
    accumulator = providers.get("openai-chat").accumulator()  # type: ignore[attr-defined]
    for event in C_TOOLS[:-1]:
        assert accumulator.feed(event) == ()
    with pytest.raises(MalformedPayload, match="the chunk with the usage"):
        accumulator.finish()


@settings(max_examples=examples(30), deadline=None)
@given(
    st.lists(st.integers(0, 200), max_size=6),
    st.lists(st.integers(0, 200), max_size=8),
    st.lists(st.integers(0, 200), max_size=8),
)
def test_openai_chat_any_split_gives_the_same_reply(
    text: list[int], paris: list[int], rome: list[int]
) -> None:
    events = chat_tools_stream(
        split("Let me check the weather.", text), split(PARIS, paris), split(ROME, rome)
    )
    check_equivalent("openai-chat", events, C_TOOLS_BODY)


def test_openai_chat_bad_streams() -> None:
    name = "openai-chat"
    bad(name, [{"type": []}], "$[0].type", "not a chat.completion.chunk")
    bad(
        name, [chunk([c_delta({"role": "assistant"})]), 7], "$[1]", "expected an object"
    )
    orphan = chunk(
        [c_delta({"tool_calls": [{"index": 2, "function": {"arguments": "{}"}}]})]
    )
    bad(
        name,
        [orphan],
        "$[0].choices[0].delta.tool_calls[0].index",
        "tool call 2, never started",
    )
    late = chunk([c_delta({"content": "more"})])
    bad(
        name,
        [chunk([c_delta({"content": "x"}, "stop")], usage=None), late],
        "$[1].choices[0].delta",
        "after its finish_reason",
    )
    bad(
        name,
        [chunk([{"index": "0", "delta": {}}])],
        "$[0].choices[0].index",
        "invalid choice index",
    )
    error = {"error": {"message": "The server had an error", "type": "server_error"}}
    refused(name, [chunk([c_delta({"content": "x"})]), error], "$[1]", "server_error")
    bad(name, C_TOOLS[:3], "$[3]", "a finish_reason for every choice")
    broken = chat_tools_stream(["x"], ['{"a": '], ["{}"])
    bad(name, broken, f"$[{len(broken) - 1}]", "arguments are not valid JSON")
    report = Report()
    kept = providers.get(name).parse_stream(
        C_TOOLS[:6], truncated="keep", report=report
    )  # type: ignore[attr-defined]
    assert [c.invocation_id for c in kept[1:]] == ["call_R"]  # type: ignore[attr-defined]
    assert [e.where for e in report.events] == ["$[6]", "choice 0, tool call 0"]
    assert kept[0].content == (Text("Let me check the weather."),)  # type: ignore[attr-defined]


# Shared ------------------------------------------------------------------------------


def test_openai_chat_the_usage_chunk_ends_a_stream_without_finish_reason() -> None:
    """Snowflake Cortex never sends a finish_reason: its stream ends with the
    usage chunk (``"choices": []``), the last chunk of any generation."""
    name = "openai-chat"
    deltas = [
        chunk([c_delta({"role": "assistant", "content": "Hel"})]),
        chunk([c_delta({"content": "lo"})]),
    ]
    reply = providers.get(name).parse_stream([*deltas, chunk([], usage=USAGE)])  # type: ignore[attr-defined]
    assert reply[0].content == (Text("Hello"),)  # type: ignore[attr-defined]
    body = providers.get(name).render_response(reply)
    assert body["choices"][0]["finish_reason"] is None
    assert body["usage"] == USAGE
    # without it, the stream was cut: refused as before
    bad(name, deltas, "$[2]", "a finish_reason for every choice")
    # usage beside a choice's delta (vLLM's continuous usage) ends nothing
    beside = chunk([c_delta({"content": "!"})], usage=USAGE)
    bad(name, [*deltas, beside], "$[3]", "a finish_reason for every choice")


def test_streaming_normalizer_protocol() -> None:
    for name in ("anthropic", "openai-chat", "openai-responses", "gemini", "ollama"):
        normalizer = providers.get(name)
        assert isinstance(normalizer, providers.StreamingNormalizer), name
        assert isinstance(normalizer.accumulator(), streams.Accumulator)

    class Plain:
        name = "plain"

        def parse_request(self, body: Any) -> Conversation:
            return Conversation()

        def render_request(
            self, conversation: Conversation, **options: Any
        ) -> dict[str, Any]:
            return {}

        def parse_response(self, body: Any) -> Conversation:
            return Conversation()

        def render_response(
            self, conversation: Conversation, **options: Any
        ) -> dict[str, Any]:
            return {}

    assert isinstance(Plain(), providers.Normalizer)
    assert not isinstance(Plain(), providers.StreamingNormalizer)


def test_stream_error_texts() -> None:
    assert (
        str(streams.stream_error("boom", "$[2]"))
        == "the provider refused the call mid-stream at $[2]: unknown: boom"
    )
    assert "code: 7" not in str(streams.stream_error({"code": 7}, "$[0]"))
    assert "{'detail': 'x'}" in str(streams.stream_error({"detail": "x"}, "$[0]"))
    assert streams.fresh({"a": [{"b": 1}]}) == {"a": [{"b": 1}]}


def test_recorder_records_each_completed_canister(tmp_path: Any) -> None:
    from canisters import User
    from canisters.recording import Recorder, resume
    from canisters.storage import open_store

    store = open_store(str(tmp_path))
    recorder = Recorder(store, "run")
    recorder.record(User("Weather in Paris and Rome?"))
    accumulator = providers.get("anthropic").accumulator()  # type: ignore[attr-defined]
    written: list[int] = []
    for event in A_TOOLS:
        recorder.record_all(accumulator.feed(event))
        written.append(len(store.load("run")))
    # Nothing but the user message until the stream ended, then the whole reply.
    assert written[:-1] == [1] * (len(A_TOOLS) - 1) and written[-1] == 4
    stored = store.load("run")
    assert [c.id for c in stored[1:]] == [c.id for c in accumulator.finish()]
    assert [c.invocation_id for c in resume(store, "run").pending] == [
        "toolu_01",
        "toolu_02",
    ]


# OpenAI Responses --------------------------------------------------------------------

ENCRYPTED = "gAAAAABoX" + "Zk1" * 40 + "=="
R_ENVELOPE = {
    "id": "resp_01",
    "object": "response",
    "created_at": 1756476884,
    "status": "in_progress",
    "error": None,
    "incomplete_details": None,
    "model": "gpt-5-2025-08-07",
    "output": [],
    "usage": None,
}
R_USAGE = {
    "input_tokens": 120,
    "input_tokens_details": {"cached_tokens": 64},
    "output_tokens": 300,
    "output_tokens_details": {"reasoning_tokens": 192},
    "total_tokens": 420,
}
R_OUTPUT = [
    {
        "id": "rs_01",
        "type": "reasoning",
        "summary": [{"type": "summary_text", "text": "**Weather**\n\nTwo cities."}],
        "encrypted_content": ENCRYPTED,
    },
    {
        "id": "msg_01",
        "type": "message",
        "status": "completed",
        "role": "assistant",
        "content": [
            {"type": "output_text", "annotations": [], "logprobs": [], "text": SAID}
        ],
    },
    {
        "id": "fc_01",
        "type": "function_call",
        "status": "completed",
        "call_id": "call_P",
        "name": "weather",
        "arguments": PARIS,
    },
    {
        "id": "fc_02",
        "type": "function_call",
        "status": "completed",
        "call_id": "call_R",
        "name": "weather",
        "arguments": ROME,
    },
]
R_BODY = {**R_ENVELOPE, "status": "completed", "output": R_OUTPUT, "usage": R_USAGE}


def r_event(kind: str, **fields: Any) -> dict[str, Any]:
    return {"type": kind, **fields}


def responses_stream(
    summary: list[str], text: list[str], paris: list[str], *, whole: bool = True
) -> list[dict[str, Any]]:
    reasoning, message, call_p, call_r = R_OUTPUT
    events = [
        r_event("response.created", response=R_ENVELOPE),
        r_event("response.in_progress", response=R_ENVELOPE),
        r_event(
            "response.output_item.added",
            output_index=0,
            item={"id": "rs_01", "type": "reasoning", "summary": []},
        ),
        r_event(
            "response.reasoning_summary_part.added",
            item_id="rs_01",
            output_index=0,
            summary_index=0,
            part={"type": "summary_text", "text": ""},
        ),
        *(
            r_event(
                "response.reasoning_summary_text.delta",
                item_id="rs_01",
                output_index=0,
                summary_index=0,
                delta=piece,
            )
            for piece in summary
        ),
        r_event("response.output_item.done", output_index=0, item=reasoning),
        r_event(
            "response.output_item.added",
            output_index=1,
            item={
                "id": "msg_01",
                "type": "message",
                "status": "in_progress",
                "role": "assistant",
                "content": [],
            },
        ),
        r_event(
            "response.content_part.added",
            item_id="msg_01",
            output_index=1,
            content_index=0,
            part={"type": "output_text", "annotations": [], "logprobs": [], "text": ""},
        ),
        *(
            r_event(
                "response.output_text.delta",
                item_id="msg_01",
                output_index=1,
                content_index=0,
                delta=piece,
                logprobs=[],
            )
            for piece in text
        ),
        r_event("response.output_item.done", output_index=1, item=message),
        r_event(
            "response.output_item.added",
            output_index=2,
            item={**call_p, "status": "in_progress", "arguments": ""},
        ),
        r_event(
            "response.output_item.added",
            output_index=3,
            item={**call_r, "status": "in_progress", "arguments": ""},
        ),
        *(
            r_event(
                "response.function_call_arguments.delta",
                item_id="fc_01",
                output_index=2,
                delta=piece,
            )
            for piece in paris
        ),
        r_event(
            "response.function_call_arguments.delta",
            item_id="fc_02",
            output_index=3,
            delta=ROME,
        ),
        r_event("response.output_item.done", output_index=2, item=call_p),
        r_event("response.output_item.done", output_index=3, item=call_r),
        r_event(
            "response.completed",
            response=R_BODY if whole else {**R_BODY, "output": None},
        ),
    ]
    for number, event in enumerate(events):
        event["sequence_number"] = number
    return events


R_STREAM = responses_stream(
    ["**Weather**", "\n\nTwo ", "cities."],
    ["Let me check", " the weather in Paris and in Rome."],
    ['{"city": ', '"Paris", "unit": "celsius"}'],
)


def test_openai_responses_stream_equals_the_whole_response() -> None:
    openai = pytest.importorskip("openai")
    conversation = check_equivalent("openai-responses", R_STREAM, R_BODY)
    reasoning = conversation[0].content[0]  # type: ignore[attr-defined]
    assert reasoning.redacted == ENCRYPTED and reasoning.id == "rs_01"
    head = conversation[0]
    assert head.metadata is not None and head.metadata.usage is not None
    assert head.metadata.usage.output_tokens == 300
    assert head.metadata.finish_reason == "tool_calls"
    rendered = providers.get("openai-responses").render_response(conversation)
    assert rendered == R_BODY
    import pydantic

    # Response itself also requires the request's echo (tools, tool_choice...),
    # which a response render leaves to the caller: its output items are checked.
    items: Any = pydantic.TypeAdapter(list[openai.types.responses.ResponseOutputItem])
    items.validate_python(rendered["output"])

    from openai._models import construct_type

    # As the SDK's own stream builds them from the wire (without validation).
    kind: Any = openai.types.responses.ResponseStreamEvent
    objects = [construct_type(type_=kind, value=event) for event in R_STREAM]
    assert type(objects[-1]).__name__ == "ResponseCompletedEvent"
    check_equivalent("openai-responses", objects, R_BODY)


def test_openai_responses_items_accumulated_when_the_end_leaves_them_out() -> None:
    # Some servers end with a response whose output is null: the items count.
    events = responses_stream(
        ["**Weather**\n\nTwo cities."], [SAID], [PARIS], whole=False
    )
    check_equivalent("openai-responses", events, R_BODY)
    check_accumulator_semantics("openai-responses", events)


def test_openai_responses_incomplete_and_refusal() -> None:
    refusal = {
        "id": "msg_02",
        "type": "message",
        "status": "incomplete",
        "role": "assistant",
        "content": [{"type": "refusal", "refusal": "I can't."}],
    }
    incomplete = {
        **R_ENVELOPE,
        "status": "incomplete",
        "incomplete_details": {"reason": "max_output_tokens"},
        "output": None,
        "usage": R_USAGE,
    }
    events = [
        r_event("response.created", response=R_ENVELOPE),
        r_event(
            "response.output_item.added",
            output_index=0,
            item={**refusal, "status": "in_progress", "content": []},
        ),
        r_event(
            "response.content_part.added",
            output_index=0,
            content_index=0,
            part={"type": "refusal", "refusal": ""},
        ),
        r_event(
            "response.refusal.delta", output_index=0, content_index=0, delta="I can"
        ),
        r_event("response.refusal.delta", output_index=0, content_index=0, delta="'t."),
        r_event(
            "response.refusal.done", output_index=0, content_index=0, refusal="I can't."
        ),
        r_event("response.output_item.done", output_index=0, item=refusal),
        r_event("response.incomplete", response=incomplete),
    ]
    conversation = check_equivalent(
        "openai-responses", events, {**incomplete, "output": [refusal]}
    )
    assert conversation[0].metadata.finish_reason == "length"  # type: ignore[union-attr]


def test_openai_responses_accumulator_snapshot() -> None:
    accumulator = providers.get("openai-responses").accumulator()  # type: ignore[attr-defined]
    cut = next(n for n, e in enumerate(R_STREAM) if e.get("delta") == '{"city": ')
    for event in R_STREAM[: cut + 1]:
        assert accumulator.feed(event) == ()
    snapshot = accumulator.snapshot()
    assert snapshot[0].content[1].text == SAID  # type: ignore[attr-defined]
    paris, rome = snapshot[1], snapshot[2]
    assert paris.extras["openai-responses"]["partial_arguments"] == '{"city": '  # type: ignore[union-attr]
    assert paris.arguments == {} and rome.arguments == {}  # type: ignore[union-attr]
    report = Report()
    kept = providers.get("openai-responses").parse_stream(
        R_STREAM[: cut + 1], truncated="keep", report=report
    )  # type: ignore[attr-defined]
    assert [c.role.value for c in kept] == ["assistant"]
    assert [e.where for e in report.events] == [
        f"$[{cut + 1}]",
        "output item 2 (function_call)",
        "output item 3 (function_call)",
    ]


@settings(max_examples=examples(30), deadline=None)
@given(
    st.lists(st.integers(0, 200), max_size=6),
    st.lists(st.integers(0, 200), max_size=6),
    st.lists(st.integers(0, 200), max_size=6),
)
def test_openai_responses_any_split_gives_the_same_reply(
    summary: list[int], text: list[int], paris: list[int]
) -> None:
    events = responses_stream(
        split("**Weather**\n\nTwo cities.", summary),
        split(SAID, text),
        split(PARIS, paris),
        whole=False,
    )
    # The items as the deltas built them (output_item.done left out).
    events = [e for e in events if e["type"] != "response.output_item.done"]
    accumulator = providers.get("openai-responses").accumulator()  # type: ignore[attr-defined]
    for event in events[:-1]:
        accumulator.feed(event)
    snapshot = accumulator.snapshot()
    unsigned = {k: v for k, v in R_OUTPUT[0].items() if k != "encrypted_content"}
    open_items = [
        unsigned,
        *({**item, "status": "in_progress"} for item in R_OUTPUT[1:]),
    ]
    whole = providers.get("openai-responses").parse_response(
        {**R_ENVELOPE, "output": open_items}
    )
    assert anonymous(snapshot) == anonymous(whole)


def test_openai_responses_bad_streams() -> None:
    name = "openai-responses"
    created = r_event("response.created", response=R_ENVELOPE)
    bad(
        name,
        [
            r_event(
                "response.output_text.delta", output_index=0, content_index=0, delta="x"
            )
        ],
        "$[0].type",
        "before response.created",
    )
    bad(
        name,
        [
            created,
            r_event(
                "response.output_text.delta", output_index=0, content_index=0, delta="x"
            ),
        ],
        "$[1].output_index",
        "never added",
    )
    added = r_event(
        "response.output_item.added",
        output_index=0,
        item={"id": "m", "type": "message", "role": "assistant", "content": []},
    )
    bad(name, [created, added, added], "$[2].output_index", "added twice")
    # The final event's items are matched with the open ones by type and id,
    # whatever values those hold.
    odd_output = [{**item, "type": {}} for item in R_OUTPUT]
    odd_end = r_event("response.completed", response={**R_BODY, "output": odd_output})
    bad(name, [created, added, odd_end], "$[2]", "output item 0 is still open")
    bad(
        name,
        [
            created,
            added,
            r_event(
                "response.output_text.delta", output_index=0, content_index=0, delta="x"
            ),
        ],
        "$[2].content_index",
        "never added",
    )
    bad(
        name,
        [
            created,
            added,
            r_event(
                "response.content_part.added",
                output_index=0,
                content_index=1,
                part={"type": "output_text", "text": ""},
            ),
        ],
        "$[2].content_index",
        "out of order",
    )
    done = r_event(
        "response.output_item.done",
        output_index=0,
        item={"id": "m", "type": "message", "role": "assistant", "content": []},
    )
    bad(
        name,
        [created, added, done, done],
        "$[3].output_index",
        "after its response.output_item.done",
    )
    bad(
        name,
        [created, added, r_event("response.completed", response=R_BODY)],
        "$[2]",
        "output item 0 is still open",
    )
    failed = r_event(
        "response.failed",
        response={
            **R_ENVELOPE,
            "status": "failed",
            "error": {"code": "server_error", "message": "The model failed"},
        },
    )
    refused(name, [created, failed], "$[1].response", "server_error")
    refused(
        name,
        [
            created,
            r_event(
                "error", code="rate_limit_exceeded", message="Slow down", param=None
            ),
        ],
        "$[1]",
        "rate_limited",
    )
    bad(name, R_STREAM[:-1], f"$[{len(R_STREAM) - 1}]", "before response.completed")
    # Progress events of server tools are skipped.
    skipped = [
        *R_STREAM[:2],
        r_event("response.web_search_call.searching", output_index=9),
        *R_STREAM[2:],
    ]
    check_equivalent(name, skipped, R_BODY)


# Gemini ------------------------------------------------------------------------------

G_SIGNATURE = base64.b64encode(bytes(range(7, 77))).decode()  # ends with "=="
G_META = {"modelVersion": "gemini-2.5-flash", "responseId": "resp-g1"}


def g_chunk(
    parts: list[dict[str, Any]], finish: str | None = None, **top: Any
) -> dict[str, Any]:
    candidate: dict[str, Any] = {
        "content": {"parts": parts, "role": "model"},
        "index": 0,
    }
    if finish is not None:
        candidate["finishReason"] = finish
    return {"candidates": [candidate], **G_META, **top}


G_USAGE = {
    "promptTokenCount": 31,
    "candidatesTokenCount": 25,
    "thoughtsTokenCount": 40,
    "totalTokenCount": 96,
}


def gemini_stream(thought: list[str], text: list[str]) -> list[dict[str, Any]]:
    return [
        *(g_chunk([{"text": piece, "thought": True}]) for piece in thought),
        *(g_chunk([{"text": piece}]) for piece in text),
        g_chunk([{"text": "", "thoughtSignature": G_SIGNATURE}]),
        g_chunk(
            [
                {"functionCall": {"name": "weather", "args": {"city": "Paris"}}},
                {"functionCall": {"name": "weather", "args": {"city": "Rome"}}},
            ]
        ),
        g_chunk([{"text": ""}], "STOP", usageMetadata=G_USAGE),
    ]


G_STREAM = gemini_stream(
    ["The user wants ", "both cities."], ["Let me check", " the weather."]
)
G_BODY = {
    "candidates": [
        {
            "content": {
                "parts": [
                    {"text": "The user wants both cities.", "thought": True},
                    {
                        "text": "Let me check the weather.",
                        "thoughtSignature": G_SIGNATURE,
                    },
                    {"functionCall": {"name": "weather", "args": {"city": "Paris"}}},
                    {"functionCall": {"name": "weather", "args": {"city": "Rome"}}},
                ],
                "role": "model",
            },
            "index": 0,
            "finishReason": "STOP",
        }
    ],
    **G_META,
    "usageMetadata": G_USAGE,
}


def test_gemini_stream_equals_the_whole_response() -> None:
    genai = pytest.importorskip("google.genai")
    conversation = check_equivalent("gemini", G_STREAM, G_BODY)
    head = conversation[0]
    assert head.metadata is not None and head.metadata.finish_reason == "tool_calls"
    assert head.metadata.usage is not None and head.metadata.usage.input_tokens == 31
    assert [c.arguments for c in conversation if isinstance(c, Invocation)] == [
        {"city": "Paris"},
        {"city": "Rome"},
    ]
    rendered = providers.get("gemini").render_response(conversation)
    assert rendered == G_BODY
    genai.types.GenerateContentResponse.model_validate(rendered)
    # google-genai holds signatures as bytes and dumps them URL-safe; they come
    # back as the API sent them.
    assert "/" in G_SIGNATURE
    sdk = genai.types.GenerateContentResponse
    objects = [sdk.model_validate(chunk) for chunk in G_STREAM]
    streamed = check_equivalent("gemini", objects, G_BODY)
    parts = providers.get("gemini").render_response(streamed)["candidates"][0]
    assert parts["content"]["parts"][1]["thoughtSignature"] == G_SIGNATURE


@settings(max_examples=examples(30), deadline=None)
@given(
    st.lists(st.integers(0, 200), max_size=6), st.lists(st.integers(0, 200), max_size=6)
)
def test_gemini_any_split_gives_the_same_reply(
    thought: list[int], text: list[int]
) -> None:
    events = gemini_stream(
        split("The user wants both cities.", thought),
        split("Let me check the weather.", text),
    )
    check_equivalent("gemini", events, G_BODY)


def test_gemini_accumulator_and_blocked_prompt() -> None:
    check_accumulator_semantics("gemini", G_STREAM)
    accumulator = providers.get("gemini").accumulator()  # type: ignore[attr-defined]
    for event in G_STREAM[:3]:
        accumulator.feed(event)
    snapshot = accumulator.snapshot()
    assert [part.text for part in snapshot[0].content] == [
        "The user wants both cities.",
        "Let me check",
    ]  # type: ignore[attr-defined]
    blocked = {
        "promptFeedback": {"blockReason": "SAFETY"},
        "usageMetadata": {"promptTokenCount": 8, "totalTokenCount": 8},
        **G_META,
    }
    check_equivalent("gemini", [blocked], blocked)
    # A usage-only chunk after the end is still taken.
    late = [
        *G_STREAM[:-1],
        g_chunk([{"text": ""}], "STOP"),
        {"usageMetadata": G_USAGE, **G_META},
    ]
    conversation = providers.get("gemini").parse_stream(late)  # type: ignore[attr-defined]
    assert conversation[0].metadata.usage.output_tokens == 65  # type: ignore[union-attr]


def test_gemini_bad_streams() -> None:
    name = "gemini"
    bad(name, [G_STREAM[0], [G_STREAM[1]]], "$[1]", "expected an object")
    error = {
        "error": {
            "code": 429,
            "message": "Resource exhausted",
            "status": "RESOURCE_EXHAUSTED",
        }
    }
    refused(name, [G_STREAM[0], error], "$[1]", "rate_limited")
    bad(
        name,
        G_STREAM[:-1],
        f"$[{len(G_STREAM) - 1}]",
        "a finishReason for every candidate",
    )
    bad(
        name,
        [*G_STREAM, g_chunk([{"text": "more"}])],
        f"$[{len(G_STREAM)}]",
        "after the end",
    )
    bad(
        name,
        [{"candidates": [{"index": "0", "content": {"parts": []}}]}],
        "$[0].candidates[0].index",
        "invalid candidate index",
    )
    bad(
        name,
        [g_chunk([{"text": "a"}]), g_chunk([{"text": 5}])],
        "$[1].candidates[0].content.parts[0].text",
        "expected a string",
    )
    report = Report()
    kept = providers.get(name).parse_stream(
        G_STREAM[:4], truncated="keep", report=report
    )  # type: ignore[attr-defined]
    assert [e.kind for e in report.events] == ["cut"]
    assert kept[0].metadata.finish_reason is None  # type: ignore[union-attr]


# Ollama ------------------------------------------------------------------------------

O_TOP = {"model": "qwen3:8b", "created_at": "2025-07-01T10:00:00.000000Z"}
O_FINAL = {
    "done": True,
    "done_reason": "stop",
    "total_duration": 5191566416,
    "load_duration": 2154458,
    "prompt_eval_count": 26,
    "prompt_eval_duration": 383809000,
    "eval_count": 298,
    "eval_duration": 4799921000,
}


def ollama_stream(thinking: list[str], text: list[str]) -> list[dict[str, Any]]:
    return [
        *(
            {
                **O_TOP,
                "message": {"role": "assistant", "content": "", "thinking": piece},
                "done": False,
            }
            for piece in thinking
        ),
        *(
            {**O_TOP, "message": {"role": "assistant", "content": piece}, "done": False}
            for piece in text
        ),
        {
            **O_TOP,
            "message": {
                "role": "assistant",
                "content": "",
                "tool_calls": [
                    {"function": {"name": "weather", "arguments": {"city": "Paris"}}}
                ],
            },
            "done": False,
        },
        {
            **O_TOP,
            "message": {
                "role": "assistant",
                "content": "",
                "tool_calls": [
                    {"function": {"name": "weather", "arguments": {"city": "Rome"}}}
                ],
            },
            "done": False,
        },
        {**O_TOP, "message": {"role": "assistant", "content": ""}, **O_FINAL},
    ]


O_STREAM = ollama_stream(
    ["The user wants", " both cities."], ["Let me check", " the weather."]
)
O_BODY = {
    **O_TOP,
    "message": {
        "role": "assistant",
        "content": "Let me check the weather.",
        "thinking": "The user wants both cities.",
        "tool_calls": [
            {"function": {"name": "weather", "arguments": {"city": "Paris"}}},
            {"function": {"name": "weather", "arguments": {"city": "Rome"}}},
        ],
    },
    **O_FINAL,
}


def test_ollama_stream_equals_the_whole_response() -> None:
    ollama = pytest.importorskip("ollama")
    conversation = check_equivalent("ollama", O_STREAM, O_BODY)
    head = conversation[0]
    assert head.metadata is not None and head.metadata.usage is not None
    assert head.metadata.usage.output_tokens == 298
    assert head.metadata.finish_reason == "tool_calls"
    rendered = providers.get("ollama").render_response(conversation)
    assert rendered == O_BODY
    ollama.ChatResponse.model_validate(rendered)
    objects = [ollama.ChatResponse.model_validate(event) for event in O_STREAM]
    check_equivalent("ollama", objects, O_BODY)


@settings(max_examples=examples(30), deadline=None)
@given(
    st.lists(st.integers(0, 200), max_size=6), st.lists(st.integers(0, 200), max_size=6)
)
def test_ollama_any_split_gives_the_same_reply(
    thinking: list[int], text: list[int]
) -> None:
    events = ollama_stream(
        split("The user wants both cities.", thinking),
        split("Let me check the weather.", text),
    )
    check_equivalent("ollama", events, O_BODY)


def test_ollama_accumulator_and_bad_streams() -> None:
    check_accumulator_semantics("ollama", O_STREAM)
    name = "ollama"
    bad(name, [O_STREAM[0], "x"], "$[1]", "expected an object")
    refused(
        name, [O_STREAM[0], {"error": "model 'qwen9' not found"}], "$[1]", "not_found"
    )
    bad(name, O_STREAM[:-1], f"$[{len(O_STREAM) - 1}]", '"done": true')
    bad(
        name,
        [
            O_STREAM[0],
            {**O_TOP, "message": {"role": "assistant", "content": 7}, "done": False},
        ],
        "$[1].message.content",
        "expected a string",
    )
    report = Report()
    kept = providers.get(name).parse_stream(
        O_STREAM[:3], truncated="keep", report=report
    )  # type: ignore[attr-defined]
    assert kept[0].content[-1] == Text("Let me check")  # type: ignore[attr-defined]
    assert [e.kind for e in report.events] == ["cut"]


# Reading the wire --------------------------------------------------------------------


def as_sse(
    events: list[dict[str, Any]],
    *,
    names: bool = True,
    crlf: bool = False,
    done: bool = True,
) -> bytes:
    """Server-sent events as the providers write them."""
    end = "\r\n" if crlf else "\n"
    lines = [": a comment the reader skips"]
    for event in events:
        if names and "type" in event:
            lines.append(f"event: {event['type']}")
        lines.append(f"data: {json.dumps(event)}")
        lines.append("")
    if done:
        lines += ["data: [DONE]", "", 'data: {"after": "done"}', ""]
    return end.join(lines).encode()


def as_ndjson(events: list[dict[str, Any]]) -> bytes:
    return b"".join(json.dumps(event).encode() + b"\n" for event in events)


def test_read_events_formats() -> None:
    assert list(streams.read_events(as_sse(A_TOOLS))) == A_TOOLS
    assert list(streams.read_events(as_sse(C_TOOLS, names=False, crlf=True))) == C_TOOLS
    assert list(streams.read_events(as_ndjson(O_STREAM))) == O_STREAM
    array = (
        "[\n" + ",\n".join(json.dumps(chunk, indent=1) for chunk in G_STREAM) + "\n]\n"
    )
    assert list(streams.read_events(array)) == G_STREAM
    assert list(streams.read_events(array.encode("utf-8-sig"))) == G_STREAM
    # Multi-line data, CR line ends, an event name standing for the type, no
    # blank line at the end.
    wire = 'event: ping\rdata: {\rdata:  "a": 1}\r\rid: 7\rretry: 10\rdata: {"b": 2}'
    assert list(streams.read_events(wire)) == [{"a": 1, "type": "ping"}, {"b": 2}]
    assert list(streams.read_events(b"")) == []
    assert list(streams.read_events(b" \n ")) == []
    # Data the fast decoder refuses is read as the standard library reads it.
    odd = b'data: {"a": 123456789012345678901234567890, "b": NaN, "c": "\\ud800"}\n\n'
    (value,) = streams.read_events(odd)
    assert value["a"] == 123456789012345678901234567890 and value["c"] == "\ud800"
    assert math.isnan(value["b"])


@settings(max_examples=examples(25), deadline=None)
@given(st.lists(st.integers(1, 4000), max_size=12))
def test_read_events_any_chunking(cuts: list[int]) -> None:
    for wire, events in (
        (as_sse(A_TOOLS, crlf=True), A_TOOLS),
        (as_ndjson(O_STREAM), O_STREAM),
        (("[" + ",".join(json.dumps(c) for c in G_STREAM) + "]").encode(), G_STREAM),
    ):
        # Cut inside CR LF pairs and multi-byte characters too.
        wire = wire.replace(b"check", "ch\u00e9ck".encode())
        pieces = [
            wire[a:b]
            for a, b in itertools.pairwise(
                sorted({0, len(wire), *(c % len(wire) for c in cuts)})
            )
        ]
        expected = list(streams.read_events(wire))
        assert list(streams.read_events(pieces)) == expected
        assert len(expected) == len(events)


def test_read_events_is_lazy() -> None:
    def endless() -> Iterator[bytes]:
        yield as_ndjson(O_STREAM[:2])
        while True:
            yield b'{"model": "m", "done": false}\n'

    events = streams.read_events(endless())
    assert [next(events), next(events)] == O_STREAM[:2]

    class Source:
        reads = 0

        def read(self, size: int) -> bytes:
            self.reads += 1
            return as_sse(A_TOOLS[:1])

    source = Source()
    first = next(streams.read_events(source))
    assert first == A_START and source.reads <= 2


def test_read_events_refuses_bad_wire() -> None:
    def refused(data: object, where: str, words: str, **options: Any) -> None:
        given = [data]
        if isinstance(data, bytes):  # the same when it comes a byte or three at a time
            given += [
                [data[n : n + size] for n in range(0, len(data), size)]
                for size in (1, 3)
            ]
        for chunks in given:
            with pytest.raises(MalformedPayload) as caught:
                list(streams.read_events(chunks, **options))
            assert caught.value.path == where, str(caught.value)
            assert words in str(caught.value)

    refused(b'data: {"a": 1}\n\ndata: {oops}\n\n', "line 3", "not JSON")
    refused(b"data: 1\n\nweird line\n", "line 3", "not a server-sent event field")
    refused(b'{"a": 1}\n{"b": 2}\n{"c": \n', "line 3", "unfinished JSON value")
    refused(b'{"a": 1}\n\n{"b" 2}\n', "line 3", "Expecting ':' delimiter")
    refused(b'{"a": 1} {"b" 2}', "line 1", "delimiter (column 6)")
    refused(b'{"a": 1}\n{"b":\n 2,\n   "c" 3}', "line 4", "delimiter (column 8)")
    refused(b'[{"a": 1}\n {"b": 2}]', "line 2", "expected ',' or ']'")
    refused(b'[{"a": 1},\n', "line 2", "never closed")
    refused(b'[{"a": 1}] {"b": 2}', "line 1", "after the end of the array")
    refused(b'{"a": "\xff"}', "$", "not UTF-8")
    refused(b'{"a": "' + b"x" * 100 + b'"}', "line 1", "longer than 50", limit=50)
    refused(b"data: " + b"x" * 100, "line 1", "longer than 50", limit=50)
    refused(b"data: 1\n\ndata: " + b"x" * 100, "line 3", "longer than 50", limit=50)
    refused(
        b'{"a": 1}\n{"b": "' + b"x" * 100 + b'"}', "line 2", "longer than 50", limit=50
    )
    refused([b"{}", 5], "$", "chunk 1 of the stream is int")
    refused(12, "$", "expected the stream as bytes")
    with pytest.raises(ProviderError, match="limit must be"):
        list(streams.read_events(b"{}", limit=0))


def test_is_stream() -> None:
    assert streams.is_stream(as_sse(A_TOOLS))
    assert streams.is_stream(as_ndjson(O_STREAM))
    assert streams.is_stream(json.dumps(G_STREAM))
    assert not streams.is_stream(json.dumps(A_TOOLS_BODY, indent=2))
    assert not streams.is_stream(json.dumps(O_BODY).encode())
    assert not streams.is_stream(b'{"a": ')
    assert not streams.is_stream("plain words")
    assert not streams.is_stream("[")  # no JSON at all: read as a (bad) body
    assert not streams.is_stream("[1]") and not streams.is_stream("[]")


# The command line --------------------------------------------------------------------


def test_cli_reads_saved_streams(tmp_path: Path) -> None:
    from .test_cli import canisters_cmd

    cases = [
        ("anthropic", as_sse(A_TOOLS), A_TOOLS_BODY),
        ("openai-chat", as_sse(C_TOOLS, names=False), C_TOOLS_BODY),
        ("openai-responses", as_sse(R_STREAM), R_BODY),
        ("gemini", json.dumps(G_STREAM).encode(), G_BODY),
        ("ollama", as_ndjson(O_STREAM), O_BODY),
    ]
    for name, wire, body in cases:
        streamed = tmp_path / f"{name}.stream"
        streamed.write_bytes(wire)
        whole = tmp_path / f"{name}.json"
        whole.write_text(json.dumps(body))
        out = canisters_cmd("convert", "--from", name, "--to", name, str(streamed))
        assert out.returncode == 0, out.stderr
        assert json.loads(out.stdout) == body, name
    shown = canisters_cmd(
        "show", "--from", "anthropic", str(tmp_path / "anthropic.stream")
    )
    assert shown.returncode == 0, shown.stderr
    assert "weather" in shown.stdout and "89 out" in shown.stdout


def test_cli_refuses_bad_streams(tmp_path: Path) -> None:
    from .test_cli import canisters_cmd

    cut = tmp_path / "cut.sse"
    cut.write_bytes(as_sse(A_TOOLS[:5], done=False))
    out = canisters_cmd("show", "--from", "anthropic", str(cut))
    assert out.returncode == 2
    assert "$[5]: the stream ended after 5 event(s), before message_stop" in out.stderr
    out = canisters_cmd(
        "convert",
        "--from",
        "anthropic",
        "--to",
        "openai-chat",
        "--kind",
        "request",
        str(cut),
    )
    assert out.returncode == 2 and "holds a response" in out.stderr
    broken = tmp_path / "broken.ndjson"
    broken.write_bytes(as_ndjson(O_STREAM[:2]) + b'{"model": \n')
    out = canisters_cmd("show", "--from", "ollama", str(broken))
    assert out.returncode == 2 and "line 3: an unfinished JSON value" in out.stderr


def test_openai_chat_moderation_chunk_after_the_usage() -> None:
    # A moderated stream sends its moderation results after the usage chunk.
    moderation = {"input": {"flagged": False}, "output": {"flagged": False}}
    events = [*C_TOOLS, chunk([], usage=None, moderation=moderation)]
    body = {**C_TOOLS_BODY, "moderation": moderation}
    conversation = check_equivalent("openai-chat", events, body)
    head = conversation[0]
    assert head.metadata is not None and head.metadata.usage is not None
    assert head.metadata.usage.input_tokens == 82
    bad("openai-chat", [*events, C_TOOLS[1]], f"$[{len(events)}]", "after the end")


# Long replies ------------------------------------------------------------------------


def test_pieces_join_once_and_bound_what_they_keep() -> None:
    pieces = streams.Pieces("a", "b")
    assert pieces.text() == "ab" and pieces.text() == "ab"
    count = 40 * streams.Pieces._JOIN_AT
    for number in range(count):
        pieces.add(str(number % 10))
        assert len(pieces._tail) < streams.Pieces._JOIN_AT
        # Blocks shrink from the first: a few strings, however long the text.
        sizes = [len(block) for block in pieces._blocks]
        assert sizes == sorted(sizes, reverse=True) and len(sizes) <= 7
    expected = "ab" + "".join(str(n % 10) for n in range(count))
    assert pieces.text() == expected and pieces.text() is pieces.text()
    assert streams.Pieces().text() == ""
    assert repr(streams.Pieces("x", "y")) == "Pieces('xy')"


def _one_at_a_time(text: str) -> list[str]:
    return list(text)


@pytest.mark.parametrize("join_at", [2, 3, 1024])
def test_text_streamed_a_character_at_a_time_is_exact(
    monkeypatch: pytest.MonkeyPatch, join_at: int
) -> None:
    # Text, thinking and arguments grow by pieces that are joined when a body is
    # built (a snapshot after every event here) and whenever enough are kept.
    monkeypatch.setattr(streams.Pieces, "_JOIN_AT", join_at)
    each = _one_at_a_time
    cases: list[tuple[str, list[Any], dict[str, Any]]] = [
        (
            "anthropic",
            anthropic_tools_stream(each(THOUGHT), each(SAID), each(PARIS), [ROME]),
            A_TOOLS_BODY,
        ),
        (
            "openai-chat",
            chat_tools_stream(
                each("Let me check the weather."), each(PARIS), each(ROME)
            ),
            C_TOOLS_BODY,
        ),
        (
            "gemini",
            gemini_stream(
                each("The user wants both cities."), each("Let me check the weather.")
            ),
            G_BODY,
        ),
        (
            "openai-responses",
            responses_stream(
                each("**Weather**\n\nTwo cities."), each(SAID), each(PARIS), whole=False
            ),
            R_BODY,
        ),
    ]
    for name, events, body in cases:
        check_equivalent(name, events, body)
        check_accumulator_semantics(name, events)


def test_a_long_reply_grows_in_pieces_not_by_copies() -> None:
    # ``text + piece`` per delta copies the whole text each time (quadratic);
    # between events the text is kept in pieces (the figures are in
    # .auxiliary/benchmarks/streams.py).
    words = [f"word{n} " for n in range(3000)]
    events = anthropic_tools_stream(words[:5], words, [PARIS], [ROME])
    accumulator = providers.get("anthropic").accumulator()  # type: ignore[attr-defined]
    for event in events[:-8]:
        accumulator.feed(event)
    texts = [block.block.get("text") for block in accumulator._blocks]
    assert any(isinstance(text, streams.Pieces) for text in texts)
    snapshot = accumulator.snapshot()
    assert snapshot[0].content[1].text == "".join(words)  # type: ignore[attr-defined]
    for event in events[-8:]:
        accumulator.feed(event)
    final = accumulator.finish()
    assert final[0].content[1].text == "".join(words)  # type: ignore[attr-defined]


def test_a_text_delta_for_a_value_that_is_not_text_is_refused() -> None:
    bad(
        "anthropic",
        [
            A_START,
            a_block(0, {"type": "text", "text": 5}),
            a_delta(0, type="text_delta", text="x"),
        ],
        "$[2].index",
        "a text delta for 'text', which holds 5",
    )
    bad(
        "gemini",
        [g_chunk([{"text": 7}]), g_chunk([{"text": "more"}])],
        "$[1].candidates[0].content.parts[0]",
        "a text delta for 'text', which holds 7",
    )


def test_accumulators_leave_the_callers_events_as_they_were() -> None:
    # A tool call's function first sent as text, then as objects: the first
    # object was kept as the caller's own and the next merged into it.
    def call(function: object) -> dict[str, Any]:
        return {"index": 0, "id": "c1", "type": "function", "function": function}

    odd = [
        chunk([c_delta({"role": "assistant", "tool_calls": [call("odd")]})]),
        chunk([c_delta({"tool_calls": [call({"name": "f", "arguments": '{"a"'})]})]),
        chunk([c_delta({"tool_calls": [call({"arguments": ": 1}"})]})]),
        chunk([c_delta({}, "tool_calls")]),
    ]
    recorded = [
        (path.parent.name, list(streams.read_events(path.read_bytes())))
        for path in sorted(STREAMS_DATA.glob("*/*"))
        if path.suffix in (".sse", ".ndjson")
    ]
    for name, events in [*recorded, ("openai-chat", odd)]:
        kept = copy.deepcopy(events)
        try:
            providers.get(name).parse_stream(events)  # type: ignore[attr-defined]
        except MalformedPayload:
            pass
        assert events == kept, name
