"""Every error :mod:`canisters` raises.

The tree, rooted at :class:`CanistersError`::

    CanistersError
    ├── ModelError (ValueError)            refused at construction
    ├── CanisterNotFound (LookupError)     no canister with that id
    ├── InvalidConversation (ValueError)   validate() found problems
    ├── BuilderError (ValueError)          a builder asked for the inconsistent
    ├── SerializationError (ValueError)    a document could not be read or written
    ├── UnknownProvider (LookupError)      no normalizer under that name
    ├── MissingExtra (ImportError)         an optional library is not installed
    ├── ProviderError (ValueError)         a provider body could not be handled
    │   ├── MalformedPayload               not shaped as the provider sends it
    │   ├── UnsupportedContent             content the target cannot take
    │   └── ErrorResponse                  the provider refused the call
    │                                      (canisters.providers, with its reply)
    ├── StorageError (OSError)             the store failed
    │   ├── ConversationNotFound (LookupError)
    │   ├── ContentNotFound (LookupError)
    │   └── IntegrityError                 stored data no longer matches its digest
    └── RecordingError
        ├── PromptMismatch (ValueError)    resumed with another prompt
        ├── SnapshotRestoreError (ValueError)
        └── PendingInvocations (RuntimeError)

Each class also inherits the builtin it refines, so existing ``except ValueError``
or ``except LookupError`` clauses keep working.
"""

from __future__ import annotations

import reprlib
from collections.abc import Sequence
from typing import Any, Final

import attrs

__all__ = [
    "BuilderError",
    "CanisterNotFound",
    "CanistersError",
    "ContentNotFound",
    "ConversationNotFound",
    "DuplicateCanister",
    "IntegrityError",
    "InvalidConversation",
    "MalformedPayload",
    "MissingExtra",
    "ModelError",
    "PendingInvocations",
    "Problem",
    "PromptMismatch",
    "ProviderError",
    "RecordingError",
    "SerializationError",
    "SnapshotRestoreError",
    "StorageError",
    "UnknownProvider",
    "UnsupportedContent",
]


class CanistersError(Exception):
    """Root of every error the library raises."""


_EXCERPT_LIMIT: Final = 120
"""About how many characters of an offending value an error message quotes."""


class _Excerpt(reprlib.Repr):
    """:func:`reprlib.repr` cutting long strings in the middle (saying how long
    they were), with read-only mappings and bytes handled as their builtins, and
    the nesting shown three levels deep: a message never grows with its input."""

    def __init__(self) -> None:
        super().__init__()
        self.maxlevel = 3
        self.maxdict = self.maxlist = self.maxtuple = self.maxset = 6
        self.maxstring = self.maxother = self.maxlong = _EXCERPT_LIMIT

    def repr1(self, x: Any, level: int) -> str:
        if isinstance(x, dict) and type(x) is not dict:
            return self.repr_dict(x, level)  # FrozenDict and other dicts
        if isinstance(x, (bytes, bytearray, memoryview)):
            return self.repr_str(bytes(x[: _EXCERPT_LIMIT + 1]), level, len(x))
        return super().repr1(x, level)

    def repr_str(self, x: Any, level: int, size: int | None = None) -> str:
        size = len(x) if size is None else size
        limit = self.maxstring if level >= self.maxlevel else 24  # nested: shorter
        if size <= limit:
            return repr(x)
        half = limit // 2
        text = repr(x[:half] + x[len(x) - half :])
        unit = "characters" if isinstance(x, str) else "bytes"
        return f"{text[:half]}...{text[len(text) - half :]} ({size:,} {unit})"

    def repr_int(self, x: int, level: int) -> str:
        if x.bit_length() <= 300:
            return repr(x)
        return f"<an integer of {x.bit_length():,} bits>"


_EXCERPT: Final = _Excerpt()


def _excerpt(value: object) -> str:
    """Return ``repr(value)`` cut to about :data:`_EXCERPT_LIMIT` characters.

    Every message that quotes an input value quotes it through this, so that a
    4 MB URL or a deeply nested object gives a message of a line; the path of
    the value, kept beside the message, says where the whole value is.
    """
    try:
        text = _EXCERPT.repr(value)
    except Exception:  # a foreign object whose repr fails
        return f"<{type(value).__name__} object>"
    if len(text) > 4 * _EXCERPT_LIMIT:  # many long keys, a long foreign repr
        text = f"{text[: 2 * _EXCERPT_LIMIT]}... ({len(text):,} characters)"
    return text


class ModelError(CanistersError, ValueError):
    """A canister or content part was refused at construction.

    ``field`` names the refused field (``"url"``) when one is to blame, so that
    parsers can report the path of the value they read it from.
    """

    def __init__(self, message: str, field: str | None = None) -> None:
        self.field = field
        super().__init__(message)


class CanisterNotFound(CanistersError, LookupError):
    """No canister with the given id is in the conversation."""

    def __init__(self, canister_id: str) -> None:
        self.canister_id = canister_id
        super().__init__(
            f"no canister with id {_excerpt(canister_id)} in the conversation"
        )


