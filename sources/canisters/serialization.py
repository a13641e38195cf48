"""Serialization: the cattrs converter, JSON and JSONL documents, registration.

Canisters unstructure to dicts tagged by ``"role"``, content parts to dicts tagged
by ``"type"``; bytes become base64, timestamps ISO 8601 with their offset, and
fields left at their defaults are omitted. The built-in classes have hooks written
once per class (no generic union dispatch per value); application classes added
with :func:`register_canister` / :func:`register_content` get hooks that cattrs
generates for them once, at registration.

Every document carries its format and version::

    {"format": "canisters.conversation", "version": 2, "canisters": [...]}
    {"format": "canisters.canister", "version": 2, "canister": {...}}
    {"format": "canisters.content", "version": 2, "content": {...}}
    {"format": "canisters.request", "version": 2, "request": {...}}

JSONL puts the document's header on the first line and one canister per line
after it. Documents written by an older version are upgraded on load by the
migrations registered with :func:`register_migration`.

Reading is fastest for the documents this release writes with the built-in
classes: msgspec decodes them straight into typed structs. Any other document
(registered classes, older versions, malformed input) is read by the hooks,
with the same result or the same error.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any, Final

from . import _base64, _formats
from ._serial_canisters import _canisters_in, structure_canister, unstructure_canister
from ._serial_canisters import _content_out as _content_out
from ._serial_canisters import _record as _record
from ._serial_canisters import _records as _records
from ._serial_codec import (
    _JSONL_HEADER,
    _RECORD_PATH,
    _check_depth,
    _collected_non_finite,
    _read_fast,
)
from ._serial_codec import _TOO_DEEP as _TOO_DEEP
from ._serial_codec import _deep_steps as _deep_steps
from ._serial_codec import _dumps as _dumps
from ._serial_codec import _encode_json as _encode_json
from ._serial_codec import _gc_disable as _gc_disable
from ._serial_codec import _gc_enable as _gc_enable
from ._serial_codec import _gc_enabled as _gc_enabled
from ._serial_codec import _loads as _loads
from ._serial_codec import _may_nest_deeper as _may_nest_deeper
from ._serial_codec import _nests_deeper as _nests_deeper
from ._serial_codec import _paused as _paused
from ._serial_migrations import _MIGRATIONS as _MIGRATIONS
from ._serial_migrations import migrate, register_migration
from ._serial_registry import (
    converter,
    make_converter,
    register_canister,
    register_content,
)
from ._serial_requests import _request_in, _request_out
from ._serial_values import (
    _CANISTER_OUT,
    _CONTENT_OUT,
    _LINE_SHIFT,
    _SHIFTS,
    Record,
    _Add,
    structure_content,
    unstructure_content,
)
from ._serial_values import _CONTENT_IN as _CONTENT_IN
from ._serial_values import _error_out as _error_out
from ._serial_values import _metadata_out as _metadata_out
from .conversation import Conversation
from .exceptions import SerializationError, _excerpt
from .protocols import Canister, Content, Role
from .requests import Request

__all__ = [
    "FORMAT_VERSION",
    "MAX_DEPTH",
    "converter",
    "from_json",
    "from_jsonl",
    "make_converter",
    "migrate",
    "register_canister",
    "register_content",
    "register_migration",
    "structure_canister",
    "structure_content",
    "to_json",
    "to_jsonl",
    "unstructure_canister",
    "unstructure_content",
]

# Defined in private modules, documented here: autodoc and the reference pages
# know them by this module.
for _public in (make_converter, register_canister, register_content):
    _public.__module__ = __name__
del _public


FORMAT_VERSION: Final = _formats.FORMAT_VERSION
"""The version of the document format this release writes."""

CONVERSATION_FORMAT: Final = _formats.CONVERSATION_FORMAT
CANISTER_FORMAT: Final = _formats.CANISTER_FORMAT
CONTENT_FORMAT: Final = _formats.CONTENT_FORMAT
REQUEST_FORMAT: Final = _formats.REQUEST_FORMAT

MAX_DEPTH: Final = _formats.MAX_DEPTH
"""The deepest nesting of arrays and objects a value may have, counted in the
conversation document that holds it, on every Python version.

