"""Bedrock Converse replies: ``output.message``, ``stopReason``, ``usage`` and
``metrics``; every other key (``trace``, ``additionalModelResponseFields``,
``performanceConfig``, boto3's ``ResponseMetadata``) kept whole in
``extras["bedrock-converse"]["response"]`` on the reply's first canister, the
raw ``stopReason`` with them."""

from __future__ import annotations

import math
from typing import Any

import attrs

from canisters.canisters import Usage
from canisters.conversation import Conversation
from canisters.exceptions import MalformedPayload
from canisters.protocols import Role
from canisters.providers import kit

from .errors import DIALECT
from .messages import NAME, Renderer, _Parser, parse_message

RESPONSE_FIELDS = ("output", "stopReason", "usage", "metrics")
"""The keys :meth:`render_response` writes for a reply of another format."""

FINISH = {
    "end_turn": "stop",
    "stop_sequence": "stop",
    "tool_use": "tool_calls",
    "max_tokens": "length",
    "model_context_window_exceeded": "length",
    "guardrail_intervened": "content_filter",
    "content_filtered": "content_filter",
}
"""``stopReason`` to the neutral finish reasons (another value is kept as it is)."""
_FINISH_BACK = {
    "stop": ("end_turn", True),
    "length": ("max_tokens", True),
    "tool_calls": ("tool_use", True),
    "content_filter": ("content_filtered", True),
    "refusal": ("end_turn", False),
    "pause": ("end_turn", False),
}


def _usage(value: Any) -> Usage | None:
    if not isinstance(value, dict):
        return None

    def count(key: str) -> int:
        found = value.get(key)
        return found if type(found) is int and found >= 0 else 0

    read, write = count("cacheReadInputTokens"), count("cacheWriteInputTokens")
    # Like Anthropic's, inputTokens leaves out the tokens read from or written
    # to the cache.
    return Usage(
        input_tokens=count("inputTokens") + read + write,
        output_tokens=count("outputTokens"),
        cached_tokens=read,
        cache_write_tokens=write,
    )


_ENVELOPE = kit.Envelope
kit.declare_envelope(
    NAME,
    _ENVELOPE(
        ("response",),
        writes=frozenset(
            {
                _ENVELOPE.FINISH,
                _ENVELOPE.USAGE,
                _ENVELOPE.CACHED,
                _ENVELOPE.CACHE_WRITE,
                _ENVELOPE.LATENCY,
            }
        ),
        carried={
            "response.stopReason": _ENVELOPE.FINISH,
            "response.usage.inputTokens": _ENVELOPE.USAGE,
            "response.usage.outputTokens": _ENVELOPE.USAGE,
            "response.usage.cacheReadInputTokens": _ENVELOPE.CACHED,
            "response.usage.cacheWriteInputTokens": _ENVELOPE.CACHE_WRITE,
            "response.metrics.latencyMs": _ENVELOPE.LATENCY,
        },
        derived={
            "response.usage.totalTokens": kit.derived_total(
                "usage",
                "inputTokens",
                "outputTokens",
                "cacheReadInputTokens",
                "cacheWriteInputTokens",
            ),
            # The same counts again, under the names the service also sends.
            "response.usage.cacheReadInputTokenCount": kit.derived_total(
                "usage", "cacheReadInputTokens"
            ),
            "response.usage.cacheWriteInputTokenCount": kit.derived_total(
                "usage", "cacheWriteInputTokens"
            ),
        },
    ),
)
"""Converse's reply envelope: the stop reason, token counts and latency are
read into the reply's metadata; a trace, the model's extra response fields and
anything else are kept for Converse and reported elsewhere."""


def parse_response(body: object) -> Conversation:
    """The reply of a Converse response (the JSON body or boto3's dict)."""
    mapping = kit.as_mapping(body)
    if DIALECT.is_error(mapping):
        raise DIALECT.refuse(mapping)
    output = kit.expect_mapping(mapping.get("output"), "$.output")
    message = kit.expect_mapping(output.get("message"), "$.output.message")
    if message.get("role") != "assistant":
        kit.expect_str(message.get("role"), "$.output.message.role")
        raise MalformedPayload(
            'a reply message comes from the "assistant"', "$.output.message.role"
        )
    canisters = parse_message(_Parser(), message, "$.output.message", None)
    stop = mapping.get("stopReason")
    finish = FINISH.get(stop, stop) if isinstance(stop, str) else None
    metadata = kit.response_metadata(None, _usage(mapping.get("usage")), finish, None)
    metrics = mapping.get("metrics")
    latency = metrics.get("latencyMs") if isinstance(metrics, dict) else None
    if type(latency) is int or type(latency) is float:
        metadata = attrs.evolve(metadata, latency_ms=float(latency))
    envelope = {key: value for key, value in mapping.items() if key != "output"}
    rest = kit.rest(output, frozenset({"message"}))
    if rest:
        envelope["output"] = rest
    canisters[0] = kit.with_response(canisters[0], NAME, metadata, envelope)
    return Conversation(canisters)


def render_response(conversation: Conversation, opts: kit.Options) -> dict[str, Any]:
    """A Converse response from a reply."""
    canisters = kit.canisters_of(conversation, NAME)
    head = canisters[0] if canisters else None
    envelope = dict(kit.mine(head, NAME).get("response", {})) if head else {}
    content: list[Any] = []
    renderer = Renderer(opts)
    for index, canister in enumerate(canisters):
        if canister.role in (Role.Assistant, Role.Invocation):
            content += renderer.content(canister, index)
        else:
            text = kit.unsupported(
                opts,
                NAME,
                kit.describe(index, canister),
                "a Converse reply is one assistant message",
            )
            if text is not None:
                content.append({"text": text})
    extra = kit.mine(head, NAME).get("message", {}) if head else {}
    message = {"role": "assistant", "content": content, **extra}
    output = {"message": message, **envelope.pop("output", {})}
    if envelope:
        return {"output": output, **envelope}
    metadata = head.metadata if head is not None else None
    finish = metadata.finish_reason if metadata is not None else None
    if finish is None:
        calls = any(c.role is Role.Invocation for c in canisters)
        finish = "tool_calls" if calls else "stop"
    usage = metadata.usage if metadata is not None else None
    body: dict[str, Any] = {
        "output": output,
        "stopReason": kit.render_finish(finish, _FINISH_BACK, NAME, opts),
    }
    counts = {"inputTokens": 0, "outputTokens": 0, "totalTokens": 0}
    if usage is not None:
        plain = usage.input_tokens - usage.cached_tokens - usage.cache_write_tokens
        counts = {
            "inputTokens": max(plain, 0),
            "outputTokens": usage.output_tokens,
            "totalTokens": usage.input_tokens + usage.output_tokens,
        }
        if usage.cached_tokens:
            counts["cacheReadInputTokens"] = usage.cached_tokens
        if usage.cache_write_tokens:
            counts["cacheWriteInputTokens"] = usage.cache_write_tokens
    body["usage"] = counts
    latency = metadata.latency_ms if metadata is not None else None
    body["metrics"] = {
        "latencyMs": int(latency)
        if latency is not None and math.isfinite(latency)
        else 0
    }
    return body
