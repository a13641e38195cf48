"""The net under every parser and the shape checks: a stray exception becomes
:class:`~canisters.MalformedPayload` at the path of what is wrong, a body is held
to the depth bound; and a provider's own entry in ``extras``."""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable, Mapping, Sequence
from typing import Any, NoReturn, TypeVar

import attrs
import orjson

from .._frozen import EMPTY, FrozenDict
from ..canisters import (
    Metadata,
    Usage,
)
from ..content import (
    _URL_SCHEME,
)
from ..exceptions import (
    CanistersError,
    MalformedPayload,
    ModelError,
    ProviderError,
    _excerpt,
)
from ..protocols import Canister, Content
from ..serialization import (
    _TOO_DEEP,
    MAX_DEPTH,
    _deep_steps,
    _gc_disable,
    _gc_enable,
    _gc_enabled,
    _nests_deeper,
    _paused,
)
from ._media import b64encode

_F = TypeVar("_F", bound=Callable[..., Any])
_T = TypeVar("_T")


# Errors and input shapes -------------------------------------------------------------


STRAY = (
    KeyError,
    TypeError,
    ValueError,
    AttributeError,
    IndexError,
    OverflowError,
    RecursionError,
)
"""The exceptions :func:`guarded` turns into
:class:`~canisters.MalformedPayload`: what code
reading malformed JSON raises when a shape check is missing."""


def guarded(function: _F) -> _F:
    """Turn any stray exception of a parser into :class:`~canisters.MalformedPayload`.

    Parsers check the shapes they rely on and name the path; this is the net under
    them, so that arbitrary input never escapes as ``KeyError`` or ``TypeError``.
    The body (the last positional argument, or ``body=``) is first held to
    :data:`BODY_DEPTH`; see :func:`guarded_reading` for a parser that reads only
    some of its keys.
    """
    return _guarded(function, None)


def guarded_reading(*keys: str) -> Callable[[_F], _F]:
    """:func:`guarded`, for a parser that reads only ``keys`` of a mapping body,
    as a request parser reads the messages but not the tools, schemas and
    settings beside them: only the values of ``keys`` are held to
    :data:`BODY_DEPTH`, at their paths (``$.messages``), so that a gateway does
    not walk a request's tool definitions on every call. A body that is not a
    dict is held whole, as :func:`guarded` holds it.
    """

    def decorate(function: _F) -> _F:
        return _guarded(function, keys)

    return decorate


def guarded_keeping(
    *keys: str,
) -> Callable[[Callable[[Any, list[Any]], _T]], Callable[[Any], _T]]:
    """:func:`guarded_reading`, for a request parser ``function(body, kept)``
    that tells what it keeps unread instead of having the whole of ``keys``
    held to the bound before it reads them.

    The parser appends to ``kept`` every nested value (dict or list) it keeps
    without reading it through (tool arguments, a block's other keys, a
    message it reads the general way); a parser that reads a whole body into
    typed parts then has nothing written out to be held, where
    :func:`guarded_reading` writes the body out first, a sixth of reading a
    short request. What was kept is held to the bound after the parse; when it
    nests too deeply, or when the parse fails (a body too deep is told so
    before anything else), ``keys`` are held as :func:`guarded_reading` holds
    them, so the refusal and its path are the same.
    """

    def decorate(function: Callable[[Any, list[Any]], _T]) -> Callable[[Any], _T]:
        dumps = orjson.dumps
        held = _holder(keys)

        def wrapper(body: Any) -> _T:
            kept: list[Any] = []
            # The collector is paused as serialization._paused pauses it,
            # inline: a call more would cost a short body a twentieth.
            running = _gc_enabled()
            if running:
                _gc_disable()
            try:
                result = function(body, kept)
            except Exception as error:
                held(body)
                _reraise(error)
            finally:
                if running:
                    _gc_enable()
            if kept:
                try:
                    dumps(kept)  # within the bound when orjson writes it
                except Exception:  # orjson.JSONEncodeError, a TypeError
                    held(body)
            return result

        functools.update_wrapper(wrapper, function)
        del wrapper.__wrapped__  # type: ignore[attr-defined]
        # What the parser is called with: the body alone.
        signature = inspect.signature(function)
        first = next(iter(signature.parameters.values()))
        wrapper.__signature__ = signature.replace(parameters=[first])  # type: ignore[attr-defined]
        return wrapper

    return decorate


