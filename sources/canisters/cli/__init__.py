"""The ``canisters`` command: convert, show, validate, and store maintenance.

::

    canisters convert --from anthropic --to openai-chat request.json
    canisters show --from openai-chat converted.json
    canisters validate conversation.json
    canisters show --html conversation.json -o conversation.html
    canisters view conversations/
    canisters store list|verify|stats|export|import|gc|copy|search|reindex LOCATION

Exit codes: ``0`` success; ``1`` ``validate`` or ``store verify`` found
problems; ``2`` an error (bad usage, unreadable input, anything that stopped the
command), reported as one line on stderr. Set ``CANISTERS_TRACEBACK=1`` to see
the traceback behind an error.

Only this package imports :mod:`click`; ``import canisters`` never does.
"""

from __future__ import annotations

import io
import os
import sys
import textwrap
import warnings
from collections.abc import Sequence
from typing import Any, Final, NoReturn
from urllib.parse import quote

import click

from .. import __version__, html, providers, recording, storage
from ..conversation import Conversation
from ..exceptions import CanistersError
from ..requests import Request
from ..serialization import _loads, to_json
from ..validation import problems
from ._inputs import (
    INTEROP,
    NEUTRAL,
    STDIN,
    Failure,
    display_name,
    dumps,
    get_normalizer,
    is_store,
    is_whole,
    load,
    load_full,
    open_store,
    progress_bar,
    read_bytes,
    render_interop,
    write,
)
from ._lifecycle import expire, redact, reindex, search
from ._render import human_size, printable, render

__all__ = ["EXIT_ERROR", "EXIT_OK", "EXIT_PROBLEMS", "NEUTRAL", "cli", "main", "run"]

EXIT_OK: Final = 0
"""The command did what was asked."""
EXIT_PROBLEMS: Final = 1
"""``validate`` or ``store verify`` found problems."""
EXIT_ERROR: Final = 2
"""An error stopped the command (bad usage, unreadable input, a failed store)."""


# Entry points --------------------------------------------------------------------


def main(argv: Sequence[str] | None = None) -> NoReturn:
    """Run the ``canisters`` command and exit with its code (the console script)."""
    sys.exit(run(argv))


def run(argv: Sequence[str] | None = None) -> int:
    """Run the ``canisters`` command with ``argv`` (default: the process arguments).

    Returns the exit code. Every error becomes one line on stderr; set
    ``CANISTERS_TRACEBACK=1`` to let unexpected ones propagate instead.
    """
    if sys.stdout is None:  # started with stdout closed (``>&-``)
        sys.stdout = _ClosedOutput()
    # A lone surrogate in a string (kept from a body's "\ud800") is written as
    # that escape rather than failing to encode.
    for stream in (sys.stdout, sys.stderr):
        if isinstance(stream, io.TextIOWrapper):
            stream.reconfigure(errors="backslashreplace")
    try:
        code = cli.main(
            args=list(argv) if argv is not None else None,
            prog_name="canisters",
            standalone_mode=False,
        )
    except click.UsageError as error:
        where = error.ctx.command_path if error.ctx is not None else "canisters"
        return _error(f"{error.format_message()} (see '{where} --help')")
    except click.ClickException as error:
        return _error(error.format_message())
    except (click.Abort, KeyboardInterrupt):
        return _error("interrupted", 130)
    except BrokenPipeError:
        # The reader went away (``| head``): stop quietly, without a second
        # error when the interpreter flushes stdout at exit.
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return EXIT_ERROR
    except Failure as error:
        return _error(str(error))
    except (CanistersError, OSError) as error:
        return _error(_describe(error))
    except Exception as error:
        if os.environ.get("CANISTERS_TRACEBACK"):
            raise
        return _error(f"internal error: {type(error).__name__}: {_describe(error)}")
    return code if isinstance(code, int) else EXIT_OK


