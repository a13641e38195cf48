"""Record agent runs as they happen, resume them after a crash, follow lineage.

A :class:`Recorder` appends each canister to a store the moment it exists, so a
process killed in the middle of a tool call loses nothing it had already
produced. :func:`resume` loads a recorded conversation, checks the prompt
identity it was recorded with and reports the invocations still waiting for a
result; :func:`run_pending` (or :func:`arun_pending`) runs exactly those through
caller-supplied handlers and records each result as soon as it exists::

    recorder = Recorder(store, "run-42", prompt_key="triage/v3")
    recorder.record(Supervisor("You triage tickets."))
    recorder.record(User("Ticket 1234 is stuck"))
    ...                                    # the process dies here

    resumption = resume(store, "run-42", prompt_key="triage/v3")
    run_pending(resumption, {"lookup": lookup_ticket})
    conversation = resumption.recorder.conversation

A model call that the provider refused is recorded too:
:meth:`Recorder.record_error` writes the refusal (an
:class:`~canisters.providers.ErrorReply`, or the
:class:`~canisters.providers.ErrorResponse` carrying it) into the conversation's
audit log (decision :data:`PROVIDER_ERROR`), so that an audit of the run shows
it, and a resumed run learns from :attr:`Resumption.failed_call` that the call
it would make next already failed, rather than taking it for one never made::

    try:
        reply = normalizer.parse_response(body)
    except providers.ErrorResponse as refused:
        recorder.record_error(refused)

:func:`snapshot` and :func:`restore` carry a whole conversation, with the blobs
its media refer to, as one JSON document. :func:`new_trace`, :func:`with_trace`,
:func:`lineage` and :func:`trace` follow ``trace_id`` / ``parent_id`` lineage, and
:func:`trace_summary` totals tokens, latency, retries and model calls per trace
and per policy; they are defined in ``canisters.lineage`` and re-exported
here.

Handlers
--------

A handler is any callable taking the invocation's arguments (a read-only
mapping) as its one positional argument; it may be a coroutine function. What
it returns becomes the result's content (text stays text, content parts stay
as they are, anything else is stored as JSON text); returning an
:class:`~canisters.ErrorInfo` records an error result without raising. An
exception becomes an error result: ``TimeoutError`` gives ``TIMEOUT``
(retryable), ``ConnectionError`` gives ``TOOL_ERROR`` (retryable), anything else
``TOOL_ERROR``; an exception may override these with ``code``, ``retryable`` and
``details`` attributes. ``BaseException`` subclasses that are not ``Exception``
(``KeyboardInterrupt``, ``SystemExit``, task cancellation) propagate, and the
invocation stays pending.

Idempotency
-----------

A completed invocation is never run again: only invocations without a result
are pending. A process can still die after a handler's side effect happened but
before its result was recorded; the invocation is then pending on resume and
runs a second time. A handler that must not repeat its effect declares a
keyword parameter named ``idempotency_key`` and receives the invocation's
``invocation_id`` through it, stable across crashes, to deduplicate with::

    def charge(arguments, *, idempotency_key):
        return payments.charge(arguments["amount"], key=idempotency_key)
"""

from __future__ import annotations

import asyncio
import base64
import binascii
import hashlib
import inspect
import threading
import time
from collections.abc import Awaitable, Callable, Iterable, Mapping, Sequence
from datetime import datetime
from typing import Any, Final, Literal, TypeVar

import attrs
import orjson

from . import _base64
from ._compat import fromisoformat
from ._identifiers import check_id, check_line
from .builders import ResultBuilder
from .canisters import ErrorCode, ErrorInfo, Metadata, Result, new_id, now
from .conversation import Conversation
from .exceptions import (
    CanistersError,
    ConversationNotFound,
    ModelError,
    PendingInvocations,
    PromptMismatch,
    RecordingError,
    SerializationError,
    SnapshotRestoreError,
    StorageError,
)
from .lineage import (
    TraceSummary,
    TraceTotals,
    lineage,
    new_trace,
    trace,
    trace_summary,
    with_trace,
)
from .protocols import Canister, InvocationCanister, Role
from .providers import ErrorReply, ErrorResponse
from .serialization import MAX_DEPTH, _document, _dumps, _loads, from_json
from .storage import Store

__all__ = [
    "CARRIED_SIDE_FILES",
    "PROVIDER_ERROR",
    "FailedCall",
    "Handler",
    "OnPending",
    "PROMPT_KEY_FILE",
    "Recorder",
    "Resumption",
    "SNAPSHOT_FORMAT",
    "SNAPSHOT_VERSION",
    "TraceSummary",
    "TraceTotals",
    "arun_pending",
    "lineage",
    "new_trace",
    "recorded_prompt_key",
    "restore",
    "resume",
    "run_pending",
    "snapshot",
    "trace",
    "trace_summary",
    "with_trace",
]

