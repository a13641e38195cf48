"""Streamed responses: the events of one streamed reply, accumulated into canisters.

Every built-in normalizer reads a streamed response two ways::

    conversation = normalizer.parse_stream(events)   # all at once

    accumulator = normalizer.accumulator()           # as the events arrive
    for event in events:
        for canister in accumulator.feed(event):     # canisters now complete
            recorder.record(canister)
        show(accumulator.snapshot())                 # the reply so far
    conversation = accumulator.finish()

``events`` are the stream's decoded event objects in order, as the provider
sends them (dicts, or the provider SDK's event objects); :func:`read_events`
decodes them from the raw bytes of a stream (server-sent events, NDJSON, or a
JSON array of chunks). An accumulator builds,
from the events, the response body the provider would have sent without
streaming and reads it with the normalizer's ``parse_response``: the result of
a complete stream equals the non-streamed parse, signatures and usage included.

Bad streams raise :class:`~canisters.providers.MalformedPayload` whose path
names the event: ``$[7]`` is the eighth event, ``$[7].delta.type`` a field of it.
An error the provider sends mid-stream (Anthropic's ``error`` event, Responses'
``error`` and ``response.failed``, an error object of Chat Completions, Gemini
or Ollama) raises :class:`~canisters.providers.ErrorResponse`, whose ``reply``
says what the provider said and whose ``path`` names the event.
A stream that ends before its final event raises too, unless
``truncated="keep"``: then what was complete comes back, and the
:class:`~canisters.providers.Report` passed as ``report=`` gets a ``"cut"``
event saying what was left out.
"""

from __future__ import annotations

import codecs
import itertools
import json
import re
from collections.abc import Callable, Iterable, Iterator, Mapping
from datetime import datetime
from typing import Any, ClassVar, Literal, TypeGuard

import attrs
import orjson

from ..conversation import Conversation
from ..exceptions import MalformedPayload, ProviderError, _excerpt
from ..protocols import Canister, Role
from ._common import STRAY, Report, expect_mapping
from ._errors import ErrorResponse, generic_error

__all__ = [
    "MAX_EVENT_BYTES",
    "Accumulator",
    "Note",
    "Pieces",
    "Streaming",
    "Truncated",
    "fresh",
    "is_stream",
    "parse_json_arguments",
    "parse_stream",
    "read_events",
    "stream_error",
    "unfinished",
]

Truncated = Literal["raise", "keep"]
"""What :meth:`Accumulator.finish` does with a stream cut before its final event:
raise :class:`~canisters.providers.MalformedPayload`, or keep what was complete."""

Note = Callable[[str, str], None]
"""Called as ``note(where, detail)`` for each piece a cut stream leaves out."""

_Grow = Callable[[dict[str, Any], str, str, str], None]
"""An accumulator's ``_grow``, passed to a provider's merging functions."""


def stream_error(
    error: object, path: str, *, provider: str | None = None
) -> ErrorResponse:
    """Return the exception for an ``error`` event the provider sent mid-stream.

    ``error`` is the event's error object (``{"type": ..., "message": ...}``) or
    text; the :class:`~canisters.providers.ErrorResponse` carries it read as an
    :class:`~canisters.providers.ErrorReply`, and its path names the event. The
    built-in normalizers read their own providers' error events; this is for a
    plugin's stream.
    """
    return generic_error(error, path, provider)


