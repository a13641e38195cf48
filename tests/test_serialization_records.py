"""The generated unstructure hooks write what the general envelope writes.

Built-in canisters without lineage, trace, policy or extras get their envelope
written as one dict display; every other key by key. Both ways must give the
same keys, in the same order, with the same values as the envelope written
field by field below, so the bytes written do not depend on which way a
canister took.
"""

from __future__ import annotations

from datetime import datetime, timedelta, timezone
from typing import Any

import pytest

import canisters
from canisters import serialization
from canisters.serialization import _content_out, _error_out, _metadata_out

MOMENTS = [
    datetime(2025, 3, 1, 9, 0, 0, 123456, tzinfo=timezone.utc),
    datetime(2025, 3, 1, 9, 0, tzinfo=timezone(timedelta(hours=2))),
]
METADATA = [
    None,
    canisters.Metadata(),
    canisters.Metadata(model="gpt-4o"),
    canisters.Metadata(model="m", finish_reason="stop"),
    canisters.Metadata(latency_ms=1.5, custom={"k": [1]}),
    canisters.Metadata(usage=canisters.Usage(3, 4), retries=0, cache_hit=False),
]
ENVELOPES: list[dict[str, Any]] = [
    {},
    {"step": 0},
    {"step": 7, "parent_id": "p"},
    {"trace_id": "t", "policy": "runtime"},
    {"extras": {"anthropic": {"cache_control": {"type": "ephemeral"}}}},
]


def _envelope_out(canister: Any, tag: str) -> dict[str, Any]:
    """The envelope, field by field, in the format's key order."""
    moment = canister.timestamp
    record: dict[str, Any] = {
        "role": tag,
        "id": canister.id,
        "timestamp": moment if moment.tzinfo is timezone.utc else moment.isoformat(),
    }
    if canister.parent_id is not None:
        record["parent_id"] = canister.parent_id
    if canister.trace_id is not None:
        record["trace_id"] = canister.trace_id
    if canister.policy is not None:
        record["policy"] = canister.policy
    if canister.step is not None:
        record["step"] = canister.step
    if canister.metadata is not None:
        record["metadata"] = _metadata_out(canister.metadata)
    if canister.extras:
        record["extras"] = canister.extras
    return record


def _expected(canister: Any) -> dict[str, Any]:
    """The record the general functions build, field by field."""
    record = _envelope_out(canister, canister.role.value)
    if isinstance(canister, (canisters.Invocation, canisters.Result)):
        record["invocation_id"] = canister.invocation_id
        record["name"] = canister.name
    if isinstance(canister, canisters.Invocation):
        record["arguments"] = canister.arguments
    else:
        record["content"] = _content_out(canister.content)
    if isinstance(canister, canisters.Result) and canister.error is not None:
        record["error"] = _error_out(canister.error)
    if isinstance(canister, canisters.Document):
        for key in ("title", "document_id"):
            if getattr(canister, key) is not None:
                record[key] = getattr(canister, key)
    return record


def _canisters(envelope: dict[str, Any]) -> list[Any]:
    return [
        canisters.User("hi", **envelope),
        canisters.User(
            (canisters.Text("a", mime_type="text/markdown"), canisters.Text("b")),
            **envelope,
        ),
        canisters.Assistant((), **envelope),
        canisters.Supervisor("be brief", **envelope),
        canisters.Document("notes", **envelope),
        canisters.Document("notes", "Title", "d1", **envelope),
        canisters.Invocation("f", {"x": 1}, invocation_id="c1", **envelope),
        canisters.Result("c1", "f", "ok", **envelope),
        canisters.Result(
            "c1",
            "f",
            (),
            error=canisters.ErrorInfo("TOOL_ERROR", "boom", details={"n": 1}),
            **envelope,
        ),
    ]


@pytest.mark.parametrize("moment", MOMENTS)
@pytest.mark.parametrize("metadata", METADATA)
@pytest.mark.parametrize("envelope", ENVELOPES)
def test_generated_hooks_match_the_general_envelope(
    moment: datetime, metadata: Any, envelope: dict[str, Any]
) -> None:
    for canister in _canisters({**envelope, "timestamp": moment, "metadata": metadata}):
        record = serialization._record(canister)
        expected = _expected(canister)
        assert list(record.items()) == list(expected.items())
        assert canisters.from_json(canisters.to_json(canister)) == canister