C = TypeVar("C", bound=Canister)

Handler = Callable[..., Any]
"""A tool handler: ``handler(arguments)`` or ``handler(arguments, *,
idempotency_key)``, sync or async."""

OnPending = Literal["run", "interrupt", "abort"]
"""What :func:`run_pending` does with pending invocations: run them, answer them
with an ``INTERRUPTED`` error result without running them, or raise
:class:`~canisters.PendingInvocations`."""

SNAPSHOT_FORMAT: Final = "canisters.snapshot"
"""The ``format`` of a :func:`snapshot` document."""
SNAPSHOT_VERSION: Final = 1
"""The ``version`` of the :func:`snapshot` documents this module writes."""
PROMPT_KEY_FILE: Final = "prompt-key"
"""The side file beside a conversation that holds its prompt key."""
CARRIED_SIDE_FILES: Final = ("audit",)
"""Side files a snapshot carries along (the log of :mod:`canisters.audit`)."""
_AUDIT_FILE: Final = CARRIED_SIDE_FILES[0]  # canisters.audit.AUDIT_FILE
PROVIDER_ERROR: Final = "provider_error"
"""The audit decision under which :meth:`Recorder.record_error` records a
provider's refusal of a call."""


@attrs.frozen
class FailedCall:
    """A model call the provider refused, as :meth:`Recorder.record_error`
    recorded it."""

    reply: ErrorReply
    """What the provider said."""
    after: str | None
    """The id of the last canister recorded before the call (``None`` when the
    conversation had none): the call was made on the conversation up to it."""
    step: int
    """The step the call's answer would have had."""
    id: str
    """The id of the audit entry that holds it."""
    timestamp: datetime
    """When it was recorded; timezone-aware UTC."""

    def as_details(self) -> dict[str, Any]:
        """The audit entry's details (the reply's fields and the step)."""
        reply = attrs.asdict(self.reply, recurse=False)
        reply["extras"] = dict(self.reply.extras)
        reply["envelope"] = dict(self.reply.envelope)
        return {**reply, "step": self.step}


def _failed_call(record: Any) -> FailedCall | None:
    """Read a :data:`PROVIDER_ERROR` audit line; other lines give ``None``."""
    if not isinstance(record, dict) or record.get("decision") != PROVIDER_ERROR:
        return None
    details = record.get("details")
    if not isinstance(details, dict):
        return None
    fields = {field.name for field in attrs.fields(ErrorReply)}
    try:
        reply = ErrorReply(**{k: v for k, v in details.items() if k in fields})
        step = details.get("step")
        if not isinstance(step, int) or isinstance(step, bool):
            return None
        after = record.get("canister_id")
        return FailedCall(
            reply,
            after if isinstance(after, str) else None,
            step,
            str(record["id"]),
            fromisoformat(record["timestamp"]),
        )
    except (CanistersError, KeyError, TypeError, ValueError):
        return None


# Prompt identity -------------------------------------------------------------


def _prompt_key_line(prompt_key: str | None) -> str:
    """The side-file line recording ``prompt_key``, written as documents are: a
    lone surrogate is kept exactly (as its ``\\uXXXX`` escape); what no document
    can hold raises :class:`~canisters.SerializationError`."""
    if prompt_key is not None and type(prompt_key) is not str:
        raise ModelError(
            f"a prompt key is a str or None, not {type(prompt_key).__name__}",
            field="prompt_key",
        )
    return _dumps({"prompt_key": prompt_key})


def _write_prompt_key(
    store: Store, conversation_id: str, prompt_key: str | None
) -> None:
    _side_write(store, conversation_id, PROMPT_KEY_FILE, _prompt_key_line(prompt_key))


def recorded_prompt_key(store: Store, conversation_id: str) -> str | None:
    """Return the prompt key a conversation was recorded with, if any."""
    data = _side_read(store, conversation_id, PROMPT_KEY_FILE)
    if data is None:
        return None
    try:
        record = _loads(data)
    except SerializationError as error:
        raise RecordingError(
            f"conversation {conversation_id!r}: unreadable prompt key record: {error}"
        ) from error
    key = record.get("prompt_key") if isinstance(record, dict) else None
    return key if isinstance(key, str) else None


