"""OpenAI Responses replies: ``output`` items, usage and finish reasons."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import attrs

from ...canisters import Assistant, Usage, now
from ...conversation import Conversation
from ...protocols import Role
from .. import _common as common
from .._common import Options
from .._errors import Dialect
from .._rules import envelope
from .._rules.finish import finish_of, render_finish
from ..kit import WireReplies
from .errors import DIALECT
from .reading import _Parser
from .wire import BASE, NAME, Wire
from .writing import _Renderer


def _usage(raw: Mapping[str, Any]) -> Usage:
    def count(value: Any) -> int:
        return value if type(value) is int else 0

    inputs = raw.get("input_tokens_details")
    outputs = raw.get("output_tokens_details")
    inputs = inputs if isinstance(inputs, Mapping) else {}
    outputs = outputs if isinstance(outputs, Mapping) else {}
    return Usage(
        input_tokens=count(raw.get("input_tokens")),
        output_tokens=count(raw.get("output_tokens")),
        cached_tokens=count(inputs.get("cached_tokens")),
        cache_write_tokens=count(inputs.get("cache_write_tokens")),
        reasoning_tokens=count(outputs.get("reasoning_tokens")),
    )


_INCOMPLETE = {"max_output_tokens": "length", "content_filter": "content_filter"}
_STATUS = {
    "stop": ("completed", True),
    "tool_calls": ("completed", True),
    "length": ("incomplete", True),
    "content_filter": ("incomplete", True),
    "refusal": ("completed", False),  # a refusal is a content part here
    "pause": ("incomplete", False),
}
_REASON_BACK = {finish: reason for reason, finish in _INCOMPLETE.items()}


def declare_envelope(name: str, quiet: Mapping[str, Any] | None = None) -> None:
    """Declare the reply envelope of the Responses format ``name``: the keys
    of OpenAI's, with a dialect's own ``quiet`` ones (key -> the value that
    says nothing)."""
    envelope.declare(name, _envelope(quiet or {}))


def _envelope(quiet: Mapping[str, Any]) -> envelope.Envelope:
    return envelope.Envelope(
        ("response",),
        writes=frozenset(
            {
                envelope.ID,
                envelope.MODEL,
                envelope.CREATED,
                envelope.FINISH,
                envelope.USAGE,
                envelope.CACHED,
                envelope.CACHE_WRITE,
                envelope.REASONING,
            }
        ),
        carried={
            "response.id": envelope.ID,
            "response.model": envelope.MODEL,
            "response.status": envelope.FINISH,
            "response.incomplete_details.reason": envelope.FINISH,
            "response.usage.input_tokens": envelope.USAGE,
            "response.usage.output_tokens": envelope.USAGE,
            "response.usage.input_tokens_details.cached_tokens": envelope.CACHED,
            "response.usage.input_tokens_details.cache_write_tokens": (
                envelope.CACHE_WRITE
            ),
            "response.usage.output_tokens_details.reasoning_tokens": (
                envelope.REASONING
            ),
        },
        quiet={
            "response.object": "response",
            "response.parallel_tool_calls": True,
            "response.tool_choice": "auto",
            "response.truncation": "disabled",
            "response.store": True,
            "response.temperature": 1.0,
            "response.top_p": 1.0,
            "response.service_tier": "default",
            "response.text.format.type": "text",
            "response.text.verbosity": "medium",
            "response.reasoning.summary": "auto",
            **quiet,
        },
        derived={
            "response.usage.total_tokens": envelope.total(
                "usage", "input_tokens", "output_tokens"
            )
        },
    )


declare_envelope(NAME)


def parse_response(
    body: Any, wire: Wire = BASE, dialect: Dialect = DIALECT
) -> Conversation:
    """Read a response body or ``openai.types.responses.Response`` (of the
    format ``wire``, its errors read by ``dialect``)."""
    mapping = common.as_mapping(body)
    dialect.check(mapping)
    parser = _Parser(now(), wire)
    for index, item in enumerate(
        common.expect_list(mapping.get("output", []), "$.output")
    ):
        parser.item(index, item, f"$.output[{index}]")
    parser.flush()
    canisters = parser.canisters or [Assistant(())]
    envelope = {key: value for key, value in mapping.items() if key != "output"}
    usage = None
    if isinstance(mapping.get("usage"), Mapping):
        usage = _usage(mapping["usage"])
    status = mapping.get("status")
    finish: str | None = None
    if status == "completed":
        invoked = any(canister.role is Role.Invocation for canister in canisters)
        finish = "tool_calls" if invoked else "stop"
    elif status == "incomplete":
        details = mapping.get("incomplete_details")
        reason = details.get("reason") if isinstance(details, Mapping) else None
        finish = (
            _INCOMPLETE.get(reason, reason) if isinstance(reason, str) else "length"
        )
    elif isinstance(status, str):
        finish = status
    model = mapping.get("model")
    response_id = mapping.get("id")
    metadata = common.response_metadata(model, usage, finish, response_id)
    canisters[0] = common.with_response(canisters[0], wire.name, metadata, envelope)
    return Conversation(tuple(canisters))


def render_response(
    conversation: Conversation, settings: Options, wire: Wire = BASE
) -> dict[str, Any]:
    """Render ``id``, ``model``, ``status``, ``output`` and ``usage``."""
    name = wire.name
    canisters = common.canisters_of(conversation, name)
    envelope: dict[str, Any] = {}
    metadata = None
    if canisters:
        first = canisters[0]
        envelope = dict(common.mine(first, name).get("response", {}))
        metadata = first.metadata
        canisters[0] = attrs.evolve(  # type: ignore[misc]
            first,
            extras={
                **first.extras,
                name: {
                    k: v for k, v in common.mine(first, name).items() if k != "response"
                },
            },
        )
    output = _Renderer(settings, response=True, wire=wire).items(
        list(enumerate(canisters))
    )
    if (
        len(canisters) == 1
        and canisters[0].role is Role.Assistant
        and not canisters[0].content  # type: ignore[attr-defined]
        and "raw" not in common.mine(canisters[0], name)
    ):
        output = []
    if envelope:
        return {**envelope, "output": output}
    body: dict[str, Any] = {}
    if metadata is not None:
        if metadata.custom.get("response_id"):
            body["id"] = metadata.custom["response_id"]
        body["object"] = "response"
        body["created_at"] = int(canisters[0].timestamp.timestamp())
        if metadata.model:
            body["model"] = metadata.model
        finish = finish_of(metadata.finish_reason, canisters)
        body["status"] = render_finish(
            finish, _STATUS, name, settings, unknown="incomplete"
        )
        if finish in _REASON_BACK:
            body["incomplete_details"] = {"reason": _REASON_BACK[finish]}
    body["output"] = output
    # What the request set, unknown here: the API's defaults.
    body.update(parallel_tool_calls=True, tool_choice="auto", tools=[])
    if metadata is not None and metadata.usage is not None:
        usage = metadata.usage
        body["usage"] = {
            "input_tokens": usage.input_tokens,
            "input_tokens_details": {
                "cached_tokens": usage.cached_tokens,
                "cache_write_tokens": usage.cache_write_tokens,
            },
            "output_tokens": usage.output_tokens,
            "output_tokens_details": {"reasoning_tokens": usage.reasoning_tokens},
            "total_tokens": usage.total_tokens,
        }
    return body


class Response(WireReplies):
    """The replies of one OpenAI Responses format, as
    :class:`~canisters.providers.kit.BaseNormalizer` takes them (its
    ``response``): :func:`parse_response` and :func:`render_response` for
    ``wire``, an error body read by ``dialect``."""

    __slots__ = ()

    parse = staticmethod(parse_response)
    render = staticmethod(render_response)