Every form is held to the same place: a canister document's record sits one
level higher than in a conversation document (so it may nest 499 levels below
its root), a content document's part three (497), a JSONL line's record two
(498); a snapshot holds the conversation document one level lower (501). Deeper
input raises :class:`~canisters.SerializationError` ("nested too deeply"), and
:func:`to_json` / :func:`to_jsonl` refuse to write it, so that whatever is
written is read back. Provider bodies are bounded likewise (see the reliability
page).
"""


def to_json(value: Conversation | Canister | Content | Request) -> str:
    """Serialize a conversation, a canister, a content part or a whole
    :class:`~canisters.Request` to a JSON document."""
    return _paused(_to_json, value)


def _to_json(value: Conversation | Canister | Content | Request) -> str:
    if isinstance(value, Request):
        written: Record = {
            "format": REQUEST_FORMAT,
            "version": FORMAT_VERSION,
            "request": _request_out(value),
        }
        return _encode_json(written, MAX_DEPTH - _SHIFTS[REQUEST_FORMAT])[0].decode()
    floats: list[Any] = []
    document = _document(value, floats.append)
    splicer = _base64.Splicer()
    encoded, standard = _encode_json(
        document, MAX_DEPTH - _SHIFTS[document["format"]], floats, splicer
    )
    # The document goes before the bytes become text: see "Memory" on the
    # reliability page.
    del document, floats
    return encoded.decode() if standard else _spliced(splicer, encoded)


def _spliced(splicer: _base64.Splicer, encoded: bytes) -> str:
    """The text of ``encoded``, the base64 of its media in place."""
    try:
        return splicer.text(encoded)
    except ValueError as error:  # a raw NUL: a fragment in extras
        raise SerializationError(f"value is not JSON: {error}") from None


def _document(
    value: Conversation | Canister | Content, add: _Add | None = None
) -> Record:
    """The document :func:`to_json` writes for ``value``; ``add``: as for
    :func:`_records`."""
    if isinstance(value, Conversation):
        document: Record = {
            "format": CONVERSATION_FORMAT,
            "version": FORMAT_VERSION,
            "canisters": _records(value.canisters, add),
        }
    elif type(value) in _CANISTER_OUT or isinstance(getattr(value, "role", None), Role):
        document = {
            "format": CANISTER_FORMAT,
            "version": FORMAT_VERSION,
            "canister": _records((value,), add)[0],  # type: ignore[arg-type]
        }
    elif type(value) in _CONTENT_OUT or isinstance(getattr(value, "type", None), str):
        content = unstructure_content(value)  # type: ignore[arg-type]
        if add is not None:
            add(content)
        document = {
            "format": CONTENT_FORMAT,
            "version": FORMAT_VERSION,
            "content": content,
        }
    else:
        raise SerializationError(
            f"cannot serialize {type(value).__qualname__}: expected a conversation, "
            "a canister or a content part"
        )
    return document


def from_json(text: str | bytes) -> Conversation | Canister | Content | Request:
    """Read a document written by :func:`to_json` (or by an older version)."""
    read = _read_fast(text, "from_json")
    if read is not None:
        return read  # type: ignore[no-any-return]
    document = _loads(text)
    if not isinstance(document, dict):
        raise SerializationError(
            f"expected a document object, got {type(document).__name__}"
        )
    kind = document.get("format")
    if kind not in (
        CONVERSATION_FORMAT,
        CANISTER_FORMAT,
        CONTENT_FORMAT,
        REQUEST_FORMAT,
    ):
        raise SerializationError(
            f"unknown document format {_excerpt(kind)}", "$.format"
        )
    limit = MAX_DEPTH - _SHIFTS[kind]
    if limit < MAX_DEPTH and _may_nest_deeper(text, limit):
        _check_depth(document, limit, "$")
    if document.get("version") != FORMAT_VERSION:
        document = migrate(document)
    if kind == CONVERSATION_FORMAT:
        return Conversation(_canisters_in(document.get("canisters")))
    if kind == REQUEST_FORMAT:
        if "request" not in document:
            raise SerializationError("missing field 'request'", "$.request")
        return _request_in(document["request"], "$.request")
    key = "canister" if kind == CANISTER_FORMAT else "content"
    if key not in document:
        raise SerializationError(f"missing field {_excerpt(key)}", f"$.{key}")
    try:
        if kind == CANISTER_FORMAT:
            return structure_canister(document[key])
        return structure_content(document[key])
    except SerializationError as error:
        raise error.within(key) from error.__cause__


def to_jsonl(conversation: Iterable[Canister]) -> str:
    """Serialize a conversation as JSONL: a header line, then one canister per line."""
    return _paused(_to_jsonl, conversation)


def _to_jsonl(conversation: Iterable[Canister]) -> str:
    floats: list[Any] = []
    records = _records(conversation, floats.append)
    # NaN and the infinities, which orjson would write as null: every line goes
    # through _encode_json, which writes them as the standard library does.
    exact = not _collected_non_finite(floats)
    del floats
    splicer = _base64.Splicer()
    encoded = _lines(_JSONL_HEADER, records, MAX_DEPTH - _LINE_SHIFT, exact, splicer)
    # _lines emptied the records as it wrote them: only the bytes are left to
    # become text (see "Memory" on the reliability page).
    del records
    return _spliced(splicer, encoded)


_BATCH: Final = 64


def _lines(
    header: bytes,
    records: list[Record],
    limit: int,
    exact: bool,
    splicer: _base64.Splicer | None = None,
) -> bytes:
    """``header`` and the JSON of each record, each on a line of its own.

    ``records`` is emptied as the lines are written: a record holding a large
    media part is released once its line is written, before the lines are
    joined. One orjson call per line (``exact``: no record holds a NaN or an
    infinity); a batch orjson refuses, or every line when not ``exact``, goes
    line by line through :func:`_encode_json`, which writes it as it always
    did (``limit``: the depth a line's record may nest). ``splicer``: as
    :func:`_encode_json` takes it (a line the standard library writes holds
    its media's base64, the others marks).

    orjson holds about 4 KB for each text it returns, however short: thousands
    of lines alive at once cost far more in memory traffic than writing them.
    The lines of a long conversation are joined 64 at a time, so that few are
    alive at once. The empty last item gives the final newline without copying
    the whole text again.
    """
    import orjson  # on first use, as in _encode_json

    dumps = orjson.dumps

    def write(batch: list[Record]) -> list[bytes]:
        if exact:
            try:
                return [dumps(record, default=splicer) for record in batch]
            except TypeError:  # what orjson refuses or cannot write exactly
                pass
        return [_encode_json(record, limit, None, splicer)[0] for record in batch]

    if len(records) <= _BATCH:
        written = write(records)
        records.clear()
        return b"\n".join([header, *written, b""])
    lines = [header]
    for start in range(0, len(records), _BATCH):
        end = start + _BATCH
        batch = records[start:end]
        records[start:end] = [None] * len(batch)  # type: ignore[list-item]
        written = write(batch)
        del batch
        lines.append(b"\n".join(written))
        del written
    records.clear()
    lines.append(b"")
    return b"\n".join(lines)


def from_jsonl(text: str | bytes) -> Conversation:
    """Read JSONL written by :func:`to_jsonl`; blank lines are ignored."""
    read = _read_fast(text, "from_jsonl")
    if read is not None:
        return read  # type: ignore[no-any-return]
    if isinstance(text, bytes):
        try:
            text = text.decode("utf-8")
        except UnicodeDecodeError as error:
            raise SerializationError(f"not UTF-8: {error}") from error
    if not isinstance(text, str):
        raise SerializationError(f"expected str or bytes, got {type(text).__name__}")
    lines = [(n, line) for n, line in enumerate(text.split("\n"), 1) if line.strip()]
    if not lines:
        raise SerializationError("empty JSONL document: no header line", "line 1")
    number, first = lines[0]
    limit = MAX_DEPTH - _LINE_SHIFT
    header = _loads(first, f"line {number}", limit)
    if not isinstance(header, dict) or header.get("format") != CONVERSATION_FORMAT:
        raise SerializationError(
            f'the first line must be the header {{"format": "{CONVERSATION_FORMAT}", '
            '"version": ...}',
            f"line {number}",
        )
    records = []
    for number, line in lines[1:]:
        record = _loads(line, f"line {number}", limit)
        records.append(record)
    document = {**header, "canisters": records}
    if header.get("version") != FORMAT_VERSION:
        try:
            document = migrate(document)
        except SerializationError as error:
            found = _RECORD_PATH.match(error.path)
            if found is None:
                raise SerializationError(
                    error.reason, f"line {lines[0][0]}: {error.path}"
                ) from error
            number = lines[1 + int(found[1])][0]
            raise SerializationError(
                error.reason, f"line {number}: ${found[2]}"
            ) from error
        if not isinstance(document.get("canisters"), list) or len(
            document["canisters"]
        ) != len(records):
            raise SerializationError(
                "the migration did not keep one record per line", f"line {lines[0][0]}"
            )
    canisters = []
    for (number, _line), record in zip(lines[1:], document["canisters"], strict=True):
        try:
            canisters.append(structure_canister(record))
        except SerializationError as error:
            raise SerializationError(
                error.reason, f"line {number}: {error.path}"
            ) from error.__cause__
    return Conversation(tuple(canisters))
