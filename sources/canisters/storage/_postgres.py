"""What the PostgreSQL backend does, apart from how its statements run.

Each operation of the store is a *plan*: a generator that yields the statements
to run (:class:`Query`, :class:`Many`, :class:`Pipeline`) and the blocking calls
to make (:class:`Call`: the S3 client's), receives each one's result, and
returns the operation's value. The synchronous store (:class:`PostgresStore`)
and the asyncio one (:class:`AsyncPostgresStore`) drive the same plans over one
pooled connection each, a plain one or an asyncio one, so both faces share every
statement, the hash chain, the kept head, forks, salvage and the hybrid policy;
they differ only in how they wait. Nothing here touches a connection. Here are
the statements, the schema, blobs, side files, the general append plan and
reading; forks, deletion and maintenance are in :mod:`._postgres_manage`, the
one-statement append in :mod:`._postgres_append`.
"""

from __future__ import annotations

import functools
import time
from collections.abc import Callable, Generator, Iterable
from typing import Any, Final, TypeAlias, TypeVar

import attrs

from ..conversation import Conversation
from ..exceptions import (
    ContentNotFound,
    ConversationNotFound,
    IntegrityError,
    StorageError,
)
from ..protocols import Canister
from ._chain import Chain, encode_record
from ._common import (
    STORED_MARK,
    Codec,
    StoragePolicy,
    Verification,
    check_bytes,
    check_content_id,
    check_id,
    check_line,
    content_id_of,
    earlier,
    references,
)
from ._forks import fork_stops
from ._retries import line_id, record_id, screen
from ._search import postgres_appended
from .s3 import S3ContentStore

T = TypeVar("T")

SCHEMA_VERSION: Final = 1
# Rows fetched per round trip while streaming a log.
STREAM_ROWS: Final = 2000
# Blobs fetched per round trip while hydrating a log.
_FETCH_BLOBS: Final = 64
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
    "length BIGINT NOT NULL DEFAULT 0, head TEXT NOT NULL DEFAULT '', "
    "indexed BIGINT NOT NULL DEFAULT 0)",
    "CREATE INDEX IF NOT EXISTS canisters_conversations_parent "
    "ON canisters_conversations (parent)",
    "CREATE TABLE IF NOT EXISTS canisters_records (conversation TEXT NOT NULL, "
    "seq BIGINT NOT NULL, line BYTEA NOT NULL, PRIMARY KEY (conversation, seq))",
    "CREATE TABLE IF NOT EXISTS canisters_ids (conversation TEXT NOT NULL, "
    "canister TEXT NOT NULL, seq BIGINT NOT NULL, "
    "PRIMARY KEY (conversation, canister))",
    "CREATE TABLE IF NOT EXISTS canisters_sidecars (n BIGSERIAL PRIMARY KEY, "
    "conversation TEXT NOT NULL, name TEXT NOT NULL, line TEXT NOT NULL)",
    "CREATE INDEX IF NOT EXISTS canisters_sidecars_name "
    "ON canisters_sidecars (conversation, name, n)",
)
_LOCK_SHARED: Final = "SELECT pg_advisory_xact_lock_shared(%s)"
# Where some canister ids are in one conversation's log, through the index (the
# records themselves are read only for those found: a retry).
_HELD: Final = (
    "SELECT canister, seq FROM canisters_ids "
    "WHERE conversation = %s AND seq < %s AND canister = ANY(%s)"
)
# A garbage collection that removed blobs and ended after an upload began (less
# this margin: the clocks of different hosts differ) may have removed what the
# upload wrote: the blobs are stored again, under the lock that garbage
# collection takes exclusively.
_GC_MARGIN: Final = 300.0
# No bound on the seq of a record looked up (a conversation's own log).
_NO_LIMIT: Final = 2**63 - 1
_REFERENCING: Final = (
    "SELECT line FROM canisters_records WHERE position('sha256:'::bytea in line) > 0"
)

Row: TypeAlias = tuple[Any, ...]


