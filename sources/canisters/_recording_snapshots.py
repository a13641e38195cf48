"""A conversation, its media and side files as one document:
:func:`~canisters.recording.snapshot` and :func:`~canisters.recording.restore`
(part of :mod:`canisters.recording`)."""

from __future__ import annotations

import base64
import binascii
import hashlib
from collections.abc import Callable, Iterable
from typing import Any, Final

import attrs

from . import _base64
from ._identifiers import check_id, check_line
from ._recording_recorder import (
    CARRIED_SIDE_FILES,
    PROMPT_KEY_FILE,
    SNAPSHOT_FORMAT,
    SNAPSHOT_VERSION,
    _prompt_key_line,
    _side_write,
    recorded_prompt_key,
)
from .canisters import new_id
from .conversation import Conversation
from .exceptions import (
    ConversationNotFound,
    ModelError,
    SerializationError,
    SnapshotRestoreError,
    StorageError,
)
from .protocols import Canister
from .serialization import MAX_DEPTH, _document, _dumps, _loads, from_json
from .storage import Store

# Snapshots ---------------------------------------------------------------------


def _content_ids(conversation: Iterable[Canister]) -> list[str]:
    seen: dict[str, None] = {}
    for canister in conversation:
        for part in getattr(canister, "content", ()):
            content_id = getattr(part, "content_id", None)
            if isinstance(content_id, str):
                seen.setdefault(content_id, None)
    return list(seen)


def snapshot(store: Store, conversation_id: str) -> str:
    """Return one JSON document holding a conversation and the blobs it refers to.

    The document also carries the conversation id and its recorded prompt key;
    :func:`restore` reads it back into any store.
    """
    if not store.exists(conversation_id):
        raise ConversationNotFound(conversation_id)
    conversation = store.load(conversation_id)
    # The document is handed to _dumps, which releases it before its bytes
    # become text, so no local keeps it (or the base64 in it) alive.
    return _dumps(_snapshot(store, conversation_id, conversation), _SNAPSHOT_DEPTH)


def _snapshot(
    store: Store, conversation_id: str, conversation: Conversation
) -> dict[str, Any]:
    """The document :func:`snapshot` writes. The conversation's document is the
    records :func:`~canisters.to_json` writes, not its text read back: written
    once, as the rest, with its media's base64 as orjson fragments."""
    return {
        "format": SNAPSHOT_FORMAT,
        "version": SNAPSHOT_VERSION,
        "conversation_id": conversation_id,
        "prompt_key": recorded_prompt_key(store, conversation_id),
        # Written as documents are (NaN, lone surrogates and integers beyond
        # 64 bits kept exactly), not by orjson alone: _dumps does.
        "conversation": _document(conversation),
        "content": {
            content_id: _base64.encode(store.content.get(content_id))
            for content_id in _content_ids(conversation)
        },
        "side_files": {
            name: lines
            for name in CARRIED_SIDE_FILES
            if (lines := store.sidecar(conversation_id, name).read_lines())
        },
    }


# A snapshot holds the conversation document one level below its root (see
# serialization.MAX_DEPTH).
_SNAPSHOT_DEPTH: Final = MAX_DEPTH + 1


def _restore_error(message: str) -> SnapshotRestoreError:
    return SnapshotRestoreError(f"cannot restore snapshot: {message}")


@attrs.frozen
class _Snapshot:
    conversation_id: str
    prompt_key_line: str | None
    conversation: Conversation
    blobs: dict[str, bytes]
    side_files: dict[str, list[str]]


def _blobs(content: object, conversation: Conversation) -> dict[str, bytes]:
    if not isinstance(content, dict):
        raise _restore_error("$.content must be an object")
    blobs: dict[str, bytes] = {}
    for content_id, encoded in content.items():
        where = f"$.content[{content_id!r}]"
        try:
            data = base64.b64decode(encoded, validate=True)
        except (binascii.Error, TypeError, ValueError) as error:
            raise _restore_error(f"{where}: {error}") from error
        if f"sha256:{hashlib.sha256(data).hexdigest()}" != content_id:
            raise _restore_error(f"{where}: the bytes do not match their id")
        blobs[content_id] = data
    missing = [c for c in _content_ids(conversation) if c not in blobs]
    if missing:
        raise _restore_error(f"blobs missing from $.content: {', '.join(missing)}")
    return blobs


