"""Copying every conversation and its content from one store to another.

:func:`copy_store` (``canisters store copy SRC DST`` on the command line) moves a
store between backends, for example from a directory to PostgreSQL and S3. It
may be interrupted and run again: what the target already holds is checked and
kept, and only the rest is copied. At the end every conversation's chain head
(its length and last digest) in the target must equal the source's.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Final

import attrs

from ..exceptions import IntegrityError, StorageError
from ._tombstone import REDACTED

if TYPE_CHECKING:
    from . import Store

__all__ = ["CopyReport", "copy_store"]

_CHUNK: Final = 1000


@attrs.frozen
class CopyReport:
    """What :func:`copy_store` did."""

    conversations: int
    """Conversations in the source, all present and verified in the target."""
    copied_records: int
    """Records appended to the target by this run (0 when it had everything)."""
    copied_blobs: int
    """Blobs written to the target by this run."""
    skipped: int
    """Conversations the target already held whole (an earlier, interrupted run)."""


def copy_store(
    source: Store,
    target: Store,
    *,
    progress: Callable[[int, int], None] | None = None,
) -> CopyReport:
    """Copy every conversation, side file and referenced blob of ``source`` into
    ``target`` (both :class:`~canisters.storage.Store`), resuming where an earlier
    run stopped.

    Conversations keep their ids; a fork arrives as a conversation of its own
    holding its whole history (the chain, and so the head, is the same). A
    conversation holding redacted canisters arrives with them (their content
    the placeholder, their ``extras`` saying why), in a chain of its own: the
    digests of the erased records cannot be made again, so its head is checked
    for its length only. Both
    stores should have the same :class:`~canisters.storage.StoragePolicy`, or
    heads differ. Raises :class:`~canisters.StorageError` when the target holds
    a conversation that is not a prefix of the source's, and
    :class:`~canisters.IntegrityError` when a head differs after the copy.
    """
    blobs = sorted(source.referenced_content())
    conversations = source.conversations()
    total = len(blobs) + 2 * len(conversations)
    done = 0

    def tick() -> None:
        nonlocal done
        done += 1
        if progress is not None:
            progress(done, total)

    if progress is not None:
        progress(0, total)
    copied_blobs = copied_records = skipped = 0
    rechained: set[str] = set()
    for content_id in blobs:
        if source.content.has(content_id) and not target.content.has(content_id):
            target.content.put(source.content.get(content_id))
            copied_blobs += 1
        tick()
    for conversation_id in conversations:
        wanted = source.head(conversation_id)
        if target.exists(conversation_id) and target.head(conversation_id) == wanted:
            skipped += 1
        else:
            copied, redacted = _copy_log(source, target, conversation_id)
            copied_records += copied
            if redacted:
                rechained.add(conversation_id)
        _copy_sidecars(source, target, conversation_id)
        tick()
    for conversation_id in conversations:
        wanted = source.head(conversation_id)
        found = target.head(conversation_id)
        if found != wanted and (
            conversation_id not in rechained or found[0] != wanted[0]
        ):
            raise IntegrityError(
                f"{conversation_id}: the copy ends after {found[0]} records with "
                f"digest {found[1][:12] or 'nothing'}, the source after {wanted[0]} "
                f"with {wanted[1][:12] or 'nothing'} (do both stores use the same "
                "policy?)"
            )
        report = target.verify(conversation_id)
        if not report.ok:
            raise IntegrityError(
                f"{conversation_id}: the copy does not verify: {report.problems[0]}"
            )
        tick()
    return CopyReport(len(conversations), copied_records, copied_blobs, skipped)


def _copy_log(source: Store, target: Store, conversation_id: str) -> tuple[int, bool]:
    """Copy a log; return how many records it appended and whether it holds
    redacted canisters (their erased records' digests cannot be made again:
    the target's chain is a new one, of the same length)."""
    canisters = list(source.load(conversation_id))
    seen: set[str] = set()
    for canister in canisters:
        if canister.id in seen:
            # A store records a canister id once per conversation: the target
            # would leave the second out, and its chain would differ.
            raise StorageError(
                f"{conversation_id}: the source records canister {canister.id!r} "
                "more than once (an append retried by a library that recorded "
                "it again); a store records a canister once per conversation, "
                "so the copy cannot have the source's chain"
            )
        seen.add(canister.id)
    have = 0
    if target.exists(conversation_id):
        held = target.load(conversation_id)
        have = len(held)
        if list(held) != canisters[:have]:
            raise StorageError(
                f"{conversation_id}: the target already holds a different "
                "conversation under this id; delete it there or copy elsewhere"
            )
    elif not canisters:
        target.extend(conversation_id, [])
    for start in range(have, len(canisters), _CHUNK):
        target.extend(conversation_id, canisters[start : start + _CHUNK])
    redacted = any(REDACTED in canister.extras for canister in canisters)
    return len(canisters) - have, redacted


def _copy_sidecars(source: Store, target: Store, conversation_id: str) -> None:
    for name in source.sidecar_names(conversation_id):
        lines = source.sidecar(conversation_id, name).read_lines()
        destination = target.sidecar(conversation_id, name)
        held = destination.read_lines()
        if held != lines[: len(held)]:
            raise StorageError(
                f"{conversation_id}: the target's side file {name!r} differs from "
                "the source's"
            )
        for line in lines[len(held) :]:
            destination.append_line(line)
