"""The PostgreSQL backend (``postgresql://user:password@host:5432/dbname``).

For deployments that outgrow one machine: any number of processes on any
number of hosts share one store. Needs the ``postgres`` extra (psycopg 3 and
psycopg-pool). Tables, created on first open (a store shares its database
with other applications' tables through the ``canisters_`` prefix)::

    canisters_meta(key TEXT PRIMARY KEY, value TEXT)          -- schema version
    canisters_blobs(id TEXT PRIMARY KEY, data BYTEA, created DOUBLE PRECISION)
    canisters_conversations(id TEXT PRIMARY KEY, parent TEXT, fork_seq BIGINT,
                            fork_head TEXT, fork_at TEXT, length BIGINT,
                            head TEXT, indexed BIGINT)  -- the pinned head
    canisters_records(conversation TEXT, seq BIGINT, line BYTEA)
    canisters_ids(conversation TEXT, canister TEXT, seq BIGINT)  -- canister ids
    canisters_sidecars(n BIGSERIAL, conversation TEXT, name TEXT, line TEXT)
    canisters_search(...)       -- the search index (see _search_postgres)
    canisters_append_v3(...)    -- a function: one append in one statement

``canisters_records.line`` holds exactly the record a line of the file
backend's ``messages.jsonl`` holds, so every backend shares one record format
and hash chain. Each conversation's row keeps its length and last digest apart
from the log, updated in the transaction that appends, so ``verify`` also
detects records deleted from the end. An append is one transaction that locks
its conversation's row (``SELECT ... FOR UPDATE``): writers of one conversation
are serialized, writers of different conversations run in parallel. Writers hold
a shared advisory lock that garbage collection takes exclusively. Most appends
are one statement, a round trip with its commit: the store remembers the head
its last append left and encodes the records against it, and the function
checks it, the canister ids and the lock, and writes everything (the records
sent as one byte string, their ids and search rows as JSON, which the server
splits); a head another writer moved costs one more round trip, a fork's append
the general plan. Opening a store made by an earlier version adds the function
(an earlier one is left for the libraries that still call it). Loads stream
the log through a server-side cursor, fetching the blobs it names a few dozen
per round trip.

Two faces share every statement and check: :class:`PostgresStore` (plain
connections) and :class:`AsyncPostgresStore` (psycopg's asyncio connections,
what :func:`~canisters.storage.open_async_store` opens for a PostgreSQL URL).
Each operation is written once as a plan of statements that either face runs.
"""

from __future__ import annotations

import asyncio
import math
from collections.abc import Iterable, Iterator
from typing import TYPE_CHECKING, Any, Literal, TypeVar

from ..conversation import Conversation
from ..exceptions import StorageError
from ..protocols import Canister
from . import _postgres as plans
from . import _postgres_append as appending
from . import _postgres_manage as manage
from . import _search_postgres as search_plans
from ._common import (
    GarbageReport,
    Progress,
    SidecarBase,
    StoragePolicy,
    StoreStats,
    Verification,
    check_durability,
    check_id,
)
from ._forks import Fork
from ._postgres import Backend, Call, Many, Op, Pipeline, Plan, Query
from ._postgres_settings import driver as _modules
from ._postgres_settings import masked as _redact
from ._postgres_settings import seconds as _seconds
from ._redaction import AsyncExpiry, Expiry
from ._redaction_postgres import AsyncPostgresRedaction, PostgresRedaction
from ._search_postgres import AsyncPostgresSearch, PostgresSearch
from .aio import ThreadedContentStore
from .s3 import S3ContentStore, open_blobs

if TYPE_CHECKING:
    import psycopg
    import psycopg_pool

__all__ = [
    "AsyncPostgresContentStore",
    "AsyncPostgresSidecar",
    "AsyncPostgresStore",
    "PostgresContentStore",
    "PostgresSidecar",
    "PostgresStore",
]

T = TypeVar("T")

SCHEMA_VERSION = plans.SCHEMA_VERSION


