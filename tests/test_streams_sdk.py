"""Streams the hand-made lists of test_streams.py do not cover, checked against the
provider SDKs: their stream helpers' events as input, and their own types for the
bodies rendered from a stream.

Every stream here is built in the test, after the shapes the providers send
(Azure OpenAI's prompt-filter chunk, Ollama's per-chunk log probabilities) and
the SDKs' event types; each is checked against the equivalent non-streamed body
through ``parse_response``.
"""

from __future__ import annotations

import asyncio
import json
import warnings
from typing import Any

import ollama
import pytest
from openai import omit
from openai._models import construct_type
from openai.lib.streaming.chat import ChatCompletionStreamState
from openai.lib.streaming.responses import ResponseStreamState
from openai.types.chat import ChatCompletion, ChatCompletionChunk
from openai.types.responses import Response
from openai.types.responses import ResponseStreamEvent as ResponseStreamEventType
from pydantic import TypeAdapter

from canisters import providers
from canisters.providers import MalformedPayload
from canisters.providers.streams import read_events

from .providers_support import anonymous
from .test_streams import check_equivalent

ResponseStreamEvent: TypeAdapter[Any] = TypeAdapter(ResponseStreamEventType)

# OpenAI Chat ---------------------------------------------------------------------------


def chunk(choices: list[dict[str, Any]], **fields: Any) -> dict[str, Any]:
    """A ``chat.completion.chunk`` of the response ``chatcmpl-9``."""
    return {
        "id": "chatcmpl-9",
        "object": "chat.completion.chunk",
        "created": 1750000000,
        "model": "gpt-4.1-2025-04-14",
        "system_fingerprint": "fp_9",
        "choices": choices,
        **fields,
    }


SAFE = {"hate": {"filtered": False, "severity": "safe"}}


def test_openai_chat_azure_prompt_filter_chunk() -> None:
    # Azure OpenAI opens a stream with a chunk of prompt filter results whose
    # id, model and created are empty, and ends each choice with empty
    # content_filter_results; neither blanks what the other chunks said.
    events = [
        {
            "choices": [],
            "created": 0,
            "id": "",
            "model": "",
            "object": "",
            "prompt_filter_results": [
                {"prompt_index": 0, "content_filter_results": SAFE}
            ],
        },
        chunk(
            [
                {
                    "index": 0,
                    "delta": {"role": "assistant", "content": ""},
                    "finish_reason": None,
                    "content_filter_results": {},
                }
            ]
        ),
        chunk(
            [
                {
                    "index": 0,
                    "delta": {"content": "Hi"},
                    "finish_reason": None,
                    "content_filter_results": SAFE,
                }
            ]
        ),
        chunk(
            [
                {
                    "index": 0,
                    "delta": {},
                    "finish_reason": "stop",
                    "content_filter_results": {},
                }
            ]
        ),
    ]
    body = {
        "id": "chatcmpl-9",
        "object": "chat.completion",
        "created": 1750000000,
        "model": "gpt-4.1-2025-04-14",
        "prompt_filter_results": [{"prompt_index": 0, "content_filter_results": SAFE}],
        "system_fingerprint": "fp_9",
        "choices": [
            {
                "index": 0,
                "message": {"role": "assistant", "content": "Hi"},
                "finish_reason": "stop",
                "content_filter_results": SAFE,
            }
        ],
    }
    reply = check_equivalent("openai-chat", events, body)
    assert reply[0].metadata is not None
    assert reply[0].metadata.model == "gpt-4.1-2025-04-14"
    assert reply[0].metadata.custom["response_id"] == "chatcmpl-9"
    rendered = providers.get("openai-chat").render_response(reply)
    assert rendered == body
    ChatCompletion.model_validate(rendered)


