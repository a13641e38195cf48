"""The readable rendering of ``canisters show`` (part of :mod:`canisters.cli`)."""

from __future__ import annotations

import base64
import binascii
import contextlib
import hashlib
import json
import re
from collections.abc import Mapping
from typing import Any, Final

import click

from ..content import Media, Reasoning, Text, _element_type, _opaque
from ..conversation import Conversation
from ..protocols import Canister, Content, Role
from ..provided import (
    CitedText,
    Compaction,
    DocumentSource,
    ProviderToolCall,
    ProviderToolResult,
    UrlSource,
)

_ROLE_COLOURS: Final = {
    Role.Supervisor: "magenta",
    Role.User: "green",
    Role.Assistant: "blue",
    Role.Document: "cyan",
    Role.Invocation: "yellow",
    Role.Result: "yellow",
}
_LABEL_WIDTH: Final = 12

# Control characters but the tab (C0, DEL, C1): in text printed to a terminal
# they would move the cursor, clear the screen, set the window title, write
# the clipboard (OSC 52) or make links (OSC 8).
_CONTROLS: Final = re.compile("[\x00-\x08\x0a-\x1f\x7f-\x9f]")


def printable(text: object) -> str:
    """``text`` with each control character but the tab written as its escape
    (``\\x1b``): what comes from a store or a conversation reaches the
    terminal as text, never as a command to it."""
    value = str(text)
    if _CONTROLS.search(value) is None:
        return value
    return _CONTROLS.sub(lambda found: repr(found.group())[1:-1], value)


def human_size(count: int) -> str:
    """Format a byte count for people (``166 B``, ``4.9 KiB``)."""
    value = float(count)
    for unit in ("B", "KiB", "MiB", "GiB"):
        if value < 1024 or unit == "GiB":
            return f"{count} B" if unit == "B" else f"{value:.1f} {unit}"
        value /= 1024
    raise AssertionError("unreachable")  # pragma: no cover


# Rendering -----------------------------------------------------------------------


def _media_line(part: Media) -> str:
    modality = part.modality.value if hasattr(part.modality, "value") else part.modality
    bits = [str(modality)]
    if part.mime_type:
        bits.append(part.mime_type)
    data = part.data
    if data is None and part.url is not None and part.url.startswith("data:"):
        header, _, payload = part.url.partition(",")
        if header.endswith(";base64"):
            with contextlib.suppress(binascii.Error, ValueError):
                data = base64.b64decode(payload)
    if data is not None:
        bits.append(human_size(len(data)))
        bits.append(f"sha256:{hashlib.sha256(data).hexdigest()[:16]}")
    elif part.content_id is not None:
        bits.append(part.content_id[:23])
    elif part.url is not None:
        url = part.url if len(part.url) <= 72 else part.url[:69] + "..."
        bits.append(url)
    if part.refs:
        bits.append("refs " + ", ".join(f"{k}={v}" for k, v in part.refs.items()))
    filename = getattr(part, "filename", None)
    if filename:
        bits.append(repr(filename))
    line = "[" + " · ".join(bits) + "]"
    if part.hint:
        line += f' "{part.hint}"'
    return line


def _kept_line(provider: str, element: Any) -> tuple[str, dict[str, Any]]:
    """The line of an element a normalizer kept whole for its provider: its type
    (or role) and the provider."""
    kind = _element_type(element) if isinstance(element, Mapping) else "element"
    return (f"[{kind} · kept whole for {provider}]", {"fg": "cyan", "dim": True})


def _content_lines(canister: Any) -> list[tuple[str, dict[str, Any]]]:
    """The lines of a canister's content, with the elements a normalizer kept
    whole on the canister itself (a server-tool block, an item or a message of
    a type it does not know) in their places."""
    content: tuple[Content, ...] = getattr(canister, "content", ())
    kept: list[tuple[int, tuple[str, dict[str, Any]]]] = []
    for provider, marks in canister.extras.items():
        if not isinstance(marks, Mapping):
            continue
        raw = marks.get("raw")
        if isinstance(raw, Mapping) and not content:  # (else its parts say it)
            kept.append((0, _kept_line(provider, dict(raw))))
        for entry in marks.get("opaque") or ():
            position, element = entry
            kept.append((int(position), _kept_line(provider, dict(element))))
    kept.sort(key=lambda pair: pair[0])
    lines: list[tuple[str, dict[str, Any]]] = []
    for number, part in enumerate(content):
        while kept and kept[0][0] <= number:
            lines.append(kept.pop(0)[1])
        lines.extend(_part_lines(part))
    lines.extend(line for _, line in kept)
    return lines


