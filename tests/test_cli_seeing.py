"""``canisters show --html``, ``store list`` and ``store verify``, run for real."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from canisters import (
    Assistant,
    Document,
    ErrorInfo,
    Invocation,
    Metadata,
    Result,
    Text,
    User,
    storage,
    to_json,
)

from .html_support import Page, sample
from .test_cli import EXAMPLE, ROOT, canisters_cmd, run_on_terminal
from .view_support import BACKENDS, fill, location_of, tamper

STREAMS = ROOT / "tests" / "data" / "streams"


def _location(backend: str, tmp_path: Path, request: pytest.FixtureRequest) -> str:
    postgres = (
        request.getfixturevalue("postgres_location") if backend == "postgres" else None
    )
    return location_of(backend, tmp_path, postgres)


# show --html -----------------------------------------------------------------------


def test_show_html_of_a_provider_body_shows_its_image_call_and_result(
    tmp_path: Path,
) -> None:
    out = canisters_cmd("show", "--from", "anthropic", "--html", str(EXAMPLE))
    assert out.returncode == 0, out.stderr
    page = Page(out.stdout)
    roles = [
        e.attributes["data-role"] for e in page.elements if "data-role" in e.attributes
    ]
    assert {"user", "assistant", "invocation", "result"} <= set(roles)
    assert [e.attributes["src"][:15] for e in page.all("img")] == ["data:image/png;"]
    assert not page.all("script")
    written = tmp_path / "page.html"
    out = canisters_cmd(
        "show", "--from", "anthropic", "--html", "-o", str(written), str(EXAMPLE)
    )
    assert out.returncode == 0 and out.stdout == ""
    again = Page(written.read_text(encoding="utf-8"))
    assert [
        e.attributes["data-role"] for e in again.elements if "data-role" in e.attributes
    ] == roles


def test_show_html_reads_every_source_show_reads(tmp_path: Path) -> None:
    document = tmp_path / "conversation.json"
    document.write_text(to_json(sample()), encoding="utf-8")
    out = canisters_cmd("show", "--html", str(document))
    assert out.returncode == 0, out.stderr
    assert len(
        [e for e in Page(out.stdout).elements if "data-role" in e.attributes]
    ) == len(sample())
    stream = STREAMS / "openai-responses" / "reasoning-summary.sse"
    out = canisters_cmd("show", "--from", "openai-responses", "--html", str(stream))
    assert out.returncode == 0, out.stderr
    assert 'data-role="assistant"' in out.stdout
    assert '<details class="cv-reasoning">' in out.stdout
    location = str(tmp_path / "store")
    fill(location, fillers=0)
    out = canisters_cmd("show", "--html", location, "chat")
    assert out.returncode == 0, out.stderr
    page = Page(out.stdout)
    assert "conversation chat" in page.text and len(page.all("img")) == 1


@pytest.mark.parametrize(
    ("arguments", "message"),
    [
        (["--html", "--json", "X"], "give --html or --json, not both"),
        (["-o", "out.html", "X"], "-o writes the --html page; give --html too"),
        (
            ["--html", "STORE"],
            "--html shows one conversation: give its CONVERSATION_ID",
        ),
    ],
)
def test_show_html_errors_are_one_line(
    tmp_path: Path, arguments: list[str], message: str
) -> None:
    location = str(tmp_path / "store")
    storage.open_store(location).close()
    arguments = [location if a in ("X", "STORE") else a for a in arguments]
    out = canisters_cmd("show", *arguments, cwd=tmp_path)
    assert out.returncode == 2
    assert out.stderr == f"canisters: error: {message}\n"


# store list ------------------------------------------------------------------------


@pytest.mark.parametrize("backend", BACKENDS)
def test_store_list_gives_ids_lengths_and_forks(
    backend: str, tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    location = _location(backend, tmp_path, request)
    fork = fill(location, fillers=2)
    with storage.open_store(location) as store:
        chat = store.load("chat")
    out = canisters_cmd("store", "list", "--json", location)
    assert out.returncode == 0, out.stderr
    rows = {row["id"]: row for row in json.loads(out.stdout)}
    assert set(rows) == {"chat", fork, "damaged", "old-000", "old-001"}
    assert rows["chat"] == {
        "id": "chat",
        "records": len(chat),
        "fork_of": None,
        "fork_at": None,
        "forks": [fork],
    }
    assert rows[fork] == {
        "id": fork,
        "records": 5,
        "fork_of": "chat",
        "fork_at": chat[3].id,
        "forks": [],
    }
    assert rows["damaged"]["records"] == 3
    text = canisters_cmd("store", "list", location)
    assert text.returncode == 0
    lines = {line.split()[0]: line for line in text.stdout.splitlines()}
    assert "11 records" in lines["chat"] and "1 fork" in lines["chat"]
    assert f"fork of chat at {chat[3].id}" in lines[fork]


def test_store_list_of_an_empty_store(tmp_path: Path) -> None:
    location = str(tmp_path / "store")
    storage.open_store(location).close()
    assert canisters_cmd("store", "list", location).stdout == "no conversations\n"
    assert json.loads(canisters_cmd("store", "list", "--json", location).stdout) == []


# store verify ----------------------------------------------------------------------


@pytest.mark.parametrize("backend", BACKENDS)
def test_store_verify_finds_a_tampered_record(
    backend: str, tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    location = _location(backend, tmp_path, request)
    fill(location, fillers=2)
    out = canisters_cmd("store", "verify", location)
    assert out.returncode == 0, out.stderr
    assert out.stdout.endswith("verified 5 conversations (21 records): intact\n")
    tamper(backend, location)
    out = canisters_cmd("store", "verify", location)
    assert out.returncode == 1, out.stderr
    problems = out.stdout.splitlines()[:-1]
    assert problems, out.stdout
    where = "line 2" if backend == "files" else "record 2"
    assert problems[0].startswith(f"damaged: damaged {where}: "), problems
    assert problems[0].endswith("(digest)")
    assert all(line.startswith("damaged: ") for line in problems)
    assert out.stdout.splitlines()[-1].startswith("verified 5 conversations")
    # Only the named conversations are checked.
    out = canisters_cmd("store", "verify", location, "chat", "old-000")
    assert out.returncode == 0, out.stdout
    assert "verified 2 conversations" in out.stdout
    out = canisters_cmd("store", "verify", location, "damaged")
    assert out.returncode == 1


def test_store_verify_counts_an_absent_conversation_as_a_problem(
    tmp_path: Path,
) -> None:
    location = str(tmp_path / "store")
    fill(location, fillers=0)
    out = canisters_cmd("store", "verify", location, "chat", "nobody")
    assert out.returncode == 1
    assert out.stdout.splitlines()[0].startswith("nobody: ")
    out = canisters_cmd("store", "verify", str(tmp_path / "absent"))
    assert out.returncode == 2
    assert "no such store" in out.stderr


def test_store_verify_shows_progress_on_a_terminal(tmp_path: Path) -> None:
    location = str(tmp_path / "store")
    fill(location, fillers=3)
    output, code = run_on_terminal(["store", "verify", location])
    assert code == 0, output
    assert "verifying" in output and "100%" in output
    assert "verifying" not in canisters_cmd("store", "verify", location).stderr


# Control characters -------------------------------------------------------------------

# What a planted record or fork note could send a terminal: a window title and a
# clipboard write (OSC 0 and 52), a link (OSC 8), a screen clear, a bell, an
# 8-bit CSI.
ESCAPES = (
    "\x1b]0;owned\x07",
    "\x1b]52;c;ZWNobyBvd25lZA==\x07",
    "\x1b]8;;https://evil.example\x1b\\click\x1b]8;;\x1b\\",
    "\x1b[2J\x1b[H",
    "\x9b31m",
    "\r\x08\x00",
)
CONTROLS = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f]")


def test_store_list_and_show_print_no_control_character(tmp_path: Path) -> None:
    location = str(tmp_path / "store")
    hostile = "".join(ESCAPES)
    with storage.open_store(location) as store:
        call = Invocation(f"tool{hostile}", {"a": hostile}, invocation_id="c1")
        store.extend(
            "chat",
            [
                User(f"hello {hostile} there"),
                Document((Text("d"),), title=hostile),
                Assistant(
                    "ok", metadata=Metadata(model=hostile, finish_reason=hostile)
                ),
                call,
                Result(
                    "c1", call.name, (Text(hostile),), error=ErrorInfo(hostile, hostile)
                ),
            ],
        )
        store.extend("other", [User("plain")])
    note = Path(location) / "conversations" / "other" / "fork.json"
    note.write_text(
        json.dumps({"parent": "chat", "at": hostile, "seq": 1, "head": "0" * 64})
    )
    outputs = [
        canisters_cmd("store", "list", location),
        canisters_cmd("show", location),
        canisters_cmd("show", location, "chat"),
    ]
    for out in outputs:
        assert out.returncode == 0, out.stderr
        assert CONTROLS.search(out.stdout) is None, out.stdout
        assert CONTROLS.search(out.stderr) is None, out.stderr
    assert "fork of chat at \\x1b]0;owned\\x07" in outputs[0].stdout
    assert "hello \\x1b]0;owned\\x07" in outputs[2].stdout
    listing, code = run_on_terminal(["store", "list", location])
    assert code == 0
    assert "\x1b]" not in listing and "\\x1b]0;owned" in listing
