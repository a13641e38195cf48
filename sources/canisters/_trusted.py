"""Trusted constructors: canisters and parts built from values already checked.

Parsers (the serialization hooks, the msgspec fast path, the provider parsers)
check every value themselves; building through attrs' ``__init__`` would run the
converters and ``__attrs_post_init__`` checks a second time. The constructors
made here set the slots directly. Internal: nothing here is public API.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

import attrs

from .canisters import _IDS, new_id

T = TypeVar("T")


_SHADOWS: dict[type, type | None] = {}


def _shadow(cls: type) -> type | None:
    """Return a subclass of ``cls`` whose instances take plain attribute stores.

    It adds no slot, so it has the layout of ``cls`` and its instances can become
    ``cls`` instances by ``__class__`` assignment once every slot is set. It
    restores the plain ``__setattr__`` that attrs' frozen classes refuse, and
    the plain ``__init__``. A store to a slot is then a single specialised
    bytecode, where ``object.__setattr__(obj, name, value)`` is a call looking
    the name up: a trusted constructor built on it runs three to five times
    faster. ``None`` when this Python refuses the ``__class__`` assignment.
    One per class, made on first use.
    """
    if cls in _SHADOWS:
        return _SHADOWS[cls]
    shadow: type | None = type(
        f"_Trusted{cls.__name__}",
        (cls,),
        {
            "__slots__": (),
            "__module__": __name__,
            "__init__": object.__init__,
            "__setattr__": object.__setattr__,
            "__delattr__": object.__delattr__,
        },
    )
    probe = shadow()  # type: ignore[misc]
    try:
        probe.__class__ = cls
    except TypeError:  # pragma: no cover - CPython and PyPy accept it
        shadow = None
    _SHADOWS[cls] = shadow
    return shadow


def _trusted(cls: type[T], **fixed: Any) -> Callable[..., T]:
    """Return a constructor of ``cls`` taking every field positionally, in order,
    but those given in ``fixed``, which it sets to the value given there.

    It sets the slots directly, as attrs' own ``__init__`` does, but without
    converters or ``__attrs_post_init__``: its callers check and normalize
    every value first (tuples, read-only mappings, the envelope rules), so
    running them again would only double the cost of parsing. Like attrs, it is
    generated once; a field added to ``cls`` makes the callers that do not pass
    it fail loudly. The object is built as a :func:`_shadow` of
    ``cls`` and becomes a ``cls`` at the end.
    """
    names = [field.name for field in attrs.fields(cls)]  # type: ignore[arg-type]
    unknown = set(fixed) - set(names)
    assert not unknown, (cls, unknown)
    values = [f"fixed[{name!r}]" if name in fixed else name for name in names]
    shadow = _shadow(cls)
    lines = [f"def build({', '.join(name for name in names if name not in fixed)}):"]
    if shadow is not None:
        lines.append("    obj = shadow()")
        lines += [
            f"    obj.{name} = {value}"
            for name, value in zip(names, values, strict=True)
        ]
        lines.append("    obj.__class__ = cls")
    else:  # pragma: no cover - see _shadow
        lines.append("    obj = new(cls)")
        lines += [
            f"    setattr(obj, {name!r}, {value})"
            for name, value in zip(names, values, strict=True)
        ]
    lines.append("    return obj")
    namespace: dict[str, Any] = {
        "cls": cls,
        "shadow": shadow,
        "new": object.__new__,
        "setattr": object.__setattr__,
        "fixed": fixed,
    }
    exec("\n".join(lines), namespace)
    build: Callable[..., T] = namespace["build"]
    return build


def _fresh(cls: type[T]) -> Callable[..., T]:
    """Return a constructor of a new canister of ``cls`` taking its timestamp, its
    extras (a frozen mapping) and then its own fields positionally, in order: the
    id is made fresh (as :func:`canisters.new_id` makes it), ``parent_id``,
    ``trace_id``, ``policy``, ``step`` and ``metadata`` are ``None``. Trusted, as
    :func:`_trusted`: the caller has checked every value.
    """
    names = [field.name for field in attrs.fields(cls)]  # type: ignore[arg-type]
    shadow = _shadow(cls)
    # With a shadow, new_id is inline: an id from the batch, or new_id for a
    # new batch (``made``).
    fixed = {"id": "new_id()" if shadow is None else "made"}
    fixed.update(parent_id="None", trace_id="None", policy="None")
    fixed.update(step="None", metadata="None")
    taken = [name for name in names if name not in fixed]
    assert taken[:2] == ["timestamp", "extras"], cls
    values = [fixed.get(name, name) for name in names]
    source = [f"def fresh({', '.join(taken)}):"]
    if shadow is not None:
        source += ["    try:", "        made = pop()", "    except IndexError:"]
        source += ["        made = new_id()", "    obj = shadow()"]
        source += [
            f"    obj.{name} = {value}"
            for name, value in zip(names, values, strict=True)
        ]
        source += ["    obj.__class__ = cls", "    return obj"]
    else:  # pragma: no cover - see _shadow
        source.append(f"    return build({', '.join(values)})")
    namespace: dict[str, Any] = {"cls": cls, "shadow": shadow, "new_id": new_id}
    namespace["pop"] = _IDS.pop
    namespace["build"] = _trusted(cls)
    exec("\n".join(source), namespace)
    fresh: Callable[..., T] = namespace["fresh"]
    return fresh
