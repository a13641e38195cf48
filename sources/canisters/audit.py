"""An audit trail of decisions, and a flat log projection of any canister.

An :class:`AuditLog` records why things happened: which tool call was approved,
which permission was denied, which answer was filtered. Each entry has an id, a
timestamp, the id of the canister it is about, a decision and JSON-compatible
details::

    log = AuditLog(store, "run-42")             # beside a conversation
    log = AuditLog("audit/run-42.jsonl")        # or standalone, at a path
    log.record(invocation, "tool_call_approved", tool="fs.read", by="policy")
    log.export_jsonl()

A log beside a conversation lives in the store, next to the conversation's own
records; a standalone log is a JSONL file, one entry per line. Either way
appends are serialized by a file lock (and a thread lock), so any number of
threads and processes may record into one log at once; each entry is written
with a single append and forced to disk before :meth:`AuditLog.record`
returns. A log is append-only: entries are never rewritten.

:func:`log_view` projects a canister to a flat dict of strings, numbers and
booleans, fit for structured logging.
"""

from __future__ import annotations

import base64
import logging
import os
import threading
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from datetime import datetime
from pathlib import Path
from typing import Any, Final, Literal, Protocol

import attrs
import orjson
from typing_extensions import assert_never

from ._base64 import Encoded
from ._compat import fromisoformat
from ._frozen import EMPTY, freeze
from .canisters import new_id, now
from .exceptions import ModelError, SerializationError, StorageError
from .protocols import Canister, Role
from .storage import Store

try:
    import fcntl
except ImportError:  # pragma: no cover - not POSIX
    fcntl = None  # type: ignore[assignment]

__all__ = [
    "AUDIT_FILE",
    "AUDIT_FORMAT",
    "AUDIT_VERSION",
    "AuditEntry",
    "AuditLog",
    "log_view",
]

_logger: Final = logging.getLogger("canisters.audit")

AUDIT_FILE: Final = "audit"
"""The name of the side file that holds a conversation's audit log in a store."""

AUDIT_FORMAT: Final = "canisters.audit"
"""The ``format`` of an :meth:`AuditLog.export_json` document."""
AUDIT_VERSION: Final = 1
"""The ``version`` of the :meth:`AuditLog.export_json` documents this module writes."""


@attrs.frozen
class AuditEntry:
    """One decision in an audit log."""

    id: str
    """Unique id of the entry."""
    timestamp: datetime
    """When the decision was recorded; timezone-aware UTC."""
    canister_id: str | None
    """The canister the decision is about, if any."""
    decision: str
    """What was decided, as a short stable label (``"tool_call_approved"``)."""
    details: Mapping[str, Any] = attrs.field(default=EMPTY, converter=freeze)
    """Context of the decision, JSON-compatible."""

    def as_dict(self) -> dict[str, Any]:
        """Return the entry as a JSON-compatible dict."""
        return {
            "id": self.id,
            "timestamp": self.timestamp.isoformat(),
            "canister_id": self.canister_id,
            "decision": self.decision,
            "details": dict(self.details),
        }

    @classmethod
    def from_dict(cls, record: Mapping[str, Any]) -> AuditEntry:
        """Read an entry written by :meth:`as_dict`."""
        try:
            entry_id = record["id"]
            timestamp = fromisoformat(record["timestamp"])
            canister_id = record.get("canister_id")
            decision = record["decision"]
            details = record.get("details", {})
        except (KeyError, TypeError, ValueError) as error:
            raise SerializationError(f"not an audit entry: {error!r}") from error
        if (
            not isinstance(entry_id, str)
            or not isinstance(decision, str)
            or not isinstance(details, dict)
            or (canister_id is not None and not isinstance(canister_id, str))
            or timestamp.tzinfo is None
        ):
            raise SerializationError("not an audit entry: bad field types")
        return cls(entry_id, timestamp, canister_id, decision, details)


def _default(value: Any) -> Any:
    if isinstance(getattr(value, "role", None), Role):
        return log_view(value)
    if attrs.has(type(value)):
        return attrs.asdict(value)
    if isinstance(value, Mapping):
        return dict(value)
    if isinstance(value, (set, frozenset)):
        return sorted(value, key=repr)
    if isinstance(value, (bytes, bytearray, memoryview)):
        return base64.b64encode(bytes(value)).decode("ascii")
    if isinstance(value, Encoded):  # media data kept as the base64 it came in
        return value.text
    raise TypeError(f"{type(value).__qualname__} is not JSON-serializable")


def _encode(entry: Mapping[str, Any]) -> bytes:
    try:
        return orjson.dumps(entry, default=_default, option=orjson.OPT_NON_STR_KEYS)
    except TypeError as error:
        raise SerializationError(f"audit details: {error}", "$.details") from error


# Where entries go --------------------------------------------------------------


class _Sink(Protocol):
    def append(self, line: bytes) -> None: ...

    def lines(self) -> list[bytes]: ...