class Pieces:
    """A text that arrives in pieces, joined when it is read.

    ``text = text + piece`` once per delta copies the whole text each time: a
    reply of many small deltas then costs time quadratic in its length (tens of
    seconds for a long one). :meth:`add` takes the piece as it is; :meth:`text`
    joins them once (and keeps the result, so reading again costs nothing).
    Every ``_JOIN_AT`` pieces are joined into a block, and a block into the
    one before it when it has grown as large, so that what is kept stays a few
    strings and each character is copied a logarithmic number of times.
    """

    __slots__ = ("_blocks", "_tail")

    _JOIN_AT: ClassVar[int] = 1024
    """Pieces kept as they came before they are joined into a block."""

    def __init__(self, *parts: str) -> None:
        self._blocks: list[str] = []
        self._tail = list(parts)

    def add(self, piece: str) -> None:
        """Append ``piece``."""
        tail = self._tail
        tail.append(piece)
        if len(tail) >= self._JOIN_AT:
            block = "".join(tail)
            tail.clear()
            blocks = self._blocks
            while blocks and len(blocks[-1]) <= len(block):
                block = blocks.pop() + block
            blocks.append(block)

    def text(self) -> str:
        """The text so far."""
        blocks, tail = self._blocks, self._tail
        if tail or len(blocks) != 1:
            self._blocks = blocks = ["".join(blocks + tail)]
            tail.clear()
        return blocks[0]

    def __repr__(self) -> str:
        return f"Pieces({self.text()!r})"


