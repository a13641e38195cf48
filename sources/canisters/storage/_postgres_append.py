"""PostgreSQL appends in one round trip: a server-side function and its plan.

An append needs the conversation's head (its length and last digest) before it
can encode its records, since each record carries the digest of the one before.
The store remembers the head each of its appends left (:class:`Heads`) and
encodes the records against it; the function ``canisters_append_v3``, created
with the schema (and added to a store made before it), then does the whole
append in the one statement that calls it,
committed with it: it takes the lock that writers share, locks the
conversation's row, checks that the head is still the one the records were
encoded against, that the conversation is no fork and its canister-id index is
complete, and that none of the canister ids is held already; then it writes the
blobs, the records, their ids, their search index rows (:mod:`._search`) and
the new head. When a check fails it writes nothing and returns what it found:
the current head (the records are encoded again against it and sent once more)
or the records holding the ids (a retry:
those canisters are dropped, and an append of nothing but held ones is done).
Forks, logs whose index is incomplete and blobs kept in a bucket go through
the general plan (:func:`~canisters.storage._postgres.extend`), as does a
second mismatch in a row (another writer appending to the same conversation).
"""

from __future__ import annotations

import functools
import time
from collections.abc import Iterable
from typing import Final

import orjson

from ..protocols import Canister
from . import _postgres as plans
from ._chain import encode_record
from ._common import check_id
from ._postgres import Backend, Plan, Query
from ._retries import record_id, screen
from ._search import postgres_rows

FUNCTION: Final = "canisters_append_v3"
# Conversations whose head a store remembers; the oldest is forgotten first.
_REMEMBERED: Final = 4096
_ATTEMPTS: Final = 2
_GC_LOCK: Final = 0x63616E6973746572 + 1

