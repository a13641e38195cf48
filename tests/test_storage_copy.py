"""canisters store copy / storage.copy_store: between any two stores, resumable."""

from __future__ import annotations

from pathlib import Path

import pytest

import canisters as c
from canisters.cli import run
from canisters.storage import copy_store, open_store

from .test_cli import run_on_terminal

PNG = b"\x89PNG\r\n\x1a\n" + bytes(range(256)) * 4


def _fill(location: str) -> dict[str, list[c.Canister]]:
    """A source store: media, a fork, side files, a blob named only by id."""
    with open_store(location) as store:
        named = store.content.put(b"kept by id only")
        chat = [
            c.Supervisor("You are terse."),
            c.User((c.Text("look"), c.Image(data=PNG))),
            c.Assistant("x" * 3000),
            c.User((c.Image(content_id=named),)),
        ]
        store.extend("chat", chat)
        child = store.fork("chat", chat[1].id)
        store.append(child, c.User("another way"))
        store.extend("empty", [])
        store.extend("long", [c.User(f"message {n}") for n in range(30)])
        store.sidecar("chat", "audit").append_line("first")
        store.sidecar("chat", "audit").append_line(f"named {named}")
        store.sidecar("empty", "notes").append_line("a note")
        return {cid: list(store.load(cid)) for cid in store.conversations()}


def _check(
    source: str, target: str, expected: dict[str, list[c.Canister]], **options: str
) -> None:
    with open_store(source) as one, open_store(target, **options) as two:
        assert two.conversations() == sorted(expected)
        for cid, canisters in expected.items():
            assert list(two.load(cid)) == canisters
            assert two.head(cid) == one.head(cid)
            assert two.verify(cid).ok
        assert (
            two.sidecar("chat", "audit").read_lines()
            == one.sidecar("chat", "audit").read_lines()
        )
        assert two.sidecar("empty", "notes").read_lines() == ["a note"]
        assert two.sidecar_names("chat") == ["audit"]
        assert two.referenced_content() == one.referenced_content()
        for content_id in one.referenced_content():
            assert two.content.get(content_id) == one.content.get(content_id)


def test_a_directory_to_postgres_and_s3(
    tmp_path: Path,
    postgres_location: str,
    s3_blobs: str,
    capsys: pytest.CaptureFixture[str],
) -> None:
    source = str(tmp_path / "store")
    expected = _fill(source)
    code = run(["store", "copy", source, postgres_location, "--target-blobs", s3_blobs])
    out = capsys.readouterr()
    assert code == 0, out.err
    assert f"{len(expected)} conversations verified (0 already complete)" in out.out
    _check(source, postgres_location, expected, blobs=s3_blobs)
    # Run again: everything is there already, nothing copied.
    assert (
        run(["store", "copy", source, postgres_location, "--target-blobs", s3_blobs])
        == 0
    )
    assert (
        f"copied 0 records and 0 blobs; {len(expected)} conversations verified ({len(expected)} already complete)"
        in capsys.readouterr().out
    )


def test_an_interrupted_copy_resumes(tmp_path: Path) -> None:
    source = f"sqlite:///{tmp_path / 'a.db'}"
    target = str(tmp_path / "copy")
    expected = _fill(source)
    # What an interrupted run leaves: part of one log, part of a side file.
    with open_store(target) as partial:
        partial.extend("long", expected["long"][:12])
        partial.sidecar("chat", "audit").append_line("first")
    with open_store(source) as one, open_store(target) as two:
        report = copy_store(one, two)
    total = sum(len(x) for x in expected.values())
    assert report.copied_records == total - 12
    assert report.conversations == len(expected)
    _check(source, target, expected)


def test_a_different_conversation_in_the_target_is_not_overwritten(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    source = str(tmp_path / "a")
    target = str(tmp_path / "b")
    _fill(source)
    with open_store(target) as other:
        other.append("chat", c.User("something else"))
    assert run(["store", "copy", source, target]) != 0
    assert (
        "chat: the target already holds a different conversation"
        in capsys.readouterr().err
    )
    with open_store(target) as other:
        assert len(other.load("chat")) == 1


def test_copy_shows_progress_on_a_terminal(tmp_path: Path) -> None:
    source = str(tmp_path / "a")
    _fill(source)
    output, code = run_on_terminal(
        ["store", "copy", source, f"sqlite:///{tmp_path / 'b.db'}"]
    )
    assert code == 0, output
    assert "copying" in output and "100%" in output


def test_a_source_recording_a_canister_twice_is_refused_clearly(
    tmp_path: Path,
) -> None:
    """A log that holds one canister twice (written before stores recorded an
    id once) cannot be copied to a store, which would record it once."""
    from canisters.serialization import unstructure_canister
    from canisters.storage._chain import encode_record

    source, target = tmp_path / "source", tmp_path / "target"
    retried = c.User("sent twice")
    with open_store(source) as store:
        store.append("chat", retried)
    log = source / "conversations" / "chat" / "messages.jsonl"
    first = log.read_bytes()
    digest = first.rstrip(b"\n")[-66:-2].decode()
    again, _ = encode_record(1, digest, unstructure_canister(retried))
    log.write_bytes(first + again)
    (source / "conversations" / "chat" / "head.json").unlink()
    with open_store(source) as store, open_store(target) as copy:
        assert len(store.load("chat")) == 2
        with pytest.raises(c.StorageError, match="more than once"):
            copy_store(store, copy)