def _part_lines(part: Content) -> list[tuple[str, dict[str, Any]]]:
    """The lines of one content part, each with its click style."""
    held = _opaque(part)
    if held is not None:
        return [_kept_line(*held)]
    if isinstance(part, _PROVIDED):
        return _provided_lines(part)
    if isinstance(part, Text):
        lines = part.text.splitlines() or [""]
        if part.mime_type != "text/plain":
            lines[0] = f"({part.mime_type}) {lines[0]}"
        return [(line, {}) for line in lines]
    if isinstance(part, Media):
        return [(_media_line(part), {"fg": "cyan"})]
    if isinstance(part, Reasoning):
        dim = {"dim": True}
        if part.redacted is not None:
            by = f" by {part.provider}" if part.provider else ""
            head = f"[reasoning, redacted{by}, {len(part.redacted)} chars]"
        else:
            signed = f", signed by {part.provider}" if part.signature else ""
            head = f"[reasoning{signed}]"
        return [(head, dim)] + [(line, dim) for line in part.text.splitlines()]
    kind = getattr(part, "type", type(part).__name__)
    return [(f"[{kind}]", {"dim": True})]


_PROVIDED = (CitedText, ProviderToolCall, ProviderToolResult, Compaction)


def _source_text(source: Any) -> str:
    if isinstance(source, UrlSource):
        return f"{source.title or source.url} <{source.url}>"
    if isinstance(source, DocumentSource):
        name = source.title or f"document {source.document}"
        if source.unit is not None and source.start is not None:
            name += f" ({source.unit}s {source.start}-{source.end})"
        return name
    return f"{source.title or source.source} <{source.source}>"


def _provided_lines(part: Any) -> list[tuple[str, dict[str, Any]]]:
    """A cited text with its sources numbered under it; a tool the provider ran
    (its result indented under its call); a compaction and its summary."""
    dim = {"dim": True}
    if isinstance(part, CitedText):
        lines: list[tuple[str, dict[str, Any]]] = [
            (line, {}) for line in part.text.splitlines() or [""]
        ]
        for number, citation in enumerate(part.citations, 1):
            lines.append((f"  [{number}] {_source_text(citation.source)}", dim))
        return lines
    if isinstance(part, Compaction):
        head = f"[compaction by {part.provider or 'a provider'}]"
        return [(head, dim)] + [(line, dim) for line in part.summary.splitlines()]
    by = part.provider or "the provider"
    if isinstance(part, ProviderToolCall):
        asked = f" {_arguments(part.input)}" if part.input else ""
        return [(f"[{part.name} · run by {by}]{asked}", {"fg": "magenta"})]
    if part.is_error:
        return [(f"  └ {part.name} failed: {part.error or part.status}", dim)]
    lines = [(f"  └ {part.name} gave:", dim)]
    for hit in part.hits:
        age = f" · {hit.page_age}" if hit.page_age else ""
        lines.append((f"      {hit.title or ''} <{hit.url or ''}>{age}", dim))
    for text in (part.stdout, part.stderr):
        lines.extend((f"      {line}", dim) for line in (text or "").splitlines())
    if part.exit_code is not None:
        lines.append((f"      exit code {part.exit_code}", dim))
    if isinstance(part.output, str):
        lines.extend((f"      {line}", dim) for line in part.output.splitlines()[:20])
    return lines


def _echo_block(
    label: str, colour: str, lines: list[tuple[str, dict[str, Any]]]
) -> None:
    pad = " " * _LABEL_WIDTH
    head = click.style(label.ljust(_LABEL_WIDTH), fg=colour, bold=True)
    if not lines:
        lines = [("", {})]
    for number, (text, style) in enumerate(lines):
        shown = printable(text)
        styled = click.style(shown, **style) if style else shown
        click.echo((head if number == 0 else pad) + styled)


