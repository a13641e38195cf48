"""Appends safe to retry, shared by the backends: a canister id names one canister
in a conversation. The key each backend's canister-id index holds, and the
screen that drops from an append the canisters a conversation holds already and
refuses a different canister under a taken id.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import orjson

from ..exceptions import (
    CanistersError,
    DuplicateCanister,
)
from ..serialization import (
    FORMAT_VERSION,
    migrate,
)
from ._chain import encode_record, record_link
from ._common import _BIGINT

# --------------------------------------------------------------------------- #
# Appends safe to retry: a canister id names one canister in a conversation


def index_key(canister_id: str) -> str:
    """The key the backends' canister-id indexes hold ``canister_id`` under.

    The id itself, unless it cannot be written as UTF-8 text (a lone surrogate,
    which a document keeps), holds a NUL (which PostgreSQL text cannot hold) or
    starts with U+0001: then U+0001 followed by its ASCII JSON form. Every id
    has one key and no two ids share one.
    """
    if "\x00" in canister_id or canister_id.startswith("\x01"):
        return "\x01" + json.dumps(canister_id)
    try:
        canister_id.encode("utf-8")
    except UnicodeEncodeError:
        return "\x01" + json.dumps(canister_id)
    return canister_id


def record_id(record: dict[str, Any]) -> str | None:
    """Return the index key (:func:`index_key`) of the canister id a dehydrated
    record holds (``None`` if none)."""
    found = record.get("id")
    return index_key(found) if type(found) is str else None


def line_id(line: bytes) -> str | None:
    """Return the index key (:func:`index_key`) of the canister id a stored log
    line holds (``None`` if unreadable)."""
    try:
        document = json.loads(line) if line.startswith(_BIGINT) else orjson.loads(line)
    except (ValueError, RecursionError):
        # orjson refuses the escaped lone surrogates a document may hold.
        try:
            document = json.loads(line)
        except (ValueError, RecursionError):
            return None
    canister = document.get("canister") if type(document) is dict else None
    return record_id(canister) if type(canister) is dict else None


def _stored_canister(line: bytes) -> Any:
    """The canister member of a stored line, migrated to the current format."""
    try:
        document = json.loads(line)
        if type(document) is not dict:
            return None
        record = document.get("canister")
        version = document.get("v")
        if version != FORMAT_VERSION:
            record = migrate(
                {"format": "canisters.canister", "version": version, "canister": record}
            )["canister"]
        return record
    except (ValueError, RecursionError, CanistersError):
        return None


def same_record(line: bytes, record: dict[str, Any]) -> bool:
    """Tell whether the stored ``line`` records the canister of ``record``.

    The record is encoded where the line sits (its ``seq`` and ``prev``) and the
    bytes compared; a line of an older format is compared as JSON values after
    migration.
    """
    line = line.rstrip(b"\n")
    link = record_link(line)
    if link is not None:
        encoded, _ = encode_record(link[0], link[1], record)
        if encoded[:-1] == line:
            return True
    stored = _stored_canister(line)
    if stored is None:
        return False
    encoded, _ = encode_record(0, "", record)
    return bool(stored == json.loads(encoded)["canister"])


def screen(
    conversation_id: str,
    records: list[dict[str, Any]],
    stored: Callable[[list[str]], dict[str, tuple[str, bytes]]],
) -> list[dict[str, Any]]:
    """Return the records of an append that the conversation does not hold yet.

    ``stored`` maps the canister ids asked for to ``(where, line)`` of the
    record holding each in the conversation (its fork prefix included), found
    through the backend's index. A record whose canister is there already, or
    earlier in the same append, is dropped; one whose id is taken by a different
    canister raises :class:`~canisters.DuplicateCanister`, before anything is
    written.
    """
    wanted = [found for found in map(record_id, records) if found is not None]
    if not wanted:
        return records
    held = stored(list(dict.fromkeys(wanted)))
    fresh: list[dict[str, Any]] = []
    batch: dict[str, dict[str, Any]] = {}
    for record in records:
        canister_id = record_id(record)
        if canister_id is None:
            fresh.append(record)
            continue
        found = held.get(canister_id)
        if found is not None:
            if not same_record(found[1], record):
                raise DuplicateCanister(conversation_id, canister_id, found[0])
            continue
        earlier = batch.get(canister_id)
        if earlier is not None:
            if encode_record(0, "", earlier)[0] != encode_record(0, "", record)[0]:
                raise DuplicateCanister(
                    conversation_id, canister_id, "earlier in the same append"
                )
            continue
        batch[canister_id] = record
        fresh.append(record)
    return fresh
