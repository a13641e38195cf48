"""JSON text in and out: orjson with the standard library's fallbacks, the
depth and non-finite checks, and the msgspec fast path (part of
:mod:`canisters.serialization`)."""

from __future__ import annotations

import gc
import json
import re
from collections.abc import Callable
from datetime import datetime
from typing import TYPE_CHECKING, Any, Final

from . import _base64, _formats
from ._formats import MAX_DEPTH
from ._frozen import FrozenDict
from ._serial_values import T
from .exceptions import SerializationError

if TYPE_CHECKING:
    from ._wire import _Fast

# --------------------------------------------------------------------------- #
# The fast path (``canisters._wire``, loaded with msgspec on the first read)


def _fast() -> _Fast | None:
    """The fast path's decoders, or ``None`` where it cannot serve."""
    if not _WIRE:
        # Loaded on the first read, then kept: an import statement in a
        # function resolves the package again on every call (half a
        # microsecond, a tenth of reading a one-message document).
        from . import _wire

        _WIRE.append(_wire)
    return _WIRE[0].fast()  # type: ignore[no-any-return]


_WIRE: list[Any] = []


def _disable_fast() -> None:
    """Send every document through the hooks: a built-in tag's hook was replaced."""
    from . import _wire

    _wire.disable()


def _read_fast(text: object, reader: str) -> Any:
    """What the fast path's ``reader`` (``"from_json"`` or ``"from_jsonl"``) reads
    from ``text``; ``None`` when it does not serve or refuses the text, which the
    hooks then read again, for the located error."""
    fast = _fast()
    if fast is None or not (type(text) is bytes or type(text) is str):
        return None
    # The collector is paused as _paused pauses it, inline (a call fewer).
    running = _gc_enabled()
    if running:
        _gc_disable()
    try:
        return getattr(fast, reader)(text)
    except Exception:
        return None
    finally:
        if running:
            _gc_enable()


def _paused(function: Callable[..., T], *arguments: Any) -> T:
    """``function(*arguments)``, with the cyclic garbage collector paused.

    Reading and writing a document make thousands of containers (canisters and
    parts, or the records written), which hold no cycles and set off
    collection after collection, each walking what was just made: a sixth of
    reading a conversation of short messages, a tenth of writing one as JSONL.
    Rendering and reading provider bodies are paused the same way (see
    :mod:`canisters.providers`): a tenth to a sixth of rendering an agent run to
    OpenAI Chat and of reading OpenAI Chat and Anthropic requests. Collection
    goes on afterwards, as it would have. A collector paused already (by the
    application) is left so.
    """
    running = _gc_enabled()
    if running:
        _gc_disable()
    try:
        return function(*arguments)
    finally:
        if running:
            _gc_enable()


_gc_enabled: Final = gc.isenabled
_gc_disable: Final = gc.disable
_gc_enable: Final = gc.enable


# --------------------------------------------------------------------------- #
# JSON and JSONL


# orjson holds integers to 64 bits: it refuses larger ones when writing and
# reads them as floats. Such documents go through the standard library instead,
# which keeps integers exact. A number of 19 digits or more may be such an
# integer; it starts the document or follows one of ``:,[-`` or whitespace, which
# a run of digits inside a string (a hex id) rarely does. The search maps digits
# to "0", those characters to ":" and every other byte to a space: two passes in
# C, an order of magnitude faster than a regular expression.
_NUMBER_SHAPES: Final = bytes(
    48 if 48 <= code <= 57 else 58 if code in b":,[- \t\r\n" else 32
    for code in range(256)
)
_LONG_RUN: Final = b"0" * 19
_LONG_NUMBER: Final = b":" + _LONG_RUN


def _may_hold_long_integer(raw: bytes) -> bool:
    shapes = raw.translate(_NUMBER_SHAPES)
    return _LONG_NUMBER in shapes or shapes.startswith(_LONG_RUN)


# What orjson refuses to write: integers beyond 64 bits, strings holding lone
# surrogates, nesting beyond 254 levels. The standard library writes them.
_ORJSON_REFUSALS: Final = ("64-bit", "surrogates", "Recursion limit")


