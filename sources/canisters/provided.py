"""What providers add to replies: citations, tools they ran, and compaction.

These content parts sit in an :class:`~canisters.Assistant` canister's content
beside text, media and reasoning:

- :class:`CitedText` is a :class:`~canisters.Text` with the
  :class:`Citation` entries the provider attached to it. Each names the cited
  span of the answer where the provider gives one and its source: a
  :class:`UrlSource` (a web page), a :class:`DocumentSource` (a document of the
  conversation, with a page, character or block range) or a
  :class:`SearchResultSource` (a search result given as content).
- :class:`ProviderToolCall` and :class:`ProviderToolResult` say "the provider
  ran this": a web search, a page fetch, code execution, an MCP call. They are
  never sent to a provider as client tool calls: the client has nothing to run.
- :class:`Compaction` holds a provider's compaction of the conversation before
  it: the opaque item exactly as returned, and the readable summary where the
  provider gives one.

A provider's opaque fields (an encrypted index, an encrypted result, a
compaction blob) are kept in ``opaque`` exactly as issued, bound to the
``provider`` that issued them, and only ever sent back to it.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any, ClassVar

import attrs

from ._frozen import EMPTY, freeze
from ._typecheck import refuse, text_or_none, whole
from .content import Text
from .exceptions import ModelError, _excerpt

__all__ = [
    "Citation",
    "CitedText",
    "Compaction",
    "DocumentSource",
    "ProviderToolCall",
    "ProviderToolResult",
    "SearchHit",
    "SearchResultSource",
    "Source",
    "UrlSource",
]

_UNITS = ("page", "char", "block")


def _bound(owner: object, provider: str | None, opaque: Mapping[str, Any]) -> None:
    """Opaque fields are bound to the provider that issued them."""
    if provider is not None:
        text_or_none(owner, "provider")
    if opaque and not provider:
        raise ModelError(
            f"{type(owner).__name__} with opaque fields must name the provider "
            "that issued them",
            field="provider",
        )


def _range(owner: object, start: object, end: object) -> None:
    for field, value in (("start", start), ("end", end)):
        if value is not None and not (isinstance(value, int) and whole(value)):
            raise refuse(owner, field, "a non-negative int or None")
        if isinstance(value, int) and value < 0:
            raise refuse(owner, field, "a non-negative int or None")
    if isinstance(start, int) and isinstance(end, int) and end < start:
        raise ModelError(
            f"{type(owner).__name__}.end ({end}) is before its start ({start})",
            field="end",
        )


@attrs.frozen(weakref_slot=False)
class UrlSource:
    """A web page a citation points to."""

    kind: ClassVar[str] = "url"

    url: str
    """The page's address."""
    title: str | None = None
    """The page's title, where given."""

    def __attrs_post_init__(self) -> None:
        if not isinstance(self.url, str) or not self.url:
            raise refuse(self, "url", "a non-empty string")
        text_or_none(self, "title")


@attrs.frozen(weakref_slot=False)
class DocumentSource:
    """A document of the conversation a citation points to, and where in it.

    ``document`` is the document's position among the documents of the request
    (as Anthropic counts them) or a provider file id (as OpenAI names them);
    ``unit`` says what ``start`` and ``end`` count: ``page`` (first page
    included, last excluded, from 1), ``char`` or ``block`` (from 0).
    """

    kind: ClassVar[str] = "document"

    document: int | str | None = None
    """The document's index in the request, or a file id."""
    title: str | None = None
    """The document's title or file name, where given."""
    unit: str | None = None
    """What ``start`` and ``end`` count: ``page``, ``char`` or ``block``."""
    start: int | None = None
    """Where the cited range begins."""
    end: int | None = None
    """Where the cited range ends (excluded)."""

    def __attrs_post_init__(self) -> None:
        document = self.document
        if (
            document is not None
            and not isinstance(document, str)
            and not whole(document)
        ):
            raise refuse(self, "document", "an int, a string or None")
        text_or_none(self, "title", "unit")
        if self.unit is not None and self.unit not in _UNITS:
            raise ModelError(
                f"DocumentSource.unit must be one of {', '.join(_UNITS)}, "
                f"got {_excerpt(self.unit)}",
                field="unit",
            )
        _range(self, self.start, self.end)


@attrs.frozen(weakref_slot=False)
class SearchResultSource:
    """A search result given to the model as content, which a citation points to."""

    kind: ClassVar[str] = "search_result"

    source: str
    """The result's source as given (a URL or a name)."""
    title: str | None = None
    """The result's title."""
    index: int | None = None
    """The result's position among the search results of the request."""
    start: int | None = None
    """The first cited block of the result."""
    end: int | None = None
    """The block after the last cited one."""

    def __attrs_post_init__(self) -> None:
        if not isinstance(self.source, str):
            raise refuse(self, "source", "a string")
        text_or_none(self, "title")
        if self.index is not None and (not whole(self.index) or self.index < 0):
            raise refuse(self, "index", "a non-negative int or None")
        _range(self, self.start, self.end)


