"""Content parts: text, media (image, audio, video, file) and reasoning.

Every part is a frozen, slotted attrs class implementing a Protocol of
:mod:`canisters.protocols`. Media carry exactly one primary source -- ``data``
(bytes), ``url`` or ``content_id`` -- or none of them and at least one provider
file reference in ``refs``; references may also accompany a primary source.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any, ClassVar

import attrs

from . import _base64
from ._frozen import EMPTY, freeze
from ._typecheck import refuse, text_or_none
from .exceptions import ModelError, _excerpt
from .protocols import Modality

__all__ = [
    "Audio",
    "CONTENT_ID_PATTERN",
    "File",
    "Image",
    "Media",
    "Reasoning",
    "Text",
    "Video",
    "is_content_id",
]

CONTENT_ID_PATTERN = re.compile(r"sha256:[0-9a-f]{64}")
"""What a content id looks like: ``sha256:`` and 64 lowercase hex digits."""

_URL_SCHEME = re.compile(r"[A-Za-z][A-Za-z0-9+.\-]*:")


def is_content_id(value: object) -> bool:
    """Tell whether ``value`` is a well-formed ``sha256:`` content id."""
    return isinstance(value, str) and CONTENT_ID_PATTERN.fullmatch(value) is not None


def _to_bytes(
    value: bytes | bytearray | memoryview | _base64.Encoded | None,
) -> bytes | _base64.Encoded | None:
    if value is None or type(value) is bytes or type(value) is _base64.Encoded:
        return value
    if isinstance(value, (bytearray, memoryview)):
        return bytes(value)
    raise ModelError(f"media data must be bytes, got {type(value).__name__}")


def _bytes_of(value: bytes | _base64.Encoded | None) -> bytes | None:
    """What media data is compared and hashed by: its bytes."""
    return value.decode() if isinstance(value, _base64.Encoded) else value


def inline(part: Media) -> bytes | _base64.Encoded | None:
    """A media part's inline data as it holds it: bytes, or the base64 it was
    read from (not decoded; :func:`canisters._base64.text_of` writes it)."""
    return part._data


@attrs.frozen(weakref_slot=False)
class Text:
    """Text, plain or in a textual format such as markdown, HTML or JSON."""

    type: ClassVar[str] = "text"

    text: str
    """The text itself."""
    mime_type: str = "text/plain"
    """How to read the text: ``text/plain``, ``text/markdown``, ``text/html``."""
    id: str | None = attrs.field(default=None, kw_only=True)
    """Optional stable id of the part."""
    extras: Mapping[str, Any] = attrs.field(
        default=EMPTY, converter=freeze, kw_only=True
    )
    """Provider-specific fields without neutral meaning, keyed by provider name."""

    def __attrs_post_init__(self) -> None:
        if not isinstance(self.text, str):
            raise ModelError(f"Text.text must be a str, got {type(self.text).__name__}")
        if not isinstance(self.mime_type, str):
            raise refuse(self, "mime_type", "a string")
        if self.id is not None:
            text_or_none(self, "id")


@attrs.frozen(weakref_slot=False)
class Media:
    """Fields shared by :class:`Image`, :class:`Audio`, :class:`Video`, :class:`File`.

    Give exactly one of ``data``, ``url`` and ``content_id``, or none of them and at
    least one entry in ``refs``.
    """

    type: ClassVar[str] = "media"
    modality: ClassVar[Modality]

    _data: bytes | _base64.Encoded | None = attrs.field(
        default=None, converter=_to_bytes, kw_only=True, alias="data", eq=_bytes_of
    )
    url: str | None = attrs.field(default=None, kw_only=True)
    """An absolute URL: ``http(s)``, ``data:`` or a provider scheme such as ``gs:``."""
    content_id: str | None = attrs.field(default=None, kw_only=True)
    """A ``sha256:`` id whose bytes a content store holds."""
    refs: Mapping[str, str] = attrs.field(default=EMPTY, converter=freeze, kw_only=True)
    """Uploaded-file ids, one per provider name (``{"openai": "file-abc"}``)."""
    mime_type: str | None = attrs.field(default=None, kw_only=True)
    """Best-effort media type (``image/png``); inferred where a provider needs it."""
    hint: str | None = attrs.field(default=None, kw_only=True)
    """A non-semantic label for prompts (``"girl wearing a hat"``)."""
    id: str | None = attrs.field(default=None, kw_only=True)
    """Optional stable id of the part."""
    extras: Mapping[str, Any] = attrs.field(
        default=EMPTY, converter=freeze, kw_only=True
    )
    """Provider-specific fields without neutral meaning, keyed by provider name."""

    @property
    def data(self) -> bytes | None:
        """The bytes, carried inline (read from base64, they are decoded when
        first asked for)."""
        data = self._data
        if type(data) is _base64.Encoded:
            data = data.decode()
            # The bytes replace the text they came from (the same value).
            object.__setattr__(self, "_data", data)
        return data  # type: ignore[return-value]

    def __attrs_post_init__(self) -> None:
        if self.mime_type is not None or self.hint is not None or self.id is not None:
            text_or_none(self, "mime_type", "hint", "id")
        if self.url is None and self.content_id is None and not self.refs:
            # The common case, inline bytes (data is bytes, base64 or None, as
            # its converter made it): only a missing source is left to refuse.
            if self._data is None:
                raise ModelError(
                    f"{type(self).__name__} needs a source: data, url, content_id "
                    "or a provider file reference in refs"
                )
            return
        name = type(self).__name__
        sources = [
            field
            for field, value in (
                ("data", self._data),
                ("url", self.url),
                ("content_id", self.content_id),
            )
            if value is not None
        ]
        if len(sources) > 1:
            raise ModelError(
                f"{name} takes exactly one of data, url and content_id; "
                f"got {' and '.join(sources)}"
            )
        if not sources and not self.refs:
            raise ModelError(
                f"{name} needs a source: data, url, content_id or a provider "
                "file reference in refs"
            )
        if self.url is not None and (
            not isinstance(self.url, str) or _URL_SCHEME.match(self.url) is None
        ):
            raise ModelError(
                f"{name}.url must be an absolute URL, got {_excerpt(self.url)}",
                field="url",
            )
        if self.content_id is not None and not is_content_id(self.content_id):
            raise ModelError(
                f"{name}.content_id must be 'sha256:' and 64 lowercase hex digits, "
                f"got {_excerpt(self.content_id)}",
                field="content_id",
            )
        for provider, reference in self.refs.items():
            if not isinstance(provider, str) or not isinstance(reference, str):
                raise ModelError(
                    f"{name}.refs maps provider names to file ids (strings), "
                    f"got {_excerpt(provider)}: {_excerpt(reference)}",
                    field="refs",
                )


@attrs.frozen(weakref_slot=False)
class Image(Media):
    """An image."""

    type: ClassVar[str] = "image"
    modality: ClassVar[Modality] = Modality.Image


@attrs.frozen(weakref_slot=False)
class Audio(Media):
    """A sound recording."""

    type: ClassVar[str] = "audio"
    modality: ClassVar[Modality] = Modality.Audio


@attrs.frozen(weakref_slot=False)
class Video(Media):
    """A video."""

    type: ClassVar[str] = "video"
    modality: ClassVar[Modality] = Modality.Video


@attrs.frozen(weakref_slot=False)
class File(Media):
    """A document such as a PDF."""

    type: ClassVar[str] = "file"
    modality: ClassVar[Modality] = Modality.Document

    filename: str | None = attrs.field(default=None, kw_only=True)
    """The file's name, where known."""

    def __attrs_post_init__(self) -> None:
        super().__attrs_post_init__()
        if self.filename is not None:
            text_or_none(self, "filename")


