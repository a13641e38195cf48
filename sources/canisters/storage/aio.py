"""The store as coroutines, for asyncio servers: :func:`open_async_store`.

Every method of :class:`~canisters.storage.Store` has a coroutine twin on
:class:`AsyncStore`, taking the same arguments and returning the same values::

    from canisters.storage import open_async_store

    async with await open_async_store("postgresql://app@db/chat") as store:
        await store.append("chat-1", canister)
        conversation = await store.load("chat-1")

Each call runs the store's own method in a worker thread (``asyncio.to_thread``),
so the event loop never waits on a disk or a server. For PostgreSQL the store
keeps a pool of connections (``pool_size``): that many calls run on the server
at once, the rest queue for a connection. The embedded backends serialize
writers as they always do.
"""

from __future__ import annotations

import asyncio
import os
from typing import Any

from ..conversation import Conversation
from ..protocols import Canister
from ._common import GarbageReport, Progress, StoragePolicy, StoreStats, Verification

__all__ = ["AsyncContentStore", "AsyncSidecar", "AsyncStore", "open_async_store"]


class AsyncContentStore:
    """:class:`~canisters.storage.ContentStore` as coroutines."""

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


class AsyncSidecar:
    """:class:`~canisters.storage.Sidecar` as coroutines."""

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


class AsyncStore:
    """A :class:`~canisters.storage.Store` whose methods are coroutines.

    ``store`` is the synchronous store it drives (:attr:`sync`).
    """

    __slots__ = ("_content", "_store")

    def __init__(self, store: Any) -> None:
        self._store = store
        self._content = AsyncContentStore(store.content)

    @property
    def sync(self) -> Any:
        """The synchronous store underneath (for code that is not async)."""
        return self._store

    @property
    def content(self) -> AsyncContentStore:
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

    async def extend(self, conversation_id: str, canisters: list[Canister]) -> None:
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

    def sidecar(self, conversation_id: str, name: str) -> AsyncSidecar:
        """Return the side file ``name`` of the conversation, as coroutines."""
        return AsyncSidecar(self._store.sidecar(conversation_id, name))

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

    async def close(self) -> None:
        """Release the store's files and connections."""
        await self._run("close")

    async def __aenter__(self) -> AsyncStore:
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.close()

    def __repr__(self) -> str:
        return f"AsyncStore({self._store!r})"


async def open_async_store(
    location: str | os.PathLike[str], **options: Any
) -> AsyncStore:
    """Open the store at ``location`` (as :func:`~canisters.storage.open_store`
    does, same options) without blocking the event loop, as an
    :class:`AsyncStore`."""
    from . import open_store

    store = await asyncio.to_thread(open_store, location, **options)
    return AsyncStore(store)
