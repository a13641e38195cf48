"""Records of :mod:`canisters.provided`: the serialization hooks of citations,
provider-run tools and compaction.

A record writes only the fields that are set, so a part reads back equal. The
content tags are new in document version 2's content vocabulary: documents
written before hold none of them and read unchanged. Internal: registered by
:mod:`canisters.serialization`.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from ._frozen import EMPTY
from .exceptions import ModelError, SerializationError
from .provided import (
    Citation,
    CitedText,
    Compaction,
    DocumentSource,
    ProviderToolCall,
    ProviderToolResult,
    SearchHit,
    SearchResultSource,
    Source,
    UrlSource,
)

Record = dict[str, Any]


def _put(record: Record, **values: Any) -> Record:
    """Add the values that are set (not ``None``, not empty)."""
    for key, value in values.items():
        if value is None or (isinstance(value, (Mapping, tuple)) and not value):
            continue
        record[key] = value
    return record


def _plain(value: Any) -> Any:
    """A frozen JSON value as plain dicts and lists."""
    if isinstance(value, Mapping):
        return {key: _plain(item) for key, item in value.items()}
    if isinstance(value, tuple):
        return [_plain(item) for item in value]
    return value


def _object(record: Mapping[str, Any], key: str) -> Mapping[str, Any]:
    value = record.get(key)
    if value is None:
        return EMPTY
    if not isinstance(value, Mapping):
        raise SerializationError(
            f"expected an object, got {type(value).__name__}", f"$.{key}"
        )
    return value


def _list(record: Mapping[str, Any], key: str) -> list[Any]:
    value = record.get(key)
    if value is None:
        return []
    if not isinstance(value, list):
        raise SerializationError(
            f"expected a list, got {type(value).__name__}", f"$.{key}"
        )
    return value


def _each(
    record: Mapping[str, Any], key: str, read: Callable[[Mapping[str, Any]], Any]
) -> tuple[Any, ...]:
    items = []
    for index, item in enumerate(_list(record, key)):
        try:
            if not isinstance(item, Mapping):
                raise SerializationError(
                    f"expected an object, got {type(item).__name__}", "$"
                )
            items.append(read(item))
        except SerializationError as error:
            raise error.within(f"[{index}]").within(key) from error.__cause__
        except ModelError as error:
            field = f"$.{error.field}" if error.field else "$"
            located = SerializationError(str(error), field)
            raise located.within(f"[{index}]").within(key) from error
    return tuple(items)


# --------------------------------------------------------------------------- #
# Citations


def source_out(source: Source) -> Record:
    """The record of a citation's source, tagged by ``"kind"``."""
    if isinstance(source, UrlSource):
        return _put({"kind": "url", "url": source.url}, title=source.title)
    if isinstance(source, DocumentSource):
        return _put(
            {"kind": "document"},
            document=source.document,
            title=source.title,
            unit=source.unit,
            start=source.start,
            end=source.end,
        )
    return _put(
        {"kind": "search_result", "source": source.source},
        title=source.title,
        index=source.index,
        start=source.start,
        end=source.end,
    )


def source_in(record: Mapping[str, Any]) -> Source:
    """A citation's source from its record."""
    kind = record.get("kind")
    if kind == "url":
        return UrlSource(record["url"], record.get("title"))
    if kind == "document":
        return DocumentSource(
            record.get("document"),
            record.get("title"),
            record.get("unit"),
            record.get("start"),
            record.get("end"),
        )
    if kind == "search_result":
        return SearchResultSource(
            record["source"],
            record.get("title"),
            record.get("index"),
            record.get("start"),
            record.get("end"),
        )
    raise SerializationError(
        "unknown citation source kind; expected url, document or search_result",
        "$.kind",
    )


def citation_out(citation: Citation) -> Record:
    """The record of one citation."""
    return _put(
        {"source": source_out(citation.source)},
        cited_text=citation.cited_text,
        start=citation.start,
        end=citation.end,
        provider=citation.provider,
        opaque=_plain(citation.opaque),
    )


def citation_in(record: Mapping[str, Any]) -> Citation:
    """One citation from its record."""
    try:
        source = source_in(_object(record, "source"))
    except SerializationError as error:
        raise error.within("source") from error.__cause__
    return Citation(
        source,
        record.get("cited_text"),
        record.get("start"),
        record.get("end"),
        record.get("provider"),
        _object(record, "opaque"),
    )


def _cited_text_out(part: CitedText) -> Record:
    """The record of a :class:`CitedText`."""
    record: Record = {"type": "cited_text", "text": part.text}
    if part.mime_type != "text/plain":
        record["mime_type"] = part.mime_type
    return _put(
        record,
        id=part.id,
        citations=[citation_out(citation) for citation in part.citations],
        extras=_plain(part.extras),
    )


