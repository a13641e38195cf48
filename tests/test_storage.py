"""canisters.storage: both backends through the public API."""

from __future__ import annotations

import functools
import hashlib
import logging
import sqlite3
from collections.abc import Callable, Iterator
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any

import boto3
import orjson
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import canisters as c
from canisters import storage
from canisters.storage import InvalidIdentifier, Store, open_store
from canisters.storage._chain import line_digest
from canisters.storage.s3 import S3ContentStore
from canisters.storage.testing import StoreConformance

from .budget import examples

PNG = b"\x89PNG\r\n\x1a\n" + bytes(range(256)) * 4
PROMPT = "You are a careful assistant."


def _location(tmp_path: Path, backend: str, name: str = "store") -> str:
    if backend == "sqlite":
        return f"sqlite:///{tmp_path / (name + '.db')}"
    return str(tmp_path / name)


@pytest.fixture(
    params=[
        "files",
        "sqlite",
        "postgres",
        "files+s3",
        "sqlite+s3",
        "postgres+s3",
    ]
)
def backend(request: pytest.FixtureRequest) -> str:
    return str(request.param)


@pytest.fixture
def location(tmp_path: Path, backend: str, request: pytest.FixtureRequest) -> str:
    if backend.startswith("postgres"):
        return str(request.getfixturevalue("postgres_location"))
    return _location(tmp_path, backend.split("+")[0])


@pytest.fixture
def opener(backend: str, request: pytest.FixtureRequest) -> Callable[..., Store]:
    """open_store, with the test's bucket as ``blobs`` for the +s3 backends."""
    if backend.endswith("+s3"):
        return functools.partial(open_store, blobs=request.getfixturevalue("s3_blobs"))
    return open_store


@pytest.fixture
def store(location: str, opener: Callable[..., Store]) -> Iterator[Store]:
    with opener(location) as opened:
        yield opened


class TestConformance(StoreConformance):
    """The conformance suite, on every backend with local and S3 blobs."""

    @pytest.fixture
    def opener(
        self, opener: Callable[..., Store], location: str
    ) -> Callable[..., Store]:
        return functools.partial(opener, location)


# Raw access to what a backend holds, to tamper with it ---------------------


def _postgres(store: Any) -> Any:
    """A connection to a PostgreSQL store's database, outside the store."""
    import psycopg

    return psycopg.connect(store._location, autocommit=True)


def _raw_lines(store: Any, conversation_id: str) -> list[bytes]:
    if isinstance(store, storage.FileStore):
        path = store.root / "conversations" / conversation_id / "messages.jsonl"
        return path.read_bytes().splitlines()
    if not isinstance(store, storage.SQLiteStore):
        with _postgres(store) as connection:
            rows = connection.execute(
                "SELECT line FROM canisters_records WHERE conversation = %s "
                "ORDER BY seq",
                (conversation_id,),
            ).fetchall()
        return [bytes(row[0]) for row in rows]
    with sqlite3.connect(store.path) as connection:
        rows = connection.execute(
            "SELECT line FROM records WHERE conversation = ? ORDER BY seq",
            (conversation_id,),
        ).fetchall()
    return [bytes(row[0]) for row in rows]


