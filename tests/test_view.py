"""``canisters view``: the read-only web app, run for real and asked over HTTP."""

from __future__ import annotations

import asyncio
import json
import re
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

import pytest

from canisters import CanistersError, User, from_json, storage, view
from canisters.view import allowed_hosts, create_app

from .html_support import SVG_SCRIPT, Page, png
from .view_support import (
    BACKENDS,
    FILLERS,
    fill,
    free_port,
    get,
    location_of,
    tamper,
    viewing,
)


def listed(page: Page) -> list[str]:
    """The conversations a list page links, in order (not their fork links)."""
    elements = page.elements
    return [
        elements[n + 1].attributes["href"]
        for n, element in enumerate(elements)
        if element.tag == "td" and element.attributes.get("class") == "cv-id"
    ]


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> tuple[str, str, str]:
    """A file store viewed for the module's tests: (base URL, location, fork id)."""
    location = str(tmp_path_factory.mktemp("view") / "store")
    fork = fill(location)
    with storage.open_store(location) as store:
        store.content.put(SVG_SCRIPT)
        store.content.put(png())
    context = viewing(location)
    base = context.__enter__()
    yield base, location, fork  # type: ignore[misc]
    context.__exit__(None, None, None)


def test_only_the_served_host_is_answered(served: tuple[str, str, str]) -> None:
    base, _location, _fork = served
    port = base.rsplit(":", 1)[1]
    for host in (f"127.0.0.1:{port}", f"localhost:{port}"):
        status, _headers, _body = get(base, "/", host=host)
        assert status == 200, host
    for host in (
        "evil.example:" + port,
        "evil.example",
        f"127.0.0.1:{int(port) + 1}",
        "",
    ):
        status, _headers, body = get(base, "/", host=host)
        assert status == 421, host
        assert b"refused" in body
        assert "conversation" not in body.decode()


def test_every_answer_forbids_scripts(served: tuple[str, str, str]) -> None:
    base, _location, _fork = served
    for path in ("/", "/c/chat", "/c/nothing-here", "/c/chat/document.json"):
        _status, headers, _body = get(base, path)
        policy = headers["content-security-policy"]
        assert "default-src 'none'" in policy and "script-src" not in policy, path
        assert headers["x-content-type-options"] == "nosniff"


def test_it_only_reads(served: tuple[str, str, str]) -> None:
    base, location, _fork = served
    with storage.open_store(location, read_only=True) as store:
        before = {cid: store.head(cid) for cid in store.conversations()}
    for method in ("POST", "PUT", "DELETE", "PATCH"):
        for path in ("/", "/c/chat", "/c/chat/document.json"):
            status, _headers, _body = get(base, path, method=method)
            assert status == 405, (method, path)
    with storage.open_store(location, read_only=True) as store:
        assert {cid: store.head(cid) for cid in store.conversations()} == before


@pytest.mark.parametrize(
    "path",
    [
        "/../store.json",
        "/c/..%2Fstore.json",
        "/c/..%2F..%2F..%2Fetc%2Fpasswd",
        "/c/%2Fetc%2Fpasswd/document.json",
        "/c/chat/../../store.json",
        "/blob/..%2F..%2Fstore.json",
        "/blob/sha256:..%2F..%2Fstore.json",
        "/store.json",
        "/conversations/chat/messages.jsonl",
        "/blobs/",
        "/static/../../etc/passwd",
    ],
)
def test_no_file_outside_the_conversations_is_served(
    served: tuple[str, str, str], path: str
) -> None:
    base, _location, _fork = served
    status, _headers, body = get(base, path)
    assert status == 404, (path, status)
    assert b"canisters.store" not in body and b"root:" not in body


def test_the_list_is_paged_newest_first_and_filtered(
    served: tuple[str, str, str],
) -> None:
    base, _location, fork = served
    status, _headers, body = get(base, "/")
    assert status == 200
    page = Page(body.decode())
    ids = listed(page)
    total = FILLERS + 3
    assert f"{total} conversations" in page.text and "page 1 of 2" in page.text
    # Newest first: the sample, its fork and "damaged" were stored last; the
    # fillers are dated 2020 onwards, the latest first.
    assert set(ids[:3]) == {"/c/chat", f"/c/{fork}", "/c/damaged"}
    assert ids[3:5] == [f"/c/old-{FILLERS - 1:03d}", f"/c/old-{FILLERS - 2:03d}"]
    status, _headers, body = get(base, "/?page=2")
    older = Page(body.decode())
    assert "page 2 of 2" in older.text
    assert listed(older)[-1] == "/c/old-000"
    status, _headers, body = get(base, "/?q=OLD-05")
    found = Page(body.decode())
    assert listed(found) == [f"/c/old-{n:03d}" for n in range(59, 49, -1)]
    for odd in ("/?page=abc", "/?page=-4", "/?page=999", "/?q=%3Cscript%3E"):
        status, _headers, body = get(base, odd)
        assert status == 200 and b"<script>" not in body, odd