def _check_prompt_key(
    store: Store, conversation_id: str, prompt_key: str | None
) -> str | None:
    recorded = recorded_prompt_key(store, conversation_id)
    if prompt_key is not None and recorded != prompt_key:
        raise PromptMismatch(conversation_id, recorded, prompt_key)
    return recorded


# Side data beside a conversation -----------------------------------------------


def _side_read(store: Store, conversation_id: str, name: str) -> str | None:
    lines = store.sidecar(conversation_id, name).read_lines()
    return lines[-1] if lines else None


def _side_write(store: Store, conversation_id: str, name: str, line: str) -> None:
    store.sidecar(conversation_id, name).append_line(line)


# Steps -------------------------------------------------------------------------


class _StepClock:
    """Assigns steps: a new step after each assistant turn; results keep theirs.

    An assistant turn is an assistant canister and the invocations recorded right
    after it. Any other canister (a user message, a supervisor, an invocation
    made after results came back, the next assistant canister) arriving in a step
    that already had an assistant turn starts the next step.
    """

    __slots__ = ("answered", "by_invocation", "in_turn", "step")

    def __init__(self) -> None:
        self.step = 0
        self.answered = False
        self.in_turn = False
        self.by_invocation: dict[str, int] = {}

    def assign(self, canister: Canister) -> int:
        role = canister.role
        if role is Role.Result:
            invocation_id = canister.invocation_id  # type: ignore[attr-defined]
            return self.by_invocation.get(invocation_id, self.step)
        if self.answered and not (role is Role.Invocation and self.in_turn):
            return self.step + 1
        return self.step

    def observe(self, canister: Canister) -> None:
        role = canister.role
        if role is Role.Result:
            self.in_turn = False
            return
        step = canister.step
        if step is None:
            step = self.assign(canister)
        if step > self.step:
            self.step = step
            self.answered = False
            self.in_turn = False
        if step == self.step:
            if role is Role.Assistant:
                self.answered = True
                self.in_turn = True
            elif role is not Role.Invocation:
                self.in_turn = False
        if role is Role.Invocation:
            self.by_invocation[canister.invocation_id] = step  # type: ignore[attr-defined]


# Recorder ----------------------------------------------------------------------


