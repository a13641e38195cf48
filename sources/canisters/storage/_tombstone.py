"""Tombstones: the record that takes the place of a redacted one in a log.

A tombstone keeps the place of the record it replaces and the digest the next
record links to, so the hash chain still verifies; the canister's content is
gone, and what stays is its skeleton (role, id, time, tool name and call id:
what the conversation's structure needs) with one text part saying it was
redacted and why::

    {"seq":4,"prev":"<64 hex>","v":2,"canister":{...skeleton...},
     "redacted":{"reason":"...","at":"<ISO time>"},"seal":"<64 hex>",
     "digest":"<the erased record's digest>"}

``seal`` is the SHA-256 of the line before it (closed by ``}``), as ``digest`` is
for a record: a tombstone edited afterwards no longer matches it. The erased
record's own bytes cannot be checked any more: that a record was redacted is a
claim of whoever could write the store, which is why :meth:`redact` records it
in the conversation's audit trail too.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from datetime import datetime
from typing import Any, Final

import orjson

from .._compat import fromisoformat
from ..serialization import FORMAT_VERSION, migrate
from ._values import Redaction

__all__ = [
    "REDACTED",
    "line_document",
    "placeholder",
    "read_tombstone",
    "redaction_of",
    "tombstone",
]

REDACTED: Final = "redacted"
"""The key of a tombstone's note in its line and in its canister's ``extras``."""
# The members of a canister a tombstone keeps: its place and structure.
_KEPT: Final = (
    "role",
    "id",
    "timestamp",
    "parent_id",
    "trace_id",
    "step",
    "invocation_id",
    "name",
)
_WITH_CONTENT: Final = frozenset(
    ("user", "assistant", "supervisor", "document", "result")
)
_SEAL: Final = b',"seal":"'
_DIGEST: Final = b',"digest":"'
_SUFFIX: Final = len(_DIGEST) + 64 + 2  # ,"digest":"<hex>"}
_SEALED: Final = len(_SEAL) + 64 + 1  # ,"seal":"<hex>"


def placeholder(reason: str) -> str:
    """The text a redacted canister holds in place of its content."""
    return f"[redacted: {reason}]"


def line_document(line: bytes) -> dict[str, Any]:
    """The JSON object of a log line; ``ValueError`` when it is none.

    A line holding integers past 64 bits (it starts with ``"bigint"``) and one
    orjson refuses (escaped lone surrogates) are read by the standard library.
    """
    try:
        if line.startswith(b'{"bigint":1,'):
            document = json.loads(line)
        else:
            try:
                document = orjson.loads(line)
            except orjson.JSONDecodeError:
                document = json.loads(line)
    except RecursionError:
        raise ValueError("the record nests too deep") from None
    if type(document) is not dict:
        raise ValueError("not a log record")
    return document


def tombstone(line: bytes, reason: str, at: datetime) -> bytes:
    """Return the tombstone of a stored record (``line``, with or without its
    newline); raise ``ValueError`` when it cannot be read."""
    line = line.rstrip(b"\n")
    document = line_document(line)
    record = document.get("canister")
    version = document.get("v")
    if version != FORMAT_VERSION and type(record) is dict:
        record = migrate(
            {"format": "canisters.canister", "version": version, "canister": record}
        )["canister"]
    if type(record) is not dict or len(line) < _SUFFIX:
        raise ValueError("not a log record")
    digest = line[-_SUFFIX + len(_DIGEST) : -2]
    note = {"reason": reason, "at": at.isoformat()}
    skeleton = {key: record[key] for key in _KEPT if key in record}
    if type(skeleton.get("step")) is int and not -(2**63) <= skeleton["step"] < 2**63:
        del skeleton["step"]  # a record holding it starts otherwise: left out
    if record.get("role") in _WITH_CONTENT:
        skeleton["content"] = [{"type": "text", "text": placeholder(reason)}]
    skeleton["extras"] = {REDACTED: note}
    try:
        body = orjson.dumps(
            {
                "seq": document.get("seq"),
                "prev": document.get("prev"),
                "v": FORMAT_VERSION,
                "canister": skeleton,
                REDACTED: note,
            }
        )
    except (TypeError, orjson.JSONEncodeError) as error:  # a lone surrogate
        raise ValueError(f"its skeleton cannot be written: {error}") from None
    seal = hashlib.sha256(body).hexdigest().encode("ascii")
    return b"".join((body[:-1], _SEAL, seal, b'"', _DIGEST, digest, b'"}\n'))


def read_tombstone(
    conversation_id: str, line: bytes, document: Mapping[str, Any]
) -> Redaction | str:
    """Return what a tombstone says, or why it is not a sound one."""
    end = len(line)
    if end and line[end - 1] == 0x0A:
        end -= 1
    start = end - _SUFFIX - _SEALED
    if start < 1 or line[start : start + len(_SEAL)] != _SEAL:
        return "the record is neither a record nor a tombstone (edited)"
    seal = line[start + len(_SEAL) : start + len(_SEAL) + 64].decode("ascii", "replace")
    hasher = hashlib.sha256(memoryview(line)[:start])
    hasher.update(b"}")
    if hasher.hexdigest() != seal:
        return "the tombstone does not match its seal (edited)"
    note = document.get(REDACTED)
    canister = document.get("canister")
    if type(note) is not dict or type(canister) is not dict:
        return "the tombstone is malformed"
    try:
        return Redaction(
            conversation_id,
            str(canister["id"]),
            str(canister["role"]),
            int(document["seq"]),
            str(note["reason"]),
            fromisoformat(str(note["at"])),
            line[end - 66 : end - 2].decode("ascii"),
        )
    except (KeyError, TypeError, ValueError):
        return "the tombstone is malformed"


def redaction_of(canister: object) -> Mapping[str, Any] | None:
    """Return the note of a redacted canister (``reason``, ``at``), else ``None``."""
    extras = getattr(canister, "extras", None)
    note = extras.get(REDACTED) if isinstance(extras, Mapping) else None
    return note if isinstance(note, Mapping) and "reason" in note else None
