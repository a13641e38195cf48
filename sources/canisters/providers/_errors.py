"""Provider error bodies: one neutral :class:`ErrorReply`, read and written per
provider.

A provider that refuses a call answers with an error body (and an HTTP status)
instead of a reply, or sends an error event in the middle of a stream. Each
normalizer reads its provider's error shape into an :class:`ErrorReply`
(``normalizer.parse_error(body, status=...)``) and writes one back as its
provider's body and status (``normalizer.render_error(reply)``), so that a
gateway can relay the refusal of one provider to a client of another.
``parse_response`` and the stream readers raise
:class:`~canisters.providers.ErrorResponse`, which
carries the reply, on an error body or event.

Each provider package spells its shape in its ``errors`` module, as a
:class:`Dialect`: how an error body is recognised, read and written, and the
table between its error types and codes and the neutral :data:`ErrorKind`.
What every shape shares (classifying, the HTTP statuses, relaying a reply to
the provider it came from) is here.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any, Final, Literal, get_args

import attrs

from .._frozen import EMPTY, freeze
from ..exceptions import MalformedPayload, ModelError, ProviderError
from ._options import Options, Report, Unsupported
from ._rules.policy import apply_policy

__all__ = [
    "ERROR_KINDS",
    "GENERIC_KINDS",
    "GENERIC_RENDERS",
    "STATUSES",
    "Dialect",
    "ErrorKind",
    "ErrorReply",
    "ErrorResponse",
]

ErrorKind = Literal[
    "invalid_request",
    "authentication",
    "permission",
    "not_found",
    "request_too_large",
    "context_length_exceeded",
    "rate_limited",
    "quota_exceeded",
    "overloaded",
    "timeout",
    "server_error",
    "content_refused",
    "unknown",
]
"""What went wrong, whichever provider said it.

``invalid_request``
    the request is malformed or asks for what cannot be done (HTTP 400, 422);
``authentication``
    no key, or a key the provider does not accept (401);
``permission``
    the key may not do this (403), a region or organisation refused;
``not_found``
    no such model, file or endpoint (404);
``request_too_large``
    the request body is over the provider's size limit (413);
``context_length_exceeded``
    the prompt has more tokens than the model's context window (a 400 whose
    code or message says so);
``rate_limited``
    too many requests or tokens per unit of time (429): retry later;
``quota_exceeded``
    the account's credit or quota is spent (OpenAI's ``insufficient_quota``,
    Anthropic's ``billing_error``): a retry will not help;
