"""The PostgreSQL backend (``postgresql://user:password@host:5432/dbname``).

For deployments that outgrow one machine: any number of processes on any
number of hosts share one store. Needs the ``postgres`` extra (psycopg 3 and
psycopg-pool). Tables, created on first open (a store shares its database
with other applications' tables through the ``canisters_`` prefix)::

    canisters_meta(key TEXT PRIMARY KEY, value TEXT)          -- schema version
    canisters_blobs(id TEXT PRIMARY KEY, data BYTEA, created DOUBLE PRECISION)
    canisters_conversations(id TEXT PRIMARY KEY, parent TEXT, fork_seq BIGINT,
                            fork_head TEXT, fork_at TEXT,
                            length BIGINT, head TEXT)         -- the pinned head
    canisters_records(conversation TEXT, seq BIGINT, line BYTEA)
    canisters_sidecars(n BIGSERIAL, conversation TEXT, name TEXT, line TEXT)

``canisters_records.line`` holds exactly the record a line of the file
backend's ``messages.jsonl`` holds, so every backend shares one record format
and hash chain. Each conversation's row keeps its length and last digest apart
from the log, updated in the transaction that appends, so ``verify`` also
detects records deleted from the end. An append is one transaction that locks
its conversation's row (``SELECT ... FOR UPDATE``): writers of one conversation
are serialized, writers of different conversations run in parallel. Writers hold
a shared advisory lock that garbage collection takes exclusively. Loads stream
the log through a server-side cursor.
"""

from __future__ import annotations

import functools
import time
from collections.abc import Callable, Generator, Iterable, Iterator
from typing import TYPE_CHECKING, Any, Final, Literal, ParamSpec, TypeVar

from ..canisters import new_id
from ..conversation import Conversation
from ..exceptions import (
    CanisterNotFound,
    ContentNotFound,
    ConversationNotFound,
    IntegrityError,
    StorageError,
)
from ..protocols import Canister
from ._common import (
    Chain,
    Codec,
    GarbageReport,
    Progress,
    StoragePolicy,
    StoreStats,
    Verification,
    check_bytes,
    check_content_id,
    check_durability,
    check_id,
    check_line,
    content_id_of,
    encode_record,
    references,
    sweep,
)
from .s3 import S3ContentStore, open_blobs

if TYPE_CHECKING:
    import psycopg
    import psycopg_pool

__all__ = [
    "PostgresContentStore",
    "PostgresSidecar",
    "PostgresStore",
]

P = ParamSpec("P")
T = TypeVar("T")

SCHEMA_VERSION: Final = 1
_STREAM_ROWS: Final = 2000
# Advisory lock keys: one for creating the schema, one that writers hold shared
# and garbage collection exclusive.
_SCHEMA_LOCK: Final = 0x63616E6973746572
_GC_LOCK: Final = 0x63616E6973746572 + 1
_SCHEMA: Final = (
    "CREATE TABLE IF NOT EXISTS canisters_meta "
    "(key TEXT PRIMARY KEY, value TEXT NOT NULL)",
    "CREATE TABLE IF NOT EXISTS canisters_blobs (id TEXT PRIMARY KEY, "
    "data BYTEA NOT NULL, created DOUBLE PRECISION NOT NULL)",
    "CREATE TABLE IF NOT EXISTS canisters_conversations (id TEXT PRIMARY KEY, "
    "parent TEXT, fork_seq BIGINT, fork_head TEXT, fork_at TEXT, "
    "length BIGINT NOT NULL DEFAULT 0, head TEXT NOT NULL DEFAULT '')",
    "CREATE INDEX IF NOT EXISTS canisters_conversations_parent "
    "ON canisters_conversations (parent)",
    "CREATE TABLE IF NOT EXISTS canisters_records (conversation TEXT NOT NULL, "
    "seq BIGINT NOT NULL, line BYTEA NOT NULL, PRIMARY KEY (conversation, seq))",
    "CREATE TABLE IF NOT EXISTS canisters_sidecars (n BIGSERIAL PRIMARY KEY, "
    "conversation TEXT NOT NULL, name TEXT NOT NULL, line TEXT NOT NULL)",
    "CREATE INDEX IF NOT EXISTS canisters_sidecars_name "
    "ON canisters_sidecars (conversation, name, n)",
)


