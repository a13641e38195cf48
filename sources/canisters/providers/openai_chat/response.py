"""OpenAI Chat Completions responses: replies, usage and finish reasons."""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime, timezone
from typing import Any

import attrs

from ...canisters import Assistant, Metadata, Usage, now
from ...conversation import Conversation
from ...exceptions import MalformedPayload, _excerpt
from ...protocols import Canister, Role
from .. import _common as common
from .._common import Options, expect_list, expect_mapping, expect_str, mine
from .._errors import Dialect
from .._rules import envelope
from .._rules.finish import finish_of, render_finish
from ..kit import WireReplies
from .errors import DIALECT
from .messages import _parse_assistant, _with_extras
from .rendering import _render_assistant, _Renderer
from .wire import BASE, MESSAGE_KEYS, NAME, Wire

_FINISH = {"function_call": "tool_calls"}
_FINISH_BACK = {
    "stop": ("stop", True),
    "length": ("length", True),
    "tool_calls": ("tool_calls", True),
    "content_filter": ("content_filter", True),
    "refusal": ("stop", False),  # Chat says a refusal with message.refusal
    "pause": ("stop", False),
}

_RESPONSE_KEYS = frozenset({"choices", "model", "usage"})
_CHOICE_KEYS = frozenset({"message"})


def declare_envelope(
    name: str,
    carried: Mapping[str, str] | None = None,
    quiet: Mapping[str, Any] | None = None,
) -> None:
    """Declare the reply envelope of the OpenAI Chat format ``name``: the keys
    of OpenAI Chat's, with a dialect's own ``carried`` (envelope key -> the
    neutral concept it carries) and ``quiet`` ones (key -> the value that
    says nothing)."""
    envelope.declare(
        name,
        envelope.Envelope(
            ("response", "choice"),
            writes=frozenset(
                {
                    envelope.ID,
                    envelope.MODEL,
                    envelope.CREATED,
                    envelope.FINISH,
                    envelope.USAGE,
                    envelope.CACHED,
                    envelope.REASONING,
                }
            ),
            carried={
                "response.id": envelope.ID,
                "response.created": envelope.CREATED,
                "response.usage.prompt_tokens": envelope.USAGE,
                "response.usage.completion_tokens": envelope.USAGE,
                "response.usage.prompt_tokens_details.cached_tokens": envelope.CACHED,
                "response.usage.completion_tokens_details.reasoning_tokens": (
                    envelope.REASONING
                ),
                "choice.finish_reason": envelope.FINISH,
                **(carried or {}),
            },
            quiet={
                "response.object": "chat.completion",
                "response.service_tier": "default",
                **(quiet or {}),
            },
            derived={
                "response.usage.total_tokens": envelope.total(
                    "usage", "prompt_tokens", "completion_tokens"
                )
            },
            positions=frozenset({"choice.index"}),
        ),
    )


declare_envelope(NAME)


def parse_response(
    body: object, wire: Wire = BASE, dialect: Dialect = DIALECT
) -> Conversation:
    """Read a Chat Completions response (or ``ChatCompletion`` object) of the
    format of ``wire``.

    Each choice becomes an :class:`~canisters.Assistant` (with its metadata)
    followed by its invocations.
    """
    mapping = common.as_mapping(body)
    dialect.check(mapping)
    name = wire.name
    choices = expect_list(mapping.get("choices"), "$.choices")
    model = mapping.get("model")
    model = expect_str(model, "$.model") if model is not None else None
    raw_usage = mapping.get("usage")
    usage = _usage(expect_mapping(raw_usage, "$.usage")) if raw_usage else None
    created = mapping.get("created")
    timestamp = None
    if isinstance(created, int) and not isinstance(created, bool) and created >= 0:
        try:
            timestamp = datetime.fromtimestamp(created, timezone.utc)
        except (OverflowError, OSError, ValueError):
            timestamp = None
    response_rest = common.rest(mapping, _RESPONSE_KEYS - {"usage"})
    moment = now()
    canisters: list[Canister] = []
    for number, raw in enumerate(choices):
        path = f"$.choices[{number}]"
        choice = expect_mapping(raw, path)
        message = expect_mapping(choice.get("message"), f"{path}.message")
        role = message.get("role", "assistant")
        if role != "assistant":
            raise MalformedPayload(
                f"unexpected role {_excerpt(role)}", f"{path}.message.role"
            )
        known = MESSAGE_KEYS["assistant"]
        extra = common.rest(message, known)
        if "role" not in message:
            extra["role"] = None
        items = _parse_assistant(
            message, f"{path}.message", extra, [], {}, {}, number, moment, wire
        )
        head = items[0]
        if head.role is not Role.Assistant:
            items.insert(0, Assistant(()))
            head = items[0]
            moved = dict(mine(items[1], name))
            moved.pop("split", None)
            items[1] = _with_extras(
                items[1],
                {k: v for k, v in moved.items() if k not in ("content", "message")},
                wire,
            )
            head = _with_extras(
                head,
                {"content": moved.get("content"), "message": moved.get("message")},
                wire,
            )
        finish = choice.get("finish_reason")
        values = dict(mine(head, name))
        values["choice"] = common.rest(choice, _CHOICE_KEYS)
        if number == 0:
            values["response"] = response_rest
            if raw_usage is not None:
                values["response"] = {**response_rest, "usage": raw_usage}
        custom = {}
        if number == 0 and isinstance(mapping.get("id"), str):
            custom["response_id"] = mapping["id"]
        metadata = Metadata(
            model=model,
            usage=usage if number == 0 else None,
            finish_reason=_FINISH.get(finish, finish)
            if isinstance(finish, str)
            else None,
            custom=custom,
        )
        head = attrs.evolve(
            _with_extras(head, values, wire),  # type: ignore[misc]
            metadata=metadata,
            **({"timestamp": timestamp} if timestamp else {}),
        )
        items[0] = head
        canisters.extend(items)
    return Conversation(canisters)


