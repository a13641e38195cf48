"""Media shared by the normalizers: base64 kept exact, data URLs, MIME types,
the bytes a part holds, media labels."""

from __future__ import annotations

import base64
import binascii
import mimetypes
import re
from typing import TYPE_CHECKING, Any

from .. import _base64
from ..content import (
    Media,
    Text,
    inline,
)
from ..exceptions import (
    MalformedPayload,
)

if TYPE_CHECKING:
    from ._options import Options


# Media -------------------------------------------------------------------------------


def b64encode(data: bytes | _base64.Encoded) -> str:
    """Standard base64 (``+`` and ``/``, padded), as every provider takes it (a
    part's base64 as it was read, when it kept it)."""
    return _base64.text_of(data)


def b64decode_exact(text: str, path: str = "$") -> tuple[bytes, bool]:
    """Decode base64 (standard or URL-safe); tell whether :func:`b64encode` of the
    bytes gives ``text`` back exactly (when not, keep the original string)."""
    padding = -len(text) % 4
    try:
        if "-" in text or "_" in text:
            data = base64.urlsafe_b64decode(text + "=" * padding)
            return data, False  # b64encode writes "+" and "/"
        data = _base64.decode(text + "=" * padding)
    except (binascii.Error, ValueError) as error:
        raise MalformedPayload(f"invalid base64: {error}", path) from None
    return data, not padding and _canonical(text, data)


def _canonical(text: str, data: bytes) -> bool:
    """Whether :func:`b64encode` gives ``text`` back from ``data``, which
    ``text`` decodes to strictly (standard alphabet, padded, nothing else).

    Each group of three bytes has one spelling, so only the last group can
    differ: in the unused bits of its last character. Re-encoding that group
    alone settles it, where re-encoding the whole (megabytes for media) took
    about a fifth of reading it.
    """
    if not data:
        return not text
    tail = data[-(len(data) % 3 or 3) :]  # what b64encode writes through binascii
    return binascii.b2a_base64(tail, newline=False).decode() == text[-4:]


def _exact(text: str, data: bytes | _base64.Encoded) -> bool:
    """Whether :func:`b64encode` gives ``text`` back from what
    :func:`canisters._base64.check` made of it (its last group decoded alone,
    when it kept the text)."""
    if type(data) is bytes:
        return _canonical(text, data)
    if len(text) % 4:
        return False
    return not text or _canonical(text[-4:], _base64.decode(text[-4:]))


def b64read_exact(text: str, path: str = "$") -> tuple[bytes | _base64.Encoded, bool]:
    """:func:`b64decode_exact`, keeping standard base64 as it came (checked, not
    decoded: a media part holds it, see :class:`canisters._base64.Encoded`)."""
    if "-" in text or "_" in text or len(text) % 4:
        return b64decode_exact(text, path)
    try:
        data = _base64.check(text)
    except (binascii.Error, ValueError) as error:
        raise MalformedPayload(f"invalid base64: {error}", path) from None
    return data, _exact(text, data)


_DATA_URL = re.compile(r"data:([^;,]*)((?:;[^;,]*)*?);base64,(.*)", re.DOTALL)


def parse_data_url(url: str) -> tuple[str, bytes] | None:
    """Split a base64 ``data:`` URL into media type and bytes.

    Returns ``None`` when the URL is not a base64 data URL, or when
    :func:`data_url` would not rebuild it exactly (the caller keeps it as a URL).
    """
    if not url.startswith("data:"):
        return None
    # The head, up to the first comma, is "data:", a media type and ";base64,",
    # with no other parameter (data_url() writes none back).
    start = url.find(",") + 1
    mime = url[5 : start - 8]
    if url[start - 8 : start] != ";base64," or not mime or ";" in mime:
        return None
    try:
        # Kept as base64, not decoded: the part holds the URL itself.
        data = _base64.check(url, start)
    except (binascii.Error, ValueError):
        return None
    # data_url() rebuilds the head as matched: only the base64 may differ.
    if type(data) is bytes:
        if not _canonical(url[start:], data):
            return None
    else:
        size = len(url) - start
        if size % 4 or (size and not _exact(url[-4:], data)):
            return None
    return mime, data  # type: ignore[return-value]


def data_url(mime_type: str, data: bytes | _base64.Encoded) -> str:
    """Build a base64 ``data:`` URL (the one a part was read from, where it
    holds it and its media type is the same: no copy)."""
    head = f"data:{mime_type};base64,"
    if type(data) is _base64.Encoded:
        kept = data.url(head)
        if kept is not None:
            return kept
    return head + b64encode(data)


