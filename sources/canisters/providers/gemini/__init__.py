"""Google Gemini ``generateContent``: ``systemInstruction`` + ``contents``.

Rendering uses the REST casing (``systemInstruction``, ``inlineData``,
``functionCall``): it is what the ``google-genai`` SDK puts on the wire, and its
types accept it as input too. Parsing accepts camelCase, the SDK's snake_case
(mixed within one body as well), ``contents`` and ``parts`` given as a single
object, turns without a role, the legacy role ``function`` and the SDK's own
objects. What a body spelled differently from the default rendering (snake_case
keys, single objects, a missing role, a missing call id) is remembered in
``extras["gemini"]`` so that parse -> render gives the same body back.

Gemini call ids are optional and usually absent: calls without one get a stable
made-up id (the same body always gives the same ids), results without one are
paired with the oldest unanswered call of the same name, and neither made-up id
is rendered back to Gemini.

The package holds a module per concern: ``messages`` (the conversation),
``response`` (replies, usage, finish reasons), ``stream`` (the accumulator),
``request`` (the whole request's other fields: see
:mod:`canisters.providers.gemini.request`).
"""

from __future__ import annotations

from typing import Any

from ...conversation import Conversation
from ...serialization import _paused
from .. import _errors, streams
from .._common import guarded, guarded_reading
from .._requests import WholeRequests
from . import request, response
from .messages import (
    NAME,
    REQUEST_FIELDS,  # noqa: F401 (read from this path by the tests)
    _parse_request,
    _render_request,
)
from .response import RESPONSE_FIELDS  # noqa: F401
from .stream import GeminiAccumulator

__all__ = ["NAME", "NORMALIZER", "GeminiAccumulator", "GeminiNormalizer"]


class GeminiNormalizer(streams.Streaming, _errors.ErrorNormalizing, WholeRequests):
    """The ``gemini`` normalizer (``generateContent`` request and response bodies);
    streams are read by :class:`GeminiAccumulator` (chunks as dicts or
    ``google.genai.types.GenerateContentResponse``); whole requests by
    :mod:`canisters.providers.gemini.request`."""

    name = NAME
    request_settings = request
    """The request settings module: the fields beside the conversation."""

    @guarded_reading("systemInstruction", "system_instruction", "contents")
    def parse_request(self, body: Any) -> Conversation:
        """Read ``systemInstruction`` (either casing) and ``contents``."""
        return _parse_request(body)

    def render_request(
        self, conversation: Conversation, **options: Any
    ) -> dict[str, Any]:
        """Render ``systemInstruction`` and ``contents`` (REST casing)."""
        return _paused(_render_request, conversation, options)

    @guarded
    def parse_response(self, body: Any) -> Conversation:
        """Read the first candidate, usage, model version and response id."""
        return response.parse_response(body)

    def accumulator(self) -> GeminiAccumulator:
        """A fresh accumulator for one ``streamGenerateContent`` stream."""
        return GeminiAccumulator()

    def render_response(
        self, conversation: Conversation, **options: Any
    ) -> dict[str, Any]:
        """Render one candidate with its finish reason, usage, model and id."""
        return response.render_response(conversation, options)


NORMALIZER = GeminiNormalizer()
"""The registered instance."""
