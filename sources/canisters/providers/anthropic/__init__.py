"""Anthropic Messages (``anthropic``): ``system`` and ``messages`` in requests, one
assistant message in responses.

Provider-only fields ride in ``extras["anthropic"]``:

- on the first canister of a message: ``content`` (``"list"`` when a single text
  was sent as a block list), ``message`` (other message keys), ``split`` (the
  message followed another of the same role), ``in_messages`` (a
  ``role: "system"`` message inside ``messages``), ``opaque`` (server-tool and
  other blocks without neutral meaning, with their positions);
- on Supervisors from the top-level ``system``: ``system`` (``"list"`` or
  ``"string"`` when not the default);
- on parts, invocations and results: ``block`` (other keys of the block:
  ``cache_control``, ``citations``, ``caller``...), ``source`` (other keys of a
  media source), ``raw`` (non-canonical base64);
- on the first assistant of a response: ``response`` (``id``, ``type``,
  ``stop_reason``, ``stop_sequence``, ``usage``...).
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
from .stream import AnthropicAccumulator

__all__ = ["NAME", "NORMALIZER", "Anthropic", "AnthropicAccumulator"]


class Anthropic(BaseNormalizer):
    """The ``anthropic`` normalizer (Anthropic Messages); streams are read by
    :class:`AnthropicAccumulator` (events as dicts or
    ``anthropic.types.RawMessageStreamEvent``); whole requests by
    :mod:`canisters.providers.anthropic.request`."""

    __slots__ = ()

    name = NAME
    reads = ("system", "messages")
    keeps = True
    messages = messages
    response = response
    request_settings = request
    stream = AnthropicAccumulator
    dialect = DIALECT


NORMALIZER = Anthropic()
"""The registered instance."""