def _write_raw_lines(
    store: Any, conversation_id: str, lines: list[bytes], *, renumber: bool = False
) -> None:
    """Replace a log's records; SQLite rows keep the seq each record holds (as an
    SQL edit would) unless ``renumber`` numbers them by position (a reordering)."""
    if isinstance(store, storage.FileStore):
        path = store.root / "conversations" / conversation_id / "messages.jsonl"
        path.write_bytes(b"".join(line + b"\n" for line in lines))
        return
    if not isinstance(store, storage.SQLiteStore):
        # Rows keep their record's seq, as with SQLite; PostgreSQL's are
        # integers, so a row without one between two others renumbers them all.
        rows: list[tuple[float, bytes]] = list(enumerate(lines))
        if not renumber and all(type(seq) is int for seq, _ in _numbered(lines)):
            rows = _numbered(lines)
        with _postgres(store) as connection:
            connection.execute(
                "DELETE FROM canisters_records WHERE conversation = %s",
                (conversation_id,),
            )
            connection.cursor().executemany(
                "INSERT INTO canisters_records (conversation, seq, line) "
                "VALUES (%s, %s, %s)",
                [(conversation_id, seq, line) for seq, line in rows],
            )
            # The head kept apart from the log follows, as a tamperer would make
            # it: what these tests change must be found by the chain alone.
            connection.execute(
                "UPDATE canisters_conversations SET length = %s, head = %s "
                "WHERE id = %s",
                (
                    _last_seq(lines) + 1,
                    (line_digest(lines[-1]) or "") if lines else "",
                    conversation_id,
                ),
            )
        return
    with sqlite3.connect(store.path) as connection:
        connection.execute(
            "DELETE FROM records WHERE conversation = ?", (conversation_id,)
        )
        connection.executemany(
            "INSERT INTO records (conversation, seq, line) VALUES (?, ?, ?)",
            [
                (conversation_id, seq, line)
                for seq, line in (enumerate(lines) if renumber else _numbered(lines))
            ],
        )


def _numbered(lines: list[bytes]) -> list[tuple[float, bytes]]:
    """Rows numbered by the seq each record holds; a line holding none (or one
    taken) goes just after the row before it."""
    rows: list[tuple[float, bytes]] = []
    taken: set[float] = set()
    for line in lines:
        try:
            seq = orjson.loads(line)["seq"]
        except (orjson.JSONDecodeError, KeyError, TypeError):
            seq = None
        if type(seq) is not int or seq in taken:
            seq = (rows[-1][0] if rows else -1) + 0.5
        taken.add(seq)
        rows.append((seq, line))
    return rows


def _last_seq(lines: list[bytes]) -> int:
    try:
        return int(orjson.loads(lines[-1])["seq"])
    except (IndexError, ValueError, KeyError, TypeError):
        return len(lines) - 1


def _tamper_blob(store: Any, content_id: str) -> None:
    if isinstance(store.content, S3ContentStore):
        bucket = store.content.location[5:].split("/", 1)[0]
        key = store.content.key(content_id)
        boto3.client("s3").put_object(
            Bucket=bucket, Key=key, Body=b"not the original bytes"
        )
        return
    if isinstance(store, storage.FileStore):
        store.content.path(content_id).write_bytes(b"not the original bytes")
        return
    if not isinstance(store, storage.SQLiteStore):
        with _postgres(store) as connection:
            connection.execute(
                "UPDATE canisters_blobs SET data = %s WHERE id = %s",
                (b"not the original", content_id),
            )
        return
    with sqlite3.connect(store.path) as connection:
        connection.execute(
            "UPDATE blobs SET data = ? WHERE id = ?", (b"not the original", content_id)
        )


def _sample() -> list[c.Canister]:
    invocation = c.Invocation("lookup", {"q": "weather", "n": [1, 2.5, None]}, step=1)
    return [
        c.Supervisor(PROMPT),
        c.User(
            (
                c.Text("What is in this picture?"),
                c.Image(data=PNG, mime_type="image/png", hint="a test pattern"),
                c.Audio(url="https://example.com/a.wav"),
                c.File(content_id="sha256:" + "ab" * 32, filename="a.pdf"),
            )
        ),
        c.Assistant(
            (
                c.Reasoning("thinking", "sig==", None, "anthropic"),
                c.Text("x" * 5000, "text/markdown"),
            ),
            metadata=c.Metadata(model="m", usage=c.Usage(10, 20), latency_ms=1.5),
        ),
        invocation,
        c.Result(invocation.invocation_id, "lookup", "sunny", step=1),
        c.Document(("reference material " * 100,), "Title", "doc-1"),
    ]


# Round trips ---------------------------------------------------------------


