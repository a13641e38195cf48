"""open_async_store: the store's methods as coroutines, on every backend.

PostgreSQL runs natively on psycopg's asyncio connections; the embedded backends
run the synchronous store in worker threads. The conformance suite also runs
through the native face (a blocking adapter over it)."""

from __future__ import annotations

import asyncio
import inspect
import threading
from collections.abc import Callable, Coroutine, Iterator
from pathlib import Path
from typing import Any, TypeVar

import pytest

import canisters as c
from canisters.storage import (
    AsyncStore,
    Fork,
    InvalidIdentifier,
    Store,
    open_async_store,
    open_store,
)
from canisters.storage.aio import (
    AsyncContentStore,
    AsyncSidecar,
    ThreadedStore,
)
from canisters.storage.postgres import AsyncPostgresStore
from canisters.storage.testing import StoreConformance

T = TypeVar("T")

PNG = b"\x89PNG\r\n\x1a\n" + bytes(range(256)) * 4


@pytest.fixture(params=["files", "sqlite", "postgres", "sqlite+s3", "postgres+s3"])
def location(
    request: pytest.FixtureRequest, tmp_path: Path
) -> tuple[str, dict[str, str]]:
    options = {}
    if request.param.endswith("+s3"):
        options["blobs"] = request.getfixturevalue("s3_blobs")
    if request.param.startswith("postgres"):
        return request.getfixturevalue("postgres_location"), options
    if request.param.startswith("sqlite"):
        return f"sqlite:///{tmp_path / 'a.db'}", options
    return str(tmp_path / "store"), options


def test_every_method_as_a_coroutine(location: tuple[str, dict[str, str]]) -> None:
    where, options = location
    sample = [
        c.Supervisor("You are terse."),
        c.User((c.Text("look"), c.Image(data=PNG))),
        c.Assistant("A pattern."),
    ]

    async def main() -> None:
        async with await open_async_store(where, **options) as store:
            assert isinstance(store, AsyncStore)
            # PostgreSQL is native; the embedded backends run in threads.
            native = where.startswith("postgresql://")
            assert isinstance(store, AsyncPostgresStore) is native
            assert isinstance(store, ThreadedStore) is not native
            assert store.policy.inline_text_limit == 1024
            await store.append("chat", sample[0])
            await store.extend("chat", sample[1:])
            # Many coroutines at once: the event loop keeps running meanwhile.
            await asyncio.gather(
                *(store.append(f"other-{n}", c.User(f"{n}")) for n in range(6))
            )
            assert await store.load("chat") == sample
            assert await store.exists("chat")
            assert (await store.conversations())[0] == "chat"
            assert (await store.head("chat"))[0] == 3
            assert (await store.verify("chat")).ok
            child = await store.fork("chat", sample[1].id)
            assert len(await store.load(child)) == 2
            origin = Fork(child, "chat", sample[1].id, 2)
            assert await store.origin(child) == origin
            assert await store.origin("chat") is None
            assert await store.forks("chat") == [origin]
            assert isinstance(store.content, AsyncContentStore)
            content_id = await store.content.put(b"blob")
            assert await store.content.has(content_id)
            assert await store.content.get(content_id) == b"blob"
            assert content_id in await store.content.ids()
            side = store.sidecar("chat", "audit")
            assert isinstance(side, AsyncSidecar)
            assert (side.conversation_id, side.name) == ("chat", "audit")
            await side.append_line(f"uses {content_id}")
            assert await side.read_lines() == [f"uses {content_id}"]
            assert await store.sidecar_names("chat") == ["audit"]
            assert content_id in await store.referenced_content()
            stats = await store.stats()
            assert stats.conversations == 8 and stats.records == 9
            await store.delete(child)
            assert not await store.exists(child)
            report = await store.collect_garbage(dry_run=True)
            assert report.removed == ()
            with pytest.raises(c.ConversationNotFound):
                await store.load("nope")
            with pytest.raises(InvalidIdentifier):
                await store.append("../x", sample[0])
            assert "Store" in repr(store)
            if isinstance(store, ThreadedStore):
                assert store.sync.exists("chat")

    asyncio.run(main())
    # What the coroutines wrote, the synchronous store reads.
    with open_store(where, **options) as store:
        assert store.load("chat") == sample
        assert store.sidecar("chat", "audit").read_lines()[0].startswith("uses ")


