"""The ``canisters`` command: convert, show, validate, and store maintenance.

::

    canisters convert --from anthropic --to openai-chat request.json
    canisters show --from openai-chat converted.json
    canisters validate conversation.json
    canisters store stats|export|import|gc LOCATION

Exit codes: ``0`` success; ``1`` ``validate`` found problems; ``2`` an error (bad
usage, unreadable input, anything that stopped the command), reported as one line
on stderr. Set ``CANISTERS_TRACEBACK=1`` to see the traceback behind an error.

Only this module imports :mod:`click`; ``import canisters`` never does.
"""

from __future__ import annotations

import base64
import binascii
import contextlib
import hashlib
import json
import os
import sys
import warnings
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any, Final, NoReturn, TypeVar, cast

import click
import orjson

from . import __version__, providers, recording, storage
from .content import Media, Reasoning, Text
from .conversation import Conversation
from .exceptions import CanistersError
from .protocols import Canister, Content, Role
from .serialization import (
    CANISTER_FORMAT,
    CONVERSATION_FORMAT,
    from_json,
    from_jsonl,
    to_json,
)
from .validation import problems

__all__ = ["EXIT_ERROR", "EXIT_OK", "EXIT_PROBLEMS", "NEUTRAL", "cli", "main", "run"]

EXIT_OK: Final = 0
"""The command did what was asked."""
EXIT_PROBLEMS: Final = 1
"""``validate`` found problems in a conversation."""
EXIT_ERROR: Final = 2
"""An error stopped the command (bad usage, unreadable input, a failed store)."""

NEUTRAL: Final = "canisters"
"""The ``--from`` / ``--to`` name of the neutral JSON document format."""

_STDIN: Final = "-"
_SQLITE: Final = "sqlite://"
_STORE_MARKER: Final = (
    "store.json"  # written by the file backend when it creates a store
)
_RESPONSE_KEYS: Final = ("choices", "candidates", "output", "message")
_REQUEST_KEYS: Final = (
    "messages",
    "contents",
    "input",
    "instructions",
    "system",
    "system_instruction",
    "systemInstruction",
)
_ROLE_COLOURS: Final = {
    Role.Supervisor: "magenta",
    Role.User: "green",
    Role.Assistant: "blue",
    Role.Document: "cyan",
    Role.Invocation: "yellow",
    Role.Result: "yellow",
}
_LABEL_WIDTH: Final = 12
_T = TypeVar("_T")


class _Failure(Exception):
    """An error to report as one line (the message) with :data:`EXIT_ERROR`."""


# Entry points --------------------------------------------------------------------


def main(argv: Sequence[str] | None = None) -> NoReturn:
    """Run the ``canisters`` command and exit with its code (the console script)."""
    sys.exit(run(argv))


def run(argv: Sequence[str] | None = None) -> int:
    """Run the ``canisters`` command with ``argv`` (default: the process arguments).

    Returns the exit code. Every error becomes one line on stderr; set
    ``CANISTERS_TRACEBACK=1`` to let unexpected ones propagate instead.
    """
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
    except _Failure as error:
        return _error(str(error))
    except (CanistersError, OSError) as error:
        return _error(_describe(error))
    except Exception as error:
        if os.environ.get("CANISTERS_TRACEBACK"):
            raise
        return _error(f"internal error: {type(error).__name__}: {_describe(error)}")
    return code if isinstance(code, int) else EXIT_OK


def _error(message: str, code: int = EXIT_ERROR) -> int:
    click.echo(f"canisters: error: {_one_line(message)}", err=True)
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


def _note(message: str) -> None:
    click.echo(click.style(f"canisters: {message}", fg="yellow"), err=True)


# Reading input -------------------------------------------------------------------


def _display_name(source: str) -> str:
    return "<stdin>" if source == _STDIN else source


