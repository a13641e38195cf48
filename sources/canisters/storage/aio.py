"""The store as coroutines, for asyncio servers: :func:`open_async_store`.

Every method of :class:`~canisters.storage.Store` has a coroutine twin on
:class:`AsyncStore`, taking the same arguments and returning the same values::

    from canisters.storage import open_async_store

    async with await open_async_store("postgresql://app@db/chat") as store:
        await store.append("chat-1", canister)
        conversation = await store.load("chat-1")

A PostgreSQL URL opens :class:`~canisters.storage.postgres.AsyncPostgresStore`,
native coroutines on psycopg's asyncio connections: up to ``pool_size`` calls
run on the server at once, the rest queue for a connection, and no thread is
involved (except for blobs in S3: boto3 blocks, so those calls run in worker
threads). The embedded backends (a directory, SQLite) open a
:class:`ThreadedStore`, which runs each call of the synchronous store in a
worker thread (``asyncio.to_thread``) so the event loop never waits on the
disk; their writers are serialized as they always are.
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import Iterable
from datetime import datetime, timedelta
from typing import Any, Literal, Protocol, runtime_checkable

from ..conversation import Conversation
from ..protocols import Canister
from ._common import GarbageReport, Progress, StoragePolicy, StoreStats, Verification
from ._forks import Fork
from ._redaction import ExpiryReport
from ._search import SearchHit
from ._values import Redaction

__all__ = [
    "AsyncContentStore",
    "AsyncSidecar",
    "AsyncStore",
    "ThreadedContentStore",
    "ThreadedSidecar",
    "ThreadedStore",
    "open_async_store",
]


@runtime_checkable
class AsyncContentStore(Protocol):
    """:class:`~canisters.storage.ContentStore` as coroutines."""

    __slots__ = ()

    async def put(self, data: bytes) -> str:
        """Store ``data`` once and return its ``sha256:`` id."""
        ...

    async def get(self, content_id: str) -> bytes:
        """Return the bytes of ``content_id`` (verified against the id)."""
        ...

    async def has(self, content_id: str) -> bool:
        """Tell whether the blob is stored."""
        ...

    async def ids(self) -> list[str]:
        """Return the id of every stored blob."""
        ...


@runtime_checkable
class AsyncSidecar(Protocol):
    """:class:`~canisters.storage.Sidecar` as coroutines."""

    __slots__ = ()

    @property
    def conversation_id(self) -> str:
        """The conversation this side file belongs to."""
        ...

    @property
    def name(self) -> str:
        """The side file's name."""
        ...

    async def append_line(self, line: str) -> None:
        """Append one line; durable when this returns."""
        ...

    async def read_lines(self) -> list[str]:
        """Return every complete line, oldest first."""
        ...


@runtime_checkable
class AsyncStore(Protocol):
    """A :class:`~canisters.storage.Store` whose methods are coroutines (the
    same arguments, the same values, the same errors)."""

    __slots__ = ()

    @property
    def content(self) -> AsyncContentStore:
        """The content store, as coroutines."""
        ...

    @property
    def policy(self) -> StoragePolicy:
        """Which parts are stored by hash."""
        ...

    async def append(self, conversation_id: str, canister: Canister) -> None:
        """Append one canister; durable when this returns. One the conversation
        holds already is not recorded again: an append that failed, or was
        cancelled, may have been written, and retrying it is safe."""
        ...

    async def extend(self, conversation_id: str, canisters: Iterable[Canister]) -> None:
        """Append several canisters at once."""
        ...

    async def load(
        self, conversation_id: str, *, salvage: bool = False
    ) -> Conversation:
        """Return the conversation, hydrated and checked."""
        ...

    async def conversations(self) -> list[str]:
        """Return the id of every conversation, sorted."""
        ...

    async def exists(self, conversation_id: str) -> bool:
        """Tell whether the conversation exists."""
        ...

    async def fork(self, conversation_id: str, at: str) -> str:
        """Start a new conversation sharing the prefix up to canister ``at``."""
        ...

    async def origin(self, conversation_id: str) -> Fork | None:
        """Return where the conversation was forked (``None``: not a fork)."""
        ...

    async def forks(self, conversation_id: str) -> list[Fork]:
        """Return the forks made of the conversation, sorted by id."""
        ...

    async def delete(self, conversation_id: str) -> None:
        """Delete the conversation and its side files."""
        ...

    async def verify(self, conversation_id: str) -> Verification:
        """Check the conversation's hash chain and blobs."""
        ...

    async def head(self, conversation_id: str) -> tuple[int, str]:
        """Return the number of records and the digest of the last one."""
        ...

    def sidecar(self, conversation_id: str, name: str) -> AsyncSidecar:
        """Return the side file ``name`` of the conversation, as coroutines."""
        ...

    async def sidecar_names(self, conversation_id: str) -> list[str]:
        """Return the name of every side file of the conversation, sorted."""
        ...

    async def referenced_content(self) -> set[str]:
        """Return every content id a log or side file mentions."""
        ...

    async def collect_garbage(
        self,
        *,
        dry_run: bool = False,
        older_than: float = 0.0,
        progress: Progress | None = None,
    ) -> GarbageReport:
        """Remove blobs nothing references (see ``Store.collect_garbage``)."""
        ...

    async def stats(self, *, progress: Progress | None = None) -> StoreStats:
        """Count conversations, records, blobs and references."""
        ...

    async def search(
        self,
        query: str,
        *,
        limit: int = 20,
        conversation: str | None = None,
        kinds: Iterable[str] | None = None,
    ) -> list[SearchHit]:
        """Find canisters by the words of their text (see ``Store.search``)."""
        ...

    async def rebuild_search_index(self, *, progress: Progress | None = None) -> int:
        """Index every record again (see ``Store.rebuild_search_index``)."""
        ...

    async def redact(
        self, conversation_id: str, canister_id: str, *, reason: str
    ) -> Redaction:
        """Erase a canister's content, keeping its place (see ``Store.redact``)."""
        ...

    async def expire(
        self,
        before: datetime | timedelta | None = None,
        *,
        dry_run: bool = False,
        action: Literal["delete", "redact"] | None = None,
        progress: Progress | None = None,
    ) -> ExpiryReport:
        """Apply retention (see ``Store.expire``)."""
        ...

    async def close(self) -> None:
        """Release the store's files and connections."""
        ...

    async def __aenter__(self) -> AsyncStore: ...

    async def __aexit__(self, *exc_info: object) -> None: ...