def test_a_record_of_an_older_format_migrates_on_load(store: Store) -> None:
    store.extend("old", [])
    record = {
        "kind": "parts",
        "role_hint_for_llm": "user",
        "id": "m1",
        "timestamp": "2025-01-01T00:00:00+00:00",
        "step_num": 3,
        "parts": [{"kind": "text", "text": "hello"}],
    }
    body = orjson.dumps({"seq": 0, "prev": "", "v": 1, "canister": record})
    digest = hashlib.sha256(body).hexdigest()
    _write_raw_lines(
        store, "old", [body[:-1] + b',"digest":"' + digest.encode() + b'"}']
    )
    loaded = store.load("old")
    assert loaded == [
        c.User(
            "hello",
            id="m1",
            step=3,
            timestamp=datetime(2025, 1, 1, tzinfo=timezone.utc),
        )
    ]
    assert store.verify("old").ok


# Policy and deduplication --------------------------------------------------


def _blobs(store: Store) -> int:
    return store.stats().blobs


# Content store -------------------------------------------------------------


def test_tampered_blob_raises_integrity_error(store: Store) -> None:
    store.append("chat", c.User((c.Image(data=PNG),)))
    content_id = "sha256:" + hashlib.sha256(PNG).hexdigest()
    _tamper_blob(store, content_id)
    with pytest.raises(c.IntegrityError):
        store.content.get(content_id)
    with pytest.raises(c.IntegrityError):
        store.load("chat")
    report = store.verify("chat")
    assert [p.code for p in report.problems] == ["content"]
    assert store.load("chat", salvage=True) == []


def _remove_blob(store: Any, content_id: str) -> None:
    if isinstance(store.content, S3ContentStore):
        bucket = store.content.location[5:].split("/", 1)[0]
        boto3.client("s3").delete_object(
            Bucket=bucket, Key=store.content.key(content_id)
        )
    elif isinstance(store, storage.FileStore):
        store.content.path(content_id).unlink()
    elif isinstance(store, storage.SQLiteStore):
        with sqlite3.connect(store.path) as connection:
            connection.execute("DELETE FROM blobs WHERE id = ?", (content_id,))
    else:
        with _postgres(store) as connection:
            connection.execute(
                "DELETE FROM canisters_blobs WHERE id = %s", (content_id,)
            )


@pytest.mark.parametrize("damage", [_tamper_blob, _remove_blob])
def test_verify_reads_every_blob_from_the_store_not_the_cache(
    store: Store, damage: Callable[[Any, str], None]
) -> None:
    """A store that loaded a conversation (its cache holding the blobs) still
    sees a blob removed or changed behind it."""
    sample = [c.User((c.Text("look"), c.Image(data=PNG))), c.Supervisor(PROMPT)]
    store.extend("chat", sample)
    assert store.load("chat") == sample
    assert store.verify("chat").ok
    content_id = "sha256:" + hashlib.sha256(PNG).hexdigest()
    damage(store, content_id)
    report = store.verify("chat")
    assert [p.code for p in report.problems] == ["content"]
    assert content_id in report.problems[0].message


def _forget_canister_ids(store: Any, conversation_id: str) -> None:
    """Remove a conversation's canister-id index, as a store written before it
    (or by a version of the library without it) has none."""
    if isinstance(store, storage.FileStore):
        (store.root / "conversations" / conversation_id / "ids.jsonl").unlink()
    elif isinstance(store, storage.SQLiteStore):
        with sqlite3.connect(store.path) as connection:
            connection.execute("DELETE FROM canister_ids")
            connection.execute("UPDATE conversations SET indexed = NULL")
    else:
        with _postgres(store) as connection:
            connection.execute("DELETE FROM canisters_ids")
            connection.execute("UPDATE canisters_conversations SET indexed = 0")


def test_a_log_without_its_id_index_is_indexed_before_an_append(
    location: str, opener: Callable[..., Store]
) -> None:
    sample = [c.User("one"), c.Assistant("two"), c.User("three")]
    with opener(location) as store:
        store.extend("chat", sample)
        fork = store.fork("chat", at=sample[1].id)
        _forget_canister_ids(store, "chat")
    with opener(location) as store:
        store.extend(fork, sample[:2])
        store.append("chat", sample[0])
        with pytest.raises(c.DuplicateCanister):
            store.append("chat", c.User("other", id=sample[2].id))
        store.append("chat", c.User("four"))
        assert store.load("chat")[:3] == sample
        assert len(store.load("chat")) == 4
        assert store.load(fork) == sample[:2]
        assert store.verify("chat").ok


