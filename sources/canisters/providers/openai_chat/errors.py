"""OpenAI's error dialect: ``{"error": {"message", "type", "param", "code"}}``,
spoken by Chat Completions, Responses (which also answers with a failed
``response`` object) and the servers that copy their format.

The dialect takes its provider's name: ``OpenAIDialect("openai-responses")``
is the same shape for another normalizer.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

from .._errors import GENERIC_KINDS, Dialect, ErrorKind, ErrorReply, Render
from .messages import NAME

__all__ = ["DIALECT", "RENDERS", "OpenAIDialect"]

RENDERS: Final[Mapping[ErrorKind, Render]] = {
    "invalid_request": (400, "invalid_request_error", None),
    "authentication": (401, "invalid_request_error", "invalid_api_key"),
    "permission": (403, "invalid_request_error", None),
    "not_found": (404, "invalid_request_error", None),
    "request_too_large": (413, "invalid_request_error", None),
    "context_length_exceeded": (
        400,
        "invalid_request_error",
        "context_length_exceeded",
    ),
    "rate_limited": (429, "requests", "rate_limit_exceeded"),
    "quota_exceeded": (429, "insufficient_quota", "insufficient_quota"),
    "overloaded": (503, "server_error", None),
    "timeout": (504, "server_error", None),
    "server_error": (500, "server_error", None),
    "content_refused": (400, "invalid_request_error", "content_policy_violation"),
    "unknown": (500, "server_error", None),
}
"""The status, type and code written for each kind."""


class OpenAIDialect(Dialect):
    """OpenAI's error shape, for the provider named ``provider``."""

    __slots__ = ()

    def __init__(self, provider: str) -> None:
        super().__init__(provider, GENERIC_KINDS, RENDERS)

    def is_error(self, body: object) -> bool:
        if not isinstance(body, Mapping):
            return False
        if body.get("object") == "response":
            return body.get("status") == "failed"
        return isinstance(body.get("error"), Mapping) and not body.keys() & {
            "choices",
            "candidates",
            "output",
        }

    def read(self, body: Mapping[str, Any], status: int | None) -> ErrorReply:
        envelope = {k: v for k, v in body.items() if k != "error"}
        inner: Any = body.get("error")
        if body.get("object") == "response":
            # A response that failed (sent with HTTP 200): its error object
            # holds only a code and a message.
            inner = inner if isinstance(inner, Mapping) else {}
        else:
            envelope.pop("type", None)
        return self.reply(
            inner,
            status,
            envelope,
            "$.error",
            own=("message", "type", "param", "code"),
            type=inner.get("type"),
            code=inner.get("code"),
            param=inner.get("param"),
        )

    def write(
        self,
        reply: ErrorReply,
        status: int,
        kind: tuple[str | None, str | int | None],
        extras: dict[str, Any],
        envelope: dict[str, Any],
    ) -> dict[str, Any]:
        if envelope.get("object") == "response":
            envelope = {}  # a failed response is relayed as an error body
        inner: dict[str, Any] = {"message": reply.message, "type": kind[0]}
        inner.update(param=reply.param, code=kind[1], **extras)
        return {"error": inner, **envelope}

    def wrap(self, inner: dict[str, Any], event: Mapping[str, Any]) -> object:
        if inner.get("type") == "error":
            del inner["type"]  # the event's type, not the error's
        return {"error": inner}


DIALECT: Final = OpenAIDialect(NAME)
"""The ``openai-chat`` dialect."""
