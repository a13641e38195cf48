"""The identifier and side-file line checks every store applies, which the
recorder also applies before it writes anything (:mod:`canisters.storage`
re-exports :class:`InvalidIdentifier`)."""

from __future__ import annotations

import re
from typing import Final

from .exceptions import ModelError, StorageError, _excerpt

__all__ = ["MAX_ID_LENGTH", "InvalidIdentifier", "check_id", "check_line"]

MAX_ID_LENGTH: Final = 128
ID_PATTERN: Final = re.compile(r"[A-Za-z0-9_][A-Za-z0-9._\-]*")


class InvalidIdentifier(StorageError, ValueError):
    """A conversation id, content id or side-file name was refused.

    Ids become file names, so only letters, digits, ``.``, ``_`` and ``-`` are
    accepted (not first ``.`` or ``-``), at most 128 characters; content ids are
    ``sha256:`` and 64 lowercase hex digits.
    """

    def __init__(self, kind: str, value: object, reason: str) -> None:
        self.kind = kind
        self.value = value
        self.reason = reason
        shown = repr(value) if type(value) is str and len(value) <= 256 else None
        super().__init__(f"invalid {kind} {shown or _excerpt(value)}: {reason}")


def check_id(value: object, kind: str = "conversation id") -> str:
    """Return ``value`` when it is safe to use as a file name, else raise."""
    if (
        type(value) is str
        and len(value) <= MAX_ID_LENGTH
        and ID_PATTERN.fullmatch(value) is not None
    ):
        return value
    if not isinstance(value, str):
        raise InvalidIdentifier(kind, value, f"expected a str, not {type(value)}")
    if not value:
        raise InvalidIdentifier(kind, value, "it is empty")
    if "\x00" in value:
        raise InvalidIdentifier(kind, value, "it contains a NUL byte")
    if value.startswith(("/", "\\")) or (len(value) > 1 and value[1] == ":"):
        raise InvalidIdentifier(kind, value, "it is an absolute path")
    if ".." in value or "/" in value or "\\" in value:
        raise InvalidIdentifier(kind, value, "it contains a path separator or '..'")
    if len(value) > MAX_ID_LENGTH:
        raise InvalidIdentifier(
            kind, value, f"it is longer than {MAX_ID_LENGTH} characters"
        )
    raise InvalidIdentifier(
        kind,
        value,
        "use letters, digits, '.', '_' and '-' only, not starting with '.' or '-'",
    )


def check_line(line: object) -> str:
    """Return ``line`` when it is text every backend writes as it is, else raise
    :class:`~canisters.ModelError`: a str holding no line break, no NUL
    (PostgreSQL's text cannot hold it) and no lone surrogate (UTF-8 cannot).

    Every backend checks each side-file line with it before writing anything.
    """
    if not isinstance(line, str):
        raise ModelError(f"a side-file line is a str, not {type(line).__name__}")
    if "\n" in line or "\r" in line:
        raise ModelError("a side-file line must not contain a line break")
    if "\x00" in line:
        raise ModelError("a side-file line must not contain a NUL character")
    if not line.isascii():
        try:
            line.encode("utf-8")
        except UnicodeEncodeError as error:
            raise ModelError(
                "a side-file line must be text UTF-8 can write: it holds a lone "
                f"surrogate ({line[error.start]!r} at index {error.start})"
            ) from None
    return line