@attrs.frozen
class Query:
    """Run one statement; the result is its rows (empty when it returns none)."""

    sql: str
    params: tuple[Any, ...] | None = None
    binary: bool = False
    planned: bool = True
    """Whether the driver may prepare it (the server then plans it once and may
    keep that plan); ``False`` plans it for its parameters on every run, for a
    statement whose best plan changes as its table grows from empty."""
    alone: bool = False
    """Whether it runs as a transaction of its own, committed with it (one
    round trip): a statement that returns rows, run first in its plan or after
    another such."""


@attrs.frozen
class Many:
    """Run one statement once per row of parameters; the result is ``None``."""

    sql: str
    rows: list[Row]


@attrs.frozen
class Pipeline:
    """Send statements together (one round trip); the result is each one's rows."""

    steps: tuple[Query | Many, ...]


@attrs.frozen
class Call:
    """Call a blocking function (the S3 client); the result is what it returns."""

    function: Callable[..., Any]
    args: tuple[Any, ...] = ()


Op: TypeAlias = Query | Many | Pipeline | Call
Plan: TypeAlias = Generator[Op, Any, T]


@attrs.frozen
class Backend:
    """What the plans of one store need: its codec and its bucket, if any."""

    codec: Codec
    external: S3ContentStore | None


def backend(policy: StoragePolicy, external: S3ContentStore | None) -> Backend:
    """Return what the plans of a store with ``policy`` and ``external`` need."""
    return Backend(Codec(policy, _read_ahead), external)


def _read_ahead(content_id: str) -> bytes:
    # The plans read every blob a walk needs ahead (several per round trip) and
    # hand them to the walk (Chain.fetch): the codec never reads one itself.
    raise ContentNotFound(content_id)


# --------------------------------------------------------------------------- #
# Schema, blobs and side files


def create_schema() -> Plan[None]:
    yield Query("SELECT pg_advisory_xact_lock(%s)", (_SCHEMA_LOCK,))
    for statement in _SCHEMA:
        yield Query(statement)
    found = yield Query(
        "SELECT 1 FROM pg_attribute WHERE attrelid = "
        "'canisters_conversations'::regclass AND attname = 'indexed' "
        "AND NOT attisdropped"
    )
    if not found:  # a store made before the canister-id index
        yield Query(
            "ALTER TABLE canisters_conversations "
            "ADD COLUMN indexed BIGINT NOT NULL DEFAULT 0"
        )
    rows = yield Query("SELECT value FROM canisters_meta WHERE key = 'schema'")
    if not rows:
        yield Query(
            "INSERT INTO canisters_meta (key, value) VALUES ('schema', %s)",
            (str(SCHEMA_VERSION),),
        )
    elif rows[0][0] != str(SCHEMA_VERSION):
        raise StorageError(
            f"store schema version {rows[0][0]} is not supported "
            f"(this library reads version {SCHEMA_VERSION})"
        )


def _checked(content_id: str, data: bytes | None) -> bytes | StorageError:
    """Return the blob's bytes when they match its id, else the error to raise."""
    if data is None:
        return ContentNotFound(content_id)
    data = bytes(data)
    if content_id_of(data) != content_id:
        return IntegrityError(
            f"blob {content_id} no longer matches its id (tampered or corrupt)"
        )
    return data


def put(data: bytes) -> Plan[str]:
    data = check_bytes(data)
    content_id = content_id_of(data)
    yield Pipeline(
        (
            Query(_LOCK_SHARED, (_GC_LOCK,)),
            Query(
                "INSERT INTO canisters_blobs (id, data, created) VALUES (%s, %s, %s) "
                "ON CONFLICT (id) DO UPDATE SET created = excluded.created",
                (content_id, data, time.time()),
            ),
        )
    )
    return content_id


def get(content_id: str) -> Plan[bytes]:
    check_content_id(content_id)
    rows = yield Query(
        "SELECT data FROM canisters_blobs WHERE id = %s", (content_id,), binary=True
    )
    found = _checked(content_id, rows[0][0] if rows else None)
    if isinstance(found, StorageError):
        raise found
    return found


def has(content_id: str) -> Plan[bool]:
    check_content_id(content_id)
    rows = yield Query("SELECT 1 FROM canisters_blobs WHERE id = %s", (content_id,))
    return bool(rows)


def ids() -> Plan[list[str]]:
    rows = yield Query("SELECT id FROM canisters_blobs")
    return [content_id for (content_id,) in rows]


