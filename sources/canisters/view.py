"""A local, read-only web app over a store: ``canisters view LOCATION``.

::

    from canisters import storage, view

    with storage.open_store("conversations", read_only=True) as store:
        view.serve(store, port=8765)          # http://127.0.0.1:8765/

The app lists the store's conversations (paged, newest first, filtered by id),
searches their text (:meth:`~canisters.storage.Store.search`, at ``/search``)
and shows each one as :func:`canisters.html.render` does, with the forks it
came from and led to, the result of :meth:`~canisters.storage.Store.verify`
and a download of its JSON document. It needs the ``view`` extra
(``pip install 'canisters[view]'``: Starlette and Uvicorn).

Its handlers are plain functions, which Starlette runs in worker threads: a
store call that blocks holds one request, never the server.

It only reads: the store is used through its read methods, every request
other than ``GET`` or ``HEAD`` is refused, and nothing is served but
conversations and blobs named by their checked ids, never a file by path.
It answers only requests whose ``Host`` header names the address it serves
(a page elsewhere cannot reach it by pointing a DNS name at 127.0.0.1), and
every response carries a Content-Security-Policy that forbids scripts.
"""

from __future__ import annotations

import ipaddress
import math
import socket
import threading
import urllib.parse
import webbrowser
from collections.abc import Awaitable, Callable, MutableMapping, Sequence
from html import escape
from typing import Any, Final

from .content import CONTENT_ID_PATTERN
from .exceptions import (
    CanistersError,
    ContentNotFound,
    ConversationNotFound,
    MissingExtra,
)
from .html import PAGE_LIMIT, _catalog, _media
from .html._page import Options, content_security_policy, encodable, page
from .html._style import CSS, PAGE_CSS
from .protocols import Modality
from .serialization import to_json
from .storage import InvalidIdentifier, SearchHit, Store

__all__ = [
    "DEFAULT_PORT",
    "PAGE_SIZE",
    "SEARCH_HITS",
    "allowed_hosts",
    "create_app",
    "serve",
    "shown_location",
]

DEFAULT_PORT: Final = 8765
"""The port ``canisters view`` listens on unless told otherwise."""
PAGE_SIZE: Final = 50
"""Conversations per page of the list."""
SEARCH_HITS: Final = 100
"""Hits shown for a search of the store's text."""
_SEARCH_FORM: Final = (
    '<form method="get" action="/search"><input name="s" '
    'placeholder="search the text" value="{value}"> <button>search</button></form>'
)


def _marked(hit: SearchHit) -> str:
    """A hit's snippet as HTML, each match in ``<mark>``."""
    pieces, last = [], 0
    for start, end in hit.marks:
        pieces.append(escape(hit.snippet[last:start]))
        pieces.append(f"<mark>{escape(hit.snippet[start:end])}</mark>")
        last = end
    pieces.append(escape(hit.snippet[last:]))
    return "".join(pieces)


_Scope = MutableMapping[str, Any]
_Message = MutableMapping[str, Any]
_Receive = Callable[[], Awaitable[_Message]]
_Send = Callable[[_Message], Awaitable[None]]
_ASGI = Callable[[_Scope, _Receive, _Send], Awaitable[None]]

_MODALITIES: Final = {
    m.value: m for m in (Modality.Image, Modality.Audio, Modality.Video)
}


def _starlette() -> Any:
    try:
        import starlette.applications
        import starlette.responses
        import starlette.routing
    except ImportError as error:
        raise MissingExtra("starlette", "view") from error
    return starlette


def allowed_hosts(host: str, port: int) -> frozenset[str]:
    """Return the ``Host`` header values a server at ``host:port`` answers."""
    names = {host}
    if host in ("127.0.0.1", "::1", "localhost"):
        names |= {"127.0.0.1", "localhost", "[::1]"}
    if ":" in host and not host.startswith("["):
        names.add(f"[{host}]")
    values = {f"{name}:{port}" for name in names if ":" not in name or "]" in name}
    if port == 80:
        values |= {name for name in names if ":" not in name or "]" in name}
    return frozenset(values)