class _MemorySink:
    def __init__(self) -> None:
        self._lines: list[bytes] = []

    def append(self, line: bytes) -> None:
        self._lines.append(line)

    def lines(self) -> list[bytes]:
        return list(self._lines)


@contextmanager
def _locked(fd: int, exclusive: bool) -> Iterator[None]:
    if fcntl is None:  # pragma: no cover - not POSIX
        yield
        return
    fcntl.flock(fd, fcntl.LOCK_EX if exclusive else fcntl.LOCK_SH)
    try:
        yield
    finally:
        fcntl.flock(fd, fcntl.LOCK_UN)


class _FileSink:
    """A JSONL file appended under an exclusive ``flock``."""

    def __init__(self, path: Path, fsync: bool) -> None:
        self.path = path
        self.fsync = fsync

    def append(self, line: bytes) -> None:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        flags = os.O_RDWR | os.O_APPEND | os.O_CREAT | getattr(os, "O_BINARY", 0)
        fd = os.open(self.path, flags, 0o644)
        try:
            with _locked(fd, exclusive=True):
                size = os.fstat(fd).st_size
                # A writer killed mid-line left a torn tail: end it so this entry
                # starts on a line of its own.
                if size and os.pread(fd, 1, size - 1) != b"\n":
                    line = b"\n" + line
                os.write(fd, line + b"\n")
                if self.fsync:
                    os.fsync(fd)
        finally:
            os.close(fd)

    def lines(self) -> list[bytes]:
        try:
            fd = os.open(self.path, os.O_RDONLY | getattr(os, "O_BINARY", 0))
        except FileNotFoundError:
            return []
        try:
            with _locked(fd, exclusive=False), os.fdopen(os.dup(fd), "rb") as file:
                data = file.read()
        finally:
            os.close(fd)
        lines = data.split(b"\n")
        if lines and lines[-1]:
            _logger.warning("%s: ignoring a torn last line", self.path)
        return lines[:-1]


class _StoreSink:
    """A side file beside a conversation, through the store's side-file hook."""

    def __init__(self, store: Store, conversation_id: str, name: str) -> None:
        self.sidecar = store.sidecar(conversation_id, name)

    def append(self, line: bytes) -> None:
        self.sidecar.append_line(line.decode("utf-8"))

    def lines(self) -> list[bytes]:
        return [line.encode("utf-8") for line in self.sidecar.read_lines()]


# The log -----------------------------------------------------------------------


class AuditLog:
    """An append-only audit trail, safe with concurrent threads and processes.

    ``AuditLog(store, conversation_id)`` keeps the log beside a conversation in a
    store (the side file :data:`AUDIT_FILE`); ``AuditLog(path)`` keeps it in a
    JSONL file of its own, created on the first entry; ``AuditLog()`` keeps it in
    memory. ``durability="flush"`` skips the ``fsync`` of a standalone file
    (entries then survive the process being killed, not the machine losing
    power).
    """

    def __init__(
        self,
        target: Any = None,
        conversation_id: str | None = None,
        *,
        durability: Literal["fsync", "flush"] = "fsync",
    ) -> None:
        self._lock = threading.Lock()
        self._sink: _Sink
        if target is None:
            self._sink = _MemorySink()
            self._where = "memory"
        elif isinstance(target, (str, os.PathLike)):
            if conversation_id is not None:
                raise StorageError(
                    "a standalone audit log takes a path and no conversation id"
                )
            path = Path(target)
            self._sink = _FileSink(path, fsync=durability == "fsync")
            self._where = str(path)
        else:
            if conversation_id is None:
                raise StorageError("an audit log in a store needs a conversation id")
            self._sink = _StoreSink(target, conversation_id, AUDIT_FILE)
            self._where = f"conversation {conversation_id!r}"

    def __repr__(self) -> str:
        return f"AuditLog({self._where})"

    def record(
        self, canister_or_id: Canister | str | None, decision: str, /, **details: Any
    ) -> AuditEntry:
        """Append one decision about a canister (or its id) and return the entry.

        ``details`` must be JSON-compatible; canisters in it are stored as their
        :func:`log_view`, attrs instances as dicts, bytes as base64. The entry is
        durable when this returns.
        """
        if canister_or_id is None or isinstance(canister_or_id, str):
            canister_id = canister_or_id
        elif isinstance(getattr(canister_or_id, "id", None), str):
            canister_id = canister_or_id.id
        else:
            raise SerializationError(
                "an audit entry names a canister, a canister id or None, got "
                f"{type(canister_or_id).__name__}"
            )
        if not isinstance(decision, str) or not decision:
            raise SerializationError("an audit decision is a non-empty string")
        record = {
            "id": new_id(),
            "timestamp": now().isoformat(),
            "canister_id": canister_id,
            "decision": decision,
            "details": details,
        }
        line = _encode(record)
        entry = AuditEntry.from_dict(orjson.loads(line))
        with self._lock:
            self._sink.append(line)
        return entry

    def entries(
        self, *, canister_id: str | None = None, decision: str | None = None
    ) -> tuple[AuditEntry, ...]:
        """Every entry, oldest first, optionally only those matching both filters.

        Lines that cannot be read (a torn last line after a crash) are skipped
        and reported through ``logging``.
        """
        with self._lock:
            lines = self._sink.lines()
        found: list[AuditEntry] = []
        for number, line in enumerate(lines, 1):
            if not line.strip():
                continue
            try:
                entry = AuditEntry.from_dict(orjson.loads(line))
            except (orjson.JSONDecodeError, SerializationError) as error:
                _logger.warning("%s line %d: skipped: %s", self, number, error)
                continue
            if canister_id is not None and entry.canister_id != canister_id:
                continue
            if decision is not None and entry.decision != decision:
                continue
            found.append(entry)
        return tuple(found)

    def __len__(self) -> int:
        return len(self.entries())

    def __iter__(self) -> Iterator[AuditEntry]:
        return iter(self.entries())

    def export_json(self) -> str:
        """Return the whole log as one JSON document."""
        document = {
            "format": AUDIT_FORMAT,
            "version": AUDIT_VERSION,
            "entries": [entry.as_dict() for entry in self.entries()],
        }
        return orjson.dumps(document).decode()

    def export_jsonl(self) -> str:
        """Return the log as JSONL, one entry per line."""
        return "".join(
            orjson.dumps(entry.as_dict()).decode() + "\n" for entry in self.entries()
        )


