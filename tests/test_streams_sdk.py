"""Streams the hand-made lists of test_streams.py do not cover, checked against the
provider SDKs: their stream helpers' events as input, and their own types for the
bodies rendered from a stream.

Every stream here is built in the test, after the shapes the providers send
(Azure OpenAI's prompt-filter chunk, Ollama's per-chunk log probabilities) and
the SDKs' event types; each is checked against the equivalent non-streamed body
through ``parse_response``.
"""

from __future__ import annotations

from typing import Any

import ollama
from openai.lib.streaming.chat import ChatCompletionStreamState
from openai.types.chat import ChatCompletion, ChatCompletionChunk

from canisters import providers

from .providers_support import anonymous
from .test_streams import check_equivalent

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