class Recorder:
    """Append each canister of one conversation to a store as it is produced.

    ``record`` returns only once the store has made the canister durable. When
    the caller leaves ``step`` unset, the recorder assigns it: a new step starts
    after each assistant turn (the assistant canister and the invocations right
    after it), and a result takes its invocation's step. With ``trace_id``, every
    canister recorded without a trace gets that one.

    The prompt identity (``prompt_key``, any string naming the prompt and its
    version) is recorded beside the conversation before its first canister.
    Opening a recorder on a conversation that already exists continues it; a
    ``prompt_key`` other than the recorded one raises
    :class:`~canisters.PromptMismatch`.

    A recorder is safe to share between threads. One process at a time should
    record a given conversation through a recorder, since each keeps its step
    state in memory.
    """

    def __init__(
        self,
        store: Store,
        conversation_id: str,
        prompt_key: str | None = None,
        *,
        trace_id: str | None = None,
    ) -> None:
        self._store: Store = store
        self._conversation_id = conversation_id
        self._trace_id = trace_id
        self._lock = threading.RLock()
        self._clock = _StepClock()
        self._canisters: list[Canister] = []
        self._claims: set[str] = set()
        # Checked before anything is read or written: a key no document can hold
        # raises here, not at the first record.
        _prompt_key_line(prompt_key)
        self._started = store.exists(conversation_id)
        if self._started:
            recorded = _check_prompt_key(store, conversation_id, prompt_key)
            self._prompt_key = prompt_key if prompt_key is not None else recorded
            for canister in store.load(conversation_id):
                self._observe(canister)
        else:
            self._prompt_key = prompt_key

    @property
    def conversation_id(self) -> str:
        """The id of the recorded conversation."""
        return self._conversation_id

    @property
    def prompt_key(self) -> str | None:
        """The prompt identity the conversation is recorded with."""
        return self._prompt_key

    @property
    def trace_id(self) -> str | None:
        """The trace given to canisters recorded without one, if any."""
        return self._trace_id

    @property
    def conversation(self) -> Conversation:
        """Everything recorded so far, loaded canisters included."""
        with self._lock:
            return Conversation(tuple(self._canisters))

    @property
    def step(self) -> int:
        """The current step."""
        return self._clock.step

    def pending(self) -> tuple[InvocationCanister, ...]:
        """Invocations recorded so far that have no result yet, in order."""
        return self.conversation.pending_invocations()

    def record_error(
        self, error: ErrorReply | ErrorResponse, /, **details: Any
    ) -> FailedCall:
        """Record that the model call made on the conversation so far ended in a
        provider's refusal, and return the record.

        ``error`` is the :class:`~canisters.providers.ErrorReply` (or the
        :class:`~canisters.providers.ErrorResponse` ``parse_response`` or a
        stream raised). It is appended to the conversation's audit log as a
        :data:`PROVIDER_ERROR` entry about the last canister recorded, with the
        reply's fields, the step and ``details`` (JSON-compatible: the model,
        the attempt...); it is durable when this returns. The conversation
        itself is left as it was: a refusal is no message.
        """
        if isinstance(error, ErrorResponse):
            error = error.reply
        if not isinstance(error, ErrorReply):
            raise RecordingError(
                "record_error takes an ErrorReply or an ErrorResponse, got "
                f"{type(error).__name__}"
            )
        with self._lock:
            clock = self._clock
            step = clock.step + 1 if clock.answered else clock.step
            after = self._canisters[-1].id if self._canisters else None
            failed = FailedCall(error, after, step, new_id(), now())
            record = {
                "id": failed.id,
                "timestamp": failed.timestamp.isoformat(),
                "canister_id": after,
                "decision": PROVIDER_ERROR,
                "details": {**details, **failed.as_details()},
            }
            try:
                line = orjson.dumps(record).decode("utf-8")
            except TypeError as problem:
                raise SerializationError(
                    f"provider error details: {problem}", "$.details"
                ) from problem
            self._start()
            _side_write(self._store, self._conversation_id, _AUDIT_FILE, line)
            return failed

    def failures(self) -> tuple[FailedCall, ...]:
        """Every provider refusal recorded for the conversation, oldest first."""
        lines = self._store.sidecar(self._conversation_id, _AUDIT_FILE).read_lines()
        found = []
        for line in lines:
            try:
                record = orjson.loads(line)
            except orjson.JSONDecodeError:  # a torn last line after a crash
                continue
            failed = _failed_call(record)
            if failed is not None:
                found.append(failed)
        return tuple(found)

    @property
    def failed_call(self) -> FailedCall | None:
        """The refusal of the call that comes next, if it was already made: the
        last failure recorded, when no canister was recorded after it."""
        failures = self.failures()
        if not failures:
            return None
        last = failures[-1]
        with self._lock:
            after = self._canisters[-1].id if self._canisters else None
        return last if last.after == after else None

    def _claim(self, invocation_id: str) -> bool:
        """Reserve a pending invocation for one runner; False if taken or answered."""
        with self._lock:
            if invocation_id in self._claims:
                return False
            for canister in reversed(self._canisters):
                if (
                    canister.role is Role.Result
                    and canister.invocation_id == invocation_id  # type: ignore[attr-defined]
                ):
                    return False
            self._claims.add(invocation_id)
            return True

    def _release(self, invocation_id: str) -> None:
        with self._lock:
            self._claims.discard(invocation_id)

    def _observe(self, canister: Canister) -> None:
        self._clock.observe(canister)
        self._canisters.append(canister)

    def _stamp(self, canister: C, clock: _StepClock) -> C:
        if getattr(canister, "role", None) not in _ROLES:
            raise RecordingError(
                f"only canisters can be recorded, got {type(canister).__name__}"
            )
        changes: dict[str, Any] = {}
        if canister.step is None:
            changes["step"] = clock.assign(canister)
        if canister.trace_id is None and self._trace_id is not None:
            changes["trace_id"] = self._trace_id
        if changes and attrs.has(type(canister)):
            return attrs.evolve(canister, **changes)  # type: ignore[misc]
        return canister

    def _start(self) -> None:
        if not self._started:
            # A start that crashed before its first canister may have left a key.
            if self._prompt_key is not None or recorded_prompt_key(
                self._store, self._conversation_id
            ):
                _write_prompt_key(self._store, self._conversation_id, self._prompt_key)
            self._started = True

    def record(self, canister: C) -> C:
        """Append ``canister`` durably and return it as recorded (step assigned)."""
        with self._lock:
            stamped = self._stamp(canister, self._clock)
            self._start()
            self._store.append(self._conversation_id, stamped)
            self._observe(stamped)
            return stamped

    def record_all(self, canisters: Iterable[Canister]) -> tuple[Canister, ...]:
        """Append several canisters in one write and return them as recorded.

        Use it for an assistant turn and its invocations, which arrive together.
        """
        with self._lock:
            clock = _copy_clock(self._clock)
            stamped: list[Canister] = []
            for canister in canisters:
                item = self._stamp(canister, clock)
                clock.observe(item)
                stamped.append(item)
            if not stamped:
                return ()
            self._start()
            self._store.extend(self._conversation_id, stamped)
            self._clock = clock
            self._canisters.extend(stamped)
            return tuple(stamped)