def _modules() -> tuple[Any, Any]:
    """Import psycopg and psycopg_pool, or say which extra to install."""
    try:
        import psycopg
        import psycopg_pool
    except ImportError as error:
        raise StorageError(
            "PostgreSQL stores need psycopg 3 and psycopg-pool: "
            "pip install 'canisters[postgres]'"
        ) from error
    return psycopg, psycopg_pool


def _database_errors(method: Callable[P, T]) -> Callable[P, T]:
    """Turn a ``psycopg.Error`` (or a pool timeout) into a :class:`StorageError`."""

    @functools.wraps(method)
    def wrapper(*args: P.args, **kwargs: P.kwargs) -> T:
        psycopg, pool = _modules()
        try:
            return method(*args, **kwargs)
        except (psycopg.Error, pool.PoolTimeout) as error:
            raise StorageError(f"{method.__name__} failed: {error}") from error

    return wrapper


def _redact(location: str) -> str:
    """Return ``location`` with any password replaced by ``***``."""
    scheme, separator, rest = location.partition("://")
    if not separator or "@" not in rest.split("/", 1)[0]:
        return location
    credentials, _, host = rest.partition("@")
    user = credentials.split(":", 1)[0]
    return f"{scheme}://{user}:***@{host}" if ":" in credentials else location


class PostgresContentStore:
    """Blobs in the ``canisters_blobs`` table, verified on every read."""

    __slots__ = ("_pool",)

    def __init__(self, pool: psycopg_pool.ConnectionPool[Any]) -> None:
        self._pool = pool

    @_database_errors
    def put(self, data: bytes) -> str:
        """Store ``data`` once and return its ``sha256:`` id."""
        data = check_bytes(data)
        content_id = content_id_of(data)
        with self._pool.connection() as connection:
            connection.execute("SELECT pg_advisory_xact_lock_shared(%s)", (_GC_LOCK,))
            connection.execute(
                "INSERT INTO canisters_blobs (id, data, created) VALUES (%s, %s, %s) "
                "ON CONFLICT (id) DO UPDATE SET created = excluded.created",
                (content_id, data, time.time()),
            )
        return content_id

    @_database_errors
    def get(self, content_id: str) -> bytes:
        """Return the bytes of ``content_id``, checking them against the id."""
        check_content_id(content_id)
        with self._pool.connection() as connection:
            row = connection.execute(
                "SELECT data FROM canisters_blobs WHERE id = %s", (content_id,)
            ).fetchone()
        if row is None:
            raise ContentNotFound(content_id)
        data = bytes(row[0])
        if content_id_of(data) != content_id:
            raise IntegrityError(
                f"blob {content_id} no longer matches its id (tampered or corrupt)"
            )
        return data

    @_database_errors
    def has(self, content_id: str) -> bool:
        """Tell whether the blob is stored."""
        check_content_id(content_id)
        with self._pool.connection() as connection:
            row = connection.execute(
                "SELECT 1 FROM canisters_blobs WHERE id = %s", (content_id,)
            ).fetchone()
        return row is not None

    @_database_errors
    def ids(self) -> Iterator[str]:
        """Yield the id of every stored blob."""
        with self._pool.connection() as connection:
            rows = connection.execute("SELECT id FROM canisters_blobs").fetchall()
        return iter([content_id for (content_id,) in rows])


class PostgresSidecar:
    """A side file: rows of the ``canisters_sidecars`` table."""

    __slots__ = ("_conversation_id", "_name", "_pool")

    def __init__(
        self, pool: psycopg_pool.ConnectionPool[Any], conversation_id: str, name: str
    ) -> None:
        self._pool = pool
        self._conversation_id = conversation_id
        self._name = name

    @property
    def conversation_id(self) -> str:
        """The conversation this side file belongs to."""
        return self._conversation_id

    @property
    def name(self) -> str:
        """The side file's name."""
        return self._name

    @_database_errors
    def append_line(self, line: str) -> None:
        """Append one line in its own transaction."""
        check_line(line)
        with self._pool.connection() as connection:
            connection.execute("SELECT pg_advisory_xact_lock_shared(%s)", (_GC_LOCK,))
            connection.execute(
                "INSERT INTO canisters_sidecars (conversation, name, line) "
                "VALUES (%s, %s, %s)",
                (self._conversation_id, self._name, line),
            )

    @_database_errors
    def read_lines(self) -> list[str]:
        """Return every line, oldest first."""
        with self._pool.connection() as connection:
            rows = connection.execute(
                "SELECT line FROM canisters_sidecars "
                "WHERE conversation = %s AND name = %s ORDER BY n",
                (self._conversation_id, self._name),
            ).fetchall()
        return [line for (line,) in rows]


