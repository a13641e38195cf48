"""The values the stores return: verifications, redactions, counts, reports."""

from __future__ import annotations

from datetime import datetime

import attrs

__all__ = [
    "GarbageReport",
    "IntegrityProblem",
    "Redaction",
    "StoreStats",
    "Verification",
]


@attrs.frozen
class Redaction:
    """A canister whose content was erased, its place in the chain kept."""

    conversation_id: str
    """The conversation redacted or verified (a fork shares the redactions of
    the prefix it shares)."""
    canister_id: str
    """The id of the canister erased."""
    kind: str
    """Its role: ``"user"``, ``"assistant"``, ..."""
    seq: int
    """Its record's number in the log."""
    reason: str
    """Why it was erased, as given to :meth:`~canisters.storage.Store.redact`."""
    at: datetime
    """When it was erased (UTC)."""
    digest: str
    """The digest of the record erased, which the chain still links."""


@attrs.frozen
class IntegrityProblem:
    """One thing :meth:`Store.verify` found wrong with a stored conversation."""

    conversation_id: str
    """The conversation whose log holds the record."""
    where: str
    """Where the record is: ``line 12`` (file backend) or ``seq 11`` (SQLite)."""
    code: str
    """``digest`` (record edited), ``chain`` (record removed, inserted or
    reordered), ``unreadable``, ``fork-point``, ``content`` (a blob missing or
    corrupt), ``canister`` (the record does not structure) or ``head`` (the log
    no longer reaches the head the store keeps apart from it: records removed
    from its end)."""
    message: str
    """What is wrong, in words."""

    def __str__(self) -> str:
        return f"{self.conversation_id} {self.where}: {self.message} ({self.code})"


@attrs.frozen
class Verification:
    """What :meth:`Store.verify` found: the chain's extent and every problem."""

    conversation_id: str
    """The conversation verified."""
    records: int
    """How many records the chain holds, fork prefix included."""
    head: str
    """Digest of the last record (empty for an empty conversation).

    The store keeps each conversation's head apart from its log and ``verify``
    compares them, which reveals records cut from the end; someone able to
    rewrite both can still hide it, so keep :meth:`Store.head` elsewhere too
    (the audit trail, another system) to compare against."""
    problems: tuple[IntegrityProblem, ...] = ()
    """Every problem found, in log order."""
    torn_tail: bool = False
    """Whether an unfinished final line (a crash mid-append) was ignored."""
    redactions: tuple[Redaction, ...] = ()
    """Every record whose content was erased (:meth:`Store.redact`), in log
    order: its chain link holds, and it is not a problem."""

    @property
    def ok(self) -> bool:
        """Whether the chain is intact and every referenced blob is present."""
        return not self.problems


@attrs.frozen
class StoreStats:
    """Counts and sizes of a store, for ``canisters store stats``."""

    conversations: int
    """Conversations in the store (forks included)."""
    records: int
    """Records in every log (a fork counts only what it adds)."""
    log_bytes: int
    """Bytes of every conversation log."""
    blobs: int
    """Blobs in the content store."""
    blob_bytes: int
    """Bytes of every blob."""
    references: int = 0
    """References from log records to stored blobs (a blob named twice in one
    record counts once)."""
    referenced_bytes: int = 0
    """Bytes those references name: what the blobs would take if every record
    held its own copy."""

    @property
    def dedup_ratio(self) -> float:
        """``referenced_bytes / blob_bytes``: how many times deduplication shrank
        the blobs (1.0 when nothing is shared or nothing is stored)."""
        if not self.blob_bytes or not self.referenced_bytes:
            return 1.0
        return self.referenced_bytes / self.blob_bytes


@attrs.frozen
class GarbageReport:
    """What :meth:`Store.collect_garbage` removed (or would remove)."""

    removed: tuple[str, ...]
    """Content ids of the blobs removed (or that a dry run would remove)."""
    freed_bytes: int
    """Bytes they held."""
    kept: int
    """Blobs still referenced (or too recent to remove), kept."""
