"""Ollama ``/api/chat``: the normalizer, wiring :mod:`.messages` (the
conversation), :mod:`.request` (the other request fields), :mod:`.response`
(replies) and :mod:`.stream` (the accumulator)."""

from __future__ import annotations

from typing import Any

from ...conversation import Conversation
from ...serialization import _paused
from .. import _errors, streams
from .._common import as_mapping, guarded, guarded_reading, options_from
from .._requests import WholeRequests
from . import request, response
from .messages import NAME, _parse_request, _render_request
from .messages import REQUEST_FIELDS as REQUEST_FIELDS
from .messages import _Parser as _Parser
from .response import RESPONSE_FIELDS as RESPONSE_FIELDS
from .stream import OllamaAccumulator

__all__ = ["NAME", "NORMALIZER", "OllamaAccumulator", "OllamaNormalizer"]


class OllamaNormalizer(streams.Streaming, _errors.ErrorNormalizing, WholeRequests):
    """The ``ollama`` normalizer (``/api/chat`` request and response bodies);
    streams are read by :class:`OllamaAccumulator` (objects as dicts or
    ``ollama.ChatResponse``)."""

    __slots__ = ()

    name = NAME
    """The provider name."""
    request_settings = request
    """The request settings module (:mod:`canisters.providers.ollama.request`)."""

    @guarded_reading("messages")
    def parse_request(self, body: Any) -> Conversation:
        """Read the ``messages`` of a request body (dicts or ``ollama.Message``)."""
        return _parse_request(body)

    def render_request(
        self, conversation: Conversation, **options: Any
    ) -> dict[str, Any]:
        """Render ``{"messages": [...]}``; see :class:`~canisters.providers.Options`."""
        return _paused(_render_request, conversation, options)

    @guarded
    def parse_response(self, body: Any) -> Conversation:
        """Read a response body or ``ollama.ChatResponse``."""
        return response.parse_response(as_mapping(body))

    def render_response(
        self, conversation: Conversation, **options: Any
    ) -> dict[str, Any]:
        """Render a response body (``stream: false``) from a reply."""
        return response.render_response(conversation, options_from(options))

    def accumulator(self) -> OllamaAccumulator:
        """A fresh accumulator for one ``/api/chat`` stream."""
        return OllamaAccumulator()

    def __repr__(self) -> str:
        return f"<normalizer {NAME}>"


NORMALIZER = OllamaNormalizer()
"""The registered instance."""