class _ClosedOutput(io.TextIOBase):
    """Standard output when the process started without one: writing fails."""

    def writable(self) -> bool:
        return True

    def write(self, text: str) -> int:
        raise Failure("standard output is closed: nowhere to write the output")


def _error(message: str, code: int = EXIT_ERROR) -> int:
    click.echo(f"canisters: error: {printable(_one_line(message))}", err=True)
    return code


def _one_line(text: str) -> str:
    return "; ".join(line.strip() for line in text.splitlines() if line.strip())


def _describe(error: BaseException) -> str:
    if isinstance(error, OSError) and not isinstance(error, CanistersError):
        if error.strerror and error.filename:
            return f"{error.filename}: {error.strerror}"
        if error.strerror:
            return error.strerror
    return str(error) or type(error).__name__


def _notes(report: providers.Report, quiet: bool) -> None:
    if not quiet:
        for event in report.events:
            rule = f" (rule: {event.rule})" if event.rule else ""
            _note(f"{event.kind} {event.where}: {_one_line(event.detail)}{rule}")


def _note(message: str) -> None:
    click.echo(click.style(f"canisters: {printable(message)}", fg="yellow"), err=True)


# Commands ------------------------------------------------------------------------

_CONTEXT: Final = {"help_option_names": ["-h", "--help"], "max_content_width": 88}

_from_option = click.option(
    "--from",
    "provider",
    metavar="PROVIDER",
    help=f"Read FILE as this provider's raw JSON body ('{NEUTRAL}': the neutral "
    "document, the default).",
)
_kind_option = click.option(
    "--kind",
    type=click.Choice(["auto", "request", "response"]),
    default="auto",
    show_default=True,
    help="Whether the body is a request or a response; 'auto' tells by its keys.",
)


@click.group(
    context_settings=_CONTEXT,
    epilog="""\b
Examples:
  canisters convert --from anthropic --to openai-chat request.json
  canisters show --from openai-chat converted.json
  canisters validate conversation.json
  canisters show --html conversation.json -o conversation.html
  canisters view conversations/
  canisters store verify conversations/

Exit codes: 0 success, 1 validate or store verify found problems, 2 an error.""",
)
@click.option(
    "--color/--no-color",
    default=None,
    help="Colour the output (default: on a terminal, unless NO_COLOR is set).",
)
@click.version_option(__version__, prog_name="canisters")
@click.pass_context
def cli(ctx: click.Context, color: bool | None) -> None:
    """Convert, inspect, validate and maintain LLM conversations."""
    if color is None and os.environ.get("NO_COLOR"):
        color = False
    ctx.color = color


