"""Roles and the runtime-checkable Protocols that define canisters and content.

The library's own classes implement these Protocols; an application may subclass
those classes or write classes of its own that satisfy a Protocol, and the rest of
the library accepts them. Members are read-only properties, so frozen attrs fields
satisfy them, and every Protocol declares ``__slots__ = ()`` so slotted subclasses
stay slotted.

``isinstance`` against these Protocols works (checking member presence) but costs
microseconds; the library itself dispatches on :attr:`Canister.role` and
:attr:`Content.type`.
"""

from __future__ import annotations

import enum
from collections.abc import Mapping
from datetime import datetime
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

if TYPE_CHECKING:
    from .canisters import ErrorInfo, Metadata

__all__ = [
    "AssistantCanister",
    "AudioContent",
    "Canister",
    "Content",
    "DocumentCanister",
    "FileContent",
    "ImageContent",
    "InvocationCanister",
    "MediaContent",
    "Modality",
    "ReasoningContent",
    "ResultCanister",
    "Role",
    "SupervisorCanister",
    "TextualContent",
    "UserCanister",
    "VideoContent",
]


class Role(str, enum.Enum):
    """What a canister is in a conversation; the tag of every canister."""

    User = "user"
    """Input from the person or program the model serves."""
    Assistant = "assistant"
    """Output of the model: text, media, reasoning."""
    Supervisor = "supervisor"
    """Instructions that steer the model (system / developer prompts)."""
    Document = "document"
    """Reference material given as context."""
    Invocation = "invocation"
    """A call of a tool or option chosen by the model or a policy."""
    Result = "result"
    """The outcome of one invocation: a value or an error."""


class Modality(str, enum.Enum):
    """The kind of medium a media part carries."""

    Image = "image"
    """Still pictures."""
    Audio = "audio"
    """Sound."""
    Video = "video"
    """Moving pictures."""
    Document = "document"
    """Files such as PDFs or spreadsheets."""


@runtime_checkable
class Content(Protocol):
    """One part of a canister's content."""

    __slots__ = ()

    @property
    def type(self) -> str:
        """The tag of the part (``"text"``, ``"image"``, ...)."""

    @property
    def id(self) -> str | None:
        """Optional stable id of the part."""

    @property
    def extras(self) -> Mapping[str, Any]:
        """Provider-specific fields without neutral meaning, keyed by provider."""


@runtime_checkable
class TextualContent(Content, Protocol):
    """Text, in plain form or as markdown, HTML, JSON and the like."""

    __slots__ = ()

    @property
    def text(self) -> str:
        """The text itself."""

    @property
    def mime_type(self) -> str:
        """How to read the text (``text/plain``, ``text/markdown``, ...)."""


@runtime_checkable
class MediaContent(Content, Protocol):
    """A media part: bytes, a URL, a content-store id or provider file references."""

    __slots__ = ()

    @property
    def modality(self) -> Modality:
        """Which medium the part carries."""

    @property
    def data(self) -> bytes | None:
        """The bytes, when the part carries them inline."""

    @property
    def url(self) -> str | None:
        """An ``http(s)`` or ``data:`` URL."""

    @property
    def content_id(self) -> str | None:
        """A ``sha256:`` id resolved by a content store."""

    @property
    def refs(self) -> Mapping[str, str]:
        """Uploaded-file ids, one per provider name."""

    @property
    def mime_type(self) -> str | None:
        """Best-effort media type, such as ``image/png``."""

    @property
    def hint(self) -> str | None:
        """A non-semantic label usable in prompts (``"girl wearing a hat"``)."""


@runtime_checkable
class ImageContent(MediaContent, Protocol):
    """An image part."""

    __slots__ = ()


@runtime_checkable
class AudioContent(MediaContent, Protocol):
    """An audio part."""

    __slots__ = ()


@runtime_checkable
class VideoContent(MediaContent, Protocol):
    """A video part."""

    __slots__ = ()


@runtime_checkable
class FileContent(MediaContent, Protocol):
    """A document part (PDF and other files)."""

    __slots__ = ()

    @property
    def filename(self) -> str | None:
        """The file's name, where known."""


@runtime_checkable
class ReasoningContent(Content, Protocol):
    """Model thinking, with the issuing provider's opaque signature kept exact."""

    __slots__ = ()

    @property
    def text(self) -> str:
        """The readable thinking or its summary (may be empty)."""

    @property
    def signature(self) -> str | None:
        """The provider's opaque signature, byte-exact."""

    @property
    def redacted(self) -> str | None:
        """The provider's encrypted or redacted thinking, byte-exact."""

    @property
    def provider(self) -> str | None:
        """The provider that issued the signature; the only one it is sent back to."""


@runtime_checkable
class Canister(Protocol):
    """The envelope every canister carries."""

    __slots__ = ()

    @property
    def role(self) -> Role:
        """What the canister is."""

    @property
    def id(self) -> str:
        """Unique id of the canister."""

    @property
    def timestamp(self) -> datetime:
        """When the canister was created (timezone-aware)."""

    @property
    def parent_id(self) -> str | None:
        """Id of the canister this one derives from (lineage)."""

    @property
    def trace_id(self) -> str | None:
        """Id shared by every canister of one trace."""

    @property
    def policy(self) -> str | None:
        """Which policy, agent or node created the canister."""

    @property
    def step(self) -> int | None:
        """The logical decision cycle the canister belongs to."""

    @property
    def metadata(self) -> Metadata | None:
        """Execution metadata: model, latency, usage, retries, finish reason."""

    @property
    def extras(self) -> Mapping[str, Any]:
        """Provider-specific fields without neutral meaning, keyed by provider."""


@runtime_checkable
class UserCanister(Canister, Protocol):
    """Input from the person or program the model serves."""

    __slots__ = ()

    @property
    def content(self) -> tuple[Content, ...]:
        """Text and media, interleaved."""


@runtime_checkable
class AssistantCanister(Canister, Protocol):
    """Output of the model."""

    __slots__ = ()

    @property
    def content(self) -> tuple[Content, ...]:
        """Text, media and reasoning; empty when the turn only invokes tools."""


@runtime_checkable
class SupervisorCanister(Canister, Protocol):
    """System or developer instructions."""

    __slots__ = ()

    @property
    def content(self) -> tuple[Content, ...]:
        """The instructions."""


@runtime_checkable
class DocumentCanister(Canister, Protocol):
    """Reference material given as context."""

    __slots__ = ()

    @property
    def content(self) -> tuple[Content, ...]:
        """The material."""

    @property
    def title(self) -> str | None:
        """A title for the material."""

    @property
    def document_id(self) -> str | None:
        """An application id for the material."""


@runtime_checkable
class InvocationCanister(Canister, Protocol):
    """A call of a tool or option."""

    __slots__ = ()

    @property
    def invocation_id(self) -> str:
        """Pairs the invocation with its result."""

    @property
    def name(self) -> str:
        """The tool or option invoked."""

    @property
    def arguments(self) -> Mapping[str, Any]:
        """The arguments, as JSON-compatible values."""


@runtime_checkable
class ResultCanister(Canister, Protocol):
    """The outcome of one invocation."""

    __slots__ = ()

    @property
    def invocation_id(self) -> str:
        """The id of the invocation this answers."""

    @property
    def name(self) -> str:
        """The tool or option that ran."""

    @property
    def content(self) -> tuple[Content, ...]:
        """The value, as text or media."""

    @property
    def error(self) -> ErrorInfo | None:
        """Set when the invocation failed."""
