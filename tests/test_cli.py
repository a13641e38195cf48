"""The ``canisters`` command, run for real in subprocesses."""

from __future__ import annotations

import base64
import hashlib
import json
import os
import pty
import re
import select
import shlex
import shutil
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

import canisters
from canisters import (
    Assistant,
    Audio,
    Conversation,
    Image,
    Invocation,
    Metadata,
    Result,
    Text,
    Usage,
    User,
    providers,
    storage,
)
from canisters.audit import AuditLog
from canisters.cli import run

ROOT = Path(__file__).resolve().parent.parent
EXAMPLE = ROOT / "documentation" / "examples" / "anthropic-request.json"
DATA = ROOT / "tests" / "data" / "providers"
SCRIPT = Path(sys.executable).parent / "canisters"
ANSI = re.compile(r"\x1b\[[0-9;]*m")


def canisters_cmd(
    *args: str,
    stdin: str | bytes | None = None,
    cwd: Path | None = None,
    script: bool = False,
    env: dict[str, str] | None = None,
) -> subprocess.CompletedProcess[str]:
    command = [str(SCRIPT)] if script else [sys.executable, "-m", "canisters"]
    if isinstance(stdin, bytes):
        stdin = stdin.decode()
    return subprocess.run(
        [*command, *args],
        input=stdin,
        capture_output=True,
        text=True,
        cwd=cwd,
        env={**os.environ, **(env or {})},
        timeout=120,
    )


def assert_one_line_error(out: subprocess.CompletedProcess[str], *words: str) -> None:
    assert out.returncode == 2, (out.stdout, out.stderr)
    assert "Traceback" not in out.stderr
    lines = out.stderr.splitlines()
    assert len(lines) == 1, out.stderr
    assert lines[0].startswith("canisters: error: ")
    for word in words:
        assert word in lines[0], lines[0]


def payload(provider: str, name: str, tmp_path: Path) -> Path:
    case = json.loads((DATA / provider / name).read_text(encoding="utf-8"))
    path = tmp_path / f"{provider}-{Path(name).name}"
    path.write_text(json.dumps(case["payload"]), encoding="utf-8")
    return path


def neutral(conversation: Conversation, path: Path) -> Path:
    path.write_text(canisters.to_json(conversation), encoding="utf-8")
    return path


# The README's first command ---------------------------------------------------------


def readme_first_command() -> str:
    text = (ROOT / "README.rst").read_text(encoding="utf-8")
    commands = re.findall(r"^\.\. code-block:: bash\n\n   (.+)$", text, re.MULTILINE)
    return commands[0]


def test_readme_first_command_installs_converts_and_shows() -> None:
    command = readme_first_command()
    assert command.startswith(
        "python3 -m venv .venv && .venv/bin/pip install -q -e . && "
    )
    assert "canisters convert --from anthropic --to openai-chat" in command
    assert "documentation/examples/anthropic-request.json" in command
    assert "canisters show" in command
    assert "/tmp" not in command


def test_readme_first_command_effect(tmp_path: Path) -> None:
    # Everything after the install, with this environment's script, in a copy.
    command = readme_first_command().split("pip install -q -e . && ", 1)[1]
    command = command.replace(".venv/bin/canisters", shlex.quote(str(SCRIPT)))
    (tmp_path / "documentation" / "examples").mkdir(parents=True)
    shutil.copy(EXAMPLE, tmp_path / "documentation" / "examples")
    out = subprocess.run(
        command, shell=True, cwd=tmp_path, capture_output=True, text=True, check=True
    )
    assert "Traceback" not in out.stderr
    converted = json.loads((tmp_path / "converted.json").read_text(encoding="utf-8"))
    roles = [message["role"] for message in converted["messages"]]
    assert roles == ["system", "user", "assistant", "tool"]
    image = converted["messages"][1]["content"][0]
    assert image["type"] == "image_url"
    assert image["image_url"]["url"].startswith("data:image/png;base64,iVBOR")
    call = converted["messages"][2]["tool_calls"][0]
    assert call["function"]["name"] == "get_weather"
    assert converted["messages"][3]["tool_call_id"] == call["id"]
    shown = out.stdout
    for expected in ("supervisor", "user", "assistant", "invocation", "get_weather"):
        assert expected in shown
    assert re.search(r"\[image · image/png · 166 B · sha256:[0-9a-f]{16}\]", shown)
    assert "└ result 21 °C, sunny" in shown
    assert "usage: none recorded" in shown
    assert "\x1b[" not in shown  # not a terminal: no colour


def test_converted_json_is_ignored_by_git() -> None:
    gitignore = (ROOT / ".gitignore").read_text(encoding="utf-8").splitlines()
    assert "converted.json" in gitignore


# Entry points, help ---------------------------------------------------------------


def test_console_script_and_module_agree() -> None:
    assert SCRIPT.exists()
    by_script = canisters_cmd("--version", script=True)
    by_module = canisters_cmd("--version")
    assert by_script.returncode == by_module.returncode == 0
    assert by_script.stdout == by_module.stdout
    assert canisters.__version__ in by_script.stdout


def test_import_canisters_does_not_import_click() -> None:
    code = (
        "import sys, canisters, canisters.providers, canisters.storage, "
        "canisters.recording; print('click' in sys.modules)"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    )
    assert out.stdout.strip() == "False"


HELP = [
    (),
    ("convert",),
    ("show",),
    ("validate",),
    ("store",),
    ("store", "stats"),
    ("store", "export"),
    ("store", "import"),
    ("store", "gc"),
    ("store", "search"),
    ("store", "reindex"),
    ("store", "redact"),
    ("store", "expire"),
]


