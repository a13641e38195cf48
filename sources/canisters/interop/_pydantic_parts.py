"""pydantic-ai's parts the interop module shares with its readers and writers:
the key of its extras, the rest of a part, and the provider's own parts
(built-in tool calls and returns, compaction) as typed canisters parts."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from .._frozen import thawed as _thawed
from ..protocols import Canister, Content
from ..provided import Compaction, ProviderToolCall, ProviderToolResult
from ..providers.kit import mine

__all__ = [
    "NAME",
    "PROVIDED_KINDS",
    "extras_of",
    "read_provided",
    "rest_of",
    "write_provided",
]

NAME = "pydantic-ai"
"""The key of ``extras`` this module keeps pydantic-ai's own fields under."""

# Values pydantic-ai fills in by default: left out of extras, restored by pydantic.
_DEFAULTS: Mapping[str, Any] = {
    "force_download": False,
    "scope": "conversation",
    "state": "complete",
    "outcome": "success",
    "details": {},
    "audio_seconds": 0.0,
}


def rest_of(source: Mapping[str, Any], known: Iterable[str]) -> dict[str, Any]:
    skip = set(known)
    return {
        key: value
        for key, value in source.items()
        if key not in skip
        and key != "content_file_digests"  # bookkeeping pydantic-ai recomputes
        and value is not None
        and _DEFAULTS.get(key, ...) != value
        and not (value == 0 and key.endswith("_tokens"))
    }


def extras_of(rest: Mapping[str, Any]) -> dict[str, Any]:
    return {NAME: dict(rest)} if rest else {}


PROVIDED_KINDS = frozenset(("builtin-tool-call", "builtin-tool-return", "compaction"))


def read_provided(part: Mapping[str, Any]) -> Content:
    """A built-in tool call, its return, or a compaction: the provider's own
    parts, typed; what has no neutral field rides in extras."""
    kind = part["part_kind"]
    provider = part.get("provider_name")
    if kind == "compaction":
        content = part.get("content")
        rest = rest_of(part, ("content", "id", "provider_name", "part_kind"))
        if content is None:
            rest["content"] = None
        return Compaction(
            content or "", provider=provider, id=part.get("id"), extras=extras_of(rest)
        )
    if kind == "builtin-tool-call":
        args = part.get("args")
        rest = rest_of(
            part, ("tool_name", "args", "tool_call_id", "id", "provider_name")
        )
        if not isinstance(args, Mapping):
            rest["args"] = args  # a string as the model sent it, or null
        return ProviderToolCall(
            part["tool_name"],
            args if isinstance(args, Mapping) else {},
            call_id=part.get("tool_call_id"),
            provider=provider,
            id=part.get("id"),
            extras=extras_of(rest),
        )
    rest = rest_of(part, ("tool_name", "content", "tool_call_id", "provider_name"))
    return ProviderToolResult(
        part["tool_name"],
        call_id=part.get("tool_call_id"),
        provider=provider,
        output=part.get("content"),
        extras=extras_of(rest),
    )


def write_provided(part: Content, canister: Canister) -> dict[str, Any]:
    """A provider's own part as pydantic-ai's built-in tool call or return, or
    its compaction (what it has no field for is reported, not kept)."""
    own = dict(mine(part, NAME))
    value: Any = part
    out: dict[str, Any]
    if isinstance(part, Compaction):
        out = {"part_kind": "compaction", "content": part.summary, **own}
        if part.id is not None:
            out["id"] = part.id
    elif isinstance(part, ProviderToolCall):
        out = {"part_kind": "builtin-tool-call", "tool_name": part.name}
        out["args"] = dict(part.input)
        out["tool_call_id"] = part.call_id or ""
        if part.id is not None:
            out["id"] = part.id
        out.update(own)
    else:
        out = {"part_kind": "builtin-tool-return", "tool_name": value.name}
        out["content"] = _thawed(value.output)
        out["tool_call_id"] = value.call_id or ""
        out["timestamp"] = canister.timestamp.isoformat()
        out.update(own)
    if value.provider is not None:
        out["provider_name"] = value.provider
    return out
