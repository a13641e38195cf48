"""The same work done by canisters, pydantic-ai, LangChain and plain dicts.

Each ``*_from_specs`` function builds one library's objects for one conversation
from the neutral specs of :mod:`corpus`, the way an application would with that
library's constructors. The hand-written provider mappings at the end work on
plain dicts shaped like canisters' own records and give the same output as
canisters' normalizers on the corpus (the runner checks that they do).
"""

from __future__ import annotations

import base64
import json
import os
from datetime import datetime, timezone
from typing import Any

import orjson
from corpus import Spec

import canisters

__all__ = [
    "anthropic_from_records",
    "canisters_from_specs",
    "langchain_from_specs",
    "openai_from_records",
    "parse_openai_records",
    "pydantic_ai_from_specs",
    "records_from_specs",
]


# --------------------------------------------------------------------------- #
# Builders


def canisters_from_specs(specs: list[Spec]) -> canisters.Conversation:
    """Build a :class:`canisters.Conversation`."""
    out: list[Any] = []
    for spec in specs:
        kind = spec["kind"]
        if kind == "system":
            out.append(
                canisters.Supervisor(
                    spec["text"], id=spec["id"], timestamp=spec["time"]
                )
            )
        elif kind == "user":
            parts: list[Any] = []
            for part in spec["parts"]:
                if "text" in part:
                    parts.append(canisters.Text(part["text"]))
                elif "image" in part:
                    parts.append(
                        canisters.Image(data=part["image"], mime_type=part["mime"])
                    )
                else:
                    parts.append(canisters.Image(url=part["image_url"]))
            out.append(canisters.User(parts, id=spec["id"], timestamp=spec["time"]))
        elif kind == "assistant":
            out.append(
                canisters.Assistant(
                    spec["text"],
                    id=spec["id"],
                    timestamp=spec["time"],
                    step=spec["step"],
                    metadata=canisters.Metadata(
                        model=spec["model"],
                        usage=canisters.Usage(*spec["usage"]),
                        finish_reason=spec["finish"],
                    ),
                )
            )
        elif kind == "call":
            out.append(
                canisters.Invocation(
                    spec["name"],
                    spec["arguments"],
                    invocation_id=spec["call_id"],
                    id=spec["id"],
                    timestamp=spec["time"],
                    step=spec["step"],
                )
            )
        else:
            out.append(
                canisters.Result(
                    spec["call_id"],
                    spec["name"],
                    spec["text"],
                    id=spec["id"],
                    timestamp=spec["time"],
                    step=spec["step"],
                )
            )
    return canisters.Conversation(out)


def pydantic_ai_from_specs(specs: list[Spec]) -> list[Any]:
    """Build pydantic-ai ``ModelRequest`` / ``ModelResponse`` messages."""
    from pydantic_ai import messages as m
    from pydantic_ai.usage import RequestUsage

    out: list[Any] = []
    request: list[Any] = []
    response: list[Any] = []
    model = None
    stamp = None
    usage, finish = RequestUsage(), None

    def flush_request() -> None:
        if request:
            out.append(m.ModelRequest(parts=list(request)))
            request.clear()

    def flush_response() -> None:
        nonlocal usage, finish
        if response:
            out.append(
                m.ModelResponse(
                    parts=list(response),
                    model_name=model,
                    timestamp=stamp,
                    usage=usage,
                    finish_reason=finish,
                )
            )
            response.clear()
            usage, finish = RequestUsage(), None

    for spec in specs:
        kind = spec["kind"]
        if kind in ("assistant", "call"):
            flush_request()
            stamp = spec["time"]
            if kind == "assistant":
                model = spec["model"]
                tokens_in, tokens_out = spec["usage"]
                usage = RequestUsage(input_tokens=tokens_in, output_tokens=tokens_out)
                finish = spec["finish"]
                response.append(m.TextPart(content=spec["text"]))
            else:
                response.append(
                    m.ToolCallPart(
                        tool_name=spec["name"],
                        args=spec["arguments"],
                        tool_call_id=spec["call_id"],
                    )
                )
            continue
        flush_response()
        if kind == "system":
            request.append(
                m.SystemPromptPart(content=spec["text"], timestamp=spec["time"])
            )
        elif kind == "user":
            content: list[Any] = []
            for part in spec["parts"]:
                if "text" in part:
                    content.append(part["text"])
                elif "image" in part:
                    content.append(
                        m.BinaryContent(data=part["image"], media_type=part["mime"])
                    )
                else:
                    content.append(m.ImageUrl(url=part["image_url"]))
            request.append(
                m.UserPromptPart(
                    content=content[0] if len(content) == 1 else content,
                    timestamp=spec["time"],
                )
            )
        else:
            request.append(
                m.ToolReturnPart(
                    tool_name=spec["name"],
                    content=spec["text"],
                    tool_call_id=spec["call_id"],
                    timestamp=spec["time"],
                )
            )
    flush_request()
    flush_response()
    return out


