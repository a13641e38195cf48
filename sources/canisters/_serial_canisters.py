"""The records of canisters: the generated unstructure hooks of the built-in
classes, their readers, and their registration (part of
:mod:`canisters.serialization`)."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from datetime import datetime
from typing import Any, Final

from . import _provided_records
from ._frozen import EMPTY
from ._serial_values import (
    _CANISTER_IN,
    _CANISTER_OUT,
    _CONTENT_IN,
    _CONTENT_OUT,
    _UTC,
    Record,
    _Add,
    _check_type,
    _content_in,
    _error_in,
    _error_out,
    _guarded,
    _mapping,
    _media_in,
    _media_out,
    _metadata_in,
    _metadata_out,
    _new_assistant,
    _new_document,
    _new_invocation,
    _new_result,
    _new_supervisor,
    _new_user,
    _opt_str,
    _OutHook,
    _reasoning_in,
    _reasoning_out,
    _share,
    _Structure,
    _tagged,
    _text_in,
    _text_out,
    _time_in,
    _unregistered,
    _Unstructure,
    unstructure_content,
)
from .canisters import Assistant, Document, Invocation, Result, Supervisor, User
from .content import Audio, File, Image, Reasoning, Text, Video
from .exceptions import ModelError, SerializationError, _excerpt
from .protocols import Canister, Content, Role


def _content_out(parts: tuple[Content, ...], add: _Add | None = None) -> list[Record]:
    table = _CONTENT_OUT
    out = []
    for part in parts:
        # Most parts are plain text: build those without a hook call.
        if (
            type(part) is Text
            and part.mime_type == "text/plain"
            and part.id is None
            and not part.extras
        ):
            out.append({"type": "text", "text": part.text})
            continue
        entry = table.get(type(part))
        if entry is None:
            return [unstructure_content(part) for part in parts]
        hook = entry[1]
        if add is None:
            out.append(hook(part))
        elif hook in _COLLECTING:
            out.append(hook(part, add))  # type: ignore[call-arg]
        else:
            record = hook(part)
            add(record)
            out.append(record)
    return out


# --------------------------------------------------------------------------- #
# Canister hooks


def _shared_str(record: Mapping[str, Any], key: str) -> str | None:
    """The string ``record`` gives as ``key`` (``None`` when absent), checked;
    one copy is kept of each (traces and policies are shared by many
    canisters)."""
    value = record.get(key)
    if value is not None:
        if type(value) is not str:
            _check_type(value, str, key)
        if type(value) is str:
            value = _share(value)
    return value


def _envelope_in(record: Mapping[str, Any], cls: type) -> tuple[Any, ...]:
    """Read and check the envelope: the values of the first eight fields, in order.

    The checks are those of the canisters' constructors, which the trusted
    constructors skip; failures read the same.
    """
    identifier = record["id"]
    if type(identifier) is not str:
        _check_type(identifier, str, "id")
    if not identifier:
        raise ModelError(
            f"{cls.__name__}.id must be a non-empty string, got {_excerpt(identifier)}",
            field="id",
        )
    timestamp = _time_in(record["timestamp"])
    parent_id = record.get("parent_id")
    if parent_id is not None and type(parent_id) is not str:
        _check_type(parent_id, str, "parent_id")
    trace_id = _shared_str(record, "trace_id")
    policy = _shared_str(record, "policy")
    step = record.get("step")
    if step is not None:
        if type(step) is not int:
            _check_type(step, int, "step")
        if step < 0:
            raise ModelError(
                f"{cls.__name__}.step must be a non-negative int, got {_excerpt(step)}",
                field="step",
            )
    metadata = record.get("metadata")
    if metadata is not None:
        metadata = _metadata_in(metadata)
    extras = _mapping(record, "extras") if record.get("extras") else EMPTY
    return (identifier, timestamp, parent_id, trace_id, policy, step, metadata, extras)


# The unstructure hooks of the built-in canisters are generated from one
# template: a canister with no lineage, trace, policy or extras (most of them)
# gets its record written as one dict display (one of four, as it has a step
# and metadata or not), any other gets its envelope key by key and the class's
# own fields after it; the keys come in the same order either way. A UTC
# timestamp stays a datetime: orjson writes it exactly as isoformat() would,
# much faster (unstructure_canister() turns it into text for callers).
# ``prepare`` computes the class's own values first, ``fields`` names them (key,
# expression), ``finish`` adds the optional ones at the end.
# Names only the generated code uses: it reads them from this module's globals.
_GENERATED_USES: Final = (_UTC, _error_out, _metadata_out)
_OUT_TEMPLATE: Final = """\
def unstructure(canister, add=None):
{prepare}
    if (
        canister.parent_id is None
        and canister.trace_id is None
        and canister.policy is None
        and not canister.extras
    ):
        moment = canister.timestamp
        if moment.tzinfo is not _UTC:
            moment = moment.isoformat()
        step = canister.step
        metadata = canister.metadata
        if metadata is None:
            if step is None:
                record = {{{head}, {fields}}}
            else:
                record = {{{head}, "step": step, {fields}}}
        else:
            # Metadata naming only a model is the common case.
            if (
                metadata.finish_reason is None
                and metadata.usage is None
                and metadata.latency_ms is None
                and metadata.cache_hit is None
                and metadata.retries is None
                and metadata.quality is None
                and not metadata.custom
                and type(model := metadata.model) is str
            ):
                metadata = {{"model": model}}
            else:
                metadata = _metadata_out(metadata, add)
            if step is None:
                record = {{{head}, "metadata": metadata, {fields}}}
            else:
                record = {{{head}, "step": step, "metadata": metadata, {fields}}}
    else:
        # The envelope key by key; a value the constructors do not check is
        # handed to ``add`` unless it is a str.
        moment = canister.timestamp
        if moment.tzinfo is not _UTC:
            moment = moment.isoformat()
        record = {{{head}}}
{unchecked}        value = canister.step
        if value is not None:
            record["step"] = value
        value = canister.metadata
        if value is not None:
            record["metadata"] = _metadata_out(value, add)
        value = canister.extras
        if value:
            record["extras"] = value
            if add is not None:
                add(value)
{assign}
{finish}
    return record
