"""What the commands share: the exit codes and the notes on stderr (part of
:mod:`canisters.cli`)."""

from __future__ import annotations

from typing import Final

import click

from ._render import printable

__all__ = ["EXIT_ERROR", "EXIT_OK", "EXIT_PROBLEMS", "notice"]

EXIT_OK: Final = 0
"""The command did what was asked."""
EXIT_PROBLEMS: Final = 1
"""``validate`` or ``store verify`` found problems."""
EXIT_ERROR: Final = 2
"""An error stopped the command (bad usage, unreadable input, a failed store)."""


def notice(message: str) -> None:
    """Write ``message`` to stderr as the command's note."""
    click.echo(click.style(f"canisters: {printable(message)}", fg="yellow"), err=True)