def _holder(keys: tuple[str, ...] | None) -> Callable[[object], None]:
    """What :func:`guarded` (``keys`` ``None``) and :func:`guarded_reading`
    hold a body to: raise :class:`~canisters.MalformedPayload` at the path of a value
    nesting more than :data:`BODY_DEPTH` levels."""
    dumps = orjson.dumps
    limit = BODY_DEPTH - 1  # a key's value sits one level into the body

    def held(body: object) -> None:
        # check_depth's first step (see _nests_deeper), inline: what orjson
        # writes nests within the bound; anything else is walked.
        if keys is not None and type(body) is dict:
            for key in keys:
                value = body.get(key)
                if type(value) is dict or type(value) is list:
                    try:
                        dumps(value)
                    except Exception:  # orjson.JSONEncodeError, a TypeError
                        check_depth(value, limit, f"$.{key}")
        elif type(body) is dict or type(body) is list:
            try:
                dumps(body)
            except Exception:  # orjson.JSONEncodeError, a TypeError
                check_depth(body)

    return held


def _guarded(function: _F, keys: tuple[str, ...] | None) -> _F:
    held = _holder(keys)

    # A parser of a body alone (or a method of one) gets a wrapper of the same
    # parameters: packing and unpacking *args and **kwargs cost as much as the
    # rest of the net, on every body a gateway reads.
    shape = _parameters(function)
    if shape == ("body",):

        def wrapper(body: Any) -> Any:
            held(body)
            running = _gc_enabled()
            if running:
                _gc_disable()
            try:
                return function(body)
            except Exception as error:
                _reraise(error)
            finally:
                if running:
                    _gc_enable()

    elif shape == ("self", "body"):

        def wrapper(self: Any, body: Any) -> Any:  # type: ignore[misc]
            held(body)
            running = _gc_enabled()
            if running:
                _gc_disable()
            try:
                return function(self, body)
            except Exception as error:
                _reraise(error)
            finally:
                if running:
                    _gc_enable()

    else:

        def wrapper(*args: Any, **kwargs: Any) -> Any:  # type: ignore[misc]
            held(kwargs["body"] if "body" in kwargs else args[-1] if args else None)
            try:
                return _paused(functools.partial(function, *args, **kwargs))
            except Exception as error:
                _reraise(error)

    return functools.wraps(function)(wrapper)  # type: ignore[return-value]


def _parameters(function: Callable[..., Any]) -> tuple[str, ...] | None:
    """The names of ``function``'s parameters when they are all plain ones
    (positional or keyword, without defaults); ``None`` otherwise."""
    code = getattr(function, "__code__", None)
    if (
        code is None
        or getattr(function, "__defaults__", None)
        or getattr(function, "__kwdefaults__", None)
        or code.co_kwonlyargcount
        or code.co_posonlyargcount
        or code.co_flags & (inspect.CO_VARARGS | inspect.CO_VARKEYWORDS)
    ):
        return None
    names = tuple(code.co_varnames[: code.co_argcount])
    # A bound method (a dialect's parser, an object's) is called without self.
    return names[1:] if inspect.ismethod(function) else names


def _reraise(error: Exception) -> NoReturn:
    """Raise what a parser raises for ``error``: a stray exception of code
    reading a malformed body, and the model's refusal of a value it read, become
    :class:`~canisters.MalformedPayload` (caused by ``error``); anything else
    (a provider's
    error among them) is raised as it is."""
    if isinstance(error, ProviderError):
        raise error
    if isinstance(error, (ModelError, CanistersError)):
        raise MalformedPayload(str(error)) from error
    if isinstance(error, STRAY):
        raise MalformedPayload(f"{type(error).__name__}: {error}") from error
    raise error


BODY_DEPTH = MAX_DEPTH - 8
"""The deepest nesting of arrays and objects a provider body may have: the
values it holds then sit within :data:`~canisters.serialization.MAX_DEPTH` in the
conversation document, whichever field of the body they come from."""

ARGUMENTS_DEPTH = MAX_DEPTH - 3
"""The deepest nesting of a tool call's arguments as a JSON string (their object
sits three levels down in the conversation document)."""

