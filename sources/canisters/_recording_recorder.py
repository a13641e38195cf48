"""The :class:`~canisters.recording.Recorder`, its step clock and prompt
identity, and :func:`~canisters.recording.resume` (part of
:mod:`canisters.recording`)."""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterable
from datetime import datetime
from typing import Any, Final, Literal, TypeVar

import attrs
import orjson

from ._compat import fromisoformat
from .canisters import new_id, now
from .conversation import Conversation
from .exceptions import (
    CanistersError,
    ConversationNotFound,
    ModelError,
    PromptMismatch,
    RecordingError,
    SerializationError,
    SnapshotRestoreError,
)
from .protocols import Canister, InvocationCanister, Role
from .providers import ErrorReply, ErrorResponse
from .serialization import _dumps, _loads
from .storage import Store

C = TypeVar("C", bound=Canister)

# The public constants and aliases, documented where canisters.recording
# binds them again.
Handler = Callable[..., Any]
OnPending = Literal["run", "interrupt", "abort"]
SNAPSHOT_FORMAT: Final = "canisters.snapshot"
SNAPSHOT_VERSION: Final = 1
PROMPT_KEY_FILE: Final = "prompt-key"
CARRIED_SIDE_FILES: Final = ("audit",)
_AUDIT_FILE: Final = CARRIED_SIDE_FILES[0]  # canisters.audit.AUDIT_FILE
PROVIDER_ERROR: Final = "provider_error"


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
