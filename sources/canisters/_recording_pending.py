"""Answering pending invocations: :func:`~canisters.recording.run_pending` and
:func:`~canisters.recording.arun_pending` (part of :mod:`canisters.recording`)."""

from __future__ import annotations

import asyncio
import inspect
import time
from collections.abc import Awaitable, Mapping, Sequence
from typing import Any

import attrs

from ._recording_recorder import Handler, OnPending, Recorder, Resumption
from .builders import ResultBuilder
from .canisters import ErrorCode, ErrorInfo, Metadata, Result
from .exceptions import (
    CanistersError,
    PendingInvocations,
    RecordingError,
)
from .protocols import InvocationCanister, Role

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


def _handler(
    invocation: InvocationCanister, handlers: Mapping[str, Handler], mode: str
) -> tuple[Any, Result | None]:
    """The handler to run for ``invocation`` and ``None``, or ``None`` and the
    result it gets without one: interrupted under ``mode`` ``"interrupt"``,
    else missing when no handler has its name."""
    if mode == "interrupt":
        return None, _interrupted(invocation)
    handler = handlers.get(invocation.name)
    if handler is None:
        return None, _missing(invocation)
    return handler, None


def _answer_sync(
    invocation: InvocationCanister, handlers: Mapping[str, Handler], mode: str
) -> Result:
    handler, settled = _handler(invocation, handlers, mode)
    if settled is not None:
        return settled
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
    handler, settled = _handler(invocation, handlers, mode)
    if settled is not None:
        return settled
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