@cli.command(
    epilog="""\b
Examples:
  canisters convert --from anthropic --to openai-chat request.json
  canisters convert --from anthropic --to gemini --model gemini-2.5-pro --strict r.json
  canisters convert --from openai-chat --to canisters -o conversation.json body.json
  cat response.json | canisters convert --from gemini --to anthropic --kind response
  canisters convert --from canisters --to ollama --unsupported placeholder chat.json
  canisters convert --from pydantic-ai --to otel history.json"""
)
@click.option(
    "--from",
    "source",
    required=True,
    metavar="PROVIDER",
    help=f"The provider the input comes from, or '{NEUTRAL}' for the neutral document.",
)
@click.option(
    "--to",
    "target",
    required=True,
    metavar="PROVIDER",
    help=f"The provider to translate to, or '{NEUTRAL}' for the neutral document.",
)
@_kind_option
@click.option(
    "--unsupported",
    type=click.Choice(["error", "drop", "placeholder"]),
    default=None,
    help="What the target cannot take: fail, drop it (or send the nearest "
    "equivalent), or put a text marker in place of content. Default: drop for "
    "whole requests, error for the conversation fields alone.",
)
@click.option(
    "--strict",
    is_flag=True,
    help="Fail if anything is not translated exactly (each listed on stderr).",
)
@click.option(
    "--model",
    metavar="NAME",
    help="The model to send in a whole request, in place of the source's.",
)
@click.option(
    "-o",
    "--output",
    default=STDIN,
    metavar="FILE",
    help="Write here instead of stdout.",
)
@click.option("--compact", is_flag=True, help="Write JSON on one line.")
@click.option(
    "-q", "--quiet", is_flag=True, help="Do not list what the conversion changed."
)
@click.argument("file", default=STDIN, metavar="[FILE|-]")
def convert(
    source: str,
    target: str,
    kind: str,
    unsupported: str | None,
    strict: bool,
    model: str | None,
    output: str,
    compact: bool,
    quiet: bool,
    file: str,
) -> None:
    """Translate a request or response body from one provider to another.

    FILE (default: stdin) is the provider's raw JSON body, or the JSON form of
    pydantic-ai (a message history), langchain (messages_to_dict) or otel (an
    object of gen_ai.* message attributes). A request goes whole when both
    providers read and write whole requests (every built-in one that does):
    model, tools, tool choice, output format, generation and reasoning
    settings, caching, metadata; otherwise only its conversation fields
    (messages, system, contents, input, ...). Every field or part the target
    cannot carry exactly is listed on stderr: the field, what happened and the
    rule applied.
    """
    renderer = None
    if target != NEUTRAL and target not in INTEROP:
        renderer = get_normalizer(target)
    whole = renderer is not None and is_whole(renderer)
    read, kind = load_full(file, source, kind, whole=whole)
    if isinstance(read, Request) and renderer is not None and is_whole(renderer):
        body = _convert_whole(read, renderer, target, unsupported, strict, model, quiet)
        write(output, dumps(body, compact))
        return
    conversation = read if isinstance(read, Conversation) else read.conversation
    foreign = source in (NEUTRAL, *INTEROP)
    if kind == "request" and renderer is not None and not foreign and not quiet:
        lacking = target if not whole else source
        _note(
            f"note: {lacking} does not read and write whole requests; "
            "only the conversation fields are translated"
        )
    if model is not None and not quiet:
        _note("note: --model applies to whole requests only; ignored")
    unsupported = unsupported or "error"
    if target == NEUTRAL:
        write(output, dumps(_loads(to_json(conversation)), compact))
        return
    report = providers.Report()
    if target in INTEROP:
        body = render_interop(target, conversation, report)
        _notes(report, quiet)
        _check_strict(report, target, strict)
        write(output, dumps(body, compact))
        return
    if renderer is None:  # the neutral document and interop forms are done above
        raise Failure(f"cannot write {target}")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", providers.FidelityWarning)
        if kind == "request":
            render = renderer.render_request
        else:
            render = renderer.render_response
        try:
            body = render(conversation, unsupported=unsupported, report=report)
        except CanistersError as error:
            message = str(error)
            if target not in message:
                message = f"{target}: {message}"
            raise Failure(message) from None
    _notes(report, quiet)
    _check_strict(report, target, strict)
    write(output, dumps(body, compact))


def _convert_whole(
    request: Request,
    renderer: providers.RequestNormalizer,
    target: str,
    unsupported: str | None,
    strict: bool,
    model: str | None,
    quiet: bool,
) -> dict[str, Any]:
    """The whole request rendered for ``target``, its report on stderr;
    ``strict`` fails on any field not translated exactly."""
    report = providers.Report()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", providers.FidelityWarning)
        try:
            body = renderer.render_full_request(
                request, model=model, unsupported=unsupported or "drop", report=report
            )
        except CanistersError as error:
            message = str(error)
            if target not in message:
                message = f"{target}: {message}"
            raise Failure(message) from None
    _notes(report, quiet)
    _check_strict(report, target, strict)
    return body