def _read_bytes(source: str) -> bytes:
    if source == _STDIN:
        return sys.stdin.buffer.read()
    path = Path(source)
    try:
        return path.read_bytes()
    except FileNotFoundError:
        raise _Failure(f"{source}: no such file") from None
    except IsADirectoryError:
        raise _Failure(f"{source}: is a directory, not a file") from None
    except OSError as error:
        raise _Failure(f"{source}: cannot read: {error.strerror}") from None


def _parse_json(name: str, data: bytes) -> Any:
    try:
        return orjson.loads(data)
    except orjson.JSONDecodeError as error:
        raise _Failure(f"{name}: not valid JSON: {error}") from None


def _read_body(name: str, data: bytes) -> dict[str, Any]:
    body = _parse_json(name, data)
    if not isinstance(body, dict):
        raise _Failure(
            f"{name}: expected a JSON object (a request or response body), "
            f"got {_json_kind(body)}"
        )
    if isinstance(body.get("format"), str) and body["format"].startswith("canisters."):
        raise _Failure(
            f"{name}: this is a canisters document ({body['format']}); "
            f"read it with --from {NEUTRAL}"
        )
    return body


def _read_neutral(name: str, data: bytes) -> Conversation:
    """Read a conversation, canister or snapshot document, or conversation JSONL."""
    try:
        document = orjson.loads(data)
    except orjson.JSONDecodeError as error:
        first = data.lstrip().split(b"\n", 1)[0]
        try:
            header = orjson.loads(first)
        except orjson.JSONDecodeError:
            header = None
        if isinstance(header, dict) and header.get("format") == CONVERSATION_FORMAT:
            return _neutral_error(name, lambda: from_jsonl(data))
        raise _Failure(f"{name}: not valid JSON: {error}") from None
    if not isinstance(document, dict):
        raise _Failure(f"{name}: expected a JSON object, got {_json_kind(document)}")
    kind = document.get("format")
    if kind == recording.SNAPSHOT_FORMAT:
        inner = orjson.dumps(document.get("conversation"))
        value = _neutral_error(f"{name}: $.conversation", lambda: from_json(inner))
    elif kind in (CONVERSATION_FORMAT, CANISTER_FORMAT):
        value = _neutral_error(name, lambda: from_json(data))
    else:
        raise _Failure(
            f"{name}: not a canisters document ({_format_of(kind)}); "
            "to read a provider body, give --from PROVIDER"
        )
    if isinstance(value, Conversation):
        return value
    return Conversation((cast(Canister, value),))


def _neutral_error(name: str, read: Callable[[], _T]) -> _T:
    try:
        return read()
    except CanistersError as error:
        raise _Failure(f"{name}: {error}") from None


def _format_of(kind: object) -> str:
    return 'no "format" field' if kind is None else f'"format" is {kind!r}'


def _json_kind(value: object) -> str:
    names = {list: "an array", str: "a string", bool: "a boolean", type(None): "null"}
    return names.get(type(value), "a number")


def _detect_kind(name: str, body: dict[str, Any]) -> str:
    """Tell a provider request body from a response body by their top-level keys."""
    if (
        any(key in body for key in _RESPONSE_KEYS)
        or body.get("type") == "message"
        or body.get("object") in ("response", "chat.completion")
    ) and "messages" not in body:
        return "response"
    if any(key in body for key in _REQUEST_KEYS):
        return "request"
    if "error" in body:
        raise _Failure(f"{name}: this is an error body, not a request or a response")
    raise _Failure(
        f"{name}: cannot tell whether this is a request or a response body; "
        "give --kind request or --kind response"
    )


def _normalizer(name: str) -> providers.Normalizer:
    try:
        return providers.get(name)
    except LookupError:
        known = ", ".join((NEUTRAL, *providers.names()))
        raise _Failure(f"unknown provider {name!r}; known: {known}") from None


