"""``canisters store search`` and ``reindex`` (part of :mod:`canisters.cli`)."""

from __future__ import annotations

from datetime import timedelta

import click

from ..protocols import Role
from ..storage import FileStore, SearchHit
from ._inputs import dumps, open_store, progress_bar
from ._render import printable

__all__ = ["expire", "redact", "reindex", "search"]

_KINDS = [role.value for role in Role]


@click.command(
    epilog="""\b
Examples:
  canisters store search conversations/ "invoice march"
  canisters store search sqlite:///chats.db 'refund*' --kind user --limit 5
  canisters store search postgresql://app@db/chat weather --json"""
)
@click.option(
    "-n",
    "--limit",
    type=click.IntRange(min=1),
    default=20,
    show_default=True,
    help="Show at most this many hits.",
)
@click.option(
    "-c",
    "--conversation",
    metavar="CONVERSATION_ID",
    help="Search this conversation only (with the prefix a fork shares).",
)
@click.option(
    "-k",
    "--kind",
    "kinds",
    multiple=True,
    type=click.Choice(_KINDS),
    help="Search canisters of this kind only (repeat for several).",
)
@click.option(
    "--json",
    "as_json",
    is_flag=True,
    help="Write a JSON array: conversation, canister, kind, snippet, marks.",
)
@click.option("--blobs", metavar="S3_URL", help="Where the store keeps its blobs.")
@click.argument("location")
@click.argument("query")
def search(
    limit: int,
    conversation: str | None,
    kinds: tuple[str, ...],
    as_json: bool,
    blobs: str | None,
    location: str,
    query: str,
) -> None:
    """Find the canisters whose text holds every word of QUERY.

    Words match whole, whatever their case; 'word*' matches the words it begins.
    Each hit is a line: conversation, canister id, kind, and the text around
    the match, the match in bold.
    """
    with open_store(location, read_only=True, blobs=blobs) as opened:
        hits = opened.search(
            query, limit=limit, conversation=conversation, kinds=kinds or None
        )
    if as_json:
        click.echo(
            dumps(
                [
                    {
                        "conversation": hit.conversation_id,
                        "canister": hit.canister_id,
                        "kind": hit.kind,
                        "snippet": hit.snippet,
                        "marks": [list(mark) for mark in hit.marks],
                    }
                    for hit in hits
                ]
            )
        )
        return
    for hit in hits:
        canister = click.style(printable(hit.canister_id), dim=True)
        click.echo(f"{hit.conversation_id}  {canister}  {hit.kind}  {_styled(hit)}")
    count = len(hits)
    click.echo(
        click.style(f"{count} hit{'s' if count != 1 else ''}", dim=True), err=True
    )


def _styled(hit: SearchHit) -> str:
    """The snippet of ``hit``, each match in bold."""
    pieces = []
    last = 0
    for start, end in hit.marks:
        pieces.append(printable(hit.snippet[last:start]))
        marked = printable(hit.snippet[start:end])
        pieces.append(click.style(marked, bold=True, fg="yellow"))
        last = end
    pieces.append(printable(hit.snippet[last:]))
    return "".join(pieces)


@click.command(
    epilog="""\b
Examples:
  canisters store reindex sqlite:///chats.db
  canisters store reindex postgresql://app@db/chat"""
)
@click.option("--blobs", metavar="S3_URL", help="Where the store keeps its blobs.")
@click.argument("location")
def reindex(blobs: str | None, location: str) -> None:
    """Build the search index again from the conversation logs.

    Appends keep the index; this is for an index damaged or emptied by hand.
    The file backend keeps no index (it scans its logs): nothing to do there.
    """
    with (
        open_store(location, blobs=blobs) as opened,
        progress_bar("indexing") as progress,
    ):
        count = opened.rebuild_search_index(progress=progress)
        scans = isinstance(opened, FileStore)
    if scans:
        click.echo("the file backend keeps no index (it scans): nothing to do")
        return
    click.echo(f"indexed {count} canister{'s' if count != 1 else ''}")


@click.command(
    epilog="""\b
Examples:
  canisters store redact conversations/ chat-1 3f2a9c --reason "GDPR request 1142"
  canisters store redact sqlite:///chats.db chat-1 3f2a9c --reason "pasted secret\""""
)
@click.option(
    "--reason", required=True, help="Why (one line): kept in the tombstone and audit."
)
@click.argument("location")
@click.argument("conversation_id")
@click.argument("canister_ids", nargs=-1, required=True, metavar="CANISTER_ID...")
def redact(
    reason: str, location: str, conversation_id: str, canister_ids: tuple[str, ...]
) -> None:
    """Erase the content of canisters, keeping their place in the hash chain.

    Each canister's record becomes a tombstone that keeps its digest, kind and
    place and the reason; 'store verify' reports it as a redaction. Forks that
    share it see it. Run 'store gc' afterwards to remove the blobs only it named.
    """
    with open_store(location) as opened:
        for canister_id in canister_ids:
            note = opened.redact(conversation_id, canister_id, reason=reason)
            click.echo(
                f"redacted {note.kind} {printable(note.canister_id)} "
                f"(record {note.seq} of {note.conversation_id})"
            )


@click.command(
    epilog="""\b
Examples:
  canisters store expire conversations/ --days 90 --dry-run
  canisters store expire sqlite:///chats.db --days 30 --redact
  0 3 * * *  canisters store expire postgresql://app@db/chat --days 90"""
)
@click.option(
    "--days",
    type=click.FloatRange(min=0),
    required=True,
    help="Expire conversations whose last canister is older than this.",
)
@click.option(
    "--redact",
    "redact_",
    is_flag=True,
    help="Redact their canisters (keep the skeleton) instead of deleting them.",
)
@click.option("--dry-run", is_flag=True, help="List what would expire; change nothing.")
@click.option("--blobs", metavar="S3_URL", help="Where the store keeps its blobs.")
@click.argument("location")
def expire(
    days: float, redact_: bool, dry_run: bool, blobs: str | None, location: str
) -> None:
    """Apply retention: delete (or redact) the conversations older than --days.

    A conversation expires with all its forks (forks first); one whose fork is
    newer stays. Prints each conversation expired, then a summary.
    """
    with (
        open_store(location, blobs=blobs) as opened,
        progress_bar("expiring") as progress,
    ):
        report = opened.expire(
            timedelta(days=days),
            dry_run=dry_run,
            action="redact" if redact_ else "delete",
            progress=progress,
        )
    for cid in report.expired:
        click.echo(cid)
    verb = {
        (False, False): "deleted",
        (False, True): "redacted",
        (True, False): "would delete",
        (True, True): "would redact",
    }[dry_run, redact_]
    count = len(report.expired)
    summary = f"{verb} {count} conversation{'s' if count != 1 else ''}"
    if redact_:
        plural = "s" if report.redacted != 1 else ""
        summary += f" ({report.redacted} canister{plural})"
    click.echo(f"{summary}, kept {report.kept}")