def _check_strict(report: providers.Report, target: str, strict: bool) -> None:
    """Under ``--strict``, fail naming everything not translated exactly."""
    if strict and report.events:
        fields = ", ".join(f"{event.where} ({event.kind})" for event in report.events)
        count = len(report.events)
        raise Failure(
            f"--strict: {count} fields not translated exactly to {target}: {fields}"
        )


@cli.command(
    epilog="""\b
Examples:
  canisters show conversation.json
  canisters show --from openai-chat converted.json
  canisters show conversations/              (list the stored conversations)
  canisters show conversations/ chat-1
  canisters show sqlite:///chats.db chat-1 --json"""
)
@_from_option
@_kind_option
@click.option(
    "--json",
    "as_json",
    is_flag=True,
    help="Write the neutral JSON document (or the list of stored conversations).",
)
@click.option(
    "--html",
    "as_html",
    is_flag=True,
    help="Write one self-contained HTML page (open it in a browser).",
)
@click.option(
    "-o",
    "--output",
    default=STDIN,
    metavar="FILE",
    help="With --html: write the page here instead of stdout.",
)
@click.argument("source", metavar="FILE|STORE")
@click.argument("conversation_id", required=False, metavar="[CONVERSATION_ID]")
def show(
    provider: str | None,
    kind: str,
    as_json: bool,
    as_html: bool,
    output: str,
    source: str,
    conversation_id: str | None,
) -> None:
    """Render a conversation readably: roles, steps, tool calls with their results,
    media (modality, size, hash) and usage totals.

    SOURCE is a file ('-' for stdin) holding a canisters document (conversation,
    canister, JSONL or snapshot) or, with --from, a provider body; or a store (a
    directory or sqlite:///path.db) with the CONVERSATION_ID to show. A store
    without CONVERSATION_ID lists its conversations. With --html the output is a
    page that needs nothing but itself (media inline, no script, no request).
    """
    if as_html and as_json:
        raise Failure("give --html or --json, not both")
    if output != STDIN and not as_html:
        raise Failure("-o writes the --html page; give --html too")
    if source != STDIN and is_store(source):
        if provider is not None:
            raise Failure("--from reads files; a store holds canisters already")
        with open_store(source, read_only=True) as store:
            if conversation_id is None:
                if as_html:
                    raise Failure(
                        "--html shows one conversation: give its CONVERSATION_ID"
                    )
                _list_conversations(store, as_json)
                return
            conversation = store.load(conversation_id)
            if as_html:
                write(
                    output,
                    html.render(
                        conversation,
                        title=f"conversation {conversation_id}",
                        store=store,
                    ),
                )
                return
        title = f"conversation {conversation_id}"
    else:
        if conversation_id is not None:
            raise Failure(
                f"{source} is a file, not a store: CONVERSATION_ID is only for stores"
            )
        conversation, _kind = load(source, provider, kind)
        title = display_name(source)
    if as_html:
        write(output, html.render(conversation, title=title))
        return
    if as_json:
        _echo_document(conversation)
    else:
        render(conversation, title)


def _echo_document(conversation: Conversation) -> None:
    """Write the conversation's JSON document as ``dumps`` would, one canister at
    a time: memory holds one canister's JSON, not the whole document's (three
    times over, as text, parsed and indented)."""
    whole = _loads(to_json(Conversation()))
    canisters = whole.pop("canisters")
    assert canisters == []
    head = dumps({**whole, "canisters": [None]})
    before, after = head.split("    null", 1)
    if not conversation:
        click.echo(dumps({**whole, "canisters": []}))
        return
    click.echo(before, nl=False)
    for index, canister in enumerate(conversation):
        record = _loads(to_json(canister))["canister"]
        text = textwrap.indent(dumps(record), "    ")
        click.echo(text + (",\n" if index + 1 < len(conversation) else ""), nl=False)
    click.echo(after, nl=False)
    click.echo()