class Accumulator:
    """Accumulates one streamed reply; a normalizer's ``accumulator()`` makes one.

    :meth:`feed` takes the events in order, :meth:`snapshot` gives the reply so
    far, :meth:`finish` the reply once the stream has ended. Subclasses (one per
    provider) set :attr:`provider`, read each event in ``_absorb`` and build the
    equivalent non-streamed response body in ``_body``; the base class keeps
    the event count, the error paths, and canister ids stable across snapshots,
    so the canisters a snapshot or :meth:`feed` gives are those :meth:`finish`
    gives. Text that grows delta by delta is best added with ``_grow``, which
    keeps a long reply linear in time.

    After an event raised, the accumulator refuses further events.
    """

    provider: ClassVar[str] = ""
    """The provider name of the stream."""

    def __init__(self) -> None:
        self._count = 0
        self._done = False
        self._failed = False
        self._final: Conversation | None = None
        self._stable: list[tuple[str, datetime]] = []
        self._growing: list[tuple[dict[str, Any], str]] = []

    # What subclasses provide -----------------------------------------------------

    def _absorb(self, event: Mapping[str, Any], path: str) -> bool:
        """Take one event (at ``path``); return whether it ends the stream."""
        raise NotImplementedError

    def _body(self, mode: str, note: Note) -> tuple[Mapping[str, Any], dict[str, str]]:
        """Return the non-streamed response body of what was received, and the
        raw text of tool-call arguments that do not parse yet (by call id).

        ``mode`` is ``"final"`` (the stream is complete), ``"snapshot"`` (keep
        partial pieces, arguments that do not parse yet as raw text) or ``"cut"``
        (leave out what did not complete, calling ``note`` for each).
        """
        raise NotImplementedError

    def _parse(self, body: Mapping[str, Any]) -> Conversation:
        """Read a response body (the normalizer's ``parse_response``)."""
        raise NotImplementedError

    def _expected(self) -> str:
        """Name the event that ends a stream, for the truncation error."""
        raise NotImplementedError

    def _mapping(self, event: object, path: str) -> Mapping[str, Any]:
        """The event as a JSON object (SDK objects converted), else raise."""
        return expect_mapping(event, path)

    def _after_end(self, event: Mapping[str, Any], path: str) -> bool:
        """Take an event that came after the end, when the provider may send one
        (return True), or refuse it (False)."""
        return False

    # What subclasses may use ---------------------------------------------------

    def _grow(self, target: dict[str, Any], key: str, piece: str, path: str) -> None:
        """Append ``piece`` to the text at ``target[key]`` (none yet: empty).

        Until the next ``_body`` the value there is a :class:`Pieces`; the base
        class puts the joined text back before calling ``_body``. A value there
        that is not text raises :class:`~canisters.providers.MalformedPayload`
        at ``path``.
        """
        old = target.get(key, "")
        if type(old) is Pieces:
            old.add(piece)
            return
        if not isinstance(old, str):
            raise MalformedPayload(
                f"a text delta for {key!r}, which holds {_excerpt(old)}", path
            )
        target[key] = Pieces(old, piece)
        self._growing.append((target, key))

    def _settle(self) -> None:
        """Put the joined text back wherever ``_grow`` left :class:`Pieces`."""
        for target, key in self._growing:
            value = target.get(key)
            if type(value) is Pieces:
                target[key] = value.text()
        self._growing.clear()

    def _built(self, mode: str, note: Note) -> tuple[Mapping[str, Any], dict[str, str]]:
        """``_body``, once the growing texts are joined."""
        self._settle()
        return self._body(mode, note)

    @property
    def _started(self) -> bool:
        """Whether the events so far give a body to parse."""
        return self._count > 0

    # The public surface ----------------------------------------------------------

    @property
    def events(self) -> int:
        """How many events were fed."""
        return self._count

    @property
    def complete(self) -> bool:
        """Whether the event that ends the stream has arrived."""
        return self._done

    def feed(self, event: object) -> tuple[Canister, ...]:
        """Take the next event; return the canisters it completed.

        That is every canister of the reply when ``event`` ends the stream, and
        nothing before (the first canister carries usage and the finish reason,
        which only the last events give). An event that is not an object, out
        of order, or for a block never started raises
        :class:`~canisters.providers.MalformedPayload` naming its index.
        """
        path = f"$[{self._count}]"
        if self._failed:
            raise ProviderError("the stream failed at an earlier event")
        self._failed = True
        mapping = self._mapping(event, path)
        self._count += 1
        try:
            if self._done:
                if not self._after_end(mapping, path):
                    raise MalformedPayload("an event after the end of the stream", path)
                self._final = None
                self._failed = False
                return ()
            ends = self._absorb(mapping, path)
        except ProviderError:
            raise
        except STRAY as error:
            raise MalformedPayload(f"{type(error).__name__}: {error}", path) from error
        self._failed = False
        if ends:
            self._done = True
            return tuple(self.finish())
        return ()

    def snapshot(self) -> Conversation:
        """The reply so far: partial text included, tool-call arguments that do not
        parse yet kept as text in the invocation's ``extras[provider]
        ["partial_arguments"]`` (with empty ``arguments``)."""
        if self._final is not None:
            return self._final
        if not self._started:
            return Conversation()
        body, partial = self._built("snapshot", _ignore)
        return self._conversation(body, partial)

    def finish(
        self, *, truncated: Truncated = "raise", report: Report | None = None
    ) -> Conversation:
        """The reply, once the stream has ended.

        A stream without its final event raises
        :class:`~canisters.providers.MalformedPayload` (path ``$[n]``, where the
        missing event would be), or with ``truncated="keep"`` returns what was
        complete and adds a ``"cut"`` event to ``report`` for each piece left
        out (and one for the missing end).
        """
        if truncated not in ("raise", "keep"):
            raise ProviderError(
                f"truncated must be 'raise' or 'keep', got {_excerpt(truncated)}"
            )
        if self._final is not None:
            return self._final
        if self._done:
            body, _ = self._built("final", _ignore)
            self._final = self._conversation(body, {})
            return self._final
        path = f"$[{self._count}]"
        detail = (
            f"the stream ended after {self._count} event(s), before {self._expected()}"
        )
        if truncated == "raise":
            raise MalformedPayload(detail, path)

        def note(where: str, what: str) -> None:
            if report is not None:
                report.add("cut", self.provider, where, what)

        note(path, detail)
        if not self._started:
            return Conversation()
        body, _ = self._built("cut", note)
        return self._conversation(body, {})

    # Machinery -------------------------------------------------------------------

    def _conversation(
        self, body: Mapping[str, Any], partial: Mapping[str, str]
    ) -> Conversation:
        try:
            parsed = self._parse(body)
        except MalformedPayload as error:
            raise MalformedPayload(
                f"the accumulated response is malformed at {error.path}: "
                f"{error.reason}",
                f"$[{max(self._count - 1, 0)}]",
            ) from error
        canisters: list[Canister] = []
        for position, canister in enumerate(parsed):
            if position == len(self._stable):
                self._stable.append((canister.id, canister.timestamp))
            identifier, timestamp = self._stable[position]
            changes: dict[str, Any] = {"id": identifier, "timestamp": timestamp}
            if canister.role is Role.Invocation:
                raw = partial.get(canister.invocation_id)  # type: ignore[attr-defined]
                if raw is not None:
                    own = dict(canister.extras.get(self.provider) or {})
                    own["partial_arguments"] = raw
                    changes["extras"] = {**canister.extras, self.provider: own}
            canisters.append(attrs.evolve(canister, **changes))  # type: ignore[misc]
        return Conversation(canisters)


