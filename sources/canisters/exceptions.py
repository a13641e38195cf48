"""Every error :mod:`canisters` raises.

The tree, rooted at :class:`CanistersError`::

    CanistersError
    ├── ModelError (ValueError)            refused at construction
    ├── CanisterNotFound (LookupError)     no canister with that id
    ├── InvalidConversation (ValueError)   validate() found problems
    ├── BuilderError (ValueError)          a builder asked for the inconsistent
    ├── SerializationError (ValueError)    a document could not be read or written
    ├── UnknownProvider (LookupError)      no normalizer under that name
    ├── ProviderError (ValueError)         a provider body could not be handled
    │   └── UnsupportedContent             content the target cannot take
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

from collections.abc import Sequence

import attrs

__all__ = [
    "BuilderError",
    "CanisterNotFound",
    "CanistersError",
    "ContentNotFound",
    "ConversationNotFound",
    "IntegrityError",
    "InvalidConversation",
    "MalformedPayload",
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


class ModelError(CanistersError, ValueError):
    """A canister or content part was refused at construction."""


class CanisterNotFound(CanistersError, LookupError):
    """No canister with the given id is in the conversation."""

    def __init__(self, canister_id: str) -> None:
        self.canister_id = canister_id
        super().__init__(f"no canister with id {canister_id!r} in the conversation")


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
            f"unknown provider {name!r}; known providers: {', '.join(self.known)}"
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
        super().__init__(f"no conversation {conversation_id!r} in the store")


class ContentNotFound(StorageError, LookupError):
    """No blob with that content id exists in the content store."""

    def __init__(self, content_id: str) -> None:
        self.content_id = content_id
        super().__init__(f"no content {content_id!r} in the content store")


class IntegrityError(StorageError):
    """Stored data no longer matches its digest (tampering or corruption)."""


class RecordingError(CanistersError):
    """Recording or resuming a conversation failed."""


class PromptMismatch(RecordingError, ValueError):
    """A conversation was resumed with another prompt key than it was recorded with."""

    def __init__(self, conversation_id: str, recorded: str | None, given: str | None):
        self.conversation_id = conversation_id
        self.recorded = recorded
        self.given = given
        super().__init__(
            f"conversation {conversation_id!r} was recorded with prompt key "
            f"{recorded!r}, resumed with {given!r}"
        )


class SnapshotRestoreError(RecordingError, ValueError):
    """A snapshot could not be read back."""


class PendingInvocations(RecordingError, RuntimeError):
    """Pending invocations were found where the caller asked to abort on them."""
