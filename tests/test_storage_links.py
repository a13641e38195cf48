"""The file backend follows no symbolic link planted inside its directory, and
the SQLite backend none beside its database file, whether opened for writing or
read-only.

Someone allowed to write only the store plants a link in place of each file or
directory the store touches; every operation through it must raise
``IntegrityError`` naming the link, nothing outside the store may change, and
nothing outside may be read.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

import canisters as c
from canisters import recording, storage
from canisters.audit import AuditLog
from canisters.storage import open_store

PNG = b"\x89PNG\r\n\x1a\n" + bytes(range(256))


def _tree(root: Path) -> dict[str, tuple[str, bytes | str]]:
    """Every entry under ``root`` (links not followed) with its content."""
    found: dict[str, tuple[str, bytes | str]] = {}
    for path in sorted(root.rglob("*")):
        key = str(path.relative_to(root))
        if path.is_symlink():
            found[key] = ("link", os.readlink(path))
        elif path.is_dir():
            found[key] = ("dir", b"")
        else:
            found[key] = ("file", path.read_bytes())
    return found


@pytest.fixture
def outside(tmp_path: Path) -> Iterator[Path]:
    """A directory outside the store holding files a victim cares about."""
    victim = tmp_path / "outside"
    victim.mkdir()
    (victim / "precious.txt").write_bytes(b"keep me\n")
    (victim / ("ab" + "0" * 62)).write_bytes(b"named like a blob\n")
    (victim / "messages.jsonl").write_bytes(b"not a log\n")
    (victim / "audit.log").write_bytes(b"not a side file\n")
    before = _tree(victim)
    yield victim
    assert _tree(victim) == before, "a file outside the store changed"


def _user(text: str = "hello") -> c.User:
    return c.User(content=(c.Text(text),))


def _store(tmp_path: Path) -> storage.FileStore:
    store = open_store(tmp_path / "store")
    assert isinstance(store, storage.FileStore)
    return store


def _plant(link: Path, target: Path) -> None:
    if link.is_dir() and not link.is_symlink():
        for child in sorted(link.rglob("*"), reverse=True):
            child.unlink() if not child.is_dir() else child.rmdir()
        link.rmdir()
    elif link.exists() or link.is_symlink():
        link.unlink()
    link.parent.mkdir(parents=True, exist_ok=True)
    link.symlink_to(target)


def _refused(action: Callable[[], object], link: Path) -> None:
    with pytest.raises(c.IntegrityError, match="symbolic link") as caught:
        action()
    assert str(link) in str(caught.value)


def test_blobs_tmp_linked_out_is_not_emptied_by_gc(
    tmp_path: Path, outside: Path
) -> None:
    with _store(tmp_path) as store:
        store.append("chat", c.User(content=(c.Image(data=PNG),)))
        link = store.root / "blobs" / "tmp"
        _plant(link, outside)
        _refused(store.collect_garbage, link)
        _refused(lambda: store.content.put(b"a new blob"), link)


def test_blob_shard_linked_out_is_not_emptied_by_gc(
    tmp_path: Path, outside: Path
) -> None:
    with _store(tmp_path) as store:
        store.append("chat", _user())
        link = store.root / "blobs" / "sha256" / "ab"
        _plant(link, outside)
        _refused(store.collect_garbage, link)
        _refused(store.stats, link)
        blob = "sha256:ab" + "0" * 62
        _refused(lambda: store.content.get(blob), link)
        _refused(lambda: store.content.has(blob), link)


def test_blob_file_linked_out_is_refused(tmp_path: Path, outside: Path) -> None:
    with _store(tmp_path) as store:
        content_id = store.content.put(b"some bytes")
        link = store.content.path(content_id)
        _plant(link, outside / "precious.txt")
        _refused(lambda: store.content.get(content_id), link)
        _refused(lambda: store.content.put(b"some bytes"), link)
        _refused(store.collect_garbage, link)


def test_log_linked_out_is_not_truncated(tmp_path: Path, outside: Path) -> None:
    with _store(tmp_path) as store:
        store.append("chat", _user())
    link = tmp_path / "store" / "conversations" / "chat" / "messages.jsonl"
    _plant(link, outside / "messages.jsonl")
    with _store(tmp_path) as store:
        _refused(lambda: store.append("chat", _user("again")), link)
        _refused(lambda: store.load("chat"), link)
        _refused(lambda: store.head("chat"), link)
        _refused(lambda: store.exists("chat"), link)
        _refused(store.stats, link)
        _refused(store.collect_garbage, link)


def test_conversation_directory_linked_out_gets_no_log(
    tmp_path: Path, outside: Path
) -> None:
    with _store(tmp_path) as store:
        link = store.root / "conversations" / "chat"
        _plant(link, outside)
        _refused(lambda: store.append("chat", _user()), link)
        _refused(lambda: store.sidecar("chat", "audit").append_line("x"), link)
        _refused(lambda: store.attachment_path("chat", "notes.txt"), link)
        _refused(lambda: store.delete("chat"), link)
        _refused(store.collect_garbage, link)


def test_conversations_directory_linked_out(tmp_path: Path, outside: Path) -> None:
    with _store(tmp_path) as store:
        link = store.root / "conversations"
        _plant(link, outside)
        _refused(lambda: store.append("chat", _user()), link)
        _refused(store.conversations, link)
    _refused(lambda: open_store(tmp_path / "store"), link)


def test_side_files_linked_out_are_not_written(tmp_path: Path, outside: Path) -> None:
    with _store(tmp_path) as store:
        store.append("chat", _user())
        directory = store.root / "conversations" / "chat" / "sidecars"
        _plant(directory, outside)
        _refused(lambda: store.sidecar("chat", "audit").append_line("x"), directory)
        _refused(lambda: store.sidecar("chat", "audit").read_lines(), directory)
        audit = AuditLog(store, "chat")
        _refused(lambda: audit.record(None, "allowed"), directory)
        _refused(store.collect_garbage, directory)

        directory.unlink()
        directory.mkdir()
        link = directory / "audit.log"
        _plant(link, outside / "audit.log")
        _refused(lambda: store.sidecar("chat", "audit").append_line("x"), link)
        _refused(lambda: store.sidecar("chat", "audit").read_lines(), link)
        _refused(lambda: audit.record(None, "allowed"), link)
        _refused(store.collect_garbage, link)


def test_fork_files_linked_out(tmp_path: Path, outside: Path) -> None:
    with _store(tmp_path) as store:
        first = _user()
        store.append("chat", first)
        child = store.fork("chat", first.id)
        link = store.root / "conversations" / child / "fork.json"
        _plant(link, outside / "precious.txt")
        _refused(lambda: store.load(child), link)
        forks = store.root / "conversations" / "chat" / "forks"
        _plant(forks, outside)
        _refused(lambda: store.fork("chat", first.id), forks)
        _refused(lambda: store.delete("chat"), forks)


def test_dangling_gc_lock_link_is_not_created(tmp_path: Path, outside: Path) -> None:
    with _store(tmp_path):
        pass
    link = tmp_path / "store" / "gc.lock"
    _plant(link, outside / "created-by-the-store")
    _refused(lambda: open_store(tmp_path / "store"), link)
    assert not (outside / "created-by-the-store").exists()


def test_store_marker_linked_out(tmp_path: Path, outside: Path) -> None:
    with _store(tmp_path):
        pass
    link = tmp_path / "store" / "store.json"
    _plant(link, outside / "precious.txt")
    _refused(lambda: open_store(tmp_path / "store"), link)


def test_attachment_path_stays_inside_the_store(tmp_path: Path, outside: Path) -> None:
    with _store(tmp_path) as store:
        store.append("chat", _user())
        path = store.attachment_path("chat", "notes.txt")
        root = store.root.resolve()
        assert path.resolve().is_relative_to(root)
        directory = store.root / "conversations" / "chat" / "attachments"
        _plant(directory, outside)
        _refused(lambda: store.attachment_path("chat", "notes.txt"), directory)
        directory.unlink()
        directory.mkdir()
        link = directory / "notes.txt"
        _plant(link, outside / "precious.txt")
        _refused(lambda: store.attachment_path("chat", "notes.txt"), link)


def test_a_linked_store_root_is_fine(tmp_path: Path) -> None:
    real = tmp_path / "real"
    with open_store(real) as store:
        store.append("chat", _user())
    (tmp_path / "alias").symlink_to(real)
    with open_store(tmp_path / "alias") as store:
        store.append("chat", _user("again"))
        assert len(store.load("chat")) == 2
        assert store.collect_garbage().removed == ()


# --------------------------------------------------------------------------- #
# Read-only opens: each directory and file of the store replaced by a link to
# itself moved outside the store, so that reading through the link would give
# the intact store's answers. Each operation that reaches the place must refuse
# with IntegrityError naming the link; every other one must give the intact
# store's answer.

_IMAGE = PNG * 3
_IMAGE_ID = "sha256:" + hashlib.sha256(_IMAGE).hexdigest()

Operation = Callable[[storage.Store, str], object]
"""An operation on a store holding the conversation "chat" and a fork of it."""

_OPERATIONS: dict[str, Operation] = {
    "load": lambda store, fork: store.load("chat"),
    "load fork": lambda store, fork: store.load(fork),
    "salvage": lambda store, fork: store.load("chat", salvage=True),
    "verify": lambda store, fork: store.verify("chat"),
    "head": lambda store, fork: store.head("chat"),
    "exists": lambda store, fork: store.exists("chat"),
    "conversations": lambda store, fork: store.conversations(),
    "side file": lambda store, fork: store.sidecar("chat", "audit").read_lines(),
    "side files": lambda store, fork: store.sidecar_names("chat"),
    "blob": lambda store, fork: store.content.get(_IMAGE_ID),
    "has blob": lambda store, fork: store.content.has(_IMAGE_ID),
    "blobs": lambda store, fork: sorted(store.content.ids()),
    "references": lambda store, fork: store.referenced_content(),
    "stats": lambda store, fork: store.stats(),
    "gc dry run": lambda store, fork: store.collect_garbage(dry_run=True),
    "snapshot": lambda store, fork: recording.snapshot(store, "chat"),
}

# Salvage and verify read around a blob they cannot read: the record holding it
# is skipped (salvage) or reported (verify), the blob never read.
_IMAGE_READS = frozenset(
    ("load", "blob", "has blob", "blobs", "stats", "gc dry run", "snapshot")
)
# A link among the entries of conversations/ or sidecars/ is listed by its name,
# never followed: conversations() and sidecar_names() give the intact answer.
_LOG_READS = frozenset(
    (
        *("load", "load fork", "salvage", "verify", "head", "exists"),
        *("references", "stats", "gc dry run", "snapshot"),
    )
)
_SIDE_READS = frozenset(("side file", "references", "gc dry run", "snapshot"))
_FORK_READS = frozenset(("load fork", "references", "stats", "gc dry run"))

# place in the store ({shard}, {blob}: the image's; {fork}: the fork's id) ->
# the operations that read through it; None: opening the store refuses,
# read-only or not.
_PLACES: dict[str, frozenset[str] | None] = {
    "store.json": None,
    "gc.lock": None,
    "blobs": None,
    "blobs/sha256": None,
    "blobs/tmp": None,
    "conversations": None,
    "blobs/sha256/{shard}": _IMAGE_READS,
    "blobs/sha256/{shard}/{blob}": _IMAGE_READS,
    "conversations/chat": _LOG_READS | _SIDE_READS | {"side files"},
    "conversations/chat/messages.jsonl": _LOG_READS,
    "conversations/chat/head.json": frozenset(("verify",)),
    "conversations/chat/sidecars": _SIDE_READS | {"side files"},
    "conversations/chat/sidecars/audit.log": _SIDE_READS,
    "conversations/chat/forks": frozenset(),
    "conversations/chat/forks/{fork}": frozenset(),
    "conversations/chat/attachments": frozenset(),
    "conversations/chat/attachments/notes.txt": frozenset(),
    "conversations/{fork}": _FORK_READS,
    "conversations/{fork}/messages.jsonl": _FORK_READS,
    "conversations/{fork}/fork.json": frozenset(("load fork",)),
    "conversations/{fork}/head.json": frozenset(),
}


def _readable_store(root: Path) -> str:
    """A store holding a blob, a side file, an attachment and a fork (its id)."""
    with open_store(root) as store:
        assert isinstance(store, storage.FileStore)
        first = _user()
        store.extend("chat", [first, c.User(content=(c.Image(data=_IMAGE),))])
        store.sidecar("chat", "audit").append_line(f"saw {_IMAGE_ID}")
        store.attachment_path("chat", "notes.txt").write_text("notes")
        fork = store.fork("chat", first.id)
        store.append(fork, _user("in the fork"))
    return fork


@pytest.mark.parametrize("place", list(_PLACES))
def test_read_only_open_reads_through_no_link(tmp_path: Path, place: str) -> None:
    root = tmp_path / "store"
    fork = _readable_store(root)
    with open_store(root, read_only=True) as store:
        intact = {name: run(store, fork) for name, run in _OPERATIONS.items()}
    loaded = intact["load"]
    assert isinstance(loaded, c.Conversation)
    assert loaded[1].content[0].data == _IMAGE  # type: ignore[attr-defined]
    digest = _IMAGE_ID[7:]
    link = root / place.format(shard=digest[:2], blob=digest, fork=fork)
    moved = tmp_path / "outside" / link.name
    moved.parent.mkdir()
    link.rename(moved)
    link.symlink_to(moved)
    through = _PLACES[place]
    if through is None:
        _refused(lambda: open_store(root, read_only=True), link)
        _refused(lambda: open_store(root), link)
        return
    with open_store(root, read_only=True) as store:
        for name, run in _OPERATIONS.items():
            if name in through:
                with pytest.raises(c.IntegrityError) as caught:
                    run(store, fork)
                assert "symbolic link" in str(caught.value), name
                assert str(link) in str(caught.value), name
            elif through is _IMAGE_READS and name == "salvage":
                assert run(store, fork) == loaded[:1]
            elif through is _IMAGE_READS and name == "verify":
                report = run(store, fork)
                assert isinstance(report, storage.Verification)
                assert [problem.code for problem in report.problems] == ["content"]
                assert str(link) in report.problems[0].message
            else:
                assert run(store, fork) == intact[name], name


# --------------------------------------------------------------------------- #
# SQLite keeps its write-ahead log and shared memory beside the database file.


@pytest.mark.parametrize("suffix", ["-wal", "-shm", "-journal"])
@pytest.mark.parametrize("read_only", [True, False])
def test_sqlite_companion_file_linked_out(
    tmp_path: Path, outside: Path, suffix: str, read_only: bool
) -> None:
    database = tmp_path / "store.db"
    with open_store(f"sqlite:///{database}") as store:
        store.append("chat", _user())
    link = Path(f"{database}{suffix}")
    _plant(link, outside / "precious.txt")
    _refused(lambda: open_store(f"sqlite:///{database}", read_only=read_only), link)


def test_a_linked_sqlite_database_is_fine(tmp_path: Path) -> None:
    real = tmp_path / "real" / "store.db"
    real.parent.mkdir()
    with open_store(f"sqlite:///{real}") as store:
        store.append("chat", _user())
    alias = tmp_path / "alias.db"
    alias.symlink_to(real)
    with open_store(f"sqlite:///{alias}") as store:
        store.append("chat", _user("again"))
    with open_store(f"sqlite:///{alias}", read_only=True) as store:
        assert len(store.load("chat")) == 2