def _list_conversations(store: storage.Store, as_json: bool) -> None:
    rows: list[tuple[str, int | None, str | None]] = []
    for cid in store.conversations():
        try:
            rows.append((cid, store.head(cid)[0], None))
        except CanistersError as error:  # one damaged conversation hides no other
            rows.append((cid, None, str(error)))
    if as_json:
        click.echo(
            dumps(
                [
                    {"id": cid, "records": n}
                    if problem is None
                    else {"id": cid, "records": None, "error": problem}
                    for cid, n, problem in rows
                ]
            )
        )
        return
    if not rows:
        click.echo("no conversations")
    width = max((len(printable(cid)) for cid, _n, _problem in rows), default=0)
    for cid, records, problem in rows:
        name = printable(cid).ljust(width)
        if problem is not None:
            click.echo(f"{name}  " + click.style(printable(problem), fg="red"))
            continue
        noun = "record" if records == 1 else "records"
        click.echo(f"{name}  " + click.style(f"{records} {noun}", dim=True))


@cli.command(
    epilog="""\b
Examples:
  canisters validate conversation.json
  canisters validate runs/*.jsonl
  canisters validate --from anthropic request.json"""
)
@_from_option
@_kind_option
@click.argument("files", nargs=-1, required=True, metavar="FILE...")
def validate(provider: str | None, kind: str, files: tuple[str, ...]) -> None:
    """Check conversations against the well-formedness rules.

    Every problem of every FILE is listed (one per line: the file, the canister's
    position and id, what is wrong and its code). Exits with 1 when any problem
    was found, 2 when a file could not be read.
    """
    found = failed = 0
    for file in files:
        name = display_name(file)
        try:
            conversation, _kind = load(file, provider, kind)
        except Failure as error:
            _error(str(error))
            failed += 1
            continue
        listed = problems(conversation)
        for problem in listed:
            click.echo(f"{name}: " + click.style(str(problem), fg="red"))
        if not listed:
            count = len(conversation)
            noun = "canister" if count == 1 else "canisters"
            click.echo(f"{name}: " + click.style(f"valid ({count} {noun})", fg="green"))
        found += len(listed)
    if len(files) > 1 and (found or failed):
        noun = "problem" if found == 1 else "problems"
        click.echo(f"{found} {noun}, {failed} unreadable, in {len(files)} files")
    if failed:
        raise click.exceptions.Exit(EXIT_ERROR)
    if found:
        raise click.exceptions.Exit(EXIT_PROBLEMS)


@cli.command(
    "view",
    epilog="""\b
Examples:
  canisters view conversations/
  canisters view conversations/ chat-1 --open
  canisters view sqlite:///chats.db --port 9000
  canisters view postgresql://app@db/chat --blobs s3://chat-media/prod""",
)
@click.option(
    "--port",
    type=click.IntRange(1, 65535),
    default=8765,
    show_default=True,
    help="The port to listen on.",
)
@click.option(
    "--host",
    default="127.0.0.1",
    show_default=True,
    help="The address to listen on (anything but a loopback address lets other "
    "machines read the store).",
)
@click.option("--blobs", metavar="S3_URL", help="Where the store keeps its blobs.")
@click.option(
    "--open", "open_browser", is_flag=True, help="Open the page in a web browser."
)
@click.argument("location")
@click.argument("conversation_id", required=False, metavar="[CONVERSATION_ID]")
def view_(
    port: int,
    host: str,
    blobs: str | None,
    open_browser: bool,
    location: str,
    conversation_id: str | None,
) -> None:
    """Browse a store in a web browser: a local, read-only web app.

    Lists the conversations (newest first, filtered by id) and shows each one
    with its media, tool calls beside their results, folded reasoning, its
    forks, whether its hash chain verifies, and a download of its document.
    Needs the 'view' extra: pip install 'canisters[view]'. Stop it with Ctrl-C.
    """
    from .. import view as viewer

    viewer._starlette()  # the missing extra is told before the store is opened
    start = "/" if conversation_id is None else f"/c/{quote(conversation_id)}"
    with open_store(location, read_only=True, blobs=blobs) as opened:

        def ready(url: str) -> None:
            shown = printable(viewer.shown_location(location))
            click.echo(f"serving {shown} at {url} (read-only; Ctrl-C stops)")

        viewer.serve(
            opened,
            host=host,
            port=port,
            location=location,
            open_browser=open_browser,
            start=start,
            ready=ready,
        )