def _ignore(where: str, detail: str) -> None:
    """A :data:`Note` that records nothing."""


def parse_stream(
    accumulator: Accumulator,
    events: Iterable[object],
    *,
    truncated: Truncated = "raise",
    report: Report | None = None,
) -> Conversation:
    """Feed every event of ``events`` to ``accumulator``, then finish it.

    What every built-in normalizer's ``parse_stream`` does with its own
    accumulator.
    """
    if not isinstance(events, Iterable) and hasattr(events, "__aiter__"):
        raise MalformedPayload(
            f"expected an iterable of events, got {type(events).__name__}, an async"
            " one: feed its events to the normalizer's accumulator() from an"
            " 'async for' loop, then call finish()"
        )
    if isinstance(events, (str, bytes, bytearray, Mapping)) or not isinstance(
        events, Iterable
    ):
        raise MalformedPayload(
            f"expected an iterable of events, got {type(events).__name__}"
        )
    for event in events:
        accumulator.feed(event)
    return accumulator.finish(truncated=truncated, report=report)


def fresh(value: Any) -> Any:
    """A copy of a JSON value whose objects and arrays an accumulator may change
    without touching the caller's event."""
    kind = type(value)
    if kind in _ATOMS:
        return value
    if kind is dict:
        return {
            key: item if type(item) in _ATOMS else fresh(item)
            for key, item in value.items()
        }
    if isinstance(value, Mapping):
        return {key: fresh(item) for key, item in value.items()}
    if isinstance(value, list):
        return [item if type(item) in _ATOMS else fresh(item) for item in value]
    return value


_ATOMS: frozenset[type] = frozenset((str, int, float, bool, type(None)))
"""The types of JSON values that hold nothing to copy (exactly: a subclass may
be a mapping or a list)."""


class Streaming:
    """Mixin giving a normalizer ``parse_stream`` from its ``accumulator()``."""

    __slots__ = ()

    def accumulator(self) -> Accumulator:
        """A fresh accumulator for one stream."""
        raise NotImplementedError

    def parse_stream(
        self,
        events: Iterable[Any],
        *,
        truncated: Truncated = "raise",
        report: Report | None = None,
    ) -> Conversation:
        """Read a streamed response's events (dicts or the provider SDK's event
        objects) into the reply ``parse_response`` gives for the same
        response sent whole; see :mod:`canisters.providers.streams`."""
        return parse_stream(
            self.accumulator(), events, truncated=truncated, report=report
        )


def parse_json_arguments(text: str, path: str) -> Any:
    """Decode accumulated tool-call arguments, raising at ``path`` when they are
    not valid JSON."""
    try:
        return json.loads(text)
    except (ValueError, RecursionError) as error:
        raise MalformedPayload(
            f"the tool-call arguments streamed are not valid JSON: {error}", path
        ) from None


def unfinished(arguments: object) -> TypeGuard[str]:
    """Whether streamed tool-call ``arguments`` are text that is not JSON yet
    (an empty string counts as finished: some servers send it for no
    arguments)."""
    if not isinstance(arguments, str) or not arguments.strip():
        return False
    try:
        json.loads(arguments)
    except (ValueError, RecursionError):
        return True
    return False