@attrs.frozen
class Problem:
    """One problem :func:`canisters.validate` found."""

    index: int
    """Position of the offending canister in the conversation."""
    canister_id: str
    """Id of the offending canister."""
    code: str
    """Stable machine-readable code, such as ``"empty-user-message"``."""
    message: str
    """What is wrong, in words."""

    def __str__(self) -> str:
        return f"[{self.index}] {self.canister_id}: {self.message} ({self.code})"


class InvalidConversation(CanistersError, ValueError):
    """A conversation broke one or more rules; ``problems`` lists them all."""

    def __init__(self, problems: Sequence[Problem]) -> None:
        self.problems = tuple(problems)
        lines = "\n".join(f"  {problem}" for problem in self.problems)
        count = len(self.problems)
        noun = "problem" if count == 1 else "problems"
        super().__init__(f"invalid conversation: {count} {noun}\n{lines}")


class BuilderError(CanistersError, ValueError):
    """A builder was asked to produce something inconsistent."""


class SerializationError(CanistersError, ValueError):
    """A document could not be read or written.

    ``path`` locates the bad field (``$`` is the document root, as in
    ``$.canisters[3].content[0].data``).
    """

    def __init__(self, message: str, path: str = "$") -> None:
        self.reason = message
        self.path = path
        super().__init__(f"{path}: {message}")

    def within(self, prefix: str) -> SerializationError:
        """Return the same error located under ``prefix`` (a key or ``[index]``)."""
        step = prefix if prefix.startswith("[") else f".{prefix}"
        return type(self)(self.reason, f"${step}{self.path[1:]}")


class UnknownProvider(CanistersError, LookupError):
    """No normalizer is registered under the requested name."""

    def __init__(self, name: str, known: Sequence[str]) -> None:
        self.name = name
        self.known = tuple(known)
        super().__init__(
            f"unknown provider {_excerpt(name)}; "
            f"known providers: {', '.join(self.known)}"
        )


class MissingExtra(CanistersError, ImportError):
    """An optional library a function needs is not installed.

    The message names the extra that installs it (``pip install
    'canisters[pydantic-ai]'``).
    """

    def __init__(self, module: str, extra: str) -> None:
        self.module = module
        self.extra = extra
        super().__init__(
            f"{module} is not installed; install the extra: "
            f"pip install 'canisters[{extra}]'"
        )


class ProviderError(CanistersError, ValueError):
    """A provider body could not be parsed, or a conversation could not be rendered."""


class MalformedPayload(ProviderError):
    """A provider body is not shaped as the provider sends it.

    ``path`` locates the bad field (``$`` is the body root, as in
    ``$.messages[2].content[0].type``).
    """

    def __init__(self, message: str, path: str = "$") -> None:
        self.reason = message
        self.path = path
        super().__init__(f"{path}: {message}")


class UnsupportedContent(ProviderError):
    """Content the target provider cannot take, under the ``error`` policy."""

    def __init__(self, provider: str, part: str, reason: str = "") -> None:
        self.provider = provider
        self.part = part
        self.reason = reason
        detail = f": {reason}" if reason else ""
        super().__init__(f"{provider} cannot take {part}{detail}")


class StorageError(CanistersError, OSError):
    """The store failed to read or write."""


class ConversationNotFound(StorageError, LookupError):
    """No conversation with that id exists in the store."""

    def __init__(self, conversation_id: str) -> None:
        self.conversation_id = conversation_id
        super().__init__(f"no conversation {_excerpt(conversation_id)} in the store")


class ContentNotFound(StorageError, LookupError):
    """No blob with that content id exists in the content store."""

    def __init__(self, content_id: str) -> None:
        self.content_id = content_id
        super().__init__(f"no content {_excerpt(content_id)} in the content store")


class IntegrityError(StorageError):
    """Stored data no longer matches its digest (tampering or corruption)."""


class DuplicateCanister(StorageError, ValueError):
    """An append gave a canister whose id the conversation already holds for a
    different canister.

    Appending the very canister the conversation holds (same id, same content)
    is not an error: it records nothing, so that an append that failed may be
    retried.
    """

    def __init__(self, conversation_id: str, canister_id: str, where: str) -> None:
        self.conversation_id = conversation_id
        self.canister_id = canister_id
        super().__init__(
            f"conversation {_excerpt(conversation_id)} already holds a different "
            f"canister with id {_excerpt(canister_id)} ({where}); a canister id "
            "names one canister in a conversation"
        )


class RecordingError(CanistersError):
    """Recording or resuming a conversation failed."""


class PromptMismatch(RecordingError, ValueError):
    """A conversation was resumed with another prompt key than it was recorded with."""

    def __init__(self, conversation_id: str, recorded: str | None, given: str | None):
        self.conversation_id = conversation_id
        self.recorded = recorded
        self.given = given
        super().__init__(
            f"conversation {_excerpt(conversation_id)} was recorded with prompt key "
            f"{_excerpt(recorded)}, resumed with {_excerpt(given)}"
        )


class SnapshotRestoreError(RecordingError, ValueError):
    """A snapshot could not be read back."""


class PendingInvocations(RecordingError, RuntimeError):
    """Pending invocations were found where the caller asked to abort on them."""
