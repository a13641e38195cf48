"""OpenAI Chat Completions (``openai-chat``): ``messages`` in requests, ``choices``
in responses.

Provider-only fields ride in ``extras["openai-chat"]`` of the canister or part
they belong to:

- on the first canister of a message: ``role`` (``"developer"``), ``content``
  (the wire form when it is not the default: ``"string"``, ``"list"``,
  ``"null"``, ``"absent"``), ``message`` (other message keys: ``name``,
  ``audio``, ``refusal: null``...), ``split`` (a message of its own);
- on parts: ``outer`` / ``inner`` (other keys of the part and of its payload,
  such as ``detail``), ``refusal`` (``"field"`` for ``message.refusal``,
  ``"part"`` for a refusal content part), ``raw`` (non-canonical base64);
- on invocations: ``arguments`` (the arguments string when it is not the
  compact JSON canisters writes), ``blank`` (the arguments string was ``""``,
  as some servers send for a call without arguments), ``call`` / ``function``
  (other keys), ``legacy
  (the deprecated ``function_call`` / ``role: "function"`` forms);
- on results: ``in_place`` (the tool message held media parts, sent back in
  place rather than in a follow-up user message);
- on the first assistant of a response choice: ``choice`` (``index``,
  ``finish_reason``, ``logprobs``, Azure filter results...) and, on the first
  one only, ``response`` (``id``, ``object``, ``created``, ``usage``...).
"""

from __future__ import annotations

from typing import Any

from ...conversation import Conversation
from ...serialization import _paused
from .. import _errors, streams
from .._requests import WholeRequests
from . import (
    fast,  # noqa: F401  (registers the one-pass path with messages)
    request,
)
from .messages import NAME, parse_request
from .messages import _parse_request as _parse_request
from .messages import _render_request as _render_request
from .messages import render_request as render_request
from .response import parse_response, render_response
from .stream import OpenAIChatAccumulator

__all__ = ["NAME", "NORMALIZER", "OpenAIChat", "OpenAIChatAccumulator"]


class OpenAIChat(streams.Streaming, _errors.ErrorNormalizing, WholeRequests):
    """The ``openai-chat`` normalizer (OpenAI Chat Completions); streams are read
    by :class:`OpenAIChatAccumulator` (chunks as dicts or ``ChatCompletionChunk``);
    whole requests by :mod:`canisters.providers.openai_chat.request`."""

    __slots__ = ()

    name = NAME
    """The provider name."""

    request_settings = request
    """The request settings module: the fields beside ``messages``."""

    # The module's parser itself, under its net: a method calling it would be
    # one more call on every body a gateway reads.
    parse_request = staticmethod(parse_request)

    def render_request(
        self, conversation: Conversation, **options: Any
    ) -> dict[str, Any]:
        """Render ``{"messages": [...]}``; see :class:`~canisters.providers.Options`."""
        return _paused(_render_request, conversation, options)

    def parse_response(self, body: Any) -> Conversation:
        """Read a response body or ``ChatCompletion`` object."""
        return parse_response(body)

    def render_response(
        self, conversation: Conversation, **options: Any
    ) -> dict[str, Any]:
        """Render a response body from a reply."""
        return render_response(conversation, **options)

    def accumulator(self) -> OpenAIChatAccumulator:
        """A fresh accumulator for one Chat Completions stream."""
        return OpenAIChatAccumulator()

    def __repr__(self) -> str:
        return f"<normalizer {NAME}>"


NORMALIZER = OpenAIChat()
"""The registered instance."""
