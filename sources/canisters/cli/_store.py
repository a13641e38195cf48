"""``canisters store`` and its maintenance commands (part of :mod:`canisters.cli`)."""

from __future__ import annotations

import click

from .. import recording, storage
from ..exceptions import CanistersError
from ._common import EXIT_PROBLEMS, notice
from ._inputs import (
    STDIN,
    Failure,
    display_name,
    dumps,
    open_store,
    progress_bar,
    read_bytes,
    write,
)
from ._lifecycle import expire, redact, reindex, search
from ._render import human_size, printable


@click.group(
    epilog="""\b
LOCATION is a directory (the file backend), sqlite:///path.db (relative),
sqlite:////absolute/path.db or postgresql://user@host/dbname.

\b
Examples:
  canisters store list conversations/
  canisters store verify conversations/
  canisters store stats conversations/
  canisters store export conversations/ chat-1 -o chat-1.json
  canisters store import sqlite:///chats.db chat-1.json
  canisters store gc conversations/ --dry-run
  canisters store copy conversations/ postgresql://app@db/chat
  canisters store search conversations/ 'invoice march'"""
)
def store() -> None:
    """Maintain a store: list, verify, stats, export, import, gc, copy, search."""


for _command in (search, reindex, redact, expire):
    store.add_command(_command)


@store.command(
    "list",
    epilog="""\b
Examples:
  canisters store list conversations/
  canisters store list sqlite:///chats.db --json""",
)
@click.option(
    "--json",
    "as_json",
    is_flag=True,
    help="Write a JSON array: id, records, fork_of, fork_at, forks.",
)
@click.option("--blobs", metavar="S3_URL", help="Where the store keeps its blobs.")
@click.argument("location")
def list_(as_json: bool, blobs: str | None, location: str) -> None:
    """List the conversations: id, number of records, and forks.

    A fork's line names the conversation it was forked from and the canister
    it shares last; its parent's line counts its forks. An unreadable
    conversation is listed with what is wrong.
    """
    with open_store(location, read_only=True, blobs=blobs) as opened:
        rows: list[dict[str, object]] = []
        for cid in opened.conversations():
            row: dict[str, object] = {"id": cid}
            try:
                row["records"] = opened.head(cid)[0]
            except CanistersError as error:
                row["records"] = None
                row["error"] = str(error)
            try:
                origin = opened.origin(cid)
                forks = [fork.conversation_id for fork in opened.forks(cid)]
            except CanistersError as error:
                origin, forks = None, []
                row.setdefault("error", str(error))
            row["fork_of"] = origin.parent if origin else None
            row["fork_at"] = origin.at if origin else None
            row["forks"] = forks
            rows.append(row)
    if as_json:
        click.echo(dumps(rows))
        return
    if not rows:
        click.echo("no conversations")
    width = max((len(printable(row["id"])) for row in rows), default=0)
    for row in rows:
        line = f"{printable(row['id']).ljust(width)}  "
        if "error" in row:
            click.echo(line + click.style(printable(row["error"]), fg="red"))
            continue
        records = row["records"]
        line += click.style(f"{records} record{'s' if records != 1 else ''}", dim=True)
        if row["fork_of"] is not None:
            line += f"  fork of {printable(row['fork_of'])}"
            if row["fork_at"] is not None:
                line += f" at {printable(row['fork_at'])}"
        children = row["forks"]
        assert isinstance(children, list)
        if children:
            line += f"  {len(children)} fork{'s' if len(children) != 1 else ''}"
        click.echo(line)


