"""Open Responses (``open-responses``): the open specification derived from
OpenAI Responses, which servers other than OpenAI's implement (Ollama, vLLM,
LM Studio, OpenRouter's Responses API, gateways)::

    normalizer = providers.get("open-responses")

It is OpenAI Responses (``canisters.providers.openai_responses``), read
and written by the same modules under this name (its extras are under
``extras["open-responses"]``), with what the specification adds:

- a ``reasoning`` item's ``content`` (raw reasoning: ``reasoning_text``
  parts) is the :class:`~canisters.Reasoning` text, bound to
  ``open-responses``; its ``summary`` and ``encrypted_content`` are kept
  beside it, and all three go back as they came. Plain reasoning of another
  format (no signature, nothing redacted) goes as such a reasoning item's
  raw text; in a stream, ``response.reasoning.delta`` / ``.done`` grow it
  (OpenAI's ``response.reasoning_text.*`` too);
- items and streaming events of an implementor's extension types,
  ``<slug>:<type>`` (``openai:web_search_call``, ``acme:search_result``), are
  kept whole, known (not reported as unknown), going back to this format
  only; a hosted tool of such a type is a :class:`~canisters.ProviderTool`;
- ``tool_choice: {"type": "allowed_tools", "tools": [...]}`` (the mode left
  out, ``auto``) is a subset of functions, written back without its mode;
- request message items are written with ``"type": "message"``, which the
  specification's schema requires (an item read without it goes back
  without it);
- a reply rendered from another format carries every field the
  specification's ``ResponseResource`` requires, at its default;
- the specification's error types (``invalid_request``, ``not_found``,
  ``model_error``, ``too_many_requests``, ``server_error``) are classified;
  error bodies are OpenAI's shape (``{"error": {"message", "type", "param",
  "code"}}``).
"""

from __future__ import annotations

import functools
from collections.abc import Mapping
from typing import Any

from ...conversation import Conversation
from ..kit import GENERIC_KINDS, BaseNormalizer, Dialect, Options, guarded, mine
from .messages import Messages
from .reading import declare
from .request import Settings
from .response import Response, declare_envelope, parse_response
from .stream import (
    KNOWN_EVENTS,
    PART_DELTAS,
    PART_DONE,
    OpenAIResponsesAccumulator,
)
from .wire import Wire

__all__ = ["NAME", "NORMALIZER", "OpenResponses", "OpenResponsesAccumulator", "WIRE"]

NAME = "open-responses"
"""The provider name."""

WIRE = Wire(NAME, raw_reasoning=True, typed=True, extensions=True, bare_allowed=True)
"""The dialect's wire (see :class:`~canisters.providers.openai_responses.wire.Wire`)."""

declare(NAME)
# The sampling settings a reply echoes at the values that say nothing.
declare_envelope(
    NAME,
    quiet={
        "response.presence_penalty": 0,
        "response.frequency_penalty": 0,
        "response.top_logprobs": 0,
        "response.background": False,
        "response.completed_at": None,
        "response.previous_response_id": None,
        "response.instructions": None,
        "response.error": None,
        "response.incomplete_details": None,
        "response.max_output_tokens": None,
        "response.max_tool_calls": None,
        "response.safety_identifier": None,
        "response.prompt_cache_key": None,
        "response.metadata": {},
    },
)

_KINDS = {
    **GENERIC_KINDS,
    # The specification's error types.
    "invalid_request": "invalid_request",
    "not_found": "not_found",
    "model_error": "server_error",
    "too_many_requests": "rate_limited",
}

ERRORS = Dialect(NAME, kinds=_KINDS)
"""The dialect's error shape: OpenAI's, with the specification's types."""


# What a ResponseResource requires beside what a reply says, at the values the
# specification gives as defaults (or null where it has none).
_REQUIRED = {
    "completed_at": None,
    "incomplete_details": None,
    "previous_response_id": None,
    "instructions": None,
    "error": None,
    "truncation": "disabled",
    "text": {"format": {"type": "text"}},
    "top_p": 1.0,
    "presence_penalty": 0.0,
    "frequency_penalty": 0.0,
    "top_logprobs": 0,
    "temperature": 1.0,
    "reasoning": None,
    "usage": None,
    "max_output_tokens": None,
    "max_tool_calls": None,
    "store": False,
    "background": False,
    "service_tier": "default",
    "metadata": {},
    "safety_identifier": None,
    "prompt_cache_key": None,
}


class OpenResponsesReplies(Response):
    """The dialect's replies: a reply rendered without the envelope it was
    read with carries every field a ``ResponseResource`` requires."""

    __slots__ = ()

    def render_response(
        self, conversation: Conversation, opts: Options
    ) -> dict[str, Any]:
        """Render a reply in the format."""
        body = super().render_response(conversation, opts)
        first = conversation[0] if len(conversation) else None
        if first is not None and "response" in mine(first, NAME):
            return body  # as it came
        if "status" not in body:
            return body  # no reply metadata: only the output
        # Required, unknown here: an id made from the reply's first canister.
        body.setdefault("id", f"resp_{conversation[0].id}")
        for key, value in _REQUIRED.items():
            body.setdefault(key, value)
        return body


class OpenResponsesMessages(Messages):
    """The dialect's conversation fields: an empty conversation leaves
    ``input`` out (the specification makes it optional)."""

    __slots__ = ()

    def render_request(
        self, conversation: Conversation, options: Mapping[str, Any]
    ) -> dict[str, Any]:
        """Render ``instructions`` and ``input`` in the format."""
        body = super().render_request(conversation, options)
        if not len(conversation) and body.get("input") == []:
            del body["input"]
        return body


_reply = guarded(functools.partial(parse_response, wire=WIRE, dialect=ERRORS))

_DELTAS = {
    **PART_DELTAS,
    "response.reasoning.delta": ("content", "content_index", "text"),
}
_DONES = {
    **PART_DONE,
    "response.reasoning.done": ("content", "content_index", "text", "text"),
}


class OpenResponsesAccumulator(OpenAIResponsesAccumulator):
    """Accumulates an Open Responses stream: OpenAI Responses' events, with
    the raw reasoning of ``response.reasoning.delta`` and
    ``response.reasoning.done`` grown into the reasoning item's ``content``;
    events of extension types (``acme:trace_event``) are skipped."""

    provider = NAME
    reply = staticmethod(_reply)
    errors = ERRORS
    deltas: Mapping[str, tuple[str, str, str]] = _DELTAS
    dones: Mapping[str, tuple[str, str, str, str]] = _DONES
    known = KNOWN_EVENTS | frozenset(_DELTAS) | frozenset(_DONES)


class OpenResponses(BaseNormalizer):
    """The ``open-responses`` normalizer: OpenAI Responses as the Open
    Responses specification spells it (raw reasoning, extension types,
    ``allowed_tools`` without a mode)."""

    __slots__ = ()

    name = NAME
    reads = ("instructions", "input")
    messages = OpenResponsesMessages(WIRE)
    response = OpenResponsesReplies(WIRE, ERRORS)
    request_settings = Settings(NAME, bare_allowed=True)
    stream = OpenResponsesAccumulator
    dialect = ERRORS


NORMALIZER = OpenResponses()
"""The registered instance."""