_MAGIC: tuple[tuple[bytes, int, str], ...] = (
    (b"\x89PNG\r\n\x1a\n", 0, "image/png"),
    (b"\xff\xd8\xff", 0, "image/jpeg"),
    (b"GIF87a", 0, "image/gif"),
    (b"GIF89a", 0, "image/gif"),
    (b"%PDF-", 0, "application/pdf"),
    (b"ID3", 0, "audio/mpeg"),
    (b"\xff\xfb", 0, "audio/mpeg"),
    (b"\xff\xf3", 0, "audio/mpeg"),
    (b"\xff\xf2", 0, "audio/mpeg"),
    (b"fLaC", 0, "audio/flac"),
    (b"OggS", 0, "audio/ogg"),
    (b"\x1aE\xdf\xa3", 0, "video/webm"),
    (b"PK\x03\x04", 0, "application/zip"),
)


def sniff_mime(data: bytes | _base64.Encoded) -> str | None:
    """Infer a media type from the first bytes (magic numbers), or ``None``."""
    if isinstance(data, _base64.Encoded):
        data = data.head(12)
    for magic, offset, mime in _MAGIC:
        if data[offset : offset + len(magic)] == magic:
            return mime
    if data[:4] == b"RIFF" and len(data) >= 12:
        return {
            b"WEBP": "image/webp",
            b"WAVE": "audio/wav",
            b"AVI ": "video/x-msvideo",
        }.get(data[8:12])
    if data[4:8] == b"ftyp":
        return "video/mp4"
    return None


_EXTRA_TYPES = {
    ".webp": "image/webp",
    ".mp3": "audio/mpeg",
    ".wav": "audio/wav",
    ".flac": "audio/flac",
    ".m4a": "audio/mp4",
    ".md": "text/markdown",
}


def mime_from_url(url: str) -> str | None:
    """Infer a media type from a URL: a ``data:`` URL's own type, else the path's
    extension; ``None`` when unknown."""
    if url.startswith("data:"):
        head = url[5:].split(",", 1)[0].split(";", 1)[0]
        return head or None
    path = url.split("?", 1)[0].split("#", 1)[0].lower()
    dot = path.rfind(".")
    if dot < 0 or "/" in path[dot:]:
        return None
    extension = path[dot:]
    return _EXTRA_TYPES.get(extension) or mimetypes.types_map.get(extension)


_DEFAULT_MIME = {
    "image": "image/png",
    "audio": "audio/wav",
    "video": "video/mp4",
    "file": "application/pdf",
}


def media_mime(part: Any, data: bytes | _base64.Encoded | None = None) -> str:
    """Best-effort media type of a media part: its own, the bytes', the URL's,
    else a default for its kind (``image/png``, ``application/pdf``, ...)."""
    if part.mime_type:
        return str(part.mime_type)
    if data is not None:
        sniffed = sniff_mime(data)
        if sniffed:
            return sniffed
    if part.url:
        guessed = mime_from_url(part.url)
        if guessed:
            return guessed
    return _DEFAULT_MIME.get(part.type, "application/octet-stream")


def inline_data(part: Any) -> bytes | _base64.Encoded | None:
    """A media part's inline data: its bytes, or the base64 it was read from
    when it kept it (:func:`b64encode` writes that back as it came)."""
    data = inline(part) if isinstance(part, Media) else part.data
    if data is None or isinstance(data, _base64.Encoded):
        return data
    return bytes(data)


def media_bytes(part: Any, options: Options) -> bytes | _base64.Encoded | None:
    """Return the bytes of a media part: inline data (the base64 it was read
    from, when it kept it: :func:`b64encode` writes it back as it came), a
    base64 data URL, or what ``options.resolver`` gives for its URL or content
    id; ``None`` if unavailable.
    """
    data = inline_data(part)
    if data is not None:
        return data
    url = part.url
    if url is not None and url.startswith("data:"):
        match = _DATA_URL.fullmatch(url)
        if match is not None:
            try:
                return base64.b64decode(match.group(3))
            except (binascii.Error, ValueError):
                return None
    source = part.content_id or url
    if source is not None and options.resolver is not None:
        return options.resolver(source)
    return None


class Labeler:
    """Numbers media parts with a ``hint`` for ``media_labels`` (one per render)."""

    __slots__ = ("count", "enabled")

    def __init__(self, options: Options) -> None:
        self.enabled = options.media_labels
        self.count = 0

    def label(self, part: Any) -> Text | None:
        """Return the label text to put before ``part``, or ``None``."""
        if not self.enabled or not getattr(part, "hint", None):
            return None
        self.count += 1
        return Text(f"Media {self.count}: {part.hint}")