@pytest.mark.parametrize("command", HELP, ids=lambda c: " ".join(c) or "canisters")
def test_every_command_has_help_with_an_example(command: tuple[str, ...]) -> None:
    out = canisters_cmd(*command, "--help")
    assert out.returncode == 0, out.stderr
    assert out.stdout.startswith("Usage: canisters")
    assert "Examples:" in out.stdout
    assert re.search(r"^\s+canisters ", out.stdout, re.MULTILINE)


# Errors ---------------------------------------------------------------------------


def test_bad_json(tmp_path: Path) -> None:
    bad = tmp_path / "bad.json"
    bad.write_text("{not json", encoding="utf-8")
    out = canisters_cmd("convert", "--from", "anthropic", "--to", "ollama", str(bad))
    assert_one_line_error(out, "bad.json", "not valid JSON")
    out = canisters_cmd("show", str(bad))
    assert_one_line_error(out, "bad.json", "not valid JSON")


def test_bad_json_on_stdin() -> None:
    out = canisters_cmd("convert", "--from", "anthropic", "--to", "ollama", stdin="[")
    assert_one_line_error(out, "<stdin>", "not valid JSON")


def test_unknown_provider() -> None:
    for args in (
        ("--from", "nope", "--to", "anthropic"),
        ("--from", "anthropic", "--to", "nope"),
    ):
        out = canisters_cmd("convert", *args, str(EXAMPLE))
        assert_one_line_error(
            out, "unknown provider 'nope'", "openai-chat", "canisters"
        )


def test_missing_file() -> None:
    out = canisters_cmd("convert", "--from", "anthropic", "--to", "ollama", "nope.json")
    assert_one_line_error(out, "nope.json: no such file")
    assert_one_line_error(canisters_cmd("validate", "nope.json"), "nope.json")
    assert_one_line_error(canisters_cmd("show", "nope.json"), "nope.json")


def test_directory_given_as_a_file(tmp_path: Path) -> None:
    out = canisters_cmd(
        "convert", "--from", "anthropic", "--to", "ollama", str(tmp_path)
    )
    assert_one_line_error(out, "is a directory")


def test_usage_errors_are_one_line() -> None:
    out = canisters_cmd("convert", "--frm", "anthropic")
    assert_one_line_error(out, "--frm", "canisters convert --help")
    out = canisters_cmd("convert", "--to", "anthropic", str(EXAMPLE))
    assert_one_line_error(out, "--from")
    out = canisters_cmd("frobnicate")
    assert_one_line_error(out, "frobnicate")
    out = canisters_cmd(
        "convert", "--from", "anthropic", "--to", "x", "--kind", "maybe"
    )
    assert_one_line_error(out, "maybe")


def test_malformed_provider_body_names_the_path(tmp_path: Path) -> None:
    out = canisters_cmd(
        "convert", "--from", "anthropic", "--to", "ollama", stdin='{"messages": 5}'
    )
    assert_one_line_error(out, "$.messages")
    out = canisters_cmd("convert", "--from", "anthropic", "--to", "ollama", stdin="[1]")
    assert_one_line_error(out, "expected a JSON object")


def test_error_bodies_and_undecidable_kinds(tmp_path: Path) -> None:
    error = payload("anthropic", "errors/orphan-tool-result-400.json", tmp_path)
    out = canisters_cmd("convert", "--from", "anthropic", "--to", "ollama", str(error))
    assert_one_line_error(out, "error body")
    out = canisters_cmd(
        "convert", "--from", "anthropic", "--to", "ollama", stdin='{"model": "x"}'
    )
    assert_one_line_error(out, "--kind")


def test_a_canisters_document_given_as_a_provider_body(tmp_path: Path) -> None:
    document = neutral(Conversation([User("hi")]), tmp_path / "c.json")
    out = canisters_cmd(
        "convert", "--from", "anthropic", "--to", "ollama", str(document)
    )
    assert_one_line_error(out, "--from canisters")


def test_a_provider_body_given_as_a_canisters_document() -> None:
    assert_one_line_error(canisters_cmd("show", str(EXAMPLE)), "--from PROVIDER")


def test_an_unreadable_canisters_document(tmp_path: Path) -> None:
    broken = tmp_path / "broken.json"
    broken.write_text(
        json.dumps(
            {"format": "canisters.conversation", "version": 2, "canisters": [{}]}
        ),
        encoding="utf-8",
    )
    out = canisters_cmd("show", str(broken))
    assert_one_line_error(out, "broken.json", "$.canisters[0]")


# convert --------------------------------------------------------------------------


def test_convert_to_stdout_from_stdin() -> None:
    out = canisters_cmd(
        "convert",
        "--from",
        "anthropic",
        "--to",
        "gemini",
        stdin=EXAMPLE.read_text(encoding="utf-8"),
    )
    assert out.returncode == 0, out.stderr
    body = json.loads(out.stdout)
    # The conversation's fields, beside the request's others where Gemini has them.
    assert {"systemInstruction", "contents"} <= set(body)
    assert body["contents"][0]["parts"][0]["inlineData"]["mimeType"] == "image/png"


def test_convert_through_the_neutral_document(tmp_path: Path) -> None:
    document = tmp_path / "conversation.json"
    out = canisters_cmd(
        "convert",
        "--from",
        "anthropic",
        "--to",
        "canisters",
        str(EXAMPLE),
        "-o",
        str(document),
    )
    assert out.returncode == 0, out.stderr
    conversation = canisters.from_json(document.read_text(encoding="utf-8"))
    assert isinstance(conversation, Conversation)
    canisters.validate(conversation)
    back = canisters_cmd(
        "convert", "--from", "canisters", "--to", "anthropic", str(document)
    )
    assert back.returncode == 0, back.stderr
    original = json.loads(EXAMPLE.read_text(encoding="utf-8"))
    rendered = json.loads(back.stdout)
    assert rendered["system"] == original["system"]
    assert rendered["messages"] == original["messages"]


