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
Error bodies are OpenAI's shape, or vLLM's older flat one (``{"object":
"error", "message", "type", "param", "code"}``), each written back as it came.
``reasoning`` (as vLLM names it since 0.10, and Groq) is read the same way
where ``reasoning_content`` is not given, and written back under its own name.
``reasoning_content: null`` and any other key (``prefix``, DeepSeek's prefix
completion) are kept verbatim.
Everything else is OpenAI Chat's (``canisters.providers.openai_chat``),
read by the same modules with this dialect's name: its extras are under
``extras["openai-chat-reasoning"]``.
"""

from __future__ import annotations

import functools
from collections.abc import Mapping
from typing import Any

from ...content import Reasoning
from ...protocols import Content
from ..kit import BaseNormalizer, guarded
from .messages import Messages, declare
from .request import Settings
from .response import Response, declare_envelope, parse_response
from .stream import OpenAIChatAccumulator
from .wire import ChatErrors, Wire

__all__ = ["NAME", "NORMALIZER", "OpenAIChatReasoning", "ReasoningAccumulator"]

NAME = "openai-chat-reasoning"
"""The provider name."""

_KEY = "reasoning_content"


_NEWER = "reasoning"  # vLLM's name for it since 0.10, and Groq's
_AS_NEWER = {NAME: {"field": _NEWER}}


def _read(extra: dict[str, Any], path: str) -> list[Content]:
    text = extra.get(_KEY)
    if type(text) is str:
        del extra[_KEY]
        return [Reasoning(text, provider=NAME)]
    newer = extra.get(_NEWER)
    if type(newer) is str and _KEY not in extra:
        del extra[_NEWER]
        return [Reasoning(newer, provider=NAME, extras=_AS_NEWER)]
    return []  # absent, null or of another shape: kept as it came


def _takes(part: Any) -> bool:
    """Reasoning read here, or plain reasoning text of any format."""
    return part.provider == NAME or (part.signature is None and part.redacted is None)


def _write(parts: list[Any], message: dict[str, Any]) -> None:
    newer = all(part.extras.get(NAME) == _AS_NEWER[NAME] for part in parts)
    message[_NEWER if newer else _KEY] = "".join(part.text for part in parts)


WIRE = Wire(NAME, read=_read, takes=_takes, write=_write)
"""The dialect's wire (see :class:`~canisters.providers.openai_chat.wire.Wire`)."""

declare(NAME, max_id=None)
declare_envelope(NAME)


_FLAT_KEYS = ("object", "message", "type", "param", "code")


class ReasoningErrors(ChatErrors):
    """OpenAI's error shape, and vLLM's older flat one: ``{"object": "error",
    "message", "type", "param", "code"}`` (the code a number, the status)."""

    __slots__ = ()

    def check(self, body: object) -> None:
        """Raise :class:`~canisters.providers.ErrorResponse` on an error body."""
        flat = isinstance(body, Mapping) and body.get("object") == "error"
        if flat and self.is_error(body):
            raise self.refuse(body)
        super().check(body)

    def is_error(self, body: object) -> bool:
        """An error body of either shape."""
        if isinstance(body, Mapping) and body.get("object") == "error":
            return isinstance(body.get("message"), str)
        return super().is_error(body)

    def read(self, body: Mapping[str, Any], status: int | None) -> Any:
        """The reply of an error body."""
        if body.get("object") != "error":
            return super().read(body, status)
        return self.openai_reply(body, status, {"object": "error"}, "$", own=_FLAT_KEYS)

    def write(
        self,
        reply: Any,
        status: int,
        kind: tuple[str | None, str | int | None],
        extras: dict[str, Any],
        envelope: dict[str, Any],
    ) -> dict[str, Any]:
        """The error body of ``reply``, in the shape it was read in."""
        if envelope.get("object") != "error":
            return super().write(reply, status, kind, extras, envelope)
        return {"object": "error", **self.openai_object(reply, kind, extras)}

    def classify(
        self,
        type: object,
        code: object,
        status: int | None,
        message: str,
        reason: object = None,
    ) -> Any:
        """The kind of an error; DeepSeek's message for its 402 tells it (and
        without a status, a numeric code is one)."""
        if message == "Insufficient Balance":
            return "quota_exceeded"
        return super().classify(type, code, status, message, reason)


_ERRORS = ReasoningErrors(NAME)


class ReasoningAccumulator(OpenAIChatAccumulator):
    """Accumulates a Chat Completions stream whose deltas carry
    ``reasoning_content`` (concatenated, as ``content`` is)."""

    provider = NAME
    reply = staticmethod(
        guarded(functools.partial(parse_response, wire=WIRE, dialect=_ERRORS))
    )
    errors = _ERRORS


class OpenAIChatReasoning(BaseNormalizer):
    """The ``openai-chat-reasoning`` normalizer: OpenAI Chat with
    ``reasoning_content`` in assistant messages and stream deltas."""

    __slots__ = ()

    name = NAME
    reads = ("messages",)
    keeps = True
    messages = Messages(WIRE)
    response = Response(WIRE, _ERRORS)
    request_settings = Settings(NAME)
    stream = ReasoningAccumulator
    dialect = _ERRORS


NORMALIZER = OpenAIChatReasoning()
"""The registered instance."""