@cli.group(
    epilog="""\b
LOCATION is a directory (the file backend), sqlite:///path.db (relative),
sqlite:////absolute/path.db or postgresql://user@host/dbname.

\b
Examples:
  canisters store list conversations/
  canisters store verify conversations/
  canisters store stats conversations/
  canisters store export conversations/ chat-1 -o chat-1.json
  canisters store import sqlite:///chats.db chat-1.json
  canisters store gc conversations/ --dry-run
  canisters store copy conversations/ postgresql://app@db/chat
  canisters store search conversations/ 'invoice march'"""
)
def store() -> None:
    """Maintain a store: list, verify, stats, export, import, gc, copy, search."""


for _command in (search, reindex, redact, expire):
    store.add_command(_command)


@store.command(
    "list",
    epilog="""\b
Examples:
  canisters store list conversations/
  canisters store list sqlite:///chats.db --json""",
)
@click.option(
    "--json",
    "as_json",
    is_flag=True,
    help="Write a JSON array: id, records, fork_of, fork_at, forks.",
)
@click.option("--blobs", metavar="S3_URL", help="Where the store keeps its blobs.")
@click.argument("location")
def list_(as_json: bool, blobs: str | None, location: str) -> None:
    """List the conversations: id, number of records, and forks.

    A fork's line names the conversation it was forked from and the canister
    it shares last; its parent's line counts its forks. An unreadable
    conversation is listed with what is wrong.
    """
    with open_store(location, read_only=True, blobs=blobs) as opened:
        rows: list[dict[str, object]] = []
        for cid in opened.conversations():
            row: dict[str, object] = {"id": cid}
            try:
                row["records"] = opened.head(cid)[0]
            except CanistersError as error:
                row["records"] = None
                row["error"] = str(error)
            try:
                origin = opened.origin(cid)
                forks = [fork.conversation_id for fork in opened.forks(cid)]
            except CanistersError as error:
                origin, forks = None, []
                row.setdefault("error", str(error))
            row["fork_of"] = origin.parent if origin else None
            row["fork_at"] = origin.at if origin else None
            row["forks"] = forks
            rows.append(row)
    if as_json:
        click.echo(dumps(rows))
        return
    if not rows:
        click.echo("no conversations")
    width = max((len(printable(row["id"])) for row in rows), default=0)
    for row in rows:
        line = f"{printable(row['id']).ljust(width)}  "
        if "error" in row:
            click.echo(line + click.style(printable(row["error"]), fg="red"))
            continue
        records = row["records"]
        line += click.style(f"{records} record{'s' if records != 1 else ''}", dim=True)
        if row["fork_of"] is not None:
            line += f"  fork of {printable(row['fork_of'])}"
            if row["fork_at"] is not None:
                line += f" at {printable(row['fork_at'])}"
        children = row["forks"]
        assert isinstance(children, list)
        if children:
            line += f"  {len(children)} fork{'s' if len(children) != 1 else ''}"
        click.echo(line)