# --------------------------------------------------------------------------- #
# Running plans: the only code that differs between the two faces


def _name(plan: Plan[Any]) -> str:
    """The operation a plan carries out (its generator function's name)."""
    return str(getattr(plan, "__name__", "operation"))


def _rows(cursor: Any) -> list[Any]:
    return cursor.fetchall() if cursor.description is not None else []


def _submit(connection: psycopg.Connection[Any], step: Query | Many) -> Any:
    if isinstance(step, Query):
        return connection.execute(
            step.sql,
            step.params,
            binary=step.binary,
            prepare=None if step.planned else False,
        )
    cursor = connection.cursor()
    cursor.executemany(step.sql, step.rows)
    return cursor


def _execute(connection: psycopg.Connection[Any], op: Op) -> Any:
    if isinstance(op, Call):
        return op.function(*op.args)
    if isinstance(op, Query) and op.alone:
        # Committed as it runs: no BEGIN before it, no COMMIT after it.
        connection.autocommit = True
        try:
            return _submit(connection, op).fetchall()
        finally:
            if not _lost(connection):
                connection.autocommit = False
    if isinstance(op, Pipeline):
        with connection.pipeline():
            cursors = [_submit(connection, step) for step in op.steps]
        return [_rows(cursor) for cursor in cursors]
    return _rows(_submit(connection, op))


def _lost(connection: Any) -> bool:
    """Whether the connection to the server is gone (psycopg then reports its
    own state, such as "connection not in pipeline mode", not the cause)."""
    return connection is not None and bool(connection.broken or connection.closed)


def _failed(name: str, error: Exception, connection: Any) -> StorageError:
    """The error of an operation the driver failed, saying what to do."""
    if _lost(connection):
        return StorageError(
            f"{name} failed: the connection to the server was lost ({error}); "
            "a write may have been committed, and retrying it is safe"
        )
    return StorageError(f"{name} failed: {error}")


def _busy_or_down(name: str, pool: Any, reason: str | None) -> StorageError:
    """The error of an operation that got no connection within the timeout:
    ``reason`` is why a fresh connection failed, ``None`` if one succeeded."""
    if reason is None:
        return StorageError(
            f"{name} failed: no connection of the pool was free within "
            f"{pool.timeout:g} s, though the server accepts new ones: all "
            f"{pool.max_size} busy (raise pool_size or timeout), or the pool still "
            "reconnecting after an outage (retry)"
        )
    return StorageError(
        f"{name} failed: no connection to the server within {pool.timeout:g} s: "
        f"{reason}"
    )


def _probe(pool: Any) -> str | None:
    """Connect once outside the pool: ``None``, or the server's reason not to."""
    driver, _ = _modules()
    try:
        driver.connect(pool.conninfo, **pool.kwargs).close()
    except driver.Error as error:
        return str(error)
    return None


def _run(pool: psycopg_pool.ConnectionPool[Any], plan: Plan[T]) -> T:
    """Run ``plan`` in one transaction on a connection of ``pool``.

    Calls the plan makes before its first statement (blobs uploaded to a
    bucket) run before a connection is taken: they hold no lock and no
    connection of the pool.
    """
    driver, pool_module = _modules()
    connection: Any = None
    try:
        op = plan.send(None)
        while isinstance(op, Call):
            op = plan.send(op.function(*op.args))
        with pool.connection() as connection:
            while True:
                result = _execute(connection, op)
                try:
                    op = plan.send(result)
                except StopIteration as done:  # committed as the block ends
                    value: T = done.value
                    break
        return value
    except StopIteration as done:  # done before any statement
        early: T = done.value
        return early
    except pool_module.PoolTimeout as error:
        raise _busy_or_down(_name(plan), pool, _probe(pool)) from error
    except driver.Error as error:
        raise _failed(_name(plan), error, connection) from error
    finally:
        plan.close()