_PATH_STEPS = 12  # a path cut to its first steps: an ancestor of the deep value


def check_depth(body: object, limit: int = BODY_DEPTH, path: str = "$") -> None:
    """Raise :class:`~canisters.MalformedPayload` if ``body`` (dicts and lists)
    nests more
    than ``limit`` levels, at the path of the value nesting too deeply (its
    first steps), on every Python version and without recursion."""
    if type(body) is not dict and type(body) is not list:
        return
    if not _nests_deeper(body, limit):
        return
    steps = _deep_steps(body, limit)[:_PATH_STEPS]
    where = path + "".join(
        f"[{step}]" if isinstance(step, int) else f".{step}" for step in steps
    )
    raise MalformedPayload(_TOO_DEEP, where)


def as_mapping(
    body: object, path: str = "$", *, received: bool = False
) -> Mapping[str, Any]:
    """Return ``body`` as a JSON mapping, converting provider SDK objects.

    Pydantic models (the OpenAI and Anthropic SDKs' responses and messages) are
    dumped with ``model_dump(mode="json", exclude_unset=True)`` so that only the
    fields the provider sent come back; ``to_dict()`` is tried next.
    ``received`` says the object holds what a provider sent (a response, a
    stream chunk): google-genai's bytes then read in the standard base64 the API
    sent, not the URL-safe form its models dump (and its client sends).
    """
    if type(body) is dict or isinstance(body, Mapping):
        return body
    dump = getattr(body, "model_dump", None)
    if callable(dump):
        try:
            # warnings=False: the OpenAI SDK's ParsedResponse (client.responses
            # .parse() and .stream()) dumps fine but warns about its own types.
            dumped = dump(
                mode="json", exclude_unset=True, by_alias=True, warnings=False
            )
        except TypeError:
            dumped = dump()
        if isinstance(dumped, Mapping):
            if received and type(body).__module__.startswith("google.genai"):
                raw = dump(mode="python", exclude_unset=True, by_alias=True)
                return _standard_base64(dumped, raw)  # type: ignore[no-any-return]
            return dumped
    to_dict = getattr(body, "to_dict", None)
    if callable(to_dict):
        dumped = to_dict()
        if isinstance(dumped, Mapping):
            return dumped
    raise MalformedPayload(f"expected an object, got {type(body).__name__}", path)


def _standard_base64(dumped: Any, raw: Any) -> Any:
    """``dumped`` with every value that is bytes in ``raw`` (the same model dumped
    without converting) written in standard base64.

    google-genai's models dump bytes (inline data, thought signatures) in
    URL-safe base64; the REST API sends and takes the standard alphabet, so an
    SDK object reads as the body the API sent.
    """
    if isinstance(raw, bytes):
        return b64encode(raw)
    if isinstance(raw, dict) and isinstance(dumped, dict):
        return {
            key: _standard_base64(value, raw.get(key)) for key, value in dumped.items()
        }
    if isinstance(raw, list) and isinstance(dumped, list) and len(raw) == len(dumped):
        return [_standard_base64(d, r) for d, r in zip(dumped, raw, strict=True)]
    return dumped


def expect_mapping(value: object, path: str) -> Mapping[str, Any]:
    """Return ``value`` if it is a JSON object (SDK objects converted), else raise."""
    # A dict, the common case, without the ABC check (several times slower).
    if type(value) is dict or isinstance(value, Mapping):
        return value
    if hasattr(value, "model_dump") or hasattr(value, "to_dict"):
        return as_mapping(value, path)
    raise MalformedPayload(f"expected an object, got {_kind(value)}", path)


def expect_list(value: object, path: str) -> Sequence[Any]:
    """Return ``value`` if it is a JSON array, else raise."""
    if isinstance(value, (list, tuple)):
        return value
    raise MalformedPayload(f"expected an array, got {_kind(value)}", path)


def expect_str(value: object, path: str) -> str:
    """Return ``value`` if it is a string, else raise."""
    if isinstance(value, str):
        return value
    raise MalformedPayload(f"expected a string, got {_kind(value)}", path)