@store.command(
    epilog="""\b
Examples:
  canisters store verify conversations/
  canisters store verify sqlite:///chats.db chat-1 chat-2
  canisters store verify postgresql://app@db/chat || mail -s "store damaged" ops""",
)
@click.option("--blobs", metavar="S3_URL", help="Where the store keeps its blobs.")
@click.argument("location")
@click.argument("conversation_ids", nargs=-1, metavar="[CONVERSATION_ID...]")
def verify(blobs: str | None, location: str, conversation_ids: tuple[str, ...]) -> None:
    """Check the hash chain and blobs of every conversation (or those named).

    Each problem is one line: the conversation, the record (line or sequence
    number), what is wrong and its code. Exits with 1 when any problem was
    found (a conversation named but absent is one), so it can run from cron.
    """
    found = records = 0
    with open_store(location, read_only=True, blobs=blobs) as opened:
        wanted = list(conversation_ids) or opened.conversations()
        with progress_bar("verifying") as progress:
            for done, cid in enumerate(wanted):
                try:
                    verification = opened.verify(cid)
                except CanistersError as error:
                    click.echo(f"{cid}: " + click.style(printable(error), fg="red"))
                    found += 1
                else:
                    records += verification.records
                    for problem in verification.problems:
                        click.echo(
                            f"{cid}: "
                            + click.style(
                                printable(
                                    f"{problem.where}: {problem.message} "
                                    f"({problem.code})"
                                ),
                                fg="red",
                            )
                        )
                    found += len(verification.problems)
                    if verification.torn_tail:
                        _note(f"{cid}: an unfinished last line was ignored")
                    for note in verification.redactions:
                        _note(
                            f"{cid}: record {note.seq} ({note.kind}) redacted on "
                            f"{note.at:%Y-%m-%d %H:%M} UTC: {note.reason}"
                        )
                if progress is not None:
                    progress(done + 1, len(wanted))
    count = len(wanted)
    summary = (
        f"verified {count} conversation{'s' if count != 1 else ''} "
        f"({records} record{'s' if records != 1 else ''}): "
    )
    if found:
        noun = "problem" if found == 1 else "problems"
        click.echo(summary + click.style(f"{found} {noun}", fg="red"))
        raise click.exceptions.Exit(EXIT_PROBLEMS)
    click.echo(summary + click.style("intact", fg="green"))


@store.command(
    epilog="""\b
Examples:
  canisters store copy conversations/ sqlite:///chats.db
  canisters store copy conversations/ postgresql://app@db/chat \\
      --target-blobs s3://chat-media/prod"""
)
@click.option(
    "--source-blobs", metavar="S3_URL", help="Where the source keeps its blobs."
)
@click.option(
    "--target-blobs",
    metavar="S3_URL",
    help="Keep the target's blobs in this bucket (s3://bucket/prefix).",
)
@click.argument("source")
@click.argument("target")
def copy(
    source_blobs: str | None, target_blobs: str | None, source: str, target: str
) -> None:
    """Copy every conversation, side file and referenced blob from SOURCE to TARGET.

    TARGET is created when new. Run it again after an interruption: what TARGET
    holds is checked and kept, the rest copied. At the end every conversation's
    chain head in TARGET must equal SOURCE's. Forks arrive as conversations of
    their own holding their whole history.
    """
    with (
        open_store(source, blobs=source_blobs) as opened,
        open_store(target, create=True, blobs=target_blobs) as destination,
        progress_bar("copying") as progress,
    ):
        report = storage.copy_store(opened, destination, progress=progress)
    click.echo(
        f"copied {report.copied_records} records and {report.copied_blobs} blobs; "
        f"{report.conversations} conversations verified "
        f"({report.skipped} already complete)"
    )


