"""Recording and audit as a downstream application types them (``mypy --strict``).

Never run by pytest; it pins the types of :mod:`canisters.recording` and
:mod:`canisters.audit` with ``assert_type``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from typing_extensions import assert_type

from canisters import Assistant, Conversation, Invocation, Result, User
from canisters.audit import AuditEntry, AuditLog, log_view
from canisters.protocols import Canister, InvocationCanister
from canisters.recording import (
    Recorder,
    Resumption,
    TraceSummary,
    arun_pending,
    lineage,
    new_trace,
    restore,
    resume,
    run_pending,
    snapshot,
    trace_summary,
    with_trace,
)
from canisters.storage import open_store


def weather(arguments: Mapping[str, Any], *, idempotency_key: str) -> str:
    return f"sunny ({idempotency_key})"


async def main() -> None:
    store = open_store("runs")
    recorder = Recorder(store, "trip", prompt_key="agent/v1", trace_id=new_trace())
    assert_type(recorder.record(User("hi")), User)
    assert_type(recorder.record(Invocation("weather")), Invocation)
    assert_type(recorder.record_all([Assistant("a")]), tuple[Canister, ...])
    assert_type(recorder.conversation, Conversation)
    assert_type(recorder.pending(), tuple[InvocationCanister, ...])

    resumption = resume(store, "trip", "agent/v1")
    assert_type(resumption, Resumption)
    assert_type(resumption.pending, tuple[InvocationCanister, ...])
    assert_type(run_pending(resumption, {"weather": weather}), tuple[Result, ...])
    assert_type(
        run_pending(recorder, {"weather": weather}, on_pending="interrupt"),
        tuple[Result, ...],
    )
    assert_type(
        await arun_pending(resumption, {"weather": weather}, concurrency=2),
        tuple[Result, ...],
    )

    text = snapshot(store, "trip")
    assert_type(restore(store, text, conversation_id="copy"), str)
    assert_type(with_trace(User("x")), User)
    assert_type(lineage(recorder.conversation, "id"), Conversation)
    summary = trace_summary(recorder.conversation)
    assert_type(summary, TraceSummary)
    assert_type(summary.total.tokens, int)

    log = AuditLog(store, "trip")
    assert_type(log.record(User("x"), "approved", by="policy"), AuditEntry)
    assert_type(
        AuditLog("audit.jsonl").entries(decision="approved"), tuple[AuditEntry, ...]
    )
    assert_type(log_view(User("x")), dict[str, Any])