``overloaded``
    the provider is over capacity (Anthropic's 529, a 503): retry later;
``timeout``
    the provider gave up waiting (504, 408, ``DEADLINE_EXCEEDED``);
``server_error``
    the provider failed (500 and other 5xx);
``content_refused``
    the provider's content policy refused the request (OpenAI's
    ``content_policy_violation``, Azure's ``content_filter``);
``unknown``
    nothing in the body or status tells.
"""

ERROR_KINDS: Final[tuple[ErrorKind, ...]] = get_args(ErrorKind)
"""Every :data:`ErrorKind`, in the order documented there."""

_RETRYABLE: Final = frozenset({"rate_limited", "overloaded", "timeout", "server_error"})

_STATUS_KINDS: Final[Mapping[int, ErrorKind]] = {
    400: "invalid_request",
    401: "authentication",
    402: "quota_exceeded",
    403: "permission",
    404: "not_found",
    408: "timeout",
    413: "request_too_large",
    422: "invalid_request",
    429: "rate_limited",
    500: "server_error",
    502: "server_error",
    503: "overloaded",
    504: "timeout",
    529: "overloaded",
}
_GENERIC: Final = frozenset({"invalid_request", "server_error", "unknown"})
_CONTEXT: Final = re.compile(
    r"context.length|context.window|maximum context|prompt is too long"
    r"|exceeds the maximum number of tokens|too many tokens",
    re.IGNORECASE,
)
_NOT_FOUND: Final = re.compile(r"\bnot found\b", re.IGNORECASE)


def _status_kind(status: int | None) -> ErrorKind | None:
    if status is None:
        return None
    found = _STATUS_KINDS.get(status)
    if found is not None:
        return found
    if 400 <= status < 500:
        return "invalid_request"
    if 500 <= status < 600:
        return "server_error"
    return None


def _status_of(value: object) -> int | None:
    if isinstance(value, int) and not isinstance(value, bool) and 100 <= value < 600:
        return value
    return None


def _excerpt(value: object, limit: int = 60) -> str:
    text = repr(value)
    return text if len(text) <= limit else f"{text[: limit - 3]}..."


def _one_line(text: str, limit: int = 300) -> str:
    line = " ".join(text.split())
    return line if len(line) <= limit else f"{line[: limit - 3]}..."


@attrs.frozen
class ErrorReply:
    """A provider's refusal of a call, in neutral terms.

    Read from an error body by ``normalizer.parse_error`` (or carried by
    :class:`~canisters.providers.ErrorResponse`); written back as any provider's body by
    ``normalizer.render_error``. The provider's own fields (``type``, ``code``,
    ``extras``, ``envelope``) are given back exactly to the provider they came
    from; another provider gets the type, code and status its table gives for
    ``kind``.
    """

    kind: ErrorKind
    """What went wrong; see :data:`ErrorKind`."""
    message: str = ""
    """What the provider said, as it said it."""
    status: int | None = attrs.field(default=None, kw_only=True)
    """The HTTP status of the refusal, where known (not for an error event
    mid-stream, which arrives in a 200 response)."""
    code: str | int | None = attrs.field(default=None, kw_only=True)
    """The provider's code: OpenAI's ``code`` (``"rate_limit_exceeded"``),
    Gemini's ``status`` (``"RESOURCE_EXHAUSTED"``)."""
    type: str | None = attrs.field(default=None, kw_only=True)
    """The provider's error type: OpenAI's and Anthropic's ``type``
    (``"invalid_request_error"``, ``"overloaded_error"``)."""
    param: str | None = attrs.field(default=None, kw_only=True)
    """The request parameter the error is about (OpenAI's ``param``)."""
    provider: str | None = attrs.field(default=None, kw_only=True)
    """The provider (normalizer name) the error was read from."""
    extras: Mapping[str, Any] = attrs.field(
        default=EMPTY, converter=freeze, kw_only=True
    )
    """The rest of the provider's error object (Gemini's ``details``, Azure's
    ``innererror``), JSON-compatible."""
    envelope: Mapping[str, Any] = attrs.field(
        default=EMPTY, converter=freeze, kw_only=True
    )
    """The body's keys beside the error object (Anthropic's ``request_id``;
    the id, model and the rest of a failed OpenAI Responses response)."""

    def __attrs_post_init__(self) -> None:
        if self.kind not in ERROR_KINDS:
            raise ModelError(
                f"kind must be one of {', '.join(ERROR_KINDS)}, got {self.kind!r}",
                "kind",
            )
        if not isinstance(self.message, str):
            raise ModelError("message must be a string", "message")
        if self.status is not None and _status_of(self.status) is None:
            raise ModelError(
                f"status must be an HTTP status (100-599) or None, got {self.status!r}",
                "status",
            )
        if self.code is not None and (
            isinstance(self.code, bool) or not isinstance(self.code, (str, int))
        ):
            raise ModelError("code must be a string, an int or None", "code")
        for field in ("type", "param", "provider"):
            value = getattr(self, field)
            if value is not None and not isinstance(value, str):
                raise ModelError(f"{field} must be a string or None", field)

    @property
    def retryable(self) -> bool:
        """Whether the same call may succeed later (rate limited, overloaded,
        timed out, or a server error)."""
        return self.kind in _RETRYABLE

    def __str__(self) -> str:
        said = [str(part) for part in (self.type, self.code) if part is not None]
        if self.status is not None:
            said.insert(0, f"HTTP {self.status}")
        detail = f" ({', '.join(said)})" if said else ""
        message = f": {_one_line(self.message)}" if self.message else ""
        return f"{self.kind}{detail}{message}"


