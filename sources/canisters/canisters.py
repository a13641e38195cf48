"""Canisters: the six kinds of conversation entry and their common envelope.

Every canister is a frozen, slotted attrs class. The envelope fields (``id``,
``timestamp``, ``parent_id``, ``trace_id``, ``policy``, ``step``, ``metadata``,
``extras``) are keyword-only with defaults, so ``User(content=(Text("hi"),))``,
``User((Text("hi"),))`` and ``User("hi")`` all work.

Applications subclass these classes (``@attrs.frozen class Tagged(User): ...``;
give new fields a default or ``kw_only=True``) and register the subclass with
:func:`canisters.register_canister` to serialize it as itself.
"""

from __future__ import annotations

import enum
import functools
import os
from collections.abc import Iterable, Mapping
from datetime import datetime, timezone
from typing import Any, ClassVar, Final, TypeVar

import attrs

from ._display import notebook_html
from ._frozen import EMPTY, freeze
from ._typecheck import number, refuse, text_or_none, whole
from .content import Text
from .exceptions import ModelError, _excerpt
from .protocols import Canister, Content, Role

__all__ = [
    "Assistant",
    "Document",
    "ErrorCode",
    "ErrorInfo",
    "Invocation",
    "Metadata",
    "Result",
    "Supervisor",
    "Usage",
    "User",
    "child_of",
    "new_id",
    "now",
]

C = TypeVar("C", bound=Canister)


def new_id() -> str:
    """Return a new random id (32 hex digits)."""
    try:
        return _IDS.pop()
    except IndexError:
        _refill_ids()
        return _IDS.pop()


# Ids are cut from one os.urandom call per 128 of them: a system call for each
# id cost several times what cutting one from a batch does. bytes.hex writes a
# space after every 16 bytes and str.split cuts there, both in C: half the
# cost of slicing the digits in Python. A process forked with ids left over
# starts without them, so parent and child never share one.
_IDS: list[str] = []
_BATCH = 128


def _refill_ids() -> None:
    _IDS.extend(os.urandom(16 * _BATCH).hex(" ", 16).split(" "))


if hasattr(os, "register_at_fork"):  # not on Windows
    os.register_at_fork(after_in_child=_IDS.clear)


# datetime.now bound to UTC once: the attribute lookups of
# ``datetime.now(timezone.utc)`` are a third of its cost, paid by every
# canister made without a timestamp and every body a provider parser reads.
_utc_now: Final = functools.partial(datetime.now, timezone.utc)


def now() -> datetime:
    """Return the current time, timezone-aware in UTC."""
    return _utc_now()


def _content(
    value: str | Content | Iterable[str | Content] | None,
) -> tuple[Content, ...]:
    """Accept a string, one part or an iterable of parts; strings become Text."""
    if type(value) is tuple:
        for part in value:
            if not hasattr(part, "type"):
                break
        else:
            return value
    if value is None:
        return ()
    if isinstance(value, str):
        return (Text(value),)
    if hasattr(value, "type") and not isinstance(value, Iterable):
        return (value,)
    if not isinstance(value, Iterable):
        raise ModelError(
            f"content must be text, a content part or an iterable of them, "
            f"got {type(value).__name__}"
        )
    parts: list[Content] = []
    for index, part in enumerate(value):
        if isinstance(part, str):
            parts.append(Text(part))
        elif hasattr(part, "type"):
            parts.append(part)
        else:
            raise ModelError(
                f"content[{index}] is not a content part: {type(part).__name__}"
            )
    return tuple(parts)


class ErrorCode(str, enum.Enum):
    """Standard codes for :attr:`ErrorInfo.code` (any string is allowed)."""

    VALIDATION_ERROR = "VALIDATION_ERROR"
    """The arguments were invalid; the tool did not run."""
    TOOL_ERROR = "TOOL_ERROR"
    """The tool ran and failed."""
    TIMEOUT = "TIMEOUT"
    """The tool did not finish in time."""
    MODEL_ERROR = "MODEL_ERROR"
    """The model call failed."""
    NOT_FOUND = "NOT_FOUND"
    """No handler exists for the invoked name."""
    INTERRUPTED = "INTERRUPTED"
    """The run stopped before the invocation completed."""
    UNKNOWN = "UNKNOWN"
    """Anything else."""


def _code(value: str) -> str:
    return value.value if isinstance(value, ErrorCode) else value


@attrs.frozen(weakref_slot=False)
class ErrorInfo:
    """What went wrong with an invocation."""

    code: str = attrs.field(converter=_code)
    """A machine-readable code; see :class:`ErrorCode` for the standard ones."""
    message: str
    """What happened, in words."""
    retryable: bool = False
    """Whether running the invocation again may succeed."""
    details: Mapping[str, Any] | None = attrs.field(
        default=None, converter=attrs.converters.optional(freeze)
    )
    """Structured details, JSON-compatible."""

    def __attrs_post_init__(self) -> None:
        if not isinstance(self.code, str):
            raise refuse(self, "code", "a string")
        if not isinstance(self.message, str):
            raise refuse(self, "message", "a string")
        if not isinstance(self.retryable, bool):
            raise refuse(self, "retryable", "a bool")


