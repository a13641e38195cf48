"""Registering an application's canister and content classes, and the cattrs
converter built over the hooks (part of :mod:`canisters.serialization`)."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from datetime import datetime
from typing import Any, Final, get_args, get_origin

import attrs
import cattrs
from cattrs.gen import make_dict_structure_fn, make_dict_unstructure_fn

from ._frozen import FrozenDict, freeze
from ._serial_canisters import (
    _BUILTIN_TAGS,
    _canisters_in,
    _content_out,
    _register_canister,
    _register_content,
    structure_canister,
    unstructure_canister,
)
from ._serial_codec import _disable_fast
from ._serial_values import (
    _CANISTER_OUT,
    _CONTENT_OUT,
    Record,
    T,
    _b64,
    _content_in,
    _error_in,
    _error_out,
    _metadata_in,
    _metadata_out,
    _Structure,
    _time_in,
    _time_out,
    _unb64,
    _Unstructure,
    _usage_in,
    _usage_out,
    structure_content,
    unstructure_content,
)
from .canisters import ErrorInfo, Metadata, Usage
from .conversation import Conversation
from .exceptions import SerializationError, _excerpt
from .protocols import (
    AssistantCanister,
    AudioContent,
    Canister,
    Content,
    DocumentCanister,
    FileContent,
    ImageContent,
    InvocationCanister,
    MediaContent,
    ReasoningContent,
    ResultCanister,
    Role,
    SupervisorCanister,
    TextualContent,
    UserCanister,
    VideoContent,
)


def _check_tag(tag: object, cls: type, owners: Mapping[type, tuple[str, Any]]) -> str:
    if not isinstance(tag, str) or not tag:
        raise SerializationError(
            f"a tag must be a non-empty string, got {_excerpt(tag)}"
        )
    for owner, (owned, _hook) in owners.items():
        if owned == tag and owner is not cls:
            raise SerializationError(
                f"tag {_excerpt(tag)} is already registered for {owner.__qualname__}"
            )
    return tag


def _generated_hooks(
    cls: type, tag_key: str, tag: str
) -> tuple[_Unstructure, _Structure]:
    if not attrs.has(cls):
        raise SerializationError(
            f"{cls.__qualname__} is not an attrs class; pass unstructure= and "
            "structure= hooks to register it"
        )
    unstructure_fields = make_dict_unstructure_fn(
        cls, converter, _cattrs_omit_if_default=True
    )
    structure_fields = make_dict_structure_fn(cls, converter)

    def unstructure(obj: Any) -> Record:
        record = {tag_key: tag}
        record.update(unstructure_fields(obj))
        return record

    required = ("id", "timestamp") if tag_key == "role" else ()

    def structure(record: Mapping[str, Any]) -> Any:
        for key in required:
            if key not in record:
                raise SerializationError(f"missing field {_excerpt(key)}", f"$.{key}")
        try:
            return structure_fields(dict(record), cls)
        except SerializationError:
            raise
        except (cattrs.BaseValidationError, KeyError, TypeError, ValueError) as error:
            raise _from_cattrs(error) from error

    return unstructure, structure


def _from_cattrs(error: Exception) -> SerializationError:
    if isinstance(error, cattrs.BaseValidationError):
        for message in cattrs.transform_error(error, format_exception=_describe):
            text, _, path = message.partition(" @ ")
            return SerializationError(text, path or "$")
    if isinstance(error, KeyError):
        return SerializationError(
            f"missing field {_excerpt(error.args[0])}", f"$.{error.args[0]}"
        )
    return SerializationError(str(error))


def _describe(error: BaseException, _kind: Any) -> str:
    if isinstance(error, KeyError):
        return "missing field"
    if isinstance(error, SerializationError):
        return error.reason
    return str(error)


def register_canister(
    cls: type[T],
    tag: str,
    *,
    unstructure: Callable[[T], Mapping[str, Any]] | None = None,
    structure: Callable[[Mapping[str, Any]], T] | None = None,
) -> type[T]:
    """Make ``cls`` serialize as itself, tagged ``"role": tag``.

    ``cls`` is an attrs class with a :class:`~canisters.Role` as its ``role``: a
    subclass of a built-in canister, or any attrs class satisfying a canister
    Protocol. Hooks are generated once, here; pass ``unstructure`` and
    ``structure`` to use your own (for classes that are not attrs classes).
    Returns ``cls``.
    """
    role = getattr(cls, "role", None)
    if not isinstance(role, Role):
        raise SerializationError(
            f"{getattr(cls, '__qualname__', cls)!r} has no Role in its 'role' attribute"
        )
    _register_canister(
        cls, role, tag, *_hooks(cls, "role", tag, _CANISTER_OUT, unstructure, structure)
    )
    return cls


def _hooks(
    cls: type[Any],
    key: str,
    tag: str,
    table: Mapping[type, tuple[str, _Unstructure]],
    unstructure: Callable[[Any], Mapping[str, Any]] | None,
    structure: Callable[[Mapping[str, Any]], Any] | None,
) -> tuple[_Unstructure, _Structure]:
    """The hooks :func:`register_canister` and :func:`register_content` register
    for ``cls`` under ``tag`` (the value of ``key``), after checking the tag
    against ``table``, the registered classes of its kind."""
    _check_tag(tag, cls, table)
    if tag in _BUILTIN_TAGS:
        if table.get(cls, ("",))[0] != tag:
            raise SerializationError(
                f"tag {_excerpt(tag)} is reserved for a built-in class"
            )
        _disable_fast()  # new hooks for a built-in class
    if unstructure is None or structure is None:
        generated_out, generated_in = _generated_hooks(cls, key, tag)
    out: _Unstructure = (
        generated_out
        if unstructure is None
        else (lambda obj: {key: tag, **unstructure(obj)})
    )
    into: _Structure = generated_in if structure is None else structure
    return out, into


def register_content(
    cls: type[T],
    tag: str,
    *,
    unstructure: Callable[[T], Mapping[str, Any]] | None = None,
    structure: Callable[[Mapping[str, Any]], T] | None = None,
) -> type[T]:
    """Make the content class ``cls`` serialize as itself, tagged ``"type": tag``.

    Works like :func:`register_canister`.
    """
    if not isinstance(getattr(cls, "type", None), str):
        raise SerializationError(
            f"{getattr(cls, '__qualname__', cls)!r} has no 'type' attribute"
        )
    _register_content(
        cls, tag, *_hooks(cls, "type", tag, _CONTENT_OUT, unstructure, structure)
    )
    return cls


# --------------------------------------------------------------------------- #
# The converter


_CANISTER_PROTOCOLS: Final[dict[type, Role | None]] = {
    Canister: None,
    UserCanister: Role.User,
    AssistantCanister: Role.Assistant,
    SupervisorCanister: Role.Supervisor,
    DocumentCanister: Role.Document,
    InvocationCanister: Role.Invocation,
    ResultCanister: Role.Result,
}
_CONTENT_PROTOCOLS: Final = (
    Content,
    TextualContent,
    MediaContent,
    ImageContent,
    AudioContent,
    VideoContent,
    FileContent,
    ReasoningContent,
)


def _is_content_tuple(kind: Any) -> bool:
    if get_origin(kind) is not tuple:
        return False
    args = get_args(kind)
    return len(args) == 2 and args[1] is Ellipsis and args[0] in _CONTENT_PROTOCOLS


def make_converter() -> cattrs.Converter:
    """Build a cattrs converter that knows every canister and content class.

    Canister and content Protocols structure through the tagged unions (so a field
    typed ``UserCanister`` works); concrete classes use their registered hooks.
    The module-level :data:`converter` is one such converter; build your own to
    add hooks without touching it.
    """
    made = cattrs.Converter()

    def canister_in(data: Any, kind: Any) -> Canister:
        canister = structure_canister(data)
        expected = _CANISTER_PROTOCOLS.get(kind)
        if expected is not None and canister.role is not expected:
            raise SerializationError(
                f"expected a {expected.value} canister, got {canister.role.value}",
                "$.role",
            )
        return canister

    for protocol in _CANISTER_PROTOCOLS:
        made.register_structure_hook(protocol, canister_in)
        made.register_unstructure_hook(protocol, unstructure_canister)
    for protocol in _CONTENT_PROTOCOLS:
        made.register_structure_hook(
            protocol, lambda data, _kind: structure_content(data)
        )
        made.register_unstructure_hook(protocol, unstructure_content)
    made.register_structure_hook_func(
        _is_content_tuple, lambda data, _kind: _content_in(data)
    )
    made.register_unstructure_hook_func(_is_content_tuple, _content_out)

    def canister_class(kind: Any) -> bool:
        return isinstance(kind, type) and kind in _CANISTER_OUT

    def content_class(kind: Any) -> bool:
        return isinstance(kind, type) and kind in _CONTENT_OUT

    made.register_unstructure_hook_func(canister_class, unstructure_canister)
    made.register_structure_hook_func(
        canister_class,
        lambda data, kind: _structure_exact(data, kind, structure_canister),
    )
    made.register_unstructure_hook_func(
        content_class, lambda obj: _CONTENT_OUT[type(obj)][1](obj)
    )
    made.register_structure_hook_func(
        content_class,
        lambda data, kind: _structure_exact(data, kind, structure_content),
    )
    for scalar in (str, int, float, bool):
        made.register_structure_hook(scalar, _strict(scalar))
    made.register_unstructure_hook(datetime, _time_out)
    made.register_structure_hook(datetime, lambda data, _kind: _time_in(data))
    made.register_unstructure_hook(bytes, _b64)
    made.register_structure_hook(bytes, lambda data, _kind: _unb64(data, "data"))
    made.register_unstructure_hook(Metadata, _metadata_out)
    made.register_structure_hook(Metadata, lambda data, _kind: _metadata_in(data))
    made.register_unstructure_hook(ErrorInfo, _error_out)
    made.register_structure_hook(ErrorInfo, lambda data, _kind: _error_in(data))
    made.register_unstructure_hook(Usage, _usage_out)
    made.register_structure_hook(Usage, lambda data, _kind: _usage_in(data))
    made.register_unstructure_hook(FrozenDict, lambda value: value)
    made.register_unstructure_hook(
        Conversation, lambda value: [unstructure_canister(c) for c in value]
    )
    made.register_structure_hook(
        Conversation, lambda data, _kind: Conversation(_canisters_in(data, "canisters"))
    )

    def is_mapping(kind: Any) -> bool:
        return get_origin(kind) is Mapping or kind is Mapping

    made.register_structure_hook_func(
        is_mapping, lambda data, _kind: _frozen_mapping(data)
    )
    return made


def _strict(kind: type[T]) -> Callable[[Any, Any], T]:
    """Structure a JSON scalar without coercion (cattrs would turn 5 into "5")."""
    allowed: tuple[type, ...] = (int, float) if kind is float else (kind,)

    def structure(data: Any, _kind: Any) -> T:
        if not isinstance(data, allowed) or (
            isinstance(data, bool) and kind is not bool
        ):
            raise SerializationError(
                f"expected {kind.__name__}, got {type(data).__name__}"
            )
        return kind(data)  # type: ignore[call-arg]

    return structure


def _frozen_mapping(data: object) -> FrozenDict[Any, Any]:
    if not isinstance(data, Mapping):
        raise SerializationError(f"expected an object, got {type(data).__name__}")
    return freeze(data)


def _structure_exact(data: Any, kind: type, structure: Callable[[Any], Any]) -> Any:
    value = structure(data)
    if type(value) is not kind:
        raise SerializationError(
            f"expected {kind.__qualname__}, got {type(value).__qualname__}"
        )
    return value


converter: Final[cattrs.Converter] = make_converter()
"""The library's converter (``converter.unstructure(x)``, ``.structure(d, T)``)."""
