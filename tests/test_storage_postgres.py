"""The PostgreSQL backend's own behaviour (the shared behaviour is in test_storage)."""

from __future__ import annotations

import sys
from pathlib import Path

import psycopg
import pytest

import canisters as c
from canisters.storage import open_store
from canisters.storage.postgres import PostgresStore, _redact

from .test_documentation import BLOCK, DOCS


def test_both_url_schemes_open_the_postgres_backend(postgres_location: str) -> None:
    with open_store(postgres_location) as store:
        assert isinstance(store, PostgresStore)
        first = c.User("hi").id
        store.append("chat", c.User("hi", id=first))
    other = "postgres://" + postgres_location.split("://", 1)[1]
    with open_store(other) as store:
        assert [x.id for x in store.load("chat")] == [first]


def test_without_the_extra_the_error_names_it(
    monkeypatch: pytest.MonkeyPatch, postgres_location: str
) -> None:
    monkeypatch.setitem(sys.modules, "psycopg_pool", None)
    with pytest.raises(c.StorageError, match=r"canisters\[postgres\]"):
        open_store(postgres_location)


def test_an_unknown_schema_version_is_refused(postgres_location: str) -> None:
    open_store(postgres_location).close()
    with psycopg.connect(postgres_location, autocommit=True) as connection:
        connection.execute("UPDATE canisters_meta SET value = '99'")
    with pytest.raises(c.StorageError, match="schema version 99 is not supported"):
        open_store(postgres_location)


def test_an_unreachable_server_is_a_storage_error_without_the_password() -> None:
    location = "postgresql://someone:secret@127.0.0.1:1/nothing?connect_timeout=1"
    with pytest.raises(c.StorageError) as raised:
        open_store(location, timeout=0.3)
    assert "secret" not in str(raised.value)
    assert _redact(location).startswith("postgresql://someone:***@127.0.0.1:1/")


def test_flush_durability_and_pool_size(postgres_location: str) -> None:
    with open_store(postgres_location, durability="flush", pool_size=1) as store:
        assert "flush" in repr(store)
        store.append("chat", c.User("hi"))
        assert len(store.load("chat")) == 1
    with pytest.raises(c.StorageError, match="pool_size"):
        open_store(postgres_location, pool_size=0)


@pytest.mark.parametrize(
    "location", ["mysql://host/db", "s3://bucket/x", "http://example.com/store"]
)
def test_an_unknown_url_scheme_is_refused(location: str) -> None:
    with pytest.raises(c.StorageError, match="unknown store URL scheme"):
        open_store(location)


def test_the_scaling_out_examples_run(
    postgres_location: str,
    s3_blobs: str,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """The storage page's "Scaling out" examples, against the test servers."""
    page = (DOCS / "storage.rst").read_text(encoding="utf-8")
    section = page[page.index("Scaling out\n-----") :]
    blocks = [
        "\n".join(line[3:] for line in block.splitlines())
        for block in BLOCK.findall(section)
    ]
    assert len(blocks) >= 3
    monkeypatch.chdir(tmp_path)
    namespace: dict[str, object] = {"__name__": "scaling_out"}
    for block in blocks:
        code = block.replace(
            "postgresql://app:secret@db.internal:5432/chat", postgres_location
        ).replace("s3://chat-media/prod", s3_blobs)
        exec(compile(code, "storage.rst", "exec"), namespace)
    printed = capsys.readouterr().out.splitlines()
    assert printed[0].startswith("(1, ")
    assert printed[-1] == "1"
