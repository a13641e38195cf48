"""Anthropic's error dialect: ``{"type": "error", "error": {"type",
"message"}, "request_id"}``, the same object as an ``error`` event mid-stream."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

from ...exceptions import MalformedPayload
from .._errors import Dialect, ErrorKind, ErrorReply, Render
from .messages import NAME

__all__ = ["DIALECT", "AnthropicDialect"]

KINDS: Final[Mapping[str, ErrorKind]] = {
    "invalid_request_error": "invalid_request",
    "authentication_error": "authentication",
    "billing_error": "quota_exceeded",
    "permission_error": "permission",
    "not_found_error": "not_found",
    "request_too_large": "request_too_large",
    "rate_limit_error": "rate_limited",
    "api_error": "server_error",
    "timeout_error": "timeout",
    "overloaded_error": "overloaded",
}
RENDERS: Final[Mapping[ErrorKind, Render]] = {
    "invalid_request": (400, "invalid_request_error", None),
    "authentication": (401, "authentication_error", None),
    "permission": (403, "permission_error", None),
    "not_found": (404, "not_found_error", None),
    "request_too_large": (413, "request_too_large", None),
    "context_length_exceeded": (400, "invalid_request_error", None),
    "rate_limited": (429, "rate_limit_error", None),
    "quota_exceeded": (402, "billing_error", None),
    "overloaded": (529, "overloaded_error", None),
    "timeout": (504, "timeout_error", None),
    "server_error": (500, "api_error", None),
    "content_refused": (400, "invalid_request_error", None),
    "unknown": (500, "api_error", None),
}


class AnthropicDialect(Dialect):
    """Anthropic's error shape, for the provider named ``provider``."""

    __slots__ = ()

    writes_param = False

    def __init__(self, provider: str) -> None:
        super().__init__(provider, KINDS, RENDERS)

    def is_error(self, body: object) -> bool:
        return isinstance(body, Mapping) and body.get("type") == "error"

    def read(self, body: Mapping[str, Any], status: int | None) -> ErrorReply:
        inner = body.get("error")
        if not isinstance(inner, Mapping):  # the body is told by its type
            raise MalformedPayload("expected an error object", "$.error")
        envelope = {k: v for k, v in body.items() if k not in ("error", "type")}
        return self.reply(
            inner,
            status,
            envelope,
            "$.error",
            own=("message", "type"),
            type=inner.get("type"),
        )

    def write(
        self,
        reply: ErrorReply,
        status: int,
        kind: tuple[str | None, str | int | None],
        extras: dict[str, Any],
        envelope: dict[str, Any],
    ) -> dict[str, Any]:
        inner = {"type": kind[0], "message": reply.message, **extras}
        return {"type": "error", "error": inner, **envelope}

    def wrap(self, inner: dict[str, Any], event: Mapping[str, Any]) -> object:
        return {"type": "error", "error": inner}


DIALECT: Final = AnthropicDialect(NAME)
"""The ``anthropic`` dialect."""
