"""Ollama ``/api/chat``: the normalizer, wiring :mod:`.messages` (the
conversation), :mod:`.request` (the other request fields), :mod:`.response`
(replies) and :mod:`.stream` (the accumulator)."""

from __future__ import annotations

from .._base import BaseNormalizer
from . import messages, request, response
from .errors import DIALECT
from .messages import NAME
from .messages import REQUEST_FIELDS as REQUEST_FIELDS
from .response import RESPONSE_FIELDS as RESPONSE_FIELDS
from .stream import OllamaAccumulator

__all__ = ["NAME", "NORMALIZER", "OllamaAccumulator", "OllamaNormalizer"]


class OllamaNormalizer(BaseNormalizer):
    """The ``ollama`` normalizer (``/api/chat`` request and response bodies);
    streams are read by :class:`OllamaAccumulator` (objects as dicts or
    ``ollama.ChatResponse``); whole requests by
    :mod:`canisters.providers.ollama.request`."""

    __slots__ = ()

    name = NAME
    reads = ("messages",)
    messages = messages
    response = response
    request_settings = request
    stream = OllamaAccumulator
    dialect = DIALECT


NORMALIZER = OllamaNormalizer()
"""The registered instance."""