"""


def _unchecked(names: tuple[str, ...], indent: str) -> str:
    """Generated code writing the optional fields ``names``, typed str but not
    checked by the constructors: set ones only, and to ``add`` unless a str."""
    return "".join(
        f"""\
{indent}value = canister.{name}
{indent}if value is not None:
{indent}    record["{name}"] = value
{indent}    if add is not None and type(value) is not str:
{indent}        add(value)
"""
        for name in names
    )


# The envelope's.
_UNCHECKED: Final = _unchecked(("parent_id", "trace_id", "policy"), " " * 8)
# The content of a canister, into ``parts``: a lone plain text part (the
# commonest content) is written without a call.
_CONTENT_PREPARE: Final = """\
    content = canister.content
    if (
        len(content) == 1
        and type(part := content[0]) is Text
        and part.mime_type == "text/plain"
        and part.id is None
        and not part.extras
    ):
        parts = [{"type": "text", "text": part.text}]
    else:
        parts = _content_out(content, add)"""
_CALL_FIELDS: Final = (
    ("invocation_id", "canister.invocation_id"),
    ("name", "canister.name"),
)


def _canister_out(
    tag: str, fields: tuple[tuple[str, str], ...], prepare: str, finish: str = ""
) -> _OutHook:
    source = _OUT_TEMPLATE.format(
        unchecked=_UNCHECKED,
        prepare=prepare,
        head=f'"role": {tag!r}, "id": canister.id, "timestamp": moment',
        fields=", ".join(f"{key!r}: {value}" for key, value in fields),
        assign="\n".join(f"        record[{key!r}] = {value}" for key, value in fields),
        finish=finish,
    )
    namespace: dict[str, Any] = {}
    exec(source, globals(), namespace)
    hook: _OutHook = namespace["unstructure"]
    return hook


def _with_content_out(tag: str) -> _OutHook:
    return _canister_out(tag, (("content", "parts"),), _CONTENT_PREPARE)


def _with_content_in(
    cls: type[User] | type[Assistant] | type[Supervisor],
) -> _Structure:
    build = {User: _new_user, Assistant: _new_assistant, Supervisor: _new_supervisor}[
        cls
    ]

    def structure(record: Mapping[str, Any]) -> Any:
        content = _content_in(record.get("content", ()))
        return build(*_envelope_in(record, cls), content)

    return structure


_document_out: Final = _canister_out(
    "document",
    (("content", "parts"),),
    _CONTENT_PREPARE,
    _unchecked(("title", "document_id"), " " * 4),
)


def _document_in(record: Mapping[str, Any]) -> Document:
    content = _content_in(record.get("content", ()))
    title = _opt_str(record, "title")
    document_id = _opt_str(record, "document_id")
    return _new_document(*_envelope_in(record, Document), content, title, document_id)


_invocation_out: Final = _canister_out(
    "invocation",
    (*_CALL_FIELDS, ("arguments", "arguments")),
    """\
    arguments = canister.arguments
    if add is not None and arguments:
        add(arguments)""",
)


def _call_in(record: Mapping[str, Any]) -> tuple[str, str]:
    """The ``invocation_id`` and ``name`` of an invocation or a result, checked.

    A handful of tool names repeat across a conversation, and a result repeats
    the id of its invocation: one copy of each is kept (see :func:`_share`).
    """
    invocation_id, name = record["invocation_id"], record["name"]
    if type(invocation_id) is str:
        invocation_id = _share(invocation_id)
    else:
        _check_type(invocation_id, str, "invocation_id")
    if type(name) is str:
        name = _share(name)
    else:
        _check_type(name, str, "name")
    return invocation_id, name


def _invocation_in(record: Mapping[str, Any]) -> Invocation:
    invocation_id, name = _call_in(record)
    arguments = _mapping(record, "arguments")
    return _new_invocation(
        *_envelope_in(record, Invocation), name, arguments, invocation_id
    )


_result_out: Final = _canister_out(
    "result",
    (*_CALL_FIELDS, ("content", "parts")),
    _CONTENT_PREPARE,
    """\
    error = canister.error
    if error is not None:
        record["error"] = error = _error_out(error)
        if add is not None:
            add(error)""",
)


def _result_in(record: Mapping[str, Any]) -> Result:
    invocation_id, name = _call_in(record)
    content = _content_in(record.get("content", ()))
    error = record.get("error")
    if error is not None:
        error = _error_in(error)
    return _new_result(
        *_envelope_in(record, Result), invocation_id, name, content, error
    )


def unstructure_canister(canister: Canister) -> Record:
    """Return ``canister`` as a JSON-compatible dict tagged by ``"role"``."""
    record = _record(canister)
    moment = record.get("timestamp")
    if type(moment) is datetime:
        record["timestamp"] = moment.isoformat()
    return record


def _records(canisters: Iterable[Canister], add: _Add | None = None) -> list[Record]:
    """:func:`_record` of each canister, dispatching through the table directly;
    with ``add``, each value that may hold a float is handed to it (see
    :data:`_COLLECTING`)."""
    table = _CANISTER_OUT
    records = []
    if add is None:
        for canister in canisters:
            entry = table.get(type(canister))
            records.append(_record(canister) if entry is None else entry[1](canister))
        return records
    collecting = _COLLECTING
    for canister in canisters:
        entry = table.get(type(canister))
        if entry is None:
            records.append(_record(canister))  # raises
        elif entry[1] in collecting:
            records.append(entry[1](canister, add))  # type: ignore[call-arg]
        else:
            record = entry[1](canister)
            add(record)
            records.append(record)
    return records


def _record(canister: Canister) -> Record:
    """Like :func:`unstructure_canister`, but a UTC timestamp may stay a datetime
    (for orjson, which writes it as ``isoformat()`` does)."""
    entry = _CANISTER_OUT.get(type(canister))
    if entry is None:
        raise _unregistered(canister, "register_canister")
    return entry[1](canister)


def structure_canister(record: object) -> Canister:
    """Build a canister from a dict tagged by ``"role"``."""
    tag, entry = _tagged(record, "role", _CANISTER_IN, "canister", "role")
    canister: Canister = _guarded(entry[1], record, f"{tag} canister")
    return canister


def _canisters_in(records: object, key: str = "canisters") -> tuple[Canister, ...]:
    if not isinstance(records, list):
        raise SerializationError(
            f"expected a list of canisters, got {type(records).__name__}", f"$.{key}"
        )
    table = _CANISTER_IN
    try:
        # Well-formed input takes the direct route: one hook call per canister.
        return tuple([table[record["role"]][1](record) for record in records])
    except Exception:  # redone below, part by part, for a located error
        pass
    items = []
    for index, record in enumerate(records):
        try:
            items.append(structure_canister(record))
        except SerializationError as error:
            raise error.within(f"[{index}]").within(key) from error.__cause__
    return tuple(items)


# --------------------------------------------------------------------------- #
# Registration


def _register_content(cls: type, tag: str, out: _Unstructure, into: _Structure) -> None:
    _CONTENT_OUT[cls] = (tag, out)
    _CONTENT_IN[tag] = into


def _register_canister(
    cls: type, role: Role, tag: str, out: _Unstructure, into: _Structure
) -> None:
    _CANISTER_OUT[cls] = (tag, out)
    _CANISTER_IN[tag] = (role, into)


_register_content(Text, "text", _text_out, _text_in)
for _media in (Image, Audio, Video, File):
    _register_content(_media, _media.type, _media_out(_media.type), _media_in(_media))
_register_content(Reasoning, "reasoning", _reasoning_out, _reasoning_in)
for _provided, _tag, _out, _in in _provided_records.HOOKS:
    _register_content(_provided, _tag, _out, _in)
for _cls, _role in (
    (User, Role.User),
    (Assistant, Role.Assistant),
    (Supervisor, Role.Supervisor),
):
    _register_canister(
        _cls, _role, _role.value, _with_content_out(_role.value), _with_content_in(_cls)
    )
_register_canister(Document, Role.Document, "document", _document_out, _document_in)
_register_canister(
    Invocation, Role.Invocation, "invocation", _invocation_out, _invocation_in
)
_register_canister(Result, Role.Result, "result", _result_out, _result_in)
# The built-in classes' out hooks, which take a collector: ``add(value)`` for
# each value the record holds that may be (or hold) a float, so that to_json()
# and to_jsonl() look for NaN and the infinities (which orjson writes as null)
# in those values only, never in the texts. Every value a built-in class does
# not check to be a string, an int, a bool, bytes or a datetime is handed over.
# Any other hook (an application's, or one replacing a built-in class's) hands
# over its whole record.
_COLLECTING: Final[frozenset[Callable[..., Record]]] = frozenset(
    out for _tag, out in (*_CONTENT_OUT.values(), *_CANISTER_OUT.values())
)
_BUILTIN_TAGS: Final = frozenset(_CANISTER_IN) | frozenset(_CONTENT_IN)
