"""What providers add to replies, sent to a format: one rule for every target.

A format registers (:func:`register`) which of the parts of
:mod:`canisters.provided` it writes as its own blocks (the citations, tool
results and compactions its provider issued; the calls its provider ran).
Every other such part is settled here, before the format renders, the same way
for every target (:func:`settle`):

- a :class:`~canisters.CitedText` is sent as its text; its citations follow
  the ``unsupported`` policy: refused under ``"error"``, dropped (warned,
  reported) under ``"drop"``, appended as a numbered source list under
  ``"placeholder"``;
- a :class:`~canisters.ProviderToolCall` or
  :class:`~canisters.ProviderToolResult` is never sent as a client tool call or
  result (the client would be asked to run it): it follows the policy,
  refused, dropped, or under ``"placeholder"`` written as a line of text
  saying what the provider ran and what it found;
- a :class:`~canisters.Compaction` is sent as its summary (reported as
  downgraded); one without a summary follows the policy.

A format whose annotations point to web pages by a span of the text (OpenAI
Chat's and Responses' ``url_citation``) writes another provider's web-page
citations as its own with :func:`writes_web_citations` and :func:`web_notes`,
the same way for each: the page and span carried, a quoted passage carried
where the format has a place for it and reported where it has none.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

import attrs

from ...content import Text
from ...protocols import Canister, Content
from ...provided import (
    Citation,
    CitedText,
    Compaction,
    DocumentSource,
    ProviderToolCall,
    ProviderToolResult,
    UrlSource,
)
from .kept import settle_citations
from .paths import location as describe
from .policy import apply_policy

if TYPE_CHECKING:
    from .._options import Options

__all__ = [
    "TYPES",
    "register",
    "settle",
    "source_line",
    "web_notes",
    "writes_web_citations",
]

TYPES = frozenset({CitedText, ProviderToolCall, ProviderToolResult, Compaction})
"""The part types this rule settles."""

_NATIVE: dict[str, Callable[[Content], bool]] = {}


def register(provider: str, native: Callable[[Content], bool]) -> None:
    """Say which provided parts ``provider``'s format writes as its own."""
    _NATIVE[provider] = native


def writes_web_citations(
    own: Callable[[Citation], bool], *, titled: bool = False
) -> Callable[[Content], bool]:
    """The test of :func:`register` for a format that writes a cited text
    whose citations are each its own (``own``) or a web page with a span (and
    a title, where the format requires one: ``titled``)."""

    def native(part: Content) -> bool:
        if not isinstance(part, CitedText):
            return False
        return all(
            own(citation)
            or (
                isinstance(citation.source, UrlSource)
                and citation.start is not None
                and citation.end is not None
                and (not titled or citation.source.title is not None)
            )
            for citation in part.citations
        )

    return native


def web_notes(
    part: CitedText,
    own: Callable[[Citation], bool],
    write_own: Callable[[Citation], Any],
    spell: Callable[[UrlSource, int, int, str | None], Any],
    *,
    quotes: bool,
    options: Options,
    provider: str,
    where: str,
) -> list[Any]:
    """The annotations of ``part``'s citations (a part
    :func:`writes_web_citations` accepts): ``write_own(citation)`` for the
    format's own (``own``; ``None``: written already), ``spell(page, start,
    end, quoted)`` for
    another provider's web page, its quoted passage given only where the
    format ``quotes`` one; the passages it has no place for are reported."""
    written: list[Any] = []
    unquoted = 0
    for citation in part.citations:
        if own(citation) or not isinstance(citation.source, UrlSource):
            note = write_own(citation)
            if note is not None:
                written.append(note)
            continue
        if citation.cited_text is not None and not quotes:
            unquoted += 1
        written.append(
            spell(
                citation.source,
                citation.start or 0,
                citation.end or 0,
                citation.cited_text if quotes else None,
            )
        )
    if unquoted:
        apply_policy(
            options,
            provider,
            where,
            f"the quoted passage of {unquoted} url citation"
            f"{'s' if unquoted > 1 else ''} has no place in {provider}",
        )
    return written


def _never(part: Content) -> bool:
    return False


def settle(
    canisters: Sequence[Canister],
    options: Options,
    provider: str,
    *,
    reply: bool = False,
) -> Sequence[Canister]:
    """``canisters`` with the provided parts ``provider`` does not write as its
    own settled as the module says (``canisters`` itself when there is none).
    In a ``reply``, a compaction is left out (reported): its summary is the
    conversation's context, not part of the answer."""
    native = _NATIVE.get(provider, _never)
    out: list[Canister] | None = None
    for index, canister in enumerate(canisters):
        content = getattr(canister, "content", None)
        if not content or not any(type(part) in TYPES for part in content):
            continue
        parts: list[Content] = []
        changed = False
        held: list[Any] = []  # the entries of the citations settled here
        for number, part in enumerate(content):
            if type(part) not in TYPES or native(part):
                parts.append(part)
                continue
            changed = True
            where = describe(index, canister, number, part)
            if isinstance(part, CitedText):
                held += [citation.opaque for citation in part.citations]
            if reply and isinstance(part, Compaction):
                apply_policy(  # refused, or left out (warned, reported)
                    options,
                    provider,
                    where,
                    f"{part.provider or 'a'} compaction has no place in a reply to "
                    f"{provider}: its summary is context, not answer",
                )
                continue
            parts.extend(_settled(part, where, options, provider))
        if changed:
            if out is None:
                out = list(canisters)
            out[index] = attrs.evolve(  # type: ignore[misc]
                canister,
                content=tuple(parts),
                extras=settle_citations(canister.extras, held),
            )
    return canisters if out is None else out