def test_the_text_is_searched_with_the_matches_marked(
    served: tuple[str, str, str],
) -> None:
    base, _location, _fork = served
    status, _headers, body = get(base, "/")
    assert 'action="/search"' in body.decode()
    status, _headers, body = get(base, "/search?s=filler+42")
    assert status == 200
    page = Page(body.decode())
    assert "1 hit" in page.text
    assert listed(page) == ["/c/old-042"]
    assert len(page.all("mark")) == 2
    assert "<mark>filler</mark> <mark>42</mark>" in body.decode()
    status, _headers, body = get(base, "/search?s=filler")
    assert f"{FILLERS} hits" in Page(body.decode()).text
    for odd in ("/search?s=", "/search?s=%3Cscript%3E", "/search"):
        status, _headers, body = get(base, odd)
        assert status == 200, odd
        assert b"<script>" not in body, odd
    status, _headers, body = get(base, "/search?s=%21%21")
    assert "no word to look for" in Page(body.decode()).text


def test_a_conversation_page_shows_forks_verification_and_download(
    served: tuple[str, str, str],
) -> None:
    base, location, fork = served
    status, _headers, body = get(base, "/c/chat")
    page = Page(body.decode())
    assert "hash chain intact" in page.text
    assert f"/c/{fork}" in [a.attributes.get("href") for a in page.all("a")]
    assert len(page.all("img")) == 1
    status, _headers, body = get(base, f"/c/{fork}")
    assert "forked from chat" in Page(body.decode()).text
    status, headers, body = get(base, "/c/chat/document.json")
    assert status == 200 and headers["content-type"] == "application/json"
    assert headers["content-disposition"] == 'attachment; filename="chat.json"'
    with storage.open_store(location, read_only=True) as store:
        assert from_json(body) == store.load("chat")
    status, _headers, _body = get(base, "/c/no-such-thing")
    assert status == 404


def test_blobs_are_served_only_as_what_a_page_may_embed(
    served: tuple[str, str, str],
) -> None:
    base, _location, _fork = served
    from canisters.storage._common import content_id_of

    picture, svg = content_id_of(png()), content_id_of(SVG_SCRIPT)
    status, headers, body = get(base, f"/blob/{picture}?as=image")
    assert status == 200 and headers["content-type"] == "image/png" and body == png()
    for query in (
        "?as=image&type=image/svg%2Bxml",
        "?as=image",
        "?as=video&type=video/mp4",
    ):
        status, headers, body = get(base, f"/blob/{svg}{query}")
        assert status == 200 and headers["content-type"] == "application/octet-stream"
        assert headers["content-disposition"].startswith("attachment")
    status, _headers, _body = get(base, "/blob/sha256:" + "0" * 64)
    assert status == 404


