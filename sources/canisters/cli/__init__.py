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

from .. import __version__, html, providers, storage
from ..conversation import Conversation
from ..exceptions import CanistersError
from ..requests import Request
from ..serialization import _loads, to_json
from ..validation import problems
from ._common import EXIT_ERROR, EXIT_OK, EXIT_PROBLEMS, notice
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
    render_interop,
    write,
)
from ._render import printable, render
from ._store import store

__all__ = ["EXIT_ERROR", "EXIT_OK", "EXIT_PROBLEMS", "NEUTRAL", "cli", "main", "run"]


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
            notice(f"{event.kind} {event.where}: {_one_line(event.detail)}{rule}")


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


cli.add_command(store)


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
        notice(
            f"note: {lacking} does not read and write whole requests; "
            "only the conversation fields are translated"
        )
    if model is not None and not quiet:
        notice("note: --model applies to whole requests only; ignored")
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