def _copy_clock(clock: _StepClock) -> _StepClock:
    copy = _StepClock()
    copy.step = clock.step
    copy.answered = clock.answered
    copy.in_turn = clock.in_turn
    copy.by_invocation = dict(clock.by_invocation)
    return copy


_ROLES = frozenset(Role)
# Resume ------------------------------------------------------------------------


@attrs.frozen
class Resumption:
    """A recorded conversation reopened by :func:`resume`."""

    conversation: Conversation
    """The conversation as it was loaded."""
    pending: tuple[InvocationCanister, ...]
    """Invocations without a result when it was loaded, in order."""
    recorder: Recorder
    """A recorder that continues the same conversation."""

    @property
    def conversation_id(self) -> str:
        """The id of the resumed conversation."""
        return self.recorder.conversation_id

    @property
    def prompt_key(self) -> str | None:
        """The prompt identity the conversation was recorded with."""
        return self.recorder.prompt_key

    @property
    def failed_call(self) -> FailedCall | None:
        """The provider's refusal of the model call the run would make next,
        when that call was made and failed (see :meth:`Recorder.record_error`)."""
        return self.recorder.failed_call


def resume(
    store: Store, conversation_id: str, prompt_key: str | None = None
) -> Resumption:
    """Reopen a recorded conversation to continue it.

    With a ``prompt_key``, the conversation must have been recorded with the same
    one, or :class:`~canisters.PromptMismatch` is raised (a conversation recorded
    without a key does not match any key); with ``None`` the check is skipped.
    Raises :class:`~canisters.ConversationNotFound` when the store has no such
    conversation and :class:`~canisters.SnapshotRestoreError` when its records
    cannot be read back as canisters.
    """
    if not store.exists(conversation_id):
        raise ConversationNotFound(conversation_id)
    try:
        recorder = Recorder(store, conversation_id, prompt_key)
    except SerializationError as error:
        raise SnapshotRestoreError(
            f"conversation {conversation_id!r} could not be read back: {error}"
        ) from error
    conversation = recorder.conversation
    return Resumption(conversation, conversation.pending_invocations(), recorder)


# Running pending invocations -------------------------------------------------------


def _recorder_of(target: Resumption | Recorder) -> Recorder:
    if isinstance(target, Resumption):
        return target.recorder
    if isinstance(target, Recorder):
        return target
    raise RecordingError(
        f"expected a Resumption or a Recorder, got {type(target).__name__}"
    )


def _check_mode(on_pending: str) -> None:
    if on_pending not in ("run", "interrupt", "abort"):
        raise RecordingError(
            f"on_pending must be 'run', 'interrupt' or 'abort', got {on_pending!r}"
        )


def _takes_key(handler: Handler) -> bool:
    try:
        parameters = inspect.signature(handler).parameters
    except (TypeError, ValueError):
        return False
    parameter = parameters.get("idempotency_key")
    return parameter is not None and parameter.kind in (
        inspect.Parameter.KEYWORD_ONLY,
        inspect.Parameter.POSITIONAL_OR_KEYWORD,
    )


def _is_async(handler: Handler) -> bool:
    return inspect.iscoroutinefunction(handler) or inspect.iscoroutinefunction(
        getattr(handler, "__call__", None)  # noqa: B004
    )


def _call(handler: Handler, invocation: InvocationCanister) -> Any:
    if _takes_key(handler):
        return handler(invocation.arguments, idempotency_key=invocation.invocation_id)
    return handler(invocation.arguments)


def _error_of(error: Exception) -> ErrorInfo:
    if isinstance(error, (TimeoutError, asyncio.TimeoutError)):
        code, retryable = ErrorCode.TIMEOUT.value, True
    elif isinstance(error, ConnectionError):
        code, retryable = ErrorCode.TOOL_ERROR.value, True
    else:
        code, retryable = ErrorCode.TOOL_ERROR.value, False
    own_code = getattr(error, "code", None)
    if isinstance(own_code, str) and own_code:
        code = own_code
    own_retryable = getattr(error, "retryable", None)
    if isinstance(own_retryable, bool):
        retryable = own_retryable
    kind = type(error)
    details: dict[str, Any] = {"exception": f"{kind.__module__}.{kind.__qualname__}"}
    own_details = getattr(error, "details", None)
    if isinstance(own_details, Mapping):
        details.update(own_details)
    return ErrorInfo(code, str(error) or kind.__name__, retryable, details)