async def _submit_async(
    connection: psycopg.AsyncConnection[Any], step: Query | Many
) -> Any:
    if isinstance(step, Query):
        return await connection.execute(
            step.sql,
            step.params,
            binary=step.binary,
            prepare=None if step.planned else False,
        )
    cursor = connection.cursor()
    await cursor.executemany(step.sql, step.rows)
    return cursor


async def _rows_async(cursor: Any) -> list[Any]:
    return await cursor.fetchall() if cursor.description is not None else []


async def _execute_async(connection: psycopg.AsyncConnection[Any], op: Op) -> Any:
    if isinstance(op, Call):
        return await asyncio.to_thread(op.function, *op.args)
    if isinstance(op, Query) and op.alone:
        await connection.set_autocommit(True)
        try:
            return await (await _submit_async(connection, op)).fetchall()
        finally:
            if not _lost(connection):
                await connection.set_autocommit(False)
    if isinstance(op, Pipeline):
        async with connection.pipeline():
            cursors = [await _submit_async(connection, step) for step in op.steps]
        return [await _rows_async(cursor) for cursor in cursors]
    return await _rows_async(await _submit_async(connection, op))


async def _probe_async(pool: Any) -> str | None:
    """:func:`_probe` on an asyncio connection."""
    driver, _ = _modules()
    try:
        connection = await driver.AsyncConnection.connect(pool.conninfo, **pool.kwargs)
        await connection.close()
    except driver.Error as error:
        return str(error)
    return None


async def _run_async(pool: psycopg_pool.AsyncConnectionPool[Any], plan: Plan[T]) -> T:
    """Run ``plan`` in one transaction on a connection of ``pool`` (calls before
    its first statement run first, holding no connection: see :func:`_run`)."""
    driver, pool_module = _modules()
    connection: Any = None
    try:
        op = plan.send(None)
        while isinstance(op, Call):
            op = plan.send(await asyncio.to_thread(op.function, *op.args))
        async with pool.connection() as connection:
            while True:
                result = await _execute_async(connection, op)
                try:
                    op = plan.send(result)
                except StopIteration as done:  # committed as the block ends
                    value: T = done.value
                    break
        return value
    except StopIteration as done:  # done before any statement
        early: T = done.value
        return early
    except pool_module.PoolTimeout as error:
        raise _busy_or_down(_name(plan), pool, await _probe_async(pool)) from error
    except driver.Error as error:
        raise _failed(_name(plan), error, connection) from error
    finally:
        plan.close()


# --------------------------------------------------------------------------- #
# Options both faces take


class _Settings:
    """The options of a store, checked, and what the plans need."""

    def __init__(
        self,
        location: str,
        *,
        policy: StoragePolicy | None = None,
        durability: Literal["fsync", "flush"] = "fsync",
        pool_size: int = 4,
        timeout: float = 10.0,
        connect_timeout: float = 5.0,
        blobs: str | S3ContentStore | None = None,
    ) -> None:
        driver, _pool_module = _modules()
        self._location = location
        self._policy = policy if policy is not None else StoragePolicy()
        self._durability = check_durability(durability)
        if type(pool_size) is not int or pool_size < 1:
            raise StorageError(f"pool_size must be a positive int, got {pool_size!r}")
        self._pool_size = pool_size
        self._timeout = _seconds("timeout", timeout)
        try:
            named = driver.conninfo.conninfo_to_dict(location)
        except driver.Error as error:
            raise self._cannot_open(error) from None
        # libpq takes whole seconds; a connect_timeout in the URL wins.
        self._kwargs: dict[str, Any] = (
            {}
            if "connect_timeout" in named
            else {
                "connect_timeout": max(
                    1, math.ceil(_seconds("connect_timeout", connect_timeout))
                )
            }
        )
        self._external = open_blobs(blobs) if blobs is not None else None
        self._setting = (
            f"SET synchronous_commit = {'on' if durability == 'fsync' else 'off'}"
        )
        self._plans: Backend = plans.backend(self._policy, self._external)
        self._heads = appending.Heads()
        self._connect()

    def _connect(self) -> None:
        """Connect and create the schema (the asyncio face waits for open())."""
        raise NotImplementedError

    def _pool_options(self) -> dict[str, Any]:
        return {
            "min_size": 1,
            "max_size": self._pool_size,
            "timeout": self._timeout,
            "kwargs": self._kwargs,
            "open": False,
        }

    def _cannot_open(self, error: Exception) -> StorageError:
        return StorageError(f"cannot open store {_redact(self._location)}: {error}")

    @property
    def location(self) -> str:
        """The database URL, password hidden."""
        return _redact(self._location)

    @property
    def policy(self) -> StoragePolicy:
        """Which parts are stored by hash."""
        return self._policy

    @property
    def durability(self) -> Literal["fsync", "flush"]:
        """How far an append goes before it returns."""
        return self._durability

    def __repr__(self) -> str:
        return (
            f"{type(self).__name__}({self.location!r}, durability={self._durability!r})"
        )


