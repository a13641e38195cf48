"""Real servers for the storage tests: PostgreSQL through ``pgserver``, one
server a test run's pytest-xdist workers share (listening on a Unix socket in
its own directory), and an S3-compatible endpoint through moto's server mode on
127.0.0.1 and a port the system picks, one per worker.

Each test gets a database schema of its own (``postgres_location``, named after
its worker's process) or a bucket of its own (``s3_blobs``), so tests never see
each other's data.
"""

from __future__ import annotations

import functools
import itertools
import os
import shutil
import tempfile
import warnings
from collections.abc import Iterator
from typing import Any
from urllib.parse import quote

import pytest

_names = itertools.count()


def _unique(prefix: str) -> str:
    return f"{prefix}{os.getpid()}x{next(_names)}"


# Settings of the test server: what a crash of the server itself would lose is
# not what these tests look at (they kill clients, never the server), so it does
# not wait for the disk. A shutdown then has next to nothing to flush.
_SERVER_SETTINGS = {
    "fsync": "off",
    "full_page_writes": "off",
    "synchronous_commit": "off",
}


def _scratch() -> str:
    """Where the server keeps its files: Linux's shared memory when it has a
    gigabyte free (the server's thousands of small files are then created and
    removed at memory speed, not the disk's), else the temporary directory."""
    memory = "/dev/shm"
    try:
        if shutil.disk_usage(memory).free >= 1 << 30 and os.access(memory, os.W_OK):
            return memory
    except OSError:
        pass
    return tempfile.gettempdir()


@pytest.fixture(scope="session")
def postgres_server() -> Iterator[str]:
    """The URL of a PostgreSQL server of this test run: pytest-xdist's workers
    share one (the last one out stops it), each test having a schema of its own."""
    with warnings.catch_warnings():
        # platformdirs warns where XDG_RUNTIME_DIR is unset (containers, CI).
        warnings.simplefilter("ignore")
        import pgserver  # the test extra installs it
    import psycopg

    # A short directory (the server's Unix socket lives in it: a 108-byte
    # limit), in memory where the machine has room for it.
    run = os.environ.get("PYTEST_XDIST_TESTRUNUID")
    if run:
        directory = os.path.join(_scratch(), f"pg{run[:12]}")
        os.makedirs(directory, exist_ok=True)
    else:
        directory = tempfile.mkdtemp(prefix="pg", dir=_scratch())
    # "delete": the last handle (of every worker) stops the server and removes
    # its directory.
    server = pgserver.get_server(directory, cleanup_mode="delete")
    try:
        uri = str(server.get_uri())
        with psycopg.connect(uri, autocommit=True) as connection:
            for name, value in _SERVER_SETTINGS.items():
                connection.execute(f"ALTER SYSTEM SET {name} = {value}")
            connection.execute("SELECT pg_reload_conf()")
        yield uri
    finally:
        server.cleanup()


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


@functools.cache
def _client(endpoint: str) -> Any:
    """One S3 client per endpoint (making one takes tens of milliseconds)."""
    import boto3

    return boto3.client("s3", endpoint_url=endpoint)


def new_bucket(endpoint: str) -> str:
    """Create a fresh bucket and return its name."""
    name = _unique("b")
    _client(endpoint).create_bucket(Bucket=name)
    return name


@pytest.fixture
def s3_blobs(s3_endpoint: str) -> str:
    """A ``blobs=`` location of this test's own: a fresh bucket and a prefix."""
    return f"s3://{new_bucket(s3_endpoint)}/blobs"


class OwnPostgres:
    """A PostgreSQL server of one test's own, which the test may stop (as a
    crash: ``pg_ctl -m immediate``) and start again."""

    def __init__(self, directory: str) -> None:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            import pgserver

        self._server = pgserver.get_server(directory, cleanup_mode="delete")
        self.uri = str(self._server.get_uri())

    def stop(self) -> None:
        """Stop the server at once, as a crash would."""
        from pgserver import pg_ctl

        server = self._server
        pg_ctl(
            ["-m", "immediate", "-w", "stop"],
            pgdata=server.pgdata,
            user=server.system_user,
        )

    def start(self) -> None:
        """Start the server again (it recovers from its log)."""
        self._server.ensure_postgres_running()

    def close(self) -> None:
        """Stop the server and remove its files."""
        self._server.cleanup()


@pytest.fixture
def own_postgres() -> Iterator[OwnPostgres]:
    """A PostgreSQL server of this test's own, which it may stop and start."""
    server = OwnPostgres(tempfile.mkdtemp(prefix="pg", dir=_scratch()))
    try:
        yield server
    finally:
        server.close()