TOOL_CHUNKS = [
    chunk([{"index": 0, "delta": {"role": "assistant"}, "finish_reason": None}]),
    chunk(
        [
            {
                "index": 0,
                "delta": {
                    "tool_calls": [
                        {
                            "index": 0,
                            "id": "call_W",
                            "type": "function",
                            "function": {"name": "weather", "arguments": ""},
                        }
                    ]
                },
                "finish_reason": None,
            }
        ],
        usage=None,
    ),
    chunk(
        [
            {
                "index": 0,
                "delta": {
                    "tool_calls": [{"index": 0, "function": {"arguments": '{"city"'}}]
                },
                "finish_reason": None,
            }
        ],
        usage=None,
    ),
    chunk(
        [
            {
                "index": 0,
                "delta": {
                    "tool_calls": [{"index": 0, "function": {"arguments": ': "Oslo"}'}}]
                },
                "finish_reason": None,
            }
        ],
        usage=None,
    ),
    chunk(
        [{"index": 0, "delta": {}, "finish_reason": "tool_calls"}],
        usage=None,
    ),
    chunk(
        [],
        usage={"prompt_tokens": 40, "completion_tokens": 9, "total_tokens": 49},
    ),
]
TOOL_BODY = {
    "id": "chatcmpl-9",
    "object": "chat.completion",
    "created": 1750000000,
    "model": "gpt-4.1-2025-04-14",
    "system_fingerprint": "fp_9",
    "choices": [
        {
            "index": 0,
            "message": {
                "role": "assistant",
                "content": None,
                "tool_calls": [
                    {
                        "id": "call_W",
                        "type": "function",
                        "function": {
                            "name": "weather",
                            "arguments": '{"city": "Oslo"}',
                        },
                    }
                ],
            },
            "finish_reason": "tool_calls",
        }
    ],
    "usage": {"prompt_tokens": 40, "completion_tokens": 9, "total_tokens": 49},
}


def test_openai_chat_stream_helper_events() -> None:
    # client.chat.completions.stream() yields the SDK helper's events: "chunk"
    # events wrapping each chunk, and "content.delta",
    # "tool_calls.function.arguments.delta"/".done" ... beside them.
    state: ChatCompletionStreamState[None] = ChatCompletionStreamState()
    events: list[Any] = []
    for raw in TOOL_CHUNKS:
        events.extend(state.handle_chunk(ChatCompletionChunk.model_validate(raw)))
    kinds = {event.type for event in events}
    assert {"chunk", "tool_calls.function.arguments.done"} <= kinds
    reply = check_equivalent("openai-chat", events, TOOL_BODY)
    assert reply[1].arguments == {"city": "Oslo"}  # type: ignore[attr-defined]
    assert reply[0].metadata is not None and reply[0].metadata.usage is not None
    assert reply[0].metadata.usage.output_tokens == 9
    # The same events as dicts (a recorder's dump of them) read the same.
    dumped = [event.model_dump(mode="json", exclude_unset=True) for event in events]
    check_equivalent("openai-chat", dumped, TOOL_BODY)
    accumulator = providers.get("openai-chat").accumulator()
    for event in events:
        accumulator.feed(event)
    assert accumulator.complete
    assert anonymous(accumulator.finish()) == anonymous(reply)


def test_openai_chat_error_event_with_an_sse_event_name() -> None:
    # An error sent as "event: error" gets the type "error" from read_events;
    # it is not taken for one of the SDK helper's events and skipped.
    wire = (
        b"data: "
        + json.dumps(TOOL_CHUNKS[0]).encode()
        + b"\n\nevent: error\ndata: "
        + b'{"error": {"message": "overloaded", "type": "server_error"}}\n\n'
    )
    with pytest.raises(providers.ErrorResponse) as caught:
        providers.get("openai-chat").parse_stream(read_events(wire))
    assert caught.value.path == "$[1]"
    assert caught.value.reply.type == "server_error"
    assert caught.value.reply.message == "overloaded"
    # The data may be the error itself.
    bare = wire.replace(b'{"error": {', b"{").replace(b"}}\n\n", b"}\n\n")
    with pytest.raises(providers.ErrorResponse) as caught:
        providers.get("openai-chat").parse_stream(read_events(bare))
    assert caught.value.path == "$[1]"
    assert caught.value.reply.type == "server_error"
    assert caught.value.reply.message == "overloaded"


# Ollama --------------------------------------------------------------------------------


