"""OpenAI Chat: the citations of an assistant message, as typed content.

An assistant message's ``annotations`` of type ``url_citation`` (OpenAI's
web-search models; OpenRouter's web search, which adds the quoted passage as
``content``) make the text part they point into a
:class:`~canisters.CitedText`: a :class:`~canisters.Citation` per
annotation, its source a :class:`~canisters.UrlSource` (``url``, ``title``),
its span ``start_index`` / ``end_index`` (characters of the message's
content; counted from the start of the part, when the content is a list of
text parts), its quoted text ``content``. A span that lies in no text part of
the content is not read (the citation goes to the message's one text part
without a span, and where the content has several, it is not read). The
annotations stay whole among the message's kept keys and go back as they
came: the citations are what they say, each holding its annotation in
``opaque``. An annotation of another type (OpenRouter's ``file``) is kept
only.

Another provider's cited text whose citations are web pages with a span goes
to these formats as ``url_citation`` annotations of its message, the span
counted from the start of the message's content, its quoted passage as
``content`` where the format has it (OpenRouter); every other cited text is
settled by :mod:`canisters.providers._rules.provided`.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any, Final

from ..._frozen import thawed as _thawed
from ...content import Text
from ...exceptions import ModelError
from ...protocols import Content
from ...provided import Citation, CitedText, UrlSource
from .._rules.provided import web_notes, writes_web_citations

if TYPE_CHECKING:
    from .._options import Options
    from .wire import Wire

__all__ = ["NOTE", "annotations_of", "cite", "native_for"]

NOTE: Final = "url_citation"
"""The annotation type read as a citation."""


def _text(value: Any) -> str | None:
    return value if isinstance(value, str) else None


def _int(value: Any) -> int | None:
    return value if type(value) is int and value >= 0 else None


def _citation(note: Any, name: str) -> Citation | None:
    """The citation of a ``url_citation`` annotation; ``None`` for an
    annotation of another type or shape (kept only)."""
    if not isinstance(note, Mapping) or note.get("type") != NOTE:
        return None
    inner = note.get(NOTE)
    if not isinstance(inner, Mapping):
        return None
    url = inner.get("url")
    if not isinstance(url, str) or not url:
        return None
    start, end = _int(inner.get("start_index")), _int(inner.get("end_index"))
    if start is None or end is None or end < start:
        start = end = None
    try:
        return Citation(
            UrlSource(url, _text(inner.get("title"))),
            _text(inner.get("content")),
            start,
            end,
            name,
            dict(note),
        )
    except ModelError:
        return None


def _plain(part: Content, name: str) -> bool:
    """Whether ``part`` is a text part of the content (not a refusal, not an
    element kept whole)."""
    if type(part) is not Text:
        return False
    held = part.extras.get(name) if part.extras else None
    return not held or not ("refusal" in held or "raw" in held)


def cite(parts: list[Content], notes: Any, name: str) -> None:
    """Make the text parts of a message's content (``parts``) that its
    ``url_citation`` annotations (``notes``) point into cited texts, in
    place; ``name`` is the format read."""
    if type(notes) is not list or not notes:
        return
    texts: list[tuple[int, int, int]] = []  # each text part: index, start, end
    offset = 0
    for number, part in enumerate(parts):
        if _plain(part, name):
            size = len(part.text)  # type: ignore[attr-defined]
            texts.append((number, offset, offset + size))
            offset += size
    if not texts:
        return
    cited: dict[int, list[Citation]] = {}
    for note in notes:
        citation = _citation(note, name)
        if citation is None:
            continue
        home = None
        start, end = citation.start, citation.end
        if start is not None and end is not None:
            for number, begin, finish in texts:
                if begin <= start and end <= finish:
                    home = number
                    citation = _span(citation, start - begin, end - begin)
                    break
        if home is None:
            if len(texts) != 1:
                continue  # which part it cites is not said: kept only
            home = texts[0][0]
            citation = _span(citation, None, None)
        cited.setdefault(home, []).append(citation)
    for number, found in cited.items():
        text: Any = parts[number]
        parts[number] = CitedText(
            text.text, text.mime_type, id=text.id, extras=text.extras, citations=found
        )


def _span(citation: Citation, start: int | None, end: int | None) -> Citation:
    if (start, end) == (citation.start, citation.end):
        return citation
    return Citation(
        citation.source,
        citation.cited_text,
        start,
        end,
        citation.provider,
        citation.opaque,
    )


def _own(citation: Citation, name: str) -> bool:
    return citation.provider == name and citation.opaque.get("type") == NOTE


def native_for(name: str) -> Callable[[Content], bool]:
    """Which provided parts the format ``name`` writes as its own: a cited
    text whose citations are its own annotations or web pages with a span."""
    return writes_web_citations(lambda citation: _own(citation, name))


def annotations_of(
    part: CitedText,
    offset: int,
    wire: Wire,
    kept: Any,
    options: Options,
    where: str,
) -> list[dict[str, Any]]:
    """The annotations of ``part``'s citations (a part :func:`native_for`
    accepts), its text at ``offset`` in the message's content; those of its
    own annotations the message keeps (``kept``) are left out, written there
    already."""
    name = wire.name

    def own(citation: Citation) -> dict[str, Any] | None:
        if isinstance(kept, (list, tuple)) and citation.opaque in kept:
            return None
        note: dict[str, Any] = _thawed(citation.opaque)
        inner = note.get(NOTE)
        start, end = citation.start, citation.end
        if start is not None and end is not None and isinstance(inner, dict):
            inner["start_index"], inner["end_index"] = offset + start, offset + end
        return note

    def spell(
        page: UrlSource, start: int, end: int, quoted: str | None
    ) -> dict[str, Any]:
        spelled: dict[str, Any] = {"url": page.url}
        if page.title is not None:
            spelled["title"] = page.title
        spelled["start_index"], spelled["end_index"] = offset + start, offset + end
        if quoted is not None:
            spelled["content"] = quoted
        return {"type": NOTE, NOTE: spelled}

    return web_notes(
        part,
        lambda citation: _own(citation, name),
        own,
        spell,
        quotes=wire.quotes,
        options=options,
        provider=name,
        where=where,
    )