# The records come as one byte string (``lines``, their lengths in ``sizes``,
# comma-separated), their ids and search rows as JSON: the server splits them,
# where the driver would adapt each element of an array in Python. ``ids`` is
# a JSON array, ``null`` for a record without one; ``search`` a JSON array of
# ``{"a": place in the append, "c": canister key, "k": kind, "t": text, "w":
# words joined by spaces}``.
_CREATE: Final = f"""
CREATE OR REPLACE FUNCTION {FUNCTION}(
    conv TEXT, expected BIGINT, expected_head TEXT, lines BYTEA, sizes TEXT,
    new_head TEXT, ids TEXT, blob_ids TEXT[], blob_data BYTEA[],
    created DOUBLE PRECISION, search TEXT,
    OUT written BOOLEAN, OUT length BIGINT, OUT head TEXT, OUT parent TEXT,
    OUT indexed BIGINT, OUT held_ids TEXT[], OUT held_seqs BIGINT[],
    OUT held_lines BYTEA[])
LANGUAGE plpgsql AS $body$
DECLARE
    added BIGINT;
    wanted BIGINT;
    count BIGINT;
BEGIN
    written := false;
    -- The lock writers share (garbage collection takes it alone), and the row.
    SELECT c.length, c.head, c.parent, c.indexed INTO length, head, parent, indexed
        FROM canisters_conversations c
        WHERE c.id = conv AND pg_advisory_xact_lock_shared({_GC_LOCK}) IS NOT NULL
        FOR UPDATE;
    IF NOT FOUND THEN
        PERFORM pg_advisory_xact_lock_shared({_GC_LOCK});
        INSERT INTO canisters_conversations (id) VALUES (conv)
            ON CONFLICT (id) DO NOTHING;
        SELECT c.length, c.head, c.parent, c.indexed
            INTO length, head, parent, indexed
            FROM canisters_conversations c WHERE c.id = conv FOR UPDATE;
    END IF;
    IF length <> expected OR head <> expected_head OR parent IS NOT NULL
            OR indexed < length THEN
        RETURN;
    END IF;
    IF ids IS NOT NULL THEN
        -- Indexing the ids is the check: one the conversation holds is not
        -- inserted again. The n-th id is that of the n-th line.
        WITH i AS (
            SELECT i.canister, i.n FROM json_array_elements_text(ids::json)
                WITH ORDINALITY AS i(canister, n)
            WHERE i.canister IS NOT NULL
        ), indexing AS (
            INSERT INTO canisters_ids (conversation, canister, seq)
                SELECT conv, i.canister, expected + i.n - 1 FROM i
                ON CONFLICT DO NOTHING
                RETURNING 1
        )
        SELECT (SELECT count(*) FROM indexing), (SELECT count(*) FROM i)
            INTO added, wanted;
        IF added < wanted THEN
            -- Nothing is written: the ids just indexed go again, each
            -- through the primary key.
            DELETE FROM canisters_ids d
                USING json_array_elements_text(ids::json) WITH ORDINALITY
                    AS i(canister, n)
                WHERE d.conversation = conv AND d.canister = i.canister
                    AND d.seq = expected + i.n - 1;
            -- Each held id looked up through the primary keys (LIMIT keeps
            -- the planner from joining the conversation's whole index, as a
            -- plan kept from when the tables were small would).
            SELECT array_agg(w.canister), array_agg(h.seq), array_agg(h.line)
                INTO held_ids, held_seqs, held_lines
                FROM json_array_elements_text(ids::json) AS w(canister)
                CROSS JOIN LATERAL (
                    SELECT i.seq, r.line FROM canisters_ids i
                    JOIN canisters_records r
                        ON r.conversation = conv AND r.seq = i.seq
                    WHERE i.conversation = conv AND i.canister = w.canister
                    LIMIT 1
                ) AS h
                WHERE w.canister IS NOT NULL;
            RETURN;
        END IF;
    END IF;
    IF blob_ids IS NOT NULL THEN
        INSERT INTO canisters_blobs (id, data, created)
            SELECT b.id, b.data, created
            FROM unnest(blob_ids, blob_data) AS b(id, data)
            ORDER BY b.id
            ON CONFLICT (id) DO NOTHING;
    END IF;
    INSERT INTO canisters_records (conversation, seq, line)
        SELECT conv, expected + l.n - 1, substring(lines FROM l.stop - l.size + 1
            FOR l.size)
        FROM (
            SELECT u.n, u.size::int AS size,
                (sum(u.size::int) OVER (ORDER BY u.n))::int AS stop
            FROM unnest(string_to_array(sizes, ',')) WITH ORDINALITY AS u(size, n)
        ) AS l;
    GET DIAGNOSTICS count = ROW_COUNT;
    IF search IS NOT NULL THEN
        -- The search index (canisters_search), a being a line's place.
        INSERT INTO canisters_search (conversation, seq, canister, kind, text, words)
            SELECT conv, expected + s.a, s.c, s.k, s.t,
                array_to_tsvector(string_to_array(s.w, ' '))
            FROM json_to_recordset(search::json)
                AS s(a BIGINT, c TEXT, k TEXT, t TEXT, w TEXT)
            ON CONFLICT DO NOTHING;
    END IF;
    length := expected + count;
    indexed := length;
    head := new_head;
    UPDATE canisters_conversations c SET length = expected + count,
        head = new_head, indexed = expected + count
        WHERE c.id = conv;
    written := true;
END
$body$
"""
_CALL: Final = (
    f"SELECT * FROM {FUNCTION}(%s, %s, %s, %b, %s, %s, %s, %s::text[], "
    "%s::bytea[], %s, %s)"
)


class Heads:
    """The head each conversation had after this store's last append to it:
    ``(length, digest)``, or ``None`` for a fork (appended through the general
    plan). Only a guess: the function checks it under the row's lock."""

    def __init__(self) -> None:
        self._known: dict[str, tuple[int, str] | None] = {}

    def get(self, conversation_id: str) -> tuple[int, str] | None:
        """The remembered head, ``(0, "")`` (a new conversation) when none."""
        return self._known.get(conversation_id, (0, ""))

    def set(self, conversation_id: str, head: tuple[int, str] | None) -> None:
        """Remember ``head`` for ``conversation_id``."""
        known = self._known
        known.pop(conversation_id, None)
        if len(known) >= _REMEMBERED:
            del known[next(iter(known))]
        known[conversation_id] = head

    def forget(self, conversation_id: str) -> None:
        """Forget the head of ``conversation_id`` (appended another way)."""
        self._known.pop(conversation_id, None)