def test_ollama_logprobs_of_every_chunk_are_kept() -> None:
    # With "logprobs": true each streamed object carries the log probabilities
    # of its own tokens; the whole response carries them all.
    def piece(text: str) -> dict[str, Any]:
        return {
            "model": "qwen3:8b",
            "created_at": "2025-06-01T10:00:00.5Z",
            "message": {"role": "assistant", "content": text},
            "done": False,
            "logprobs": [{"token": text, "logprob": -0.25}],
        }

    end = {
        "model": "qwen3:8b",
        "created_at": "2025-06-01T10:00:01Z",
        "message": {"role": "assistant", "content": ""},
        "done": True,
        "done_reason": "stop",
        "prompt_eval_count": 12,
        "eval_count": 3,
    }
    events = [piece("Hel"), piece("lo"), piece("!"), end]
    body = {
        **end,
        "message": {"role": "assistant", "content": "Hello!"},
        "logprobs": [
            {"token": token, "logprob": -0.25} for token in ("Hel", "lo", "!")
        ],
    }
    reply = check_equivalent("ollama", events, body)
    rendered = providers.get("ollama").render_response(reply)
    assert rendered["logprobs"] == body["logprobs"]
    ollama.ChatResponse.model_validate(rendered)
    objects = [ollama.ChatResponse.model_validate(event) for event in events]
    check_equivalent("ollama", objects, body)


# OpenAI Responses ----------------------------------------------------------------------

R_USAGE = {
    "input_tokens": 310,
    "input_tokens_details": {"cached_tokens": 0, "cache_write_tokens": 0},
    "output_tokens": 96,
    "output_tokens_details": {"reasoning_tokens": 64},
    "total_tokens": 406,
}


def r_response(status: str, output: list[Any], usage: Any = None) -> dict[str, Any]:
    return {
        "id": "resp_9",
        "object": "response",
        "created_at": 1750000000,
        "status": status,
        "error": None,
        "incomplete_details": None,
        "model": "gpt-5-2025-08-07",
        "output": output,
        "parallel_tool_calls": True,
        "tool_choice": "auto",
        "tools": [
            {
                "type": "function",
                "name": "weather",
                "parameters": {"type": "object", "properties": {}},
                "strict": True,
                "description": None,
            }
        ],
        "usage": usage,
    }


R_REASONING = {
    "type": "reasoning",
    "id": "rs_9",
    "summary": [{"type": "summary_text", "text": "Two cities: two calls."}],
    "encrypted_content": "gAAAAABoEnc+/ZZ==",
}
R_CALLS = [
    {
        "type": "function_call",
        "id": f"fc_{n}",
        "call_id": f"call_{n}",
        "name": "weather",
        "arguments": arguments,
        "status": "completed",
    }
    for n, arguments in enumerate(['{"city": "Oslo"}', '{"city": "Rome"}'])
]


def responses_events() -> list[dict[str, Any]]:
    """A reasoning item (summary deltas, encrypted content in its done item) and
    two function calls whose argument deltas interleave."""
    events: list[dict[str, Any]] = [
        {"type": "response.created", "response": r_response("in_progress", [])},
        {"type": "response.in_progress", "response": r_response("in_progress", [])},
        {
            "type": "response.output_item.added",
            "output_index": 0,
            "item": {"type": "reasoning", "id": "rs_9", "summary": []},
        },
        {
            "type": "response.reasoning_summary_part.added",
            "output_index": 0,
            "item_id": "rs_9",
            "summary_index": 0,
            "part": {"type": "summary_text", "text": ""},
        },
    ]
    for piece in ("Two cities", ": two calls."):
        events.append(
            {
                "type": "response.reasoning_summary_text.delta",
                "output_index": 0,
                "item_id": "rs_9",
                "summary_index": 0,
                "delta": piece,
            }
        )
    events.append(
        {"type": "response.output_item.done", "output_index": 0, "item": R_REASONING}
    )
    for n, call in enumerate(R_CALLS, start=1):
        added = {**call, "arguments": "", "status": "in_progress"}
        events.append(
            {"type": "response.output_item.added", "output_index": n, "item": added}
        )
    for half in (0, 1):
        for n, call in enumerate(R_CALLS, start=1):
            text = call["arguments"]
            middle = len(text) // 2
            events.append(
                {
                    "type": "response.function_call_arguments.delta",
                    "output_index": n,
                    "item_id": call["id"],
                    "delta": text[:middle] if half == 0 else text[middle:],
                }
            )
    for n, call in enumerate(R_CALLS, start=1):
        events.append(
            {
                "type": "response.function_call_arguments.done",
                "output_index": n,
                "item_id": call["id"],
                "arguments": call["arguments"],
            }
        )
        events.append(
            {"type": "response.output_item.done", "output_index": n, "item": call}
        )
    final = r_response("completed", [R_REASONING, *R_CALLS], R_USAGE)
    events.append({"type": "response.completed", "response": final})
    for number, event in enumerate(events):
        event["sequence_number"] = number
    return events