def _timed(result: Result, started: float) -> Result:
    latency = round((time.perf_counter() - started) * 1000, 3)
    return attrs.evolve(result, metadata=Metadata(latency_ms=latency))


def _result_of(invocation: InvocationCanister, value: Any, started: float) -> Result:
    builder = ResultBuilder(invocation)
    if isinstance(value, ErrorInfo):
        result = builder.error(
            value.code, value.message, value.retryable, details=value.details
        )
    elif getattr(value, "role", None) is Role.Result:
        if value.invocation_id != invocation.invocation_id:
            return _timed(
                builder.error(
                    ErrorCode.TOOL_ERROR,
                    f"the handler returned a result for invocation "
                    f"{value.invocation_id!r}",
                ),
                started,
            )
        return value  # type: ignore[no-any-return]
    else:
        try:
            result = builder.success(value)
        except CanistersError as error:
            result = builder.error(ErrorCode.TOOL_ERROR, str(error))
    return _timed(result, started)


def _failure_of(
    invocation: InvocationCanister, error: Exception, started: float
) -> Result:
    info = _error_of(error)
    result = ResultBuilder(invocation).error(
        info.code, info.message, info.retryable, details=info.details
    )
    return _timed(result, started)


def _missing(invocation: InvocationCanister) -> Result:
    return ResultBuilder(invocation).error(
        ErrorCode.NOT_FOUND, f"no handler for {invocation.name!r}"
    )


def _interrupted(invocation: InvocationCanister) -> Result:
    return ResultBuilder(invocation).error(
        ErrorCode.INTERRUPTED,
        "the run stopped before this invocation completed; it was not run again",
        retryable=True,
    )


def _abort(recorder: Recorder, pending: Sequence[InvocationCanister]) -> None:
    names = ", ".join(f"{p.name} ({p.invocation_id})" for p in pending)
    raise PendingInvocations(
        f"conversation {recorder.conversation_id!r} has {len(pending)} pending "
        f"invocation(s): {names}"
    )


def _in_event_loop() -> bool:
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return False
    return True


def run_pending(
    resumption: Resumption | Recorder,
    handlers: Mapping[str, Handler],
    *,
    on_pending: OnPending = "run",
) -> tuple[Result, ...]:
    """Answer every pending invocation, record each result, and return them in order.

    Only invocations without a result run, one after another, each through
    ``handlers[invocation.name]``; each result is recorded as soon as it exists.
    A missing handler gives a ``NOT_FOUND`` error result, an exception an error
    result (see the module documentation). ``on_pending="interrupt"`` answers
    them with an ``INTERRUPTED`` error result instead of running them, and
    ``on_pending="abort"`` raises :class:`~canisters.PendingInvocations` when
    there are any. Async handlers are run to completion with :func:`asyncio.run`;
    inside an event loop use :func:`arun_pending`.
    """
    _check_mode(on_pending)
    recorder = _recorder_of(resumption)
    pending = recorder.pending()
    if on_pending == "abort":
        if pending:
            _abort(recorder, pending)
        return ()
    if (
        on_pending == "run"
        and _in_event_loop()
        and any(_is_async(handlers[p.name]) for p in pending if p.name in handlers)
    ):
        raise RecordingError(
            "run_pending was called inside an event loop with async handlers; "
            "await arun_pending instead"
        )
    results: list[Result] = []
    for invocation in pending:
        if not recorder._claim(invocation.invocation_id):
            continue
        try:
            result = _answer_sync(invocation, handlers, on_pending)
            results.append(recorder.record(result))
        finally:
            recorder._release(invocation.invocation_id)
    return tuple(results)


def _answer_sync(
    invocation: InvocationCanister, handlers: Mapping[str, Handler], mode: str
) -> Result:
    if mode == "interrupt":
        return _interrupted(invocation)
    handler = handlers.get(invocation.name)
    if handler is None:
        return _missing(invocation)
    started = time.perf_counter()
    try:
        value = _call(handler, invocation)
        if inspect.isawaitable(value):
            value = asyncio.run(_awaited(value))
    except Exception as error:
        return _failure_of(invocation, error, started)
    return _result_of(invocation, value, started)


async def _awaited(value: Awaitable[Any]) -> Any:
    return await value


async def _answer_async(
    invocation: InvocationCanister, handlers: Mapping[str, Handler], mode: str
) -> Result:
    if mode == "interrupt":
        return _interrupted(invocation)
    handler = handlers.get(invocation.name)
    if handler is None:
        return _missing(invocation)
    started = time.perf_counter()
    try:
        if _is_async(handler):
            value = await _call(handler, invocation)
        else:
            value = await asyncio.to_thread(_call, handler, invocation)
            if inspect.isawaitable(value):
                value = await value
    except Exception as error:
        return _failure_of(invocation, error, started)
    return _result_of(invocation, value, started)