def append_line(conversation_id: str, name: str, line: str) -> Plan[None]:
    check_line(line)
    yield Pipeline(
        (
            Query(_LOCK_SHARED, (_GC_LOCK,)),
            Query(
                "INSERT INTO canisters_sidecars (conversation, name, line) "
                "VALUES (%s, %s, %s)",
                (conversation_id, name, line),
            ),
        )
    )


def read_lines(conversation_id: str, name: str) -> Plan[list[str]]:
    rows = yield Query(
        "SELECT line FROM canisters_sidecars "
        "WHERE conversation = %s AND name = %s ORDER BY n",
        (conversation_id, name),
    )
    return [line for (line,) in rows]


# --------------------------------------------------------------------------- #
# Writing


def _store_all(external: S3ContentStore, blobs: dict[str, bytes]) -> None:
    # Sorted: writers sharing blobs meet them in the same order.
    for key in sorted(blobs):
        external.store(key, blobs[key])


def _index(conversation_id: str, indexed: int, end: int) -> Plan[None]:
    """Bring the canister ids of a log's records before ``end`` into
    ``canisters_ids`` (records written before the index, or by a version of the
    library without it); ``indexed`` is how far it reached."""
    start = indexed
    while start < end:
        stop = min(end, start + STREAM_ROWS)
        rows = yield Query(
            "SELECT seq, line FROM canisters_records "
            "WHERE conversation = %s AND seq >= %s AND seq < %s ORDER BY seq",
            (conversation_id, start, stop),
            binary=True,
            planned=False,
        )
        found = [
            (conversation_id, canister_id, seq)
            for seq, line in rows
            if (canister_id := line_id(bytes(line))) is not None
        ]
        if found:
            yield Many(
                "INSERT INTO canisters_ids (conversation, canister, seq) "
                "VALUES (%s, %s, %s) ON CONFLICT DO NOTHING",
                found,
            )
        start = stop
    yield Query(
        "UPDATE canisters_conversations SET indexed = GREATEST(indexed, %s) "
        "WHERE id = %s",
        (end, conversation_id),
    )


def _lines(
    found: list[tuple[str, str, int]],
) -> Plan[dict[str, tuple[str, bytes]]]:
    """The records of the ``(conversation, canister id, seq)`` found in the
    index, as :func:`~canisters.storage._retries.screen` takes them."""
    held: dict[str, tuple[str, bytes]] = {}
    by_conversation: dict[str, dict[int, str]] = {}
    for conversation_id, canister_id, seq in found:
        if canister_id not in held:
            held[canister_id] = (conversation_id, b"")
            by_conversation.setdefault(conversation_id, {})[seq] = canister_id
    for conversation_id, seqs in by_conversation.items():
        rows = yield Query(
            "SELECT seq, line FROM canisters_records "
            "WHERE conversation = %s AND seq = ANY(%s)",
            (conversation_id, list(seqs)),
            binary=True,
            planned=False,
        )
        for seq, line in rows:
            held[seqs[seq]] = (f"record {seq} of {conversation_id}", bytes(line))
    return held


def _held_above(
    conversation_id: str,
    parent: str | None,
    limit: int,
    wanted: list[str],
    found: list[tuple[str, str, int]],
) -> Plan[None]:
    """Add to ``found`` where the canisters of ``wanted`` are in a fork's prefix:
    its ancestors' records before each fork point."""
    seen = {conversation_id}
    current = parent
    while current is not None:
        if current in seen:
            raise IntegrityError(f"{conversation_id!r}: forks form a cycle")
        seen.add(current)
        rows = yield Query(
            "SELECT parent, fork_seq, indexed FROM canisters_conversations "
            "WHERE id = %s",
            (current,),
        )
        if not rows:
            raise ConversationNotFound(current)
        above, fork_seq, indexed = rows[0]
        if indexed < limit:
            yield from _index(current, indexed, limit)
        rows = yield Query(_HELD, (current, limit, wanted), planned=False)
        found.extend((current, canister_id, seq) for canister_id, seq in rows)
        # A fork of a fork may fork inside what its parent inherited: each
        # ancestor stops at the smallest fork point below it.
        current, limit = above, min(limit, fork_seq or 0)