def _everywhere(host: str) -> bool:
    """Whether serving on ``host`` binds every interface: an empty host, or one
    the system resolves to an unspecified address, however it is spelled
    (``0``, ``000.000.000.000``, ``::0``, ``0:0:0:0:0:0:0:0``)."""
    name = host.strip()
    if name.startswith("[") and name.endswith("]"):
        name = name[1:-1]
    if not name:
        return True
    try:
        found = socket.getaddrinfo(name, None, type=socket.SOCK_STREAM)
    except (OSError, UnicodeError, ValueError):
        return False  # the server cannot bind it either, and says so
    for *_, address in found:
        try:
            ip = ipaddress.ip_address(str(address[0]).split("%", 1)[0])
        except ValueError:
            continue
        mapped = getattr(ip, "ipv4_mapped", None)
        if ip.is_unspecified or (mapped is not None and mapped.is_unspecified):
            return True
    return False


def shown_location(location: str) -> str:
    """``location`` as the viewer shows it: a URL without its user
    information (``postgresql://app:pw@db/chat`` is ``postgresql://db/chat``)
    and without its query, which may hold a password too."""
    if "://" not in location:
        return location
    try:
        parts = urllib.parse.urlsplit(location)
        host = parts.netloc.rpartition("@")[2]
    except ValueError:
        return location.split("://", 1)[0] + "://…"
    return f"{parts.scheme}://{host}{parts.path}"


def _guard(app: _ASGI, hosts: frozenset[str]) -> _ASGI:
    """Refuse requests for other hosts; put the security headers on every answer."""
    policy = content_security_policy(self_media=True).encode("ascii")
    headers = [
        (b"content-security-policy", policy),
        (b"x-content-type-options", b"nosniff"),
        (b"referrer-policy", b"no-referrer"),
        (b"x-frame-options", b"DENY"),
        (b"cross-origin-resource-policy", b"same-origin"),
    ]

    async def guarded(scope: _Scope, receive: _Receive, send: _Send) -> None:
        if scope["type"] != "http":
            await app(scope, receive, send)
            return
        host = ""
        for name, value in scope.get("headers", ()):
            if name == b"host":
                host = value.decode("latin-1").lower()
                break

        async def secured(message: _Message) -> None:
            if message["type"] == "http.response.start":
                message["headers"] = [*message.get("headers", ()), *headers]
            await send(message)

        if host not in hosts:
            body = b"refused: this server answers only for " + ", ".join(
                sorted(hosts)
            ).encode("ascii")
            await secured(
                {
                    "type": "http.response.start",
                    "status": 421,
                    "headers": [
                        (b"content-type", b"text/plain; charset=utf-8"),
                        (b"content-length", str(len(body)).encode("ascii")),
                    ],
                }
            )
            await secured({"type": "http.response.body", "body": body})
            return
        await app(scope, receive, secured)

    return guarded


