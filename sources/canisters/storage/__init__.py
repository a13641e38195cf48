"""Durable storage of conversations and their content.

:func:`open_store` opens a store: a filesystem path opens the file backend (the
embedded default, created when missing); ``sqlite:///path/to.db`` opens the
SQLite backend; ``postgresql://user:password@host/dbname`` opens the PostgreSQL
backend (the ``postgres`` extra), for stores shared by several hosts. All
satisfy :class:`Store`::

    from canisters import storage

    with storage.open_store("conversations") as store:
        store.append("chat-1", canister)
        conversation = store.load("chat-1")

A store keeps one append-only, hash-chained log per conversation and a
content-addressed blob store (:class:`ContentStore`) shared by every
conversation. Under the :class:`StoragePolicy` large text, binary media and
supervisor prompts are stored once by hash; :meth:`Store.load` puts them back,
so it returns canisters equal to those appended.

:func:`open_async_store` gives the same API as coroutines, for asyncio servers.

Errors (all under :class:`canisters.StorageError`): ``ConversationNotFound``,
``ContentNotFound``, ``IntegrityError`` (importable from :mod:`canisters`) and
:class:`InvalidIdentifier` (an id that cannot be used safely).
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable, Iterator
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any, Literal, Protocol, runtime_checkable

from ..conversation import Conversation
from ..exceptions import StorageError
from ..protocols import Canister
from ._common import (
    Durability,
    GarbageReport,
    IntegrityProblem,
    InvalidIdentifier,
    Progress,
    StoragePolicy,
    StoreStats,
    Verification,
)
from ._forks import Fork
from ._redaction import ExpiryReport
from ._search import InvalidQuery, SearchHit
from ._values import Redaction
from .aio import AsyncStore, open_async_store
from .files import FileStore
from .sqlite import SQLiteStore
from .transfer import CopyReport, copy_store

__all__ = [
    "AsyncStore",
    "ContentStore",
    "CopyReport",
    "Durability",
    "ExpiryReport",
    "FileStore",
    "Fork",
    "GarbageReport",
    "IntegrityProblem",
    "InvalidIdentifier",
    "InvalidQuery",
    "Progress",
    "Redaction",
    "SQLiteStore",
    "SearchHit",
    "Sidecar",
    "StoragePolicy",
    "Store",
    "StoreStats",
    "Verification",
    "copy_store",
    "open_async_store",
    "open_store",
    "verify",
]

SQLITE_SCHEME = "sqlite://"
POSTGRES_SCHEMES = ("postgresql://", "postgres://")
_URL = re.compile(r"[A-Za-z][A-Za-z0-9+.\-]*://")


@runtime_checkable
class ContentStore(Protocol):
    """Content-addressed blobs: bytes stored once under their ``sha256:`` id."""

    __slots__ = ()

    def put(self, data: bytes) -> str:
        """Store ``data`` (once, whatever the number of calls) and return its id."""
        ...

    def get(self, content_id: str) -> bytes:
        """Return the bytes of ``content_id``.

        Raises ``ContentNotFound`` when absent and ``IntegrityError`` when the
        stored bytes no longer match the id.
        """
        ...

    def has(self, content_id: str) -> bool:
        """Tell whether the store holds ``content_id``."""
        ...

    def ids(self) -> Iterator[str]:
        """Yield the id of every stored blob (in no particular order)."""
        ...


@runtime_checkable
class Sidecar(Protocol):
    """An append-only text log kept beside a conversation (audit, recording).

    Each line is appended durably (as the store's durability says) under the
    same kind of lock as the conversation log, so concurrent writers never
    interleave; an unfinished final line left by a crash is ignored. Side files
    live and die with their conversation (:meth:`Store.delete` removes them) but
    may be written before the conversation's first canister.
    """

    __slots__ = ()

    @property
    def conversation_id(self) -> str:
        """The conversation this side file belongs to."""
        ...

    @property
    def name(self) -> str:
        """The side file's name (an identifier, like a conversation id)."""
        ...

    def append_line(self, line: str) -> None:
        """Append one line (no line breaks in it); durable when this returns."""
        ...

    def read_lines(self) -> list[str]:
        """Return every complete line, oldest first (empty when none)."""
        ...


@runtime_checkable
class Store(Protocol):
    """A conversation store: durable, hash-chained logs plus a content store.

    Conversation ids (and side-file names) are 1 to 128 characters among
    letters, digits, ``.``, ``_`` and ``-``, not starting with ``.`` or ``-``;
    anything else raises :class:`InvalidIdentifier`.
    """

    __slots__ = ()

    @property
    def content(self) -> ContentStore:
        """The content store holding every blob of every conversation."""
        ...

    @property
    def policy(self) -> StoragePolicy:
        """Which parts are stored by hash."""
        ...

    def append(self, conversation_id: str, canister: Canister) -> None:
        """Append one canister, creating the conversation when it is new.

        Durable when it returns: every blob first, then the log record. A
        canister the conversation holds already (same id, same content) is not
        recorded again, so an append that failed may be retried; a different
        canister under a held id raises ``DuplicateCanister``.
        """
        ...

    def extend(self, conversation_id: str, canisters: Iterable[Canister]) -> None:
        """Append several canisters at once (creating the conversation, even empty).

        Those the conversation holds already are left out, as :meth:`append`
        does; a different canister under a held id raises ``DuplicateCanister``
        and nothing is written.
        """
        ...

    def load(self, conversation_id: str, *, salvage: bool = False) -> Conversation:
        """Return the conversation, hydrated: canisters equal to those appended.

        A broken hash chain raises ``IntegrityError``; with ``salvage`` every
        readable record whose digest holds is returned instead (problems are
        logged). Raises ``ConversationNotFound`` for an unknown id.
        """
        ...

    def conversations(self) -> list[str]:
        """Return the id of every conversation, sorted."""
        ...

    def exists(self, conversation_id: str) -> bool:
        """Tell whether the conversation exists."""
        ...

    def fork(self, conversation_id: str, at: str) -> str:
        """Start a new conversation sharing the prefix up to canister ``at``.

        Returns the new conversation's id. The fork stores only what is appended
        to it; its chain continues from the fork point.
        """
        ...

    def origin(self, conversation_id: str) -> Fork | None:
        """Return where the conversation was forked: its parent, the canister it
        was forked at and how many records it shares (``None``: not a fork).

        Raises ``ConversationNotFound`` for an unknown id.
        """
        ...

    def forks(self, conversation_id: str) -> list[Fork]:
        """Return the forks made of the conversation (not their own forks),
        sorted by id, each with its fork point.

        Raises ``ConversationNotFound`` for an unknown id.
        """
        ...

    def delete(self, conversation_id: str) -> None:
        """Delete the conversation and its side files (not its blobs: see gc).

        Refused with ``StorageError`` while forks of it exist.
        """
        ...

    def verify(self, conversation_id: str) -> Verification:
        """Check the conversation's hash chain and blobs, reporting every problem.

        It also compares the log with the head the store keeps apart from it,
        which reveals records removed from the log's end. Every blob is read
        from the store, whatever the cache of hydrated blobs holds.
        """
        ...

    def head(self, conversation_id: str) -> tuple[int, str]:
        """Return the number of records and the digest of the last one.

        This is the value to pin outside the store (an audit trail, another
        database, a signed note): the chain proves every record up to it, and
        a later ``head`` that does not continue from a pinned one shows that the
        log was cut or rewritten. The store keeps each head apart from the log
        as well and :meth:`verify` compares them, but someone able to rewrite
        the store can rewrite both.
        """
        ...

    def sidecar(self, conversation_id: str, name: str) -> Sidecar:
        """Return the side file ``name`` of the conversation (created on append)."""
        ...

    def sidecar_names(self, conversation_id: str) -> list[str]:
        """Return the name of every side file of the conversation, sorted."""
        ...

    def referenced_content(self) -> set[str]:
        """Return every content id a conversation log or side file mentions."""
        ...

    def collect_garbage(
        self,
        *,
        dry_run: bool = False,
        older_than: float = 0.0,
        progress: Progress | None = None,
    ) -> GarbageReport:
        """Remove blobs no log or side file references, safely against writers.

        Blobs stored less than ``older_than`` seconds ago are kept (a blob put
        through :attr:`content` but not yet referenced would otherwise go).
        ``progress`` is called with ``(done, total)`` as the work advances.
        """
        ...

    def stats(self, *, progress: Progress | None = None) -> StoreStats:
        """Count conversations, records, blobs and references, and their bytes.

        ``progress`` is called with ``(done, total)`` as the work advances.
        """
        ...

    def search(
        self,
        query: str,
        *,
        limit: int = 20,
        conversation: str | None = None,
        kinds: Iterable[str] | None = None,
    ) -> list[SearchHit]:
        """Find the canisters whose text holds every word of ``query``.

        Words are letters and digits (anything else separates them), matched
        whole and whatever their case; a word ending in ``*`` matches every
        word it begins. The text searched is that of text and reasoning parts,
        a document's title, a tool call's name and arguments and a result's
        name and error message. At most ``limit`` hits come back, in the order
        of their conversations' ids and then of their place; ``conversation``
        limits the search to one conversation (a fork's shared prefix
        included), ``kinds`` to canisters of those roles (``"user"``,
        ``"assistant"``, ...). Each backend uses its own index: SQLite's FTS5,
        PostgreSQL's full-text search (GIN), a scan of the logs for files.
        A query without a word, a limit below 1 or an unknown kind raises
        :class:`InvalidQuery`.
        """
        ...

    def rebuild_search_index(self, *, progress: Progress | None = None) -> int:
        """Drop the search index and build it again from the logs.

        Returns how many canisters it holds (0 for the file backend, which
        scans and keeps no index). Indexes are kept by every append; this is
        for an index damaged or emptied by hand.
        """
        ...

    def redact(
        self, conversation_id: str, canister_id: str, *, reason: str
    ) -> Redaction:
        """Erase a canister's content, keeping its place in the hash chain.

        The record (in the log that holds it: a fork's shared prefix is its
        parent's) is replaced by a tombstone that keeps its digest, its kind
        (role), its place and ``reason`` (one line); :meth:`load` then returns
        a canister of the same kind and id whose only content is the text
        ``[redacted: reason]``, its ``extras["redacted"]`` saying why and when,
        in the conversation and in every fork sharing it; :meth:`verify` lists
        it in :attr:`Verification.redactions`, not as a problem. The search
        index forgets it, the conversation's audit trail (side file
        ``audit``) records it, and blobs only it named go at the next
        :meth:`collect_garbage`. Redacting a tombstone again changes nothing.
        Raises ``CanisterNotFound`` when the conversation has no such canister.
        """
        ...

    def expire(
        self,
        before: datetime | timedelta | None = None,
        *,
        dry_run: bool = False,
        action: Literal["delete", "redact"] | None = None,
        progress: Progress | None = None,
    ) -> ExpiryReport:
        """Apply retention: the conversations whose last canister is older than
        ``before`` (a datetime, or a timedelta back from now; ``None``: the
        policy's ``retention_days``) are deleted, or redacted canister by
        canister (``action``; ``None``: the policy's ``retention_action``). A
        conversation expires only with all its forks (forks first); one with
        no canister never does. ``dry_run`` changes nothing. ``progress`` is
        called with ``(done, total)``. Every conversation is read once: the
        cost grows with the store.
        """
        ...

    def close(self) -> None:
        """Release open files and connections; the store is unusable afterwards."""
        ...

    def __enter__(self) -> Store: ...

    def __exit__(self, *exc_info: object) -> None: ...


def open_store(location: str | os.PathLike[str], **options: Any) -> Store:
    """Open (creating when missing) the store at ``location``.

    ``location`` is a directory path for the file backend,
    ``sqlite:///relative/path.db`` / ``sqlite:////absolute/path.db`` for SQLite,
    or ``postgresql://user:password@host:5432/dbname`` (also ``postgres://``)
    for PostgreSQL, which needs the ``postgres`` extra
    (``pip install 'canisters[postgres]'``); its tables are created on first
    open. Options: ``blobs`` (``"s3://bucket/prefix"``: content blobs in an
    S3-compatible bucket instead of the store, any backend; the ``s3`` extra;
    or an :class:`~canisters.storage.s3.S3ContentStore` made with a client of
    its own),
    ``policy`` (a :class:`StoragePolicy`), ``durability`` (``"fsync"``, the
    default, or ``"flush"``; see :data:`~canisters.storage.Durability`),
    for PostgreSQL ``pool_size``, ``timeout`` (seconds a call waits for a
    connection, 10 by default: the bound on a call while the server is down)
    and ``connect_timeout`` (seconds to establish one, 5 by default), and,
    for the file and SQLite backends, ``read_only=True``: open an existing
    store without creating or writing anything (not even its lock file), so
    that a store the user may read but not write can be inspected; every write
    then raises ``StorageError``.
    """
    if isinstance(location, str) and location.startswith(SQLITE_SCHEME):
        path = location[len(SQLITE_SCHEME) :]
        if path.startswith("/"):
            path = path[1:]
        if not path or "\x00" in path:
            raise StorageError(
                f"{location!r} names no database file: use sqlite:///path/to.db"
            )
        return SQLiteStore(path, **options)
    if isinstance(location, str) and location.startswith(POSTGRES_SCHEMES):
        from .postgres import PostgresStore

        return PostgresStore(location, **options)
    if isinstance(location, str) and _URL.match(location):
        raise StorageError(
            f"unknown store URL scheme in {location.split('://', 1)[0]!r}://: "
            "use a directory path, sqlite:///, postgresql:// or postgres://"
        )
    if not isinstance(location, (str, os.PathLike)):
        raise StorageError(
            f"a store location is a path or a sqlite:/// URL, "
            f"got {type(location).__name__}"
        )
    if "\x00" in os.fspath(location):
        raise StorageError("a store location must not contain NUL bytes")
    return FileStore(Path(location), **options)


def verify(store: Store, conversation_id: str) -> Verification:
    """Check a stored conversation's hash chain; same as ``store.verify(id)``."""
    return store.verify(conversation_id)
