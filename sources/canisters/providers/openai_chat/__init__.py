"""OpenAI Chat Completions (``openai-chat``): ``messages`` in requests, ``choices``
in responses.

Its modules take the format they read or write as a parameter (a
:class:`~canisters.providers.openai_chat.wire.Wire`), so the dialects of the
OpenAI-compatible servers that carry reasoning are these same modules under
their own names: :mod:`canisters.providers.openai_chat.reasoning`
(``openai-chat-reasoning``) and :mod:`canisters.providers.openai_chat.openrouter`
(``openrouter``).

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
- an assistant message's ``annotations`` stay whole in ``message``; those of
  type ``url_citation`` also make the text parts they point into
  :class:`~canisters.CitedText` (see :mod:`.provided`);
- on the first assistant of a response choice: ``choice`` (``index``,
  ``finish_reason``, ``logprobs``, Azure filter results...) and, on the first
  one only, ``response`` (``id``, ``object``, ``created``, ``usage``...).
"""

from __future__ import annotations

from .._base import BaseNormalizer
from . import (
    fast,  # noqa: F401  (registers the one-pass path with messages)
    messages,
    request,
    response,
)
from .errors import DIALECT
from .stream import OpenAIChatAccumulator
from .wire import NAME

__all__ = ["NAME", "NORMALIZER", "OpenAIChat", "OpenAIChatAccumulator"]


class OpenAIChat(BaseNormalizer):
    """The ``openai-chat`` normalizer (OpenAI Chat Completions); streams are read
    by :class:`OpenAIChatAccumulator` (chunks as dicts or ``ChatCompletionChunk``);
    whole requests by :mod:`canisters.providers.openai_chat.request`."""

    __slots__ = ()

    name = NAME
    reads = ("messages",)
    keeps = True
    messages = messages
    response = response
    request_settings = request
    stream = OpenAIChatAccumulator
    dialect = DIALECT


NORMALIZER = OpenAIChat()
"""The registered instance."""