def _load(source: str, provider: str | None, kind: str) -> tuple[Conversation, str]:
    """Read ``source`` as a canisters document, or as ``provider``'s body.

    Returns the conversation and the kind (``request`` or ``response``) it was
    read as; a neutral document whose canisters are all assistant-side (replies and
    invocations) counts as a response when ``kind`` is ``auto``.
    """
    name = _display_name(source)
    if provider is not None and provider != NEUTRAL:
        normalizer = _normalizer(provider)
    data = _read_bytes(source)
    if provider is None or provider == NEUTRAL:
        conversation = _read_neutral(name, data)
        if kind == "auto":
            replies = {Role.Assistant, Role.Invocation}
            only_replies = bool(conversation) and all(
                c.role in replies for c in conversation
            )
            kind = "response" if only_replies else "request"
        return conversation, kind
    body = _read_body(name, data)
    if kind == "auto":
        kind = _detect_kind(name, body)
    try:
        if kind == "request":
            return normalizer.parse_request(body), kind
        return normalizer.parse_response(body), kind
    except CanistersError as error:
        raise _Failure(f"{name}: {error}") from None


def _write(output: str, text: str) -> None:
    if output == _STDIN:
        click.echo(text)
        return
    try:
        Path(output).write_text(text + "\n", encoding="utf-8")
    except OSError as error:
        raise _Failure(f"{output}: cannot write: {error.strerror}") from None


def _dumps(value: Any, compact: bool = False) -> str:
    if compact:
        return json.dumps(value, ensure_ascii=False, separators=(",", ":"))
    return json.dumps(value, ensure_ascii=False, indent=2)


# Stores --------------------------------------------------------------------------


def _is_store(location: str) -> bool:
    return location.startswith(_SQLITE) or Path(location).is_dir()


def _open_store(location: str, *, create: bool = False) -> storage.Store:
    """Open the store at ``location``; unless ``create``, it must already exist."""
    if not create:
        if location.startswith(_SQLITE):
            path = location[len(_SQLITE) :]
            if not Path(path[1:] if path.startswith("/") else path).is_file():
                raise _Failure(f"{location}: no such store")
        elif not Path(location).exists():
            raise _Failure(f"{location}: no such store")
        elif not (Path(location) / _STORE_MARKER).is_file():
            raise _Failure(f"{location}: not a canisters store")
    return storage.open_store(location)


@contextlib.contextmanager
def _progress(label: str) -> Iterator[storage.Progress | None]:
    """Yield a ``(done, total)`` callback drawing a bar on a terminal, else ``None``."""
    if not sys.stderr.isatty():
        yield None
        return
    with click.progressbar(length=1, label=label, file=sys.stderr) as bar:

        def advance(done: int, total: int) -> None:
            bar.length = max(total, 1)
            bar.update(done - bar.pos)

        yield advance


def _size(count: int) -> str:
    value = float(count)
    for unit in ("B", "KiB", "MiB", "GiB"):
        if value < 1024 or unit == "GiB":
            return f"{count} B" if unit == "B" else f"{value:.1f} {unit}"
        value /= 1024
    raise AssertionError("unreachable")  # pragma: no cover


# Rendering -----------------------------------------------------------------------


def _media_line(part: Media) -> str:
    modality = part.modality.value if hasattr(part.modality, "value") else part.modality
    bits = [str(modality)]
    if part.mime_type:
        bits.append(part.mime_type)
    data = part.data
    if data is None and part.url is not None and part.url.startswith("data:"):
        header, _, payload = part.url.partition(",")
        if header.endswith(";base64"):
            with contextlib.suppress(binascii.Error, ValueError):
                data = base64.b64decode(payload)
    if data is not None:
        bits.append(_size(len(data)))
        bits.append(f"sha256:{hashlib.sha256(data).hexdigest()[:16]}")
    elif part.content_id is not None:
        bits.append(part.content_id[:23])
    elif part.url is not None:
        url = part.url if len(part.url) <= 72 else part.url[:69] + "..."
        bits.append(url)
    if part.refs:
        bits.append("refs " + ", ".join(f"{k}={v}" for k, v in part.refs.items()))
    filename = getattr(part, "filename", None)
    if filename:
        bits.append(repr(filename))
    line = "[" + " · ".join(bits) + "]"
    if part.hint:
        line += f' "{part.hint}"'
    return line