class ThreadedContentStore:
    """A synchronous :class:`~canisters.storage.ContentStore` as coroutines,
    each call in a worker thread."""

    __slots__ = ("_content",)

    def __init__(self, content: Any) -> None:
        self._content = content

    async def put(self, data: bytes) -> str:
        """Store ``data`` once and return its ``sha256:`` id."""
        result: str = await asyncio.to_thread(self._content.put, data)
        return result

    async def get(self, content_id: str) -> bytes:
        """Return the bytes of ``content_id`` (verified against the id)."""
        result: bytes = await asyncio.to_thread(self._content.get, content_id)
        return result

    async def has(self, content_id: str) -> bool:
        """Tell whether the blob is stored."""
        result: bool = await asyncio.to_thread(self._content.has, content_id)
        return result

    async def ids(self) -> list[str]:
        """Return the id of every stored blob."""
        return await asyncio.to_thread(lambda: list(self._content.ids()))


class ThreadedSidecar:
    """A synchronous :class:`~canisters.storage.Sidecar` as coroutines, each
    call in a worker thread."""

    __slots__ = ("_sidecar",)

    def __init__(self, sidecar: Any) -> None:
        self._sidecar = sidecar

    @property
    def conversation_id(self) -> str:
        """The conversation this side file belongs to."""
        result: str = self._sidecar.conversation_id
        return result

    @property
    def name(self) -> str:
        """The side file's name."""
        result: str = self._sidecar.name
        return result

    async def append_line(self, line: str) -> None:
        """Append one line; durable when this returns."""
        await asyncio.to_thread(self._sidecar.append_line, line)

    async def read_lines(self) -> list[str]:
        """Return every complete line, oldest first."""
        result: list[str] = await asyncio.to_thread(self._sidecar.read_lines)
        return result


