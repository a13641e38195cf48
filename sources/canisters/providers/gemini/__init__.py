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

from .._base import BaseNormalizer
from . import (
    fast,  # noqa: F401  (registers the one-pass paths with messages)
    messages,
    request,
    response,
)
from .errors import DIALECT
from .messages import NAME
from .messages import REQUEST_FIELDS as REQUEST_FIELDS
from .response import RESPONSE_FIELDS as RESPONSE_FIELDS
from .stream import GeminiAccumulator

__all__ = ["NAME", "NORMALIZER", "GeminiAccumulator", "GeminiNormalizer"]


class GeminiNormalizer(BaseNormalizer):
    """The ``gemini`` normalizer (``generateContent`` request and response bodies);
    streams are read by :class:`GeminiAccumulator` (chunks as dicts or
    ``google.genai.types.GenerateContentResponse``); whole requests by
    :mod:`canisters.providers.gemini.request`."""

    __slots__ = ()

    name = NAME
    reads = ("systemInstruction", "system_instruction", "contents")
    messages = messages
    response = response
    request_settings = request
    stream = GeminiAccumulator
    dialect = DIALECT


NORMALIZER = GeminiNormalizer()
"""The registered instance."""