class PostgresStore:
    """The PostgreSQL backend: conversations and blobs in one database.

    ``location`` is a libpq URL (``postgresql://`` or ``postgres://``).
    ``durability="flush"`` turns ``synchronous_commit`` off for the store's
    connections (a commit may be lost if the server crashes, never torn);
    ``pool_size`` bounds the connections the store opens; ``blobs``
    (``"s3://bucket/prefix"``) keeps content blobs in an S3-compatible bucket
    instead of the database.
    """

    def __init__(
        self,
        location: str,
        *,
        policy: StoragePolicy | None = None,
        durability: Literal["fsync", "flush"] = "fsync",
        pool_size: int = 4,
        timeout: float = 60.0,
        blobs: str | None = None,
    ) -> None:
        driver, pool_module = _modules()
        self._location = location
        self._policy = policy if policy is not None else StoragePolicy()
        self._durability = check_durability(durability)
        if type(pool_size) is not int or pool_size < 1:
            raise StorageError(f"pool_size must be a positive int, got {pool_size!r}")
        self._external = open_blobs(blobs) if blobs is not None else None
        synchronous = "on" if durability == "fsync" else "off"

        def configure(connection: psycopg.Connection[Any]) -> None:
            connection.execute(f"SET synchronous_commit = {synchronous}")
            connection.commit()

        try:
            self._pool: psycopg_pool.ConnectionPool[Any] = pool_module.ConnectionPool(
                location,
                min_size=1,
                max_size=pool_size,
                configure=configure,
                timeout=timeout,
                open=False,
            )
            self._pool.open(wait=True, timeout=timeout)
        except (driver.Error, pool_module.PoolTimeout) as error:
            raise StorageError(
                f"cannot open store {_redact(location)}: {error}"
            ) from error
        try:
            self._create_schema()
        except BaseException:
            self._pool.close()
            raise
        self._content: PostgresContentStore | S3ContentStore = (
            self._external
            if self._external is not None
            else PostgresContentStore(self._pool)
        )
        self._codec = Codec(self._policy, self._content.get)

    @_database_errors
    def _create_schema(self) -> None:
        with self._pool.connection() as connection:
            connection.execute("SELECT pg_advisory_xact_lock(%s)", (_SCHEMA_LOCK,))
            for statement in _SCHEMA:
                connection.execute(statement)
            row = connection.execute(
                "SELECT value FROM canisters_meta WHERE key = 'schema'"
            ).fetchone()
            if row is None:
                connection.execute(
                    "INSERT INTO canisters_meta (key, value) VALUES ('schema', %s)",
                    (str(SCHEMA_VERSION),),
                )
            elif row[0] != str(SCHEMA_VERSION):
                raise StorageError(
                    f"store schema version {row[0]} is not supported "
                    f"(this library reads version {SCHEMA_VERSION})"
                )

    # Properties ----------------------------------------------------------------

    @property
    def location(self) -> str:
        """The database URL, password hidden."""
        return _redact(self._location)

    @property
    def content(self) -> PostgresContentStore | S3ContentStore:
        """The content store (the bucket's when ``blobs`` names one)."""
        return self._content

    @property
    def policy(self) -> StoragePolicy:
        """Which parts are stored by hash."""
        return self._policy

    @property
    def durability(self) -> Literal["fsync", "flush"]:
        """How far an append goes before it returns."""
        return self._durability

    # Writing -------------------------------------------------------------------

    def append(self, conversation_id: str, canister: Canister) -> None:
        """Append one canister in one transaction, creating the conversation."""
        self.extend(conversation_id, (canister,))

    @_database_errors
    def extend(self, conversation_id: str, canisters: Iterable[Canister]) -> None:
        """Append canisters in one transaction, creating the conversation."""
        check_id(conversation_id)
        dehydrate = self._codec.dehydrate
        records = []
        blobs: dict[str, bytes] = {}
        for canister in canisters:
            record, found = dehydrate(canister)
            records.append(record)
            blobs.update(found)
        with self._pool.connection() as connection:
            # Statements sent together (psycopg's pipeline mode): three round
            # trips per append, the commit included.
            with connection.pipeline():
                connection.execute(
                    "SELECT pg_advisory_xact_lock_shared(%s)", (_GC_LOCK,)
                )
                connection.execute(
                    "INSERT INTO canisters_conversations (id) VALUES (%s) "
                    "ON CONFLICT (id) DO NOTHING",
                    (conversation_id,),
                )
                head = connection.execute(
                    "SELECT length, head FROM canisters_conversations "
                    "WHERE id = %s FOR UPDATE",
                    (conversation_id,),
                )
            length, prev = head.fetchone()
            if blobs and self._external is not None:
                for key in sorted(blobs):
                    self._external.store(key, blobs[key])
            seq = length
            rows = []
            for record in records:
                line, prev = encode_record(seq, prev, record)
                rows.append((conversation_id, seq, line[:-1]))
                seq += 1
            with connection.pipeline(), connection.cursor() as cursor:
                if blobs and self._external is None:
                    # Sorted, so that two writers sharing blobs never deadlock.
                    now = time.time()
                    cursor.executemany(
                        "INSERT INTO canisters_blobs (id, data, created) "
                        "VALUES (%s, %s, %s) ON CONFLICT (id) DO NOTHING",
                        [(key, blobs[key], now) for key in sorted(blobs)],
                    )
                if rows:
                    cursor.executemany(
                        "INSERT INTO canisters_records (conversation, seq, line) "
                        "VALUES (%s, %s, %s)",
                        rows,
                    )
                    cursor.execute(
                        "UPDATE canisters_conversations SET length = %s, head = %s "
                        "WHERE id = %s",
                        (seq, prev, conversation_id),
                    )

    # Reading -------------------------------------------------------------------

    @staticmethod
    def _lineage(
        connection: psycopg.Connection[Any], conversation_id: str
    ) -> list[tuple[str, int, str, int, str]]:
        lineage: list[tuple[str, int, str, int, str]] = []
        current: str | None = conversation_id
        seen: set[str] = set()
        while current is not None:
            if current in seen:
                raise IntegrityError(f"{conversation_id!r}: forks form a cycle")
            seen.add(current)
            row = connection.execute(
                "SELECT parent, fork_seq, fork_head, length, head "
                "FROM canisters_conversations WHERE id = %s",
                (current,),
            ).fetchone()
            if row is None:
                raise ConversationNotFound(current)
            parent, seq, head, length, last = row
            lineage.append((current, seq or 0, head or "", length, last))
            current = parent
        lineage.reverse()
        return lineage

    def _walk(
        self, connection: psycopg.Connection[Any], chain: Chain, conversation_id: str
    ) -> Generator[Canister, None, None]:
        # One snapshot for the heads and the records, whatever commits meanwhile.
        connection.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ")
        lineage = self._lineage(connection, conversation_id)
        where = f"{conversation_id} kept head"
        chain.keep((lineage[-1][3], lineage[-1][4]), where)
        for index, (current, seq, head, _length, _last) in enumerate(lineage):
            if index:
                chain.fork_point(f"{current} fork point", seq, head)
            stop = lineage[index + 1][1] if index + 1 < len(lineage) else None
            with connection.cursor(name=f"walk{index}", binary=True) as cursor:
                cursor.itersize = _STREAM_ROWS
                cursor.execute(
                    "SELECT line FROM canisters_records WHERE conversation = %s "
                    + ("AND seq < %s " if stop is not None else "")
                    + "ORDER BY seq",
                    (current, stop) if stop is not None else (current,),
                )
                yield from chain.walk(
                    (row[0] for row in cursor),
                    functools.partial(_label, current),
                    stop=stop,
                    terminated=False,
                )
            if stop is not None and chain.seq < stop:
                chain.problem(
                    f"{current} end",
                    "fork-point",
                    f"the log ends after record {chain.seq - 1}, before its "
                    f"fork point at record {stop}",
                )
        chain.reach(where)

    @_database_errors
    def load(self, conversation_id: str, *, salvage: bool = False) -> Conversation:
        """Return the hydrated conversation, checking its hash chain."""
        chain = Chain(
            check_id(conversation_id), self._codec, "salvage" if salvage else "strict"
        )
        with self._pool.connection() as connection:
            return Conversation(tuple(self._walk(connection, chain, conversation_id)))

    @_database_errors
    def verify(self, conversation_id: str) -> Verification:
        """Check the hash chain, the pinned head and every referenced blob."""
        chain = Chain(check_id(conversation_id), self._codec, "verify")
        with self._pool.connection() as connection:
            for _canister in self._walk(connection, chain, conversation_id):
                pass
        return Verification(
            conversation_id, chain.seq, chain.prev, tuple(chain.problems), chain.torn
        )

    @_database_errors
    def head(self, conversation_id: str) -> tuple[int, str]:
        """Return the number of records and the digest of the last one."""
        check_id(conversation_id)
        with self._pool.connection() as connection:
            row = connection.execute(
                "SELECT length, head FROM canisters_conversations WHERE id = %s",
                (conversation_id,),
            ).fetchone()
        if row is None:
            raise ConversationNotFound(conversation_id)
        return int(row[0]), str(row[1])

    @_database_errors
    def exists(self, conversation_id: str) -> bool:
        """Tell whether the conversation exists."""
        check_id(conversation_id)
        with self._pool.connection() as connection:
            row = connection.execute(
                "SELECT 1 FROM canisters_conversations WHERE id = %s",
                (conversation_id,),
            ).fetchone()
        return row is not None

    @_database_errors
    def conversations(self) -> list[str]:
        """Return the id of every conversation, sorted."""
        with self._pool.connection() as connection:
            rows = connection.execute(
                'SELECT id FROM canisters_conversations ORDER BY id COLLATE "C"'
            ).fetchall()
        return [conversation_id for (conversation_id,) in rows]

    # Forks and deletion --------------------------------------------------------

    @_database_errors
    def fork(self, conversation_id: str, at: str) -> str:
        """Start a new conversation sharing the prefix up to canister ``at``."""
        chain = Chain(check_id(conversation_id), self._codec, "strict")
        with self._pool.connection() as connection:
            walker = self._walk(connection, chain, conversation_id)
            try:
                for canister in walker:
                    if canister.id == at:
                        break
                else:
                    raise CanisterNotFound(at)
            finally:
                walker.close()
            child = new_id()
            connection.execute(
                "INSERT INTO canisters_conversations (id, parent, fork_seq, "
                "fork_head, fork_at, length, head) "
                "VALUES (%s, %s, %s, %s, %s, %s, %s)",
                (
                    child,
                    conversation_id,
                    chain.seq,
                    chain.prev,
                    at,
                    chain.seq,
                    chain.prev,
                ),
            )
        return child

    @_database_errors
    def delete(self, conversation_id: str) -> None:
        """Delete the conversation and its side files; refused while forks exist."""
        check_id(conversation_id)
        with self._pool.connection() as connection:
            if (
                connection.execute(
                    "SELECT 1 FROM canisters_conversations WHERE id = %s FOR UPDATE",
                    (conversation_id,),
                ).fetchone()
                is None
            ):
                raise ConversationNotFound(conversation_id)
            children = [
                child
                for (child,) in connection.execute(
                    "SELECT id FROM canisters_conversations WHERE parent = %s "
                    "ORDER BY id",
                    (conversation_id,),
                )
            ]
            if children:
                raise StorageError(
                    f"conversation {conversation_id!r} has forks "
                    f"({', '.join(children)}); delete them first"
                )
            for table, column in (
                ("canisters_records", "conversation"),
                ("canisters_sidecars", "conversation"),
                ("canisters_conversations", "id"),
            ):
                connection.execute(
                    f"DELETE FROM {table} WHERE {column} = %s",
                    (conversation_id,),
                )

    # Side files ----------------------------------------------------------------

    def sidecar(self, conversation_id: str, name: str) -> PostgresSidecar:
        """Return the side file ``name`` of the conversation."""
        return PostgresSidecar(
            self._pool, check_id(conversation_id), check_id(name, "side-file name")
        )

    @_database_errors
    def sidecar_names(self, conversation_id: str) -> list[str]:
        """Return the name of every side file of the conversation, sorted."""
        check_id(conversation_id)
        with self._pool.connection() as connection:
            rows = connection.execute(
                'SELECT DISTINCT name COLLATE "C" FROM canisters_sidecars '
                "WHERE conversation = %s ORDER BY 1",
                (conversation_id,),
            ).fetchall()
        return [name for (name,) in rows]

    # Maintenance ---------------------------------------------------------------

    @staticmethod
    def _references(connection: psycopg.Connection[Any]) -> set[str]:
        found: set[str] = set()
        with connection.cursor(name="references", binary=True) as cursor:
            cursor.itersize = _STREAM_ROWS
            cursor.execute(
                "SELECT line FROM canisters_records "
                "WHERE position('sha256:'::bytea in line) > 0"
            )
            for (line,) in cursor:
                found |= references(bytes(line))
        for (line,) in connection.execute(
            "SELECT line FROM canisters_sidecars WHERE strpos(line, 'sha256:') > 0"
        ):
            found |= references(line.encode("utf-8"))
        return found

    @_database_errors
    def referenced_content(self) -> set[str]:
        """Return every content id a conversation log or side file mentions."""
        with self._pool.connection() as connection:
            return self._references(connection)

    @_database_errors
    def collect_garbage(
        self,
        *,
        dry_run: bool = False,
        older_than: float = 0.0,
        progress: Progress | None = None,
    ) -> GarbageReport:
        """Remove unreferenced blobs while no writer runs (an exclusive lock)."""
        if progress is not None:
            progress(0, 2)
        with self._pool.connection() as connection:
            connection.execute("SELECT pg_advisory_xact_lock(%s)", (_GC_LOCK,))
            referenced = self._references(connection)
            if progress is not None:
                progress(1, 2)
            delete: Callable[[list[str]], None]
            if self._external is not None:
                entries = self._external.entries()
                delete = self._external.delete
            else:
                entries = connection.execute(
                    "SELECT id, length(data), created FROM canisters_blobs"
                ).fetchall()

                def delete(removed: list[str]) -> None:
                    connection.execute(
                        "DELETE FROM canisters_blobs WHERE id = ANY(%s)", (removed,)
                    )

            report = sweep(
                entries,
                referenced,
                older_than=older_than,
                dry_run=dry_run,
                delete=delete,
            )
        if progress is not None:
            progress(2, 2)
        return report

    @_database_errors
    def stats(self, *, progress: Progress | None = None) -> StoreStats:
        """Count conversations, records, blobs and references, and their bytes."""
        if progress is not None:
            progress(0, 2)
        with self._pool.connection() as connection:
            conversations = connection.execute(
                "SELECT count(*) FROM canisters_conversations"
            ).fetchone()[0]
            records, log_bytes = connection.execute(
                "SELECT count(*), coalesce(sum(length(line)) + count(*), 0) "
                "FROM canisters_records"
            ).fetchone()
            sizes: dict[str, int] = (
                {key: size for key, size, _ in self._external.entries()}
                if self._external is not None
                else dict(
                    connection.execute("SELECT id, length(data) FROM canisters_blobs")
                )
            )
            blobs, blob_bytes = len(sizes), sum(sizes.values())
            if progress is not None:
                progress(1, 2)
            count = referenced = 0
            with connection.cursor(name="stats", binary=True) as cursor:
                cursor.itersize = _STREAM_ROWS
                cursor.execute(
                    "SELECT line FROM canisters_records "
                    "WHERE position('sha256:'::bytea in line) > 0"
                )
                for (line,) in cursor:
                    for content_id in references(bytes(line)):
                        size = sizes.get(content_id)
                        if size is not None:
                            count += 1
                            referenced += size
        if progress is not None:
            progress(2, 2)
        return StoreStats(
            int(conversations),
            int(records),
            int(log_bytes),
            int(blobs),
            int(blob_bytes),
            count,
            referenced,
        )

    def close(self) -> None:
        """Close every connection of the pool."""
        self._pool.close()

    def __enter__(self) -> PostgresStore:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"PostgresStore({self.location!r}, durability={self._durability!r})"


def _label(conversation_id: str, number: int) -> str:
    return f"{conversation_id} record {number}"
