"""See a conversation: one self-contained HTML page, and rich notebook display.

::

    from canisters import html

    page = html.render(conversation, title="run 42", store=store)
    Path("run-42.html").write_text(page, encoding="utf-8")

The page needs nothing but itself: its styles are inline, its images, audio
and video are ``data:`` URLs (from the parts' bytes, their ``data:`` URLs or the
blobs of the store given), and remote URLs are links that load nothing unless
``remote_media=True``. Roles are told apart by colour and label, canisters are
grouped by ``step``, each tool call sits beside its result (errors and pending
calls marked), reasoning is folded in a ``<details>``, documents and files show
their name, type and size, the summary totals the token usage, and each
canister's envelope (ids, timestamps, policy, trace and parent ids, metadata)
is one click away.

Content is treated as hostile. Every string is escaped; media are embedded
only as the types of :data:`EMBEDDABLE` (images only when their bytes are a
raster format: SVG and HTML never are); links are made only to ``http(s)``
URLs; and the page's Content-Security-Policy forbids every script, so nothing
a conversation holds can run. The page uses no script of its own.

:class:`~canisters.Conversation` and every canister class have
``_repr_html_``, so notebooks (Jupyter and others) show them this way. A
notebook display is a fragment of the notebook's page, which can carry no
Content-Security-Policy: there the safety rests on escaping alone. That
display is bounded (the first canisters, every text and field shortened, a
media budget, 8 MiB in all).

A call is written beside its result; calls that share an id are marked, and
the result is written once, beside the first of them. A page holds at most
:data:`PAGE_LIMIT` characters.
"""

from __future__ import annotations

from typing import Any, Final

from ..exceptions import ModelError
from ..protocols import Modality
from . import _media
from ._page import Options, as_conversation, fragment, page

__all__ = ["EMBEDDABLE", "NOTEBOOK_LIMIT", "PAGE_LIMIT", "render"]

EMBEDDABLE: Final[dict[Modality, frozenset[str]]] = _media.EMBEDDABLE
"""The media types a page embeds, per modality (documents are never embedded);
images also need the bytes of a raster format."""

NOTEBOOK_LIMIT: Final = 200
"""The most canisters a notebook display shows (the page shows them all)."""

PAGE_LIMIT: Final = 64 * 1024 * 1024
"""About the most characters a page holds (64 MiB): past it, the rest of the
canisters are counted, not written, and media that would pass it are not
embedded. The viewer's pages are held to it too."""

_NOTEBOOK_TEXT: Final = 20_000
_NOTEBOOK_FIELD: Final = 2_000
_NOTEBOOK_SIZE: Final = 8 * 1024 * 1024
_NOTEBOOK_MEDIA: Final = 1024 * 1024
_NOTEBOOK_MEDIA_BUDGET: Final = 4 * 1024 * 1024


def render(
    conversation: Any,
    *,
    title: str | None = None,
    store: Any = None,
    remote_media: bool = False,
    max_text: int = 1_000_000,
) -> str:
    """Return one self-contained HTML page showing ``conversation``.

    ``conversation`` is a :class:`~canisters.Conversation`, one canister or an
    iterable of canisters. ``title`` heads the page. ``store`` (a
    :class:`~canisters.storage.Store` or its
    :class:`~canisters.storage.ContentStore`) resolves media held by
    ``content_id``; without it such media show as a card. ``remote_media``
    lets images, audio and video at ``http(s)`` URLs load from their servers
    (the page then makes those requests); by default they are links.
    ``max_text`` bounds the characters shown of one text (the rest is counted,
    not shown); texts longer than a few thousand characters are folded.
    """
    if not isinstance(max_text, int) or isinstance(max_text, bool) or max_text < 1:
        raise ModelError(f"max_text must be a positive int, got {max_text!r}")
    if title is not None and not isinstance(title, str):
        raise ModelError(f"title must be a string, got {type(title).__name__}")
    content = getattr(store, "content", store)
    if content is not None and not callable(getattr(content, "get", None)):
        raise ModelError(
            f"store must be a Store or a ContentStore, got {type(store).__name__}"
        )
    options = Options(
        title=title,
        content=content,
        remote_media=bool(remote_media),
        max_text=max_text,
        fold_text=min(3_000, max_text),
        max_field=max_text,
        max_size=PAGE_LIMIT,
    )
    return page(as_conversation(conversation), options)


def _notebook(value: Any) -> str:
    """The bounded fragment ``_repr_html_`` returns (see :data:`NOTEBOOK_LIMIT`)."""
    options = Options(
        max_text=_NOTEBOOK_TEXT,
        fold_text=2_000,
        max_media_bytes=_NOTEBOOK_MEDIA,
        media_budget=_NOTEBOOK_MEDIA_BUDGET,
        limit=NOTEBOOK_LIMIT,
        max_field=_NOTEBOOK_FIELD,
        max_size=_NOTEBOOK_SIZE,
    )
    return fragment(as_conversation(value), options)
