"""Migrating documents of older format versions (part of
:mod:`canisters.serialization`)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ._formats import FORMAT_VERSION
from ._serial_codec import _dumps
from ._serial_values import Record
from .exceptions import SerializationError, _excerpt

# --------------------------------------------------------------------------- #
# Migrations


_MIGRATIONS: dict[int, Callable[[Record], Record]] = {}


def register_migration(
    from_version: int,
) -> Callable[[Callable[[Record], Record]], Callable[[Record], Record]]:
    """Register a function that upgrades a document from ``from_version``.

    The function receives the whole document (a dict with ``format``,
    ``version`` and its payload) and returns it in the next version's shape; the
    version number is updated for it.
    """

    def decorator(migration: Callable[[Record], Record]) -> Callable[[Record], Record]:
        _MIGRATIONS[from_version] = migration
        return migration

    return decorator


def migrate(document: Record) -> Record:
    """Upgrade ``document`` to :data:`FORMAT_VERSION` through registered migrations.

    A document a migration cannot read raises
    :class:`~canisters.SerializationError` naming the path of the bad field.
    """
    if not isinstance(document, dict):
        raise SerializationError(
            f"expected a document object, got {type(document).__name__}"
        )
    version = document.get("version")
    if type(version) is not int:
        raise SerializationError(
            f"expected an integer format version, got {_excerpt(version)}", "$.version"
        )
    if version > FORMAT_VERSION:
        raise SerializationError(
            f"document version {version} is newer than this library's "
            f"({FORMAT_VERSION}); upgrade canisters",
            "$.version",
        )
    while version < FORMAT_VERSION:
        migration = _MIGRATIONS.get(version)
        if migration is None:
            raise SerializationError(
                f"no migration from document version {version}", "$.version"
            )
        try:
            document = migration(document)
        except SerializationError:
            raise
        except Exception as error:  # an application's migration, say
            raise SerializationError(
                f"migration from version {version} failed: "
                f"{type(error).__name__}: {_excerpt(str(error))}"
            ) from error
        if not isinstance(document, dict):
            raise SerializationError(
                f"migration from version {version} returned "
                f"{type(document).__name__}, not a document object"
            )
        version += 1
        document["version"] = version
    return document


_V1_ROLES = {"system": "supervisor", "user": "user", "assistant": "assistant"}


def _v1_part(part: Any) -> Any:
    if not isinstance(part, dict):
        return part  # the structure hooks say what is wrong, and where
    part = dict(part)
    kind = part.pop("kind", None)
    if kind == "text":
        part["type"] = "text"
    elif kind == "media":
        modality = part.pop("modality", None)
        part["type"] = "file" if modality == "document" else modality
        for old, new in (("mime", "mime_type"), ("prompt_hint", "hint")):
            if old in part:
                part[new] = part.pop(old)
    return part


def _v1_canister(record: Any) -> Any:
    """Upgrade one version-1 (pre-release) message record."""
    if not isinstance(record, dict):
        return record
    record = dict(record)
    for old, new in (("step_num", "step"), ("actor", "policy")):
        if old in record:
            record[new] = record.pop(old)
    kind = record.pop("kind", None)
    if kind == "parts":
        hint = record.pop("role_hint_for_llm", None) or "user"
        record["role"] = _V1_ROLES.get(hint, hint) if isinstance(hint, str) else hint
        parts = record.pop("parts", [])
        if not isinstance(parts, list):
            raise SerializationError(
                f"expected a list of parts, got {type(parts).__name__}", "$.parts"
            )
        record["content"] = [_v1_part(part) for part in parts]
    elif kind == "option_call":
        record["role"] = "invocation"
        record["name"] = record.pop("option_name", None)
    elif kind == "option_result":
        record["role"] = "result"
        record["name"] = record.pop("option_name", None)
        value = record.pop("result", None)
        if record.pop("is_error", False):
            record["error"] = {
                "code": record.pop("error_type", None) or "UNKNOWN",
                "message": record.pop("error_message", None) or "",
                "retryable": bool(record.pop("retryable", False)),
            }
        for stale in ("error_type", "error_message", "retryable"):
            record.pop(stale, None)
        if value is None:
            record["content"] = []
        elif isinstance(value, str):
            record["content"] = [{"type": "text", "text": value}]
        else:
            record["content"] = [
                {
                    "type": "text",
                    "text": _dumps(value),
                    "mime_type": "application/json",
                }
            ]
    return record


@register_migration(1)
def _from_version_1(document: Record) -> Record:
    """Version 1 (pre-release) had other names for the message kinds, and
    ``step_num`` and ``actor`` fields."""
    if "canisters" in document:
        records = document["canisters"]
        if not isinstance(records, list):
            raise SerializationError(
                f"expected a list of canisters, got {type(records).__name__}",
                "$.canisters",
            )
        upgraded = []
        for index, record in enumerate(records):
            try:
                upgraded.append(_v1_canister(record))
            except SerializationError as error:
                raise error.within(f"[{index}]").within("canisters") from error
        document["canisters"] = upgraded
    if "canister" in document:
        try:
            document["canister"] = _v1_canister(document["canister"])
        except SerializationError as error:
            raise error.within("canister") from error
    if "content" in document:
        document["content"] = _v1_part(document["content"])
    return document