def extend(
    backend: Backend, conversation_id: str, canisters: Iterable[Canister]
) -> Plan[None]:
    """Append in one transaction that locks the conversation's row: three round
    trips (statements sent together), the commit included.

    Blobs in a bucket are uploaded first, before the transaction opens: they are
    content-addressed and named by no record yet, so a slow bucket holds no
    lock. A canister the conversation holds already is not written again.
    """
    check_id(conversation_id)
    dehydrate = backend.codec.dehydrate
    records = []
    blobs: dict[str, bytes] = {}
    for canister in canisters:
        record, found = dehydrate(canister)
        records.append(record)
        blobs.update(found)
    external = backend.external
    uploaded = 0.0
    if blobs and external is not None:
        uploaded = time.time()
        yield Call(_store_all, (external, blobs))
    wanted = list(dict.fromkeys(filter(None, map(record_id, records))))
    steps: list[Query | Many] = [
        Query(_LOCK_SHARED, (_GC_LOCK,)),
        Query(
            "INSERT INTO canisters_conversations (id) VALUES (%s) "
            "ON CONFLICT (id) DO NOTHING",
            (conversation_id,),
        ),
        Query(
            "SELECT length, head, parent, fork_seq, indexed "
            "FROM canisters_conversations WHERE id = %s FOR UPDATE",
            (conversation_id,),
        ),
        # Planned for its parameters each time: a plan kept from when the
        # index was small would scan it whole once it is large.
        Query(_HELD, (conversation_id, _NO_LIMIT, wanted), planned=False),
    ]
    if uploaded:
        steps.append(Query("SELECT value FROM canisters_meta WHERE key = 'gc'"))
    results = yield Pipeline(tuple(steps))
    length, prev, parent, fork_seq, indexed = results[2][0]
    if uploaded and results[4] and not earlier(results[4][0][0], uploaded - _GC_MARGIN):
        # A garbage collection removed blobs since the upload began.
        assert external is not None
        yield Call(_store_all, (external, blobs))
    held: dict[str, tuple[str, bytes]] = {}
    if wanted:
        rows = results[3]
        if indexed < length:
            yield from _index(conversation_id, indexed, length)
            rows = yield Query(
                _HELD, (conversation_id, _NO_LIMIT, wanted), planned=False
            )
        hits = [(conversation_id, canister_id, seq) for canister_id, seq in rows]
        if parent is not None:
            yield from _held_above(conversation_id, parent, fork_seq or 0, wanted, hits)
        if hits:
            held = yield from _lines(hits)
    records = screen(conversation_id, records, lambda _wanted: held)
    if not records:
        return
    seq = length
    rows = []
    ids = []
    for record in records:
        line, prev = encode_record(seq, prev, record)
        rows.append((conversation_id, seq, line[:-1]))
        canister_id = record_id(record)
        if canister_id is not None:
            ids.append((conversation_id, canister_id, seq))
        seq += 1
    writes: list[Query | Many] = []
    if blobs and external is None:
        # Sorted, so that two writers sharing blobs never deadlock.
        now = time.time()
        writes.append(
            Many(
                "INSERT INTO canisters_blobs (id, data, created) "
                "VALUES (%s, %s, %s) ON CONFLICT (id) DO NOTHING",
                [(key, blobs[key], now) for key in sorted(blobs)],
            )
        )
    writes.append(
        Many(
            "INSERT INTO canisters_records (conversation, seq, line) "
            "VALUES (%s, %s, %s)",
            rows,
        )
    )
    if ids:
        writes.append(
            Query(
                "INSERT INTO canisters_ids (conversation, canister, seq) "
                "SELECT %s, unnest(%s::text[]), unnest(%s::bigint[]) "
                "ON CONFLICT DO NOTHING",
                (
                    conversation_id,
                    [canister_id for _, canister_id, _ in ids],
                    [seq for _, _, seq in ids],
                ),
            )
        )
    indexed = postgres_appended(conversation_id, length, records, blobs)
    if indexed is not None:
        writes.append(Query(*indexed))
    writes.append(
        Query(
            "UPDATE canisters_conversations SET length = %s, head = %s, "
            "indexed = %s WHERE id = %s",
            (seq, prev, seq, conversation_id),
        )
    )
    yield Pipeline(tuple(writes))


