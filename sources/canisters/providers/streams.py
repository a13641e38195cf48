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
sends them (dicts, or the provider SDK's event objects). An accumulator builds,
from the events, the response body the provider would have sent without
streaming and reads it with the normalizer's ``parse_response``: the result of
a complete stream equals the non-streamed parse, signatures and usage included.

Bad streams raise :class:`~canisters.providers.MalformedPayload` whose path
names the event: ``$[7]`` is the eighth event, ``$[7].delta.type`` a field of it.
A stream that ends before its final event raises too, unless
``truncated="keep"``: then what was complete comes back, and the
:class:`~canisters.providers.Report` passed as ``report=`` gets a ``"cut"``
event saying what was left out.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Mapping
from datetime import datetime
from typing import Any, ClassVar, Literal, TypeGuard

import attrs

from ..conversation import Conversation
from ..exceptions import MalformedPayload, ProviderError, _excerpt
from ..protocols import Canister, Role
from ._common import STRAY, Report, expect_mapping

__all__ = [
    "Accumulator",
    "Streaming",
    "Truncated",
    "parse_stream",
    "stream_error",
]

Truncated = Literal["raise", "keep"]
"""What :meth:`Accumulator.finish` does with a stream cut before its final event:
raise :class:`~canisters.providers.MalformedPayload`, or keep what was complete."""

Note = Callable[[str, str], None]
"""Called as ``note(where, detail)`` for each piece a cut stream leaves out."""


def stream_error(error: object, path: str) -> MalformedPayload:
    """Return the exception for an ``error`` event the provider sent mid-stream.

    ``error`` is the event's error object (``{"type": ..., "message": ...}``) or
    text; the message says what the provider said, the path names the event.
    """
    if isinstance(error, Mapping):
        kind = error.get("type") or error.get("status") or error.get("code")
        message = error.get("message")
        text = f"{kind}: {message}" if kind and message else str(message or kind)
        if not message and not kind:
            text = _excerpt(dict(error))
    else:
        text = str(error)
    return MalformedPayload(f"the provider sent an error: {text}", path)


class Accumulator:
    """Accumulates one streamed reply; a normalizer's ``accumulator()`` makes one.

    :meth:`feed` takes the events in order, :meth:`snapshot` gives the reply so
    far, :meth:`finish` the reply once the stream has ended. Subclasses (one per
    provider) set :attr:`provider`, read each event in ``_absorb`` and build the
    equivalent non-streamed response body in ``_body``; the base class keeps
    the event count, the error paths, and canister ids stable across snapshots,
    so the canisters a snapshot or :meth:`feed` gives are those :meth:`finish`
    gives.

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

    def _after_end(self, event: Mapping[str, Any], path: str) -> bool:
        """Take an event that came after the end, when the provider may send one
        (return True), or refuse it (False)."""
        return False

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
        mapping = expect_mapping(event, path)
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
        body, partial = self._body("snapshot", _ignore)
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
            body, _ = self._body("final", _ignore)
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
        body, _ = self._body("cut", note)
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
    if isinstance(value, Mapping):
        return {key: fresh(item) for key, item in value.items()}
    if isinstance(value, list):
        return [fresh(item) for item in value]
    return value


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