# --------------------------------------------------------------------------- #
# The synchronous face


class PostgresContentStore:
    """Blobs in the ``canisters_blobs`` table, verified on every read."""

    __slots__ = ("_pool",)

    def __init__(self, pool: psycopg_pool.ConnectionPool[Any]) -> None:
        self._pool = pool

    def put(self, data: bytes) -> str:
        """Store ``data`` once and return its ``sha256:`` id."""
        return _run(self._pool, plans.put(data))

    def get(self, content_id: str) -> bytes:
        """Return the bytes of ``content_id``, checking them against the id."""
        return _run(self._pool, plans.get(content_id))

    def has(self, content_id: str) -> bool:
        """Tell whether the blob is stored."""
        return _run(self._pool, plans.has(content_id))

    def ids(self) -> Iterator[str]:
        """Yield the id of every stored blob."""
        return iter(_run(self._pool, plans.ids()))


class PostgresSidecar(SidecarBase):
    """A side file: rows of the ``canisters_sidecars`` table."""

    __slots__ = ("_pool",)

    def __init__(
        self, pool: psycopg_pool.ConnectionPool[Any], conversation_id: str, name: str
    ) -> None:
        super().__init__(conversation_id, name)
        self._pool = pool

    def append_line(self, line: str) -> None:
        """Append one line in its own transaction."""
        _run(self._pool, plans.append_line(self._conversation_id, self._name, line))

    def read_lines(self) -> list[str]:
        """Return every line, oldest first."""
        return _run(self._pool, plans.read_lines(self._conversation_id, self._name))