@store.command(
    epilog="""\b
Examples:
  canisters store verify conversations/
  canisters store verify sqlite:///chats.db chat-1 chat-2
  canisters store verify postgresql://app@db/chat || mail -s "store damaged" ops""",
)
@click.option("--blobs", metavar="S3_URL", help="Where the store keeps its blobs.")
@click.argument("location")
@click.argument("conversation_ids", nargs=-1, metavar="[CONVERSATION_ID...]")
def verify(blobs: str | None, location: str, conversation_ids: tuple[str, ...]) -> None:
    """Check the hash chain and blobs of every conversation (or those named).

    Each problem is one line: the conversation, the record (line or sequence
    number), what is wrong and its code. Exits with 1 when any problem was
    found (a conversation named but absent is one), so it can run from cron.
    """
    found = records = 0
    with open_store(location, read_only=True, blobs=blobs) as opened:
        wanted = list(conversation_ids) or opened.conversations()
        with progress_bar("verifying") as progress:
            for done, cid in enumerate(wanted):
                try:
                    verification = opened.verify(cid)
                except CanistersError as error:
                    click.echo(f"{cid}: " + click.style(printable(error), fg="red"))
                    found += 1
                else:
                    records += verification.records
                    for problem in verification.problems:
                        click.echo(
                            f"{cid}: "
                            + click.style(
                                printable(
                                    f"{problem.where}: {problem.message} "
                                    f"({problem.code})"
                                ),
                                fg="red",
                            )
                        )
                    found += len(verification.problems)
                    if verification.torn_tail:
                        notice(f"{cid}: an unfinished last line was ignored")
                    for note in verification.redactions:
                        notice(
                            f"{cid}: record {note.seq} ({note.kind}) redacted on "
                            f"{note.at:%Y-%m-%d %H:%M} UTC: {note.reason}"
                        )
                if progress is not None:
                    progress(done + 1, len(wanted))
    count = len(wanted)
    summary = (
        f"verified {count} conversation{'s' if count != 1 else ''} "
        f"({records} record{'s' if records != 1 else ''}): "
    )
    if found:
        noun = "problem" if found == 1 else "problems"
        click.echo(summary + click.style(f"{found} {noun}", fg="red"))
        raise click.exceptions.Exit(EXIT_PROBLEMS)
    click.echo(summary + click.style("intact", fg="green"))


@store.command(
    epilog="""\b
Examples:
  canisters store copy conversations/ sqlite:///chats.db
  canisters store copy conversations/ postgresql://app@db/chat \\
      --target-blobs s3://chat-media/prod"""
)
@click.option(
    "--source-blobs", metavar="S3_URL", help="Where the source keeps its blobs."
)
@click.option(
    "--target-blobs",
    metavar="S3_URL",
    help="Keep the target's blobs in this bucket (s3://bucket/prefix).",
)
@click.argument("source")
@click.argument("target")
def copy(
    source_blobs: str | None, target_blobs: str | None, source: str, target: str
) -> None:
    """Copy every conversation, side file and referenced blob from SOURCE to TARGET.

    TARGET is created when new. Run it again after an interruption: what TARGET
    holds is checked and kept, the rest copied. At the end every conversation's
    chain head in TARGET must equal SOURCE's. Forks arrive as conversations of
    their own holding their whole history.
    """
    with (
        open_store(source, blobs=source_blobs) as opened,
        open_store(target, create=True, blobs=target_blobs) as destination,
        progress_bar("copying") as progress,
    ):
        report = storage.copy_store(opened, destination, progress=progress)
    click.echo(
        f"copied {report.copied_records} records and {report.copied_blobs} blobs; "
        f"{report.conversations} conversations verified "
        f"({report.skipped} already complete)"
    )