def expect_optional_str(value: object, path: str) -> str | None:
    """Return ``value`` if it is a string or ``None``, else raise."""
    if value is None or isinstance(value, str):
        return value
    raise MalformedPayload(f"expected a string or null, got {_kind(value)}", path)


def expect_url(value: object, path: str) -> str:
    """Return ``value`` if it is an absolute URL (``https:``, ``data:``...), as media
    parts take them, else raise at ``path``."""
    text = expect_str(value, path)
    if _URL_SCHEME.match(text) is None:
        raise MalformedPayload(f"expected an absolute URL, got {_excerpt(text)}", path)
    return text


def built(factory: Callable[..., _T], path: str, /, **fields: Any) -> _T:
    """Return ``factory(**fields)``; a value the model refuses (:class:`ModelError`)
    raises :class:`~canisters.MalformedPayload` at ``path``, the item it was read
    from."""
    try:
        return factory(**fields)
    except ModelError as error:
        raise MalformedPayload(str(error), path) from None


def _kind(value: object) -> str:
    if value is None:
        return "null"
    return {
        bool: "a boolean",
        int: "a number",
        float: "a number",
        str: "a string",
        list: "an array",
        dict: "an object",
    }.get(type(value), type(value).__name__)


def rest(source: Mapping[str, Any], known: frozenset[str]) -> dict[str, Any]:
    """Return the keys of ``source`` outside ``known``: what rides in ``extras``."""
    if known.issuperset(source):
        return {}
    kept = {}
    for key, value in source.items():  # a loop: a comprehension is a call
        if key not in known:
            kept[key] = value
    return kept


def mine(item: Canister | Content, provider: str) -> Mapping[str, Any]:
    """Return the ``extras`` a canister or part keeps for ``provider`` (or empty)."""
    extras = item.extras
    if not extras:
        return extras
    value = extras.get(provider)
    return value if isinstance(value, Mapping) else {}


def marker(provider: str) -> Callable[..., FrozenDict[str, Any]]:
    """A function of marks (keywords) giving the extras of a new part or
    canister: ``provider``'s entry made of the truthy ones, frozen as a canister
    keeps its extras, or the shared empty extras when none is (most often)."""

    def extras(**marks: Any) -> FrozenDict[str, Any]:
        kept = {}
        for key, value in marks.items():  # a loop: a comprehension is a call
            if value:
                kept[key] = value
        return FrozenDict({provider: kept}) if kept else EMPTY

    return extras


def holder(provider: str) -> Callable[[Mapping[str, Any]], FrozenDict[str, Any]]:
    """A function of a mapping giving the extras of a new part or canister that
    hold it whole (a copy) as ``provider``'s entry, falsy values too (they record
    what a body left out), or the shared empty extras when it is empty."""

    def extras(entry: Mapping[str, Any]) -> FrozenDict[str, Any]:
        return FrozenDict({provider: dict(entry)}) if entry else EMPTY

    return extras


def with_marks(
    extras: Mapping[str, Any], provider: str, marks: Mapping[str, Any]
) -> dict[str, Any]:
    """``extras`` with ``provider``'s entry made of the truthy ``marks`` (and
    without it when none is), for a parser marking what it read."""
    kept = {key: value for key, value in marks.items() if value}
    changed = dict(extras)
    if kept:
        changed[provider] = kept
    else:
        changed.pop(provider, None)
    return changed


def response_metadata(
    model: object, usage: Usage | None, finish: str | None, response_id: object
) -> Metadata:
    """Return a reply's metadata from the fields a response body reports.

    ``model`` and ``response_id`` count only when they are strings.
    """
    return Metadata(
        model=model if isinstance(model, str) else None,
        usage=usage,
        finish_reason=finish,
        custom={"response_id": response_id} if isinstance(response_id, str) else {},
    )


def with_response(
    canister: Canister, provider: str, metadata: Metadata, envelope: dict[str, Any]
) -> Canister:
    """Return the first canister of a reply carrying the response's metadata.

    The rest of the response body, ``envelope``, rides in the canister's extras for
    ``provider`` under ``"response"``, so that rendering the reply gives it back.
    """
    return attrs.evolve(  # type: ignore[misc]
        canister,
        metadata=metadata,
        extras={
            **canister.extras,
            provider: {**mine(canister, provider), "response": envelope},
        },
    )