def test_openai_responses_rendered_stream_is_a_response_the_sdk_accepts() -> None:
    # The SDK's Response requires the fields echoing the request
    # (parallel_tool_calls, tool_choice, tools): render_response keeps them.
    events = responses_events()
    body = events[-1]["response"]
    reply = check_equivalent("openai-responses", events, body)
    assert [c.role.value for c in reply] == ["assistant", "invocation", "invocation"]
    assert [c.arguments for c in reply[1:]] == [  # type: ignore[attr-defined]
        {"city": "Oslo"},
        {"city": "Rome"},
    ]
    normalizer = providers.get("openai-responses")
    rendered = normalizer.render_response(reply)
    Response.model_validate(rendered)
    assert rendered["tools"] == body["tools"]
    objects = [ResponseStreamEvent.validate_python(event) for event in events]
    check_equivalent("openai-responses", objects, body)


def test_reply_of_another_provider_renders_as_a_valid_responses_body() -> None:
    # A reply without a Responses envelope (here a streamed Anthropic one)
    # renders with created_at and the request fields' defaults.
    events: list[dict[str, Any]] = [
        {
            "type": "message_start",
            "message": {
                "id": "msg_9",
                "type": "message",
                "role": "assistant",
                "model": "claude-sonnet-4-5",
                "content": [],
                "stop_reason": None,
                "stop_sequence": None,
                "usage": {"input_tokens": 12, "output_tokens": 1},
            },
        },
        {
            "type": "content_block_start",
            "index": 0,
            "content_block": {"type": "text", "text": ""},
        },
        {
            "type": "content_block_delta",
            "index": 0,
            "delta": {"type": "text_delta", "text": "Hi."},
        },
        {"type": "content_block_stop", "index": 0},
        {
            "type": "message_delta",
            "delta": {"stop_reason": "end_turn", "stop_sequence": None},
            "usage": {"output_tokens": 4},
        },
        {"type": "message_stop"},
    ]
    reply = providers.get("anthropic").parse_stream(events)
    rendered = providers.get("openai-responses").render_response(reply)
    parsed = Response.model_validate(rendered)
    assert parsed.created_at == int(reply[0].timestamp.timestamp())
    assert parsed.output_text == "Hi."
    assert parsed.usage is not None and parsed.usage.output_tokens == 4


def test_openai_chat_tool_calls_without_index() -> None:
    # Gemini's and Ollama's OpenAI-compatible endpoints leave out the tool
    # calls' index: a new id starts a call, a delta without one continues the
    # call started last.
    signature = {"google": {"thought_signature": "c2lnbmF0dXJl"}}
    whole = [
        {
            "id": "call_1",
            "type": "function",
            "function": {"name": "weather", "arguments": '{"city": "Oslo"}'},
            "extra_content": signature,
        },
        {
            "id": "call_2",
            "type": "function",
            "function": {"name": "weather", "arguments": ""},
        },
    ]
    events = [
        chunk(
            [
                {
                    "index": 0,
                    "delta": {"role": "assistant", "tool_calls": whole},
                    "finish_reason": None,
                }
            ]
        ),
        chunk(
            [
                {
                    "index": 0,
                    "delta": {"tool_calls": [{"function": {"arguments": '{"city"'}}]},
                    "finish_reason": None,
                }
            ]
        ),
        chunk(
            [
                {
                    "index": 0,
                    "delta": {
                        "tool_calls": [
                            {"id": "call_2", "function": {"arguments": ': "Rome"}'}}
                        ]
                    },
                    "finish_reason": "tool_calls",
                }
            ]
        ),
    ]
    body = {
        **{key: TOOL_BODY[key] for key in ("id", "object", "created", "model")},
        "system_fingerprint": "fp_9",
        "choices": [
            {
                "index": 0,
                "message": {
                    "role": "assistant",
                    "content": None,
                    "tool_calls": [
                        whole[0],
                        {
                            **whole[1],
                            "function": {
                                "name": "weather",
                                "arguments": '{"city": "Rome"}',
                            },
                        },
                    ],
                },
                "finish_reason": "tool_calls",
            }
        ],
    }
    reply = check_equivalent("openai-chat", events, body)
    assert [c.arguments for c in reply[1:]] == [  # type: ignore[attr-defined]
        {"city": "Oslo"},
        {"city": "Rome"},
    ]
    # Without an index and before any call started, the delta belongs nowhere.
    lost = chunk(
        [
            {
                "index": 0,
                "delta": {"tool_calls": [{"function": {"arguments": "{}"}}]},
                "finish_reason": "tool_calls",
            }
        ]
    )
    with pytest.raises(MalformedPayload) as caught:
        providers.get("openai-chat").parse_stream([lost])
    assert caught.value.path == "$[0].choices[0].delta.tool_calls[0].index"