class PostgresStore(PostgresSearch, PostgresRedaction, Expiry, _Settings):
    """The PostgreSQL backend: conversations and blobs in one database.

    ``location`` is a libpq URL (``postgresql://`` or ``postgres://``).
    ``durability="flush"`` turns ``synchronous_commit`` off for the store's
    connections (a commit may be lost if the server crashes, never torn);
    ``pool_size`` bounds the connections the store opens; ``timeout`` (seconds,
    default 10) bounds how long a call waits for one, so that calls fail within
    it while the server is down, saying why; ``connect_timeout`` (seconds,
    default 5; one in the URL wins) bounds establishing a connection; ``blobs``
    (``"s3://bucket/prefix"``) keeps content blobs in an S3-compatible bucket
    instead of the database. Opening connects once first, so a server that
    cannot be reached or refuses fails at once with its reason.
    """

    def _connect(self) -> None:
        driver, pool_module = _modules()
        setting = self._setting

        def configure(connection: psycopg.Connection[Any]) -> None:
            connection.execute(setting)
            connection.commit()

        try:
            # One connection first, outside the pool: a server that cannot be
            # reached, or refuses, says why at once (the pool would retry in
            # the background until its timeout and say only that it ran out).
            driver.connect(self._location, **self._kwargs).close()
            self._pool: psycopg_pool.ConnectionPool[Any] = pool_module.ConnectionPool(
                self._location, configure=configure, **self._pool_options()
            )
            self._pool.open(wait=True, timeout=self._timeout)
        except (driver.Error, pool_module.PoolTimeout) as error:
            raise self._cannot_open(error) from error
        try:
            _run(self._pool, appending.create_schema())
            _run(self._pool, search_plans.create_schema())
        except BaseException:
            self._pool.close()
            raise
        self._content: PostgresContentStore | S3ContentStore = (
            self._external
            if self._external is not None
            else PostgresContentStore(self._pool)
        )

    @property
    def content(self) -> PostgresContentStore | S3ContentStore:
        """The content store (the bucket's when ``blobs`` names one)."""
        return self._content

    def _call(self, plan: Plan[T]) -> T:
        return _run(self._pool, plan)

    def append(self, conversation_id: str, canister: Canister) -> None:
        """Append one canister in one transaction, creating the conversation."""
        self.extend(conversation_id, (canister,))

    def extend(self, conversation_id: str, canisters: Iterable[Canister]) -> None:
        """Append canisters in one transaction, creating the conversation."""
        _run(
            self._pool,
            appending.extend(self._plans, self._heads, conversation_id, canisters),
        )

    def load(self, conversation_id: str, *, salvage: bool = False) -> Conversation:
        """Return the hydrated conversation, checking its hash chain."""
        return _run(self._pool, plans.load(self._plans, conversation_id, salvage))

    def verify(self, conversation_id: str) -> Verification:
        """Check the hash chain, the pinned head and every referenced blob."""
        return _run(self._pool, plans.verify(self._plans, conversation_id))

    def head(self, conversation_id: str) -> tuple[int, str]:
        """Return the number of records and the digest of the last one."""
        return _run(self._pool, plans.head(conversation_id))

    def exists(self, conversation_id: str) -> bool:
        """Tell whether the conversation exists."""
        return _run(self._pool, plans.exists(conversation_id))

    def conversations(self) -> list[str]:
        """Return the id of every conversation, sorted."""
        return _run(self._pool, plans.conversations())

    def fork(self, conversation_id: str, at: str) -> str:
        """Start a new conversation sharing the prefix up to canister ``at``."""
        return _run(self._pool, manage.fork(self._plans, conversation_id, at))

    def origin(self, conversation_id: str) -> Fork | None:
        """Return where the conversation was forked (``None``: not a fork)."""
        return _run(self._pool, manage.origin(conversation_id))

    def forks(self, conversation_id: str) -> list[Fork]:
        """Return the forks made of the conversation, sorted by id."""
        return _run(self._pool, manage.forks(conversation_id))

    def delete(self, conversation_id: str) -> None:
        """Delete the conversation and its side files; refused while forks exist."""
        _run(self._pool, manage.delete(conversation_id))

    def sidecar(self, conversation_id: str, name: str) -> PostgresSidecar:
        """Return the side file ``name`` of the conversation."""
        return PostgresSidecar(
            self._pool, check_id(conversation_id), check_id(name, "side-file name")
        )

    def sidecar_names(self, conversation_id: str) -> list[str]:
        """Return the name of every side file of the conversation, sorted."""
        return _run(self._pool, manage.sidecar_names(conversation_id))

    def referenced_content(self) -> set[str]:
        """Return every content id a conversation log or side file mentions."""
        return _run(self._pool, manage.referenced_content())

    def collect_garbage(
        self,
        *,
        dry_run: bool = False,
        older_than: float = 0.0,
        progress: Progress | None = None,
    ) -> GarbageReport:
        """Remove unreferenced blobs while no writer runs (an exclusive lock)."""
        return _run(
            self._pool,
            manage.collect_garbage(self._plans, dry_run, older_than, progress),
        )

    def stats(self, *, progress: Progress | None = None) -> StoreStats:
        """Count conversations, records, blobs and references, and their bytes."""
        return _run(self._pool, manage.stats(self._plans, progress))

    def close(self) -> None:
        """Close every connection of the pool."""
        self._pool.close()

    def __enter__(self) -> PostgresStore:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()


