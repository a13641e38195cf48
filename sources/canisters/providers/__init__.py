"""Translate conversations to and from provider formats.

A normalizer per provider, registered by name::

    from canisters import providers

    normalizer = providers.get("anthropic")
    conversation = normalizer.parse_request(body)
    body = normalizer.render_request(conversation, unsupported="drop")

Every built-in normalizer also reads streamed responses
(:class:`StreamingNormalizer`, :mod:`canisters.providers.streams`)::

    conversation = normalizer.parse_stream(events)

and reads and writes its provider's error bodies (:class:`ErrorNormalizer`):
``parse_response`` on an error body, and a stream with an error event, raise
:class:`ErrorResponse` carrying the neutral :class:`ErrorReply`::

    try:
        reply = normalizer.parse_response(body)
    except providers.ErrorResponse as refused:
        status, relayed = providers.get("openai-chat").render_error(refused.reply)

Normalizers with whole requests (:class:`RequestNormalizer`) also read and
write every other field of a request body (model, tools, tool choice, output
format, settings, reasoning...) through a :class:`~canisters.Request`::

    request = normalizer.parse_full_request(body)
    body = providers.get("anthropic").render_full_request(
        request, unsupported="drop", report=report
    )

The rules used across formats (:func:`translate_schema`, :class:`Capabilities`,
:class:`ReasoningTable`) are public: see the providers page of the manual.

Built-in normalizers (``openai-chat``, ``anthropic``...) are imported on first use,
so ``import canisters`` never imports a provider module or SDK. Plugins register
through the ``canisters.providers`` entry-point group (the entry point names a
normalizer object, or a class to instantiate) or by calling :func:`register`;
they build on :mod:`canisters.providers.kit` and prove themselves with
:mod:`canisters.providers.testing`.
"""

from __future__ import annotations

import importlib
import threading
from collections.abc import Iterable, Mapping
from importlib import metadata
from typing import Any, Literal, Protocol, runtime_checkable

from ..conversation import Conversation
from ..exceptions import MalformedPayload, ProviderError, UnknownProvider
from ..requests import Request
from ._common import Event, FidelityWarning, Options, Report, Unsupported
from ._errors import ERROR_KINDS, ErrorKind, ErrorReply, ErrorResponse
from ._rules import (
    DEFAULT_CAPABILITIES,
    Capabilities,
    ReasoningTable,
    SchemaChange,
    capabilities_for,
    is_strict_compatible,
    translate_schema,
)
from ._rules import kept as _kept
from ._upgrade import upgrade as _upgrade

__all__ = [
    "DEFAULT_CAPABILITIES",
    "ENTRY_POINT_GROUP",
    "ERROR_KINDS",
    "ErrorKind",
    "ErrorNormalizer",
    "ErrorReply",
    "ErrorResponse",
    "Capabilities",
    "Event",
    "FidelityWarning",
    "MalformedPayload",
    "Normalizer",
    "Options",
    "ReasoningTable",
    "Report",
    "RequestNormalizer",
    "SchemaChange",
    "StreamingNormalizer",
    "capabilities_for",
    "get",
    "is_strict_compatible",
    "names",
    "register",
    "translate_schema",
    "upgrade",
]

ENTRY_POINT_GROUP = "canisters.providers"
"""The entry-point group plugins register normalizers under."""

_BUILTIN = {
    "anthropic": "canisters.providers.anthropic",
    "bedrock-converse": "canisters.providers.bedrock_converse",
    "gemini": "canisters.providers.gemini",
    "ollama": "canisters.providers.ollama",
    "openai-chat": "canisters.providers.openai_chat",
    "openai-chat-reasoning": "canisters.providers.openai_chat.reasoning",
    "openai-responses": "canisters.providers.openai_responses",
    "open-responses": "canisters.providers.openai_responses.open_responses",
    "openrouter": "canisters.providers.openai_chat.openrouter",
}

_lock = threading.Lock()
_registered: dict[str, Normalizer] = {}
_entry_points: dict[str, metadata.EntryPoint] | None = None


@runtime_checkable
class Normalizer(Protocol):
    """Translates one provider's request and response bodies.

    ``parse_*`` take the provider's JSON (a mapping) or its SDK objects and return
    a :class:`~canisters.Conversation`; malformed input raises
    :class:`~canisters.providers.MalformedPayload`. ``render_*`` return plain
    JSON-compatible dicts holding only the conversation fields, and take the
    keyword options described by :class:`Options`.
    """

    __slots__ = ()

    @property
    def name(self) -> str:
        """The provider name the normalizer is registered under."""

    def parse_request(self, body: Any) -> Conversation:
        """Read a request body's conversation fields."""

    def render_request(
        self, conversation: Conversation, **options: Any
    ) -> dict[str, Any]:
        """Render the conversation fields of a request body."""

    def parse_response(self, body: Any) -> Conversation:
        """Read a response body: the reply with usage, model, id and finish reason."""

    def render_response(
        self, conversation: Conversation, **options: Any
    ) -> dict[str, Any]:
        """Render a response body from a reply."""


@runtime_checkable
class StreamingNormalizer(Normalizer, Protocol):
    """A :class:`Normalizer` that also reads streamed responses.

    Every built-in normalizer is one. A plugin may be a plain
    :class:`Normalizer`; check with ``isinstance(normalizer,
    StreamingNormalizer)`` before streaming. See :mod:`canisters.providers.streams`.
    """

    __slots__ = ()

    def accumulator(self) -> Any:
        """A fresh :class:`~canisters.providers.streams.Accumulator` for one stream."""

    def parse_stream(
        self,
        events: Iterable[Any],
        *,
        truncated: Literal["raise", "keep"] = "raise",
        report: Report | None = None,
    ) -> Conversation:
        """Read a streamed response's events into the reply ``parse_response``
        gives for the same response sent whole."""


