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

from typing import Final

from . import _recording_recorder as _recorder
from ._recording_pending import arun_pending, run_pending
from ._recording_recorder import (
    FailedCall,
    Recorder,
    Resumption,
    recorded_prompt_key,
    resume,
)
from ._recording_recorder import _write_prompt_key as _write_prompt_key
from ._recording_snapshots import restore, snapshot
from .lineage import (
    TraceSummary,
    TraceTotals,
    lineage,
    new_trace,
    trace,
    trace_summary,
    with_trace,
)

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

Handler = _recorder.Handler
"""A tool handler: ``handler(arguments)`` or ``handler(arguments, *,
idempotency_key)``, sync or async."""

OnPending = _recorder.OnPending
"""What :func:`run_pending` does with pending invocations: run them, answer them
with an ``INTERRUPTED`` error result without running them, or raise
:class:`~canisters.PendingInvocations`."""

SNAPSHOT_FORMAT: Final = _recorder.SNAPSHOT_FORMAT
"""The ``format`` of a :func:`snapshot` document."""
SNAPSHOT_VERSION: Final = _recorder.SNAPSHOT_VERSION
"""The ``version`` of the :func:`snapshot` documents this module writes."""
PROMPT_KEY_FILE: Final = _recorder.PROMPT_KEY_FILE
"""The side file beside a conversation that holds its prompt key."""
CARRIED_SIDE_FILES: Final = _recorder.CARRIED_SIDE_FILES
"""Side files a snapshot carries along (the log of :mod:`canisters.audit`)."""
PROVIDER_ERROR: Final = _recorder.PROVIDER_ERROR
"""The audit decision under which :meth:`Recorder.record_error` records a
provider's refusal of a call."""