# Reading the wire --------------------------------------------------------------------

MAX_EVENT_BYTES = 64 * 1024 * 1024
"""The default bound of :func:`read_events` on one event: an SSE line, an NDJSON
value or an array item larger than this is refused, so that a stream without
line breaks cannot fill the memory."""

_CHUNK = 64 * 1024
_SSE_FIELDS = ("data:", "event:", "id:", "retry:", ":")
_LINE_BREAK = re.compile(r"\r\n|\r|\n")
_loads = orjson.loads
_SPACES = re.compile(r"[ \t\r\n]*")


def _wire(line: int, message: str) -> MalformedPayload:
    """The error for a bad stream at ``line`` (counted from 1)."""
    return MalformedPayload(message, f"line {line}")


def _byte_chunks(data: object) -> Iterator[bytes]:
    """The bytes of ``data`` in pieces, read lazily from a file or iterable."""
    if isinstance(data, (bytes, bytearray, memoryview)):
        yield bytes(data)
        return
    if isinstance(data, str):
        yield data.encode("utf-8", "surrogatepass")
        return
    read = getattr(data, "read", None)
    if callable(read):
        while True:
            piece = read(_CHUNK)
            if not piece:
                return
            if isinstance(piece, str):
                piece = piece.encode("utf-8", "surrogatepass")
            if not isinstance(piece, (bytes, bytearray)):
                raise MalformedPayload(
                    f"the stream's read() gave {type(piece).__name__}, not bytes"
                )
            yield bytes(piece)
    if isinstance(data, Iterable):
        for number, piece in enumerate(data):
            if isinstance(piece, str):
                piece = piece.encode("utf-8", "surrogatepass")
            if not isinstance(piece, (bytes, bytearray, memoryview)):
                raise MalformedPayload(
                    f"chunk {number} of the stream is {type(piece).__name__},"
                    " not bytes or text"
                )
            yield bytes(piece)
        return
    raise MalformedPayload(
        "expected the stream as bytes, text, a binary file or an iterable of"
        f" chunks, got {type(data).__name__}"
    )


def _text_chunks(data: object) -> Iterator[str]:
    decoder = codecs.getincrementaldecoder("utf-8")("strict")
    first = True
    offset = 0
    try:
        for piece in _byte_chunks(data):
            text = decoder.decode(piece)
            if first and text:
                text = text.removeprefix("\ufeff")
                first = False
            offset += len(piece)
            if text:
                yield text
        tail = decoder.decode(b"", final=True)
    except UnicodeDecodeError as error:
        raise MalformedPayload(
            f"not UTF-8 text: {error.reason} (near byte {offset + error.start})"
        ) from None
    if tail:
        yield tail


def _lines(chunks: Iterator[str], limit: int) -> Iterator[str]:
    """Split text into lines at CR LF, LF or CR, as server-sent events do.

    Linear in the text: each line is cut out of its chunk where it lies, and a
    line spread over several chunks is joined once, when it ends.
    """
    search = _LINE_BREAK.search
    pending: list[str] = []  # the start of a line that has not ended yet
    size = 0
    number = 0
    for chunk in chunks:
        if (
            "\n" not in chunk
            and "\r" not in chunk
            and not (pending and pending[-1].endswith("\r"))
        ):
            pending.append(chunk)
            size += len(chunk)
            if size > limit:
                raise _wire(number + 1, f"longer than {limit:,} characters")
            continue
        if pending:
            pending.append(chunk)
            chunk = "".join(pending)
            pending.clear()
        at = 0
        while True:
            match = search(chunk, at)
            if match is None:
                break
            if match.group() == "\r" and match.end() == len(chunk):
                break  # perhaps the first half of a CR LF: wait for more
            number += 1
            yield chunk[at : match.start()]
            at = match.end()
        if at < len(chunk):
            pending.append(chunk[at:])
        size = len(chunk) - at
        if size > limit:
            raise _wire(number + 1, f"longer than {limit:,} characters")
    if pending:
        yield "".join(pending).removesuffix("\r")