@store.command(
    epilog="""\b
Examples:
  canisters store stats conversations/
  canisters store stats sqlite:///chats.db --json"""
)
@click.option("--json", "as_json", is_flag=True, help="Write the figures as JSON.")
@click.argument("location")
def stats(as_json: bool, location: str) -> None:
    """Count conversations, records and blobs, their bytes, and the dedup ratio.

    The dedup ratio is the bytes the blobs would take if every record held its own
    copy, divided by the bytes they take.
    """
    with (
        open_store(location, read_only=True) as opened,
        progress_bar("counting") as progress,
    ):
        figures = opened.stats(progress=progress)
    if as_json:
        document = {
            "conversations": figures.conversations,
            "records": figures.records,
            "log_bytes": figures.log_bytes,
            "blobs": figures.blobs,
            "blob_bytes": figures.blob_bytes,
            "references": figures.references,
            "referenced_bytes": figures.referenced_bytes,
            "dedup_ratio": round(figures.dedup_ratio, 4),
        }
        click.echo(dumps(document))
        return
    rows = [
        ("store", location),
        ("conversations", str(figures.conversations)),
        ("records", f"{figures.records} ({human_size(figures.log_bytes)} of logs)"),
        ("blobs", f"{figures.blobs} ({human_size(figures.blob_bytes)})"),
        (
            "references",
            f"{figures.references} ({human_size(figures.referenced_bytes)} referenced)",
        ),
        ("dedup ratio", f"{figures.dedup_ratio:.2f}x"),
    ]
    for label, value in rows:
        click.echo(click.style(label.ljust(15), bold=True) + value)


@store.command(
    "export",
    epilog="""\b
Examples:
  canisters store export conversations/ chat-1 > chat-1.json
  canisters store export sqlite:///chats.db chat-1 -o chat-1.json""",
)
@click.option(
    "-o", "--output", default=STDIN, metavar="FILE", help="Write here, not stdout."
)
@click.argument("location")
@click.argument("conversation_id")
def export(output: str, location: str, conversation_id: str) -> None:
    """Write one conversation, with every blob it refers to, as one JSON document.

    The document (a canisters snapshot) is what 'store import' reads, into this or
    any other store.
    """
    with open_store(location, read_only=True) as opened:
        document = recording.snapshot(opened, conversation_id)
    write(output, document)


@store.command(
    "import",
    epilog="""\b
Examples:
  canisters store import conversations/ chat-1.json
  canisters store export old/ chat-1 | canisters store import new/ - --id chat-2""",
)
@click.option(
    "--id",
    "conversation_id",
    metavar="CONVERSATION_ID",
    help="Store it under this id (default: its own id when free, else a new one).",
)
@click.argument("location")
@click.argument("file", default=STDIN, metavar="[FILE|-]")
def import_(conversation_id: str | None, location: str, file: str) -> None:
    """Read a document written by 'store export' into the store (created if new).

    Prints the id the conversation was stored under.
    """
    data = read_bytes(file)
    with open_store(location, create=True) as opened:
        try:
            stored = recording.restore(opened, data, conversation_id=conversation_id)
        except CanistersError as error:
            raise Failure(f"{display_name(file)}: {error}") from None
    click.echo(stored)


@store.command(
    epilog="""\b
Examples:
  canisters store gc conversations/ --dry-run
  canisters store gc sqlite:///chats.db --older-than 3600"""
)
@click.option(
    "--dry-run", is_flag=True, help="List what would be removed; remove nothing."
)
@click.option(
    "--older-than",
    type=click.FloatRange(min=0),
    default=0.0,
    show_default=True,
    metavar="SECONDS",
    help="Keep blobs stored less than this long ago (for writers that put a blob "
    "before the record naming it).",
)
@click.option("-v", "--verbose", is_flag=True, help="List every blob removed.")
@click.argument("location")
def gc(dry_run: bool, older_than: float, verbose: bool, location: str) -> None:
    """Remove the blobs no conversation refers to.

    A referenced blob is never removed, even while other processes append: the
    store's writers and its garbage collector exclude each other.
    """
    with (
        open_store(location, read_only=dry_run) as opened,
        progress_bar("collecting") as progress,
    ):
        report = opened.collect_garbage(
            dry_run=dry_run, older_than=older_than, progress=progress
        )
    if verbose or dry_run:
        for content_id in report.removed:
            click.echo(content_id)
    verb = "would remove" if dry_run else "removed"
    count = len(report.removed)
    click.echo(
        f"{verb} {count} blob{'s' if count != 1 else ''} "
        f"({human_size(report.freed_bytes)}), kept {report.kept}"
    )
