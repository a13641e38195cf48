"""Which media a page may embed, and how (part of :mod:`canisters.html`).

Content is hostile: a part's ``mime_type`` is whatever the sender wrote. A
page embeds bytes only as a type on the list below, and images only when
their first bytes are those of a raster format: SVG (which can hold scripts)
and HTML are never embedded, whatever they claim to be.
"""

from __future__ import annotations

import base64
import binascii
import urllib.parse
from typing import Final

from ..protocols import Modality

EMBEDDABLE: Final[dict[Modality, frozenset[str]]] = {
    Modality.Image: frozenset(
        {
            "image/png",
            "image/jpeg",
            "image/gif",
            "image/webp",
            "image/avif",
            "image/bmp",
        }
    ),
    Modality.Audio: frozenset(
        {
            "audio/mpeg",
            "audio/wav",
            "audio/ogg",
            "audio/webm",
            "audio/flac",
            "audio/mp4",
            "audio/aac",
        }
    ),
    Modality.Video: frozenset({"video/mp4", "video/webm", "video/ogg"}),
}
"""The media types a page embeds, per modality (documents are never embedded)."""

_ALIASES: Final = {
    "image/jpg": "image/jpeg",
    "image/pjpeg": "image/jpeg",
    "audio/mp3": "audio/mpeg",
    "audio/x-wav": "audio/wav",
    "audio/wave": "audio/wav",
    "audio/vnd.wave": "audio/wav",
    "audio/x-flac": "audio/flac",
    "audio/x-m4a": "audio/mp4",
    "audio/m4a": "audio/mp4",
}


def normal_type(mime_type: str | None) -> str | None:
    """Return ``mime_type`` lower-cased, without parameters, aliases resolved."""
    if not mime_type:
        return None
    bare = mime_type.split(";", 1)[0].strip().lower()
    return _ALIASES.get(bare, bare) or None


def sniff(data: bytes, modality: Modality) -> str | None:
    """Return the media type the first bytes of ``data`` show, if a known one."""
    head = data[:32]
    if head.startswith(b"\x89PNG\r\n\x1a\n"):
        return "image/png"
    if head.startswith(b"\xff\xd8\xff"):
        return "image/jpeg"
    if head.startswith((b"GIF87a", b"GIF89a")):
        return "image/gif"
    if head.startswith(b"RIFF") and head[8:12] == b"WEBP":
        return "image/webp"
    if head.startswith(b"RIFF") and head[8:12] == b"WAVE":
        return "audio/wav"
    if head[4:12] in (b"ftypavif", b"ftypavis"):
        return "image/avif"
    if head.startswith(b"BM") and modality is Modality.Image:
        return "image/bmp"
    if head.startswith(b"fLaC"):
        return "audio/flac"
    if head.startswith(b"ID3") or (
        len(head) > 1 and head[0] == 0xFF and head[1] & 0xE0 == 0xE0
    ):
        return "audio/mpeg"
    if head.startswith(b"OggS"):
        return "video/ogg" if modality is Modality.Video else "audio/ogg"
    if head.startswith(b"\x1aE\xdf\xa3"):
        return "video/webm" if modality is Modality.Video else "audio/webm"
    if head[4:8] == b"ftyp":
        return "video/mp4" if modality is Modality.Video else "audio/mp4"
    return None


def looks_like_markup(data: bytes) -> bool:
    """Tell whether ``data`` starts like SVG, HTML or XML (never embedded)."""
    start = data[:256].lstrip(b"\xef\xbb\xbf \t\r\n\x0c")
    return start.startswith(b"<")


def embeddable_type(
    data: bytes, declared: str | None, modality: Modality
) -> tuple[str | None, str]:
    """Return the type to embed ``data`` as (``None``: do not embed) and why not.

    Images must sniff as a raster format; audio and video take their sniffed
    type, else the declared one; either way the type must be on
    :data:`EMBEDDABLE` for the part's modality, and markup never is.
    """
    allowed = EMBEDDABLE.get(modality)
    if allowed is None:
        return None, "documents are shown as a card, never embedded"
    if looks_like_markup(data):
        return None, "markup (SVG, HTML, XML) is never embedded"
    found = sniff(data, modality)
    if modality is Modality.Image:
        if found is None or found not in allowed:
            return None, "not a raster image format a page embeds"
        return found, ""
    chosen = found if found in allowed else normal_type(declared)
    if chosen is None or chosen not in allowed:
        return None, f"{declared or 'an unknown type'} is not a type a page embeds"
    return chosen, ""


def decode_data_url(url: str) -> tuple[bytes, str | None] | None:
    """Return the bytes and media type of a ``data:`` URL (``None``: malformed)."""
    header, comma, payload = url[5:].partition(",")
    if not comma:
        return None
    bits = header.split(";")
    declared = bits[0] or None
    try:
        if "base64" in (bit.strip().lower() for bit in bits[1:]):
            data = base64.b64decode(urllib.parse.unquote(payload), validate=False)
        else:
            data = urllib.parse.unquote_to_bytes(payload)
    except (binascii.Error, ValueError):
        return None
    return data, declared


def data_url(data: bytes, mime_type: str) -> str:
    """Return ``data`` as a ``data:`` URL of ``mime_type`` (an embeddable type)."""
    return f"data:{mime_type};base64,{base64.b64encode(data).decode('ascii')}"


def link_target(url: str) -> str | None:
    """Return ``url`` when a page may link to it (``http`` or ``https``)."""
    try:
        scheme = urllib.parse.urlsplit(url).scheme.lower()
    except ValueError:
        return None
    return url if scheme in ("http", "https") else None
