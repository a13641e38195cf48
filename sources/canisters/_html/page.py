"""The writer of pages and notebook fragments (part of :mod:`canisters.html`).

Every string from a conversation goes through :func:`html.escape` before it
reaches the page; the page itself holds no script and forbids every script by
its Content-Security-Policy, so content that slips through escaping still
cannot run.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterable, Mapping
from datetime import datetime
from html import escape
from typing import Any, Final

import attrs

from ..content import File, Media, Reasoning, Text
from ..conversation import Conversation
from ..exceptions import CanistersError
from ..protocols import Canister, Content, Modality, Role
from ..provided import (
    CitedText,
    Compaction,
    ProviderToolCall,
    ProviderToolResult,
)
from . import media as _media
from . import provided as _provided
from .style import CSS, PAGE_CSS

BlobUrl = Callable[[str, Modality, str, bool], str]
"""``(content_id, modality, declared type, download)`` to the URL serving that
blob (embedded, or as a download)."""

_CSP_BASE: Final = (
    "default-src 'none'; style-src 'unsafe-inline'; base-uri 'none'; "
    "form-action {form}; frame-ancestors 'none'; img-src {media}; media-src {media}"
)


def content_security_policy(*, self_media: bool = False, remote: bool = False) -> str:
    """The page's policy: no script at all, styles inline, media from data URLs
    (and the serving origin, and remote ``http(s)`` when asked)."""
    media = ["data:"]
    if self_media:
        media.insert(0, "'self'")
    if remote:
        media += ["https:", "http:"]
    form = "'self'" if self_media else "'none'"
    return _CSP_BASE.format(media=" ".join(media), form=form)


@attrs.frozen
class Options:
    """How a page is written."""

    title: str | None = None
    content: Any = None  # something with get(content_id) -> bytes, or None
    remote_media: bool = False
    max_text: int = 1_000_000
    fold_text: int = 3_000
    max_media_bytes: int | None = None
    media_budget: int | None = None
    blob_url: BlobUrl | None = None
    limit: int | None = None
    max_field: int = 1_000_000
    max_size: int | None = None


_CHUNK: Final = 40
"""Messages per chunk the browser lays out or skips as one (steps are not cut):
skipping each message on its own costs every frame a check per message."""

_SHOWN: Final = object()
"""The result of a call whose id an earlier call has: shown beside that one."""

_SURROGATE: Final = re.compile("[\ud800-\udfff]")


def encodable(text: str) -> str:
    """``text`` with any lone surrogate (kept from a body's ``"\\ud800"``)
    replaced by U+FFFD, so the page can be written as UTF-8."""
    if _SURROGATE.search(text) is None:
        return text
    return _SURROGATE.sub("\ufffd", text)


_ROLE_CLASSES: Final = {
    Role.User: "cv-user",
    Role.Assistant: "cv-assistant",
    Role.Supervisor: "cv-supervisor",
    Role.Document: "cv-document",
    Role.Invocation: "cv-invocation",
    Role.Result: "cv-result",
}


_DEEPEST: Final = 100
"""How many levels of a value the page writes out (deeper ones are named)."""


def _json(value: Any) -> str:
    """``value`` written as indented JSON, bounded by :func:`_shown` (whether a
    deep value would raise depends on the Python: 3.13 writes 3,000 levels, and
    their indentation grows with the square of the depth)."""
    try:
        return json.dumps(_shown(value, 0), ensure_ascii=False, indent=2)
    except (TypeError, ValueError, RecursionError):
        return f"<a {type(value).__name__} that cannot be shown>"


def _shown(value: Any, depth: int) -> Any:
    """``value`` as JSON can write it: integers of more than 300 bits, and what
    lies deeper than :data:`_DEEPEST` levels, named instead."""
    if isinstance(value, (str, float, bool)) or value is None:
        return value
    if isinstance(value, int):
        return value if value.bit_length() <= 300 else _text(value)
    if depth >= _DEEPEST:
        return f"<{type(value).__name__} nested deeper than {_DEEPEST} levels>"
    if isinstance(value, Mapping):
        return {_text(key): _shown(item, depth + 1) for key, item in value.items()}
    if isinstance(value, (list, tuple, set, frozenset)):
        return [_shown(item, depth + 1) for item in value]
    return _shown(_plain(value), depth + 1)


def _text(value: object) -> str:
    """``str(value)``, never raising: an integer too long to write as digits
    is named by its size."""
    if isinstance(value, str):
        return value
    if isinstance(value, int) and value.bit_length() > 300:
        return f"<an integer of {value.bit_length():,} bits>"
    try:
        return str(value)
    except Exception:  # a foreign object whose str fails
        return f"<{type(value).__name__} object>"


def _plain(value: Any) -> Any:
    if isinstance(value, Mapping):
        return dict(value)
    if isinstance(value, (bytes, bytearray)):
        return f"<{len(value)} bytes>"
    if isinstance(value, datetime):
        return value.isoformat()
    if attrs.has(type(value)):
        return attrs.asdict(value, recurse=False)
    if isinstance(value, (set, frozenset, tuple)):
        return list(value)
    return str(value)


def human_size(count: int) -> str:
    """Format a byte count for people (``166 B``, ``4.9 KiB``)."""
    value = float(count)
    for unit in ("B", "KiB", "MiB", "GiB"):
        if value < 1024 or unit == "GiB":
            return f"{count} B" if unit == "B" else f"{value:.1f} {unit}"
        value /= 1024
    raise AssertionError("unreachable")  # pragma: no cover


class Writer:
    """Writes one conversation as HTML into a list of strings."""

    def __init__(self, options: Options) -> None:
        self.options = options
        self.out: list[str] = []
        self.media_left = options.media_budget
        self.size = 0
        self.counted = 0

    def cut(self, value: object) -> str:
        """``value`` as text, cut to the options' ``max_field`` characters."""
        text = _text(value)
        limit = self.options.max_field
        if len(text) <= limit:
            return text
        return f"{text[:limit]}… ({len(text) - limit:,} more characters)"

    def full(self) -> bool:
        """Whether the page has reached its ``max_size`` (counted as it grows)."""
        if self.options.max_size is None:
            return False
        out = self.out
        for index in range(self.counted, len(out)):
            self.size += len(out[index])
        self.counted = len(out)
        return self.size >= self.options.max_size

    # Text ------------------------------------------------------------------------

    def text(self, text: str, css: str = "cv-text") -> None:
        out = self.out
        fold, limit = self.options.fold_text, self.options.max_text
        if len(text) <= fold:
            out.append(f'<div class="{css}">{escape(text)}</div>')
            return
        out.append(f'<div class="{css}">{escape(text[:fold])}</div>')
        shown = text[fold:limit]
        out.append(
            f'<details class="cv-more"><summary>show all {len(text):,} '
            f'characters</summary><div class="{css}">{escape(shown)}</div>'
        )
        if len(text) > limit:
            out.append(
                f'<p class="cv-note">{len(text) - limit:,} more characters '
                "not shown</p>"
            )
        out.append("</details>")

    # Content ---------------------------------------------------------------------

    def part(self, part: Content) -> None:
        if isinstance(part, Text):
            if part.mime_type != "text/plain":
                tag = escape(self.cut(part.mime_type))
                self.out.append(f'<span class="cv-tag">{tag}</span>')
            self.text(part.text)
        elif isinstance(part, Reasoning):
            self.reasoning(part)
        elif isinstance(part, Media):
            self.media(part)
        else:
            kind = self.cut(getattr(part, "type", type(part).__name__))
            self.out.append(
                f'<div class="cv-card">content of type <b>{escape(kind)}</b></div>'
            )

    def provided(self, part: Content, following: tuple[Content, ...], at: int) -> int:
        """Write what a provider added (see :mod:`._html.provided`); the index
        of the next part when it is the result folded with this call."""
        if isinstance(part, CitedText):
            _provided.cited(self, part)
        elif isinstance(part, Compaction):
            _provided.compaction(self, part)
        elif isinstance(part, ProviderToolCall):
            result = following[0] if following else None
            if (
                isinstance(result, ProviderToolResult)
                and result.call_id == part.call_id
            ):
                _provided.tool(self, part, result)
                return at + 1
            _provided.tool(self, part, None)
        else:
            _provided.tool(self, None, part)  # type: ignore[arg-type]
        return -1

    def reasoning(self, part: Reasoning) -> None:
        bits = ["reasoning"]
        if part.text:
            bits.append(f"{len(part.text):,} characters")
        if part.redacted is not None:
            bits.append(
                f"redacted by {self.cut(part.provider)}, "
                f"{len(part.redacted):,} characters"
            )
        elif part.signature is not None:
            bits.append(f"signed by {self.cut(part.provider)}")
        self.out.append(
            f'<details class="cv-reasoning"><summary>{escape(" · ".join(bits))}'
            "</summary>"
        )
        if part.text:
            self.text(part.text)
        else:
            self.out.append('<p class="cv-note">no readable text</p>')
        self.out.append("</details>")

    def media(self, part: Media) -> None:
        modality = part.modality
        declared = part.mime_type
        data = part.data
        label = self.cut(modality.value if isinstance(modality, Modality) else modality)
        problem = ""
        src: str | None = None
        link: str | None = None
        size: int | None = None
        if data is None and part.url is not None:
            if part.url[:5].lower() == "data:":
                decoded = _media.decode_data_url(part.url)
                if decoded is None:
                    problem = "a malformed data: URL"
                else:
                    data, from_url = decoded
                    declared = declared or from_url
            else:
                link = _media.link_target(part.url)
                if link is not None and self.options.remote_media:
                    kind = _media.normal_type(declared) or ""
                    allowed = _media.EMBEDDABLE.get(modality, frozenset())
                    if modality is Modality.Image or kind in allowed:
                        src = link
        if data is None and part.content_id is not None:
            if self.options.blob_url is not None:
                kind = _media.normal_type(declared) or ""
                if modality in _media.EMBEDDABLE:
                    src = self.options.blob_url(part.content_id, modality, kind, False)
                link = self.options.blob_url(part.content_id, modality, kind, True)
            elif self.options.content is not None:
                try:
                    data = self.options.content.get(part.content_id)
                except CanistersError as error:
                    problem = f"stored blob unavailable: {error}"
            else:
                problem = "stored in a content store (not given)"
        if data is not None:
            size = len(data)
            embed, why = _media.embeddable_type(data, declared, modality)
            limit = self.options.max_media_bytes
            if embed is None:
                problem = why
            elif limit is not None and size > limit:
                problem = f"larger than {human_size(limit)}: not embedded here"
            elif self.media_left is not None and size > self.media_left:
                problem = "not embedded: the display's media budget is spent"
            elif (
                self.options.max_size is not None
                and not self.full()
                and (size * 4 // 3 > self.options.max_size - self.size)
            ):
                problem = "not embedded: the page would exceed its size limit"
            else:
                if self.media_left is not None:
                    self.media_left -= size
                src = _media.data_url(data, embed)
                declared = declared or embed
        self.figure(part, label, src, link, size, declared, problem)

    def figure(
        self,
        part: Media,
        label: str,
        src: str | None,
        link: str | None,
        size: int | None,
        declared: str | None,
        problem: str,
    ) -> None:
        out = self.out
        out.append(f'<figure class="cv-media cv-{escape(label)}">')
        if src is not None:
            alt = escape(part.hint or label, quote=True)
            if part.modality is Modality.Image:
                out.append(f'<img src="{escape(src, quote=True)}" alt="{alt}">')
            elif part.modality is Modality.Audio:
                out.append(
                    f'<audio controls preload="none" src="{escape(src, quote=True)}">'
                    "</audio>"
                )
            else:
                out.append(
                    f'<video controls preload="none" src="{escape(src, quote=True)}">'
                    "</video>"
                )
        caption = [f"<b>{escape(label)}</b>"]
        filename = part.filename if isinstance(part, File) else None
        if filename:
            caption.append(f'<b class="cv-filename">{escape(self.cut(filename))}</b>')
        caption.append(escape(self.cut(declared or "type unknown")))
        if size is not None:
            caption.append(human_size(size))
        if part.content_id is not None:
            caption.append(f"<code>{escape(part.content_id[:23])}…</code>")
        if part.hint:
            caption.append(f"“{escape(self.cut(part.hint))}”")
        if part.refs:
            refs = ", ".join(f"{k}: {v}" for k, v in part.refs.items())
            caption.append(f"refs {escape(self.cut(refs))}")
        body = " · ".join(caption)
        if link is not None:
            anchor = _short(link) if part.url is not None else "download"
            body += (
                f' · <a href="{escape(link, quote=True)}" rel="noopener noreferrer '
                f'nofollow" target="_blank">{escape(anchor)}</a>'
            )
        elif part.url is not None and part.url[:5].lower() != "data:" and link is None:
            body += f" · <code>{escape(_short(part.url))}</code>"
        if problem:
            body += f' · <span class="cv-note">{escape(self.cut(problem))}</span>'
        css = "cv-card" if src is None else ""
        out.append(f'<figcaption class="{css}">{body}</figcaption></figure>')

    # Canisters -------------------------------------------------------------------

    def envelope(self, canister: Canister, extra: list[tuple[str, str]]) -> None:
        rows: list[tuple[str, str]] = [("id", canister.id)]
        timestamp = canister.timestamp
        rows.append(("timestamp", timestamp.isoformat()))
        for name in ("parent_id", "trace_id", "policy", "step"):
            value = getattr(canister, name, None)
            if value is not None:
                rows.append((name, _text(value)))
        rows.extend(extra)
        metadata = canister.metadata
        if metadata is not None:
            rows.append(("metadata", _json(_plain(metadata))))
        extras = getattr(canister, "extras", None)
        if extras:
            rows.append(("extras", _json(extras)))
        cells = "".join(
            f"<dt>{escape(name)}</dt><dd>{escape(self.cut(value))}</dd>"
            for name, value in rows
        )
        self.out.append(
            f'<details class="cv-envelope"><summary>envelope</summary><dl>{cells}'
            "</dl></details>"
        )

    def head(self, canister: Canister, label: str, tags: str = "") -> None:
        bits = [f'<span class="cv-role">{escape(label)}</span>']
        stamp = canister.timestamp.isoformat(sep=" ", timespec="seconds")
        bits.append(f"<time>{escape(stamp)}</time>")
        metadata = canister.metadata
        if metadata is not None:
            if metadata.model:
                bits.append(f"<span>{escape(self.cut(metadata.model))}</span>")
            usage = metadata.usage
            if usage is not None:
                bits.append(
                    f"<span>{usage.input_tokens:,} in · {usage.output_tokens:,} out"
                    "</span>"
                )
            if metadata.latency_ms is not None:
                bits.append(f"<span>{metadata.latency_ms:,.0f} ms</span>")
            if metadata.finish_reason:
                reason = escape(self.cut(metadata.finish_reason))
                bits.append(f"<span>finish {reason}</span>")
        if canister.policy:
            bits.append(f"<span>policy {escape(self.cut(canister.policy))}</span>")
        self.out.append(f'<div class="cv-head">{"".join(bits)}{tags}</div>')

    def canister(
        self, canister: Canister, tags: str = "", tags_of_call: str = ""
    ) -> None:
        role = canister.role
        css = _ROLE_CLASSES.get(role, "cv-other")
        value = role.value if isinstance(role, Role) else str(role)
        label = self.cut(value).lower()
        extra: list[tuple[str, str]] = []
        if role is Role.Result and getattr(canister, "error", None) is not None:
            css += " cv-error"
        self.out.append(
            f'<article class="cv-msg {css}" data-role="{escape(label, quote=True)}" '
            f'data-id="{escape(self.cut(canister.id), quote=True)}">'
        )
        self.head(canister, label, tags)
        out = self.out
        if role is Role.Invocation:
            invocation: Any = canister
            extra.append(("invocation_id", _text(invocation.invocation_id)))
            name = escape(self.cut(invocation.name))
            out.append(f'<div class="cv-call"><b>{name}</b>{tags_of_call}</div>')
            self.text(_json(invocation.arguments), "cv-code")
        elif role is Role.Result:
            result: Any = canister
            extra.append(("invocation_id", _text(result.invocation_id)))
            error = result.error
            if error is not None:
                code = escape(self.cut(error.code))
                out.append(
                    f'<div class="cv-error-text"><b>{code}</b>: '
                    f"{escape(self.cut(error.message))}"
                    f"{' (retryable)' if error.retryable else ''}</div>"
                )
                if error.details:
                    self.text(_json(error.details), "cv-code")
        elif role is Role.Document:
            title = getattr(canister, "title", None)
            document_id = getattr(canister, "document_id", None)
            if title:
                out.append(
                    f'<div class="cv-title"><b>{escape(self.cut(title))}</b></div>'
                )
            if document_id:
                extra.append(("document_id", _text(document_id)))
        parts = tuple(getattr(canister, "content", ()))
        folded = -1  # a provider's tool result written with its call
        for number, part in enumerate(parts):
            if number == folded:
                continue
            if self.full():
                out.append(
                    f'<p class="cv-note">{len(parts) - number:,} more parts not '
                    "shown: the page reached its size limit</p>"
                )
                break
            if isinstance(part, _provided.PROVIDED):
                folded = self.provided(part, parts[number + 1 : number + 2], number)
                continue
            self.part(part)
        self.envelope(canister, extra)
        out.append("</article>")

    def pair(self, invocation: Any, result: Any | None, sharing: int = 1) -> None:
        """Write a call beside its result; ``sharing``: how many calls have its
        id (the result is written beside the first of them only)."""
        invocation_id = escape(self.cut(invocation.invocation_id), quote=True)
        self.out.append(f'<div class="cv-pair" data-invocation-id="{invocation_id}">')
        shared = ""
        if sharing > 1:
            shared = (
                f' <span class="cv-tag cv-tag-error">id shared by {sharing:,} '
                "calls</span>"
            )
        self.canister(invocation, tags_of_call=shared)
        if result is _SHOWN:
            self.out.append(
                '<div class="cv-pending"><span class="cv-tag cv-tag-error">shared id'
                "</span> its result is shown beside the first call with this id</div>"
            )
        elif result is None:
            self.out.append(
                '<div class="cv-pending"><span class="cv-tag cv-tag-pending">'
                "pending</span> no result recorded for this call</div>"
            )
        else:
            tags = ""
            if result.error is not None:
                tags = '<span class="cv-tag cv-tag-error">error</span>'
            self.canister(result, tags)
        self.out.append("</div>")

    def conversation(self, canisters: tuple[Canister, ...]) -> None:
        """Write the messages: grouped by step, each call beside its result."""
        answers: dict[str, Any] = {}
        invoked: dict[str, int] = {}
        for canister in canisters:
            if canister.role is Role.Invocation:
                invocation_id = canister.invocation_id  # type: ignore[attr-defined]
                invoked[invocation_id] = invoked.get(invocation_id, 0) + 1
            elif canister.role is Role.Result:
                answers.setdefault(canister.invocation_id, canister)  # type: ignore[attr-defined]
        shown = canisters
        limit = self.options.limit
        if limit is not None and len(shown) > limit:
            shown = shown[:limit]
        out = self.out
        current: int | None = None
        open_step = False
        out.append('<div class="cv-chunk">')
        in_chunk = 0
        placed: set[str] = set()  # the calls whose result is written
        written = 0
        for canister in shown:
            if self.full():
                break
            written += 1
            role = canister.role
            if role is Role.Result:
                invocation_id = canister.invocation_id  # type: ignore[attr-defined]
                if invocation_id in invoked and answers.get(invocation_id) is canister:
                    continue  # written beside its invocation
            step = canister.step
            if step != current or step is None:
                if open_step:
                    out.append("</section>")
                    open_step = False
                if in_chunk >= _CHUNK:
                    out.append('</div><div class="cv-chunk">')
                    in_chunk = 0
                current = step
                if step is not None:
                    number = escape(self.cut(step), quote=True)
                    out.append(
                        f'<section class="cv-step" data-step="{number}">'
                        f'<h2 class="cv-step-head">step {number}</h2>'
                    )
                    open_step = True
            if role is Role.Invocation:
                invocation_id = canister.invocation_id  # type: ignore[attr-defined]
                answer = (
                    _SHOWN if invocation_id in placed else answers.get(invocation_id)
                )
                placed.add(invocation_id)
                self.pair(canister, answer, invoked[invocation_id])
            elif role is Role.Result:
                tags = '<span class="cv-tag cv-tag-error">no invocation</span>'
                if canister.error is not None:  # type: ignore[attr-defined]
                    tags += '<span class="cv-tag cv-tag-error">error</span>'
                self.canister(canister, tags)
            else:
                self.canister(canister)
            in_chunk += 1
        if open_step:
            out.append("</section>")
        out.append("</div>")
        if written < len(shown):
            out.append(
                f'<p class="cv-note">{len(canisters) - written:,} more canisters '
                "not shown: the page reached its size limit of "
                f"{self.options.max_size:,} characters</p>"
            )
        elif len(shown) < len(canisters):
            out.append(
                f'<p class="cv-note">{len(canisters) - len(shown):,} more canisters '
                "not shown here; canisters.html.render(conversation) writes them "
                "all</p>"
            )

    def summary(self, conversation: Conversation) -> None:
        canisters = conversation.canisters
        count = len(canisters)
        steps = {c.step for c in canisters if c.step is not None}
        pending = len(conversation.pending_invocations())
        bits = [f"<b>{count:,}</b> canister{'s' if count != 1 else ''}"]
        if steps:
            bits.append(f"<b>{len(steps):,}</b> step{'s' if len(steps) != 1 else ''}")
        calls = sum(1 for c in canisters if c.role is Role.Invocation)
        if calls:
            bits.append(f"<b>{calls:,}</b> tool call{'s' if calls != 1 else ''}")
        if pending:
            bits.append(f'<span class="cv-tag cv-tag-pending">{pending} pending</span>')
        models = sorted(
            {c.metadata.model for c in canisters if c.metadata and c.metadata.model}
        )
        if models:
            bits.append(escape(self.cut(", ".join(models))))
        usage = conversation.usage()
        if usage.total_tokens or usage.cached_tokens:
            tokens = (
                f"usage <b>{usage.input_tokens:,}</b> in · "
                f"<b>{usage.output_tokens:,}</b> out · "
                f"<b>{usage.total_tokens:,}</b> tokens"
            )
            if usage.cached_tokens:
                tokens += f" ({usage.cached_tokens:,} cached)"
            if usage.reasoning_tokens:
                tokens += f" ({usage.reasoning_tokens:,} reasoning)"
            bits.append(f'<span class="cv-usage-total">{tokens}</span>')
        else:
            bits.append('<span class="cv-usage-total">usage: none recorded</span>')
        self.out.append(f'<p class="cv-summary">{" · ".join(bits)}</p>')


def _short(url: str) -> str:
    return url if len(url) <= 80 else url[:77] + "..."


def as_conversation(value: Any) -> Conversation:
    """Return ``value`` (a conversation, canister or iterable of canisters) as a
    conversation."""
    if isinstance(value, Conversation):
        return value
    if isinstance(getattr(value, "role", None), Role):
        return Conversation((value,))
    if isinstance(value, Iterable) and not isinstance(value, (str, bytes)):
        return Conversation(tuple(value))
    from ..exceptions import ModelError

    raise ModelError(
        "html.render takes a conversation, a canister or an iterable of canisters, "
        f"got {type(value).__name__}"
    )


def body(conversation: Conversation, options: Options, preamble: str = "") -> str:
    """Return the ``<div class="canisters-view">`` holding the whole view."""
    writer = Writer(options)
    out = writer.out
    out.append('<div class="canisters-view">')
    if options.title is not None:
        out.append(f"<h1>{escape(writer.cut(options.title))}</h1>")
    writer.summary(conversation)
    out.append(preamble)
    out.append('<main class="cv-messages">')
    writer.conversation(conversation.canisters)
    out.append("</main></div>")
    return encodable("".join(out))


def page(
    conversation: Conversation,
    options: Options,
    *,
    preamble: str = "",
    self_media: bool = False,
) -> str:
    """Return a whole HTML document showing ``conversation``."""
    policy = content_security_policy(self_media=self_media, remote=options.remote_media)
    title = (options.title or "conversation")[: options.max_field]
    return (
        '<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
        f'<meta http-equiv="Content-Security-Policy" content="{policy}">'
        '<meta name="referrer" content="no-referrer">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        f"<title>{escape(encodable(title))}</title><style>{PAGE_CSS}{CSS}</style>"
        "</head><body>"
        f"{body(conversation, options, preamble)}</body></html>\n"
    )


def fragment(conversation: Conversation, options: Options) -> str:
    """Return the view as a fragment for notebooks: its style sheet inline."""
    return f"<style>{CSS}</style>{body(conversation, options)}"
