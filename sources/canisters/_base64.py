"""Standard base64 for media bytes, through pybase64's SIMD codec.

pybase64 (a dependency, loaded on first use here so that ``import canisters``
stays cheap) encodes and decodes base64 with the processor's vector
instructions, about 10 GB/s on this project's benchmark machine, where the
standard library's :mod:`binascii` reads 0.5 GB/s and msgspec's codec 1.4 GB/s.
The text is the same: :func:`fragment` gives what ``base64.b64encode(data)``
gives, in quotes, :func:`encode` gives it as text, and :func:`decode` reads
exactly what ``base64.b64decode(text, validate=True)`` reads, raising
:class:`binascii.Error` (or :class:`ValueError`) where it does. pybase64
refuses a little more than the standard library (padding followed by more
padding, as in ``"QUJD="``): what it refuses, the standard library reads
again, for its bytes or its error. Without pybase64's compiled extension,
msgspec's codec and :mod:`binascii` serve.
"""

from __future__ import annotations

import base64
import binascii
from collections.abc import Callable
from typing import Any, Final

__all__ = [
    "Encoded",
    "Spliced",
    "Splicer",
    "check",
    "decode",
    "encode",
    "fragment",
    "text_of",
]

_SMALL: Final = 4096
"""Below this many bytes, binascii's call costs less than msgspec's."""

_Codec = tuple[
    Callable[[bytes], bytes],  # bytes to the JSON string of their base64
    Callable[[Any], Any],  # orjson.Fragment
    Callable[[str], bytes],  # base64 text to bytes (strict; raises ValueError)
    Callable[[bytes], str] | None,  # bytes to base64 text (pybase64 only)
    bool,  # whether pybase64's SIMD codec serves
]
_CODEC: list[_Codec] = []


def _codec() -> _Codec:
    if not _CODEC:
        _CODEC.append(_built(simd=True))
    return _CODEC[0]


def _built(*, simd: bool) -> _Codec:
    """pybase64's codec where ``simd`` and its compiled extension is there,
    else msgspec's."""
    import orjson

    if simd:
        try:
            from pybase64 import _pybase64  # the compiled codec, not its fallback
        except ImportError:
            pass
        else:
            simd_encode, simd_decode = _pybase64.b64encode, _pybase64.b64decode

            def quoted(data: bytes) -> bytes:
                return b'"' + simd_encode(data) + b'"'

            def strict(text: str) -> bytes:
                return simd_decode(text, validate=True)

            return quoted, orjson.Fragment, strict, _pybase64.b64encode_as_string, True
    import msgspec

    encoder, decoder = msgspec.json.Encoder(), msgspec.json.Decoder(bytes)
    return encoder.encode, orjson.Fragment, _quoted(decoder.decode), None, False


def _quoted(read: Callable[[str], bytes]) -> Callable[[str], bytes]:
    """msgspec's reader of a JSON string of base64, given the bare text."""

    def strict(text: str) -> bytes:
        # msgspec reads a JSON string: no escape may reach it. A quote or a
        # backslash is not base64: the standard library refuses such text.
        if '"' in text or "\\" in text:
            raise ValueError("not base64")
        return read('"' + text + '"')

    return strict


def fragment(data: bytes) -> Any:
    """The JSON string of the base64 of ``data``, as an ``orjson.Fragment``,
    which orjson copies into its output as it is: the base64 is never a str,
    nor read again for characters to escape."""
    codec = _codec()
    return codec[1](codec[0](data))


def encode(data: bytes) -> str:
    """The standard, padded base64 of ``data``, as text."""
    codec = _codec()
    if codec[3] is not None:
        return codec[3](data)
    if len(data) < _SMALL:
        return binascii.b2a_base64(data, newline=False).decode("ascii")
    quoted = codec[0](data)  # msgspec writes it in quotes
    # Decoded from a view: the base64 is copied once more, as the standard
    # library's b64encode and a decode would copy it.
    return str(memoryview(quoted)[1:-1], "ascii")


def decode(text: str) -> bytes:
    """The bytes of standard, padded base64 ``text``, read as strictly as
    ``base64.b64decode(text, validate=True)``: the fast codec reads nothing the
    standard library refuses, which reads what the fast codec refuses, for its
    bytes or its error."""
    try:
        return _codec()[2](text)
    except Exception:  # the standard library reads it, or gives the error
        pass
    return base64.b64decode(text, validate=True)


_ALPHABET: Final = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"