Source = UrlSource | DocumentSource | SearchResultSource
"""Where a citation points: a web page, a document, or a search result."""

_SOURCES = (UrlSource, DocumentSource, SearchResultSource)


@attrs.frozen(weakref_slot=False)
class Citation:
    """One citation of a text: its source, the quoted passage, the cited span."""

    source: Source
    """Where the cited passage comes from."""
    cited_text: str | None = None
    """The passage quoted from the source, where given."""
    start: int | None = None
    """The first character of the cited span of the answer, where given."""
    end: int | None = None
    """The character after the cited span of the answer."""
    provider: str | None = None
    """The provider that issued ``opaque``."""
    opaque: Mapping[str, Any] = attrs.field(default=EMPTY, converter=freeze)
    """The provider's own fields (an encrypted index, ...), exactly as issued."""

    def __attrs_post_init__(self) -> None:
        if not isinstance(self.source, _SOURCES):
            raise ModelError(
                "Citation.source must be a UrlSource, DocumentSource or "
                f"SearchResultSource, got {type(self.source).__name__}",
                field="source",
            )
        text_or_none(self, "cited_text")
        _range(self, self.start, self.end)
        _bound(self, self.provider, self.opaque)


def _citations(value: Iterable[Citation]) -> tuple[Citation, ...]:
    if isinstance(value, (str, bytes, Mapping)) or not isinstance(value, Iterable):
        raise ModelError(
            f"CitedText.citations must be an iterable of Citation, "
            f"got {type(value).__name__}",
            field="citations",
        )
    items = tuple(value)
    for index, item in enumerate(items):
        if not isinstance(item, Citation):
            raise ModelError(
                f"CitedText.citations[{index}] must be a Citation, "
                f"got {type(item).__name__}",
                field="citations",
            )
    return items


@attrs.frozen(weakref_slot=False)
class CitedText(Text):
    """Text of an answer with the citations the provider attached to it.

    It is a :class:`~canisters.Text`, so whatever reads text reads it; a target
    without citations gets the text and a report of what it could not take.
    """

    type: ClassVar[str] = "cited_text"

    citations: tuple[Citation, ...] = attrs.field(
        default=(), converter=_citations, kw_only=True
    )
    """The citations, in the provider's order."""


def _json_value(value: Any) -> Any:
    """A JSON-compatible value, read-only: objects frozen, arrays as tuples."""
    if value is None or isinstance(value, (str, int, float, bool)):
        return value
    if isinstance(value, Mapping):
        return freeze(value)
    if isinstance(value, (list, tuple)):
        return tuple(_json_value(item) for item in value)
    raise ModelError(
        f"ProviderToolResult.output must be JSON-compatible, "
        f"got {type(value).__name__}",
        field="output",
    )


@attrs.frozen(weakref_slot=False)
class ProviderToolCall:
    """A call of a tool the provider runs itself (web search, code execution, ...).

    ``call_id`` pairs it with its :class:`ProviderToolResult`.
    """

    type: ClassVar[str] = "provider_tool_call"

    name: str
    """The tool, as the provider names it (``web_search``, ``code_execution``)."""
    input: Mapping[str, Any] = attrs.field(default=EMPTY, converter=freeze)
    """What the model asked it (a query, code), JSON-compatible."""
    call_id: str | None = None
    """The provider's id of the call."""
    provider: str | None = None
    """The provider that ran it."""
    server: str | None = None
    """The MCP server that serves the tool, for an MCP call."""
    status: str | None = None
    """The provider's status of the call (``completed``, ``failed``, ...)."""
    opaque: Mapping[str, Any] = attrs.field(default=EMPTY, converter=freeze)
    """The provider's own fields, exactly as issued."""
    id: str | None = attrs.field(default=None, kw_only=True)
    """Optional stable id of the part."""
    extras: Mapping[str, Any] = attrs.field(
        default=EMPTY, converter=freeze, kw_only=True
    )
    """Provider-specific fields without neutral meaning, keyed by provider name."""

    def __attrs_post_init__(self) -> None:
        if not isinstance(self.name, str) or not self.name:
            raise refuse(self, "name", "a non-empty string")
        text_or_none(self, "call_id", "server", "status", "id")
        _bound(self, self.provider, self.opaque)


