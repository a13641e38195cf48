"""A whole request whose settings are read when they are first needed.

``parse_full_request`` reads the conversation at once and keeps the body's
other keys as they came. Its :class:`~canisters.Request` reads them (the
model, the tools, the sampling settings...) the first time any of its fields
but ``conversation`` is asked for, or when it is rendered to another format.
Rendered back to its own format before that, it writes those keys as they
came, beside the conversation rendered again: a gateway that reads a request
to look at (or change) its messages and sends it on to the same API pays for
the settings no more than a copy of the body's top level.

The request is a :class:`~canisters.Request` in every way (its type is a
private subclass): it compares, hashes, prints, serializes, pickles and
evolves as one. Its unread fields are its slots left empty: reading one raises
:class:`AttributeError` inside Python's lookup, which calls
:meth:`_LazyRequest.__getattr__`, which reads the settings, fills every slot
and answers; after that, fields read as any request's do, with no cost added.
Malformed settings raise :class:`~canisters.providers.MalformedPayload` there,
on that first read.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Mapping
from typing import Any, Final

import attrs

from ..conversation import Conversation
from ..requests import Request

__all__ = ["lazy_request", "pending_body"]

_FIELDS: Final = tuple(field.name for field in attrs.fields(Request))
_SETTINGS: Final = tuple(name for name in _FIELDS if name != "conversation")
_SET: Final = object.__setattr__
_SLOT: Final = {name: getattr(Request, name) for name in _FIELDS}
"""The slot descriptor of each field (on :class:`Request`)."""

Reader = Callable[[Mapping[str, Any]], Request]
"""Reads the settings of a body (a request without its conversation)."""
Marker = Callable[[Mapping[str, Any], str], Mapping[str, Any]]


class _LazyRequest(Request):
    """A :class:`Request` read from a body, its settings not read yet (see the
    module's description)."""

    __slots__ = ("_pending",)

    def __getattr__(self, name: str) -> Any:
        # Only an empty slot gets here: a field not read yet.
        if name not in _SLOT:
            raise AttributeError(name)
        _load(self)
        return _SLOT[name].__get__(self, Request)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Request):
            return NotImplemented
        return all(getattr(self, n) == getattr(other, n) for n in _FIELDS)

    def __ne__(self, other: object) -> bool:
        equal = self.__eq__(other)
        return equal if equal is NotImplemented else not equal

    __hash__ = Request.__hash__

    def __reduce__(self) -> tuple[Any, ...]:
        return (_plain, tuple(getattr(self, name) for name in _FIELDS))


_LazyRequest.__qualname__ = _LazyRequest.__name__ = "Request"  # its repr


def _plain(*values: Any) -> Request:
    return Request(**dict(zip(_FIELDS, values, strict=True)))


def _load(request: _LazyRequest) -> None:
    """Read the pending settings of ``request`` into its slots (once)."""
    try:
        pending = _LazyRequest._pending.__get__(request)  # type: ignore[attr-defined]
    except AttributeError:
        return  # read already (another thread was first)
    read, body, provider, mark = pending
    settings = read(body)
    for name in _SETTINGS:
        _SET(request, name, _SLOT[name].__get__(settings, Request))
    _SET(request, "extras", mark(settings.extras, provider))
    # (another thread that read them too may have been first to say so)
    with contextlib.suppress(AttributeError):
        _LazyRequest._pending.__delete__(request)  # type: ignore[attr-defined]


def lazy_request(
    conversation: Conversation,
    body: Mapping[str, Any],
    provider: str,
    read: Reader,
    mark: Marker,
) -> Request:
    """A request of ``conversation`` whose settings ``read`` reads from
    ``body`` (a mapping read from ``provider``'s format) when first needed,
    their extras then given ``provider``'s entry by ``mark``; ``body`` is
    copied (its top level)."""
    request = object.__new__(_LazyRequest)
    _SET(request, "conversation", conversation)
    _SET(request, "_pending", (read, dict(body), provider, mark))
    return request


def pending_body(request: Request, provider: str) -> dict[str, Any] | None:
    """The body ``request`` was read from, where it was read from
    ``provider``'s format and its settings were not read since; else
    ``None``."""
    if type(request) is not _LazyRequest:
        return None
    try:
        _, body, source, _ = _LazyRequest._pending.__get__(request)  # type: ignore[attr-defined]
    except AttributeError:
        return None
    return body if source == provider else None