def _declare(cursor: str, sql: str, params: tuple[Any, ...] | None = None) -> Query:
    """Declare a cursor over ``sql`` (in the running transaction)."""
    return Query(f"DECLARE {cursor} NO SCROLL CURSOR FOR {sql}", params)


def _next(cursor: str) -> Query:
    """Fetch the next rows of a declared cursor (none once it is exhausted)."""
    return Query(f"FETCH FORWARD {STREAM_ROWS} FROM {cursor}", binary=True)


# --------------------------------------------------------------------------- #
# Reading


def _lineage(conversation_id: str) -> Plan[list[tuple[str, int, str, int, str]]]:
    """The conversation and its ancestors, root first: ``(id, fork seq, fork
    head, length, kept head)``."""
    lineage: list[tuple[str, int, str, int, str]] = []
    current: str | None = conversation_id
    seen: set[str] = set()
    while current is not None:
        if current in seen:
            raise IntegrityError(f"{conversation_id!r}: forks form a cycle")
        seen.add(current)
        rows = yield Query(
            "SELECT parent, fork_seq, fork_head, length, head "
            "FROM canisters_conversations WHERE id = %s",
            (current,),
        )
        if not rows:
            raise ConversationNotFound(current)
        parent, seq, head, length, last = rows[0]
        lineage.append((current, seq or 0, head or "", length, last))
        current = parent
    lineage.reverse()
    return lineage


def _fetch_external(
    external: S3ContentStore, wanted: list[str]
) -> dict[str, bytes | StorageError]:
    """Read blobs from the bucket, each checked, an error standing for a bad one."""
    found: dict[str, bytes | StorageError] = {}
    for content_id in wanted:
        try:
            found[content_id] = external.get(content_id)
        except (ContentNotFound, IntegrityError) as error:
            found[content_id] = error
    return found


def _fetch(
    backend: Backend, wanted: list[str]
) -> Plan[dict[str, bytes | StorageError]]:
    """Read blobs (one round trip), each checked, an error standing for a bad one."""
    if backend.external is not None:
        found: dict[str, bytes | StorageError] = yield Call(
            _fetch_external, (backend.external, wanted)
        )
        return found
    rows = yield Query(
        "SELECT id, data FROM canisters_blobs WHERE id = ANY(%s)",
        (wanted,),
        binary=True,
    )
    stored = dict(rows)
    return {key: _checked(key, stored.get(key)) for key in wanted}


def _supplier(
    supply: dict[str, bytes | StorageError],
    memo: dict[tuple[str, str], str | bytes] | None,
) -> Callable[[str], bytes]:
    """Serve the blobs fetched ahead, and those the load hydrated already under
    the other field (a digest named as text by one part, as media by another)."""

    def fetch(content_id: str) -> bytes:
        found = supply.get(content_id)
        if found is None and memo is not None:
            held = memo.get(("data", content_id))
            if held is None:
                held = memo.get(("text", content_id))
            if held is not None:
                return held if isinstance(held, bytes) else held.encode("utf-8")
        if found is None:
            raise ContentNotFound(content_id)
        if isinstance(found, StorageError):
            raise found
        return found

    return fetch


