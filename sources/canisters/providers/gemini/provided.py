"""Gemini: the code it ran and the sources it grounded an answer in, as typed
content.

An ``executableCode`` part makes a :class:`~canisters.ProviderToolCall`
(``code_execution``, with its language and code) and a
``codeExecutionResult`` part a :class:`~canisters.ProviderToolResult` (its
outcome as the status, its output as standard output). The part stays whole in
the part's extras and goes back to Gemini as it came; what goes to another
provider is decided by :mod:`canisters.providers._rules.provided`.

A candidate's ``groundingMetadata`` (Google Search, File Search, Maps and URL
grounding) makes each text part its ``groundingSupports`` point at a
:class:`~canisters.CitedText`: a :class:`~canisters.Citation` per chunk a
support names, its source the chunk (a web page or a map place as a
:class:`~canisters.UrlSource`; a retrieved passage as a
:class:`~canisters.DocumentSource`, the passage as the quoted text), its span
the support's segment in characters of the part's text (Gemini counts bytes of
its UTF-8). Its ``webSearchQueries`` make a ``google_search``
:class:`~canisters.ProviderToolCall` run by Gemini, first in the reply, and its
:class:`~canisters.ProviderToolResult`, the web chunks as its hits. The metadata
itself stays whole in the reply's envelope and goes back to Gemini as it came,
so these parts write nothing to Gemini, and their opaque fields only say where
in the metadata each came from.

A candidate's ``citationMetadata`` (the sources the model's recitation checker
attributes a passage to: ``citationSources`` in the Gemini API, ``citations``
in Vertex AI and the google-genai SDK) adds to the text part each citation's
segment starts in a :class:`~canisters.Citation` of a
:class:`~canisters.UrlSource` (its ``uri`` and ``title``), its span the
segment, in characters of that part (Gemini counts bytes of the UTF-8 of the
candidate's answer text, its text parts one after the other); the metadata
stays in the envelope as grounding does.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

import attrs

from ..._frozen import FrozenDict
from ...exceptions import ModelError
from ...protocols import Content, Role
from ...provided import (
    Citation,
    CitedText,
    DocumentSource,
    ProviderToolCall,
    ProviderToolResult,
    SearchHit,
    Source,
    UrlSource,
)

__all__ = [
    "KINDS",
    "attributed",
    "cite",
    "grounded",
    "native",
    "part_of",
    "render",
    "searched",
]

NAME: Final = "gemini"
KINDS: Final = ("executableCode", "codeExecutionResult")
"""The part keys read as typed parts (camelCase or the SDK's snake_case)."""
_SNAKE = {
    "executable_code": "executableCode",
    "code_execution_result": "codeExecutionResult",
}


def _text(value: Any) -> str | None:
    return value if isinstance(value, str) else None


def part_of(part: Mapping[str, Any]) -> Content | None:
    """The typed part of a Gemini part holding executed code or its result;
    ``None`` for any other part, or one of another shape."""
    for key in part:
        kind = _SNAKE.get(key, key)
        if kind not in KINDS:
            continue
        value = part[key]
        if not isinstance(value, Mapping):
            return None
        extras = FrozenDict({NAME: {"raw": dict(part)}})
        marker = {"part": kind}
        try:
            if kind == "executableCode":
                arguments = {
                    k: v for k, v in value.items() if k in ("language", "code")
                }
                return ProviderToolCall(
                    "code_execution",
                    arguments,
                    None,
                    NAME,
                    opaque=marker,
                    extras=extras,
                )
            return ProviderToolResult(
                "code_execution",
                None,
                NAME,
                _text(value.get("outcome")),
                stdout=_text(value.get("output")),
                opaque=marker,
                extras=extras,
            )
        except ModelError:
            return None
    return None


def native(part: Content) -> bool:
    """Whether ``part`` goes to Gemini as the part it was read from (a cited
    text as its text: its citations are the envelope's metadata)."""
    held: Any = part
    if isinstance(part, CitedText):
        return all(
            citation.provider == NAME
            and ("grounding" in citation.opaque or "attribution" in citation.opaque)
            for citation in part.citations
        )
    return (
        isinstance(part, ProviderToolCall | ProviderToolResult)
        and held.provider == NAME
        and ("part" in held.opaque or "grounding" in held.opaque)
    )


def _field(value: Mapping[str, Any], camel: str, snake: str) -> Any:
    found = value.get(camel)
    return value.get(snake) if found is None else found


def _offset(value: Any) -> int | None:
    return value if type(value) is int and value >= 0 else None


def _source(chunk: Any) -> tuple[Source, str | None] | None:
    """The source of a grounding chunk and the passage it quotes; ``None``
    for a chunk of another shape."""
    if not isinstance(chunk, Mapping):
        return None
    for key in ("web", "maps"):
        value = chunk.get(key)
        if isinstance(value, Mapping) and isinstance(value.get("uri"), str):
            return UrlSource(value["uri"], _text(value.get("title"))), None
    value = _field(chunk, "retrievedContext", "retrieved_context")
    if isinstance(value, Mapping):
        document = next(
            (
                value[key]
                for key in ("uri", "fileSearchStore", "ragCorpus", "title")
                if isinstance(value.get(key), str)
            ),
            None,
        )
        title = _text(value.get("title"))
        return DocumentSource(document, title), _text(value.get("text"))
    return None


def _characters(encoded: bytes, offset: int) -> int:
    return len(encoded[:offset].decode("utf-8", "ignore"))


def grounded(canisters: list[Any], metadata: Any, raw_parts: Any) -> list[Any]:
    """``canisters`` (a reply's, read from ``raw_parts``) with what a
    candidate's grounding ``metadata`` says: the searches Google ran (see
    :func:`searched`), and each text part its supports point at made a cited
    text (see :func:`cite`)."""
    if not isinstance(metadata, Mapping) or not isinstance(raw_parts, list):
        return canisters
    return searched(cite(canisters, metadata, raw_parts), metadata)


def searched(canisters: list[Any], metadata: Mapping[str, Any]) -> list[Any]:
    """``canisters`` with, first in the reply's first assistant canister, the
    Google Search the metadata's ``webSearchQueries`` name as a
    ``google_search`` call run by Gemini and its result, the web chunks as its
    hits."""
    queries = _field(metadata, "webSearchQueries", "web_search_queries")
    if not isinstance(queries, list) or not all(isinstance(q, str) for q in queries):
        return canisters
    chunks = _field(metadata, "groundingChunks", "grounding_chunks")
    hits = [
        SearchHit(web["uri"], _text(web.get("title")))
        for chunk in (chunks if isinstance(chunks, list) else ())
        if isinstance(chunk, Mapping)
        for web in [chunk.get("web")]
        if isinstance(web, Mapping) and isinstance(web.get("uri"), str)
    ]
    for index, canister in enumerate(canisters):
        if canister.role is Role.Assistant:
            call = ProviderToolCall(
                "google_search",
                {"queries": list(queries)},
                None,
                NAME,
                opaque={"grounding": "webSearchQueries"},
            )
            result = ProviderToolResult(
                "google_search",
                None,
                NAME,
                hits=hits,
                opaque={"grounding": "groundingChunks"},
            )
            out = list(canisters)
            content = (call, result, *canister.content)
            out[index] = attrs.evolve(canister, content=content)
            return out
    return canisters


def cite(
    canisters: list[Any], metadata: Mapping[str, Any], raw_parts: list[Any]
) -> list[Any]:
    """``canisters`` with each text part that ``metadata``'s supports point
    at made a cited text; as they are where the metadata holds no support of
    a known shape."""
    chunks = _field(metadata, "groundingChunks", "grounding_chunks")
    supports = _field(metadata, "groundingSupports", "grounding_supports")
    if not isinstance(chunks, list) or not isinstance(supports, list):
        return canisters
    sources = [_source(chunk) for chunk in chunks]
    cited: dict[int, list[tuple[int, int, Mapping[str, Any]]]] = {}
    for number, support in enumerate(supports):
        if not isinstance(support, Mapping):
            continue
        segment = support.get("segment")
        indices = _field(support, "groundingChunkIndices", "grounding_chunk_indices")
        if not isinstance(segment, Mapping) or not isinstance(indices, list):
            continue
        part = _offset(_field(segment, "partIndex", "part_index") or 0)
        if part is None or part >= len(raw_parts):
            continue
        for chunk in indices:
            if type(chunk) is int and 0 <= chunk < len(sources) and sources[chunk]:
                cited.setdefault(part, []).append((number, chunk, segment))
    if not cited:
        return canisters
    taken: set[tuple[int, int]] = set()
    out = list(canisters)
    for part_index, found in cited.items():
        raw = raw_parts[part_index]
        text = raw.get("text") if isinstance(raw, Mapping) else None
        if not isinstance(text, str) or raw.get("thought"):
            continue
        place = _text_part(out, text, taken)
        if place is None:
            continue
        taken.add(place)
        encoded = text.encode("utf-8")
        citations = []
        for number, chunk, segment in found:
            source, passage = sources[chunk]  # type: ignore[misc]
            start = _offset(_field(segment, "startIndex", "start_index") or 0)
            end = _offset(_field(segment, "endIndex", "end_index"))
            if start is not None:
                start = _characters(encoded, start)
            if end is not None:
                end = _characters(encoded, end)
                if start is not None and end < start:
                    start = end = None
            citations.append(
                Citation(
                    source,
                    passage,
                    start,
                    end,
                    NAME,
                    {"grounding": {"support": number, "chunk": chunk}},
                )
            )
        _add_citations(out, place, citations)
    return out


def attributed(canisters: list[Any], metadata: Any, raw_parts: Any) -> list[Any]:
    """``canisters`` (a reply's, read from ``raw_parts``) with each citation
    of a candidate's ``citationMetadata`` added to the text part its segment
    starts in (see the module's description)."""
    if not isinstance(metadata, Mapping) or not isinstance(raw_parts, list):
        return canisters
    key = "citationSources"
    entries = _field(metadata, key, "citation_sources")
    if entries is None:
        key, entries = "citations", metadata.get("citations")
    if not isinstance(entries, list):
        return canisters
    texts = []  # (its bytes, where they start in the answer's bytes, its place)
    taken: set[tuple[int, int]] = set()
    offset = 0
    for raw in raw_parts:
        text = raw.get("text") if isinstance(raw, Mapping) else None
        if not isinstance(text, str) or raw.get("thought"):
            continue
        encoded = text.encode("utf-8")
        place = _text_part(canisters, text, taken)
        if place is not None:
            taken.add(place)
            texts.append((encoded, offset, place))
        offset += len(encoded)
    found: dict[tuple[int, int], list[Citation]] = {}
    for number, entry in enumerate(entries):
        uri = entry.get("uri") if isinstance(entry, Mapping) else None
        if not isinstance(uri, str) or not uri:
            continue  # a citation naming no page stays in the envelope alone
        start = _offset(_field(entry, "startIndex", "start_index") or 0)
        end = _offset(_field(entry, "endIndex", "end_index"))
        if start is None:
            continue
        for encoded, first, place in texts:
            if first <= start < first + len(encoded) or (
                start == first and not encoded
            ):
                stop = None if end is None else min(end, first + len(encoded))
                span_end = None
                if stop is not None and stop >= start:
                    span_end = _characters(encoded, stop - first)
                source = UrlSource(uri, _text(entry.get("title")) or None)
                marker = {"attribution": {"key": key, "citation": number}}
                citation = Citation(
                    source,
                    None,
                    _characters(encoded, start - first),
                    span_end,
                    NAME,
                    marker,
                )
                found.setdefault(place, []).append(citation)
                break
    if not found:
        return canisters
    out = list(canisters)
    for place, citations in found.items():
        _add_citations(out, place, citations)
    return out


def _add_citations(
    out: list[Any], place: tuple[int, int], citations: list[Citation]
) -> None:
    """Make the text part at ``place`` in ``out`` a cited text with
    ``citations`` (after those it has)."""
    canister_index, number = place
    canister = out[canister_index]
    parts = list(canister.content)
    plain = parts[number]
    parts[number] = CitedText(
        plain.text,
        plain.mime_type,
        id=plain.id,
        extras=plain.extras,
        citations=(*getattr(plain, "citations", ()), *citations),
    )
    out[canister_index] = attrs.evolve(canister, content=tuple(parts))


def _text_part(
    canisters: list[Any], text: str, taken: set[tuple[int, int]]
) -> tuple[int, int] | None:
    """Where the first text part of ``canisters`` reading ``text`` stands, of
    those not ``taken``."""
    for index, canister in enumerate(canisters):
        for number, part in enumerate(getattr(canister, "content", ()) or ()):
            if (
                part.type in ("text", "cited_text")
                and part.text == text
                and (index, number) not in taken
            ):
                return index, number
    return None


def render(part: Content) -> dict[str, Any] | None:
    """The Gemini part of a part :func:`native` accepts: the part it was read
    from, or (its extras gone) the part its typed fields say; ``None`` for a
    search read from grounding metadata (the envelope holds it)."""
    held: Any = part
    if "grounding" in held.opaque:
        return None
    raw = held.extras.get(NAME, {}).get("raw")
    if isinstance(raw, Mapping):
        return dict(raw)
    if isinstance(part, ProviderToolCall):
        return {"executableCode": {k: v for k, v in part.input.items()}}
    result: dict[str, Any] = {}
    if held.status is not None:
        result["outcome"] = held.status
    if held.stdout is not None:
        result["output"] = held.stdout
    return {"codeExecutionResult": result}