def create_app(
    store: Store,
    *,
    hosts: Sequence[str],
    location: str | None = None,
    title: str | None = None,
) -> Any:
    """Return the ASGI app serving ``store`` read-only.

    ``hosts`` are the ``Host`` header values it answers (``127.0.0.1:8765``);
    any other is refused with status 421. ``title`` (else ``location``, the
    store's URL) names the store in the pages.
    """
    starlette = _starlette()
    responses = starlette.responses
    catalog = _catalog.Catalog(store)
    name = title or (shown_location(location) if location else "store")

    def html_page(content: str, status: int = 200) -> Any:
        return responses.HTMLResponse(content, status_code=status)

    def frame(heading: str, inner: str) -> str:
        policy = content_security_policy(self_media=True)
        return encodable(
            '<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
            f'<meta http-equiv="Content-Security-Policy" content="{policy}">'
            '<meta name="referrer" content="no-referrer">'
            f"<title>{escape(heading)}</title><style>{PAGE_CSS}{CSS}</style></head>"
            f'<body><div class="canisters-view">{inner}</div></body></html>\n'
        )

    def not_found(what: str) -> Any:
        return html_page(
            frame(
                "not found",
                f'<nav><a href="/">all conversations</a></nav>'
                f'<p class="cv-panel cv-bad">{escape(what)}</p>',
            ),
            404,
        )

    def listing(request: Any) -> Any:
        query = request.query_params.get("q", "")[:200]
        try:
            number = max(1, int(request.query_params.get("page", "1")))
        except ValueError:
            number = 1
        rows = [row for row in catalog.rows() if query.lower() in row.id.lower()]
        pages = max(1, math.ceil(len(rows) / PAGE_SIZE))
        number = min(number, pages)
        shown = rows[(number - 1) * PAGE_SIZE : number * PAGE_SIZE]
        lines = []
        for row in shown:
            link = f"/c/{urllib.parse.quote(row.id)}"
            if row.problem is not None:
                detail = f'<span class="cv-note">{escape(row.problem)}</span>'
            else:
                detail = f"{row.records:,} records" if row.records is not None else ""
            latest = (
                escape(row.latest.isoformat(sep=" ", timespec="seconds"))
                if row.latest
                else ""
            )
            origin = _catalog.origin(store, row.id)
            fork = ""
            if origin is not None:
                fork = (
                    f'fork of <a href="/c/{urllib.parse.quote(origin.parent)}">'
                    f"{escape(origin.parent)}</a>"
                )
            lines.append(
                f'<tr><td class="cv-id"><a href="{escape(link, quote=True)}">'
                f"{escape(row.id)}</a></td><td>{detail}</td><td>{latest}</td>"
                f"<td>{fork}</td></tr>"
            )
        nav = []
        for target, label in ((number - 1, "newer"), (number + 1, "older")):
            if 1 <= target <= pages:
                href = "/?" + urllib.parse.urlencode({"q": query, "page": target})
                nav.append(f'<a href="{escape(href, quote=True)}">{label}</a>')
        inner = (
            f"<h1>{escape(name)}</h1>"
            f'<p class="cv-summary"><b>{len(rows):,}</b> conversation'
            f"{'s' if len(rows) != 1 else ''}"
            f"{' matching' if query else ''} · page {number} of {pages}</p>"
            '<form method="get" action="/"><input name="q" placeholder="filter by id" '
            f'value="{escape(query, quote=True)}"> <button>filter</button></form>'
            + _SEARCH_FORM.format(value="")
            + "<table><thead><tr><th>conversation</th><th>records</th>"
            "<th>last canister</th><th>fork</th></tr></thead><tbody>"
            + "".join(lines)
            + f'</tbody></table><nav class="cv-pages">{" · ".join(nav)}</nav>'
        )
        return html_page(frame(name, inner))

    def searching(request: Any) -> Any:
        query = request.query_params.get("s", "")[:200]
        try:
            hits = store.search(query, limit=SEARCH_HITS)
        except CanistersError as error:  # no word, no index: said on the page
            hits, problem = [], f'<p class="cv-panel cv-bad">{escape(str(error))}</p>'
        else:
            problem = ""
        rows = "".join(
            '<tr><td class="cv-id"><a href="/c/'
            f'{urllib.parse.quote(hit.conversation_id)}">'
            f"{escape(hit.conversation_id)}</a></td><td>{escape(hit.kind)}</td>"
            f"<td>{_marked(hit)}</td></tr>"
            for hit in hits
        )
        more = f" (the first {SEARCH_HITS})" if len(hits) == SEARCH_HITS else ""
        inner = (
            f'<nav><a href="/">all conversations</a></nav><h1>{escape(name)}</h1>'
            + _SEARCH_FORM.format(value=escape(query, quote=True))
            + problem
            + f'<p class="cv-summary"><b>{len(hits)}</b> hit'
            f"{'s' if len(hits) != 1 else ''}"
            f"{more}"
            "</p><table><thead><tr><th>conversation</th><th>kind</th><th>text</th>"
            f"</tr></thead><tbody>{rows}</tbody></table>"
        )
        return html_page(frame(f"search: {query}", inner))

    def blob_url(content_id: str, modality: Modality, declared: str, load: bool) -> str:
        query = {"as": str(modality.value)}
        if declared:
            query["type"] = declared
        if load:
            query["download"] = "1"
        return f"/blob/{content_id}?{urllib.parse.urlencode(query)}"

    def conversation(request: Any) -> Any:
        cid = request.path_params["cid"]
        try:
            loaded = store.load(cid, salvage=True)
            verification = store.verify(cid)
        except (ConversationNotFound, InvalidIdentifier):
            return not_found(f"no conversation {cid!r} in this store")
        except CanistersError as error:
            return responses.PlainTextResponse(
                f"cannot read {cid}: {error}", status_code=409
            )
        quoted = urllib.parse.quote(cid)
        parts = [
            '<nav><a href="/">all conversations</a> · '
            f'<a href="/c/{quoted}/document.json" download>download the document'
            "</a></nav>"
        ]
        if verification.ok:
            parts.append(
                '<p class="cv-panel cv-ok cv-verified">hash chain intact: '
                f"{verification.records:,} records, head "
                f"<code>{escape(verification.head[:16])}</code></p>"
            )
        else:
            problems = "".join(
                f"<li>{escape(str(problem))}</li>" for problem in verification.problems
            )
            parts.append(
                '<div class="cv-panel cv-bad cv-verified"><b>verification found '
                f"{len(verification.problems)} problem"
                f"{'s' if len(verification.problems) != 1 else ''}</b> "
                f"(the readable records are shown)<ul>{problems}</ul></div>"
            )
        origin = _catalog.origin(store, cid)
        forks = []
        if origin is not None:
            forks.append(
                f'forked from <a href="/c/{urllib.parse.quote(origin.parent)}">'
                f"{escape(origin.parent)}</a> at canister <code>"
                f"{escape(origin.at)}</code>"
            )
        for fork in _catalog.forks(store, cid):
            child = fork.conversation_id
            forks.append(
                f'fork <a href="/c/{urllib.parse.quote(child)}">{escape(child)}</a>'
                f" at canister <code>{escape(fork.at)}</code>"
            )
        if forks:
            parts.append(
                '<div class="cv-panel cv-forks">' + "<br>".join(forks) + "</div>"
            )
        options = Options(
            title=f"conversation {cid}", blob_url=blob_url, max_size=PAGE_LIMIT
        )
        return html_page(
            page(loaded, options, preamble="".join(parts), self_media=True)
        )

    def document(request: Any) -> Any:
        cid = request.path_params["cid"]
        try:
            loaded = store.load(cid)
        except (ConversationNotFound, InvalidIdentifier):
            return not_found(f"no conversation {cid!r} in this store")
        except CanistersError as error:
            return responses.PlainTextResponse(
                f"cannot load {cid}: {error}", status_code=409
            )
        return responses.Response(
            to_json(loaded),
            media_type="application/json",
            headers={"content-disposition": f'attachment; filename="{cid}.json"'},
        )

    def blob(request: Any) -> Any:
        content_id = request.path_params["content_id"]
        if CONTENT_ID_PATTERN.fullmatch(content_id) is None:
            return not_found("not a content id")
        try:
            data = store.content.get(content_id)
        except ContentNotFound:
            return not_found(f"no blob {content_id} in this store")
        except CanistersError as error:
            return responses.PlainTextResponse(str(error), status_code=409)
        modality = _MODALITIES.get(request.query_params.get("as", ""))
        kind = None
        if modality is not None and not request.query_params.get("download"):
            kind, _why = _media.embeddable_type(
                data, request.query_params.get("type"), modality
            )
        if kind is None:
            digest = content_id.split(":", 1)[1][:16]
            return responses.Response(
                data,
                media_type="application/octet-stream",
                headers={"content-disposition": f'attachment; filename="{digest}.bin"'},
            )
        return responses.Response(data, media_type=kind)

    routing = starlette.routing
    routes = [
        routing.Route("/", listing, methods=["GET"]),
        routing.Route("/search", searching, methods=["GET"]),
        routing.Route("/c/{cid}", conversation, methods=["GET"]),
        routing.Route("/c/{cid}/document.json", document, methods=["GET"]),
        routing.Route("/blob/{content_id}", blob, methods=["GET"]),
    ]
    app = starlette.applications.Starlette(routes=routes)
    return _guard(app, frozenset(h.lower() for h in hosts))