def cut_message_events(end: str) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """A message cut off by max_output_tokens: its item has no
    response.output_item.done (nor text or part .done); the final event holds it."""
    message = {
        "type": "message",
        "id": "msg_9",
        "status": "incomplete",
        "role": "assistant",
        "content": [
            {"type": "output_text", "text": "The answer is", "annotations": []}
        ],
    }
    status = "incomplete" if end == "response.incomplete" else "completed"
    final = {
        **r_response(status, [message], R_USAGE),
        "incomplete_details": {"reason": "max_output_tokens"}
        if status == "incomplete"
        else None,
    }
    events: list[dict[str, Any]] = [
        {"type": "response.created", "response": r_response("in_progress", [])},
        {
            "type": "response.output_item.added",
            "output_index": 0,
            "item": {**message, "status": "in_progress", "content": []},
        },
        {
            "type": "response.content_part.added",
            "output_index": 0,
            "item_id": "msg_9",
            "content_index": 0,
            "part": {"type": "output_text", "text": "", "annotations": []},
        },
        *(
            {
                "type": "response.output_text.delta",
                "output_index": 0,
                "item_id": "msg_9",
                "content_index": 0,
                "delta": piece,
                "logprobs": [],
            }
            for piece in ("The ", "answer is")
        ),
        {"type": end, "response": final},
    ]
    for number, event in enumerate(events):
        event["sequence_number"] = number
    return events, final


def test_openai_responses_final_event_holds_an_item_never_done() -> None:
    # The SDK's stream state takes such a stream (the item is in the final
    # event's output); so does parse_stream, and the reply is the final body's.
    for end in ("response.incomplete", "response.completed"):
        events, final = cut_message_events(end)
        state: ResponseStreamState[None] = ResponseStreamState(
            input_tools=omit, text_format=omit
        )
        for event in events:
            state.handle_event(ResponseStreamEvent.validate_python(event))
        reply = check_equivalent("openai-responses", events, final)
        assert reply[0].content[0].text == "The answer is"  # type: ignore[attr-defined]
        assert reply[0].metadata is not None
        expected = "length" if end == "response.incomplete" else "stop"
        assert reply[0].metadata.finish_reason == expected
    # An open item the final event does not hold is still refused.
    events, final = cut_message_events("response.completed")
    other = {**final, "output": [{**final["output"][0], "id": "msg_other"}]}
    events[-1] = {**events[-1], "response": other}
    with pytest.raises(MalformedPayload) as caught:
        providers.get("openai-responses").parse_stream(events)
    assert caught.value.path == f"$[{len(events) - 1}]"
    assert "output item 0 is still open" in str(caught.value)


def test_openai_responses_error_event_with_a_nested_error() -> None:
    events, _ = cut_message_events("response.completed")
    error = {
        "type": "error",
        "sequence_number": 3,
        "error": {"type": "server_error", "code": "server_error", "message": "Boom"},
    }
    with pytest.raises(providers.ErrorResponse) as caught:
        providers.get("openai-responses").parse_stream([*events[:3], error])
    assert caught.value.path == "$[3]"
    assert caught.value.reply.kind == "server_error"
    assert caught.value.reply.message == "Boom"