def _metadata_line(canister: Canister) -> str | None:
    metadata = canister.metadata
    if metadata is None:
        return None
    bits = []
    if metadata.model:
        bits.append(metadata.model)
    if metadata.finish_reason:
        bits.append(f"finish {metadata.finish_reason}")
    if metadata.usage is not None:
        usage = metadata.usage
        bits.append(f"{usage.input_tokens} in / {usage.output_tokens} out tokens")
    if metadata.latency_ms is not None:
        bits.append(f"{metadata.latency_ms:.0f} ms")
    return " · ".join(bits) if bits else None


def _arguments(arguments: Any) -> str:
    try:
        return json.dumps(dict(arguments), ensure_ascii=False, default=str)
    except (TypeError, ValueError):
        return repr(arguments)


def _echo_canister(canister: Canister) -> None:
    role = canister.role
    colour = _ROLE_COLOURS.get(role, "white")
    lines = _content_lines(canister)
    label = role.value if hasattr(role, "value") else str(role)
    if role is Role.Document:
        title = getattr(canister, "title", None)
        if title:
            lines.insert(0, (f"«{title}»", {"bold": True}))
    _echo_block(str(label).lower(), colour, lines)
    extra = _metadata_line(canister)
    if extra:
        click.echo(" " * _LABEL_WIDTH + click.style(printable(extra), dim=True))


def _echo_result(result: Any, indent: str = "  └ ") -> None:
    pad = " " * _LABEL_WIDTH
    if result.error is not None:
        head = click.style(f"{indent}error ", fg="red", bold=True)
        error = f"{result.error.code}: {result.error.message}"
        click.echo(pad + head + printable(error))
    lines = _content_lines(result)
    for number, (text, style) in enumerate(lines):
        lead = (
            indent + "result "
            if number == 0 and result.error is None
            else " " * (len(indent) + 7)
        )
        shown = printable(text)
        styled = click.style(shown, **style) if style else shown
        head = click.style(lead, fg="yellow") if number == 0 else lead
        click.echo(pad + head + styled)
    if not lines and result.error is None:
        click.echo(pad + click.style(indent + "result", fg="yellow") + " (empty)")


def render(conversation: Conversation, title: str) -> None:
    """Write a readable rendering of ``conversation`` to stdout."""
    canisters = conversation.canisters
    answers = {
        id(pair.result): pair.invocation for pair in conversation.pairs() if pair.result
    }
    paired = {
        pair.invocation.invocation_id: pair.result for pair in conversation.pairs()
    }
    steps = {c.step for c in canisters if c.step is not None}
    count = len(canisters)
    summary = f"{count} canister{'s' if count != 1 else ''}"
    if steps:
        summary += f", {len(steps)} step{'s' if len(steps) != 1 else ''}"
    click.echo(
        click.style(printable(title), bold=True)
        + click.style(f"  ({summary})", dim=True)
    )
    current: int | None = None
    for canister in canisters:
        if canister.role is Role.Result and id(canister) in answers:
            continue  # shown beneath its invocation
        if canister.step is not None and canister.step != current:
            current = canister.step
            click.echo(click.style(f"── step {printable(current)} ──", dim=True))
        if canister.role is Role.Invocation:
            invocation: Any = canister
            call = f"{invocation.name}({_arguments(invocation.arguments)})"
            _echo_block(
                "invocation",
                "yellow",
                [(call, {}), (f"id {invocation.invocation_id}", {"dim": True})],
            )
            result = paired.get(invocation.invocation_id)
            if result is None:
                pad = " " * _LABEL_WIDTH
                click.echo(pad + click.style("  └ pending: no result", fg="red"))
            else:
                _echo_result(result)
        elif canister.role is Role.Result:
            orphan: Any = canister
            _echo_block(
                "result",
                "red",
                [
                    (
                        f"{orphan.name}: no invocation {orphan.invocation_id!r}",
                        {"fg": "red"},
                    )
                ],
            )
            _echo_result(orphan)
        else:
            _echo_canister(canister)
    usage = conversation.usage()
    if usage.total_tokens or usage.cached_tokens:
        totals = (
            f"usage: {usage.input_tokens} input · {usage.output_tokens} output · "
            f"{usage.total_tokens} total tokens"
        )
        if usage.cached_tokens:
            totals += f" ({usage.cached_tokens} cached)"
        if usage.reasoning_tokens:
            totals += f" ({usage.reasoning_tokens} reasoning)"
    else:
        totals = "usage: none recorded"
    click.echo(click.style(totals, bold=True))
