"""OpenAI Responses: what OpenAI adds to replies, as typed content.

- an ``output_text`` part's ``annotations`` (``url_citation``,
  ``file_citation``, ``container_file_citation``, ``file_path``) make a
  :class:`~canisters.CitedText`;
- a ``web_search_call``, ``file_search_call``, ``code_interpreter_call``,
  ``image_generation_call`` or ``mcp_call`` item makes a
  :class:`~canisters.ProviderToolCall` and, where the item holds what the tool
  gave (results, outputs, an image, an MCP output or error), a
  :class:`~canisters.ProviderToolResult`;
- a ``compaction`` item makes a :class:`~canisters.Compaction`.

The item stays whole on its canister and goes back to OpenAI as it came: the
parts are what it says, read from it (their ``opaque`` names the item). The
annotations stay on the text part's kept keys. What goes to another provider
is decided by :mod:`canisters.providers._rules.provided`.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any, Final

from ..._frozen import thawed as _thawed
from ...exceptions import ModelError
from ...protocols import Content
from ...provided import (
    Citation,
    CitedText,
    Compaction,
    DocumentSource,
    ProviderToolCall,
    ProviderToolResult,
    SearchHit,
    Source,
    UrlSource,
)
from .._rules.provided import web_notes, writes_web_citations

if TYPE_CHECKING:
    from .._options import Options

__all__ = [
    "ITEMS",
    "annotated",
    "annotations_of",
    "cited",
    "item_parts",
    "native",
    "native_for",
]

NAME: Final = "openai-responses"
ITEMS: Final = frozenset(
    {
        "web_search_call",
        "file_search_call",
        "code_interpreter_call",
        "image_generation_call",
        "mcp_call",
        "compaction",
    }
)
"""The item types read as typed parts."""


def _text(value: Any) -> str | None:
    return value if isinstance(value, str) else None


def _int(value: Any) -> int | None:
    return value if type(value) is int and value >= 0 else None


def _source(note: Mapping[str, Any]) -> Source:
    if note.get("type") == "url_citation" and isinstance(note.get("url"), str):
        return UrlSource(note["url"], _text(note.get("title")))
    return DocumentSource(_text(note.get("file_id")), _text(note.get("filename")))


def cited(text: Any, annotations: Any, name: str = NAME) -> CitedText | None:
    """``text`` (a text part read from an ``output_text`` part) with the
    citations of its ``annotations`` (bound to the format ``name``); ``None``
    when there are none to read."""
    if not isinstance(annotations, list) or not annotations:
        return None
    citations = []
    for note in annotations:
        if not isinstance(note, Mapping) or not isinstance(note.get("type"), str):
            return None
        start, end = _int(note.get("start_index")), _int(note.get("end_index"))
        if start is None or end is None or end < start:
            start = end = None
        try:
            citations.append(
                Citation(_source(note), None, start, end, name, dict(note))
            )
        except ModelError:
            return None  # an annotation of another shape: kept on the part only
    return CitedText(
        text.text, text.mime_type, id=text.id, extras=text.extras, citations=citations
    )


def item_parts(item: Mapping[str, Any], name: str = NAME) -> tuple[Content, ...]:
    """The parts an item of :data:`ITEMS` says (bound to the format
    ``name``); ``()`` for one of another shape (kept whole all the same)."""
    try:
        return _parts(item, name)
    except ModelError:
        return ()


def _parts(item: Mapping[str, Any], provider: str) -> tuple[Content, ...]:
    kind = item["type"]
    item_id = _text(item.get("id"))
    marker = {"item": kind, "id": item_id}
    if kind == "compaction":
        summary = _text(item.get("summary")) or ""
        return (Compaction(summary, provider, marker, id=item_id),)
    tool = kind[: -len("_call")]
    status = _text(item.get("status"))
    arguments: dict[str, Any] = {}
    fields: dict[str, Any] = {}
    server = None
    if kind == "web_search_call":
        action = item.get("action")
        if isinstance(action, Mapping):
            arguments = dict(action)
            sources = action.get("sources")
            if isinstance(sources, list):
                fields["hits"] = tuple(
                    SearchHit(_text(s.get("url")), _text(s.get("title")))
                    for s in sources
                    if isinstance(s, Mapping)
                )
    elif kind == "file_search_call":
        if isinstance(item.get("queries"), list):
            arguments = {"queries": item["queries"]}
        results = item.get("results")
        if isinstance(results, list):
            fields["hits"] = tuple(
                SearchHit(None, _text(r.get("filename")), None, _text(r.get("text")))
                for r in results
                if isinstance(r, Mapping)
            )
    elif kind == "code_interpreter_call":
        code = _text(item.get("code"))
        if code is not None:
            arguments = {"code": code}
            fields["code"] = code
        outputs = item.get("outputs")
        if isinstance(outputs, list):
            logs = [
                o["logs"]
                for o in outputs
                if isinstance(o, Mapping) and isinstance(o.get("logs"), str)
            ]
            if logs:
                fields["stdout"] = "".join(logs)
            images = [
                o["url"]
                for o in outputs
                if isinstance(o, Mapping) and isinstance(o.get("url"), str)
            ]
            if images:
                fields["output"] = images
    elif kind == "image_generation_call":
        if isinstance(item.get("result"), str):
            fields["output"] = item["result"]  # the image, in base64
    else:  # mcp_call
        tool = _text(item.get("name")) or tool
        server = _text(item.get("server_label"))
        raw = item.get("arguments")
        arguments = {"arguments": raw} if isinstance(raw, str) else {}
        if item.get("error") is not None:
            fields["error"] = str(item["error"])
        if isinstance(item.get("output"), str):
            fields["output"] = item["output"]
    call = ProviderToolCall(tool, arguments, item_id, provider, server, status, marker)
    if not fields:
        return (call,)
    result = ProviderToolResult(
        tool, item_id, provider, status, opaque=marker, **fields
    )
    return (call, result)


def _own(citation: Citation, name: str = NAME) -> bool:
    return citation.provider == name and "type" in citation.opaque


def native_for(name: str) -> Callable[[Content], bool]:
    """Which parts the format ``name`` writes as its own (see :func:`native`)."""
    # The SDK requires a title.
    cites = writes_web_citations(lambda citation: _own(citation, name), titled=True)

    def native(part: Content) -> bool:
        if isinstance(part, CitedText):
            return cites(part)
        held: Any = part
        return held.provider == name and "item" in held.opaque

    return native


native = native_for(NAME)
"""Whether ``part`` goes to OpenAI as OpenAI's own: the parts read from an
item (which goes back whole), and a text whose citations came from OpenAI's
annotations (which go back on the part) or are web pages with a span and a
title (written as ``url_citation`` annotations)."""


def annotated(part: CitedText, kept: Any) -> bool:
    """Whether the annotations a part keeps (``kept``) hold every citation of
    ``part``: OpenAI's own, going back as they came."""
    held = kept if isinstance(kept, (list, tuple)) else ()
    return all(citation.opaque in held for citation in part.citations)


def annotations_of(
    part: CitedText, kept: Any, options: Options, where: str, name: str = NAME
) -> list[Any]:
    """The ``annotations`` of an ``output_text`` part for ``part`` (one
    :func:`native` accepts): those it keeps (``kept``), then its citations
    that no kept annotation holds, another provider's web pages as
    ``url_citation`` (their quoted passages, which OpenAI's annotation has
    no place for, reported)."""
    held = list(kept) if isinstance(kept, (list, tuple)) else []

    def own(citation: Citation) -> Any:
        return None if citation.opaque in held else _thawed(citation.opaque)

    def spell(page: UrlSource, start: int, end: int, quoted: str | None) -> Any:
        return {
            "type": "url_citation",
            "url": page.url,
            "title": page.title,
            "start_index": start,
            "end_index": end,
        }

    return held + web_notes(
        part,
        lambda citation: _own(citation, name),
        own,
        spell,
        quotes=False,
        options=options,
        provider=name,
        where=where,
    )
