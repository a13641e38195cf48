"""Standard base64 for media bytes, through msgspec's codec.

msgspec (a dependency, loaded on first use here so that ``import canisters``
stays cheap) writes bytes as the JSON string of their standard, padded base64,
in C and faster than :mod:`binascii` on images of 5 KB to 300 KB (from a few
percent to 1.7x: fresh buffers cost as much as the encoding), and reads them
back about 2.5x as fast. The text is the same: :func:`fragment` gives what
``base64.b64encode(data)`` gives, in quotes, :func:`encode` gives it as text,
and :func:`decode` reads exactly what ``base64.b64decode(text, validate=True)``
reads, raising :class:`binascii.Error` (or :class:`ValueError`) where it does.
"""

from __future__ import annotations

import base64
import binascii
from collections.abc import Callable
from typing import Any, Final

__all__ = ["Encoded", "check", "decode", "encode", "fragment", "text_of"]

_SMALL: Final = 4096
"""Below this many bytes, binascii's call costs less than msgspec's."""

_Codec = tuple[Callable[[bytes], bytes], Callable[[bytes], Any], Callable[[str], bytes]]
_CODEC: list[_Codec] = []


def _codec() -> _Codec:
    if not _CODEC:
        import msgspec
        import orjson

        encoder, decoder = msgspec.json.Encoder(), msgspec.json.Decoder(bytes)
        _CODEC.append((encoder.encode, orjson.Fragment, decoder.decode))
    return _CODEC[0]


def fragment(data: bytes) -> Any:
    """The JSON string of the base64 of ``data``, as an ``orjson.Fragment``,
    which orjson copies into its output as it is: the base64 is never a str,
    nor read again for characters to escape."""
    codec = _codec()
    return codec[1](codec[0](data))


def encode(data: bytes) -> str:
    """The standard, padded base64 of ``data``, as text."""
    if len(data) < _SMALL:
        return binascii.b2a_base64(data, newline=False).decode("ascii")
    quoted = _codec()[0](data)  # msgspec writes it in quotes
    # Decoded from a view: the base64 is copied once more, as the standard
    # library's b64encode and a decode would copy it.
    return str(memoryview(quoted)[1:-1], "ascii")


def decode(text: str) -> bytes:
    """The bytes of standard, padded base64 ``text``, read as strictly as
    ``base64.b64decode(text, validate=True)``: msgspec reads nothing the
    standard library refuses, which reads what msgspec refuses, for its error."""
    # msgspec reads a JSON string: no escape may reach it. A quote or a backslash
    # is not base64: the standard library refuses such text.
    if '"' not in text and "\\" not in text:
        try:
            return _codec()[2]('"' + text + '"')
        except Exception:  # the standard library gives the error
            pass
    return base64.b64decode(text, validate=True)


_ALPHABET: Final = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"


class Encoded:
    """Standard base64 of media bytes, checked as :func:`decode` checks it but
    not decoded: a media part read from base64 holds it, and gives it back as
    it came when written as base64 again (see :func:`text_of`)."""

    __slots__ = ("text",)

    def __init__(self, text: str) -> None:
        self.text = text

    def decode(self) -> bytes:
        """The bytes (the text was checked: this does not fail)."""
        return decode(self.text)

    def head(self, count: int) -> bytes:
        """The first ``count`` bytes at least (fewer when there are fewer),
        decoding only the text they need."""
        need = -(-count // 3) * 4
        return decode(self.text) if need >= len(self.text) else decode(self.text[:need])

    def __len__(self) -> int:
        text = self.text
        pads = 2 if text.endswith("==") else 1 if text.endswith("=") else 0
        return (len(text) - pads) * 3 // 4

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


def check(text: str) -> Encoded | bytes:
    """``text`` checked as :func:`decode` reads it, without decoding it: an
    :class:`Encoded`, or the bytes where the check needed them; raises what
    :func:`decode` raises on text it refuses."""
    if text.isascii():
        pads = 2 if text.endswith("==") else 1 if text.endswith("=") else 0
        if text.encode("ascii").translate(None, _ALPHABET) == b"=" * pads:
            # Only the last group can be refused now (its length and padding):
            # decode reads each group of four alone.
            body = len(text) - pads
            start = body - (body % 4 or 4) if body else 0
            try:
                decode(text[start:])
            except (binascii.Error, ValueError):
                pass
            else:
                return Encoded(text)
    return decode(text)


def text_of(data: bytes | Encoded) -> str:
    """The standard base64 of ``data``: an :class:`Encoded`'s own text, as it
    came (no copy), else :func:`encode`'s."""
    return data.text if isinstance(data, Encoded) else encode(data)
