"""OpenTelemetry GenAI message attributes to canisters and back (no extra needed).

::

    from canisters.interop import otel

    attributes = otel.to_otel(conversation)
    for key, value in attributes.items():
        span.set_attribute(key, json.dumps(value))
    conversation = otel.from_otel(attributes)

:func:`to_otel` gives the three attributes of the OpenTelemetry semantic
conventions for generative AI, shaped as their JSON schemas define them:

- ``gen_ai.system_instructions``: the parts of the leading supervisor canisters;
- ``gen_ai.input.messages``: every other canister up to the model's reply, as
  ``{"role", "parts"}`` messages (roles ``system``, ``user``, ``assistant``,
  ``tool``);
- ``gen_ai.output.messages``: the trailing assistant canisters and invocations
  (the reply), with a ``finish_reason``.

A message holds one canister, except that invocations join the assistant
message before them, results join the tool message before them, and an
assistant canister joins the invocations before it, as providers group them. A
canister without parts (an empty reply) is always a message of its own, so that
it reads back as one.

Parts: ``text``, ``reasoning``, ``tool_call`` (id, name, arguments),
``tool_call_response`` (id, response), and media as ``blob`` (inline bytes,
base64), ``uri`` (a URL) or ``file`` (a provider file id), each with its
``modality`` and ``mime_type``. :func:`from_otel` reads the same attributes
(values as JSON text or already decoded) back into canisters, so that traces an
instrumented application captured can be loaded, stored and replayed.

The conventions have no place for canister ids, timestamps, steps, lineage,
signatures of reasoning, hints or extras; :func:`to_otel` lists what it could
not carry in ``report``.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import attrs

from ..canisters import (
    Assistant,
    ErrorInfo,
    Invocation,
    Metadata,
    Result,
    Supervisor,
    User,
    new_id,
)
from ..content import Audio, File, Image, Media, Reasoning, Text, Video
from ..conversation import Conversation, canisters_in
from ..exceptions import MalformedPayload
from ..protocols import Canister, Content, Role
from ..provided import ProviderToolCall, ProviderToolResult, SearchHit
from ..providers.kit import (
    Report,
    b64decode_exact,
    b64encode,
    decode_error_text,
    encode_error_text,
    expect_list,
    expect_mapping,
    expect_optional_str,
    expect_str,
    guarded,
    mine,
)
from ._common import report_losses

__all__ = [
    "INPUT_MESSAGES",
    "NAME",
    "OUTPUT_MESSAGES",
    "SYSTEM_INSTRUCTIONS",
    "from_otel",
    "to_otel",
]

NAME = "otel"
"""The name this module reports events under."""
SYSTEM_INSTRUCTIONS = "gen_ai.system_instructions"
"""The attribute holding the system instructions (a list of parts)."""
INPUT_MESSAGES = "gen_ai.input.messages"
"""The attribute holding the messages sent to the model."""
OUTPUT_MESSAGES = "gen_ai.output.messages"
"""The attribute holding the messages the model returned."""

_ROLE = {
    Role.Supervisor: "system",
    Role.User: "user",
    Role.Document: "user",
    Role.Assistant: "assistant",
    Role.Invocation: "assistant",
    Role.Result: "tool",
}
_REPLY = (Role.Assistant, Role.Invocation)
_MODALITY = {Image: "image", Audio: "audio", Video: "video", File: "document"}
_MEDIA_OF = {"image": Image, "audio": Audio, "video": Video}
_FINISH_OUT = {"tool_calls": "tool_call"}
_FINISH_IN = {"tool_call": "tool_calls"}


# canisters -> OpenTelemetry ----------------------------------------------------------


def to_otel(
    conversation: Iterable[Canister], *, report: Report | None = None
) -> dict[str, list[dict[str, Any]]]:
    """Return the GenAI attributes of ``conversation`` as JSON-compatible values.

    The keys are :data:`SYSTEM_INSTRUCTIONS`, :data:`INPUT_MESSAGES` and
    :data:`OUTPUT_MESSAGES` (an empty list where there is nothing). Serialize
    each value with ``json.dumps`` to set it as a span attribute. What the
    conventions cannot carry is recorded in ``report``.
    """
    canisters = canisters_in(conversation, "to_otel")
    lead = 0
    while lead < len(canisters) and canisters[lead].role is Role.Supervisor:
        lead += 1
    reply = len(canisters)
    while reply > lead and canisters[reply - 1].role in _REPLY:
        reply -= 1
    system = [part for c in canisters[:lead] for part in _parts(c)]
    attributes = {
        SYSTEM_INSTRUCTIONS: system,
        INPUT_MESSAGES: _messages(canisters[lead:reply]),
        OUTPUT_MESSAGES: _messages(canisters[reply:], output=True),
    }
    if report is not None:
        report_losses(canisters, from_otel(attributes), NAME, report)
    return attributes


def _messages(
    canisters: Sequence[Canister], *, output: bool = False
) -> list[dict[str, Any]]:
    messages: list[dict[str, Any]] = []
    groups: list[list[Canister]] = []
    for canister in canisters:
        role = _ROLE[canister.role]
        parts = _parts(canister)
        previous = groups[-1][-1] if groups else None
        # A canister without parts is a message of its own, which reads back
        # as one empty canister: inside another message it would vanish.
        same = (
            previous is not None
            and parts
            and messages[-1]["parts"]
            and messages[-1]["role"] == role
            and (
                canister.role in (Role.Invocation, Role.Result)
                or (
                    canister.role is Role.Assistant and previous.role is Role.Invocation
                )
            )
        )
        if not same:
            messages.append({"role": role, "parts": []})
            groups.append([])
        messages[-1]["parts"].extend(parts)
        groups[-1].append(canister)
    if output:
        for message, group in zip(messages, groups, strict=True):
            message["finish_reason"] = _finish(group, message)
    return messages


def _finish(canisters: Sequence[Canister], message: Mapping[str, Any]) -> str:
    for canister in canisters:
        if canister.metadata is not None and canister.metadata.finish_reason:
            reason = canister.metadata.finish_reason
            return _FINISH_OUT.get(reason, reason)
    calls = any(part["type"] == "tool_call" for part in message["parts"])
    return "tool_call" if calls else "stop"


def _with_id(canister: Canister, part: dict[str, Any]) -> dict[str, Any]:
    """``part`` with its ``id`` left out or null again when the part it was read
    from had none (the id was made up to pair the call with its response)."""
    how = mine(canister, NAME).get("id")
    if how == "absent":
        del part["id"]
    elif how == "null":
        part["id"] = None
    return part


def _parts(canister: Canister) -> list[dict[str, Any]]:
    role = canister.role
    if role is Role.Invocation:
        invocation: Any = canister
        return [
            _with_id(
                canister,
                {
                    "type": "tool_call",
                    "id": invocation.invocation_id,
                    "name": invocation.name,
                    "arguments": dict(invocation.arguments),
                },
            )
        ]
    if role is Role.Result:
        result: Any = canister
        return [
            _with_id(
                canister,
                {
                    "type": "tool_call_response",
                    "id": result.invocation_id,
                    "response": _response(result),
                },
            )
        ]
    parts: list[dict[str, Any]] = []
    for part in canister.content:  # type: ignore[attr-defined]
        converted = _part(part)
        if converted is not None:
            parts.append(converted)
    return parts


def _response(result: Any) -> Any:
    if result.error is not None:
        return encode_error_text(result.error)
    # What OpenTelemetry can hold of the content: a part known only by its
    # content id is left out before the form is chosen, so that a result
    # written, read back and written again gives the same attributes.
    written = [(part, out) for part in result.content if (out := _part(part))]
    # One text (cited text too, its citations reported) is the string.
    if len(written) == 1 and isinstance(written[0][0], Text):
        text = written[0][0]
        if text.mime_type == "application/json":
            try:
                return json.loads(text.text)
            except ValueError:
                return text.text
        return text.text
    return [out for _, out in written]


def _part(part: Content) -> dict[str, Any] | None:
    kind = part.type
    if kind in ("text", "cited_text"):  # citations have no part: reported
        return {"type": "text", "content": part.text}  # type: ignore[attr-defined]
    if kind == "reasoning":
        return {"type": "reasoning", "content": part.text}  # type: ignore[attr-defined]
    if isinstance(part, (ProviderToolCall, ProviderToolResult)):
        return _server_part(part)
    if not isinstance(part, Media):
        return None  # a compaction has no part: reported
    media: Any = part
    modality = _MODALITY.get(type(media), getattr(media, "modality", "document"))
    modality = getattr(modality, "value", modality)
    if media.data is not None:
        out = {"type": "blob", "modality": modality, "content": b64encode(media.data)}
    elif media.url is not None:
        out = {"type": "uri", "modality": modality, "uri": media.url}
    elif media.refs:
        out = {"type": "file", "modality": modality}
        out["file_id"] = next(iter(media.refs.values()))
    else:
        return None  # a content id means nothing outside its store
    if media.mime_type is not None:
        out["mime_type"] = media.mime_type
    return out


def _server_part(part: ProviderToolCall | ProviderToolResult) -> dict[str, Any]:
    """A tool the provider ran, as the conventions' server tool call parts
    (read back as generic parts: what they lose is reported)."""
    if isinstance(part, ProviderToolCall):
        call = {"type": part.name, **_plain(part.input)}
        return {
            "type": "server_tool_call",
            "id": part.call_id,
            "name": part.name,
            "server_tool_call": call,
        }
    response: dict[str, Any] = {"type": part.name}
    if part.hits:
        response["results"] = [
            {k: v for k, v in (("url", h.url), ("title", h.title)) if v is not None}
            for h in part.hits
        ]
    for field in ("code", "stdout", "stderr", "exit_code", "error"):
        if (value := getattr(part, field)) is not None:
            response[field] = value
    if part.output is not None:
        response["output"] = _plain(part.output)
    return {
        "type": "server_tool_call_response",
        "id": part.call_id,
        "server_tool_call_response": response,
    }


def _plain(value: Any) -> Any:
    """A read-only JSON value as plain dicts and lists."""
    if isinstance(value, Mapping):
        return {key: _plain(item) for key, item in value.items()}
    if isinstance(value, tuple):
        return [_plain(item) for item in value]
    return value


# OpenTelemetry -> canisters ----------------------------------------------------------


def from_otel(
    attributes: Mapping[str, Any] | None = None,
    *,
    system_instructions: Any = None,
    input_messages: Any = None,
    output_messages: Any = None,
) -> Conversation:
    """Read GenAI attributes back into a :class:`~canisters.Conversation`.

    Pass the span's attributes (a mapping holding any of :data:`SYSTEM_INSTRUCTIONS`,
    :data:`INPUT_MESSAGES`, :data:`OUTPUT_MESSAGES`; other keys are ignored) or the
    three values by keyword. Values may be JSON text, as span attributes hold
    them, or decoded lists. Malformed values raise
    :class:`~canisters.MalformedPayload` naming the attribute and the path.
    """
    if attributes is not None and not isinstance(attributes, Mapping):
        raise MalformedPayload(
            "expected the span's attributes as a mapping, got "
            f"{type(attributes).__name__}"
        )
    source = dict(attributes or {})
    values = {
        SYSTEM_INSTRUCTIONS: source.get(SYSTEM_INSTRUCTIONS, system_instructions),
        INPUT_MESSAGES: source.get(INPUT_MESSAGES, input_messages),
        OUTPUT_MESSAGES: source.get(OUTPUT_MESSAGES, output_messages),
    }
    return Conversation(_read(values))


@guarded
def _read(values: Mapping[str, Any]) -> list[Canister]:
    out: list[Canister] = []
    names: dict[str, str] = {}
    anonymous: list[str] = []  # calls without an id, not answered yet
    system = _decoded(values[SYSTEM_INSTRUCTIONS], SYSTEM_INSTRUCTIONS)
    if system:
        path = f"{SYSTEM_INSTRUCTIONS}$"
        parts = [
            _read_part(p, f"{path}[{i}]")
            for i, p in enumerate(expect_list(system, path))
        ]
        out.append(Supervisor(tuple(p for p in parts if p is not None)))
    for name in (INPUT_MESSAGES, OUTPUT_MESSAGES):
        messages = _decoded(values[name], name)
        if messages is None:
            continue
        path = f"{name}$"
        for index, message in enumerate(expect_list(messages, path)):
            _read_message(
                message,
                f"{path}[{index}]",
                out,
                names,
                anonymous,
                name == OUTPUT_MESSAGES,
            )
    return out


def _decoded(value: Any, name: str) -> Any:
    if isinstance(value, (str, bytes)):
        try:
            return json.loads(value)
        except ValueError as error:
            raise MalformedPayload(f"not valid JSON: {error}", f"{name}$") from None
    return value


def _read_message(
    message: Any,
    path: str,
    out: list[Canister],
    names: dict[str, str],
    anonymous: list[str],
    output: bool,
) -> None:
    message = expect_mapping(message, path)
    role = expect_str(message.get("role"), f"{path}.role")
    parts = expect_list(message.get("parts"), f"{path}.parts")
    start = len(out)
    pending: list[Content] = []

    def flush() -> None:
        if pending:
            cls = {"system": Supervisor, "assistant": Assistant}.get(role, User)
            out.append(cls(tuple(pending)))
            pending.clear()

    for index, raw in enumerate(parts):
        where = f"{path}.parts[{index}]"
        part = expect_mapping(raw, where)
        kind = part.get("type")
        if kind == "tool_call":
            flush()
            call_id, extras = _call_id(part, where, anonymous, None)
            name = expect_str(part.get("name"), f"{where}.name")
            arguments = part.get("arguments")
            if isinstance(arguments, str):
                try:
                    arguments = json.loads(arguments)
                except ValueError:
                    arguments = {"arguments": arguments}
            if arguments is None:
                arguments = {}
            if not isinstance(arguments, Mapping):
                arguments = {"arguments": arguments}
            invocation = Invocation(
                name, arguments, invocation_id=call_id, extras=extras
            )
            names[call_id] = name
            out.append(invocation)
        elif kind == "tool_call_response":
            flush()
            call_id, extras = _call_id(part, where, anonymous, anonymous)
            result = _read_result(part.get("response"), call_id, names, where)
            out.append(attrs.evolve(result, extras=extras) if extras else result)
        else:
            converted = _read_part(part, where)
            if converted is not None:
                pending.append(converted)
    flush()
    if len(out) == start:  # a message without parts still marks its place
        cls = {"system": Supervisor, "assistant": Assistant}.get(role, User)
        out.append(cls())
    if output:
        finish = message.get("finish_reason")
        if isinstance(finish, str):
            first = out[start]
            out[start] = attrs.evolve(  # type: ignore[misc]
                first, metadata=Metadata(finish_reason=_FINISH_IN.get(finish, finish))
            )


def _call_id(
    part: Mapping[str, Any],
    where: str,
    anonymous: list[str],
    answered: list[str] | None,
) -> tuple[str, dict[str, Any]]:
    """The id of a tool call or of its response, and the extras keeping how the
    part gave it.

    ``id`` is optional in both parts (``string | null``): a call without one gets
    an id of its own, and a response without one answers the oldest call without
    one still unanswered (``answered`` is that queue; ``None`` for a call).
    """
    if part.get("id") is not None:
        return expect_str(part["id"], f"{where}.id"), {}
    how = {NAME: {"id": "null" if "id" in part else "absent"}}
    if answered is None:
        call_id = new_id()
        anonymous.append(call_id)
        return call_id, how
    return (answered.pop(0) if answered else new_id()), how


def _read_result(
    response: Any, call_id: str, names: Mapping[str, str], where: str
) -> Result:
    name = names.get(call_id, "")
    error: ErrorInfo | None = None
    content: tuple[Content, ...]
    if isinstance(response, str):
        error = decode_error_text(response)
        content = () if error is not None else (Text(response),)
    elif (
        isinstance(response, list)
        and response
        and all(isinstance(p, Mapping) and "type" in p for p in response)
    ):
        parts = [
            _read_part(p, f"{where}.response[{i}]") for i, p in enumerate(response)
        ]
        content = tuple(p for p in parts if p is not None)
    else:
        content = (Text(json.dumps(response, ensure_ascii=False), "application/json"),)
    return Result(call_id, name, content, error)


def _read_part(raw: Any, path: str) -> Content | None:
    part = expect_mapping(raw, path)
    kind = part.get("type")
    if kind == "text":
        return Text(expect_str(part.get("content"), f"{path}.content"))
    if kind == "reasoning":
        return Reasoning(expect_str(part.get("content"), f"{path}.content"))
    if kind in ("blob", "uri", "file"):
        modality = part.get("modality")
        mime = expect_optional_str(part.get("mime_type"), f"{path}.mime_type")
        cls = _media_class(modality, mime)
        if kind == "blob":
            text = expect_str(part.get("content"), f"{path}.content")
            data = b64decode_exact(text, f"{path}.content")[0]
            return cls(data=data, mime_type=mime)
        if kind == "uri":
            return cls(url=expect_str(part.get("uri"), f"{path}.uri"), mime_type=mime)
        file_id = expect_str(part.get("file_id"), f"{path}.file_id")
        return cls(refs={NAME: file_id}, mime_type=mime)
    if kind in ("server_tool_call", "server_tool_call_response"):
        provided = _read_server_part(part)
        if provided is not None:
            return provided
    # Generic parts have no neutral meaning.
    return Text("", extras={NAME: {"part": dict(part)}})


def _read_server_part(
    part: Mapping[str, Any],
) -> ProviderToolCall | ProviderToolResult | None:
    """A server tool call part as :func:`_server_part` writes it, or ``None``
    for one of another shape (kept as a generic part)."""
    call_id = part.get("id")
    if call_id is not None and not isinstance(call_id, str):
        return None
    if part["type"] == "server_tool_call":
        call = part.get("server_tool_call")
        name = part.get("name")
        if not (isinstance(call, Mapping) and isinstance(name, str) and name):
            return None
        if call.get("type") != name:
            return None
        arguments = {k: v for k, v in call.items() if k != "type"}
        return ProviderToolCall(name, arguments, call_id)
    response = part.get("server_tool_call_response")
    if not isinstance(response, Mapping):
        return None
    name = response.get("type")
    if not isinstance(name, str) or not name:
        return None
    fields: dict[str, Any] = {}
    for field in ("code", "stdout", "stderr", "error"):
        value = response.get(field)
        if value is not None and not isinstance(value, str):
            return None
        fields[field] = value
    exit_code = response.get("exit_code")
    if exit_code is not None and type(exit_code) is not int:
        return None
    hits = []
    for hit in response.get("results") or ():
        if not isinstance(hit, Mapping) or set(hit) - {"url", "title"}:
            return None
        if not all(isinstance(v, str) for v in hit.values()):
            return None
        hits.append(SearchHit(hit.get("url"), hit.get("title")))
    if set(response) - {"type", "results", "output", "exit_code", *fields}:
        return None
    return ProviderToolResult(
        name,
        call_id,
        hits=tuple(hits),
        exit_code=exit_code,
        output=response.get("output"),
        **fields,
    )


def _media_class(modality: Any, mime: Any) -> type[Media]:
    if isinstance(modality, str) and modality in _MEDIA_OF:
        return _MEDIA_OF[modality]
    if modality == "document":
        return File
    if isinstance(mime, str):
        head = mime.split("/", 1)[0]
        if head in _MEDIA_OF:
            return _MEDIA_OF[head]
    return File