def _part_lines(part: Content) -> list[tuple[str, dict[str, Any]]]:
    """The lines of one content part, each with its click style."""
    if isinstance(part, Text):
        lines = part.text.splitlines() or [""]
        if part.mime_type != "text/plain":
            lines[0] = f"({part.mime_type}) {lines[0]}"
        return [(line, {}) for line in lines]
    if isinstance(part, Media):
        return [(_media_line(part), {"fg": "cyan"})]
    if isinstance(part, Reasoning):
        dim = {"dim": True}
        if part.redacted is not None:
            by = f" by {part.provider}" if part.provider else ""
            head = f"[reasoning, redacted{by}, {len(part.redacted)} chars]"
        else:
            signed = f", signed by {part.provider}" if part.signature else ""
            head = f"[reasoning{signed}]"
        return [(head, dim)] + [(line, dim) for line in part.text.splitlines()]
    kind = getattr(part, "type", type(part).__name__)
    return [(f"[{kind}]", {"dim": True})]


def _echo_block(
    label: str, colour: str, lines: list[tuple[str, dict[str, Any]]]
) -> None:
    pad = " " * _LABEL_WIDTH
    head = click.style(label.ljust(_LABEL_WIDTH), fg=colour, bold=True)
    if not lines:
        lines = [("", {})]
    for number, (text, style) in enumerate(lines):
        styled = click.style(text, **style) if style else text
        click.echo((head if number == 0 else pad) + styled)


def _metadata_line(canister: Canister) -> str | None:
    metadata = canister.metadata
    if metadata is None:
        return None
    bits = []
    if metadata.model:
        bits.append(metadata.model)
    if metadata.finish_reason:
        bits.append(f"finish {metadata.finish_reason}")
    if metadata.usage is not None:
        usage = metadata.usage
        bits.append(f"{usage.input_tokens} in / {usage.output_tokens} out tokens")
    if metadata.latency_ms is not None:
        bits.append(f"{metadata.latency_ms:.0f} ms")
    return " · ".join(bits) if bits else None


def _arguments(arguments: Any) -> str:
    try:
        return json.dumps(dict(arguments), ensure_ascii=False, default=str)
    except (TypeError, ValueError):
        return repr(arguments)


def _echo_canister(canister: Canister) -> None:
    role = canister.role
    colour = _ROLE_COLOURS.get(role, "white")
    content: tuple[Content, ...] = getattr(canister, "content", ())
    lines = [line for part in content for line in _part_lines(part)]
    label = role.value if hasattr(role, "value") else str(role)
    if role is Role.Document:
        title = getattr(canister, "title", None)
        if title:
            lines.insert(0, (f"«{title}»", {"bold": True}))
    _echo_block(str(label).lower(), colour, lines)
    extra = _metadata_line(canister)
    if extra:
        click.echo(" " * _LABEL_WIDTH + click.style(extra, dim=True))


def _echo_result(result: Any, indent: str = "  └ ") -> None:
    pad = " " * _LABEL_WIDTH
    if result.error is not None:
        head = click.style(f"{indent}error ", fg="red", bold=True)
        click.echo(pad + head + f"{result.error.code}: {result.error.message}")
    lines = [line for part in result.content for line in _part_lines(part)]
    for number, (text, style) in enumerate(lines):
        lead = (
            indent + "result "
            if number == 0 and result.error is None
            else " " * (len(indent) + 7)
        )
        styled = click.style(text, **style) if style else text
        head = click.style(lead, fg="yellow") if number == 0 else lead
        click.echo(pad + head + styled)
    if not lines and result.error is None:
        click.echo(pad + click.style(indent + "result", fg="yellow") + " (empty)")