class ErrorResponse(ProviderError):
    """A provider refused the call: its body (or a stream's event) is an error.

    ``reply`` is the :class:`ErrorReply` read from it; ``path`` names the event
    of a stream that carried it (``$[7]``), or is ``None`` for a whole body.
    """

    def __init__(self, reply: ErrorReply, path: str | None = None) -> None:
        self.reply = reply
        self.path = path
        who = reply.provider or "the provider"
        where = f" mid-stream at {path}" if path is not None else ""
        super().__init__(f"{who} refused the call{where}: {reply}")


Render = tuple[int, str | None, str | int | None]
"""What a dialect writes for a kind: the HTTP status, the type and the code."""

GENERIC_KINDS: Final[Mapping[str, ErrorKind]] = {
    # types
    "invalid_request_error": "invalid_request",
    "authentication_error": "authentication",
    "permission_error": "permission",
    "request_forbidden": "permission",
    "not_found_error": "not_found",
    "requests": "rate_limited",
    "tokens": "rate_limited",
    "rate_limit_error": "rate_limited",
    "insufficient_quota": "quota_exceeded",
    "server_error": "server_error",
    # codes
    "context_length_exceeded": "context_length_exceeded",
    "string_above_max_length": "request_too_large",
    "rate_limit_exceeded": "rate_limited",
    "invalid_api_key": "authentication",
    "model_not_found": "not_found",
    "unsupported_country_region_territory": "permission",
    "content_filter": "content_refused",
    "content_policy_violation": "content_refused",
    "image_content_policy_violation": "content_refused",
    "invalid_prompt": "content_refused",
    "image_too_large": "request_too_large",
    "image_file_too_large": "request_too_large",
    "vector_store_timeout": "timeout",
}
"""The error types and codes of OpenAI's vocabulary, which most servers copy:
how an error of unknown shape (a plugin's stream event) is classified."""