def _encode_json(
    value: Any,
    limit: int = MAX_DEPTH,
    floats: list[Any] | None = None,
    default: Callable[[Any], Any] | None = None,
) -> tuple[bytes, bool]:
    """Return the JSON bytes of ``value``, and whether the standard library wrote
    them; a value nesting more than ``limit`` levels (which the readers would
    refuse) raises :class:`SerializationError`. ``floats``: every value within
    ``value`` that may be or hold a float, where the search for NaN and the
    infinities then looks instead of the whole output (see
    :data:`_COLLECTING`). ``default``: orjson's (a
    :class:`~canisters._base64.Splicer`, for the media of to_json and
    to_jsonl); the standard library writes such media's base64 in place.

    orjson writes almost everything; the standard library takes over where
    orjson cannot be exact (see "Inputs" on the reliability page): integers
    beyond 64 bits, lone surrogates (written as ``\\ud800`` escapes), NaN and
    the infinities (written as ``NaN``, ``Infinity`` and ``-Infinity``, which
    orjson would write as ``null``: an output holding ``null`` is searched for
    them), and nesting beyond orjson's 254 levels.
    """
    import orjson  # on first use: it takes a fair share of `import canisters`

    try:
        encoded = orjson.dumps(value, default=default)
    except TypeError as error:
        message = str(error)
        if not any(refusal in message for refusal in _ORJSON_REFUSALS):
            raise SerializationError(
                f"value is not JSON-serializable: {message}"
            ) from error
    else:
        if floats is None:
            exact = b"null" not in encoded or not _holds_non_finite(value, len(encoded))
        else:
            exact = not _collected_non_finite(floats)
        if exact:
            return encoded, False
        del encoded
    # orjson writes 254 levels at most, fewer than any bound: only here can the
    # value be too deep.
    _check_depth(value, limit)
    try:
        text = json.dumps(
            value, ensure_ascii=False, separators=(",", ":"), default=_json_default
        )
    except RecursionError as error:
        raise SerializationError(_TOO_DEEP) from error
    except (TypeError, ValueError) as error:
        raise SerializationError(f"value is not JSON-serializable: {error}") from error
    if not text.isascii() and _SPLIT_PAIR.search(text) is not None:
        raise SerializationError(
            "a string holds a surrogate pair as two code points, which JSON "
            "cannot tell from the character the pair encodes"
        )
    # A lone surrogate can only be inside a string: its \\uXXXX escape is what
    # backslashreplace writes, and the standard library reads it back.
    return text.encode("utf-8", "backslashreplace"), True


_RECORD_PATH: Final = re.compile(r"\$\.canisters\[(\d+)\](.*)")
_SPLIT_PAIR: Final = re.compile("[\ud800-\udbff][\udc00-\udfff]")


_NESTED: Final = _formats.NESTED
_nests_deeper: Final = _formats.nests_deeper
_utf8: Final = _formats.utf8
_JSONL_HEADER: Final = _formats.JSONL_HEADER

_TOO_DEEP: Final = (
    f"nested too deeply (more than {MAX_DEPTH} levels of arrays and objects)"
)


def _deep_steps(value: Any, limit: int) -> tuple[Any, ...]:
    """The keys and indexes leading to a container nested more than ``limit``
    levels deep in ``value`` (``()`` when there is none); iterative."""
    stack: list[tuple[Any, tuple[Any, ...]]] = [(value, ())]
    while stack:
        container, steps = stack.pop()
        if not isinstance(container, _NESTED):
            continue
        if len(steps) >= limit:
            return steps
        items = (
            container.items() if isinstance(container, dict) else enumerate(container)
        )
        stack.extend((item, (*steps, key)) for key, item in items)
    return ()


def _may_nest_deeper(text: str | bytes, limit: int) -> bool:
    """Whether JSON ``text`` may nest more than ``limit`` levels: it cannot when
    it is too short to hold that many brackets."""
    return len(text) > 2 * limit


def _check_depth(value: Any, limit: int, where: str | None = None) -> None:
    """Raise :class:`SerializationError` if ``value`` nests more than ``limit``
    levels: as JSON read at ``where``, else as a value to write."""
    if _nests_deeper(value, limit):
        if where is None:
            raise SerializationError(_TOO_DEEP)
        raise SerializationError(f"not JSON: {_TOO_DEEP}", where)


def _holds_non_finite(value: Any, size: int) -> bool:
    """Whether a NaN or an infinity is anywhere in ``value``, whose JSON takes
    ``size`` bytes.

    MessagePack keeps every float as its 8 IEEE bytes after the marker ``0xcb``,
    where a non-finite one starts with ``7ff`` or ``fff``: msgspec writes it
    several times faster than Python walks the values, so a document without
    such bytes is settled at once. Large documents (media) and those holding
    the bytes are walked, without recursion.
    """
    if size < _PACK_AT_MOST:
        try:
            import msgspec

            if not _packed_non_finite(msgspec.msgpack.encode(value)):
                return False
        except Exception:  # a type MessagePack lacks: walk instead
            pass
    stack = [value]
    pop, extend = stack.pop, stack.extend
    while stack:
        item = pop()
        kind = type(item)
        if kind is str:
            continue
        if kind is dict or kind is FrozenDict:
            extend(item.values())
        elif kind is list or kind is tuple:
            extend(item)
        elif kind is float:
            if item - item != 0.0:  # NaN for NaN and the infinities
                return True
        elif isinstance(item, dict):
            extend(item.values())
        elif isinstance(item, (list, tuple)):
            extend(item)
        elif isinstance(item, float) and item - item != 0.0:
            return True
    return False


