"""The server backends under faults: a slow bucket, a server that refuses, a
server that goes away and comes back (real servers: pgserver, moto)."""

from __future__ import annotations

import asyncio
import threading
import time
from pathlib import Path
from typing import Any

import pytest

import canisters as c
from canisters.storage import open_async_store, open_store
from canisters.storage.s3 import S3ContentStore

from .storage_servers import OwnPostgres

PNG = b"\x89PNG\r\n\x1a\n" + bytes(range(256)) * 8


class SlowUploads:
    """Holds every upload of an S3 client until released (a botocore hook)."""

    def __init__(self, content: Any) -> None:
        self.started = threading.Event()
        self.release = threading.Event()
        self.returned = threading.Event()
        content._client.meta.events.register("before-send.s3.PutObject", self._hold)

    def _hold(self, **_: Any) -> None:
        self.started.set()
        self.release.wait(10)
        self.returned.set()


@pytest.mark.parametrize("backend", ["postgres", "sqlite"])
def test_a_slow_upload_holds_no_lock_on_the_conversation(
    backend: str, s3_blobs: str, tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    location = (
        request.getfixturevalue("postgres_location")
        if backend == "postgres"
        else f"sqlite:///{tmp_path / 'chat.db'}"
    )
    with open_store(location, blobs=s3_blobs) as store:
        first, text = c.User("first"), c.User("meanwhile")
        image = c.User((c.Text("look"), c.Image(data=PNG)))
        store.append("chat", first)
        slow = SlowUploads(store.content)
        writer = threading.Thread(target=store.append, args=("chat", image))
        writer.start()
        try:
            assert slow.started.wait(10)
            store.append("chat", text)  # while the image's upload is held
            assert not slow.returned.is_set()
        finally:
            slow.release.set()
            writer.join(10)
        assert store.load("chat") == [first, text, image]
        assert store.verify("chat").ok


def test_a_slow_upload_holds_no_lock_on_the_conversation_async(
    postgres_location: str, s3_blobs: str
) -> None:
    async def main() -> None:
        async with await open_async_store(postgres_location, blobs=s3_blobs) as store:
            first, text = c.User("first"), c.User("meanwhile")
            image = c.User((c.Text("look"), c.Image(data=PNG)))
            await store.append("chat", first)
            slow = SlowUploads(store.content._content)  # type: ignore[attr-defined]
            writer = asyncio.create_task(store.append("chat", image))
            try:
                assert await asyncio.to_thread(slow.started.wait, 10)
                await store.append("chat", text)
                assert not slow.returned.is_set()
            finally:
                slow.release.set()
                await writer
            assert await store.load("chat") == [first, text, image]

    asyncio.run(main())


def test_the_default_s3_client_gives_up_in_seconds(s3_blobs: str) -> None:
    config = S3ContentStore(s3_blobs)._client.meta.config
    assert (config.connect_timeout, config.read_timeout) == (3, 10)
    assert config.retries == {"total_max_attempts": 3, "mode": "standard"}


def test_open_says_why_the_server_refused(postgres_server: str) -> None:
    cases = {
        postgres_server.replace(
            "/postgres?", "/nope?"
        ): 'database "nope" does not exist',
        postgres_server.replace("postgres:@", "nobody:secret@"): 'role "nobody"',
        "postgresql://someone:secret@127.0.0.1:1/x": "Connection refused",
    }
    for location, reason in cases.items():
        with pytest.raises(c.StorageError, match="cannot open store") as raised:
            open_store(location)
        assert reason in str(raised.value)
        assert "secret" not in str(raised.value)


@pytest.mark.parametrize(
    "options",
    [{"timeout": 0}, {"timeout": "5"}, {"connect_timeout": -1}, {"timeout": True}],
)
def test_timeouts_must_be_positive_seconds(
    postgres_server: str, options: dict[str, object]
) -> None:
    with pytest.raises(c.StorageError, match="positive number of seconds"):
        open_store(postgres_server, **options)


def test_an_outage_fails_calls_within_the_timeout_and_says_why(
    own_postgres: OwnPostgres,
) -> None:
    with open_store(own_postgres.uri, timeout=1) as store:
        store.append("chat", c.User("before"))
        own_postgres.stop()
        # The pooled connection died with the server: said so, and what to do.
        with pytest.raises(c.StorageError, match="connection to the server was lost"):
            store.append("chat", c.User("during"))
        with pytest.raises(c.StorageError) as raised:
            store.head("chat")
        assert "no connection to the server within 1 s" in str(raised.value)
        assert "No such file or directory" in str(raised.value)  # libpq says why
        own_postgres.start()
        deadline = time.monotonic() + 30
        while True:  # the pool reconnects by itself
            try:
                store.append("chat", c.User("after"))
                break
            except c.StorageError:
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.2)
        texts = [x.content[0].text for x in store.load("chat")]  # type: ignore[attr-defined]
        assert texts[0] == "before" and texts[-1] == "after"
        assert store.verify("chat").ok


class CommitsThenFails:
    """A store whose next append is written and then reported as failed (a
    server that died once the commit was made)."""

    def __init__(self, store: Any) -> None:
        self._store = store
        self.fail = False

    def append(self, conversation_id: str, canister: c.Canister) -> None:
        self._store.append(conversation_id, canister)
        if self.fail:
            self.fail = False
            raise c.StorageError("append failed: the connection was lost")

    def __getattr__(self, name: str) -> Any:
        return getattr(self._store, name)


def test_a_failed_record_that_was_written_is_retried_safely(tmp_path: Any) -> None:
    from canisters.recording import Recorder

    with open_store(tmp_path / "store") as store:
        flaky = CommitsThenFails(store)
        recorder = Recorder(flaky, "run")  # type: ignore[arg-type]
        recorder.record(c.User("Plan a trip."))
        answer = c.Assistant("Where to?")
        flaky.fail = True
        with pytest.raises(c.StorageError):
            recorder.record(answer)
        recorded = recorder.record(answer)
        assert store.load("run") == [recorder.conversation[0], recorded]
        assert recorded.step == 0


def test_the_asyncio_store_says_why_the_server_refused(postgres_server: str) -> None:
    async def main() -> None:
        with pytest.raises(c.StorageError, match="cannot open store") as raised:
            await open_async_store(postgres_server.replace("/postgres?", "/nope?"))
        assert 'database "nope" does not exist' in str(raised.value)

    asyncio.run(main())
