"""Image detail and media resolution: one concept, two spellings.

OpenAI Chat (``image_url.detail``) and OpenAI Responses (``input_image``'s
``detail``) say how finely an image is read as ``"low"``, ``"high"``,
``"original"`` or ``"auto"`` (the default, which says nothing). Gemini says it
per part as ``mediaResolution: {"level": "MEDIA_RESOLUTION_LOW"}``. The
neutral value is OpenAI's word; a level without an equivalent is not carried
(reported, see :mod:`.kept`). Anthropic and Ollama have no such setting.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

__all__ = ["DETAIL_DEFAULT", "detail_of", "detail_of_resolution", "resolution_of"]

DETAIL_DEFAULT = "auto"
"""The detail that says nothing: the model decides."""

_LEVELS = {
    "low": "MEDIA_RESOLUTION_LOW",
    "high": "MEDIA_RESOLUTION_HIGH",
}
_DETAILS = {level: detail for detail, level in _LEVELS.items()}
_OPENAI = frozenset({"auto", "low", "high", "original"})


def detail_of(value: Any) -> str | None:
    """The neutral detail of an OpenAI ``detail`` value (``None``: unknown)."""
    return value if isinstance(value, str) and value in _OPENAI else None


def resolution_of(detail: Any) -> dict[str, str] | None:
    """Gemini's ``mediaResolution`` for a detail (``None``: none says it)."""
    level = _LEVELS.get(detail) if isinstance(detail, str) else None
    return None if level is None else {"level": level}


def detail_of_resolution(value: Any) -> str | None:
    """The detail of a Gemini ``mediaResolution`` (``None``: no detail says
    it, such as ``MEDIA_RESOLUTION_MEDIUM``)."""
    if isinstance(value, Mapping) and set(value) == {"level"}:
        return _DETAILS.get(value["level"])
    return None