def _count(value: object) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) else 0


def _usage(raw: Mapping[str, Any]) -> Usage:
    prompt = raw.get("prompt_tokens_details") or {}
    completion = raw.get("completion_tokens_details") or {}
    return Usage(
        input_tokens=_count(raw.get("prompt_tokens")),
        output_tokens=_count(raw.get("completion_tokens")),
        cached_tokens=_count(prompt.get("cached_tokens"))
        if isinstance(prompt, Mapping)
        else 0,
        reasoning_tokens=_count(completion.get("reasoning_tokens"))
        if isinstance(completion, Mapping)
        else 0,
    )


def render_response(
    conversation: Conversation, opts: Options, wire: Wire = BASE
) -> dict[str, Any]:
    """Render a Chat Completions response body from a reply, in the format of
    ``wire``.

    An :class:`~canisters.Assistant` with metadata starts a choice (each
    choice read from a Chat reply has its own); turns without metadata, and
    invocations, join the choice before them. A reply of another format that
    comes as several assistant turns (a Responses output of a
    ``web_search_call`` and then a message) is therefore one choice, as a
    client reading ``choices[0]`` expects.
    """
    renderer = _Renderer(opts, wire)
    name = wire.name
    choices: list[dict[str, Any]] = []
    groups: list[list[Canister]] = []
    for canister in common.canisters_of(conversation, name):
        if not groups or (
            canister.role is Role.Assistant and canister.metadata is not None
        ):
            groups.append([canister])
        else:
            groups[-1].append(canister)
    body: dict[str, Any] = {}
    index = 0
    for number, group in enumerate(groups):
        for canister in group:
            if canister.role not in (Role.Assistant, Role.Invocation):
                where = common.describe(index, canister)
                raise MalformedPayload(
                    f"a response holds assistant turns and invocations, not {where}"
                )
        head = group[0]
        message = _render_assistant(renderer, index, group)
        metadata = head.metadata
        extras = mine(head, name)
        finish = finish_of(metadata.finish_reason if metadata else None, group)
        recorded = extras.get("choice")
        choice: dict[str, Any] = {
            "index": number,
            "message": message,
            "finish_reason": finish
            if recorded is not None and "finish_reason" in recorded
            else render_finish(finish, _FINISH_BACK, name, opts),
        }
        if recorded is None:
            choice["logprobs"] = None
        else:
            # Compatible endpoints (Gemini's, Ollama's) leave logprobs out.
            choice.update(recorded)
        choices.append(choice)
        if number == 0:
            body = _response_head(head, name)
        index += len(group)
    body["choices"] = choices
    return body


def _response_head(head: Canister, name: str) -> dict[str, Any]:
    metadata = head.metadata
    extras = mine(head, name)
    custom = metadata.custom if metadata else {}
    body: dict[str, Any] = {
        "id": custom.get("response_id") or f"chatcmpl-{head.id}",
        "object": "chat.completion",
        "created": int(head.timestamp.timestamp()),
        "model": (metadata.model if metadata else None) or "",
    }
    usage = metadata.usage if metadata else None
    if usage is not None:
        body["usage"] = {
            "prompt_tokens": usage.input_tokens,
            "completion_tokens": usage.output_tokens,
            "total_tokens": usage.input_tokens + usage.output_tokens,
        }
        if usage.cached_tokens:
            body["usage"]["prompt_tokens_details"] = {
                "cached_tokens": usage.cached_tokens
            }
        if usage.reasoning_tokens:
            body["usage"]["completion_tokens_details"] = {
                "reasoning_tokens": usage.reasoning_tokens
            }
    body.update(extras.get("response") or {})
    return body


class Response(WireReplies):
    """The replies of one OpenAI Chat format, as
    :class:`~canisters.providers.kit.BaseNormalizer` takes them (its
    ``response``): :func:`parse_response` and :func:`render_response` for
    ``wire``, an error body read by ``dialect``."""

    __slots__ = ()

    parse = staticmethod(parse_response)
    render = staticmethod(render_response)