@pytest.mark.parametrize("backend", BACKENDS)
def test_every_backend_is_viewed_with_its_damage(
    backend: str, tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    postgres = (
        request.getfixturevalue("postgres_location") if backend == "postgres" else None
    )
    location = location_of(backend, tmp_path, postgres)
    fork = fill(location, fillers=2)
    tamper(backend, location)
    with viewing(location) as base:
        listing = Page(get(base, "/")[2].decode())
        assert "5 conversations" in listing.text
        status, _headers, body = get(base, "/c/damaged")
        assert status == 200
        page = Page(body.decode())
        assert "verification found" in page.text and "(digest)" in page.text
        status, _headers, body = get(base, "/c/chat")
        chat = Page(body.decode())
        assert "hash chain intact" in chat.text
        assert f"/c/{fork}" in [a.attributes.get("href") for a in chat.all("a")]


def test_blobs_in_s3_are_viewed(tmp_path: Path, s3_blobs: str) -> None:
    location = str(tmp_path / "store")
    fill(location, fillers=0, blobs=s3_blobs)
    with viewing(location, "--blobs", s3_blobs) as base:
        page = Page(get(base, "/c/chat")[2].decode())
        assert "hash chain intact" in page.text
        assert [e.attributes["src"][:22] for e in page.all("img")] == [
            "data:image/png;base64,"
        ]


def test_the_hosts_a_server_answers() -> None:
    assert allowed_hosts("127.0.0.1", 8765) == {
        "127.0.0.1:8765",
        "localhost:8765",
        "[::1]:8765",
    }
    assert allowed_hosts("192.0.2.7", 80) == {"192.0.2.7:80", "192.0.2.7"}


def test_a_missing_extra_is_one_line_naming_it(tmp_path: Path) -> None:
    location = str(tmp_path / "store")
    storage.open_store(location).close()
    code = (
        "import sys; sys.modules['starlette'] = None; "
        "from canisters.cli import main; main(sys.argv[1:])"
    )
    out = subprocess.run(
        [sys.executable, "-c", code, "view", location],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert out.returncode == 2
    assert out.stderr.count("\n") == 1
    assert "pip install 'canisters[view]'" in out.stderr
    assert re.match(r"canisters: error: starlette is not installed", out.stderr)
    assert json.dumps(out.stdout) == '""'


def test_the_example_store_shows_the_picture_the_call_and_its_result(
    tmp_path: Path,
) -> None:
    example = Path(__file__).resolve().parent.parent / "documentation" / "examples"
    out = subprocess.run(
        [sys.executable, str(example / "store_example.py"), "example-store"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert out.returncode == 0, out.stderr
    assert "canisters view example-store postcard --open" in out.stdout
    with viewing(str(tmp_path / "example-store")) as base:
        page = Page(get(base, "/c/postcard")[2].decode())
    assert [e.attributes["src"][:22] for e in page.all("img")] == [
        "data:image/png;base64,"
    ]
    pairs = [e for e in page.elements if e.attributes.get("class") == "cv-pair"]
    assert len(pairs) == 1
    assert "get_weather" in page.text and "21 °C, sunny" in page.text
    assert "hash chain intact" in page.text and "fork" in page.text


def test_a_wildcard_address_is_refused(tmp_path: Path) -> None:
    location = str(tmp_path / "store")
    storage.open_store(location).close()
    out = subprocess.run(
        [sys.executable, "-m", "canisters", "view", location, "--host", "0.0.0.0"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert out.returncode == 2
    assert out.stderr.startswith("canisters: error: give the address to serve on")


class _SlowStore:
    """A file store whose ``load`` of ``slow`` waits until the list is asked
    for (at most ``WAIT`` seconds): a server that ran it on its event loop
    could not answer the list meanwhile."""

    WAIT = 10.0

    def __init__(self, store: storage.Store) -> None:
        self.store = store
        self.listed = threading.Event()
        self.waited_out = False

    def __getattr__(self, name: str) -> Any:
        return getattr(self.store, name)

    def conversations(self) -> list[str]:
        self.listed.set()
        return self.store.conversations()

    def load(self, conversation_id: str, **options: Any) -> Any:
        if conversation_id == "slow" and not self.listed.wait(self.WAIT):
            self.waited_out = True
        return self.store.load(conversation_id, **options)


async def _ask(app: Any, path: str) -> int:
    """Send ``GET path`` to the ASGI ``app``; return the status it answers."""
    scope = {
        "type": "http",
        "asgi": {"version": "3.0"},
        "http_version": "1.1",
        "method": "GET",
        "scheme": "http",
        "path": path,
        "raw_path": path.encode(),
        "query_string": b"",
        "root_path": "",
        "headers": [(b"host", b"127.0.0.1:8765")],
        "client": ("127.0.0.1", 50000),
        "server": ("127.0.0.1", 8765),
    }
    sent: list[dict[str, Any]] = []

    async def receive() -> dict[str, Any]:
        return {"type": "http.request", "body": b"", "more_body": False}

    async def send(message: Any) -> None:
        sent.append(message)

    await app(scope, receive, send)
    return int(sent[0]["status"])


def test_a_store_call_that_blocks_holds_one_request_not_the_server(
    tmp_path: Path,
) -> None:
    with storage.open_store(tmp_path / "store") as store:
        store.append("slow", User("hello"))
        slow = _SlowStore(store)
        app = create_app(slow, hosts=["127.0.0.1:8765"])  # type: ignore[arg-type]

        async def both() -> list[int]:
            document = asyncio.ensure_future(_ask(app, "/c/slow/document.json"))
            await asyncio.sleep(0.2)  # the document's load is waiting by now
            return [await _ask(app, "/"), await document]

        assert asyncio.run(both()) == [200, 200]
        assert not slow.waited_out


@pytest.mark.parametrize(
    "host",
    ["", "0", "00", "0.0", "0x0", "000.000.000.000", "::", "[::]", "::0",
     "0:0:0:0:0:0:0:0", "[0:0:0:0:0:0:0:0]", "::ffff:0.0.0.0"],
)  # fmt: skip
def test_every_spelling_of_an_unspecified_address_is_refused(
    tmp_path: Path, host: str
) -> None:
    with (
        storage.open_store(tmp_path / "store") as store,
        pytest.raises(CanistersError, match="give the address to serve on"),
    ):
        view.serve(store, host=host, port=free_port())


def test_a_location_is_shown_without_its_credentials() -> None:
    shown = view.shown_location
    assert shown("postgresql://app:pw@db:5432/chat") == "postgresql://db:5432/chat"
    assert shown("postgresql://app@db/chat?password=pw") == "postgresql://db/chat"
    assert shown("sqlite:///chats.db") == "sqlite:///chats.db"
    assert shown("conversations/") == "conversations/"


def test_the_viewer_shows_no_password_in_its_pages_or_its_terminal(
    tmp_path: Path, postgres_location: str
) -> None:
    scheme, rest = postgres_location.split("://", 1)
    user, _, after = rest.partition("@")
    secret = "s3cret-pw"
    location = f"{scheme}://{user.split(':')[0]}:{secret}@{after}"
    fill(location, fillers=0)
    port = free_port()
    process = subprocess.Popen(
        [sys.executable, "-m", "canisters", "view", location, "--port", str(port)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert process.stdout is not None
        line = process.stdout.readline()
        assert line.startswith("serving postgresql:///") and secret not in line, line
        base = f"http://127.0.0.1:{port}"
        for path in ("/", "/c/chat"):
            status, _headers, body = get(base, path)
            assert status == 200
            assert secret.encode() not in body and b"host=" not in body
    finally:
        process.terminate()
        process.wait(timeout=20)