@attrs.frozen(weakref_slot=False)
class Usage:
    """Token counts of one model call, or totals of several."""

    input_tokens: int = 0
    """Tokens read, cached ones included."""
    output_tokens: int = 0
    """Tokens written, reasoning included."""
    cached_tokens: int = 0
    """Input tokens served from a prompt cache."""
    cache_write_tokens: int = 0
    """Input tokens written to a prompt cache."""
    reasoning_tokens: int = 0
    """Output tokens spent on reasoning."""

    def __attrs_post_init__(self) -> None:
        for field in _USAGE_FIELDS:
            if not whole(getattr(self, field)):
                raise refuse(self, field, "an int")

    @property
    def total_tokens(self) -> int:
        """Input and output tokens together."""
        return self.input_tokens + self.output_tokens

    def __add__(self, other: Usage) -> Usage:
        if not isinstance(other, Usage):
            return NotImplemented
        return Usage(
            self.input_tokens + other.input_tokens,
            self.output_tokens + other.output_tokens,
            self.cached_tokens + other.cached_tokens,
            self.cache_write_tokens + other.cache_write_tokens,
            self.reasoning_tokens + other.reasoning_tokens,
        )


_USAGE_FIELDS: Final = tuple(field.name for field in attrs.fields(Usage))


@attrs.frozen(weakref_slot=False)
class Metadata:
    """Execution metadata of a canister."""

    model: str | None = None
    """The model that produced the canister."""
    latency_ms: float | None = None
    """How long producing it took, in milliseconds."""
    usage: Usage | None = None
    """Token counts of the call that produced it."""
    cache_hit: bool | None = None
    """Whether the answer came from a cache."""
    retries: int | None = None
    """How many retries producing it took."""
    quality: float | None = None
    """A quality score from an evaluation."""
    finish_reason: str | None = None
    """Why generation stopped (neutral: ``stop``, ``length``, ``tool_calls``, ...)."""
    custom: Mapping[str, Any] = attrs.field(default=EMPTY, converter=freeze)
    """Anything else, JSON-compatible."""

    def __attrs_post_init__(self) -> None:
        text_or_none(self, "model", "finish_reason")
        for field in ("latency_ms", "quality"):
            value = getattr(self, field)
            if value is not None and not number(value):
                raise refuse(self, field, "a number or None")
        if self.retries is not None and not whole(self.retries):
            raise refuse(self, "retries", "an int or None")
        if self.cache_hit is not None and not isinstance(self.cache_hit, bool):
            raise refuse(self, "cache_hit", "a bool or None")
        if self.usage is not None and not isinstance(self.usage, Usage):
            raise refuse(self, "usage", "a Usage or None")


def _check_envelope(canister: _Envelope) -> None:
    identifier = canister.id
    if not isinstance(identifier, str) or not identifier:
        name = type(canister).__name__
        raise ModelError(
            f"{name}.id must be a non-empty string, got {_excerpt(identifier)}",
            field="id",
        )
    timestamp = canister.timestamp
    if not isinstance(timestamp, datetime):
        name = type(canister).__name__
        raise ModelError(
            f"{name}.timestamp must be a datetime, got {type(timestamp).__name__}"
        )
    zone = timestamp.tzinfo
    # UTC, by far the most common zone, needs no utcoffset() call.
    if zone is not timezone.utc and (zone is None or timestamp.utcoffset() is None):
        name = type(canister).__name__
        raise ModelError(f"{name}.timestamp must be timezone-aware, got {timestamp}")
    if (
        canister.parent_id is not None
        or canister.trace_id is not None
        or canister.policy is not None
    ):
        text_or_none(canister, "parent_id", "trace_id", "policy")
    metadata = canister.metadata
    if metadata is not None and not isinstance(metadata, Metadata):
        raise refuse(canister, "metadata", "a Metadata or None")
    step = canister.step
    if step is not None and (type(step) is not int or step < 0):
        name = type(canister).__name__
        raise ModelError(
            f"{name}.step must be a non-negative int, got {_excerpt(step)}",
            field="step",
        )


