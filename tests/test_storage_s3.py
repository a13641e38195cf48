"""Blobs in an S3-compatible bucket (moto's server): what only the bucket does."""

from __future__ import annotations

import sys
import threading
from pathlib import Path
from typing import Any

import boto3
import pytest

import canisters as c
from canisters.storage import open_store
from canisters.storage.s3 import S3ContentStore

from .storage_servers import new_bucket

PNG = b"\x89PNG\r\n\x1a\n" + bytes(range(256)) * 8


def _calls(content: Any) -> list[str]:
    """Record the name of every S3 operation ``content``'s client makes."""
    made: list[str] = []
    content._client.meta.events.register(
        "before-call.s3.*", lambda model, **_: made.append(model.name)
    )
    return made


def test_the_hot_path_never_lists_the_bucket(tmp_path: Path, s3_blobs: str) -> None:
    with open_store(tmp_path / "store", blobs=s3_blobs) as store:
        assert isinstance(store.content, S3ContentStore)
        made = _calls(store.content)
        store.append("chat", c.User((c.Text("look"), c.Image(data=PNG))))
        store.append("chat", c.User((c.Text("again"), c.Image(data=PNG))))
        assert [x.content[1].data for x in store.load("chat")] == [PNG, PNG]  # type: ignore[attr-defined]
        assert store.verify("chat").ok
        assert "ListObjectsV2" not in made
        assert made.count("PutObject") == 2  # the second one finds it there
        assert store.stats().blobs == 1  # statistics may list
        assert "ListObjectsV2" in made


def test_stores_share_a_content_store_with_a_client_of_its_own(
    tmp_path: Path, s3_endpoint: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    bucket = new_bucket(s3_endpoint)
    client = boto3.client("s3", endpoint_url=s3_endpoint)
    media = S3ContentStore(f"s3://{bucket}/shared", client=client)
    # The environment now names no server: only the given client reaches one.
    monkeypatch.setenv("AWS_ENDPOINT_URL", "http://127.0.0.1:9")
    made = _calls(media)
    with (
        open_store(tmp_path / "files", blobs=media) as files,
        open_store(f"sqlite:///{tmp_path}/chat.db", blobs=media) as sqlite,
    ):
        assert files.content is media and sqlite.content is media
        files.append("chat", c.User((c.Text("look"), c.Image(data=PNG))))
        sqlite.append("chat", c.User((c.Text("again"), c.Image(data=PNG))))
        for store in (files, sqlite):
            assert store.load("chat")[0].content[1].data == PNG  # type: ignore[attr-defined]
    assert made.count("PutObject") == 2 and "GetObject" in made
    (key,) = [o["Key"] for o in client.list_objects_v2(Bucket=bucket)["Contents"]]
    assert key.startswith("shared/sha256/")


def test_blobs_are_written_once_under_their_id(s3_endpoint: str) -> None:
    bucket = new_bucket(s3_endpoint)
    content = S3ContentStore(f"s3://{bucket}/some/prefix/")
    assert content.location == f"s3://{bucket}/some/prefix"
    content_id = content.put(PNG)
    digest = content_id[7:]
    key = f"some/prefix/sha256/{digest[:2]}/{digest}"
    assert content.key(content_id) == key
    client = boto3.client("s3")
    assert client.get_object(Bucket=bucket, Key=key)["Body"].read() == PNG
    assert content.store(content_id, PNG) is False
    assert content.has(content_id)
    assert list(content.ids()) == [content_id]


def test_concurrent_writers_of_one_blob(s3_endpoint: str) -> None:
    content = S3ContentStore(f"s3://{new_bucket(s3_endpoint)}")
    results: list[object] = []

    def put() -> None:
        try:
            results.append(content.put(PNG))
        except BaseException as error:  # reported below
            results.append(error)

    threads = [threading.Thread(target=put) for _ in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert set(results) == {content.put(PNG)}
    assert content.get(content.put(PNG)) == PNG


def test_missing_and_tampered_blobs(s3_endpoint: str) -> None:
    bucket = new_bucket(s3_endpoint)
    content = S3ContentStore(f"s3://{bucket}/p")
    absent = "sha256:" + "0" * 64
    assert not content.has(absent)
    with pytest.raises(c.ContentNotFound):
        content.get(absent)
    content_id = content.put(b"original")
    boto3.client("s3").put_object(
        Bucket=bucket, Key=content.key(content_id), Body=b"edited"
    )
    with pytest.raises(c.IntegrityError, match="no longer matches"):
        content.get(content_id)
    with pytest.raises(c.StorageError):
        content.get("sha256:nothex")


@pytest.mark.parametrize(
    "blobs", ["gs://bucket/x", "s3://", "s3:///prefix", "/a/directory", 5]
)
def test_unusable_blobs_locations_are_refused(tmp_path: Path, blobs: object) -> None:
    with pytest.raises(c.StorageError, match="blobs"):
        open_store(tmp_path / "store", blobs=blobs)


def test_an_unreachable_bucket_is_a_storage_error(s3_endpoint: str) -> None:
    content = S3ContentStore("s3://no-such-bucket-here/x")
    with pytest.raises(c.StorageError, match="S3"):
        content.put(b"data")


def test_without_boto3_the_error_names_the_extra(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(sys.modules, "boto3", None)
    with pytest.raises(c.StorageError, match=r"canisters\[s3\]"):
        open_store(tmp_path / "store", blobs="s3://bucket/prefix")