def _collected_non_finite(floats: list[Any]) -> bool:
    """Whether a NaN or an infinity is within the values collected while the
    records were made (see :data:`_COLLECTING`): packed a slice at a time,
    whatever the size of the document, as they never hold media's bytes."""
    for start in range(0, len(floats), _PACKED_SLICE):
        if _holds_non_finite(floats[start : start + _PACKED_SLICE], 0):
            return True
    return False


_PACKED_SLICE: Final = 256
_PACK_AT_MOST: Final = 1 << 20


def _packed_non_finite(packed: bytes) -> bool:
    """Whether MessagePack ``packed`` may hold a NaN or an infinity: a float
    marker (``0xcb``) followed by ``7ff`` or ``fff``. The markers are found by
    ``bytes.find`` (memchr), several times faster than a regular expression
    steps through the bytes; the marker's bytes inside an integer may answer
    yes, which the walk then settles (UTF-8 text cannot hold them)."""
    find = packed.find
    at = find(b"\xcb")
    while at >= 0:
        if (
            packed[at + 1 : at + 2] in (b"\x7f", b"\xff")
            and packed[at + 2 : at + 3] >= b"\xf0"
        ):
            return True
        at = find(b"\xcb", at + 1)
    return False


def _dumps(value: Any, limit: int = MAX_DEPTH, floats: list[Any] | None = None) -> str:
    """The JSON text of ``value``, which the caller hands over: it is released
    before the bytes become text, so that the base64 of a large media part
    exists twice at most (see "Memory" on the reliability page). ``limit`` and
    ``floats``: as for :func:`_encode_json`."""
    encoded = _encode_json(value, limit, floats)[0]
    del value, floats
    return encoded.decode()


def _json_default(value: object) -> str:
    if isinstance(value, datetime):
        return value.isoformat()
    import orjson

    if type(value) is _base64.Spliced:  # media's base64: see _media_out
        return _base64.text_of(value.data)
    if type(value) is orjson.Fragment:
        text: str = orjson.loads(orjson.dumps(value))
        return text
    raise TypeError(f"Object of type {type(value).__name__} is not JSON serializable")


def _loads(text: str | bytes, where: str = "$", limit: int = MAX_DEPTH) -> Any:
    """Read one JSON value: what the standard library's :func:`json.loads` reads
    from UTF-8 (JSON with ``NaN``, ``Infinity``, ``-Infinity`` and lone surrogate
    escapes, integers of any size up to 4,300 digits), through msgspec (or orjson)
    where they can read it, which is almost always; nesting more than ``limit``
    levels raises :class:`SerializationError`, on every Python version."""
    value = _decode(text, where)
    if _may_nest_deeper(text, limit):
        _check_depth(value, limit, where)
    return value


def _decode(text: str | bytes, where: str) -> Any:
    fast = _fast()
    if fast is not None and (type(text) is bytes or type(text) is str):
        try:
            # msgspec keeps integers beyond 64 bits exact; what it refuses, the
            # standard library reads or refuses below.
            return fast.any(_utf8(text))
        except Exception:  # redone below
            pass
    if isinstance(text, (memoryview, bytearray)):
        text = bytes(text)
    if type(text) is not bytes and not isinstance(text, str):
        raise SerializationError(
            f"expected str or bytes, got {type(text).__name__}", where
        )
    if fast is None:
        import orjson  # on first use, as in _dumps

        try:
            if not _may_hold_long_integer(
                text if isinstance(text, bytes) else text.encode("utf-8", "replace")
            ):
                return orjson.loads(text)
        except ValueError:  # redone below
            pass
    try:
        if isinstance(text, bytes):
            text = text.decode("utf-8")
        return json.loads(text)
    except RecursionError as error:
        raise SerializationError(f"not JSON: {_TOO_DEEP}", where) from error
    # json.JSONDecodeError is a ValueError, as are UnicodeError and the
    # refusal of an integer of more than 4,300 digits.
    except ValueError as error:
        raise SerializationError(f"not JSON: {error}", where) from error