async def arun_pending(
    resumption: Resumption | Recorder,
    handlers: Mapping[str, Handler],
    *,
    on_pending: OnPending = "run",
    concurrency: int | None = None,
) -> tuple[Result, ...]:
    """Answer every pending invocation from async code; see :func:`run_pending`.

    Handlers may be coroutine functions or plain functions (these run in a worker
    thread). Up to ``concurrency`` invocations run at once (all of them with
    ``None``); each result is recorded as soon as its handler finishes, so the
    recorded order is the order of completion. The returned results are in
    invocation order. Cancelling the call leaves unfinished invocations pending.
    """
    _check_mode(on_pending)
    if concurrency is not None and concurrency < 1:
        raise RecordingError(f"concurrency must be at least 1, got {concurrency!r}")
    recorder = _recorder_of(resumption)
    pending = recorder.pending()
    if on_pending == "abort":
        if pending:
            _abort(recorder, pending)
        return ()
    limit = asyncio.Semaphore(concurrency or max(len(pending), 1))

    async def answer(invocation: InvocationCanister) -> Result | None:
        if not recorder._claim(invocation.invocation_id):
            return None
        try:
            async with limit:
                result = await _answer_async(invocation, handlers, on_pending)
            return await asyncio.to_thread(recorder.record, result)
        finally:
            recorder._release(invocation.invocation_id)

    tasks = [asyncio.ensure_future(answer(invocation)) for invocation in pending]
    try:
        answered = await asyncio.gather(*tasks)
    except BaseException:
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        raise
    return tuple(result for result in answered if result is not None)


# Snapshots ---------------------------------------------------------------------


def _content_ids(conversation: Iterable[Canister]) -> list[str]:
    seen: dict[str, None] = {}
    for canister in conversation:
        for part in getattr(canister, "content", ()):
            content_id = getattr(part, "content_id", None)
            if isinstance(content_id, str):
                seen.setdefault(content_id, None)
    return list(seen)


def snapshot(store: Store, conversation_id: str) -> str:
    """Return one JSON document holding a conversation and the blobs it refers to.

    The document also carries the conversation id and its recorded prompt key;
    :func:`restore` reads it back into any store.
    """
    if not store.exists(conversation_id):
        raise ConversationNotFound(conversation_id)
    conversation = store.load(conversation_id)
    # The document is handed to _dumps, which releases it before its bytes
    # become text, so no local keeps it (or the base64 in it) alive.
    return _dumps(_snapshot(store, conversation_id, conversation), _SNAPSHOT_DEPTH)


def _snapshot(
    store: Store, conversation_id: str, conversation: Conversation
) -> dict[str, Any]:
    """The document :func:`snapshot` writes. The conversation's document is the
    records :func:`~canisters.to_json` writes, not its text read back: written
    once, as the rest, with its media's base64 as orjson fragments."""
    return {
        "format": SNAPSHOT_FORMAT,
        "version": SNAPSHOT_VERSION,
        "conversation_id": conversation_id,
        "prompt_key": recorded_prompt_key(store, conversation_id),
        # Written as documents are (NaN, lone surrogates and integers beyond
        # 64 bits kept exactly), not by orjson alone: _dumps does.
        "conversation": _document(conversation),
        "content": {
            content_id: _base64.encode(store.content.get(content_id))
            for content_id in _content_ids(conversation)
        },
        "side_files": {
            name: lines
            for name in CARRIED_SIDE_FILES
            if (lines := store.sidecar(conversation_id, name).read_lines())
        },
    }


# A snapshot holds the conversation document one level below its root (see
# serialization.MAX_DEPTH).
_SNAPSHOT_DEPTH: Final = MAX_DEPTH + 1


def _restore_error(message: str) -> SnapshotRestoreError:
    return SnapshotRestoreError(f"cannot restore snapshot: {message}")


@attrs.frozen
class _Snapshot:
    conversation_id: str
    prompt_key_line: str | None
    conversation: Conversation
    blobs: dict[str, bytes]
    side_files: dict[str, list[str]]