def test_convert_compact(tmp_path: Path) -> None:
    out = canisters_cmd(
        "convert",
        "--from",
        "anthropic",
        "--to",
        "openai-chat",
        "--compact",
        str(EXAMPLE),
    )
    assert out.returncode == 0
    assert len(out.stdout.strip().splitlines()) == 1


def test_convert_response_detected(tmp_path: Path) -> None:
    response = payload(
        "anthropic", "thinking-signature-tool-use-response.json", tmp_path
    )
    out = canisters_cmd(
        "convert", "--from", "anthropic", "--to", "openai-chat", str(response)
    )
    assert out.returncode == 0, out.stderr
    body = json.loads(out.stdout)
    assert body["choices"][0]["message"]["tool_calls"][0]["function"]["name"]
    # The signed reasoning cannot go to OpenAI: listed on stderr, unless --quiet.
    assert "canisters: dropped" in out.stderr and "reasoning" in out.stderr
    quiet = canisters_cmd(
        "convert", "--from", "anthropic", "--to", "openai-chat", "-q", str(response)
    )
    assert quiet.stderr == ""
    loud, silent = json.loads(out.stdout), json.loads(quiet.stdout)
    loud.pop("created"), silent.pop("created")  # the time of conversion
    assert loud == silent


def test_convert_kind_forced(tmp_path: Path) -> None:
    response = payload(
        "anthropic", "thinking-signature-tool-use-response.json", tmp_path
    )
    out = canisters_cmd(
        "convert",
        "--from",
        "anthropic",
        "--to",
        "ollama",
        "--kind",
        "request",
        "-q",
        str(response),
    )
    # Parsed as a request, it has no messages: a clear error, not a traceback.
    assert_one_line_error(out, "messages")