def langchain_from_specs(specs: list[Spec]) -> list[Any]:
    """Build LangChain messages; tool calls fold into the ``AIMessage`` before them."""
    from langchain_core import messages as m

    out: list[Any] = []
    for spec in specs:
        kind = spec["kind"]
        if kind == "system":
            out.append(m.SystemMessage(content=spec["text"], id=spec["id"]))
        elif kind == "user":
            blocks: list[Any] = []
            for part in spec["parts"]:
                if "text" in part:
                    blocks.append({"type": "text", "text": part["text"]})
                elif "image" in part:
                    blocks.append(
                        {
                            "type": "image",
                            "base64": base64.b64encode(part["image"]).decode(),
                            "mime_type": part["mime"],
                        }
                    )
                else:
                    blocks.append({"type": "image", "url": part["image_url"]})
            out.append(m.HumanMessage(content=blocks, id=spec["id"]))
        elif kind == "assistant":
            out.append(
                m.AIMessage(
                    content=spec["text"],
                    id=spec["id"],
                    response_metadata={
                        "model_name": spec["model"],
                        "finish_reason": spec["finish"],
                    },
                    usage_metadata={
                        "input_tokens": spec["usage"][0],
                        "output_tokens": spec["usage"][1],
                        "total_tokens": sum(spec["usage"]),
                    },
                )
            )
        elif kind == "call":
            call = {
                "name": spec["name"],
                "args": spec["arguments"],
                "id": spec["call_id"],
                "type": "tool_call",
            }
            last = out[-1] if out else None
            if isinstance(last, m.AIMessage):
                last.tool_calls.append(call)  # type: ignore[arg-type]
            else:
                out.append(m.AIMessage(content="", tool_calls=[call], id=spec["id"]))
        else:
            out.append(
                m.ToolMessage(
                    content=spec["text"],
                    tool_call_id=spec["call_id"],
                    name=spec["name"],
                    id=spec["id"],
                )
            )
    return out


def records_from_specs(specs: list[Spec], *, binary: bool) -> list[dict[str, Any]]:
    """Plain dicts shaped like canisters' records (bytes kept as bytes if
    ``binary``, else base64 text, which is what JSON holds)."""
    out: list[dict[str, Any]] = []
    for spec in specs:
        kind = spec["kind"]
        record: dict[str, Any] = {
            "role": _ROLES[kind],
            "id": spec["id"],
            "timestamp": spec["time"].isoformat(),
        }
        if "step" in spec:
            record["step"] = spec["step"]
        if kind == "system":
            record["content"] = [{"type": "text", "text": spec["text"]}]
        elif kind == "user":
            content = []
            for part in spec["parts"]:
                if "text" in part:
                    content.append({"type": "text", "text": part["text"]})
                elif "image" in part:
                    data = part["image"]
                    content.append(
                        {
                            "type": "image",
                            "data": data if binary else base64.b64encode(data).decode(),
                            "mime_type": part["mime"],
                        }
                    )
                else:
                    content.append({"type": "image", "url": part["image_url"]})
            record["content"] = content
        elif kind == "assistant":
            tokens_in, tokens_out = spec["usage"]
            record["metadata"] = {
                "model": spec["model"],
                "usage": {"input_tokens": tokens_in, "output_tokens": tokens_out},
                "finish_reason": spec["finish"],
            }
            record["content"] = [{"type": "text", "text": spec["text"]}]
        elif kind == "call":
            record["invocation_id"] = spec["call_id"]
            record["name"] = spec["name"]
            record["arguments"] = spec["arguments"]
        else:
            record["invocation_id"] = spec["call_id"]
            record["name"] = spec["name"]
            record["content"] = [{"type": "text", "text": spec["text"]}]
        out.append(record)
    return out


_ROLES = {
    "system": "supervisor",
    "user": "user",
    "assistant": "assistant",
    "call": "invocation",
    "result": "result",
}


# --------------------------------------------------------------------------- #
# Hand-written provider mappings over plain dicts


