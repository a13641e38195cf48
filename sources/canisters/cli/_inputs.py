"""Reading the command's input and opening stores (part of :mod:`canisters.cli`)."""

from __future__ import annotations

import contextlib
import json
import os
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, BinaryIO, Final, TypeGuard, TypeVar, cast

import click

from .. import providers, recording, storage
from ..conversation import Conversation
from ..exceptions import CanistersError, SerializationError
from ..protocols import Canister, Role
from ..providers import streams
from ..requests import Request
from ..serialization import (
    CANISTER_FORMAT,
    CONVERSATION_FORMAT,
    REQUEST_FORMAT,
    _encode_json,
    _loads,
    from_json,
    from_jsonl,
)

NEUTRAL: Final = "canisters"
"""The ``--from`` / ``--to`` name of the neutral JSON document format."""
INTEROP: Final = ("pydantic-ai", "langchain", "otel")
"""The ``--from`` / ``--to`` names of the :mod:`canisters.interop` JSON forms."""
STDIN: Final = "-"
"""The file name that means standard input (or output)."""

MAX_INPUT: Final = 256 * 1024 * 1024
"""The default bound on the bytes of one input file (256 MiB)."""

_SQLITE: Final = "sqlite://"
_SERVERS: Final = ("postgresql://", "postgres://")
_STORE_MARKER: Final = "store.json"  # written by the file backend with a new store
_RESPONSE_KEYS: Final = (
    "choices",
    "candidates",
    "output",
    "message",
    "stop_reason",
    "promptFeedback",
    "prompt_feedback",
    "responseId",
    "response_id",
)
_REQUEST_KEYS: Final = (
    "messages",
    "contents",
    "input",
    "instructions",
    "system",
    "system_instruction",
    "systemInstruction",
)
_T = TypeVar("_T")


class Failure(Exception):
    """An error the command reports as one line (the message), exiting with 2."""


# Reading input -------------------------------------------------------------------


def display_name(source: str) -> str:
    """How messages name ``source`` (``<stdin>`` for ``-``)."""
    return "<stdin>" if source == STDIN else source


def max_input() -> int:
    """The most bytes one input may hold (``CANISTERS_MAX_INPUT``, in bytes;
    default :data:`MAX_INPUT`)."""
    value = os.environ.get("CANISTERS_MAX_INPUT", "")
    if not value:
        return MAX_INPUT
    try:
        limit = int(value)
    except ValueError:
        limit = -1
    if limit <= 0:
        raise Failure(
            f"CANISTERS_MAX_INPUT must be a positive number of bytes, not {value!r}"
        )
    return limit


def _read_bounded(name: str, handle: BinaryIO) -> bytes:
    limit = max_input()
    data = handle.read(limit + 1)
    if len(data) > limit:
        raise Failure(
            f"{name}: larger than {limit:,} bytes, the input limit "
            "(set CANISTERS_MAX_INPUT to a larger number of bytes to read it)"
        )
    return data


def read_bytes(source: str) -> bytes:
    """Return the bytes of file ``source`` (stdin for ``-``), or fail in one line.

    Inputs larger than :func:`max_input` are refused rather than read whole.
    """
    if source == STDIN:
        if sys.stdin is None:
            raise Failure("no FILE given, and stdin is closed (see --help)")
        if sys.stdin.isatty():
            raise Failure("no FILE given, and stdin is a terminal (see --help)")
        return _read_bounded("<stdin>", sys.stdin.buffer)
    path = Path(source)
    try:
        with path.open("rb") as handle:
            return _read_bounded(source, handle)
    except FileNotFoundError:
        raise Failure(f"{source}: no such file") from None
    except IsADirectoryError:
        raise Failure(f"{source}: is a directory, not a file") from None
    except OSError as error:
        raise Failure(f"{source}: cannot read: {error.strerror}") from None


def _parse_json(name: str, data: bytes) -> Any:
    """Read JSON as the library reads documents (NaN, lone surrogate escapes and
    integers beyond 64 bits accepted, nesting bounded), or fail in one line."""
    try:
        return _loads(data)
    except SerializationError as error:
        raise Failure(f"{name}: not valid JSON: {_reason(error)}") from None


def _reason(error: SerializationError) -> str:
    return error.reason.removeprefix("not JSON: ")


def read_body(name: str, data: bytes) -> dict[str, Any]:
    """Parse a provider body: a JSON object that is not a canisters document."""
    body = _parse_json(name, data)
    if not isinstance(body, dict):
        raise Failure(
            f"{name}: expected a JSON object (a request or response body), "
            f"got {_json_kind(body)}"
        )
    if isinstance(body.get("format"), str) and body["format"].startswith("canisters."):
        raise Failure(
            f"{name}: this is a canisters document ({body['format']}); "
            f"read it with --from {NEUTRAL}"
        )
    return body