@store.command(
    epilog="""\b
Examples:
  canisters store stats conversations/
  canisters store stats sqlite:///chats.db --json"""
)
@click.option("--json", "as_json", is_flag=True, help="Write the figures as JSON.")
@click.argument("location")
def stats(as_json: bool, location: str) -> None:
    """Count conversations, records and blobs, their bytes, and the dedup ratio.

    The dedup ratio is the bytes the blobs would take if every record held its own
    copy, divided by the bytes they take.
    """
    with (
        open_store(location, read_only=True) as opened,
        progress_bar("counting") as progress,
    ):
        figures = opened.stats(progress=progress)
    if as_json:
        document = {
            "conversations": figures.conversations,
            "records": figures.records,
            "log_bytes": figures.log_bytes,
            "blobs": figures.blobs,
            "blob_bytes": figures.blob_bytes,
            "references": figures.references,
            "referenced_bytes": figures.referenced_bytes,
            "dedup_ratio": round(figures.dedup_ratio, 4),
        }
        click.echo(dumps(document))
        return
    rows = [
        ("store", location),
        ("conversations", str(figures.conversations)),
        ("records", f"{figures.records} ({human_size(figures.log_bytes)} of logs)"),
        ("blobs", f"{figures.blobs} ({human_size(figures.blob_bytes)})"),
        (
            "references",
            f"{figures.references} ({human_size(figures.referenced_bytes)} referenced)",
        ),
        ("dedup ratio", f"{figures.dedup_ratio:.2f}x"),
    ]
    for label, value in rows:
        click.echo(click.style(label.ljust(15), bold=True) + value)


@store.command(
    "export",
    epilog="""\b
Examples:
  canisters store export conversations/ chat-1 > chat-1.json
  canisters store export sqlite:///chats.db chat-1 -o chat-1.json""",
)
@click.option(
    "-o", "--output", default=STDIN, metavar="FILE", help="Write here, not stdout."
)
@click.argument("location")
@click.argument("conversation_id")
def export(output: str, location: str, conversation_id: str) -> None:
    """Write one conversation, with every blob it refers to, as one JSON document.

    The document (a canisters snapshot) is what 'store import' reads, into this or
    any other store.
    """
    with open_store(location, read_only=True) as opened:
        document = recording.snapshot(opened, conversation_id)
    write(output, document)


@store.command(
    "import",
    epilog="""\b
Examples:
  canisters store import conversations/ chat-1.json
  canisters store export old/ chat-1 | canisters store import new/ - --id chat-2""",
)
@click.option(
    "--id",
    "conversation_id",
    metavar="CONVERSATION_ID",
    help="Store it under this id (default: its own id when free, else a new one).",
)
@click.argument("location")
@click.argument("file", default=STDIN, metavar="[FILE|-]")
def import_(conversation_id: str | None, location: str, file: str) -> None:
    """Read a document written by 'store export' into the store (created if new).

    Prints the id the conversation was stored under.
    """
    data = read_bytes(file)
    with open_store(location, create=True) as opened:
        try:
            stored = recording.restore(opened, data, conversation_id=conversation_id)
        except CanistersError as error:
            raise Failure(f"{display_name(file)}: {error}") from None
    click.echo(stored)


@store.command(
    epilog="""\b
Examples:
  canisters store gc conversations/ --dry-run
  canisters store gc sqlite:///chats.db --older-than 3600"""
)
@click.option(
    "--dry-run", is_flag=True, help="List what would be removed; remove nothing."
)
@click.option(
    "--older-than",
    type=click.FloatRange(min=0),
    default=0.0,
    show_default=True,
    metavar="SECONDS",
    help="Keep blobs stored less than this long ago (for writers that put a blob "
    "before the record naming it).",
)
@click.option("-v", "--verbose", is_flag=True, help="List every blob removed.")
@click.argument("location")
def gc(dry_run: bool, older_than: float, verbose: bool, location: str) -> None:
    """Remove the blobs no conversation refers to.

    A referenced blob is never removed, even while other processes append: the
    store's writers and its garbage collector exclude each other.
    """
    with (
        open_store(location, read_only=dry_run) as opened,
        progress_bar("collecting") as progress,
    ):
        report = opened.collect_garbage(
            dry_run=dry_run, older_than=older_than, progress=progress
        )
    if verbose or dry_run:
        for content_id in report.removed:
            click.echo(content_id)
    verb = "would remove" if dry_run else "removed"
    count = len(report.removed)
    click.echo(
        f"{verb} {count} blob{'s' if count != 1 else ''} "
        f"({human_size(report.freed_bytes)}), kept {report.kept}"
    )