# Log projection ----------------------------------------------------------------


_MEDIA: Final = frozenset(("image", "audio", "video", "file"))


def _clip(text: str, limit: int | None) -> str:
    if limit is None or len(text) <= limit:
        return text
    return text[:limit] + "…"


def _content_view(
    view: dict[str, Any], content: tuple[Any, ...], limit: int | None
) -> None:
    texts = [part.text for part in content if part.type == "text"]
    view["parts"] = len(content)
    if content:
        view["content_types"] = ",".join(part.type for part in content)
    if texts:
        view["text"] = _clip("\n".join(texts), limit)
    media = sum(1 for part in content if part.type in _MEDIA)
    if media:
        view["media"] = media
    reasoning = sum(1 for part in content if part.type == "reasoning")
    if reasoning:
        view["reasoning_parts"] = reasoning


def log_view(canister: Canister, *, text_limit: int | None = 200) -> dict[str, Any]:
    """Project a canister to a flat dict for logs.

    Values are strings, numbers and booleans only; fields that are unset are
    left out. Text is joined and clipped to ``text_limit`` characters (``None``
    keeps it whole); reasoning is counted, never copied; invocation arguments
    become one JSON string.
    """
    role = getattr(canister, "role", None)
    if not isinstance(role, Role):
        raise ModelError(f"log_view takes a canister, got {type(canister).__name__}")
    view: dict[str, Any] = {
        "id": canister.id,
        "role": role.value,
        "timestamp": canister.timestamp.isoformat(),
    }
    for key in ("parent_id", "trace_id", "policy", "step"):
        value = getattr(canister, key)
        if value is not None:
            view[key] = value
    metadata = canister.metadata
    if metadata is not None:
        for key in (
            "model",
            "latency_ms",
            "cache_hit",
            "retries",
            "quality",
            "finish_reason",
        ):
            value = getattr(metadata, key)
            if value is not None:
                view[key] = value
        if metadata.usage is not None:
            view["input_tokens"] = metadata.usage.input_tokens
            view["output_tokens"] = metadata.usage.output_tokens
    match role:
        case Role.User | Role.Assistant | Role.Supervisor:
            _content_view(view, canister.content, text_limit)  # type: ignore[attr-defined]
        case Role.Document:
            _content_view(view, canister.content, text_limit)  # type: ignore[attr-defined]
            for key in ("title", "document_id"):
                value = getattr(canister, key)
                if value is not None:
                    view[key] = value
        case Role.Invocation:
            view["name"] = canister.name  # type: ignore[attr-defined]
            view["invocation_id"] = canister.invocation_id  # type: ignore[attr-defined]
            arguments = orjson.dumps(
                dict(canister.arguments),  # type: ignore[attr-defined]
                default=_default,
                option=orjson.OPT_NON_STR_KEYS | orjson.OPT_SORT_KEYS,
            ).decode()
            view["arguments"] = _clip(arguments, text_limit)
        case Role.Result:
            view["name"] = canister.name  # type: ignore[attr-defined]
            view["invocation_id"] = canister.invocation_id  # type: ignore[attr-defined]
            _content_view(view, canister.content, text_limit)  # type: ignore[attr-defined]
            error = canister.error  # type: ignore[attr-defined]
            view["is_error"] = error is not None
            if error is not None:
                view["error_code"] = error.code
                view["error_message"] = _clip(error.message, text_limit)
                view["retryable"] = error.retryable
        case _:
            assert_never(role)
    return view
