"""Record an agent run, kill it in the middle of a tool call, and resume it.

Run it with ``python documentation/examples/resume.py``. The first run happens in
a child process that records every canister as it is produced and is killed
(SIGKILL) while its second tool call runs. This process then resumes the
conversation: the finished tool call is not run again, the interrupted one is,
and the run completes. Everything lives in a temporary directory.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import tempfile
from collections.abc import Mapping
from typing import Any

from canisters import Assistant, Invocation, Metadata, Supervisor, Usage, User
from canisters.audit import AuditLog, log_view
from canisters.recording import (
    Recorder,
    new_trace,
    resume,
    run_pending,
    trace_summary,
)
from canisters.storage import open_store
from canisters.validation import validate

PROMPT_KEY = "travel-agent/v1"
FORECASTS = {"Paris": "light rain", "Rome": "sunny"}


def weather(arguments: Mapping[str, Any], *, idempotency_key: str) -> Any:
    """Look up a forecast; ``idempotency_key`` is the invocation id."""
    return {"city": arguments["city"], "forecast": FORECASTS[arguments["city"]]}


def weather_then_crash(arguments: Mapping[str, Any], *, idempotency_key: str) -> Any:
    """The first run's handler: the process dies during the Rome lookup."""
    if arguments["city"] == "Rome":
        print("first run: killed while looking up Rome", flush=True)
        if hasattr(signal, "SIGKILL"):
            os.kill(os.getpid(), signal.SIGKILL)
        os._exit(137)
    return weather(arguments, idempotency_key=idempotency_key)


def first_run(location: str) -> None:
    """Record until the crash: instructions, a question, a turn with two calls."""
    with open_store(location) as store:
        recorder = Recorder(store, "trip", prompt_key=PROMPT_KEY, trace_id=new_trace())
        audit = AuditLog(store, "trip")
        recorder.record(Supervisor("You are a travel assistant. Use the tools."))
        recorder.record(User("What is the weather in Paris and in Rome?"))
        usage = Usage(input_tokens=120, output_tokens=30)
        recorder.record_all(
            [
                Assistant(
                    "Let me check both cities.",
                    policy="planner",
                    metadata=Metadata(model="some-model", latency_ms=850, usage=usage),
                ),
                Invocation("weather", {"city": "Paris"}, policy="planner"),
                Invocation("weather", {"city": "Rome"}, policy="planner"),
            ]
        )
        for invocation in recorder.pending():
            audit.record(invocation, "tool_call_approved", rule="read-only tool")
        run_pending(recorder, {"weather": weather_then_crash})


def second_run(location: str) -> None:
    """Resume: run only what is pending, finish the turn, show what was kept."""
    with open_store(location) as store:
        resumption = resume(store, "trip", prompt_key=PROMPT_KEY)
        print(f"resumed with {len(resumption.conversation)} canisters recorded")
        for invocation in resumption.pending:
            print(f"  pending: {invocation.name}({dict(invocation.arguments)})")

        results = run_pending(resumption, {"weather": weather})
        print(f"ran {len(results)} pending invocation(s)")

        recorder = resumption.recorder
        recorder.record(
            Assistant(
                "Light rain in Paris, sunny in Rome.",
                policy="planner",
                metadata=Metadata(
                    model="some-model",
                    latency_ms=640,
                    usage=Usage(input_tokens=190, output_tokens=12),
                ),
            )
        )
        conversation = store.load("trip")
        validate(conversation)
        assert conversation.pending_invocations() == ()

        print("\nthe conversation:")
        for canister in conversation:
            view = log_view(canister, text_limit=60)
            shown = view.get("text") or view.get("arguments") or ""
            print(f"  step {view['step']}  {view['role']:<10} {shown}")

        print("\nthe audit log:")
        for entry in AuditLog(store, "trip").entries():
            print(f"  {entry.decision} {entry.canister_id} {dict(entry.details)}")

        totals = trace_summary(conversation).total
        print(
            f"\n{totals.model_calls} model calls, {totals.tokens} tokens, "
            f"{totals.latency_ms:.0f} ms of model latency"
        )


def main() -> None:
    """Run the first run in a child process, then resume here."""
    if sys.argv[1:2] == ["--first-run"]:
        first_run(sys.argv[2])
        return
    with tempfile.TemporaryDirectory() as directory:
        location = os.path.join(directory, "store")
        child = subprocess.run([sys.executable, __file__, "--first-run", location])
        print(f"first run ended with exit code {child.returncode}\n")
        second_run(location)


if __name__ == "__main__":
    main()