def _settled(
    part: Content, where: str, options: Options, provider: str
) -> list[Content]:
    if isinstance(part, CitedText):
        # The citations are settled below: the entries they were read from
        # are accounted for.
        extras = settle_citations(part.extras, [c.opaque for c in part.citations])
        text = Text(part.text, part.mime_type, id=part.id, extras=extras)
        if not part.citations:
            return [text]
        kinds = ", ".join(
            dict.fromkeys(
                _wire(c.opaque) or f"{c.provider or 'a'} citation"
                for c in part.citations
            )
        )
        listed = apply_policy(
            options,
            provider,
            where,
            f"citations ({kinds}) have no place in {provider}",
            placeholder=True,
            stacklevel=4,
        )
        if listed is None:
            return [text]
        lines = [source_line(n, c.source) for n, c in enumerate(part.citations, 1)]
        body = f"{part.text}\n\nSources:\n" + "\n".join(lines)
        return [Text(body, part.mime_type, id=part.id, extras=extras)]
    if isinstance(part, Compaction) and part.summary:
        options.note(
            "downgraded",
            provider,
            where,
            f"{part.provider or 'a'} compaction sent to {provider} as its summary",
        )
        return [Text(part.summary, id=part.id)]
    ran = getattr(part, "provider", None) or "a provider"
    held: Any = part
    wire = _wire(held.opaque)
    spelled = f" ({wire})" if wire else ""
    if isinstance(part, Compaction):
        reason = f"{ran} compaction{spelled} without a summary not sent to {provider}"
    else:
        failed = f", failed: {held.error}" if getattr(held, "error", None) else ""
        if isinstance(part, ProviderToolCall) and part.input:
            failed = f" with {_json(part.input)}"  # what it was asked, in full
        what = "call" if isinstance(part, ProviderToolCall) else "result"
        reason = (
            f"{held.name} ran by {ran}{spelled}{failed}: never sent to {provider} "
            f"as a client tool {what}"
        )
    placeholder = apply_policy(
        options, provider, where, reason, placeholder=True, stacklevel=4
    )
    if placeholder is None:
        return []
    if isinstance(part, ProviderToolCall):
        return [Text(f"[{ran} ran {part.name}: {_json(part.input)}]")]
    if isinstance(part, ProviderToolResult):
        return [Text(_result_text(part, ran))]
    return [Text(placeholder)]


def _wire(opaque: Any) -> str | None:
    """The provider's name for the element a part was read from, where its
    opaque fields give it (a block's ``type``, an item's type)."""
    for key in ("type", "item", "part"):
        value = opaque.get(key)
        if isinstance(value, str):
            return value
    return None


def _json(value: Any) -> str:
    return json.dumps(_plain(value), ensure_ascii=False, sort_keys=True)


def _plain(value: Any) -> Any:
    if isinstance(value, dict) or hasattr(value, "items"):
        return {key: _plain(item) for key, item in value.items()}
    if isinstance(value, tuple):
        return [_plain(item) for item in value]
    return value


def _result_text(part: ProviderToolResult, ran: str) -> str:
    """A line (or a few) saying what a tool the provider ran gave."""
    head = f"[{part.name} ran by {ran}"
    if part.is_error:
        return f"{head} failed: {part.error or part.status}]"
    lines = [f"{head} gave:"]
    for hit in part.hits:
        title = hit.title or hit.url or ""
        lines.append(f"- {title} <{hit.url}>" if hit.url else f"- {title}")
    for label, value in (("stdout", part.stdout), ("stderr", part.stderr)):
        if value:
            lines.append(f"{label}: {value}")
    if part.exit_code is not None:
        lines.append(f"exit code: {part.exit_code}")
    if part.output is not None:
        output = part.output if isinstance(part.output, str) else _json(part.output)
        lines.append(output)
    return "\n".join(lines) + "]"


def source_line(number: int, source: Any) -> str:
    """A citation's source as a numbered line: ``[1] Title <url>``."""
    if isinstance(source, UrlSource):
        return f"[{number}] {source.title or source.url} <{source.url}>"
    if isinstance(source, DocumentSource):
        name = source.title or (
            f"document {source.document}" if source.document is not None else "document"
        )
        if source.unit is not None and source.start is not None:
            end = source.end if source.end is not None else source.start
            name += f" ({source.unit}s {source.start}-{end})"
        return f"[{number}] {name}"
    title = source.title or source.source
    return (
        f"[{number}] {title} <{source.source}>"
        if source.source
        else f"[{number}] {title}"
    )
