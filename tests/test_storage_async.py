"""open_async_store: the store's methods as coroutines, on every backend."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

import canisters as c
from canisters.storage import AsyncStore, open_async_store, open_store

PNG = b"\x89PNG\r\n\x1a\n" + bytes(range(256)) * 4


@pytest.fixture(params=["files", "sqlite", "postgres", "sqlite+s3"])
def location(
    request: pytest.FixtureRequest, tmp_path: Path
) -> tuple[str, dict[str, str]]:
    options = {}
    if request.param.endswith("+s3"):
        options["blobs"] = request.getfixturevalue("s3_blobs")
    if request.param == "postgres":
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
            content_id = await store.content.put(b"blob")
            assert await store.content.has(content_id)
            assert await store.content.get(content_id) == b"blob"
            assert content_id in await store.content.ids()
            side = store.sidecar("chat", "audit")
            assert (side.conversation_id, side.name) == ("chat", "audit")
            await side.append_line(f"uses {content_id}")
            assert await side.read_lines() == [f"uses {content_id}"]
            assert content_id in await store.referenced_content()
            assert (await store.stats()).conversations == 8
            await store.delete(child)
            assert not await store.exists(child)
            report = await store.collect_garbage(dry_run=True)
            assert report.removed == ()
            with pytest.raises(c.ConversationNotFound):
                await store.load("nope")
            assert "Store" in repr(store)
            assert store.sync.exists("chat")

    asyncio.run(main())
    with open_store(where, **options) as store:
        assert store.load("chat") == sample
