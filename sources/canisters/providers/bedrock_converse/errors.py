"""Bedrock Runtime's error dialect, in the three forms a caller meets.

- What boto3 raises: ``ClientError.response``, ``{"Error": {"Code":
  "ThrottlingException", "Message"}, "ResponseMetadata": {...}}`` (the
  exception itself is read too); an error from another format is written in
  this form.
- The REST JSON body, ``{"message": "..."}``: the exception's name travels in
  the ``x-amzn-ErrorType`` header, so the kind comes from the HTTP status.
- A ConverseStream error event, ``{"throttlingException": {"message"}}``
  (``internalServerException``, ``modelStreamErrorException``,
  ``validationException``, ``serviceUnavailableException``).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

from canisters.providers.kit import Dialect, ErrorKind, ErrorReply

from .messages import NAME

__all__ = ["DIALECT", "BedrockDialect"]

KINDS: Final[Mapping[str, ErrorKind]] = {
    "ValidationException": "invalid_request",
    "ThrottlingException": "rate_limited",
    "AccessDeniedException": "permission",
    "ResourceNotFoundException": "not_found",
    "ModelErrorException": "server_error",
    "ModelNotReadyException": "overloaded",
    "ModelTimeoutException": "timeout",
    "ServiceUnavailableException": "overloaded",
    "InternalServerException": "server_error",
    "ServiceQuotaExceededException": "quota_exceeded",
    "ModelStreamErrorException": "server_error",
    "UnrecognizedClientException": "authentication",
    "InvalidSignatureException": "authentication",
    "ExpiredTokenException": "authentication",
    "IncompleteSignatureException": "authentication",
    "MissingAuthenticationTokenException": "authentication",
}
"""The exceptions' kinds (a stream event's key is the name, first letter lower)."""

RENDERS: Final[Mapping[ErrorKind, tuple[int, str | None, str | int | None]]] = {
    "invalid_request": (400, "ValidationException", None),
    "authentication": (403, "UnrecognizedClientException", None),
    "permission": (403, "AccessDeniedException", None),
    "not_found": (404, "ResourceNotFoundException", None),
    "request_too_large": (400, "ValidationException", None),
    "context_length_exceeded": (400, "ValidationException", None),
    "rate_limited": (429, "ThrottlingException", None),
    "quota_exceeded": (400, "ServiceQuotaExceededException", None),
    "overloaded": (503, "ServiceUnavailableException", None),
    "timeout": (408, "ModelTimeoutException", None),
    "server_error": (500, "InternalServerException", None),
    "content_refused": (400, "ValidationException", None),
    "unknown": (500, "InternalServerException", None),
}
_EVENTS = frozenset(name[0].lower() + name[1:] for name in KINDS)
_KINDS = {**KINDS, **{name[0].lower() + name[1:]: kind for name, kind in KINDS.items()}}


class BedrockDialect(Dialect):
    """Bedrock Runtime's error forms, for the provider named ``provider``."""

    __slots__ = ()

    writes_param = False

    def __init__(self, provider: str) -> None:
        super().__init__(provider, _KINDS, RENDERS)

    def is_error(self, body: object) -> bool:
        if not isinstance(body, Mapping) or "output" in body:
            return False
        if isinstance(body.get("Error"), Mapping):
            return True
        if len(body) == 1 and next(iter(body)) in _EVENTS:
            return isinstance(next(iter(body.values())), Mapping)
        return isinstance(body.get("message"), str) and body.keys() <= {
            "message",
            "__type",
        }

    def read(self, body: Mapping[str, Any], status: int | None) -> ErrorReply:
        inner = body.get("Error")
        if isinstance(inner, Mapping):
            envelope = {k: v for k, v in body.items() if k != "Error"}
            meta = body.get("ResponseMetadata")
            given = meta.get("HTTPStatusCode") if isinstance(meta, Mapping) else None
            if status is None and type(given) is int and 100 <= given < 600:
                status = given
            lowered = {"message": inner.get("Message"), **inner}
            reply = self.reply(
                lowered,
                status,
                envelope,
                "$.Error",
                own=("Message", "Code", "message"),
                type=inner.get("Code"),
            )
            return reply
        if "message" in body:  # the REST JSON body: its type is in a header
            return self.reply(body, status, {}, "$", own=("message",))
        name, event = next(iter(body.items()))
        return self.reply(event, status, {}, f"$.{name}", own=("message",), type=name)

    def write(
        self,
        reply: ErrorReply,
        status: int,
        kind: tuple[str | None, str | int | None],
        extras: dict[str, Any],
        envelope: dict[str, Any],
    ) -> dict[str, Any]:
        name = kind[0]
        if name is None:
            return {"message": reply.message, **extras}
        if name in _EVENTS:
            return {name: {"message": reply.message, **extras}}
        return {"Error": {"Message": reply.message, "Code": name, **extras}, **envelope}

    def wrap(self, inner: dict[str, Any], event: Mapping[str, Any]) -> object:
        return {"internalServerException": {"message": str(inner)}}


DIALECT: Final = BedrockDialect(NAME)
"""The ``bedrock-converse`` dialect."""