def _render(conversation: Conversation, title: str) -> None:
    """Write a readable rendering of ``conversation`` to stdout."""
    canisters = conversation.canisters
    answers = {
        id(pair.result): pair.invocation for pair in conversation.pairs() if pair.result
    }
    paired = {
        pair.invocation.invocation_id: pair.result for pair in conversation.pairs()
    }
    steps = {c.step for c in canisters if c.step is not None}
    count = len(canisters)
    summary = f"{count} canister{'s' if count != 1 else ''}"
    if steps:
        summary += f", {len(steps)} step{'s' if len(steps) != 1 else ''}"
    click.echo(click.style(title, bold=True) + click.style(f"  ({summary})", dim=True))
    current: int | None = None
    for canister in canisters:
        if canister.role is Role.Result and id(canister) in answers:
            continue  # shown beneath its invocation
        if canister.step is not None and canister.step != current:
            current = canister.step
            click.echo(click.style(f"── step {current} ──", dim=True))
        if canister.role is Role.Invocation:
            invocation: Any = canister
            call = f"{invocation.name}({_arguments(invocation.arguments)})"
            _echo_block(
                "invocation",
                "yellow",
                [(call, {}), (f"id {invocation.invocation_id}", {"dim": True})],
            )
            result = paired.get(invocation.invocation_id)
            if result is None:
                pad = " " * _LABEL_WIDTH
                click.echo(pad + click.style("  └ pending: no result", fg="red"))
            else:
                _echo_result(result)
        elif canister.role is Role.Result:
            orphan: Any = canister
            _echo_block(
                "result",
                "red",
                [
                    (
                        f"{orphan.name}: no invocation {orphan.invocation_id!r}",
                        {"fg": "red"},
                    )
                ],
            )
            _echo_result(orphan)
        else:
            _echo_canister(canister)
    usage = conversation.usage()
    if usage.total_tokens or usage.cached_tokens:
        totals = (
            f"usage: {usage.input_tokens} input · {usage.output_tokens} output · "
            f"{usage.total_tokens} total tokens"
        )
        if usage.cached_tokens:
            totals += f" ({usage.cached_tokens} cached)"
        if usage.reasoning_tokens:
            totals += f" ({usage.reasoning_tokens} reasoning)"
    else:
        totals = "usage: none recorded"
    click.echo(click.style(totals, bold=True))


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
  canisters store stats conversations/

Exit codes: 0 success, 1 validate found problems, 2 an error.""",
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
  canisters convert --from openai-chat --to canisters -o conversation.json body.json
  cat response.json | canisters convert --from gemini --to anthropic --kind response
  canisters convert --from canisters --to ollama --unsupported placeholder chat.json"""
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
    default="error",
    show_default=True,
    help="Content the target cannot take: fail, drop it, or put a text marker.",
)
@click.option(
    "-o",
    "--output",
    default=_STDIN,
    metavar="FILE",
    help="Write here instead of stdout.",
)
@click.option("--compact", is_flag=True, help="Write JSON on one line.")
@click.option(
    "-q", "--quiet", is_flag=True, help="Do not list what the conversion changed."
)
@click.argument("file", default=_STDIN, metavar="[FILE|-]")
def convert(
    source: str,
    target: str,
    kind: str,
    unsupported: str,
    output: str,
    compact: bool,
    quiet: bool,
    file: str,
) -> None:
    """Translate a request or response body from one provider to another.

    FILE (default: stdin) is the provider's raw JSON body. Only the conversation
    fields are translated (messages, system, contents, input, ...); model, tools
    and sampling parameters are provider-specific and are left out. Anything the
    target cannot carry exactly is listed on stderr.
    """
    if target != NEUTRAL:
        renderer = _normalizer(target)
    conversation, kind = _load(file, source, kind)
    if target == NEUTRAL:
        _write(output, _dumps(orjson.loads(to_json(conversation)), compact))
        return
    report = providers.Report()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", providers.FidelityWarning)
        if kind == "request":
            render = renderer.render_request
        else:
            render = renderer.render_response
        try:
            body = render(conversation, unsupported=unsupported, report=report)
        except CanistersError as error:
            raise _Failure(f"{target}: {error}") from None
    if not quiet:
        for event in report.events:
            _note(f"{event.kind} {event.where}: {event.detail}")
    _write(output, _dumps(body, compact))


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
@click.argument("source", metavar="FILE|STORE")
@click.argument("conversation_id", required=False, metavar="[CONVERSATION_ID]")
def show(
    provider: str | None,
    kind: str,
    as_json: bool,
    source: str,
    conversation_id: str | None,
) -> None:
    """Render a conversation readably: roles, steps, tool calls with their results,
    media (modality, size, hash) and usage totals.

    SOURCE is a file ('-' for stdin) holding a canisters document (conversation,
    canister, JSONL or snapshot) or, with --from, a provider body; or a store (a
    directory or sqlite:///path.db) with the CONVERSATION_ID to show. A store
    without CONVERSATION_ID lists its conversations.
    """
    if source != _STDIN and _is_store(source):
        if provider is not None:
            raise _Failure("--from reads files; a store holds canisters already")
        with _open_store(source) as store:
            if conversation_id is None:
                _list_conversations(store, as_json)
                return
            conversation = store.load(conversation_id)
        title = f"conversation {conversation_id}"
    else:
        if conversation_id is not None:
            raise _Failure(
                f"{source} is a file, not a store: CONVERSATION_ID is only for stores"
            )
        conversation, _kind = _load(source, provider, kind)
        title = _display_name(source)
    if as_json:
        click.echo(_dumps(orjson.loads(to_json(conversation))))
    else:
        _render(conversation, title)