class Encoded:
    """Standard base64 of media bytes, checked as :func:`decode` checks it but
    not decoded: a media part read from base64 holds it, and gives it back as
    it came when written as base64 again (see :func:`text_of`).

    The base64 is ``source[start:]``: a part read from a ``data:`` URL holds
    the URL itself (no copy of its base64), which :meth:`url` gives back whole
    where the same head is asked for."""

    __slots__ = ("source", "start")

    def __init__(self, source: str, start: int = 0) -> None:
        self.source = source
        self.start = start

    @property
    def text(self) -> str:
        """The base64 (a copy, where it is the tail of a data URL)."""
        return self.source[self.start :] if self.start else self.source

    def url(self, head: str) -> str | None:
        """The data URL held, when it begins with ``head`` and its base64
        follows it at once, else ``None``."""
        start = self.start
        if start and len(head) == start and self.source.startswith(head):
            return self.source
        return None

    def decode(self) -> bytes:
        """The bytes (the text was checked: this does not fail)."""
        return decode(self.text)

    def head(self, count: int) -> bytes:
        """The first ``count`` bytes at least (fewer when there are fewer),
        decoding only the text they need."""
        need = -(-count // 3) * 4
        if need >= len(self.source) - self.start:
            return self.decode()
        return decode(self.source[self.start : self.start + need])

    def __len__(self) -> int:
        source = self.source
        pads = 2 if source.endswith("==") else 1 if source.endswith("=") else 0
        return (len(source) - self.start - pads) * 3 // 4

    def __eq__(self, other: object) -> bool:
        """Equal to the same bytes, as bytes or as base64."""
        if isinstance(other, Encoded):
            return self.text == other.text or self.decode() == other.decode()
        if isinstance(other, (bytes, bytearray, memoryview)):
            return self.decode() == other
        return NotImplemented

    def __hash__(self) -> int:
        return hash(self.decode())

    def __repr__(self) -> str:
        return f"<base64 of {len(self)} bytes>"


_WHOLE: int = 1 << 20
"""Base64 of at most this many characters is checked whole (the bytes thrown
away are at most 768 KiB); longer text, and the tail of a data URL, a piece of
:data:`_CHUNK` characters at a time."""

_CHUNK: int = 1 << 18
"""The piece checked at a time (a multiple of 4): the pieces and the bytes
thrown away stay small. A data URL's base64 is checked where it lies, without
a copy of the whole (on the benchmark's media corpus, pieces of 256 KiB read
OpenAI Chat bodies faster than copying the base64 out first; text checked
whole reads Anthropic bodies faster than pieces do)."""


def _simd_check(text: str, start: int) -> None:
    """Raise unless pybase64 decodes ``text[start:]`` (whole or piece by piece)."""
    strict = _CODEC[0][2]
    size = len(text)
    if not start and size <= _WHOLE:
        strict(text)
        return
    # Padding can end the last piece only: a piece ending with it, decoded
    # alone, would pass.
    if 0 <= text.find("=", start) < size - 2:
        raise ValueError("padding before the end")
    step = _CHUNK
    for first in range(start, size, step):
        strict(text[first : first + step])


def check(text: str, start: int = 0) -> Encoded | bytes:
    """``text[start:]`` checked as :func:`decode` reads it, without decoding
    it: an :class:`Encoded`, or the bytes where the check needed them; raises
    what :func:`decode` raises on text it refuses.

    Where pybase64's SIMD codec serves, it decodes the text into bytes thrown
    away at once: at about 10 GB/s, faster than any check of the alphabet the
    standard library can make (``bytes.translate``, 2 GB/s; a regular
    expression, 0.3 GB/s; :mod:`binascii`, 0.5 GB/s). What it refuses is
    checked again as below, as the standard library reads it."""
    if _CODEC[0][4] if _CODEC else _codec()[4]:
        try:
            _simd_check(text, start)
        except Exception:  # the standard library's reading decides
            pass
        else:
            return Encoded(text, start)
    if start:
        text = text[start:]
    if text.isascii():
        pads = 2 if text.endswith("==") else 1 if text.endswith("=") else 0
        if text.encode("ascii").translate(None, _ALPHABET) == b"=" * pads:
            # Only the last group can be refused now (its length and padding):
            # decode reads each group of four alone.
            body = len(text) - pads
            first = body - (body % 4 or 4) if body else 0
            try:
                decode(text[first:])
            except (binascii.Error, ValueError):
                pass
            else:
                return Encoded(text)
    return decode(text)


def text_of(data: bytes | Encoded) -> str:
    """The standard base64 of ``data``: an :class:`Encoded`'s own text, as it
    came (no copy, unless it is the tail of a data URL), else :func:`encode`'s."""
    return data.text if isinstance(data, Encoded) else encode(data)


class Spliced:
    """Media data that :func:`~canisters.to_json` and
    :func:`~canisters.to_jsonl` write as a mark, which :class:`Splicer` puts
    the base64 in place of."""

    __slots__ = ("data",)

    def __init__(self, data: bytes | Encoded) -> None:
        self.data = data


_NUL: Final = b"\x00"


class Splicer:
    """orjson's ``default`` for :class:`Spliced` values, then the text of what
    orjson wrote with each one's base64 in its place (:meth:`text`).

    orjson writes a mark for each (``"`` NUL, a number, NUL ``"``: a raw NUL
    is in no JSON orjson writes, which escapes control characters in strings),
    and the base64 goes into the text once, when the pieces are joined: it is
    never copied into orjson's output, nor decoded from it with the rest of the
    document, where a fragment would be both (a document of images is mostly
    base64)."""

    __slots__ = ("texts",)

    def __init__(self) -> None:
        self.texts: list[str] = []

    def __call__(self, value: object) -> Any:
        if type(value) is not Spliced:
            raise TypeError(f"Type is not JSON serializable: {type(value).__name__}")
        texts = self.texts
        texts.append(text_of(value.data))
        return _codec()[1](b'"\x00%d\x00"' % (len(texts) - 1))

    def text(self, written: bytes) -> str:
        """``written`` (what orjson wrote through this splicer) as text, each
        mark replaced by its base64; raises :class:`ValueError` on a NUL that
        is no mark."""
        texts = self.texts
        if not texts or _NUL not in written:
            return written.decode()
        pieces = written.split(_NUL)
        if not len(pieces) % 2:
            raise ValueError("a NUL character outside a string")
        joined = [pieces[0].decode()]
        seen: set[int] = set()
        for index in range(1, len(pieces), 2):
            mark = pieces[index]
            # Each mark is in the output once (a line written again after a
            # refusal has marks of its own).
            number = int(mark) if mark.isdigit() else -1
            if not 0 <= number < len(texts) or number in seen:
                raise ValueError("a NUL character outside a string")
            seen.add(number)
            joined.append(texts[number])
            joined.append(pieces[index + 1].decode())
        return "".join(joined)