def _blobs(content: object, conversation: Conversation) -> dict[str, bytes]:
    if not isinstance(content, dict):
        raise _restore_error("$.content must be an object")
    blobs: dict[str, bytes] = {}
    for content_id, encoded in content.items():
        where = f"$.content[{content_id!r}]"
        try:
            data = base64.b64decode(encoded, validate=True)
        except (binascii.Error, TypeError, ValueError) as error:
            raise _restore_error(f"{where}: {error}") from error
        if f"sha256:{hashlib.sha256(data).hexdigest()}" != content_id:
            raise _restore_error(f"{where}: the bytes do not match their id")
        blobs[content_id] = data
    missing = [c for c in _content_ids(conversation) if c not in blobs]
    if missing:
        raise _restore_error(f"blobs missing from $.content: {', '.join(missing)}")
    return blobs


def _side_files(value: object) -> dict[str, list[str]]:
    if not isinstance(value, dict) or not all(
        isinstance(name, str)
        and isinstance(lines, list)
        and all(isinstance(line, str) for line in lines)
        for name, lines in value.items()
    ):
        raise _restore_error("$.side_files must map names to lists of lines")
    for name, lines in value.items():
        _checked(check_id, name, "side-file name", where=f"$.side_files[{name!r}]")
        for number, line in enumerate(lines):
            _checked(check_line, line, where=f"$.side_files[{name!r}][{number}]")
    return value


def _checked(check: Callable[..., object], *args: object, where: str) -> None:
    """Run a store's check on a value of the snapshot, as a restore error."""
    try:
        check(*args)
    except (StorageError, ModelError) as error:
        raise _restore_error(f"{where}: {error}") from None


def _read_snapshot(text: str | bytes) -> _Snapshot:
    try:
        document = _loads(text, limit=_SNAPSHOT_DEPTH)
    except SerializationError as error:
        raise _restore_error(error.reason) from error
    if not isinstance(document, dict) or document.get("format") != SNAPSHOT_FORMAT:
        raise _restore_error(f"not a {SNAPSHOT_FORMAT} document")
    if document.get("version") != SNAPSHOT_VERSION:
        raise _restore_error(f"unsupported version {document.get('version')!r}")
    conversation_id = document.get("conversation_id")
    prompt_key = document.get("prompt_key")
    if not isinstance(conversation_id, str) or not conversation_id:
        raise _restore_error("$.conversation_id must be a non-empty string")
    _checked(check_id, conversation_id, where="$.conversation_id")
    if prompt_key is not None and not isinstance(prompt_key, str):
        raise _restore_error("$.prompt_key must be a string or null")
    prompt_key_line = None
    if prompt_key is not None:
        try:
            prompt_key_line = check_line(_prompt_key_line(prompt_key))
        except (SerializationError, ModelError) as error:
            raise _restore_error(f"$.prompt_key: {error}") from None
    try:
        conversation = from_json(_dumps(document.get("conversation")))
    except SerializationError as error:
        raise _restore_error(f"$.conversation: {error}") from error
    if not isinstance(conversation, Conversation) or not conversation:
        raise _restore_error("$.conversation must be a non-empty conversation")
    return _Snapshot(
        conversation_id,
        prompt_key_line,
        conversation,
        _blobs(document.get("content", {}), conversation),
        _side_files(document.get("side_files", {})),
    )


def restore(
    store: Store, text: str | bytes, *, conversation_id: str | None = None
) -> str:
    """Write a :func:`snapshot` document into ``store`` and return the new id.

    The conversation keeps the id it had when ``conversation_id`` is not given
    and that id is free in ``store``; otherwise it gets a new id. Asking for a
    ``conversation_id`` that already exists, or giving a document that is not a
    readable snapshot (bad JSON, bad canisters, blobs that do not match their
    ids, a side-file line holding a lone surrogate, which a store cannot write
    as UTF-8 text), raises :class:`~canisters.SnapshotRestoreError` before
    anything is written. A lone surrogate in the conversation or the prompt key
    is kept exactly, as documents keep it. The blobs go in first and the
    canisters last, so a restore cut short leaves no conversation behind.
    """
    read = _read_snapshot(text)
    if conversation_id is not None:
        _checked(check_id, conversation_id, where="conversation_id")
    if conversation_id is None:
        free = not store.exists(read.conversation_id)
        target = read.conversation_id if free else new_id()
    elif store.exists(conversation_id):
        raise _restore_error(f"conversation {conversation_id!r} already exists")
    else:
        target = conversation_id
    for data in read.blobs.values():
        store.content.put(data)
    if read.prompt_key_line is not None:
        _side_write(store, target, PROMPT_KEY_FILE, read.prompt_key_line)
    for name, lines in read.side_files.items():
        sidecar = store.sidecar(target, name)
        for line in lines:
            sidecar.append_line(line)
    store.extend(target, read.conversation)
    return target
