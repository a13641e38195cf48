"""Anthropic Messages: what Anthropic adds to replies, as typed content.

- a ``text`` block's ``citations`` make a :class:`~canisters.CitedText`;
- ``server_tool_use`` and ``mcp_tool_use`` blocks make a
  :class:`~canisters.ProviderToolCall`, and the ``*_tool_result`` blocks of the
  tools Anthropic runs (web search, web fetch, code execution, MCP, ...) a
  :class:`~canisters.ProviderToolResult`;
- a ``compaction`` block makes a :class:`~canisters.Compaction`.

Each keeps what Anthropic issued in its ``opaque`` fields (a citation whole,
a result's ``content`` whole, the compaction block whole), so that it goes back
to Anthropic exactly as it came; the typed fields are what it says, read from
them. What goes to another provider is decided by
:mod:`canisters.providers._rules.provided`.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

from ..._frozen import thawed as _thawed
from ...exceptions import MalformedPayload, ModelError
from ...protocols import Content
from ...provided import (
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
from .._common import expect_list, expect_mapping, expect_str, mine

__all__ = [
    "BLOCKS",
    "CALLS",
    "COMPACTION",
    "RESULTS",
    "fits",
    "native",
    "parse_block",
    "cites",
    "parse_cited",
    "render",
]

NAME: Final = "anthropic"
CALLS: Final = frozenset({"server_tool_use", "mcp_tool_use"})
# The result blocks of the tools Anthropic runs, and the tool each answers.
RESULTS: Final = {
    "web_search_tool_result": "web_search",
    "web_fetch_tool_result": "web_fetch",
    "code_execution_tool_result": "code_execution",
    "bash_code_execution_tool_result": "bash_code_execution",
    "text_editor_code_execution_tool_result": "text_editor_code_execution",
    "tool_search_tool_result": "tool_search",
    "mcp_tool_result": "mcp",
}
COMPACTION: Final = "compaction"
BLOCKS: Final = CALLS | set(RESULTS) | {COMPACTION}
"""The block types this module reads (beside text blocks with citations)."""


def _text(value: Any) -> str | None:
    return value if isinstance(value, str) else None


def _int(value: Any) -> int | None:
    return value if type(value) is int and value >= 0 else None


def _source(raw: Mapping[str, Any], path: str) -> Source:
    kind = raw.get("type")
    if kind == "web_search_result_location":
        url = raw.get("url")
        if not isinstance(url, str) or not url:
            raise MalformedPayload("a web search citation needs its url", f"{path}.url")
        return UrlSource(url, _text(raw.get("title")))
    if kind == "search_result_location":
        return SearchResultSource(
            _text(raw.get("source")) or "",
            _text(raw.get("title")),
            _int(raw.get("search_result_index")),
            _int(raw.get("start_block_index")),
            _int(raw.get("end_block_index")),
        )
    unit, first, last = {
        "char_location": ("char", "start_char_index", "end_char_index"),
        "page_location": ("page", "start_page_number", "end_page_number"),
        "content_block_location": ("block", "start_block_index", "end_block_index"),
    }.get(kind if isinstance(kind, str) else "", (None, "", ""))
    start, end = _int(raw.get(first)), _int(raw.get(last))
    if start is not None and end is not None and end < start:
        start = end = None  # a range the provider gives backwards: not read
    document = raw.get("document_index")
    file_id = raw.get("file_id")
    return DocumentSource(
        file_id if isinstance(file_id, str) else _int(document),
        _text(raw.get("document_title")),
        unit,
        start,
        end,
    )


def _citation(raw: Any, path: str) -> Citation:
    citation = expect_mapping(raw, path)
    expect_str(citation.get("type"), f"{path}.type")
    source = _source(citation, path)
    try:
        return Citation(
            source, _text(citation.get("cited_text")), provider=NAME, opaque=citation
        )
    except ModelError as error:
        raise MalformedPayload(str(error), path) from None


def cites(block: Mapping[str, Any]) -> bool:
    """Whether a text block's ``citations`` are citations this module reads (a
    list of objects with a type); others stay on the block, kept."""
    citations = block.get("citations")
    return (
        isinstance(citations, list)
        and bool(citations)
        and isinstance(block.get("text"), str)
        and all(
            isinstance(item, Mapping) and isinstance(item.get("type"), str)
            for item in citations
        )
    )


def parse_cited(block: Mapping[str, Any], path: str, rest: Any) -> CitedText:
    """A ``text`` block with ``citations`` (``rest``: its other keys, kept)."""
    text = expect_str(block.get("text"), f"{path}.text")
    raw = expect_list(block.get("citations"), f"{path}.citations")
    citations = tuple(
        _citation(item, f"{path}.citations[{number}]")
        for number, item in enumerate(raw)
    )
    extras = {NAME: {"block": rest}} if rest else {}
    return CitedText(text, citations=citations, extras=extras)


def fits(block: Mapping[str, Any]) -> bool:
    """Whether ``block`` (of a type in :data:`BLOCKS`) has the fields its typed
    part reads; another is kept whole, as a block of a type not known."""
    kind = block["type"]
    if kind in CALLS:
        return (
            isinstance(block.get("id"), str)
            and isinstance(block.get("name"), str)
            and bool(block["name"])
            and isinstance(block.get("input"), dict)
        )
    if kind == COMPACTION:
        return True
    return isinstance(block.get("tool_use_id"), str)


def parse_block(block: Mapping[str, Any], path: str) -> Content:
    """A server tool call, its result or a compaction block that
    :func:`fits`, typed."""
    kind = block["type"]
    try:
        if kind in CALLS:
            return _call(block, path)
        if kind == COMPACTION:
            summary = block.get("content")
            return Compaction(_text(summary) or "", NAME, dict(block))
        return _result(block, path)
    except ModelError as error:  # what the typed view refuses, where it is
        raise MalformedPayload(str(error), path) from None


def _call(block: Mapping[str, Any], path: str) -> ProviderToolCall:
    call_id = expect_str(block.get("id"), f"{path}.id")
    name = expect_str(block.get("name"), f"{path}.name")
    arguments = expect_mapping(block.get("input"), f"{path}.input")
    known = {"type", "id", "name", "input"}
    server = None
    if block["type"] == "mcp_tool_use":
        server = _text(block.get("server_name"))
    rest = {key: value for key, value in block.items() if key not in known}
    rest["type"] = block["type"]
    return ProviderToolCall(name, arguments, call_id, NAME, server=server, opaque=rest)


def _result(block: Mapping[str, Any], path: str) -> ProviderToolResult:
    kind = block["type"]
    call_id = expect_str(block.get("tool_use_id"), f"{path}.tool_use_id")
    content = block.get("content")
    opaque = {key: value for key, value in block.items() if key != "tool_use_id"}
    fields: dict[str, Any] = {}
    if isinstance(content, Mapping):
        error = content.get("error_code")
        if isinstance(content.get("type"), str) and content["type"].endswith("error"):
            fields["error"] = _text(error) or content["type"]
        fields.update(_code(content))
        if (
            "error" not in fields
            and not fields
            and content.get("type") != ("web_fetch_result")
        ):
            # A file operation's result (view, create, str_replace): as given.
            fields["output"] = {k: v for k, v in content.items() if k != "type"}
        if content.get("type") == "web_fetch_result":
            fields["hits"] = (_fetched(content),)
            document = content.get("content")
            source = document.get("source") if isinstance(document, Mapping) else None
            if (
                isinstance(source, Mapping)
                and isinstance(source.get("data"), str)
                and source.get("type") == "text"
            ):
                fields["output"] = source["data"]
    elif isinstance(content, list):
        if kind == "mcp_tool_result":
            texts = [
                item["text"]
                for item in content
                if isinstance(item, Mapping) and isinstance(item.get("text"), str)
            ]
            fields["output"] = "".join(texts)
        else:
            fields["hits"] = tuple(
                _hit(item) for item in content if isinstance(item, Mapping)
            )
    elif isinstance(content, str):
        fields["output"] = content
    if kind == "mcp_tool_result" and block.get("is_error") is True:
        fields["status"] = "failed"
    return ProviderToolResult(RESULTS[kind], call_id, NAME, opaque=opaque, **fields)


def _hit(item: Mapping[str, Any]) -> SearchHit:
    return SearchHit(
        _text(item.get("url")), _text(item.get("title")), _text(item.get("page_age"))
    )


def _fetched(content: Mapping[str, Any]) -> SearchHit:
    document = content.get("content")
    title = document.get("title") if isinstance(document, Mapping) else None
    return SearchHit(_text(content.get("url")), _text(title))


def _code(content: Mapping[str, Any]) -> dict[str, Any]:
    """The output of a code execution result (``*_execution_result``)."""
    if not (
        isinstance(content.get("type"), str)
        and content["type"].endswith("execution_result")
    ):
        return {}
    held = content.get("content")
    files = [
        item["file_id"]
        for item in (held if isinstance(held, list) else ())
        if isinstance(item, Mapping) and isinstance(item.get("file_id"), str)
    ]
    code = content.get("return_code")
    return {
        "stdout": _text(content.get("stdout")),
        "stderr": _text(content.get("stderr")),
        "exit_code": code if type(code) is int else None,
        "files": tuple(files),
    }


def native(part: Content) -> bool:
    """Whether ``part`` goes to Anthropic as Anthropic's own block: what
    Anthropic issued (a result or compaction with its fields kept; a text
    whose citations all came from Anthropic), or a server tool call Anthropic
    ran."""
    if isinstance(part, CitedText):
        return all(c.provider == NAME and "type" in c.opaque for c in part.citations)
    if isinstance(part, ProviderToolCall):
        return part.provider == NAME
    if isinstance(part, (ProviderToolResult, Compaction)):
        return part.provider == NAME and "type" in part.opaque
    return False


def render(part: Content) -> dict[str, Any]:
    """The block of a part :func:`native` accepts."""
    if isinstance(part, CitedText):
        block: dict[str, Any] = {"type": "text", "text": part.text}
        block.update(mine(part, NAME).get("block") or {})
        block["citations"] = [_thawed(c.opaque) for c in part.citations]
        return block
    if isinstance(part, ProviderToolCall):
        call = {"type": "server_tool_use", "id": part.call_id or "", "name": part.name}
        call["input"] = _thawed(part.input)
        if part.server is not None:
            call["server_name"] = part.server
        call.update(_thawed(part.opaque))
        return call
    held: Any = part
    block = dict(_thawed(held.opaque))
    if isinstance(part, ProviderToolResult):
        block["tool_use_id"] = part.call_id or ""
    return block