class ThreadedStore:
    """An :class:`AsyncStore` over a synchronous
    :class:`~canisters.storage.Store`, each call in a worker thread.

    ``store`` is the synchronous store it drives (:attr:`sync`).
    """

    __slots__ = ("_content", "_store")

    def __init__(self, store: Any) -> None:
        self._store = store
        self._content = ThreadedContentStore(store.content)

    @property
    def sync(self) -> Any:
        """The synchronous store underneath (for code that is not async)."""
        return self._store

    @property
    def content(self) -> ThreadedContentStore:
        """The content store, as coroutines."""
        return self._content

    @property
    def policy(self) -> StoragePolicy:
        """Which parts are stored by hash."""
        result: StoragePolicy = self._store.policy
        return result

    async def _run(self, name: str, *args: Any, **kwargs: Any) -> Any:
        return await asyncio.to_thread(getattr(self._store, name), *args, **kwargs)

    async def append(self, conversation_id: str, canister: Canister) -> None:
        """Append one canister; durable when this returns."""
        await self._run("append", conversation_id, canister)

    async def extend(self, conversation_id: str, canisters: Iterable[Canister]) -> None:
        """Append several canisters at once."""
        await self._run("extend", conversation_id, list(canisters))

    async def load(
        self, conversation_id: str, *, salvage: bool = False
    ) -> Conversation:
        """Return the conversation, hydrated and checked."""
        result: Conversation = await self._run("load", conversation_id, salvage=salvage)
        return result

    async def conversations(self) -> list[str]:
        """Return the id of every conversation, sorted."""
        result: list[str] = await self._run("conversations")
        return result

    async def exists(self, conversation_id: str) -> bool:
        """Tell whether the conversation exists."""
        result: bool = await self._run("exists", conversation_id)
        return result

    async def fork(self, conversation_id: str, at: str) -> str:
        """Start a new conversation sharing the prefix up to canister ``at``."""
        result: str = await self._run("fork", conversation_id, at)
        return result

    async def origin(self, conversation_id: str) -> Fork | None:
        """Return where the conversation was forked (``None``: not a fork)."""
        result: Fork | None = await self._run("origin", conversation_id)
        return result

    async def forks(self, conversation_id: str) -> list[Fork]:
        """Return the forks made of the conversation, sorted by id."""
        result: list[Fork] = await self._run("forks", conversation_id)
        return result

    async def delete(self, conversation_id: str) -> None:
        """Delete the conversation and its side files."""
        await self._run("delete", conversation_id)

    async def verify(self, conversation_id: str) -> Verification:
        """Check the conversation's hash chain and blobs."""
        result: Verification = await self._run("verify", conversation_id)
        return result

    async def head(self, conversation_id: str) -> tuple[int, str]:
        """Return the number of records and the digest of the last one."""
        result: tuple[int, str] = await self._run("head", conversation_id)
        return result

    def sidecar(self, conversation_id: str, name: str) -> ThreadedSidecar:
        """Return the side file ``name`` of the conversation, as coroutines."""
        return ThreadedSidecar(self._store.sidecar(conversation_id, name))

    async def sidecar_names(self, conversation_id: str) -> list[str]:
        """Return the name of every side file of the conversation, sorted."""
        result: list[str] = await self._run("sidecar_names", conversation_id)
        return result

    async def referenced_content(self) -> set[str]:
        """Return every content id a log or side file mentions."""
        result: set[str] = await self._run("referenced_content")
        return result

    async def collect_garbage(
        self,
        *,
        dry_run: bool = False,
        older_than: float = 0.0,
        progress: Progress | None = None,
    ) -> GarbageReport:
        """Remove blobs nothing references (see ``Store.collect_garbage``)."""
        result: GarbageReport = await self._run(
            "collect_garbage",
            dry_run=dry_run,
            older_than=older_than,
            progress=progress,
        )
        return result

    async def stats(self, *, progress: Progress | None = None) -> StoreStats:
        """Count conversations, records, blobs and references."""
        result: StoreStats = await self._run("stats", progress=progress)
        return result

    async def search(
        self,
        query: str,
        *,
        limit: int = 20,
        conversation: str | None = None,
        kinds: Iterable[str] | None = None,
    ) -> list[SearchHit]:
        """Find canisters by the words of their text (see ``Store.search``)."""
        result: list[SearchHit] = await self._run(
            "search", query, limit=limit, conversation=conversation, kinds=kinds
        )
        return result

    async def rebuild_search_index(self, *, progress: Progress | None = None) -> int:
        """Index every record again (see ``Store.rebuild_search_index``)."""
        result: int = await self._run("rebuild_search_index", progress=progress)
        return result

    async def redact(
        self, conversation_id: str, canister_id: str, *, reason: str
    ) -> Redaction:
        """Erase a canister's content, keeping its place (see ``Store.redact``)."""
        result: Redaction = await self._run(
            "redact", conversation_id, canister_id, reason=reason
        )
        return result

    async def expire(
        self,
        before: datetime | timedelta | None = None,
        *,
        dry_run: bool = False,
        action: Literal["delete", "redact"] | None = None,
        progress: Progress | None = None,
    ) -> ExpiryReport:
        """Apply retention (see ``Store.expire``)."""
        result: ExpiryReport = await self._run(
            "expire", before, dry_run=dry_run, action=action, progress=progress
        )
        return result

    async def close(self) -> None:
        """Release the store's files and connections."""
        await self._run("close")

    async def __aenter__(self) -> ThreadedStore:
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.close()

    def __repr__(self) -> str:
        return f"ThreadedStore({self._store!r})"


async def open_async_store(
    location: str | os.PathLike[str], **options: Any
) -> AsyncStore:
    """Open the store at ``location`` (as :func:`~canisters.storage.open_store`
    does, same options) without blocking the event loop, as an
    :class:`AsyncStore`: native coroutines for PostgreSQL
    (:class:`~canisters.storage.postgres.AsyncPostgresStore`), a
    :class:`~canisters.storage.aio.ThreadedStore` for the embedded backends."""
    from . import POSTGRES_SCHEMES, open_store

    if isinstance(location, str) and location.startswith(POSTGRES_SCHEMES):
        from .postgres import AsyncPostgresStore

        # Made in a thread (its S3 client reads the AWS settings' files), then
        # connected on the event loop.
        native = await asyncio.to_thread(AsyncPostgresStore, location, **options)
        return await native.open()
    store = await asyncio.to_thread(open_store, location, **options)
    return ThreadedStore(store)
