"""What the PostgreSQL backend does beside appending and reading (see
:mod:`._postgres`, whose plans these are too): forks, deletion, side-file
names, and maintenance (references, garbage collection, statistics).
"""

from __future__ import annotations

import time

from ..canisters import new_id
from ..exceptions import (
    CanisterNotFound,
    ConversationNotFound,
    StorageError,
)
from ._chain import Chain
from ._common import (
    GarbageReport,
    Progress,
    StoreStats,
    check_id,
    references,
    sweep,
)
from ._forks import Fork, make_fork
from ._postgres import (
    _GC_LOCK,
    _REFERENCING,
    Backend,
    Call,
    Pipeline,
    Plan,
    Query,
    _declare,
    _next,
    _walk,
)

# --------------------------------------------------------------------------- #
# Forks, deletion, side files


def fork(backend: Backend, conversation_id: str, at: str) -> Plan[str]:
    chain = Chain(check_id(conversation_id), backend.codec, "strict")
    if not (yield from _walk(backend, chain, conversation_id, lambda x: x.id == at)):
        raise CanisterNotFound(at)
    child = new_id()
    yield Query(
        "INSERT INTO canisters_conversations (id, parent, fork_seq, fork_head, "
        "fork_at, length, head, indexed) VALUES (%s, %s, %s, %s, %s, %s, %s, %s)",
        (
            child,
            conversation_id,
            chain.seq,
            chain.prev,
            at,
            chain.seq,
            chain.prev,
            chain.seq,
        ),
    )
    return child


def origin(conversation_id: str) -> Plan[Fork | None]:
    check_id(conversation_id)
    rows = yield Query(
        "SELECT parent, fork_at, fork_seq FROM canisters_conversations WHERE id = %s",
        (conversation_id,),
    )
    if not rows:
        raise ConversationNotFound(conversation_id)
    parent, at, seq = rows[0]
    return None if parent is None else make_fork(conversation_id, parent, at, seq)


def forks(conversation_id: str) -> Plan[list[Fork]]:
    check_id(conversation_id)
    results = yield Pipeline(
        (
            Query(
                "SELECT 1 FROM canisters_conversations WHERE id = %s",
                (conversation_id,),
            ),
            Query(
                "SELECT id, fork_at, fork_seq FROM canisters_conversations "
                'WHERE parent = %s ORDER BY id COLLATE "C"',
                (conversation_id,),
            ),
        )
    )
    if not results[0]:
        raise ConversationNotFound(conversation_id)
    return [make_fork(child, conversation_id, at, seq) for child, at, seq in results[1]]


def delete(conversation_id: str) -> Plan[None]:
    check_id(conversation_id)
    rows = yield Query(
        "SELECT 1 FROM canisters_conversations WHERE id = %s FOR UPDATE",
        (conversation_id,),
    )
    if not rows:
        raise ConversationNotFound(conversation_id)
    rows = yield Query(
        "SELECT id FROM canisters_conversations WHERE parent = %s ORDER BY id",
        (conversation_id,),
    )
    if rows:
        raise StorageError(
            f"conversation {conversation_id!r} has forks "
            f"({', '.join(child for (child,) in rows)}); delete them first"
        )
    yield Pipeline(
        tuple(
            Query(f"DELETE FROM {table} WHERE {column} = %s", (conversation_id,))
            for table, column in (
                ("canisters_records", "conversation"),
                ("canisters_ids", "conversation"),
                ("canisters_sidecars", "conversation"),
                ("canisters_search", "conversation"),
                ("canisters_conversations", "id"),
            )
        )
    )


def sidecar_names(conversation_id: str) -> Plan[list[str]]:
    check_id(conversation_id)
    rows = yield Query(
        'SELECT DISTINCT name COLLATE "C" FROM canisters_sidecars '
        "WHERE conversation = %s ORDER BY 1",
        (conversation_id,),
    )
    return [name for (name,) in rows]


# --------------------------------------------------------------------------- #
# Maintenance


def referenced_content() -> Plan[set[str]]:
    found: set[str] = set()
    yield _declare("refs", _REFERENCING)
    while rows := (yield _next("refs")):
        for (line,) in rows:
            found |= references(bytes(line))
    rows = yield Query(
        "SELECT line FROM canisters_sidecars WHERE strpos(line, 'sha256:') > 0"
    )
    for (line,) in rows:
        found |= references(line.encode("utf-8"))
    return found


def collect_garbage(
    backend: Backend, dry_run: bool, older_than: float, progress: Progress | None
) -> Plan[GarbageReport]:
    """Sweep while holding the lock every writer takes shared, exclusively."""
    if progress is not None:
        progress(0, 2)
    yield Query("SELECT pg_advisory_xact_lock(%s)", (_GC_LOCK,))
    external = backend.external
    referenced = yield from referenced_content()
    if progress is not None:
        progress(1, 2)
    entries = yield (
        Call(external.entries)
        if external is not None
        else Query("SELECT id, length(data), created FROM canisters_blobs")
    )
    removed: list[str] = []
    report = sweep(
        entries,
        referenced,
        older_than=older_than,
        dry_run=dry_run,
        delete=removed.extend,
    )
    if removed:
        yield (
            Call(external.delete, (removed,))
            if external is not None
            else Query("DELETE FROM canisters_blobs WHERE id = ANY(%s)", (removed,))
        )
        if external is not None:
            # Writers upload blobs before they take the lock this one holds:
            # those whose upload began before this time store theirs again.
            yield Query(
                "INSERT INTO canisters_meta (key, value) VALUES ('gc', %s) "
                "ON CONFLICT (key) DO UPDATE SET value = excluded.value",
                (repr(time.time()),),
            )
    if progress is not None:
        progress(2, 2)
    return report


def stats(backend: Backend, progress: Progress | None) -> Plan[StoreStats]:
    if progress is not None:
        progress(0, 2)
    results = yield Pipeline(
        (
            Query("SELECT count(*) FROM canisters_conversations"),
            Query(
                "SELECT count(*), coalesce(sum(length(line)) + count(*), 0) "
                "FROM canisters_records"
            ),
        )
    )
    conversations = results[0][0][0]
    records, log_bytes = results[1][0]
    external = backend.external
    if external is not None:
        entries = yield Call(external.entries)
        sizes: dict[str, int] = {key: size for key, size, _ in entries}
    else:
        sizes = dict((yield Query("SELECT id, length(data) FROM canisters_blobs")))
    blobs, blob_bytes = len(sizes), sum(sizes.values())
    if progress is not None:
        progress(1, 2)
    count = referenced = 0
    yield _declare("stats", _REFERENCING)
    while rows := (yield _next("stats")):
        for (line,) in rows:
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
