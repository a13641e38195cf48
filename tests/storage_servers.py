"""Real servers for the storage tests, started once per test session (per
pytest-xdist worker): PostgreSQL through ``pgserver`` (listening on a Unix
socket in a fresh directory, so workers never collide) and an S3-compatible
endpoint through moto's server mode on 127.0.0.1 and a port the system picks.

Each test gets a database schema of its own (``postgres_location``) or a
bucket of its own (``s3_blobs``), so tests never see each other's data.
"""

from __future__ import annotations

import itertools
import os
import shutil
import tempfile
import warnings
from collections.abc import Iterator
from urllib.parse import quote

import pytest

_names = itertools.count()


def _unique(prefix: str) -> str:
    return f"{prefix}{os.getpid()}x{next(_names)}"


@pytest.fixture(scope="session")
def postgres_server() -> Iterator[str]:
    """The URL of a PostgreSQL server of this session."""
    with warnings.catch_warnings():
        # platformdirs warns where XDG_RUNTIME_DIR is unset (containers, CI).
        warnings.simplefilter("ignore")
        import pgserver  # the test extra installs it

    # A short directory: the server's Unix socket lives in it (108-byte limit).
    directory = tempfile.mkdtemp(prefix="pg")
    server = pgserver.get_server(directory, cleanup_mode="stop")
    try:
        yield str(server.get_uri())
    finally:
        server.cleanup()
        shutil.rmtree(directory, ignore_errors=True)


def schema_location(server: str, schema: str) -> str:
    """The URL of ``server`` with ``schema`` first on the search path."""
    import psycopg

    with psycopg.connect(server, autocommit=True) as connection:
        connection.execute(f"CREATE SCHEMA IF NOT EXISTS {schema}")
    options = quote(f"-csearch_path={schema}")
    return f"{server}&options={options}"


@pytest.fixture
def postgres_location(postgres_server: str) -> str:
    """A PostgreSQL store location of this test's own (a fresh schema)."""
    return schema_location(postgres_server, _unique("t"))


@pytest.fixture(scope="session")
def s3_endpoint() -> Iterator[str]:
    """The URL of a moto S3 server of this session; AWS settings point to it."""
    from moto.server import ThreadedMotoServer  # the test extra installs it

    server = ThreadedMotoServer(ip_address="127.0.0.1", port=0, verbose=False)
    server.start()
    host, port = server.get_host_and_port()
    endpoint = f"http://{host}:{port}"
    settings = {
        "AWS_ENDPOINT_URL": endpoint,
        "AWS_ACCESS_KEY_ID": "testing",
        "AWS_SECRET_ACCESS_KEY": "testing",
        "AWS_DEFAULT_REGION": "us-east-1",
    }
    saved = {name: os.environ.get(name) for name in settings}
    os.environ.update(settings)
    try:
        yield endpoint
    finally:
        for name, value in saved.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value
        server.stop()


def new_bucket(endpoint: str) -> str:
    """Create a fresh bucket and return its name."""
    import boto3

    name = _unique("b")
    boto3.client("s3", endpoint_url=endpoint).create_bucket(Bucket=name)
    return name


@pytest.fixture
def s3_blobs(s3_endpoint: str) -> str:
    """A ``blobs=`` location of this test's own: a fresh bucket and a prefix."""
    return f"s3://{new_bucket(s3_endpoint)}/blobs"