def serve(
    store: Store,
    *,
    host: str = "127.0.0.1",
    port: int = DEFAULT_PORT,
    location: str | None = None,
    open_browser: bool = False,
    start: str = "/",
    ready: Callable[[str], None] | None = None,
) -> None:
    """Serve ``store`` read-only at ``http://host:port/`` until interrupted.

    ``open_browser`` opens ``start`` (a path of the app) in the default
    browser once the server listens; ``ready`` is called with the URL then.
    """
    _starlette()
    if _everywhere(host):
        raise CanistersError(
            f"give the address to serve on, not {host or 'an empty one'!r}: the "
            "server answers only requests that name the address it serves"
        )
    try:
        import uvicorn
    except ImportError as error:
        raise MissingExtra("uvicorn", "view") from error
    app = create_app(store, hosts=sorted(allowed_hosts(host, port)), location=location)
    shown = f"[{host}]" if ":" in host else host
    url = f"http://{shown}:{port}{start}"
    config = uvicorn.Config(app, host=host, port=port, log_level="warning")
    server = uvicorn.Server(config)

    def announce() -> None:
        while not server.started and not server.should_exit:
            threading.Event().wait(0.05)
        if server.started:
            if ready is not None:
                ready(url)
            if open_browser:
                webbrowser.open(url)

    threading.Thread(target=announce, daemon=True).start()
    server.run()
