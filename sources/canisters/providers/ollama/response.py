"""Ollama ``/api/chat`` responses: the one ``message`` of a reply, its finish
reason, counts and durations (kept whole in ``extras["ollama"]["response"]``
on the reply's first canister)."""

from __future__ import annotations

from typing import Any

import attrs

from ...canisters import Metadata, Usage, now
from ...conversation import Conversation
from ...exceptions import MalformedPayload
from ...protocols import Role
from .._common import (
    Options,
    as_mapping,
    canisters_of,
    expect_mapping,
    mine,
    unsupported,
    with_response,
)
from .._rules import envelope
from .._rules.finish import render_finish
from .errors import DIALECT
from .messages import NAME, _Parser, _Renderer

RESPONSE_FIELDS = (
    "model",
    "created_at",
    "message",
    "done",
    "done_reason",
    "total_duration",
    "load_duration",
    "prompt_eval_count",
    "prompt_eval_duration",
    "eval_count",
    "eval_duration",
)
"""The response fields :meth:`OllamaNormalizer.render_response` produces."""

_FINISH = {"stop": "stop", "length": "length"}
_FINISH_BACK = {
    "stop": ("stop", True),
    "tool_calls": ("stop", True),  # Ollama ends a turn of calls with stop
    "length": ("length", True),
    "content_filter": ("stop", False),
    "refusal": ("stop", False),
    "pause": ("stop", False),
}


envelope.declare(
    NAME,
    envelope.Envelope(
        ("response",),
        writes=frozenset(
            {envelope.MODEL, envelope.FINISH, envelope.USAGE, envelope.LATENCY}
        ),
        carried={
            "response.model": envelope.MODEL,
            "response.done_reason": envelope.FINISH,
            "response.prompt_eval_count": envelope.USAGE,
            "response.eval_count": envelope.USAGE,
            "response.total_duration": envelope.LATENCY,
        },
        quiet={"response.done": True},
    ),
)


def parse_response(body: object) -> Conversation:
    """The reply of a response body (or ``ollama.ChatResponse``)."""
    mapping = as_mapping(body)
    DIALECT.check(mapping)
    message = expect_mapping(mapping.get("message"), "$.message")
    canisters = _Parser(now()).message(0, message, "$.message")
    if canisters and canisters[0].role not in (Role.Assistant, Role.Invocation):
        raise MalformedPayload(
            "a response message comes from the assistant", "$.message.role"
        )
    done_reason = mapping.get("done_reason")
    finish = None
    if isinstance(done_reason, str):
        finish = _FINISH.get(done_reason, done_reason)
        if finish == "stop" and any(c.role is Role.Invocation for c in canisters):
            # Ollama reports "stop" for a turn that ends in tool calls.
            finish = "tool_calls"
    usage = None
    prompt = mapping.get("prompt_eval_count")
    output = mapping.get("eval_count")
    if type(prompt) is int or type(output) is int:
        usage = Usage(
            input_tokens=prompt if type(prompt) is int else 0,
            output_tokens=output if type(output) is int else 0,
        )
    total = mapping.get("total_duration")
    model = mapping.get("model")
    metadata = Metadata(
        model=model if isinstance(model, str) else None,
        # Ollama's durations are 64-bit nanoseconds; a larger one (10**400 does
        # not fit a float) stays in the envelope only.
        latency_ms=total / 1e6 if type(total) is int and 0 <= total < 1 << 64 else None,
        usage=usage,
        finish_reason=finish,
    )
    envelope = {key: value for key, value in mapping.items() if key != "message"}
    canisters[0] = with_response(canisters[0], NAME, metadata, envelope)
    return Conversation(tuple(canisters))


def render_response(conversation: Conversation, settings: Options) -> dict[str, Any]:
    """A response body (``stream: false``) from a reply."""
    canisters = canisters_of(conversation, NAME)
    if not canisters:
        return {"message": {"role": "assistant", "content": ""}, "done": True}
    first = canisters[0]
    envelope = dict(mine(first, NAME).get("response", {}))
    stripped = attrs.evolve(  # type: ignore[misc]
        first,
        extras={
            **first.extras,
            NAME: {k: v for k, v in mine(first, NAME).items() if k != "response"},
        },
    )
    messages = _Renderer(settings).messages(
        Conversation((stripped, *canisters[1:])), pairs=False
    )
    message: dict[str, Any] = (
        messages[0] if messages else {"role": "assistant", "content": ""}
    )
    for number, extra in enumerate(messages[1:], 1):
        # An Ollama reply is one message: later calls join it, later text
        # (another choice, say) cannot.
        if extra.get("tool_calls"):
            message.setdefault("tool_calls", []).extend(extra["tool_calls"])
        if extra.get("content") or extra.get("images") or extra.get("thinking"):
            marker = unsupported(
                settings,
                NAME,
                f"reply message {number}",
                "an Ollama reply holds one message",
            )
            if marker is not None:
                text = message.get("content") or ""
                message["content"] = f"{text}\n\n{marker}" if text else marker
    metadata = first.metadata
    body: dict[str, Any] = {}
    if envelope:
        return {**envelope, "message": message}
    if metadata is not None and metadata.model:
        body["model"] = metadata.model
    body["message"] = message
    body["done"] = True
    finish = metadata.finish_reason if metadata else None
    if finish is not None:
        body["done_reason"] = render_finish(finish, _FINISH_BACK, NAME, settings)
    if metadata is not None and metadata.usage is not None:
        body["prompt_eval_count"] = metadata.usage.input_tokens
        body["eval_count"] = metadata.usage.output_tokens
    if metadata is not None and metadata.latency_ms is not None:
        nanoseconds = metadata.latency_ms * 1e6
        if nanoseconds - nanoseconds == 0:  # not NaN nor an infinity
            body["total_duration"] = int(nanoseconds)
    return body