@attrs.frozen(weakref_slot=False)
class Reasoning:
    """Model thinking, with the issuing provider's opaque signature kept byte-exact.

    A signature or redacted blob is only ever sent back to ``provider``.
    """

    type: ClassVar[str] = "reasoning"

    text: str = ""
    """The readable thinking or its summary (may be empty)."""
    signature: str | None = None
    """The provider's opaque signature, exactly as issued."""
    redacted: str | None = None
    """Encrypted or redacted thinking, exactly as issued."""
    provider: str | None = None
    """The provider that issued ``signature`` / ``redacted``."""
    id: str | None = attrs.field(default=None, kw_only=True)
    """Optional stable id of the part (provider item ids ride here)."""
    extras: Mapping[str, Any] = attrs.field(
        default=EMPTY, converter=freeze, kw_only=True
    )
    """Provider-specific fields without neutral meaning, keyed by provider name."""

    def __attrs_post_init__(self) -> None:
        if not isinstance(self.text, str):
            raise ModelError(
                f"Reasoning.text must be a str, got {type(self.text).__name__}"
            )
        text_or_none(self, "signature", "redacted", "provider", "id")
        if (self.signature is not None or self.redacted is not None) and (
            not self.provider
        ):
            raise ModelError(
                "Reasoning with a signature or redacted blob must name the provider "
                "that issued it"
            )


def _opaque(part: object) -> tuple[str, Mapping[str, Any]] | None:
    """The provider and the wire element an empty text part stands for, if it
    is one: an element of a type a normalizer keeps whole
    (``extras[provider]["raw"]``), to give back to that provider only."""
    if type(part) is not Text or part.text:
        return None
    for provider, data in part.extras.items():
        raw = data.get("raw") if isinstance(data, Mapping) else None
        if isinstance(raw, Mapping):
            return provider, raw
    return None


def _element_type(element: Mapping[str, Any]) -> str:
    """The name an element kept whole goes by: its ``type``, else its ``role``,
    else its first key holding an object (a Gemini part's kind, beside its
    ``thoughtSignature``), else its first key."""
    for key in ("type", "role"):
        value = element.get(key)
        if isinstance(value, str):
            return value
    for key, value in element.items():
        if isinstance(value, Mapping):
            return str(key)
    return next((str(key) for key in element), "element")
