"""The HTML of what providers add to replies: a cited answer with its sources
as numbered links under it, a tool the provider ran folded with what it gave,
and a compaction with its summary."""

from __future__ import annotations

import json
from html import escape
from typing import Any

from ..provided import (
    CitedText,
    Compaction,
    DocumentSource,
    ProviderToolCall,
    ProviderToolResult,
    UrlSource,
)

__all__ = ["PROVIDED", "cited", "compaction", "tool"]

PROVIDED = (CitedText, ProviderToolCall, ProviderToolResult, Compaction)
"""The part types written here."""


def _link(writer: Any, url: str | None, label: str | None) -> str:
    """A link to ``url`` when it is an http(s) address, else the label alone."""
    shown = escape(writer.cut(label or url or ""))
    if url and url.startswith(("https://", "http://")):
        href = escape(url, quote=True)
        return f'<a href="{href}" rel="noopener noreferrer nofollow">{shown}</a>'
    return shown


def _source(writer: Any, source: Any) -> str:
    if isinstance(source, UrlSource):
        return _link(writer, source.url, source.title)
    if isinstance(source, DocumentSource):
        name = source.title or (
            f"document {source.document}" if source.document is not None else "document"
        )
        where = ""
        if source.unit is not None and source.start is not None:
            end = source.end if source.end is not None else source.start
            where = f" ({source.unit}s {source.start}-{end})"
        return escape(writer.cut(name + where))
    return _link(writer, source.source, source.title or source.source)


def cited(writer: Any, part: CitedText) -> None:
    """The text, then its citations as a numbered list of sources, each with
    the passage it quotes."""
    writer.text(part.text)
    out = writer.out
    out.append('<ol class="cv-sources">')
    for citation in part.citations:
        quoted = ""
        if citation.cited_text:
            quoted = (
                f' <span class="cv-quote">“{escape(writer.cut(citation.cited_text))}”'
                "</span>"
            )
        out.append(f"<li>{_source(writer, citation.source)}{quoted}</li>")
    out.append("</ol>")


def _value(value: Any) -> str:
    def plain(item: Any) -> Any:
        if hasattr(item, "items"):
            return {key: plain(inner) for key, inner in item.items()}
        if isinstance(item, tuple):
            return [plain(inner) for inner in item]
        return item

    return json.dumps(plain(value), ensure_ascii=False, indent=1)


def tool(
    writer: Any, call: ProviderToolCall | None, result: ProviderToolResult | None
) -> None:
    """A tool the provider ran, folded: its name, who ran it and its status in
    the summary; what it was asked and what it gave inside."""
    head: Any = call or result
    bits = [head.name, f"run by {head.provider or 'the provider'}"]
    server = getattr(head, "server", None)
    if server:
        bits.append(f"on {server}")
    if result is not None and result.is_error:
        bits.append(f"failed: {result.error or result.status}")
    elif head.status:
        bits.append(head.status)
    if result is not None and result.hits:
        count = len(result.hits)
        bits.append(f"{count:,} result{'' if count == 1 else 's'}")
    out = writer.out
    summary = escape(writer.cut(" · ".join(bits)))
    out.append(f'<details class="cv-provided"><summary>{summary}</summary>')
    if call is not None and call.input:
        writer.text(_value(call.input), "cv-code")
    if result is not None:
        if result.hits:
            out.append('<ol class="cv-sources">')
            for hit in result.hits:
                age = f" · {escape(writer.cut(hit.page_age))}" if hit.page_age else ""
                out.append(f"<li>{_link(writer, hit.url, hit.title)}{age}</li>")
            out.append("</ol>")
        if result.code and (call is None or result.code not in str(call.input)):
            writer.text(result.code, "cv-code")
        for label, text in (("stdout", result.stdout), ("stderr", result.stderr)):
            if text:
                out.append(f'<p class="cv-note">{label}</p>')
                writer.text(text, "cv-code")
        if result.exit_code is not None:
            out.append(f'<p class="cv-note">exit code {result.exit_code}</p>')
        if result.files:
            names = ", ".join(result.files)
            out.append(f'<p class="cv-note">files: {escape(writer.cut(names))}</p>')
        if result.output is not None:
            shown = result.output
            writer.text(shown if isinstance(shown, str) else _value(shown), "cv-code")
    elif call is not None:
        out.append('<p class="cv-note">no result recorded with this call</p>')
    out.append("</details>")


def compaction(writer: Any, part: Compaction) -> None:
    """A compaction: the provider that made it, and its summary folded."""
    by = escape(writer.cut(part.provider or "a provider"))
    writer.out.append(
        f'<details class="cv-provided"><summary>compaction by {by}: the turns '
        "before it are summarized</summary>"
    )
    if part.summary:
        writer.text(part.summary)
    else:
        writer.out.append('<p class="cv-note">no readable summary</p>')
    writer.out.append("</details>")
