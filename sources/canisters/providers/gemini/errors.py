"""Gemini's error dialect (Google's): ``{"error": {"code", "message",
"status", "details"}}``, also as a list of one such object (what
``streamGenerateContent`` without SSE answers)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

from .._errors import Dialect, ErrorKind, ErrorReply, Render, status_of
from .messages import NAME

__all__ = ["DIALECT", "GoogleDialect"]

KINDS: Final[Mapping[str, ErrorKind]] = {
    "INVALID_ARGUMENT": "invalid_request",
    "FAILED_PRECONDITION": "invalid_request",
    "OUT_OF_RANGE": "invalid_request",
    "UNAUTHENTICATED": "authentication",
    "PERMISSION_DENIED": "permission",
    "NOT_FOUND": "not_found",
    "RESOURCE_EXHAUSTED": "rate_limited",
    "UNAVAILABLE": "overloaded",
    "DEADLINE_EXCEEDED": "timeout",
    "INTERNAL": "server_error",
    "UNKNOWN": "server_error",
    # ErrorInfo reasons
    "API_KEY_INVALID": "authentication",
    "API_KEY_EXPIRED": "authentication",
}
RENDERS: Final[Mapping[ErrorKind, Render]] = {
    "invalid_request": (400, None, "INVALID_ARGUMENT"),
    "authentication": (401, None, "UNAUTHENTICATED"),
    "permission": (403, None, "PERMISSION_DENIED"),
    "not_found": (404, None, "NOT_FOUND"),
    "request_too_large": (413, None, "INVALID_ARGUMENT"),
    "context_length_exceeded": (400, None, "INVALID_ARGUMENT"),
    "rate_limited": (429, None, "RESOURCE_EXHAUSTED"),
    "quota_exceeded": (429, None, "RESOURCE_EXHAUSTED"),
    "overloaded": (503, None, "UNAVAILABLE"),
    "timeout": (504, None, "DEADLINE_EXCEEDED"),
    "server_error": (500, None, "INTERNAL"),
    "content_refused": (400, None, "INVALID_ARGUMENT"),
    "unknown": (500, None, "UNKNOWN"),
}


class GoogleDialect(Dialect):
    """Google's error shape, for the provider named ``provider``."""

    __slots__ = ()

    writes_param = False

    def __init__(self, provider: str) -> None:
        super().__init__(provider, KINDS, RENDERS)

    def unwrap(self, body: object) -> object:
        if isinstance(body, list) and len(body) == 1:
            return body[0]  # streamGenerateContent's JSON array of one error
        return body

    def is_error(self, body: object) -> bool:
        body = self.unwrap(body)
        return (
            isinstance(body, Mapping)
            and isinstance(body.get("error"), Mapping)
            and not body.keys() & {"choices", "candidates", "output"}
        )

    def read(self, body: Mapping[str, Any], status: int | None) -> ErrorReply:
        envelope = {k: v for k, v in body.items() if k not in ("error", "type")}
        inner = body["error"]
        status = status if status is not None else status_of(inner.get("code"))
        said = inner.get("code")
        return self.reply(
            inner,
            status,
            envelope,
            "$.error",
            own=("message", "status", "code"),
            code=inner.get("status"),
            reason=_reason(inner),
            # the code is kept when it is not the status
            extras={"code": said} if said != status else None,
        )

    def write(
        self,
        reply: ErrorReply,
        status: int,
        kind: tuple[str | None, str | int | None],
        extras: dict[str, Any],
        envelope: dict[str, Any],
    ) -> dict[str, Any]:
        said = extras.pop("code", status)
        inner = {"code": said, "message": reply.message, "status": kind[1], **extras}
        return {"error": inner, **envelope}


def _reason(inner: Mapping[str, Any]) -> str | None:
    """The ``reason`` of an error's ``ErrorInfo`` detail (``API_KEY_INVALID``
    comes as a 400 ``INVALID_ARGUMENT``: the reason tells it is about the key)."""
    details = inner.get("details")
    for detail in details if isinstance(details, list) else ():
        if isinstance(detail, Mapping) and isinstance(detail.get("reason"), str):
            return detail["reason"]  # type: ignore[no-any-return]
    return None


DIALECT: Final = GoogleDialect(NAME)
"""The ``gemini`` dialect."""