@pytest.mark.parametrize(
    "damage",
    [
        b"not json\n",
        b'[0,"x",0,10]\n[1,"y",10,',  # a line cut short
        b'[0,"x",0,99999999]\n',  # names bytes the log does not hold
    ],
)
def test_a_damaged_id_index_is_rebuilt_from_the_log(
    tmp_path: Path, damage: bytes
) -> None:
    sample = [c.User("one"), c.Assistant("two")]
    with open_store(tmp_path / "store") as store:
        store.extend("chat", sample)
    (tmp_path / "store" / "conversations" / "chat" / "ids.jsonl").write_bytes(damage)
    with open_store(tmp_path / "store") as store:
        store.extend("chat", [*sample, c.User("three")])
        with pytest.raises(c.DuplicateCanister):
            store.append("chat", c.User("other", id=sample[0].id))
        assert len(store.load("chat")) == 3
    with open_store(tmp_path / "store") as store:
        store.append("chat", sample[1])
        assert len(store.load("chat")) == 3


# Forks ---------------------------------------------------------------------


def test_fork_detects_a_tampered_parent_prefix(store: Store) -> None:
    sample = [c.User("1"), c.Assistant("2"), c.User("3")]
    store.extend("root", sample)
    fork = store.fork("root", at=sample[1].id)
    lines = _raw_lines(store, "root")
    _write_raw_lines(store, "root", [lines[0].replace(b'"1"', b'"X"'), *lines[1:]])
    with pytest.raises(c.IntegrityError):
        store.load(fork)
    assert not store.verify(fork).ok


# Tamper evidence -----------------------------------------------------------


def _five(store: Store) -> list[c.Canister]:
    canisters = [c.User(f"message {n}") for n in range(5)]
    store.extend("chat", canisters)
    return canisters


def test_edited_record_is_detected(store: Store) -> None:
    canisters = _five(store)
    lines = _raw_lines(store, "chat")
    lines[2] = lines[2].replace(b"message 2", b"message X")
    _write_raw_lines(store, "chat", lines)
    report = store.verify("chat")
    assert [p.code for p in report.problems] == ["digest"]
    assert "2" not in report.problems[0].where or report.problems[0].where
    with pytest.raises(c.IntegrityError, match="salvage"):
        store.load("chat")
    salvaged = store.load("chat", salvage=True)
    assert salvaged == [*canisters[:2], *canisters[3:]]


def test_edited_last_record_is_detected(store: Store) -> None:
    _five(store)
    lines = _raw_lines(store, "chat")
    lines[-1] = lines[-1].replace(b"message 4", b"message X")
    _write_raw_lines(store, "chat", lines)
    assert [p.code for p in store.verify("chat").problems] == ["digest"]


def test_removed_record_is_detected(store: Store) -> None:
    canisters = _five(store)
    lines = _raw_lines(store, "chat")
    del lines[1]
    _write_raw_lines(store, "chat", lines)
    report = store.verify("chat")
    assert [p.code for p in report.problems] == ["chain"]
    with pytest.raises(c.IntegrityError):
        store.load("chat")
    assert store.load("chat", salvage=True) == [canisters[0], *canisters[2:]]


def test_reordered_records_are_detected(store: Store) -> None:
    canisters = _five(store)
    lines = _raw_lines(store, "chat")
    lines[1], lines[2] = lines[2], lines[1]
    _write_raw_lines(store, "chat", lines, renumber=True)
    report = store.verify("chat")
    assert report.problems
    assert {p.code for p in report.problems} == {"chain"}
    with pytest.raises(c.IntegrityError):
        store.load("chat")
    salvaged = store.load("chat", salvage=True)
    assert sorted(x.id for x in salvaged) == sorted(x.id for x in canisters)


def test_garbage_record_is_detected(store: Store) -> None:
    canisters = _five(store)
    lines = _raw_lines(store, "chat")
    lines.insert(3, b'{"not": "a record"}')
    _write_raw_lines(store, "chat", lines)
    codes = [p.code for p in store.verify("chat").problems]
    if isinstance(store, (storage.FileStore, storage.SQLiteStore)):
        assert codes == ["unreadable"]
    else:  # the records after it were renumbered to make room: seen too
        assert codes == ["unreadable", "chain", "chain"]
    with pytest.raises(c.IntegrityError):
        store.load("chat")
    assert store.load("chat", salvage=True) == canisters