@attrs.frozen(weakref_slot=False)
class _Envelope:
    """The fields every canister carries."""

    role: ClassVar[Role]

    id: str = attrs.field(factory=new_id, kw_only=True)
    """Unique id of the canister."""
    timestamp: datetime = attrs.field(factory=_utc_now, kw_only=True)
    """When the canister was created; timezone-aware."""
    parent_id: str | None = attrs.field(default=None, kw_only=True)
    """Id of the canister this one derives from."""
    trace_id: str | None = attrs.field(default=None, kw_only=True)
    """Id shared by every canister of one trace."""
    policy: str | None = attrs.field(default=None, kw_only=True)
    """Which policy, agent or node created it (``"runtime"`` for executor results)."""
    step: int | None = attrs.field(default=None, kw_only=True)
    """The logical decision cycle it belongs to."""
    metadata: Metadata | None = attrs.field(default=None, kw_only=True)
    """Execution metadata: model, latency, usage, retries, finish reason."""
    extras: Mapping[str, Any] = attrs.field(
        default=EMPTY, converter=freeze, kw_only=True
    )
    """Provider-specific fields without neutral meaning, keyed by provider name."""

    def __attrs_post_init__(self) -> None:
        _check_envelope(self)

    def _repr_html_(self) -> str:
        """The notebook display: :mod:`canisters.html`'s view, bounded in size."""
        return notebook_html(self)


@attrs.frozen(weakref_slot=False)
class User(_Envelope):
    """Input from the person or program the model serves."""

    role: ClassVar[Role] = Role.User

    content: tuple[Content, ...] = attrs.field(default=(), converter=_content)
    """Text and media, interleaved."""


@attrs.frozen(weakref_slot=False)
class Assistant(_Envelope):
    """Output of the model."""

    role: ClassVar[Role] = Role.Assistant

    content: tuple[Content, ...] = attrs.field(default=(), converter=_content)
    """Text, media and reasoning; empty when the turn only invokes tools."""


@attrs.frozen(weakref_slot=False)
class Supervisor(_Envelope):
    """System or developer instructions that steer the model."""

    role: ClassVar[Role] = Role.Supervisor

    content: tuple[Content, ...] = attrs.field(default=(), converter=_content)
    """The instructions."""


@attrs.frozen(weakref_slot=False)
class Document(_Envelope):
    """Reference material given as context."""

    role: ClassVar[Role] = Role.Document

    content: tuple[Content, ...] = attrs.field(default=(), converter=_content)
    """The material."""
    title: str | None = None
    """A title for the material."""
    document_id: str | None = None
    """An application id for the material."""

    def __attrs_post_init__(self) -> None:
        _check_envelope(self)
        if self.title is not None or self.document_id is not None:
            text_or_none(self, "title", "document_id")


@attrs.frozen(weakref_slot=False)
class Invocation(_Envelope):
    """A call of a tool or option, chosen by the model or a policy."""

    role: ClassVar[Role] = Role.Invocation

    name: str
    """The tool or option invoked."""
    arguments: Mapping[str, Any] = attrs.field(default=EMPTY, converter=freeze)
    """The arguments, JSON-compatible."""
    invocation_id: str = attrs.field(factory=new_id, kw_only=True)
    """Pairs the invocation with its result; generated when not given."""

    def __attrs_post_init__(self) -> None:
        _check_envelope(self)
        if not isinstance(self.name, str):
            raise ModelError(
                f"Invocation.name must be a str, got {type(self.name).__name__}"
            )
        if not isinstance(self.invocation_id, str):
            raise ModelError(
                "Invocation.invocation_id must be a str, got "
                f"{type(self.invocation_id).__name__}"
            )


@attrs.frozen(weakref_slot=False)
class Result(_Envelope):
    """The outcome of one invocation: a value as content, or an error."""

    role: ClassVar[Role] = Role.Result

    invocation_id: str
    """The id of the invocation this answers."""
    name: str
    """The tool or option that ran."""
    content: tuple[Content, ...] = attrs.field(default=(), converter=_content)
    """The value, as text or media."""
    error: ErrorInfo | None = None
    """Set when the invocation failed."""

    @property
    def is_error(self) -> bool:
        """Whether the invocation failed."""
        return self.error is not None

    def __attrs_post_init__(self) -> None:
        _check_envelope(self)
        if not isinstance(self.invocation_id, str) or not isinstance(self.name, str):
            raise ModelError("Result.invocation_id and Result.name must be strings")


def child_of(parent: Canister, canister: C) -> C:
    """Return ``canister`` as a child of ``parent``: same trace, ``parent_id`` set.

    The trace is the parent's when it has one, else the canister's own.
    """
    if not isinstance(getattr(parent, "id", None), str):
        raise ModelError(
            f"child_of needs a parent canister, got {type(parent).__name__}"
        )
    if not attrs.has(type(canister)):
        raise ModelError(
            f"child_of needs an attrs canister, got {type(canister).__name__}"
        )
    trace_id = parent.trace_id if parent.trace_id is not None else canister.trace_id
    return attrs.evolve(canister, parent_id=parent.id, trace_id=trace_id)  # type: ignore[misc]