def _sse(chunks: Iterator[str], limit: int) -> Iterator[Any]:
    data: list[str] = []
    name = ""
    number = 0
    start = 0
    size = 0
    for line in _lines(chunks, limit):
        number += 1
        if line == "":
            if data:
                text = "\n".join(data)
                if text.strip() == "[DONE]":
                    return
                yield _event(text, name, start)
            data, name, size = [], "", 0
            continue
        if line.startswith(":"):
            continue
        field, _, value = line.partition(":")
        value = value.removeprefix(" ")
        if field == "data":
            if not data:
                start = number
            data.append(value)
            size += len(value)
            if size > limit:
                raise _wire(number, f"the event is longer than {limit:,} characters")
        elif field == "event":
            name = value
        elif field not in ("id", "retry"):
            raise _wire(number, f"not a server-sent event field: {_excerpt(line)}")
    if data:
        text = "\n".join(data)
        if text.strip() != "[DONE]":
            yield _event(text, name, start)


def _event(text: str, name: str, line: int) -> Any:
    try:
        value = _loads(text)  # orjson: a fifth of the standard library's time
    except ValueError:
        # What orjson refuses (an integer beyond 64 bits, NaN, deep nesting,
        # or no JSON at all) is read, or refused, as the standard library does.
        try:
            value = json.loads(text)
        except (ValueError, RecursionError) as error:
            raise _wire(line, f"the event's data is not JSON: {error}") from None
    if name and name != "message" and isinstance(value, dict) and "type" not in value:
        value["type"] = name
    return value


def _json_values(chunks: Iterator[str], limit: int, array: bool) -> Iterator[Any]:
    """JSON values one after another (NDJSON), or the items of one JSON array.

    Linear in the text: values are decoded where they lie in the buffer, and a
    value that does not end in it is tried again once the buffer has doubled,
    not after every chunk.
    """
    decode = json.JSONDecoder().raw_decode
    skip = _SPACES.match
    buffer = ""
    at = 0  # where the next value (or separator) starts in the buffer
    line = 1
    done = False
    state = "open" if array else "item"  # open, item, first, after, closed
    source = iter(chunks)
    while True:
        position = skip(buffer, at).end()  # type: ignore[union-attr]
        line += buffer.count("\n", at, position)
        at = position
        if at == len(buffer):
            if done:
                break
            try:
                buffer, at = next(source), 0
            except StopIteration:
                done = True
            continue
        head = buffer[at]
        if state == "open":
            if head != "[":
                raise _wire(line, "expected a JSON array")
            at, state = at + 1, "first"
            continue
        if state in ("first", "after") and head == "]":
            at, state = at + 1, "closed"
            continue
        if state == "after":
            if head != ",":
                raise _wire(line, "expected ',' or ']' between the array's items")
            at, state = at + 1, "item"
            continue
        if state == "closed":
            raise _wire(line, "data after the end of the array")
        try:
            value, end = decode(buffer, at)
        except RecursionError:
            raise _wire(line, "nested too deeply") from None
        except ValueError as error:
            if not done and len(buffer) - at <= limit:
                buffer, done = _more(buffer[at:], source, limit)
                at = 0
                continue
            if len(buffer) - at > limit:
                raise _wire(
                    line, f"an event longer than {limit:,} characters"
                ) from None
            raise _not_json(error, buffer, at, line) from None
        if end - at > limit:
            raise _wire(line, f"an event longer than {limit:,} characters")
        yield value
        line += buffer.count("\n", at, end)
        at = end
        if array:
            state = "after"
    if array and state != "closed":
        raise _wire(line, "the array never closed")