# --------------------------------------------------------------------------- #
# The asyncio face


class AsyncPostgresContentStore:
    """:class:`PostgresContentStore` as coroutines, on asyncio connections."""

    __slots__ = ("_pool",)

    def __init__(self, pool: psycopg_pool.AsyncConnectionPool[Any]) -> None:
        self._pool = pool

    async def put(self, data: bytes) -> str:
        """Store ``data`` once and return its ``sha256:`` id."""
        return await _run_async(self._pool, plans.put(data))

    async def get(self, content_id: str) -> bytes:
        """Return the bytes of ``content_id``, checking them against the id."""
        return await _run_async(self._pool, plans.get(content_id))

    async def has(self, content_id: str) -> bool:
        """Tell whether the blob is stored."""
        return await _run_async(self._pool, plans.has(content_id))

    async def ids(self) -> list[str]:
        """Return the id of every stored blob."""
        return await _run_async(self._pool, plans.ids())


class AsyncPostgresSidecar(SidecarBase):
    """:class:`PostgresSidecar` as coroutines, on asyncio connections."""

    __slots__ = ("_pool",)

    def __init__(
        self,
        pool: psycopg_pool.AsyncConnectionPool[Any],
        conversation_id: str,
        name: str,
    ) -> None:
        super().__init__(conversation_id, name)
        self._pool = pool

    async def append_line(self, line: str) -> None:
        """Append one line in its own transaction."""
        await _run_async(
            self._pool, plans.append_line(self._conversation_id, self._name, line)
        )

    async def read_lines(self) -> list[str]:
        """Return every line, oldest first."""
        return await _run_async(
            self._pool, plans.read_lines(self._conversation_id, self._name)
        )