@runtime_checkable
class ErrorNormalizer(Normalizer, Protocol):
    """A :class:`Normalizer` that also reads and writes its provider's error
    bodies.

    Every built-in normalizer is one; see :doc:`/providers` for each provider's
    shape and table of kinds.
    """

    __slots__ = ()

    def parse_error(self, body: Any, *, status: int | None = None) -> ErrorReply:
        """Read an error body (or the exception the provider's SDK raised) with
        the HTTP status it came with, when known."""

    def render_error(
        self,
        reply: ErrorReply,
        *,
        report: Report | None = None,
        unsupported: Unsupported = "drop",
    ) -> tuple[int, dict[str, Any]]:
        """Write ``reply`` as the provider's error body: ``(HTTP status, body)``;
        what of another provider's reply is not written as it is goes in
        ``report``, and is refused under ``unsupported="error"``."""


@runtime_checkable
class RequestNormalizer(Normalizer, Protocol):
    """A :class:`Normalizer` that also reads and writes whole requests.

    Every built-in normalizer is one; for a plugin's,
    ``isinstance(normalizer, RequestNormalizer)`` tells. For a body
    of the normalizer's own format, ``render_full_request(parse_full_request(
    body)) == body`` (every field, unknown ones included); across formats every
    field is translated, approximated or dropped, and every outcome that is not
    exact is reported (``report=``) or, under ``unsupported="error"``, refused.
    """

    __slots__ = ()

    def parse_full_request(self, body: Any) -> Request:
        """Read a whole request body (or SDK params) into a
        :class:`~canisters.Request`."""

    def render_full_request(self, request: Request, **options: Any) -> dict[str, Any]:
        """Render a whole request body; see :class:`Options`."""


def _discover() -> dict[str, metadata.EntryPoint]:
    global _entry_points
    if _entry_points is None:
        found = {
            point.name: point
            for point in metadata.entry_points(group=ENTRY_POINT_GROUP)
        }
        _entry_points = found
    return _entry_points


def register(name: str, normalizer: Normalizer, *, replace: bool = False) -> None:
    """Register ``normalizer`` under ``name``.

    Registering a name that is already taken raises :class:`~canisters.ProviderError`
    unless ``replace`` is true.
    """
    if not isinstance(name, str) or not name:
        raise ProviderError(f"a provider name must be a non-empty string, got {name!r}")
    for method in (
        "parse_request",
        "render_request",
        "parse_response",
        "render_response",
    ):
        if not callable(getattr(normalizer, method, None)):
            raise ProviderError(f"normalizer for {name!r} has no {method}()")
    with _lock:
        if name in _registered and not replace:
            raise ProviderError(f"a normalizer is already registered as {name!r}")
        _registered[name] = normalizer


def names() -> tuple[str, ...]:
    """Every provider name: built-in, registered and installed plugins, sorted."""
    return tuple(sorted(set(_BUILTIN) | set(_registered) | set(_discover())))


def get(name: str) -> Normalizer:
    """Return the normalizer registered under ``name``, loading it on first use.

    Unknown names raise :class:`~canisters.UnknownProvider` listing the known ones.
    """
    found = _registered.get(name)
    if found is not None:
        return found
    with _lock:
        found = _registered.get(name)
        if found is not None:
            return found
        if name in _BUILTIN:
            module = importlib.import_module(_BUILTIN[name])
            normalizer: Any = module.NORMALIZER
        else:
            point = _discover().get(name) if isinstance(name, str) else None
            if point is None:
                raise UnknownProvider(str(name), names())
            try:
                normalizer = point.load()
            except Exception as error:
                raise ProviderError(
                    f"could not load the {name!r} plugin ({point.value}): {error}"
                ) from error
            if isinstance(normalizer, type):
                normalizer = normalizer()
        _registered[name] = normalizer
        return normalizer  # type: ignore[no-any-return]


# A request may hold extras of a format whose module is not loaded yet: the rule
# reporting them loads it (which declares what its extras hold).
_kept.LOADERS.append(get)


def _reset_for_tests(
    entry_points: Mapping[str, metadata.EntryPoint] | None = None,
) -> None:
    """Forget registrations and rediscover plugins (tests only)."""
    global _entry_points
    with _lock:
        _registered.clear()
        _entry_points = dict(entry_points) if entry_points is not None else None


def upgrade(conversation: Conversation) -> Conversation:
    """Return ``conversation`` with the provider content that documents
    written before it was typed keep as wire elements made typed parts.

    Earlier versions kept what a provider added to a reply (Anthropic's
    server tool blocks and citations, OpenAI Responses' tool items and
    annotations, Gemini's code execution parts and grounding) whole in the
    extras, untyped. Each assistant canister holding a format's extras is
    rendered as that format's reply and read again; the typed parts replace
    its content where the result renders the same reply, byte for byte, and
    the canister keeps its id, timestamp and metadata. A canister with
    nothing to type, or one that would not give the same reply back, is left
    as it is. ``conversation`` itself is returned when nothing changes::

        conversation = providers.upgrade(serialization.from_json(old_document))
    """
    return _upgrade(conversation, get=get, names=names)
