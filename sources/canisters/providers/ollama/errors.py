"""Ollama's error dialect: ``{"error": "text"}``, with the HTTP status the
only other thing said."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

from .._errors import STATUSES, Dialect, ErrorReply
from .messages import NAME

__all__ = ["DIALECT", "OllamaDialect"]


_RENDERS: Final = {kind: (status, None, None) for kind, status in STATUSES.items()}


class OllamaDialect(Dialect):
    """Ollama's error shape, for the provider named ``provider``."""

    __slots__ = ()

    writes_param = False

    def __init__(self, provider: str) -> None:
        super().__init__(provider, {}, _RENDERS)

    def is_error(self, body: object) -> bool:
        return (
            isinstance(body, Mapping)
            and isinstance(body.get("error"), str)
            and "message" not in body
        )

    def read(self, body: Mapping[str, Any], status: int | None) -> ErrorReply:
        message = body["error"]
        envelope = {k: v for k, v in body.items() if k != "error"}
        kind = self.classify(None, None, status, message)
        return ErrorReply(
            kind, message, status=status, provider=self.provider, envelope=envelope
        )

    def write(
        self,
        reply: ErrorReply,
        status: int,
        kind: tuple[str | None, str | int | None],
        extras: dict[str, Any],
        envelope: dict[str, Any],
    ) -> dict[str, Any]:
        return {"error": reply.message, **envelope}

    def wrap(self, inner: dict[str, Any], event: Mapping[str, Any]) -> object:
        return {"error": str(event.get("error") or event)}


DIALECT: Final = OllamaDialect(NAME)
"""The ``ollama`` dialect."""
