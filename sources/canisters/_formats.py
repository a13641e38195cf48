"""What the serialization layer and its fast path (:mod:`canisters._wire`) both
need: the document formats' names and version, the depth bound, and the checks
that both make before reading. :mod:`canisters.serialization` re-exports the
public ones; the fast path imports them from here, below the layer that loads it.
"""

from __future__ import annotations

import json
from typing import Any, Final

FORMAT_VERSION: Final = 2
CONVERSATION_FORMAT: Final = "canisters.conversation"
CANISTER_FORMAT: Final = "canisters.canister"
CONTENT_FORMAT: Final = "canisters.content"
REQUEST_FORMAT: Final = "canisters.request"
MAX_DEPTH: Final = 500

JSONL_HEADER: Final = json.dumps(
    {"format": CONVERSATION_FORMAT, "version": FORMAT_VERSION}, separators=(",", ":")
).encode()
"""The first line of a conversation's JSONL."""

# The wire structs hold JSON values only where the model holds them (extras,
# arguments, ...): a part's extras object sits six levels down in a conversation
# document, five above its own first level. The fast path refuses a document
# holding such a value nesting more than MAX_DEPTH - OPAQUE_BASE levels, which
# may be too deep for the form read: the hooks decide it exactly.
OPAQUE_BASE: Final = 5
OPAQUE_LIMIT: Final = MAX_DEPTH - OPAQUE_BASE


def utf8(text: str | bytes) -> str | bytes:
    """Text for msgspec: a str beyond ASCII as bytes, as msgspec (like orjson)
    would otherwise keep a UTF-8 copy attached to the caller's string."""
    if isinstance(text, str) and not text.isascii():
        return text.encode()
    return text


NESTED: Final = (dict, list, tuple)


WRITABLE_DEPTH: Final = 254
"""The deepest nesting orjson writes: it refuses anything deeper (its recursion
limit), so a value it writes nests no deeper than this."""


def nests_deeper(value: Any, limit: int) -> bool:
    """Whether ``value`` nests arrays and objects (dicts, lists, tuples) more than
    ``limit`` levels deep; a walk level by level, never recursion, whose work is
    bounded even for a value that holds itself.

    A bound of :data:`WRITABLE_DEPTH` or more is first settled by orjson, which
    walks a value in C about ten times faster than Python does level by level:
    what it writes is within the bound. What it refuses (deeper nesting, keys
    that are not strings, integers beyond 64 bits, other types) is walked."""
    if not isinstance(value, NESTED):
        return False
    if limit >= WRITABLE_DEPTH:
        import orjson  # loaded on first use, as the writers of serialization do

        try:
            orjson.dumps(value)
        except Exception:  # orjson.JSONEncodeError, a TypeError: walked
            pass
        else:
            return False
    level = [value]
    for _ in range(limit):
        level = [
            item
            for container in level
            for item in (
                container.values() if isinstance(container, dict) else container
            )
            if isinstance(item, NESTED)
        ]
        if not level:
            return False
        if len(level) > 4096:  # the same value reached many times: count it once
            level = list({id(item): item for item in level}.values())
    return True