def test_concurrent_coroutines_lose_nothing(postgres_location: str) -> None:
    """Coroutines appending at once to one conversation and to their own, on
    fewer connections than coroutines: every append is in, in each writer's
    order, and the chains verify."""
    writers, appends = 12, 6
    image = c.Image(data=PNG, mime_type="image/png")  # one blob every writer shares

    async def write(store: AsyncStore, writer: int) -> None:
        for n in range(appends):
            shared = c.User((c.Text(f"w{writer} m{n}"), image), id=f"w{writer}-m{n}")
            if n % 2:
                await store.append("shared", shared)
            else:
                await store.extend("shared", [shared, c.Assistant(f"ok {writer}")])
            await store.append(f"own-{writer}", c.User(f"m{n}", id=f"own{n}"))

    async def main() -> None:
        async with await open_async_store(postgres_location, pool_size=3) as store:
            await asyncio.gather(*(write(store, w) for w in range(writers)))
            shared = await store.load("shared")
            users = [x.id for x in shared if x.role is c.Role.User]
            assert sorted(users) == sorted(
                f"w{w}-m{n}" for w in range(writers) for n in range(appends)
            )
            for w in range(writers):
                mine = [i for i in users if i.startswith(f"w{w}-")]
                assert mine == [f"w{w}-m{n}" for n in range(appends)]
            # An extend's two records stay together.
            for index, canister in enumerate(shared):
                if canister.role is c.Role.Assistant:
                    writer = canister.content[0].text.split()[1]  # type: ignore[attr-defined]
                    assert shared[index - 1].id.startswith(f"w{writer}-")
            report = await store.verify("shared")
            assert report.ok and report.records == len(shared) == writers * 9
            assert (await store.head("shared")) == (report.records, report.head)
            for w in range(writers):
                own = await store.load(f"own-{w}")
                assert [x.id for x in own] == [f"own{n}" for n in range(appends)]
            assert (await store.stats()).blobs == 1

    asyncio.run(main())


# The conformance suite through the native face -----------------------------


class _Blocking:
    """A synchronous face over an async store (or its content store, or a side
    file): each coroutine runs on an event loop in another thread."""

    def __init__(self, target: Any, loop: asyncio.AbstractEventLoop) -> None:
        self._target = target
        self._loop = loop

    def _wait(self, coroutine: Coroutine[Any, Any, T]) -> T:
        return asyncio.run_coroutine_threadsafe(coroutine, self._loop).result()

    def _wrap(self, value: Any) -> Any:
        if isinstance(value, (AsyncContentStore, AsyncSidecar)):
            return _Blocking(value, self._loop)
        return value

    def __getattr__(self, name: str) -> Any:
        value = getattr(self._target, name)
        if inspect.iscoroutinefunction(value):
            return lambda *args, **kwargs: self._wait(value(*args, **kwargs))
        if callable(value):
            return lambda *args, **kwargs: self._wrap(value(*args, **kwargs))
        return self._wrap(value)

    def __enter__(self) -> Any:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self._wait(self._target.close())


@pytest.fixture
def event_loop_thread() -> Iterator[asyncio.AbstractEventLoop]:
    loop = asyncio.new_event_loop()
    thread = threading.Thread(target=loop.run_forever, daemon=True)
    thread.start()
    try:
        yield loop
    finally:
        loop.call_soon_threadsafe(loop.stop)
        thread.join()
        loop.close()


class TestNativeAsyncConformance(StoreConformance):
    """The conformance suite against AsyncPostgresStore, through _Blocking."""

    @pytest.fixture
    def opener(
        self, postgres_location: str, event_loop_thread: asyncio.AbstractEventLoop
    ) -> Callable[..., Store]:
        def open_blocking(**options: Any) -> Store:
            store = asyncio.run_coroutine_threadsafe(
                open_async_store(postgres_location, **options), event_loop_thread
            ).result()
            assert isinstance(store, AsyncPostgresStore)
            blocking: Store = _Blocking(store, event_loop_thread)  # type: ignore[assignment]
            return blocking

        return open_blocking