def test_openai_responses_stream_helper_events() -> None:
    # client.responses.stream() yields the events of the SDK's stream state;
    # its response.completed holds a ParsedResponse, whose "parsed" and
    # "parsed_arguments" the API never sent: they are not kept, and reading
    # it raises no pydantic serializer warnings.
    events = responses_events()
    text_item = {
        "type": "message",
        "id": "msg_9",
        "status": "completed",
        "role": "assistant",
        "content": [{"type": "output_text", "text": "Cloudy.", "annotations": []}],
    }
    final = events[-1]["response"]
    final["output"].append(text_item)
    added = {**text_item, "status": "in_progress", "content": []}
    part = {"type": "output_text", "text": "", "annotations": []}
    where = {"output_index": 3, "item_id": "msg_9"}
    events[-1:-1] = [
        {"type": "response.output_item.added", "output_index": 3, "item": added},
        {
            "type": "response.content_part.added",
            **where,
            "content_index": 0,
            "part": part,
        },
        {
            "type": "response.output_text.delta",
            **where,
            "content_index": 0,
            "delta": "Cloudy.",
            "logprobs": [],
        },
        {"type": "response.output_item.done", "output_index": 3, "item": text_item},
    ]
    for number, event in enumerate(events):
        event["sequence_number"] = number
    state: ResponseStreamState[None] = ResponseStreamState(
        input_tools=omit, text_format=omit
    )
    helper: list[Any] = []
    for event in events:
        helper.extend(state.handle_event(ResponseStreamEvent.validate_python(event)))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        reply = check_equivalent("openai-responses", helper, final)
    assert [c.role.value for c in reply] == [
        "assistant",
        "invocation",
        "invocation",
        "assistant",
    ]
    rendered = providers.get("openai-responses").render_response(reply)
    assert "parsed_arguments" not in rendered["output"][1]
    assert "parsed" not in rendered["output"][3]["content"][0]


def test_openai_responses_empty_added_event_leaves_a_gap() -> None:
    # An output_item.added without its item is skipped, as the SDK's stream
    # state skips it; the items after it keep their output_index.
    events = responses_events()
    gap = {"type": "response.output_item.added", "output_index": 0, "item": None}
    for event in events:
        if isinstance(event.get("output_index"), int):
            event["output_index"] += 1
    events.insert(2, gap)
    state: ResponseStreamState[None] = ResponseStreamState(
        input_tools=omit, text_format=omit
    )
    for number, event in enumerate(events):
        event["sequence_number"] = number
        # As the SDK's Stream builds its events from the wire: without
        # validation, so that the empty item stays None.
        state.handle_event(construct_type(type_=ResponseStreamEventType, value=event))
    body = events[-1]["response"]
    reply = check_equivalent("openai-responses", events, body)
    assert [c.role.value for c in reply] == ["assistant", "invocation", "invocation"]
    # The items, when the final event leaves them out, come in order too.
    events[-1] = {**events[-1], "response": {**body, "output": None}}
    assert anonymous(
        providers.get("openai-responses").parse_stream(events)
    ) == anonymous(reply)


def test_async_stream_given_to_parse_stream_says_what_to_do() -> None:
    async def replay() -> Any:
        for raw in TOOL_CHUNKS:
            yield raw

    stream = replay()
    with pytest.raises(MalformedPayload) as caught:
        providers.get("openai-chat").parse_stream(stream)  # type: ignore[arg-type]
    assert "async" in str(caught.value) and "accumulator()" in str(caught.value)

    async def read() -> Any:
        accumulator = providers.get("openai-chat").accumulator()
        async for event in stream:
            accumulator.feed(event)
        return accumulator.finish()

    reply = asyncio.run(read())
    assert anonymous(reply) == anonymous(
        providers.get("openai-chat").parse_response(TOOL_BODY)
    )


def test_ollama_generate_stream_is_refused_not_read_as_empty() -> None:
    # /api/generate streams "response" pieces, not messages: read as /api/chat
    # they would give an empty reply; they raise as parse_response does.
    events = [
        {"model": "qwen3:8b", "created_at": "2025-06-01T10:00:00Z", "response": "Hi",
         "done": False},
        {"model": "qwen3:8b", "created_at": "2025-06-01T10:00:01Z", "response": "",
         "done": True, "done_reason": "stop"},
    ]  # fmt: skip
    with pytest.raises(MalformedPayload) as caught:
        providers.get("ollama").parse_stream(events)
    assert caught.value.path == "$[0].message"
    with pytest.raises(MalformedPayload):
        providers.get("ollama").parse_response(events[-1])


def test_openai_chat_refuses_the_events_of_another_api() -> None:
    # A Responses stream handed to the openai-chat normalizer is named as such,
    # not skipped like the SDK chat helper's events.
    events = responses_events()
    with pytest.raises(MalformedPayload) as caught:
        providers.get("openai-chat").parse_stream(events)
    assert caught.value.path == "$[0].type"
    assert "'response.created'" in str(caught.value)