@pytest.mark.parametrize(
    ("provider", "name"),
    [
        (provider.name, case.name)
        for provider in sorted(DATA.iterdir())
        for case in sorted(provider.glob("*.json"))
        if json.loads(case.read_text(encoding="utf-8")).get("kind")
        in ("request", "response")
        and "400" not in case.name
    ],
)
def test_every_recorded_body_converts_to_every_provider(
    provider: str, name: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # In process (cli.run is what the script calls): a subprocess per pair would
    # take minutes; the subprocess tests above cover the real command.
    path = payload(provider, name, tmp_path)
    for target in providers.names():
        code = run(
            [
                "convert",
                "--from",
                provider,
                "--to",
                target,
                "--unsupported",
                "placeholder",
                "-q",
                str(path),
            ]
        )
        out = capsys.readouterr()
        refused = REFUSED_WHOLE.get((name, target))
        if refused is not None and _whole(provider) and _whole(target):
            # A request field that is not what it says: refused in one line.
            assert code == 2 and refused in out.err, (target, out.err)
            assert len(out.err.splitlines()) == 1
            continue
        assert code == 0, (target, out.err)
        assert isinstance(json.loads(out.out), dict)


# Recorded requests whose settings another format refuses to translate, and why.
REFUSED_WHOLE = {
    # The SDK test-suite's tool schema has placeholders ("bar") for properties.
    ("sdk-all-params-system-blocks-cache-control.json", "gemini"): (
        "a schema must be an object"
    ),
}


def _whole(provider: str) -> bool:
    return isinstance(providers.get(provider), providers.RequestNormalizer)


def test_unsupported_content_policies(tmp_path: Path) -> None:
    conversation = Conversation(
        [
            User(
                (
                    Text("Transcribe this."),
                    Audio(data=b"RIFF....", mime_type="audio/wav"),
                )
            )
        ]
    )
    document = neutral(conversation, tmp_path / "audio.json")
    base = ("convert", "--from", "canisters", "--to", "anthropic", str(document))
    assert_one_line_error(canisters_cmd(*base), "anthropic cannot take", "audio")
    dropped = canisters_cmd(*base, "--unsupported", "drop")
    assert dropped.returncode == 0, dropped.stderr
    assert "canisters: dropped" in dropped.stderr
    assert "Traceback" not in dropped.stderr and "Warning" not in dropped.stderr
    content = json.loads(dropped.stdout)["messages"][0]["content"]
    assert [part["type"] for part in content] == ["text"]
    placeholder = canisters_cmd(*base, "--unsupported", "placeholder")
    assert placeholder.returncode == 0, placeholder.stderr
    texts = [
        part["text"]
        for part in json.loads(placeholder.stdout)["messages"][0]["content"]
    ]
    assert any("audio" in text for text in texts[1:])


# show -----------------------------------------------------------------------------


def tool_conversation() -> Conversation:
    call = Invocation("lookup", {"q": "weather"}, invocation_id="call-1", step=1)
    pending = Invocation("search", {"q": "news"}, invocation_id="call-2", step=1)
    return Conversation(
        [
            User((Text("Hello"), Image(url="https://example.com/cat.png")), step=0),
            Assistant(
                (Text("Let me look."),),
                step=1,
                metadata=Metadata(model="m-1", usage=Usage(10, 5)),
            ),
            call,
            pending,
            Result("call-1", "lookup", (Text("sunny"),), step=1),
            Assistant(
                (Text("It is sunny."),), step=2, metadata=Metadata(usage=Usage(20, 7))
            ),
        ]
    )


def test_show_pairs_steps_media_and_usage(tmp_path: Path) -> None:
    document = neutral(tool_conversation(), tmp_path / "c.json")
    out = canisters_cmd("show", str(document))
    assert out.returncode == 0, out.stderr
    text = out.stdout
    assert "(6 canisters, 3 steps)" in text
    assert (
        text.index("── step 0 ──") < text.index("── step 1 ──") < text.index("step 2")
    )
    assert "[image · https://example.com/cat.png]" in text
    # The result sits beneath its invocation, not in its own place.
    lookup = text.index("lookup(")
    assert lookup < text.index("└ result sunny") < text.index("search(")
    assert "└ pending: no result" in text
    assert "m-1 · 10 in / 5 out tokens" in text
    assert "usage: 30 input · 12 output · 42 total tokens" in text
    assert "\x1b[" not in text


def test_show_colour_on_request_and_never_with_no_color(tmp_path: Path) -> None:
    document = neutral(tool_conversation(), tmp_path / "c.json")
    coloured = canisters_cmd("--color", "show", str(document))
    assert "\x1b[" in coloured.stdout
    assert ANSI.sub("", coloured.stdout) == canisters_cmd("show", str(document)).stdout
    plain = canisters_cmd("show", str(document), env={"NO_COLOR": "1"})
    assert "\x1b[" not in plain.stdout


def test_show_colour_on_a_terminal(tmp_path: Path) -> None:
    document = neutral(tool_conversation(), tmp_path / "c.json")
    output, _ = run_on_terminal(["show", str(document)])
    assert "\x1b[" in output


def test_show_json_round_trips(tmp_path: Path) -> None:
    conversation = tool_conversation()
    document = neutral(conversation, tmp_path / "c.json")
    out = canisters_cmd("show", "--json", str(document))
    assert canisters.from_json(out.stdout) == conversation


def test_show_reads_jsonl_canister_and_stdin(tmp_path: Path) -> None:
    conversation = tool_conversation()
    jsonl = tmp_path / "c.jsonl"
    jsonl.write_text(canisters.to_jsonl(conversation), encoding="utf-8")
    assert "(6 canisters" in canisters_cmd("show", str(jsonl)).stdout
    one = canisters.to_json(User("only me"))
    out = canisters_cmd("show", "-", stdin=one)
    assert out.returncode == 0, out.stderr
    assert "only me" in out.stdout


def test_show_provider_body_with_usage(tmp_path: Path) -> None:
    response = payload(
        "anthropic", "thinking-signature-tool-use-response.json", tmp_path
    )
    out = canisters_cmd("show", "--from", "anthropic", str(response))
    assert out.returncode == 0, out.stderr
    assert "[reasoning, signed by anthropic]" in out.stdout
    assert "usage: 443 input · 241 output · 684 total tokens" in out.stdout


def test_show_file_with_conversation_id_is_refused(tmp_path: Path) -> None:
    document = neutral(tool_conversation(), tmp_path / "c.json")
    assert_one_line_error(canisters_cmd("show", str(document), "x"), "not a store")


# validate -------------------------------------------------------------------------


def invalid_conversation() -> Conversation:
    user = User("hi")
    return Conversation(
        [
            user,
            User(()),
            Result("nobody", "tool", (Text("?"),)),
            Invocation("", invocation_id="dup"),
            Invocation("t", invocation_id="dup"),
        ]
    )


def test_validate_lists_every_problem(tmp_path: Path) -> None:
    conversation = invalid_conversation()
    expected = canisters.problems(conversation)
    assert len(expected) >= 4
    bad = neutral(conversation, tmp_path / "bad.json")
    good = neutral(tool_conversation(), tmp_path / "good.json")
    out = canisters_cmd("validate", str(good), str(bad))
    assert out.returncode == 1, out.stderr
    lines = out.stdout.splitlines()
    assert f"{good}: valid (6 canisters)" in lines
    for problem in expected:
        assert f"{bad}: {problem}" in lines
    assert f"{len(expected)} problems, 0 unreadable, in 2 files" in lines


def test_validate_valid_files_exit_zero(tmp_path: Path) -> None:
    good = neutral(tool_conversation(), tmp_path / "good.json")
    out = canisters_cmd("validate", str(good), "--from", "canisters")
    assert out.returncode == 0
    out = canisters_cmd("validate", "--from", "anthropic", str(EXAMPLE), script=True)
    assert out.returncode == 0, out.stderr
    assert "valid (5 canisters)" in out.stdout


def test_validate_unreadable_file_is_an_error_but_the_rest_is_checked(
    tmp_path: Path,
) -> None:
    bad = neutral(invalid_conversation(), tmp_path / "bad.json")
    out = canisters_cmd("validate", str(tmp_path / "missing.json"), str(bad))
    assert out.returncode == 2
    assert "missing.json: no such file" in out.stderr
    assert f"{bad}: [" in out.stdout


def test_validate_needs_a_file() -> None:
    assert_one_line_error(canisters_cmd("validate"), "FILE")


# store ----------------------------------------------------------------------------

BACKENDS = ["file", "sqlite"]


def location(backend: str, tmp_path: Path, name: str = "store") -> str:
    if backend == "file":
        return str(tmp_path / name)
    return f"sqlite:///{tmp_path / name}.db"


def filled(backend: str, tmp_path: Path) -> tuple[str, bytes]:
    where = location(backend, tmp_path)
    picture = os.urandom(4000)
    with storage.open_store(where) as store:
        for number in range(3):
            store.extend(
                f"chat-{number}",
                [
                    User((Text(f"look {number}"), Image(data=picture))),
                    Assistant((Text("nice"),)),
                ],
            )
        store.content.put(b"nobody refers to me" * 10)
    return where, picture


@pytest.mark.parametrize("backend", BACKENDS)
def test_store_stats(backend: str, tmp_path: Path) -> None:
    where, picture = filled(backend, tmp_path)
    out = canisters_cmd("store", "stats", "--json", where)
    assert out.returncode == 0, out.stderr
    figures = json.loads(out.stdout)
    assert figures["conversations"] == 3
    assert figures["records"] == 6
    assert figures["blobs"] == 2
    assert figures["blob_bytes"] == len(picture) + 190
    assert figures["references"] == 3
    assert figures["referenced_bytes"] == 3 * len(picture)
    assert figures["dedup_ratio"] == pytest.approx(3 * 4000 / 4190, abs=1e-3)
    text = canisters_cmd("store", "stats", where).stdout
    assert "conversations  3" in text
    assert re.search(r"dedup ratio\s+2\.86x", text)


@pytest.mark.parametrize("backend", BACKENDS)
def test_show_store(backend: str, tmp_path: Path) -> None:
    where, _picture = filled(backend, tmp_path)
    listing = canisters_cmd("show", where)
    assert listing.returncode == 0, listing.stderr
    assert [line.split()[0] for line in listing.stdout.splitlines()] == [
        "chat-0",
        "chat-1",
        "chat-2",
    ]
    listed = json.loads(canisters_cmd("show", "--json", where).stdout)
    assert listed[0] == {"id": "chat-0", "records": 2}
    out = canisters_cmd("show", where, "chat-1")
    assert out.returncode == 0, out.stderr
    assert "conversation chat-1  (2 canisters)" in out.stdout
    assert re.search(r"\[image · 3\.9 KiB · sha256:[0-9a-f]{16}\]", out.stdout)
    missing = canisters_cmd("show", where, "chat-9")
    assert_one_line_error(missing, "chat-9")


@pytest.mark.parametrize("source", BACKENDS)
def test_store_export_import_across_backends(source: str, tmp_path: Path) -> None:
    where, _picture = filled(source, tmp_path)
    other = location("sqlite" if source == "file" else "file", tmp_path, "other")
    exported = tmp_path / "chat-1.json"
    out = canisters_cmd("store", "export", where, "chat-1", "-o", str(exported))
    assert out.returncode == 0, out.stderr
    document = json.loads(exported.read_text(encoding="utf-8"))
    assert document["format"] == "canisters.snapshot"
    imported = canisters_cmd("store", "import", other, str(exported))
    assert imported.returncode == 0, imported.stderr
    assert imported.stdout.strip() == "chat-1"
    piped = canisters_cmd("store", "export", where, "chat-1")
    again = canisters_cmd(
        "store", "import", other, "-", "--id", "copy", stdin=piped.stdout
    )
    assert again.stdout.strip() == "copy"
    clash = canisters_cmd("store", "import", other, str(exported), "--id", "copy")
    assert_one_line_error(clash, "already exists")
    with storage.open_store(where) as a, storage.open_store(other) as b:
        assert b.load("chat-1") == a.load("chat-1") == b.load("copy")
    # The exported document also shows and validates as a file.
    assert canisters_cmd("validate", str(exported)).returncode == 0


def test_store_errors(tmp_path: Path) -> None:
    assert_one_line_error(
        canisters_cmd("store", "stats", str(tmp_path / "nowhere")), "no such store"
    )
    assert_one_line_error(
        canisters_cmd("store", "gc", f"sqlite:///{tmp_path}/none.db"), "no such store"
    )
    assert not (tmp_path / "none.db").exists()
    plain = tmp_path / "plain"
    plain.mkdir()
    assert_one_line_error(canisters_cmd("show", str(plain)), "not a canisters store")
    assert list(plain.iterdir()) == []
    where, _picture = filled("file", tmp_path)
    assert_one_line_error(canisters_cmd("store", "export", where, "chat-9"), "chat-9")
    assert_one_line_error(
        canisters_cmd("store", "export", where, "../escape"), "conversation id"
    )
    junk = tmp_path / "junk.json"
    junk.write_text('{"format": "canisters.snapshot"}', encoding="utf-8")
    assert_one_line_error(
        canisters_cmd("store", "import", where, str(junk)), "junk.json"
    )


@pytest.mark.parametrize("backend", BACKENDS)
def test_store_gc_removes_only_unreferenced_blobs(backend: str, tmp_path: Path) -> None:
    where, _picture = filled(backend, tmp_path)
    with storage.open_store(where) as store:
        before = set(store.content.ids())
        referenced = store.referenced_content()
        conversations = {cid: store.load(cid) for cid in store.conversations()}
    assert len(before - referenced) == 1
    dry = canisters_cmd("store", "gc", "--dry-run", where)
    assert dry.returncode == 0, dry.stderr
    assert "would remove 1 blob (190 B), kept 1" in dry.stdout
    assert (before - referenced).pop() in dry.stdout
    out = canisters_cmd("store", "gc", where)
    assert "removed 1 blob (190 B), kept 1" in out.stdout
    with storage.open_store(where) as store:
        assert set(store.content.ids()) == referenced
        for cid, conversation in conversations.items():
            assert store.load(cid) == conversation
            assert store.verify(cid).ok
    assert "removed 0 blobs" in canisters_cmd("store", "gc", where).stdout


WRITER = textwrap.dedent(
    """
    import os, sys
    from canisters import Image, Text, User, storage

    where, stop = sys.argv[1], sys.argv[2]
    number = 0
    with storage.open_store(where, durability="flush") as store:
        while not os.path.exists(stop):
            picture = os.urandom(2048) + number.to_bytes(4, "big")
            store.append(f"w-{number % 5}", User((Text("x"), Image(data=picture))))
            number += 1
    print(number)
    """
)


@pytest.mark.parametrize("backend", BACKENDS)
def test_store_gc_never_removes_a_blob_another_process_is_appending(
    backend: str, tmp_path: Path
) -> None:
    where, _picture = filled(backend, tmp_path)
    stop = tmp_path / "stop"
    writer = subprocess.Popen(
        [sys.executable, "-c", WRITER, where, str(stop)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        for _ in range(4):  # each collection runs while the writer appends
            out = canisters_cmd("store", "gc", where)
            assert out.returncode == 0, out.stderr
            assert writer.poll() is None, writer.communicate()
    finally:
        stop.touch()
        stdout, stderr = writer.communicate(timeout=120)
    assert writer.returncode == 0, stderr
    appended = int(stdout)
    assert appended > 0
    assert canisters_cmd("store", "gc", where).returncode == 0
    with storage.open_store(where) as store:
        for cid in store.conversations():
            verification = store.verify(cid)
            assert verification.ok, verification.problems
            store.load(cid)  # every blob is there and intact
        # The shared picture, and one per append: nothing referenced went.
        assert store.stats().blobs == 1 + appended


# Progress on a terminal -----------------------------------------------------------


def run_on_terminal(args: list[str]) -> tuple[str, int]:
    """Run the command with stdout and stderr on a pseudo-terminal."""
    leader, follower = pty.openpty()
    process = subprocess.Popen(
        [sys.executable, "-m", "canisters", *args],
        stdin=subprocess.DEVNULL,
        stdout=follower,
        stderr=follower,
        env={k: v for k, v in os.environ.items() if k != "NO_COLOR"},
    )
    os.close(follower)
    chunks = []
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        ready, _, _ = select.select([leader], [], [], 0.5)
        if ready:
            try:
                chunk = os.read(leader, 65536)
            except OSError:
                break
            if not chunk:
                break
            chunks.append(chunk)
        elif process.poll() is not None:
            break
    os.close(leader)
    return b"".join(chunks).decode("utf-8", "replace"), process.wait(timeout=60)


@pytest.mark.parametrize("backend", BACKENDS)
def test_long_operations_show_progress_on_a_terminal(
    backend: str, tmp_path: Path
) -> None:
    where, _picture = filled(backend, tmp_path)
    output, code = run_on_terminal(["store", "gc", where])
    assert code == 0, output
    assert "collecting" in output and "100%" in output
    output, code = run_on_terminal(["store", "stats", where])
    assert code == 0, output
    assert "counting" in output
    # Not on a terminal: no bar.
    assert "collecting" not in canisters_cmd("store", "gc", where).stderr


# closed streams, input bounds, read-only stores ------------------------------------


def _shell(command: str, tmp_path: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        ["bash", "-c", f"{shlex.quote(sys.executable)} -m canisters {command}"],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        timeout=120,
    )


def test_closed_stdin_is_a_clear_error(tmp_path: Path) -> None:
    out = _shell("show - <&-", tmp_path)
    assert out.returncode == 2
    assert (
        out.stderr
        == "canisters: error: no FILE given, and stdin is closed (see --help)\n"
    )


def test_closed_stdout_is_an_error(tmp_path: Path) -> None:
    example = shlex.quote(str(EXAMPLE))
    for command in (
        f"convert --from anthropic --to openai-chat {example} >&-",
        f"show --from anthropic {example} >&-",
        f"show --from anthropic --json {example} >&-",
    ):
        out = _shell(command, tmp_path)
        assert out.returncode == 2, command
        assert "standard output is closed" in out.stderr, command
        assert "internal error" not in out.stderr
    written = tmp_path / "out.json"
    out = _shell(
        f"convert --from anthropic --to openai-chat {example} -o {written} >&-",
        tmp_path,
    )
    assert out.returncode == 0, out.stderr
    assert json.loads(written.read_text())["messages"]


def test_input_size_is_bounded(tmp_path: Path) -> None:
    big = canisters_cmd("show", "/dev/zero", env={"CANISTERS_MAX_INPUT": "100000"})
    assert_one_line_error(big, "larger than 100,000 bytes")
    assert "CANISTERS_MAX_INPUT" in big.stderr
    piped = canisters_cmd(
        "show", "-", stdin="x" * 2000, env={"CANISTERS_MAX_INPUT": "1000"}
    )
    assert_one_line_error(piped, "<stdin>: larger than 1,000 bytes")
    fits = canisters_cmd(
        "show",
        "--from",
        "anthropic",
        str(EXAMPLE),
        env={"CANISTERS_MAX_INPUT": str(EXAMPLE.stat().st_size)},
    )
    assert fits.returncode == 0, fits.stderr
    wrong = canisters_cmd("show", str(EXAMPLE), env={"CANISTERS_MAX_INPUT": "lots"})
    assert_one_line_error(wrong, "CANISTERS_MAX_INPUT must be a positive number")


def _tree(root: Path) -> dict[str, tuple[int, int]]:
    """Every file with its size and time (SQLite's own -wal / -shm files aside,
    which its readers share)."""
    return {
        str(path.relative_to(root)): (path.stat().st_size, path.stat().st_mtime_ns)
        for path in root.rglob("*")
        if not path.name.endswith(("-wal", "-shm"))
    }


@pytest.mark.parametrize("backend", BACKENDS)
def test_reading_commands_write_nothing_to_the_store(
    backend: str, tmp_path: Path
) -> None:
    where, _picture = filled(backend, tmp_path)
    if backend == "file":
        (tmp_path / "store" / "gc.lock").unlink()  # as a reader cannot create it
    before = _tree(tmp_path)
    for command in (
        ("show", where),
        ("show", where, "chat-1"),
        ("show", "--json", where, "chat-1"),
        ("store", "stats", where),
        ("store", "export", where, "chat-1"),
        ("store", "gc", "--dry-run", where),
    ):
        out = canisters_cmd(*command)
        assert out.returncode == 0, (command, out.stderr)
    assert _tree(tmp_path) == before


@pytest.mark.parametrize("backend", BACKENDS)
def test_show_json_of_a_stored_conversation_is_the_whole_document(
    backend: str, tmp_path: Path
) -> None:
    """``show --json`` writes one canister at a time; the text is what indenting
    the whole document gives."""
    where = location(backend, tmp_path)
    canisters_list = [
        User("héllo ✓"),
        Assistant((Text("reply"),)),
        Invocation("search", {"q": [1, 2, {"deep": None}]}),
        User((Text("look"), Image(data=b"\x89PNG\r\n\x1a\n" + bytes(64)))),
    ]
    with storage.open_store(where) as store:
        store.extend("chat", canisters_list)
        store.extend("empty", [])
        loaded = {name: store.load(name) for name in ("chat", "empty")}
    for name, conversation in loaded.items():
        out = canisters_cmd("show", "--json", where, name)
        assert out.returncode == 0, out.stderr
        document = json.loads(canisters.to_json(conversation))
        assert out.stdout == json.dumps(document, ensure_ascii=False, indent=2) + "\n"


def test_listing_a_store_shows_damaged_conversations_beside_the_others(
    tmp_path: Path,
) -> None:
    where = tmp_path / "store"
    with storage.open_store(where) as store:
        first = User("hi")
        store.append("chat", first)
        child = store.fork("chat", first.id)
    (where / "conversations" / child / "fork.json").write_bytes(b"[1, 2]")
    out = canisters_cmd("show", str(where))
    assert out.returncode == 0, out.stderr
    # The listing is sorted by id and the fork's id is random: find each line.
    lines = {line.split()[0].rstrip(":"): line for line in out.stdout.splitlines()}
    assert set(lines) == {"chat", child}
    assert lines["chat"].split()[:3] == ["chat", "1", "record"]
    assert "fork.json is not an object" in lines[child]
    listed = json.loads(canisters_cmd("show", "--json", str(where)).stdout)
    by_id = {entry["id"]: entry for entry in listed}
    assert by_id["chat"] == {"id": "chat", "records": 1}
    assert by_id[child]["records"] is None and "fork.json" in by_id[child]["error"]


# inputs that once ended in 'internal error' (issue 20) -------------------------------

_DEEP = "[" * 10_000 + "]" * 10_000
_V1 = '{"format":"canisters.conversation","version":1,"canisters":%s}'
_BIG = "9" * 30  # beyond 64 bits
_SURROGATE_AND_BIG = (
    '{"type":"tool_use","id":"t","name":"f","input":{"n":BIG,"s":"\\ud800"}}'
)
# (name, --from, file text, a pattern of the one-line error; None: it is read)
HOSTILE_INPUTS: list[tuple[str, str, str | bytes, str | None]] = [
    (
        "ollama-duration-beyond-a-float",
        "ollama",
        '{"model":"m","message":{"role":"assistant","content":"hi"},"done":true,'
        f'"total_duration":1{"0" * 400},"eval_count":-5,"prompt_eval_count":1e400}}',
        None,
    ),
    (
        "v1-canisters-not-a-list",
        "canisters",
        _V1 % "5",
        r"\$\.canisters: expected a list",
    ),
    (
        "v1-parts-not-a-list",
        "canisters",
        _V1 % '[{"kind":"parts","parts":5}]',
        r"\$\.canisters\[0\]\.parts: expected a list of parts",
    ),
    (
        "v1-canister-parts-an-object",
        "canisters",
        '{"format":"canisters.canister","version":1,"canister":{"kind":"parts","parts":{}}}',
        r"\$\.canister\.parts: expected a list of parts",
    ),
    (
        "v1-role-an-object",
        "canisters",
        _V1 % '[{"kind":"parts","role_hint_for_llm":{"a":1}}]',
        r"\$\.canisters\[0\]\.role: unknown role",
    ),
    (
        "document-null",
        "canisters",
        "null",
        "expected a (JSON|document) object, got (null|NoneType)",
    ),
    (
        "v1-jsonl-record-of-the-wrong-shape",
        "canisters",
        '{"format":"canisters.conversation","version":1}\n{"kind":"parts","parts":5}\n',
        r"line 2: \$\.parts: expected a list of parts",
    ),
    (
        "big-integer-and-lone-surrogate-body",
        "anthropic",
        '{"messages":[{"role":"assistant","content":['
        + _SURROGATE_AND_BIG.replace("BIG", _BIG)
        + "]}]}",
        None,
    ),
    (
        "big-integer-and-lone-surrogate-document",
        "canisters",
        canisters.to_json(
            Conversation((User((Text("\ud800", extras={"n": int(_BIG)}),)),))
        ),
        None,
    ),
    (
        "nineteen-digits-and-deep-document",
        "canisters",
        _V1.replace("1,", "2,") % f'[{{"n":1234567890123456789012,"v":{_DEEP}}}]',
        "nested too deeply",
    ),
    (
        "deep-body",
        "anthropic",
        '{"messages":[{"role":"user","content":"hi","x":' + _DEEP + "}]}",
        "nested too deeply",
    ),
    (
        "not-utf8",
        "anthropic",
        b'{"messages":[{"role":"user","content":"\xff"}]}',
        "utf-8",
    ),
    (
        "nan-and-infinity-body",
        "anthropic",
        '{"messages":[{"role":"user","content":"hi","x":[NaN,Infinity,-Infinity]}]}',
        None,
    ),
    (
        "unhashable-block-type",
        "anthropic",
        '{"messages":[{"role":"user","content":[{"type":[]}]}]}',
        r"\$\.messages\[0\]\.content\[0\]\.type: unknown block type \[\]",
    ),
]


def _run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = run(list(argv))
    out = capsys.readouterr()
    return code, out.out, out.err


def _snapshot_of(text: str | bytes) -> str:
    """A snapshot holding the document ``text`` as its conversation."""
    inner = text.decode("utf-8", "replace") if isinstance(text, bytes) else text
    return (
        '{"format":"canisters.snapshot","version":1,"conversation_id":"c",'
        f'"content":{{}},"side_files":{{}},"conversation":{inner.strip()}}}'
    )


@pytest.mark.parametrize(
    ("name", "source", "text", "error"),
    HOSTILE_INPUTS,
    ids=[i[0] for i in HOSTILE_INPUTS],
)
def test_hostile_inputs_give_their_own_message_through_every_command(
    name: str,
    source: str,
    text: str | bytes,
    error: str | None,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    path = tmp_path / (name + (".jsonl" if "jsonl" in name else ".json"))
    data = text.encode("utf-8", "surrogatepass") if isinstance(text, str) else text
    path.write_bytes(data)
    given = [] if source == "canisters" else ["--from", source]
    commands = [
        ["show", *given, str(path)],
        ["show", "--json", *given, str(path)],
        ["validate", *given, str(path)],
        ["convert", "--from", source, "--to", "canisters", str(path)],
        [
            "convert",
            "--from",
            source,
            "--to",
            "openai-chat",
            "--kind",
            "request",
            str(path),
        ],
    ]
    if source == "canisters" and "jsonl" not in name:
        snapshot = tmp_path / "snapshot.json"
        snapshot.write_bytes(
            _snapshot_of(data.decode()).encode("utf-8", "surrogatepass")
        )
        commands.append(["store", "import", str(tmp_path / "store"), str(snapshot)])
    for command in commands:
        code, out, err = _run(capsys, *command)
        assert "internal error" not in err, (command, err)
        if error is None:
            assert code == 0, (command, err)
            assert out, command
            continue
        assert code == 2, (command, out, err)
        assert len(err.splitlines()) == 1 and err.startswith("canisters: error: ")
        assert re.search(error, err), (command, err)
        assert len(err) < 400, "a message quotes a whole value"


def _damaged_store(tmp_path: Path, damage: str) -> tuple[Path, str]:
    root = tmp_path / "store"
    with storage.open_store(root) as store:
        first = User("first")
        store.extend("chat", [first, User("second")])
        AuditLog(store, "chat").record(None, "allowed")
        child = store.fork("chat", first.id)
    conversation = root / "conversations"
    if damage == "fork-json-a-list":
        (conversation / child / "fork.json").write_bytes(b"[1, 2]")
        return root, child
    if damage == "garbage-last-line":
        with (conversation / "chat" / "messages.jsonl").open("ab") as handle:
            handle.write(b"\x00garbage{{\n")
    else:
        with (conversation / "chat" / "sidecars" / "audit.log").open("ab") as handle:
            handle.write(b"\xff\xfe not utf-8\n")
    return root, "chat"


@pytest.mark.parametrize(
    ("damage", "error"),
    [
        ("fork-json-a-list", "fork.json is not an object"),
        ("garbage-last-line", "line 3: the record is not a log record"),
        ("side-file-not-utf8", "audit.log line 2 is not UTF-8 text"),
    ],
)
def test_a_damaged_store_gives_its_own_message_through_every_command(
    damage: str, error: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    root, conversation_id = _damaged_store(tmp_path, damage)
    where = str(root)
    failing = [["store", "export", where, conversation_id]]
    if damage != "side-file-not-utf8":  # show reads no side file
        failing += [
            ["show", where, conversation_id],
            ["show", "--json", where, conversation_id],
        ]
    for command in failing:
        code, _out, err = _run(capsys, *command)
        assert code == 2, (command, err)
        assert "internal error" not in err and error in err, (command, err)
    for command in (["show", where], ["store", "stats", where]):
        code, _out, err = _run(capsys, *command)
        assert code == 0 and "internal error" not in err, (command, err)


# a store someone planted a link in, read by the reading commands (issue 34) ----


@pytest.mark.parametrize("place", ["blobs", "blobs/sha256", "shard", "chat-1"])
def test_reading_commands_read_nothing_through_a_planted_link(
    place: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    where, picture = filled("file", tmp_path)
    root = Path(where)
    if place == "shard":
        place = f"blobs/sha256/{hashlib.sha256(picture).hexdigest()[:2]}"
    elif place == "chat-1":
        place = "conversations/chat-1"
    link = root / place
    moved = tmp_path / "outside"
    link.rename(moved)
    link.symlink_to(moved)
    opening_refuses = place in ("blobs", "blobs/sha256")
    for command in (
        ["show", where],
        ["show", where, "chat-1"],
        ["show", "--json", where, "chat-1"],
        ["store", "export", where, "chat-1"],
        ["store", "stats", where],
        ["store", "gc", "--dry-run", where],
    ):
        code, out, err = _run(capsys, *command)
        if command == ["show", where] and not opening_refuses:
            # The listing reads logs, not blobs; a conversation behind a link is
            # listed with its error beside the others.
            assert code == 0, (command, err)
            listed = {line.split()[0]: line for line in out.splitlines()}
            assert sorted(listed) == ["chat-0", "chat-1", "chat-2"]
            if place == "conversations/chat-1":
                assert f"{link} is a symbolic link" in listed["chat-1"]
            continue
        assert code == 2, (command, out, err)
        assert err.startswith("canisters: error: ") and len(err.splitlines()) == 1
        assert f"{link} is a symbolic link" in err, (command, err)
        assert base64.b64encode(picture).decode() not in out
