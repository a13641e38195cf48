"""Documents where a format has no document construct: user content, titled.

Anthropic has a ``document`` block with a ``title``; OpenAI Chat, OpenAI
Responses, Gemini and Ollama do not. There a :class:`~canisters.Document`
goes as user content, its title first as a text ``"Document: {title}"`` (so the
model still sees what the material is called), reported as downgraded.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import attrs

from ...content import Text

if TYPE_CHECKING:
    from .._common import Options

__all__ = ["TITLE", "as_user_content"]

TITLE = "Document: {title}"
"""The text a document's title becomes."""


def as_user_content(document: Any, options: Options, provider: str, where: str) -> Any:
    """``document`` with its title as a leading text part (itself when it has
    no title), noted as downgraded at ``where``."""
    title = document.title
    detail = "document sent as user content"
    if title:
        detail += ", its title as a leading text"
    options.note("downgraded", provider, where, detail)
    if not title:
        return document
    heading = Text(TITLE.format(title=title))
    return attrs.evolve(document, content=(heading, *document.content))