@attrs.frozen(weakref_slot=False)
class SearchHit:
    """One result a provider's search found."""

    url: str | None = None
    """The page's address."""
    title: str | None = None
    """The page's title."""
    page_age: str | None = None
    """How old the page is, as the provider says it (``"3 days ago"``, a date)."""
    text: str | None = None
    """A snippet of the page, where given."""
    opaque: Mapping[str, Any] = attrs.field(default=EMPTY, converter=freeze)
    """The provider's own fields (an encrypted content blob, ...), exactly as
    issued; bound to the result's provider."""

    def __attrs_post_init__(self) -> None:
        text_or_none(self, "url", "title", "page_age", "text")


def _hits(value: Iterable[SearchHit]) -> tuple[SearchHit, ...]:
    items = tuple(value)
    for index, item in enumerate(items):
        if not isinstance(item, SearchHit):
            raise ModelError(
                f"ProviderToolResult.hits[{index}] must be a SearchHit, "
                f"got {type(item).__name__}",
                field="hits",
            )
    return items


def _strings(value: Iterable[str]) -> tuple[str, ...]:
    items = tuple(value)
    for index, item in enumerate(items):
        if not isinstance(item, str):
            raise ModelError(
                f"ProviderToolResult.files[{index}] must be a file id (a string), "
                f"got {type(item).__name__}",
                field="files",
            )
    return items


@attrs.frozen(weakref_slot=False)
class ProviderToolResult:
    """What a tool the provider ran returned: search hits, code output, files.

    ``output`` keeps the result's readable value where it is one (a fetched
    page's text, an MCP tool's output); ``opaque`` keeps the provider's own
    fields exactly as issued, so the result goes back to that provider unchanged.
    """

    type: ClassVar[str] = "provider_tool_result"

    name: str
    """The tool that ran, as the provider names it."""
    call_id: str | None = None
    """The id of the :class:`ProviderToolCall` this answers."""
    provider: str | None = None
    """The provider that ran it."""
    status: str | None = None
    """The provider's status (``completed``, ``failed``); ``error`` says why."""
    error: str | None = None
    """The provider's error code or message, when the tool failed."""
    hits: tuple[SearchHit, ...] = attrs.field(default=(), converter=_hits)
    """What a search found."""
    code: str | None = None
    """The code that ran, where the result gives it."""
    stdout: str | None = None
    """What the code wrote to its standard output."""
    stderr: str | None = None
    """What the code wrote to its standard error."""
    exit_code: int | None = None
    """The code's exit status."""
    files: tuple[str, ...] = attrs.field(default=(), converter=_strings)
    """Provider file ids of the files it made."""
    output: Any = attrs.field(default=None, converter=_json_value)
    """Any other readable output, JSON-compatible."""
    opaque: Mapping[str, Any] = attrs.field(default=EMPTY, converter=freeze)
    """The provider's own fields, exactly as issued."""
    id: str | None = attrs.field(default=None, kw_only=True)
    """Optional stable id of the part."""
    extras: Mapping[str, Any] = attrs.field(
        default=EMPTY, converter=freeze, kw_only=True
    )
    """Provider-specific fields without neutral meaning, keyed by provider name."""

    @property
    def is_error(self) -> bool:
        """Whether the tool failed."""
        return self.error is not None or self.status in ("failed", "error")

    def __attrs_post_init__(self) -> None:
        if not isinstance(self.name, str) or not self.name:
            raise refuse(self, "name", "a non-empty string")
        text_or_none(
            self, "call_id", "status", "error", "code", "stdout", "stderr", "id"
        )
        if self.exit_code is not None and not whole(self.exit_code):
            raise refuse(self, "exit_code", "an int or None")
        _bound(self, self.provider, self.opaque)
        if any(hit.opaque for hit in self.hits) and not self.provider:
            raise ModelError(
                "ProviderToolResult with opaque search hits must name the provider "
                "that issued them",
                field="provider",
            )


@attrs.frozen(weakref_slot=False)
class Compaction:
    """A provider's compaction of the conversation before it.

    ``opaque`` is the item exactly as the provider returned it, sent back only
    to ``provider``; ``summary`` is its readable summary, where given, which is
    what another provider receives (reported). The canisters before the
    compaction stay in the conversation and in storage.
    """

    type: ClassVar[str] = "compaction"

    summary: str = ""
    """The readable summary (may be empty when the provider gives none)."""
    provider: str | None = None
    """The provider that issued ``opaque``."""
    opaque: Mapping[str, Any] = attrs.field(default=EMPTY, converter=freeze)
    """The compaction item or block, exactly as issued."""
    id: str | None = attrs.field(default=None, kw_only=True)
    """Optional stable id of the part (a provider item id rides here)."""
    extras: Mapping[str, Any] = attrs.field(
        default=EMPTY, converter=freeze, kw_only=True
    )
    """Provider-specific fields without neutral meaning, keyed by provider name."""

    def __attrs_post_init__(self) -> None:
        if not isinstance(self.summary, str):
            raise refuse(self, "summary", "a string")
        text_or_none(self, "id")
        _bound(self, self.provider, self.opaque)