def _side_files(value: object) -> dict[str, list[str]]:
    if not isinstance(value, dict) or not all(
        isinstance(name, str)
        and isinstance(lines, list)
        and all(isinstance(line, str) for line in lines)
        for name, lines in value.items()
    ):
        raise _restore_error("$.side_files must map names to lists of lines")
    for name, lines in value.items():
        _checked(check_id, name, "side-file name", where=f"$.side_files[{name!r}]")
        for number, line in enumerate(lines):
            _checked(check_line, line, where=f"$.side_files[{name!r}][{number}]")
    return value


def _checked(check: Callable[..., object], *args: object, where: str) -> None:
    """Run a store's check on a value of the snapshot, as a restore error."""
    try:
        check(*args)
    except (StorageError, ModelError) as error:
        raise _restore_error(f"{where}: {error}") from None


def _read_snapshot(text: str | bytes) -> _Snapshot:
    try:
        document = _loads(text, limit=_SNAPSHOT_DEPTH)
    except SerializationError as error:
        raise _restore_error(error.reason) from error
    if not isinstance(document, dict) or document.get("format") != SNAPSHOT_FORMAT:
        raise _restore_error(f"not a {SNAPSHOT_FORMAT} document")
    if document.get("version") != SNAPSHOT_VERSION:
        raise _restore_error(f"unsupported version {document.get('version')!r}")
    conversation_id = document.get("conversation_id")
    prompt_key = document.get("prompt_key")
    if not isinstance(conversation_id, str) or not conversation_id:
        raise _restore_error("$.conversation_id must be a non-empty string")
    _checked(check_id, conversation_id, where="$.conversation_id")
    if prompt_key is not None and not isinstance(prompt_key, str):
        raise _restore_error("$.prompt_key must be a string or null")
    prompt_key_line = None
    if prompt_key is not None:
        try:
            prompt_key_line = check_line(_prompt_key_line(prompt_key))
        except (SerializationError, ModelError) as error:
            raise _restore_error(f"$.prompt_key: {error}") from None
    try:
        conversation = from_json(_dumps(document.get("conversation")))
    except SerializationError as error:
        raise _restore_error(f"$.conversation: {error}") from error
    if not isinstance(conversation, Conversation) or not conversation:
        raise _restore_error("$.conversation must be a non-empty conversation")
    return _Snapshot(
        conversation_id,
        prompt_key_line,
        conversation,
        _blobs(document.get("content", {}), conversation),
        _side_files(document.get("side_files", {})),
    )


def restore(
    store: Store, text: str | bytes, *, conversation_id: str | None = None
) -> str:
    """Write a :func:`snapshot` document into ``store`` and return the new id.

    The conversation keeps the id it had when ``conversation_id`` is not given
    and that id is free in ``store``; otherwise it gets a new id. Asking for a
    ``conversation_id`` that already exists, or giving a document that is not a
    readable snapshot (bad JSON, bad canisters, blobs that do not match their
    ids, a side-file line holding a lone surrogate, which a store cannot write
    as UTF-8 text), raises :class:`~canisters.SnapshotRestoreError` before
    anything is written. A lone surrogate in the conversation or the prompt key
    is kept exactly, as documents keep it. The blobs go in first and the
    canisters last, so a restore cut short leaves no conversation behind.
    """
    read = _read_snapshot(text)
    if conversation_id is not None:
        _checked(check_id, conversation_id, where="conversation_id")
    if conversation_id is None:
        free = not store.exists(read.conversation_id)
        target = read.conversation_id if free else new_id()
    elif store.exists(conversation_id):
        raise _restore_error(f"conversation {conversation_id!r} already exists")
    else:
        target = conversation_id
    for data in read.blobs.values():
        store.content.put(data)
    if read.prompt_key_line is not None:
        _side_write(store, target, PROMPT_KEY_FILE, read.prompt_key_line)
    for name, lines in read.side_files.items():
        sidecar = store.sidecar(target, name)
        for line in lines:
            sidecar.append_line(line)
    store.extend(target, read.conversation)
    return target