def _list_conversations(store: storage.Store, as_json: bool) -> None:
    rows = [(cid, store.head(cid)[0]) for cid in store.conversations()]
    if as_json:
        click.echo(_dumps([{"id": cid, "records": n} for cid, n in rows]))
        return
    if not rows:
        click.echo("no conversations")
    width = max((len(cid) for cid, _n in rows), default=0)
    for cid, records in rows:
        noun = "record" if records == 1 else "records"
        click.echo(f"{cid.ljust(width)}  " + click.style(f"{records} {noun}", dim=True))


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
        name = _display_name(file)
        try:
            conversation, _kind = _load(file, provider, kind)
        except _Failure as error:
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


@cli.group(
    epilog="""\b
LOCATION is a directory (the file backend) or sqlite:///path.db (relative) or
sqlite:////absolute/path.db.

\b
Examples:
  canisters store stats conversations/
  canisters store export conversations/ chat-1 -o chat-1.json
  canisters store import sqlite:///chats.db chat-1.json
  canisters store gc conversations/ --dry-run"""
)
def store() -> None:
    """Maintain a conversation store: stats, export, import, gc."""


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
    with _open_store(location) as opened, _progress("counting") as progress:
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
        click.echo(_dumps(document))
        return
    rows = [
        ("store", location),
        ("conversations", str(figures.conversations)),
        ("records", f"{figures.records} ({_size(figures.log_bytes)} of logs)"),
        ("blobs", f"{figures.blobs} ({_size(figures.blob_bytes)})"),
        (
            "references",
            f"{figures.references} ({_size(figures.referenced_bytes)} referenced)",
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
    "-o", "--output", default=_STDIN, metavar="FILE", help="Write here, not stdout."
)
@click.argument("location")
@click.argument("conversation_id")
def export(output: str, location: str, conversation_id: str) -> None:
    """Write one conversation, with every blob it refers to, as one JSON document.

    The document (a canisters snapshot) is what 'store import' reads, into this or
    any other store.
    """
    with _open_store(location) as opened:
        document = recording.snapshot(opened, conversation_id)
    _write(output, document)


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
@click.argument("file", default=_STDIN, metavar="[FILE|-]")
def import_(conversation_id: str | None, location: str, file: str) -> None:
    """Read a document written by 'store export' into the store (created if new).

    Prints the id the conversation was stored under.
    """
    data = _read_bytes(file)
    with _open_store(location, create=True) as opened:
        try:
            stored = recording.restore(opened, data, conversation_id=conversation_id)
        except CanistersError as error:
            raise _Failure(f"{_display_name(file)}: {error}") from None
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
    with _open_store(location) as opened, _progress("collecting") as progress:
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
        f"({_size(report.freed_bytes)}), kept {report.kept}"
    )
