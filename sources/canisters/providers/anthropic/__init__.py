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

from .. import _errors, streams
from .._requests import WholeRequests
from . import request
from .messages import NAME, parse_request, render_request
from .messages import _parse_request as _parse_request  # for the tests
from .messages import _render_request as _render_request  # for the tests
from .response import parse_response, render_response
from .stream import AnthropicAccumulator

__all__ = ["NAME", "NORMALIZER", "Anthropic", "AnthropicAccumulator"]


class Anthropic(streams.Streaming, _errors.ErrorNormalizing, WholeRequests):
    """The ``anthropic`` normalizer (Anthropic Messages); streams are read by
    :class:`AnthropicAccumulator` (events as dicts or
    ``anthropic.types.RawMessageStreamEvent``)."""

    __slots__ = ()

    name = NAME
    """The provider name."""
    request_settings = request
    """The request settings module."""

    # The module's functions themselves: a method calling one would be one more
    # call on every body a gateway reads.
    parse_request = staticmethod(parse_request)
    render_request = staticmethod(render_request)
    parse_response = staticmethod(parse_response)
    render_response = staticmethod(render_response)

    def accumulator(self) -> AnthropicAccumulator:
        """A fresh accumulator for one Messages stream."""
        return AnthropicAccumulator()

    def __repr__(self) -> str:
        return f"<normalizer {NAME}>"


NORMALIZER = Anthropic()
"""The registered instance."""