def _read(
    backend: Backend,
    chain: Chain,
    rows: list[tuple[object, bytes]],
    label: Callable[[int], str],
    stop: int | None,
    sink: Callable[[Canister], bool],
) -> Plan[bool]:
    """Walk ``rows`` (``(seq, line)``, a batch of one log), fetching the blobs
    they name a few dozen per round trip; ``True`` once ``sink`` asked to stop."""
    codec = backend.codec
    memo = chain.memo
    start = 0
    while start < len(rows):
        # The lines up to the next few dozen blobs that neither this load nor
        # the cache holds (what the cache holds is copied: another load may
        # evict it meanwhile).
        supply: dict[str, bytes | StorageError] = {}
        wanted: list[str] = []
        end = start
        while end < len(rows) and len(wanted) < _FETCH_BLOBS:
            line = rows[end][1]
            end += 1
            if STORED_MARK not in line:
                continue
            for content_id in references(line):
                if content_id in supply or content_id in wanted:
                    continue
                if memo is not None and (
                    ("text", content_id) in memo or ("data", content_id) in memo
                ):
                    continue
                # verify reads each blob from the store (chain.fresh).
                cached = (
                    codec.cached(content_id)
                    if chain.fresh is None or content_id in chain.fresh
                    else None
                )
                if cached is not None:
                    supply[content_id] = cached
                else:
                    wanted.append(content_id)
        if wanted:
            supply.update((yield from _fetch(backend, wanted)))
        chain.fetch = _supplier(supply, memo)
        shifted = functools.partial(_shifted, label, start)
        for canister in chain.walk(
            chain.numbered(rows[start:end], shifted),
            shifted,
            stop=stop,
            terminated=False,
        ):
            if sink(canister):
                return True
        start = end
    return False


def _walk(
    backend: Backend,
    chain: Chain,
    conversation_id: str,
    sink: Callable[[Canister], bool],
) -> Plan[bool]:
    """Walk the conversation's log, its ancestors' prefix first, handing each
    canister to ``sink``; ``True`` when ``sink`` stopped the walk."""
    # One snapshot for the heads and the records, whatever commits meanwhile.
    yield Query("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ")
    lineage = yield from _lineage(conversation_id)
    where = f"{conversation_id} kept head"
    chain.keep((lineage[-1][3], lineage[-1][4]), where)
    for index, stop in fork_stops([entry[1] for entry in lineage]):
        current, seq, head, _length, _last = lineage[index]
        if index:
            chain.fork_point(f"{current} fork point", seq, head)
        cursor = f"walk{index}"
        yield _declare(
            cursor,
            "SELECT seq, line FROM canisters_records WHERE conversation = %s "
            + ("AND seq < %s " if stop is not None else "")
            + "ORDER BY seq",
            (current, stop) if stop is not None else (current,),
        )
        done = 0
        while rows := (yield _next(cursor)):
            batch = [(seq, bytes(line)) for seq, line in rows]
            label = functools.partial(_label, current, done)
            done += len(batch)
            if (yield from _read(backend, chain, batch, label, stop, sink)):
                return True
        if stop is not None and chain.seq < stop:
            chain.problem(
                f"{current} end",
                "fork-point",
                f"the log ends after record {chain.seq - 1}, before its "
                f"fork point at record {stop}",
            )
    chain.reach(where)
    return False


def _label(conversation_id: str, offset: int, number: int) -> str:
    return f"{conversation_id} record {offset + number}"


def _shifted(label: Callable[[int], str], offset: int, number: int) -> str:
    return label(offset + number)


def load(backend: Backend, conversation_id: str, salvage: bool) -> Plan[Conversation]:
    chain = Chain(
        check_id(conversation_id), backend.codec, "salvage" if salvage else "strict"
    )
    canisters: list[Canister] = []

    def keep(canister: Canister) -> bool:
        canisters.append(canister)
        return False

    yield from _walk(backend, chain, conversation_id, keep)
    return Conversation(tuple(canisters))


def verify(backend: Backend, conversation_id: str) -> Plan[Verification]:
    chain = Chain(check_id(conversation_id), backend.codec, "verify")
    yield from _walk(backend, chain, conversation_id, lambda canister: False)
    return chain.verification()


def head(conversation_id: str) -> Plan[tuple[int, str]]:
    check_id(conversation_id)
    rows = yield Query(
        "SELECT length, head FROM canisters_conversations WHERE id = %s",
        (conversation_id,),
    )
    if not rows:
        raise ConversationNotFound(conversation_id)
    return int(rows[0][0]), str(rows[0][1])


def exists(conversation_id: str) -> Plan[bool]:
    check_id(conversation_id)
    rows = yield Query(
        "SELECT 1 FROM canisters_conversations WHERE id = %s", (conversation_id,)
    )
    return bool(rows)


def conversations() -> Plan[list[str]]:
    rows = yield Query('SELECT id FROM canisters_conversations ORDER BY id COLLATE "C"')
    return [conversation_id for (conversation_id,) in rows]
