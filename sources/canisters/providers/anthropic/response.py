"""Anthropic Messages responses: replies, usage and stop reasons."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import attrs

from ...canisters import Assistant, Metadata, Usage, now
from ...conversation import Conversation
from ...exceptions import MalformedPayload, _excerpt
from ...protocols import Role
from .. import _common as common
from .._common import Options, expect_mapping, expect_str, mine
from .._rules import envelope
from .._rules.finish import finish_of, render_finish
from .errors import DIALECT
from .reading import NAME, _parse_blocks, _with
from .writing import _render_turn, _Renderer

__all__ = ["parse_response", "render_response"]

_STOP = {
    "end_turn": "stop",
    "stop_sequence": "stop",
    "max_tokens": "length",
    "model_context_window_exceeded": "length",
    "tool_use": "tool_calls",
    "refusal": "refusal",
    "pause_turn": "pause",
}
_STOP_BACK = {
    "stop": ("end_turn", True),
    "length": ("max_tokens", True),
    "tool_calls": ("tool_use", True),
    "refusal": ("refusal", True),
    "pause": ("pause_turn", True),
    "content_filter": ("refusal", False),  # Anthropic's classifiers stop as refusal
}


def _usage(raw: Mapping[str, Any]) -> Usage:
    def count(key: str) -> int:
        value = raw.get(key)
        return value if isinstance(value, int) and not isinstance(value, bool) else 0

    read = count("cache_read_input_tokens")
    write = count("cache_creation_input_tokens")
    # Rule: Anthropic's input_tokens excludes cache reads and writes.
    return Usage(
        input_tokens=count("input_tokens") + read + write,
        output_tokens=count("output_tokens"),
        cached_tokens=read,
        cache_write_tokens=write,
    )


_RESPONSE_KEYS = frozenset({"content", "model"})

envelope.declare(
    NAME,
    envelope.Envelope(
        ("response",),
        writes=frozenset(
            {
                envelope.ID,
                envelope.MODEL,
                envelope.FINISH,
                envelope.USAGE,
                envelope.CACHED,
                envelope.CACHE_WRITE,
            }
        ),
        carried={
            "response.id": envelope.ID,
            "response.stop_reason": envelope.FINISH,
            "response.usage.input_tokens": envelope.USAGE,
            "response.usage.output_tokens": envelope.USAGE,
            "response.usage.cache_read_input_tokens": envelope.CACHED,
            "response.usage.cache_creation_input_tokens": envelope.CACHE_WRITE,
        },
        quiet={
            "response.type": "message",
            "response.role": "assistant",
            "response.usage.service_tier": "standard",
        },
    ),
)


def parse_response(body: object) -> Conversation:
    """Read a Messages response (or ``anthropic.types.Message``)."""
    mapping = common.as_mapping(body)
    DIALECT.check(mapping)
    role = mapping.get("role", "assistant")
    if role != "assistant":
        raise MalformedPayload(f"unexpected role {_excerpt(role)}", "$.role")
    if "content" not in mapping:
        raise MalformedPayload("missing content", "$.content")
    items, _ = _parse_blocks("assistant", mapping["content"], "$", {}, now())
    if not items or items[0].role is not Role.Assistant:
        items.insert(0, Assistant(()))
    model = mapping.get("model")
    model = expect_str(model, "$.model") if model is not None else None
    raw_usage = mapping.get("usage")
    usage = _usage(expect_mapping(raw_usage, "$.usage")) if raw_usage else None
    stop = mapping.get("stop_reason")
    custom = {}
    if isinstance(mapping.get("id"), str):
        custom["response_id"] = mapping["id"]
    metadata = Metadata(
        model=model,
        usage=usage,
        finish_reason=_STOP.get(stop, stop) if isinstance(stop, str) else None,
        custom=custom,
    )
    head = _with(items[0], response=common.rest(mapping, _RESPONSE_KEYS))
    items[0] = attrs.evolve(head, metadata=metadata)  # type: ignore[misc]
    return Conversation(items)


def render_response(conversation: Conversation, opts: Options) -> dict[str, Any]:
    """Render a Messages response body from a reply (assistant turns and
    invocations, merged into one message)."""
    renderer = _Renderer(opts)
    canisters = common.canisters_of(conversation, NAME)
    for index, canister in enumerate(canisters):
        if canister.role not in (Role.Assistant, Role.Invocation):
            raise MalformedPayload(
                "a response holds assistant turns and invocations, not "
                + common.describe(index, canister)
            )
    if not canisters:
        canisters = [Assistant(())]
    head = canisters[0]
    message = _render_turn(renderer, 0, "assistant", canisters)
    blocks = message["content"]
    if isinstance(blocks, str):
        blocks = [{"type": "text", "text": blocks}]
    metadata = head.metadata
    usage = metadata.usage if metadata else None
    finish = finish_of(metadata.finish_reason if metadata else None, canisters)
    own = mine(head, NAME).get("response") or {}
    custom = metadata.custom if metadata else {}
    body: dict[str, Any] = {
        "id": custom.get("response_id") or f"msg_{head.id}",
        "type": "message",
        "role": "assistant",
        "model": (metadata.model if metadata else None) or "",
        "content": blocks,
        "stop_reason": finish
        if "stop_reason" in own
        else render_finish(finish, _STOP_BACK, NAME, opts),
        "stop_sequence": None,
    }
    if usage is not None:
        body["usage"] = {
            "input_tokens": max(
                usage.input_tokens - usage.cached_tokens - usage.cache_write_tokens, 0
            ),
            "output_tokens": usage.output_tokens,
            "cache_read_input_tokens": usage.cached_tokens,
            "cache_creation_input_tokens": usage.cache_write_tokens,
        }
    else:
        body["usage"] = {"input_tokens": 0, "output_tokens": 0}
    body.update(mine(head, NAME).get("response") or {})
    return body