class AsyncPostgresStore(
    AsyncPostgresSearch, AsyncPostgresRedaction, AsyncExpiry, _Settings
):
    """The PostgreSQL backend as coroutines, on psycopg's asyncio connections.

    Takes :class:`PostgresStore`'s arguments and runs the same statements, so
    both faces can share one database. :meth:`open` (which
    :func:`~canisters.storage.open_async_store` awaits) connects and creates
    the schema; calls then run on up to ``pool_size`` connections at once, the
    rest queue for one. Blobs in S3 are read and written in worker threads
    (boto3 blocks).
    """

    def _connect(self) -> None:
        self._pool: psycopg_pool.AsyncConnectionPool[Any] | None = None
        self._content: AsyncPostgresContentStore | ThreadedContentStore | None = None

    async def open(self) -> AsyncPostgresStore:
        """Connect, create the schema when missing, and return the store."""
        driver, pool_module = _modules()
        setting = self._setting

        async def configure(connection: psycopg.AsyncConnection[Any]) -> None:
            await connection.execute(setting)
            await connection.commit()

        try:
            # One connection first: see PostgresStore.
            connection = await driver.AsyncConnection.connect(
                self._location, **self._kwargs
            )
            await connection.close()
            pool: psycopg_pool.AsyncConnectionPool[Any] = (
                pool_module.AsyncConnectionPool(
                    self._location, configure=configure, **self._pool_options()
                )
            )
            await pool.open(wait=True, timeout=self._timeout)
        except (driver.Error, pool_module.PoolTimeout) as error:
            raise self._cannot_open(error) from error
        try:
            await _run_async(pool, appending.create_schema())
            await _run_async(pool, search_plans.create_schema())
        except BaseException:
            await pool.close()
            raise
        self._pool = pool
        self._content = (
            ThreadedContentStore(self._external)
            if self._external is not None
            else AsyncPostgresContentStore(pool)
        )
        return self

    @property
    def _opened(self) -> psycopg_pool.AsyncConnectionPool[Any]:
        if self._pool is None:
            raise StorageError(f"{self!r} is not open: await its open() first")
        return self._pool

    @property
    def content(self) -> AsyncPostgresContentStore | ThreadedContentStore:
        """The content store, as coroutines (the bucket's when ``blobs`` names
        one, in worker threads)."""
        if self._content is None:
            raise StorageError(f"{self!r} is not open: await its open() first")
        return self._content

    async def _call(self, plan: Plan[T]) -> T:
        return await _run_async(self._opened, plan)

    async def append(self, conversation_id: str, canister: Canister) -> None:
        """Append one canister in one transaction, creating the conversation."""
        await self.extend(conversation_id, (canister,))

    async def extend(self, conversation_id: str, canisters: Iterable[Canister]) -> None:
        """Append canisters in one transaction, creating the conversation."""
        await _run_async(
            self._opened,
            appending.extend(self._plans, self._heads, conversation_id, canisters),
        )

    async def load(
        self, conversation_id: str, *, salvage: bool = False
    ) -> Conversation:
        """Return the hydrated conversation, checking its hash chain."""
        return await _run_async(
            self._opened, plans.load(self._plans, conversation_id, salvage)
        )

    async def verify(self, conversation_id: str) -> Verification:
        """Check the hash chain, the pinned head and every referenced blob."""
        return await _run_async(
            self._opened, plans.verify(self._plans, conversation_id)
        )

    async def head(self, conversation_id: str) -> tuple[int, str]:
        """Return the number of records and the digest of the last one."""
        return await _run_async(self._opened, plans.head(conversation_id))

    async def exists(self, conversation_id: str) -> bool:
        """Tell whether the conversation exists."""
        return await _run_async(self._opened, plans.exists(conversation_id))

    async def conversations(self) -> list[str]:
        """Return the id of every conversation, sorted."""
        return await _run_async(self._opened, plans.conversations())

    async def fork(self, conversation_id: str, at: str) -> str:
        """Start a new conversation sharing the prefix up to canister ``at``."""
        return await _run_async(
            self._opened, manage.fork(self._plans, conversation_id, at)
        )

    async def origin(self, conversation_id: str) -> Fork | None:
        """Return where the conversation was forked (``None``: not a fork)."""
        return await _run_async(self._opened, manage.origin(conversation_id))

    async def forks(self, conversation_id: str) -> list[Fork]:
        """Return the forks made of the conversation, sorted by id."""
        return await _run_async(self._opened, manage.forks(conversation_id))

    async def delete(self, conversation_id: str) -> None:
        """Delete the conversation and its side files; refused while forks exist."""
        await _run_async(self._opened, manage.delete(conversation_id))

    def sidecar(self, conversation_id: str, name: str) -> AsyncPostgresSidecar:
        """Return the side file ``name`` of the conversation, as coroutines."""
        return AsyncPostgresSidecar(
            self._opened, check_id(conversation_id), check_id(name, "side-file name")
        )

    async def sidecar_names(self, conversation_id: str) -> list[str]:
        """Return the name of every side file of the conversation, sorted."""
        return await _run_async(self._opened, manage.sidecar_names(conversation_id))

    async def referenced_content(self) -> set[str]:
        """Return every content id a conversation log or side file mentions."""
        return await _run_async(self._opened, manage.referenced_content())

    async def collect_garbage(
        self,
        *,
        dry_run: bool = False,
        older_than: float = 0.0,
        progress: Progress | None = None,
    ) -> GarbageReport:
        """Remove unreferenced blobs while no writer runs (an exclusive lock)."""
        return await _run_async(
            self._opened,
            manage.collect_garbage(self._plans, dry_run, older_than, progress),
        )

    async def stats(self, *, progress: Progress | None = None) -> StoreStats:
        """Count conversations, records, blobs and references, and their bytes."""
        return await _run_async(self._opened, manage.stats(self._plans, progress))

    async def close(self) -> None:
        """Close every connection of the pool."""
        if self._pool is not None:
            await self._pool.close()

    async def __aenter__(self) -> AsyncPostgresStore:
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.close()