def read_neutral(name: str, data: bytes) -> Conversation | Request:
    """Read a conversation, canister, request or snapshot document, or
    conversation JSONL."""
    try:
        document = _loads(data)
    except SerializationError as error:
        first = data.lstrip().split(b"\n", 1)[0]
        try:
            header = _loads(first)
        except SerializationError:
            header = None
        if isinstance(header, dict) and header.get("format") == CONVERSATION_FORMAT:
            return _neutral_error(name, lambda: from_jsonl(data))
        raise Failure(f"{name}: not valid JSON: {_reason(error)}") from None
    if not isinstance(document, dict):
        raise Failure(f"{name}: expected a JSON object, got {_json_kind(document)}")
    kind = document.get("format")
    if kind == recording.SNAPSHOT_FORMAT:
        inner = _encode_json(document.get("conversation"))[0]
        value = _neutral_error(f"{name}: $.conversation", lambda: from_json(inner))
    elif kind in (CONVERSATION_FORMAT, CANISTER_FORMAT, REQUEST_FORMAT):
        value = _neutral_error(name, lambda: from_json(data))
    else:
        raise Failure(
            f"{name}: not a canisters document ({_format_of(kind)}); "
            "to read a provider body, give --from PROVIDER"
        )
    if isinstance(value, Conversation | Request):
        return value
    return Conversation((cast(Canister, value),))


def _neutral_error(name: str, read: Callable[[], _T]) -> _T:
    try:
        return read()
    except CanistersError as error:
        raise Failure(f"{name}: {error}") from None


def _format_of(kind: object) -> str:
    return 'no "format" field' if kind is None else f'"format" is {kind!r}'


def _json_kind(value: object) -> str:
    names = {list: "an array", str: "a string", bool: "a boolean", type(None): "null"}
    return names.get(type(value), "a number")


def detect_kind(name: str, body: dict[str, Any]) -> str:
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
        raise Failure(f"{name}: this is an error body, not a request or a response")
    raise Failure(
        f"{name}: cannot tell whether this is a request or a response body; "
        "give --kind request or --kind response"
    )


def get_normalizer(name: str) -> providers.Normalizer:
    """Return the provider's normalizer, or fail listing the known names."""
    try:
        return providers.get(name)
    except LookupError:
        known = ", ".join((NEUTRAL, *providers.names(), *INTEROP))
        raise Failure(f"unknown provider {name!r}; known: {known}") from None


def is_whole(normalizer: object) -> TypeGuard[providers.RequestNormalizer]:
    """Whether ``normalizer`` reads and writes whole requests."""
    return isinstance(normalizer, providers.RequestNormalizer)


def load(source: str, provider: str | None, kind: str) -> tuple[Conversation, str]:
    """Read ``source`` as a canisters document, or as ``provider``'s body.

    Returns the conversation and the kind (``request`` or ``response``) it was
    read as; a neutral document whose canisters are all assistant-side (replies and
    invocations) counts as a response when ``kind`` is ``auto``.
    """
    read, kind = load_full(source, provider, kind, whole=False)
    return cast(Conversation, read), kind


def load_full(
    source: str, provider: str | None, kind: str, *, whole: bool = True
) -> tuple[Conversation | Request, str]:
    """:func:`load`, but a request body of a provider whose normalizer reads
    whole requests (:class:`~canisters.providers.RequestNormalizer`) is read
    whole, as a :class:`~canisters.Request`, when ``whole`` is true."""
    name = display_name(source)
    if provider in INTEROP:
        return read_interop(name, provider, read_bytes(source)), "request"
    if provider is not None and provider != NEUTRAL:
        normalizer = get_normalizer(provider)
    data = read_bytes(source)
    if provider is None or provider == NEUTRAL:
        read = read_neutral(name, data)
        if isinstance(read, Request):
            return (read if whole else read.conversation), "request"
        conversation = read
        if kind == "auto":
            replies = {Role.Assistant, Role.Invocation}
            only_replies = bool(conversation) and all(
                c.role in replies for c in conversation
            )
            kind = "response" if only_replies else "request"
        return conversation, kind
    if streams.is_stream(data):
        return read_stream(name, normalizer, data, kind), "response"
    body = read_body(name, data)
    if kind == "auto":
        kind = detect_kind(name, body)
    try:
        if kind == "request" and whole and is_whole(normalizer):
            return normalizer.parse_full_request(body), kind
        if kind == "request":
            return normalizer.parse_request(body), kind
        return normalizer.parse_response(body), kind
    except CanistersError as error:
        raise Failure(f"{name}: {error}") from None