def test_problems_print_readably(store: Store) -> None:
    _five(store)
    lines = _raw_lines(store, "chat")
    del lines[0]
    _write_raw_lines(store, "chat", lines)
    (problem,) = store.verify("chat").problems
    assert str(problem).startswith("chat ")
    assert "removed" in str(problem)


# Path safety ---------------------------------------------------------------

BAD_IDS = [
    "../escape",
    "..",
    ".",
    ".hidden",
    "/etc/passwd",
    "a/b",
    "a\\b",
    "nul\x00byte",
    "x" * 129,
    "",
    "spaces are not ok",
    "C:evil",
    "-dash",
]


# Side files ----------------------------------------------------------------


def test_attachment_path(tmp_path: Path) -> None:
    with open_store(tmp_path / "store") as store:
        assert isinstance(store, storage.FileStore)
        path = store.attachment_path("chat", "snapshot.json")
        assert path.parent.is_dir()
        assert path.name == "snapshot.json"
        with pytest.raises(InvalidIdentifier):
            store.attachment_path("chat", "../x")


# Maintenance ---------------------------------------------------------------


def test_open_store_options(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="durability"):
        open_store(tmp_path / "x", durability="sometimes")
    with open_store(tmp_path / "fast", durability="flush") as fast:
        assert fast.durability == "flush"  # type: ignore[attr-defined]
        fast.append("chat", c.User("hi"))
        assert len(fast.load("chat")) == 1
    with open_store(f"sqlite:///{tmp_path / 'fast.db'}", durability="flush") as db:
        db.append("chat", c.User("hi"))
        assert len(db.load("chat")) == 1
    assert isinstance(open_store(tmp_path / "y"), storage.Store)


def test_a_directory_that_is_not_a_store_is_refused(tmp_path: Path) -> None:
    (tmp_path / "other").mkdir()
    (tmp_path / "other" / "store.json").write_text('{"format": "something else"}')
    with pytest.raises(c.StorageError, match="not a canisters store"):
        open_store(tmp_path / "other")