GENERIC_RENDERS: Final[Mapping[ErrorKind, Render]] = {
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
"""The status, type and code OpenAI writes for each kind: what a dialect
writes by default."""

STATUSES: Final[Mapping[ErrorKind, int]] = {
    "invalid_request": 400,
    "authentication": 401,
    "permission": 403,
    "not_found": 404,
    "request_too_large": 413,
    "context_length_exceeded": 400,
    "rate_limited": 429,
    "quota_exceeded": 429,
    "overloaded": 503,
    "timeout": 504,
    "server_error": 500,
    "content_refused": 400,
    "unknown": 500,
}
"""The HTTP status of each kind, for a dialect that writes only a status."""


class Dialect:
    """One provider's error shape and its table of kinds.

    ``kinds`` maps the provider's error types and codes to a kind (a code is
    looked up before a type); ``renders`` gives, per kind, the HTTP status, type
    and code to write for it. The class itself reads and writes the shape most
    servers copy from OpenAI, ``{"error": {"message", "type", "param",
    "code"}}`` (and a failed Responses ``response`` object); another shape
    overrides :meth:`is_error`, :meth:`read` (an error body to a reply),
    :meth:`write` (a reply to a body) and :meth:`wrap` (a bare error object of
    a stream to an error body); one that holds OpenAI's error object at
    another place reads and writes it with :meth:`openai_reply` and
    :meth:`openai_object`. One shape serves several providers, each under its
    own ``provider`` name.
    """

    __slots__ = ("kinds", "provider", "renders")

    writes_param: bool = True
    """Whether the shape has a place for the request parameter an error is
    about (OpenAI's ``param``)."""

    def __init__(
        self,
        provider: str,
        kinds: Mapping[str, ErrorKind] = GENERIC_KINDS,
        renders: Mapping[ErrorKind, tuple[int, str | None, str | int | None]] = (
            GENERIC_RENDERS
        ),
    ) -> None:
        self.provider = provider
        self.kinds = kinds
        self.renders = renders

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {self.provider}>"

    # What a shape spells ---------------------------------------------------------

    def is_error(self, body: object) -> bool:
        """Whether ``body`` (a decoded JSON value) is this provider's error body."""
        if not isinstance(body, Mapping):
            return False
        if body.get("object") == "response":
            return body.get("status") == "failed"
        return isinstance(body.get("error"), Mapping) and not body.keys() & {
            "choices",
            "candidates",
            "output",
        }

    def unwrap(self, body: object) -> object:
        """The error body itself, where the provider wraps it (in a list)."""
        return body

    def read(self, body: Mapping[str, Any], status: int | None) -> ErrorReply:
        """The reply of an error body (:meth:`is_error` holds for it)."""
        envelope = {k: v for k, v in body.items() if k != "error"}
        inner: Any = body.get("error")
        if body.get("object") == "response":
            # A response that failed (sent with HTTP 200): its error object
            # holds only a code and a message.
            inner = inner if isinstance(inner, Mapping) else {}
        else:
            envelope.pop("type", None)
        return self.openai_reply(inner, status, envelope, "$.error")

    def write(
        self,
        reply: ErrorReply,
        status: int,
        kind: tuple[str | None, str | int | None],
        extras: dict[str, Any],
        envelope: dict[str, Any],
    ) -> dict[str, Any]:
        """The error body of ``reply``, given the ``(type, code)`` to write."""
        if envelope.get("object") == "response":
            envelope = {}  # a failed response is relayed as an error body
        return {"error": self.openai_object(reply, kind, extras), **envelope}

    def openai_reply(
        self,
        inner: Mapping[str, Any],
        status: int | None,
        envelope: Mapping[str, Any],
        path: str,
        own: tuple[str, ...] = ("message", "type", "param", "code"),
    ) -> ErrorReply:
        """The :meth:`reply` of OpenAI's error object ``inner`` at ``path``:
        its ``type``, ``code`` and ``param`` read, its keys other than ``own``
        as extras (for a shape that holds the object at another place, such as
        a flat body)."""
        return self.reply(
            inner,
            status,
            envelope,
            path,
            own=own,
            type=inner.get("type"),
            code=inner.get("code"),
            param=inner.get("param"),
        )

    def openai_object(
        self,
        reply: ErrorReply,
        kind: tuple[str | None, str | int | None],
        extras: dict[str, Any],
    ) -> dict[str, Any]:
        """OpenAI's error object of ``reply``, given the ``(type, code)`` to
        write: ``message``, ``type``, ``param``, ``code``, then ``extras``."""
        inner: dict[str, Any] = {"message": reply.message, "type": kind[0]}
        inner.update(param=reply.param, code=kind[1], **extras)
        return inner

    def wrap(self, inner: dict[str, Any], event: Mapping[str, Any]) -> object:
        """The error body of a stream's bare error object ``inner`` (``event``
        without its ``sequence_number``)."""
        if inner.get("type") == "error":
            del inner["type"]  # the event's type, not the error's
        return {"error": inner}

    # Shared ----------------------------------------------------------------------

    def classify(
        self,
        type: object,
        code: object,
        status: int | None,
        message: str,
        reason: object = None,
    ) -> ErrorKind:
        """The kind of an error: its code, then its type; a generic one (an
        invalid request, a server error) gives way to a more telling HTTP
        status, and an invalid request to a message about the context length."""
        kind: ErrorKind | None = None
        for key in (reason, code, type):
            if isinstance(key, str) and kind is None:
                kind = self.kinds.get(key)
        by_status = _status_kind(status)
        if kind is None or (kind in _GENERIC and by_status not in (None, *_GENERIC)):
            kind = by_status or kind
        if kind in (None, "invalid_request") and _CONTEXT.search(message):
            return "context_length_exceeded"
        if kind is None and _NOT_FOUND.search(message):
            return "not_found"
        return kind or "unknown"

    def reply(
        self,
        inner: Mapping[str, Any],
        status: int | None,
        envelope: Mapping[str, Any],
        path: str,
        *,
        own: tuple[str, ...],
        type: object = None,
        code: object = None,
        param: object = None,
        reason: object = None,
        extras: dict[str, Any] | None = None,
    ) -> ErrorReply:
        """The reply of an error object ``inner`` at ``path``: its ``message``,
        the ``type``, ``code`` and ``param`` the shape read (checked here), its
        keys other than ``own`` as extras."""
        message = inner.get("message")
        if message is None:
            message = ""
        elif not isinstance(message, str):
            raise MalformedPayload("expected a string", f"{path}.message")
        rest = {k: v for k, v in inner.items() if k not in own}
        if extras:
            rest.update(extras)
        if status is None:
            status = _status_of(inner.get("status"))  # Azure's inner "status"
        for key, value in (("type", type), ("param", param)):
            if value is not None and not isinstance(value, str):
                raise MalformedPayload("expected a string or null", f"{path}.{key}")
        if code is not None and (
            isinstance(code, bool) or not isinstance(code, (str, int))
        ):
            raise MalformedPayload("expected a string or null", f"{path}.code")
        return ErrorReply(
            self.classify(type, code, status, message, reason),
            message,
            status=status,
            code=code,
            type=type,  # type: ignore[arg-type]
            param=param,  # type: ignore[arg-type]
            provider=self.provider,
            extras=rest,
            envelope=envelope,
        )

    def check(self, body: object) -> None:
        """Raise :class:`~canisters.providers.ErrorResponse` when ``body`` is this
        provider's error
        body (what ``parse_response`` does before reading a reply)."""
        # Every shape's error body holds an "error" (a failed Responses response
        # says so in its "status"): a reply is let through at the cost of two reads.
        if (
            type(body) is dict
            and body.get("error") is None
            and body.get("status") != "failed"
        ):
            return
        if self.is_error(body):
            raise self.refuse(body)

    def parse(self, body: object, status: int | None = None) -> ErrorReply:
        """Read an error body; anything else raises
        :class:`~canisters.providers.MalformedPayload`."""
        if status is not None and _status_of(status) is None:
            raise ProviderError(
                f"status must be an HTTP status (100-599), got {status!r}"
            )
        body = self.unwrap(body)
        if not isinstance(body, Mapping):
            raise MalformedPayload(
                f"expected an error body (a JSON object), got {type(body).__name__}"
            )
        if not self.is_error(body):
            raise MalformedPayload(f"not a {self.provider} error body", "$.error")
        return self.read(body, status)

    def refuse(self, body: object, status: int | None = None) -> ErrorResponse:
        """The :class:`~canisters.providers.ErrorResponse` for an error body
        ``parse_response`` met."""
        return ErrorResponse(self.parse(body, status))

    def stream_error(self, event: Mapping[str, Any], path: str) -> ErrorResponse:
        """The :class:`~canisters.providers.ErrorResponse` for an error event of a
        stream: an error
        body of the provider's shape, or a bare error object
        (``{"type", "code", "message", "param"}``) :meth:`wrap` turns into one."""
        if not self.is_error(event):
            inner = {k: v for k, v in event.items() if k != "sequence_number"}
            event = self.wrap(inner, event)  # type: ignore[assignment]
        return ErrorResponse(self.parse(event), path)

    def render(
        self,
        reply: ErrorReply,
        *,
        report: Report | None = None,
        unsupported: Unsupported = "drop",
    ) -> tuple[int, dict[str, Any]]:
        """Write ``reply`` as this provider's error body, with its HTTP status.

        A reply of this provider goes back exactly. For one of another
        provider (or made by hand), each of its fields not written as it is
        goes through the unsupported policy: a ``type``, ``code`` or
        ``status`` written as this provider's word for the kind is
        *approximated*, one this shape has no place for (its ``param``, each
        key of ``extras`` and ``envelope``) is *dropped*; each is an event in
        ``report`` naming the field and its value, and ``unsupported="error"``
        refuses the reply with :class:`~canisters.UnsupportedContent`
        instead. The default, ``"drop"``, relays the refusal.
        """
        if not isinstance(reply, ErrorReply):
            raise ProviderError(
                f"render_error takes an ErrorReply, got {type(reply).__name__}"
            )
        same = reply.provider == self.provider
        status, error_type, code = self.renders[reply.kind]
        extras: dict[str, Any] = {}
        envelope: dict[str, Any] = {}
        if same:
            error_type, code = reply.type, reply.code
            extras, envelope = dict(reply.extras), dict(reply.envelope)
        if reply.status is not None and (same or reply.provider is None):
            status = reply.status
        if not same:
            options = Options(unsupported=unsupported, report=report)
            self._account(reply, status, (error_type, code), options)
        return status, self.write(reply, status, (error_type, code), extras, envelope)

    def _account(
        self,
        reply: ErrorReply,
        status: int,
        written: tuple[str | None, str | int | None],
        options: Options,
    ) -> None:
        """Put each field of another provider's ``reply`` that is not written
        as it is through the policy (see :meth:`render`)."""

        def dropped(where: str, reason: str) -> None:
            apply_policy(
                options,
                self.provider,
                where,
                reason,
                refused_as=f"error field {where}",
                stacklevel=5,
            )

        who = f"{reply.provider}'s" if reply.provider is not None else "the reply's"
        rule = f"{self.provider}'s error table, kind {reply.kind}"
        said: tuple[tuple[str, object, object], ...] = (
            ("type", reply.type, written[0]),
            ("code", reply.code, written[1]),
            ("status", reply.status, status),
        )
        for field, value, new in said:
            if value is None or value == new:
                continue
            where = f"error.{field}"
            if new is None:
                dropped(
                    where,
                    f"{who} {field} {value!r} not written: {self.provider} "
                    f"writes none for kind {reply.kind}",
                )
            else:
                detail = f"{who} {field} {value!r} written as {new!r}"
                apply_policy(
                    options,
                    self.provider,
                    where,
                    f"{detail} ({rule})",
                    kind="approximated",
                    detail=detail,
                    rule=rule,
                    refused_as=f"error field {where}",
                )
        if reply.param is not None and not self.writes_param:
            dropped(
                "error.param",
                f"{who} param {reply.param!r} has no place in {self.provider}",
            )
        for prefix, kept in (("error.", reply.extras), ("", reply.envelope)):
            for key, value in kept.items():
                dropped(
                    f"{prefix}{key}",
                    f"{who} key {key!r} ({_excerpt(value)}) has no place in "
                    f"{self.provider}",
                )


def generic_error(error: object, path: str, provider: str | None) -> ErrorResponse:
    """The :class:`~canisters.providers.ErrorResponse` for an error object of unknown
    shape (a
    plugin's stream): its ``type``, ``code``, ``status`` and ``message``."""
    dialect = Dialect(provider or "the provider", GENERIC_KINDS, {})
    if isinstance(error, Mapping):
        message = error.get("message")
        message = message if isinstance(message, str) else ""
        error_type = error.get("type")
        error_type = error_type if isinstance(error_type, str) else None
        code = error.get("code")
        if isinstance(code, bool) or not isinstance(code, (str, int)):
            code = None
        status = _status_of(error.get("status")) or _status_of(code)
        if not isinstance(error.get("status"), int) and isinstance(
            error.get("status"), str
        ):
            code = code if code is not None else error.get("status")
        own = ("message", "type", "code", "status")
        rest = {k: v for k, v in error.items() if k not in own}
        if not message and error_type is None and code is None:
            message = str(dict(error))
        kind = dialect.classify(error_type, code, status, message)
        reply = ErrorReply(
            kind,
            message,
            status=status,
            code=code,
            type=error_type,
            provider=provider,
            extras=rest,
        )
    else:
        text = str(error)
        reply = ErrorReply(
            dialect.classify(None, None, None, text), text, provider=provider
        )
    return ErrorResponse(reply, path)


def from_exception(error: BaseException, status: int | None) -> tuple[Any, int | None]:
    """The body and HTTP status an SDK's exception holds (openai's and
    anthropic's ``APIStatusError``, google-genai's ``APIError``, ollama's
    ``ResponseError``)."""
    said = _status_of(getattr(error, "status_code", None)) or _status_of(
        getattr(error, "code", None)
    )
    status = status if status is not None else said
    response = getattr(error, "response", None)
    reader = getattr(response, "json", None)
    if callable(reader):
        try:
            return reader(), status
        except Exception:  # a body that is not JSON: read what the error kept
            pass
    details = getattr(error, "details", None)  # google-genai keeps the JSON
    if isinstance(details, (Mapping, list)):
        return details, status
    text = getattr(error, "error", None)  # ollama keeps the message
    if isinstance(text, str):
        return {"error": text}, status
    body = getattr(error, "body", None)
    return body, status


def status_of(value: object) -> int | None:
    """``value`` when it is an HTTP status (an int from 100 to 599)."""
    return _status_of(value)