def read_stream(
    name: str, normalizer: providers.Normalizer, data: bytes, kind: str
) -> Conversation:
    """Read a saved stream (server-sent events, NDJSON or a JSON array of chunks)
    with the normalizer's ``parse_stream``: the reply it streamed."""
    if kind == "request":
        raise Failure(f"{name}: this is a stream, which holds a response")
    if not isinstance(normalizer, providers.StreamingNormalizer):
        raise Failure(f"{name}: the {normalizer.name} normalizer reads no streams")
    try:
        return normalizer.parse_stream(streams.read_events(data))
    except CanistersError as error:
        raise Failure(f"{name}: {error}") from None


def read_interop(name: str, form: str, data: bytes) -> Conversation:
    """Read ``data`` as the JSON form of an interop library (see :data:`INTEROP`):
    a pydantic-ai history, LangChain's ``messages_to_dict`` list, or an object
    holding the OpenTelemetry GenAI message attributes."""
    from ..interop import langchain, otel, pydantic_ai

    try:
        if form == "pydantic-ai":
            return pydantic_ai.from_json(data)
        if form == "langchain":
            return langchain.from_json(data)
        attributes = _parse_json(name, data)
        if not isinstance(attributes, dict):
            raise Failure(
                f"{name}: expected a JSON object of gen_ai.* attributes, "
                f"got {_json_kind(attributes)}"
            )
        return otel.from_otel(attributes)
    except CanistersError as error:
        raise Failure(f"{name}: {error}") from None


def render_interop(
    form: str, conversation: Conversation, report: providers.Report
) -> Any:
    """Write ``conversation`` as the JSON value of an interop library's form."""
    from ..interop import langchain, otel, pydantic_ai

    try:
        if form == "pydantic-ai":
            return _loads(pydantic_ai.to_json(conversation, report=report))
        if form == "langchain":
            return _loads(langchain.to_json(conversation, report=report))
        return otel.to_otel(conversation, report=report)
    except CanistersError as error:
        raise Failure(f"{form}: {error}") from None


def write(output: str, text: str) -> None:
    """Write ``text`` to file ``output`` (stdout for ``-``), or fail in one line.

    A lone surrogate (kept from a body's ``"\\ud800"``) is written as that
    escape, which is what it was in JSON, as on stdout (see ``run``).
    """
    if output == STDIN:
        click.echo(text)
        return
    try:
        Path(output).write_text(
            text + "\n", encoding="utf-8", errors="backslashreplace"
        )
    except OSError as error:
        raise Failure(f"{output}: cannot write: {error.strerror}") from None


def dumps(value: Any, compact: bool = False) -> str:
    """Serialize JSON for output: indented, or on one line when ``compact``.

    NaN and the infinities are written as the library's documents write them; a
    lone surrogate stays in the text, and becomes its ``\\uXXXX`` escape as the
    text is written (see :func:`write`).
    """
    try:
        if compact:
            return json.dumps(value, ensure_ascii=False, separators=(",", ":"))
        return json.dumps(value, ensure_ascii=False, indent=2)
    except RecursionError:
        raise Failure("the output is nested too deeply to write") from None


# Stores --------------------------------------------------------------------------


def is_store(location: str) -> bool:
    """Tell whether ``location`` names a store rather than a file."""
    return location.startswith((_SQLITE, *_SERVERS)) or Path(location).is_dir()


def open_store(
    location: str,
    *,
    create: bool = False,
    blobs: str | None = None,
    read_only: bool = False,
) -> storage.Store:
    """Open the store at ``location``; unless ``create``, it must already exist
    (a server's store is created on first open). ``blobs``: an ``s3://`` URL.
    ``read_only`` opens it without writing anything (for commands that only
    read; file and SQLite stores)."""
    if not create and not location.startswith(_SERVERS):
        if location.startswith(_SQLITE):
            path = location[len(_SQLITE) :]
            if not Path(path[1:] if path.startswith("/") else path).is_file():
                raise Failure(f"{location}: no such store")
        elif not Path(location).exists():
            raise Failure(f"{location}: no such store")
        elif not (Path(location) / _STORE_MARKER).is_file():
            raise Failure(f"{location}: not a canisters store")
    options: dict[str, Any] = {}
    if blobs is not None:
        options["blobs"] = blobs
    if read_only and not location.startswith(_SERVERS):
        options["read_only"] = True
    if options:
        return storage.open_store(location, **options)
    return storage.open_store(location)


@contextlib.contextmanager
def progress_bar(label: str) -> Iterator[storage.Progress | None]:
    """Yield a ``(done, total)`` callback drawing a bar on a terminal, else ``None``."""
    if not sys.stderr.isatty():
        yield None
        return
    with click.progressbar(length=1, label=label, file=sys.stderr) as bar:

        def advance(done: int, total: int) -> None:
            bar.length = max(total, 1)
            bar.update(done - bar.pos)

        yield advance
