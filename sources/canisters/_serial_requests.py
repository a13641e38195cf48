"""The records of requests and tools (part of :mod:`canisters.serialization`)."""

from __future__ import annotations

from typing import Any, Final

import attrs

from ._serial_canisters import _canisters_in, _records
from ._serial_values import Record, T
from .conversation import Conversation
from .exceptions import ModelError, SerializationError, _excerpt
from .requests import (
    CacheConfig,
    Generation,
    OutputFormat,
    ProviderTool,
    ReasoningConfig,
    Request,
    Tool,
    ToolChoice,
)

# --------------------------------------------------------------------------- #
# Requests

_REQUEST_PARTS: Final[dict[str, type]] = {
    "tool_choice": ToolChoice,
    "output": OutputFormat,
    "generation": Generation,
    "reasoning": ReasoningConfig,
    "cache": CacheConfig,
}
_REQUEST_PLAIN: Final = (
    "model",
    "user",
    "metadata",
    "service_tier",
    "stream",
    "extras",
)


def _fields_out(value: Any) -> Record:
    """The fields of an attrs value that differ from their defaults (none of
    the request's parts has a factory default)."""
    record: Record = {}
    for field in attrs.fields(type(value)):
        item = getattr(value, field.name)
        default = field.default
        if item == default and type(item) is type(default):
            continue
        record[field.name] = list(item) if isinstance(item, tuple) else item
    return record


def _request_out(request: Request) -> Record:
    """The record of a request document."""
    record: Record = {}
    if request.conversation:
        record["canisters"] = _records(request.conversation.canisters)
    for name in ("model", "tools", *_REQUEST_PARTS, *_REQUEST_PLAIN[1:]):
        value = getattr(request, name)
        if name == "tools":
            if value:
                record[name] = [_tool_out(tool) for tool in value]
        elif name in _REQUEST_PARTS:
            if value is not None:
                part = _fields_out(value)
                if part or name != "generation":
                    record[name] = part
        elif value is not None and (value or name != "extras"):
            record[name] = value
    return record


def _tool_out(tool: Tool | ProviderTool) -> Record:
    if isinstance(tool, ProviderTool):
        return {"type": "provider", "provider": tool.provider, "body": tool.body}
    return {"type": "function", **_fields_out(tool)}


def _built(kind: type[T], data: Any, path: str) -> T:
    """``kind(**data)`` for a record of its fields, refusals at ``path``."""
    if not isinstance(data, dict):
        raise SerializationError(f"expected an object, got {type(data).__name__}", path)
    known = {field.name for field in attrs.fields(kind)}  # type: ignore[arg-type]
    for key in data:
        if key not in known:
            raise SerializationError(f"unknown field {_excerpt(key)}", f"{path}.{key}")
    try:
        return kind(**data)
    except ModelError as error:
        where = f"{path}.{error.field}" if error.field else path
        raise SerializationError(str(error), where) from None
    except (TypeError, ValueError) as error:
        raise SerializationError(str(error), path) from None


def _tool_in(data: Any, path: str) -> Tool | ProviderTool:
    if not isinstance(data, dict):
        raise SerializationError(f"expected an object, got {type(data).__name__}", path)
    fields = dict(data)
    kind = fields.pop("type", None)
    if kind == "provider":
        return _built(ProviderTool, fields, path)
    if kind == "function":
        return _built(Tool, fields, path)
    raise SerializationError(f"unknown tool type {_excerpt(kind)}", f"{path}.type")


def _request_in(data: Any, path: str) -> Request:
    """The request of a request document's record."""
    if not isinstance(data, dict):
        raise SerializationError(f"expected an object, got {type(data).__name__}", path)
    fields: dict[str, Any] = {}
    for key, value in data.items():
        where = f"{path}.{key}"
        if key == "canisters":
            try:
                fields["conversation"] = Conversation(_canisters_in(value))
            except SerializationError as error:
                raise error.within("request") from error.__cause__
        elif key == "tools":
            if not isinstance(value, list):
                raise SerializationError("expected an array", where)
            fields[key] = tuple(
                _tool_in(item, f"{where}[{index}]") for index, item in enumerate(value)
            )
        elif key in _REQUEST_PARTS:
            fields[key] = _built(_REQUEST_PARTS[key], value, where)
        elif key in _REQUEST_PLAIN:
            fields[key] = value
        else:
            raise SerializationError(f"unknown field {_excerpt(key)}", where)
    try:
        return Request(**fields)
    except ModelError as error:
        where = f"{path}.{error.field}" if error.field else path
        raise SerializationError(str(error), where) from None