def test_torn_final_line_is_ignored_and_repaired(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    with open_store(tmp_path / "store") as store:
        canisters = [c.User(f"message {n}") for n in range(3)]
        store.extend("chat", canisters)
    log = tmp_path / "store" / "conversations" / "chat" / "messages.jsonl"
    whole = log.read_bytes()
    with log.open("ab") as handle:
        handle.write(whole.splitlines()[-1][:40])
    with open_store(tmp_path / "store") as store, caplog.at_level(logging.WARNING):
        assert store.load("chat") == canisters
        assert "unfinished final record" in caplog.text
        assert store.verify("chat").torn_tail
        assert store.verify("chat").ok
        later = c.User("after the crash")
        store.append("chat", later)
        assert store.load("chat") == [*canisters, later]
        assert not store.verify("chat").torn_tail


def test_the_file_layout_is_as_documented(tmp_path: Path) -> None:
    with open_store(tmp_path / "store") as store:
        store.extend("chat", [c.Supervisor(PROMPT), c.User("hi")])
        store.sidecar("chat", "audit").append_line("x")
    root = tmp_path / "store"
    digest = hashlib.sha256(PROMPT.encode()).hexdigest()
    assert (root / "blobs" / "sha256" / digest[:2] / digest).read_bytes() == (
        PROMPT.encode()
    )
    assert orjson.loads((root / "store.json").read_bytes())["format"] == (
        "canisters.store"
    )
    lines = (root / "conversations" / "chat" / "messages.jsonl").read_bytes()
    first, second = (orjson.loads(line) for line in lines.splitlines())
    assert list(first) == ["seq", "prev", "v", "canister", "digest"]
    assert first["prev"] == ""
    assert second["prev"] == first["digest"]
    assert first["canister"]["content"] == [
        {"type": "text", "$stored": {"text": "sha256:" + digest}}
    ]
    assert second["canister"]["content"] == [{"type": "text", "text": "hi"}]
    assert (root / "conversations" / "chat" / "sidecars" / "audit.log").exists()


# Property: any conversation survives the store -----------------------------

_text = st.text(
    alphabet=st.characters(exclude_categories=("Cs",)), max_size=40
) | st.builds(lambda s, n: s * n, st.text(min_size=1, max_size=8), st.integers(1, 400))
_parts = st.one_of(
    st.builds(c.Text, _text, st.sampled_from(["text/plain", "text/markdown"])),
    st.builds(lambda b: c.Image(data=b), st.binary(max_size=300)),
    st.builds(lambda b: c.Audio(data=b, mime_type="audio/wav"), st.binary(max_size=50)),
    st.builds(lambda b: c.File(data=b, filename="f.pdf"), st.binary(max_size=50)),
    st.builds(lambda: c.Video(url="https://example.com/v.mp4")),
    st.builds(c.Reasoning, _text),
)
_content = st.lists(_parts, max_size=3).map(tuple)
_moments = st.datetimes(
    min_value=datetime(2000, 1, 1),
    max_value=datetime(2100, 1, 1),
    timezones=st.sampled_from([timezone.utc, timezone(timedelta(hours=-5))]),
)
_canisters = st.one_of(
    st.builds(lambda x, t: c.User(x, timestamp=t), _content, _moments),
    st.builds(lambda x, t: c.Assistant(x, timestamp=t), _content, _moments),
    st.builds(lambda x: c.Supervisor(x), _content),
    st.builds(lambda x, t: c.Document(x, t), _content, st.none() | _text),
    st.builds(
        lambda n, a: c.Invocation(n, a),
        st.sampled_from(["search", "fetch"]),
        st.dictionaries(
            st.text(max_size=5), st.integers() | _text | st.booleans(), max_size=3
        ),
    ),
    st.builds(
        lambda x, e: c.Result("call", "search", x, e),
        _content,
        st.none() | st.builds(c.ErrorInfo, st.just("TOOL_ERROR"), _text),
    ),
)


@pytest.fixture
def every_backend(tmp_path: Path, postgres_location: str) -> Iterator[list[Store]]:
    """A store of each backend, opened once for every example of a property."""
    locations = [
        _location(tmp_path, "files"),
        _location(tmp_path, "sqlite"),
        postgres_location,
    ]
    stores = [open_store(location, durability="flush") for location in locations]
    yield stores
    for store in stores:
        store.close()


@settings(
    max_examples=examples(40),
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture],
)
@given(st.lists(_canisters, max_size=6), st.integers(0, 6))
def test_any_conversation_round_trips(
    every_backend: list[Store], canisters: list[c.Canister], split: int
) -> None:
    """Each conversation drawn goes through every backend (a fresh conversation
    of the same stores each time)."""
    name = c.new_id()
    for store in every_backend:
        store.extend(name, canisters[:split])
        for canister in canisters[split:]:
            store.append(name, canister)
        if not canisters:
            store.extend(name, [])
        assert store.load(name) == canisters
        assert store.verify(name).ok


@pytest.mark.parametrize(
    "location", [5, None, "sqlite://", "sqlite:///", "bad\x00path"]
)
def test_open_store_refuses_unusable_locations(location: object) -> None:
    with pytest.raises(c.StorageError):
        open_store(location)  # type: ignore[arg-type]


def test_appending_media_does_not_encode_its_bytes(tmp_path: Path) -> None:
    """Blobs are hashed and written from the bytes: no base64 copy on the way."""
    import tracemalloc

    size = 8 * 1024 * 1024
    image = c.Image(data=bytes(size), mime_type="image/png")
    with open_store(tmp_path / "store", durability="flush") as store:
        store.append("warm", c.User((c.Text("x"), c.Image(data=b"warm"))))
        tracemalloc.start()
        try:
            store.append("chat", c.User((c.Text("look"), image)))
            _current, peak = tracemalloc.get_traced_memory()
        finally:
            tracemalloc.stop()
        assert peak < size // 4  # base64 alone would be 4/3 of it
        assert store.load("chat")[0].content[1] == image