def _not_json(error: ValueError, buffer: str, at: int, line: int) -> MalformedPayload:
    """The error for the value at ``buffer[at:]`` (on ``line``), which does not
    decode: where it lies counted from the value's start."""
    if not isinstance(error, json.JSONDecodeError):
        return _wire(line, f"not JSON: {error}")
    if error.pos >= len(buffer.rstrip()):
        return _wire(line, "an unfinished JSON value")
    newline = buffer.rfind("\n", at, error.pos)
    column = error.pos - newline if newline >= 0 else error.pos - at + 1
    where = line + buffer.count("\n", at, error.pos)
    return _wire(where, f"not JSON: {error.msg} (column {column})")


def _more(buffer: str, source: Iterator[str], limit: int) -> tuple[str, bool]:
    """``buffer`` with the chunks that follow, until it has doubled (or passed
    ``limit``); and whether the source ran out."""
    pieces = [buffer]
    size = len(buffer)
    goal = min(2 * size, limit + 1)
    while True:
        try:
            piece = next(source)
        except StopIteration:
            return "".join(pieces), True
        pieces.append(piece)
        size += len(piece)
        if size >= goal:
            return "".join(pieces), False


def read_events(data: object, *, limit: int | None = None) -> Iterator[Any]:
    """Yield the decoded events of a raw stream, as ``parse_stream`` takes them.

    ``data`` is the stream's bytes or text, a binary file, or an iterable of
    byte or text chunks (an HTTP response's ``iter_bytes()``); it is read lazily,
    one piece at a time. The format is told from the first characters:

    - server-sent events (``data:``, ``event:``, ``id:``, ``retry:`` or a ``:``
      comment first), as OpenAI, Anthropic and Gemini (``alt=sse``) stream:
      ``data:`` lines (several make one multi-line value), a blank line ends an
      event, ``data: [DONE]`` ends the stream, comments are skipped, line ends
      may be CR LF, LF or CR. An ``event:`` name becomes the object's ``type``
      when the data has none;
    - a JSON array (``[{...}, {...}]``), as Gemini's ``streamGenerateContent``
      sends without ``alt=sse``: its items;
    - otherwise JSON values one after another, as Ollama's NDJSON.

    Bytes that are not UTF-8, data that is not JSON or a value longer than
    ``limit`` characters (default :data:`MAX_EVENT_BYTES`) raise
    :class:`~canisters.providers.MalformedPayload` naming the line. The time
    taken is linear in the stream, whether it comes whole or in chunks.
    """
    bound = MAX_EVENT_BYTES if limit is None else limit
    if type(bound) is not int or bound <= 0:
        raise ProviderError(f"limit must be a positive int, got {_excerpt(limit)}")
    chunks = _text_chunks(data)
    head = ""
    for chunk in chunks:
        head += chunk
        if head.strip() and (len(head.lstrip()) >= 8 or "\n" in head.lstrip()):
            break
    rest = itertools.chain([head], chunks)
    start = head.lstrip()
    if start.startswith(_SSE_FIELDS):
        yield from _sse(rest, bound)
    else:
        yield from _json_values(rest, bound, array=start.startswith("["))


def is_stream(data: bytes | str) -> bool:
    """Whether ``data`` holds a stream (server-sent events, a JSON array of
    objects, or more than one JSON value) rather than one JSON body. Text that
    is not JSON in any of these forms is no stream."""
    text = data.decode("utf-8", "replace") if isinstance(data, bytes) else data
    start = text.lstrip("\ufeff \t\r\n")
    if start.startswith(_SSE_FIELDS):
        return True
    if not start.startswith(("{", "[")):
        return False
    try:
        value = json.loads(start)
    except json.JSONDecodeError as error:
        return start.startswith("{") and error.msg == "Extra data"
    except (ValueError, RecursionError):
        return False
    return (
        isinstance(value, list)
        and bool(value)
        and all(isinstance(item, dict) for item in value)
    )