def cited_text_in(record: Mapping[str, Any]) -> CitedText:
    """A :class:`CitedText` from its record."""
    return CitedText(
        record["text"],
        record.get("mime_type", "text/plain"),
        id=record.get("id"),
        extras=_object(record, "extras"),
        citations=_each(record, "citations", citation_in),
    )


# --------------------------------------------------------------------------- #
# Provider-run tools


def _call_out(part: ProviderToolCall) -> Record:
    """The record of a :class:`ProviderToolCall`."""
    return _put(
        {"type": "provider_tool_call", "name": part.name},
        input=_plain(part.input),
        call_id=part.call_id,
        provider=part.provider,
        server=part.server,
        status=part.status,
        opaque=_plain(part.opaque),
        id=part.id,
        extras=_plain(part.extras),
    )


def call_in(record: Mapping[str, Any]) -> ProviderToolCall:
    """A :class:`ProviderToolCall` from its record."""
    return ProviderToolCall(
        record["name"],
        _object(record, "input"),
        record.get("call_id"),
        record.get("provider"),
        record.get("server"),
        record.get("status"),
        _object(record, "opaque"),
        id=record.get("id"),
        extras=_object(record, "extras"),
    )


def _hit_out(hit: SearchHit) -> Record:
    return _put(
        {},
        url=hit.url,
        title=hit.title,
        page_age=hit.page_age,
        text=hit.text,
        opaque=_plain(hit.opaque),
    )


def _hit_in(record: Mapping[str, Any]) -> SearchHit:
    return SearchHit(
        record.get("url"),
        record.get("title"),
        record.get("page_age"),
        record.get("text"),
        _object(record, "opaque"),
    )


def _result_out(part: ProviderToolResult) -> Record:
    """The record of a :class:`ProviderToolResult`."""
    record = _put(
        {"type": "provider_tool_result", "name": part.name},
        call_id=part.call_id,
        provider=part.provider,
        status=part.status,
        error=part.error,
        hits=[_hit_out(hit) for hit in part.hits],
        code=part.code,
        stdout=part.stdout,
        stderr=part.stderr,
        exit_code=part.exit_code,
        files=list(part.files),
    )
    if part.output is not None:
        record["output"] = _plain(part.output)
    return _put(
        record, opaque=_plain(part.opaque), id=part.id, extras=_plain(part.extras)
    )


def result_in(record: Mapping[str, Any]) -> ProviderToolResult:
    """A :class:`ProviderToolResult` from its record."""
    return ProviderToolResult(
        record["name"],
        record.get("call_id"),
        record.get("provider"),
        record.get("status"),
        record.get("error"),
        _each(record, "hits", _hit_in),
        record.get("code"),
        record.get("stdout"),
        record.get("stderr"),
        record.get("exit_code"),
        tuple(_list(record, "files")),
        record.get("output"),
        _object(record, "opaque"),
        id=record.get("id"),
        extras=_object(record, "extras"),
    )


# --------------------------------------------------------------------------- #
# Compaction


def _compaction_out(part: Compaction) -> Record:
    """The record of a :class:`Compaction`."""
    record: Record = {"type": "compaction", "summary": part.summary}
    return _put(
        record,
        provider=part.provider,
        opaque=_plain(part.opaque),
        id=part.id,
        extras=_plain(part.extras),
    )


def compaction_in(record: Mapping[str, Any]) -> Compaction:
    """A :class:`Compaction` from its record."""
    return Compaction(
        record.get("summary", ""),
        record.get("provider"),
        _object(record, "opaque"),
        id=record.get("id"),
        extras=_object(record, "extras"),
    )


def _collecting(write: Callable[[Any], Record]) -> Callable[..., Record]:
    """An out hook taking the serialization layer's collector of values to
    check for NaN and the infinities: it hands over the whole record."""

    def out(part: Any, add: Callable[[Any], None] | None = None) -> Record:
        record = write(part)
        if add is not None:
            add(record)
        return record

    out.__doc__ = write.__doc__
    return out


cited_text_out = _collecting(_cited_text_out)
call_out = _collecting(_call_out)
result_out = _collecting(_result_out)
compaction_out = _collecting(_compaction_out)

HOOKS: tuple[tuple[type, str, Callable[..., Record], Callable[..., Any]], ...] = (
    (CitedText, "cited_text", cited_text_out, cited_text_in),
    (ProviderToolCall, "provider_tool_call", call_out, call_in),
    (ProviderToolResult, "provider_tool_result", result_out, result_in),
    (Compaction, "compaction", compaction_out, compaction_in),
)
"""Each class of :mod:`canisters.provided` with its tag and its two hooks."""