def create_schema() -> Plan[None]:
    """The tables (:func:`~canisters.storage._postgres.create_schema`), then the
    append function when the schema lacks it (a store made before it)."""
    yield from plans.create_schema()
    found = yield Query(
        "SELECT 1 FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace "
        "WHERE p.proname = %s AND n.nspname = current_schema()",
        (FUNCTION,),
    )
    if not found:
        yield Query(_CREATE)


def _json(ids: list[str | None]) -> str:
    """``ids`` as the function takes them: a JSON array."""
    return orjson.dumps(ids).decode()


def _not_held(_wanted: list[str]) -> dict[str, tuple[str, bytes]]:
    return {}


def _held(
    held: dict[str, tuple[str, bytes]], _wanted: list[str]
) -> dict[str, tuple[str, bytes]]:
    return held


def extend(
    backend: Backend,
    heads: Heads,
    conversation_id: str,
    canisters: Iterable[Canister],
) -> Plan[None]:
    """Append in one round trip when the remembered head holds (see the module's
    docstring); otherwise through the general plan."""
    canisters = list(canisters)
    if not (yield from _at_once(backend, heads, conversation_id, canisters)):
        yield from plans.extend(backend, conversation_id, canisters)


def _at_once(
    backend: Backend,
    heads: Heads,
    conversation_id: str,
    canisters: list[Canister],
) -> Plan[bool]:
    """Append through the function; ``False`` when the general plan must."""
    check_id(conversation_id)
    known = heads.get(conversation_id)
    if known is None or not canisters:
        return False
    dehydrate = backend.codec.dehydrate
    records = []
    blobs: dict[str, bytes] = {}
    for canister in canisters:
        record, found = dehydrate(canister)
        records.append(record)
        blobs.update(found)
    if blobs and backend.external is not None:
        return False
    ids = [record_id(record) for record in records]
    named = [canister_id for canister_id in ids if canister_id is not None]
    if len(set(named)) < len(named):
        # Drops repeats within the append, refuses an id taken twice in it.
        records = screen(conversation_id, records, _not_held)
        ids = [record_id(record) for record in records]
    blob_ids = sorted(blobs) if blobs else None
    blob_data = [blobs[key] for key in blob_ids] if blob_ids else None
    created = time.time() if blobs else 0.0
    search = postgres_rows(records, blobs)
    for _attempt in range(_ATTEMPTS):
        length, prev = known
        lines = []
        for seq, record in enumerate(records, length):
            line, prev = encode_record(seq, prev, record)
            lines.append(line[:-1])
        rows = yield Query(
            _CALL,
            (
                conversation_id,
                length,
                known[1],
                b"".join(lines),
                ",".join([str(len(line)) for line in lines]),
                prev,
                _json(ids) if named else None,
                blob_ids,
                blob_data,
                created,
                search,
            ),
            binary=True,
            alone=True,
        )
        written, now, head, parent, indexed, held_ids, held_seqs, held_lines = rows[0]
        if parent is not None:
            heads.set(conversation_id, None)
            return False
        if written:
            heads.set(conversation_id, (now, head))
            return True
        if indexed < now:
            heads.forget(conversation_id)
            return False
        known = (now, head)
        if held_ids:
            held = {
                canister_id: (f"record {seq} of {conversation_id}", bytes(line))
                for canister_id, seq, line in zip(
                    held_ids, held_seqs, held_lines, strict=True
                )
            }
            records = screen(conversation_id, records, functools.partial(_held, held))
            if not records:
                heads.set(conversation_id, known)
                return True
            ids = [record_id(record) for record in records]
            named = [canister_id for canister_id in ids if canister_id is not None]
            search = postgres_rows(records, blobs)
    heads.forget(conversation_id)
    return False
