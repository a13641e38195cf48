"""OpenAI Chat with ``reasoning_content`` (``openai-chat-reasoning``): the
dialect of the OpenAI-compatible servers of the open reasoning models
(DeepSeek, vLLM, SGLang, Qwen, Kimi)::

    normalizer = providers.get("openai-chat-reasoning")

An assistant message's ``reasoning_content`` (a string) is read, in replies,
stream deltas (``choices[].delta.reasoning_content``, concatenated) and
requests (where clients send it back on the next turn), into a
:class:`~canisters.Reasoning` part first in the assistant turn, with
``provider="openai-chat-reasoning"`` and no signature; it is written back as
it came. Reasoning without a signature or redacted blob read from any format
goes into ``reasoning_content`` too; signed reasoning of another provider is
dropped or sent as text (the ``reasoning`` option), as for OpenAI Chat.
``reasoning_content: null`` and any other key (``reasoning``, as newer vLLM
names it; ``prefix``, DeepSeek's prefix completion) are kept verbatim.
Everything else is OpenAI Chat's (:mod:`canisters.providers.openai_chat`),
read by the same modules with this dialect's name: its extras are under
``extras["openai-chat-reasoning"]``.
"""

from __future__ import annotations

import functools
from typing import Any

from ...content import Reasoning
from ...protocols import Content
from ..kit import BaseNormalizer, Dialect, guarded
from .messages import Messages, declare
from .request import Settings
from .response import Response, declare_envelope, parse_response
from .stream import OpenAIChatAccumulator
from .wire import Wire

__all__ = ["NAME", "NORMALIZER", "OpenAIChatReasoning", "ReasoningAccumulator"]

NAME = "openai-chat-reasoning"
"""The provider name."""

_KEY = "reasoning_content"


def _read(extra: dict[str, Any], path: str) -> list[Content]:
    text = extra.get(_KEY)
    if type(text) is not str:
        return []  # absent, null or of another shape: kept as it came
    del extra[_KEY]
    return [Reasoning(text, provider=NAME)]


def _takes(part: Any) -> bool:
    """Reasoning read here, or plain reasoning text of any format."""
    return part.provider == NAME or (part.signature is None and part.redacted is None)


def _write(parts: list[Any], message: dict[str, Any]) -> None:
    message[_KEY] = "".join(part.text for part in parts)


WIRE = Wire(NAME, read=_read, takes=_takes, write=_write)
"""The dialect's wire (see :class:`~canisters.providers.openai_chat.wire.Wire`)."""

declare(NAME, max_id=None)
declare_envelope(NAME)


class ReasoningAccumulator(OpenAIChatAccumulator):
    """Accumulates a Chat Completions stream whose deltas carry
    ``reasoning_content`` (concatenated, as ``content`` is)."""

    provider = NAME
    reply = staticmethod(guarded(functools.partial(parse_response, wire=WIRE)))


class OpenAIChatReasoning(BaseNormalizer):
    """The ``openai-chat-reasoning`` normalizer: OpenAI Chat with
    ``reasoning_content`` in assistant messages and stream deltas."""

    __slots__ = ()

    name = NAME
    reads = ("messages",)
    keeps = True
    messages = Messages(WIRE)
    response = Response(WIRE)
    request_settings = Settings(NAME)
    stream = ReasoningAccumulator
    dialect = Dialect(NAME)


NORMALIZER = OpenAIChatReasoning()
"""The registered instance."""