def _complete(records: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Keep only complete invocation/result pairs, as the normalizers do."""
    invoked = set()
    answered = set()
    for record in records:
        role = record["role"]
        if role == "invocation":
            invoked.add(record["invocation_id"])
        elif role == "result" and record["invocation_id"] in invoked:
            answered.add(record["invocation_id"])
    if invoked == answered:
        return records
    return [
        r
        for r in records
        if r["role"] not in ("invocation", "result") or r["invocation_id"] in answered
    ]


def _openai_parts(content: list[dict[str, Any]]) -> str | list[dict[str, Any]]:
    if len(content) == 1 and content[0]["type"] == "text":
        return str(content[0]["text"])
    parts: list[dict[str, Any]] = []
    for part in content:
        if part["type"] == "text":
            parts.append({"type": "text", "text": part["text"]})
        elif "data" in part:
            data = base64.b64encode(part["data"]).decode()
            url = f"data:{part['mime_type']};base64,{data}"
            parts.append({"type": "image_url", "image_url": {"url": url}})
        else:
            parts.append({"type": "image_url", "image_url": {"url": part["url"]}})
    return parts


def openai_from_records(records: list[dict[str, Any]]) -> dict[str, Any]:
    """Render plain records as an OpenAI chat request's ``messages``."""
    messages: list[dict[str, Any]] = []
    last: dict[str, Any] | None = None
    for record in _complete(records):
        role = record["role"]
        if role == "invocation":
            call = {
                "id": record["invocation_id"],
                "type": "function",
                "function": {
                    "name": record["name"],
                    # Compact JSON, as OpenAI writes it (and canisters).
                    "arguments": orjson.dumps(record["arguments"]).decode(),
                },
            }
            if last is not None and last["role"] == "assistant":
                last.setdefault("tool_calls", []).append(call)
                continue
            last = {"role": "assistant", "content": None, "tool_calls": [call]}
        elif role == "result":
            last = {
                "role": "tool",
                "tool_call_id": record["invocation_id"],
                "content": _openai_parts(record["content"]),
            }
        else:
            wire = "system" if role == "supervisor" else role
            last = {"role": wire, "content": _openai_parts(record["content"])}
        messages.append(last)
    return {"messages": messages}


def _anthropic_part(part: dict[str, Any]) -> dict[str, Any]:
    if part["type"] == "text":
        return {"type": "text", "text": part["text"]}
    if "data" in part:
        source = {
            "type": "base64",
            "media_type": part["mime_type"],
            "data": base64.b64encode(part["data"]).decode(),
        }
    else:
        source = {"type": "url", "url": part["url"]}
    return {"type": "image", "source": source}


def anthropic_from_records(records: list[dict[str, Any]]) -> dict[str, Any]:
    """Render plain records as an Anthropic request's ``system`` and ``messages``."""
    system: list[str] = []
    messages: list[dict[str, Any]] = []
    for record in _complete(records):
        role = record["role"]
        if role == "supervisor":
            system.extend(part["text"] for part in record["content"])
            continue
        if role == "invocation":
            wire = "assistant"
            blocks = [
                {
                    "type": "tool_use",
                    "id": record["invocation_id"],
                    "name": record["name"],
                    "input": record["arguments"],
                }
            ]
        elif role == "result":
            wire = "user"
            content = record["content"]
            block: dict[str, Any] = {
                "type": "tool_result",
                "tool_use_id": record["invocation_id"],
            }
            if len(content) == 1 and content[0]["type"] == "text":
                block["content"] = content[0]["text"]
            else:
                block["content"] = [_anthropic_part(part) for part in content]
            blocks = [block]
        else:
            wire = role
            blocks = [_anthropic_part(part) for part in record["content"]]
        if messages and messages[-1]["role"] == wire:
            messages[-1]["content"].extend(blocks)
        else:
            messages.append({"role": wire, "content": blocks})
    for message in messages:
        content = message["content"]
        if len(content) == 1 and content[0]["type"] == "text":
            message["content"] = content[0]["text"]
    body: dict[str, Any] = {"messages": messages}
    if system:
        body["system"] = "\n\n".join(system)
    return body


def _now() -> str:
    return datetime.now(timezone.utc).isoformat()


def _text_parts(content: Any) -> list[dict[str, Any]]:
    if isinstance(content, str):
        return [{"type": "text", "text": content}]
    parts: list[dict[str, Any]] = []
    for part in content or ():
        if part["type"] == "text":
            parts.append({"type": "text", "text": part["text"]})
        else:
            url = part["image_url"]["url"]
            if url.startswith("data:"):
                head, _, data = url.partition(",")
                parts.append(
                    {
                        "type": "image",
                        "data": base64.b64decode(data),
                        "mime_type": head[5:].split(";", 1)[0],
                    }
                )
            else:
                parts.append({"type": "image", "url": url})
    return parts


def parse_openai_records(body: dict[str, Any]) -> list[dict[str, Any]]:
    """Read an OpenAI chat request's ``messages`` into plain records (new ids
    and timestamps, as a parser must make them)."""
    records: list[dict[str, Any]] = []
    names: dict[str, str] = {}
    for message in body["messages"]:
        role = message["role"]
        if role == "tool":
            call_id = message["tool_call_id"]
            records.append(
                {
                    "role": "result",
                    "id": os.urandom(16).hex(),
                    "timestamp": _now(),
                    "invocation_id": call_id,
                    "name": names.get(call_id, ""),
                    "content": _text_parts(message["content"]),
                }
            )
            continue
        content = message.get("content")
        if content is not None or role != "assistant":
            records.append(
                {
                    "role": "supervisor" if role in ("system", "developer") else role,
                    "id": os.urandom(16).hex(),
                    "timestamp": _now(),
                    "content": _text_parts(content),
                }
            )
        for call in message.get("tool_calls") or ():
            function = call["function"]
            names[call["id"]] = function["name"]
            records.append(
                {
                    "role": "invocation",
                    "id": os.urandom(16).hex(),
                    "timestamp": _now(),
                    "invocation_id": call["id"],
                    "name": function["name"],
                    "arguments": json.loads(function["arguments"]),
                }
            )
    return records
