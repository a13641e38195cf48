"""canisters._base64 reads and writes what the standard library does through
either codec it may use: pybase64's SIMD one (which refuses a little more than
the standard library, read again by it) and msgspec's (where pybase64's
compiled extension is missing); long text is checked piece by piece."""

from __future__ import annotations

import base64
import binascii
from collections.abc import Iterator
from contextlib import contextmanager

import orjson
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import canisters as c
from canisters import _base64
from canisters.providers import _common as common

from .budget import examples

ALPHABET = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"
CODECS = ("simd", "msgspec")

_texts = (
    st.text(alphabet=ALPHABET + "=", max_size=21)
    | st.text(alphabet=ALPHABET + '= \n-_"\\\u00e9', max_size=21)
    | st.binary(max_size=40).map(lambda data: base64.b64encode(data).decode())
    # Padding then more (pybase64 refuses what the standard library reads).
    | st.binary(min_size=1, max_size=40).map(
        lambda data: base64.b64encode(data).decode() + "="
    )
)


@contextmanager
def _using(codec: str, chunk: int | None = None) -> Iterator[None]:
    saved = list(_base64._CODEC), _base64._CHUNK, _base64._WHOLE
    _base64._CODEC[:] = [_base64._built(simd=codec == "simd")]
    if chunk is not None:
        _base64._CHUNK = _base64._WHOLE = chunk
    try:
        yield
    finally:
        _base64._CODEC[:], _base64._CHUNK, _base64._WHOLE = saved


def _standard(text: str) -> bytes | None:
    try:
        return base64.b64decode(text, validate=True)
    except (binascii.Error, ValueError):
        return None


def test_the_simd_codec_serves_here() -> None:
    # The benchmarks' figures assume it: pybase64 is a dependency.
    assert _base64._built(simd=True)[4]
    assert not _base64._built(simd=False)[4]


@pytest.mark.parametrize("codec", CODECS)
@pytest.mark.parametrize("chunk", [None, 8])
@settings(max_examples=examples(1500), deadline=None)
@given(text=_texts)
def test_reading_is_the_standard_librarys(
    codec: str, chunk: int | None, text: str
) -> None:
    expected = _standard(text)
    with _using(codec, chunk):
        if expected is None:
            with pytest.raises((binascii.Error, ValueError)) as refused:
                _base64.check(text)
            with pytest.raises((binascii.Error, ValueError)) as decoded:
                _base64.decode(text)
            # The standard library's error, word for word.
            with pytest.raises((binascii.Error, ValueError)) as standard:
                base64.b64decode(text, validate=True)
            assert str(refused.value) == str(decoded.value) == str(standard.value)
            return
        assert _base64.decode(text) == expected
        checked = _base64.check(text)
        if isinstance(checked, _base64.Encoded):
            assert checked.text is text  # kept, not copied
            assert checked.decode() == expected
        else:
            assert checked == expected


@pytest.mark.parametrize("codec", CODECS)
@settings(max_examples=examples(300), deadline=None)
@given(data=st.binary(max_size=6000))
def test_writing_is_the_standard_librarys(codec: str, data: bytes) -> None:
    expected = base64.b64encode(data).decode()
    with _using(codec):
        assert _base64.encode(data) == expected
        assert orjson.dumps([_base64.fragment(data)]) == orjson.dumps([expected])
        assert _base64.text_of(data) == expected


@pytest.mark.parametrize("codec", CODECS)
def test_long_text_is_checked_piece_by_piece(codec: str) -> None:
    data = bytes(range(256)) * 30
    text = base64.b64encode(data).decode()  # 10,240 characters, no padding
    with _using(codec, chunk=1024):
        assert isinstance(_base64.check(text), _base64.Encoded)
        assert isinstance(_base64.check(text[:-4] + "QQ=="), _base64.Encoded)
        # A piece that would pass alone: padding ends the third piece.
        broken = text[: 3 * 1024 - 2] + "==" + text[3 * 1024 :]
        for text_ in (broken, text[:-1] + "!", text[:5000] + " " + text[5001:]):
            with pytest.raises((binascii.Error, ValueError)):
                _base64.check(text_)


@pytest.mark.parametrize("codec", CODECS)
@settings(max_examples=examples(500), deadline=None)
@given(text=_texts)
def test_the_tail_of_a_text_is_read_where_it_lies(codec: str, text: str) -> None:
    head = "data:image/png;base64,"
    expected = _standard(text)
    with _using(codec, chunk=8):
        if expected is None:
            with pytest.raises((binascii.Error, ValueError)):
                _base64.check(head + text, len(head))
            return
        checked = _base64.check(head + text, len(head))
        if isinstance(checked, _base64.Encoded):
            assert checked.text == text and checked.decode() == expected
            assert len(checked) == len(expected)
            assert checked.head(4)[:4] == expected[:4]
        else:
            assert checked == expected


def test_a_data_url_read_is_written_back_as_it_is() -> None:
    url = "data:image/png;base64," + base64.b64encode(bytes(range(256)) * 9).decode()
    parsed = common.parse_data_url(url)
    assert parsed is not None
    mime, data = parsed
    assert mime == "image/png" and isinstance(data, _base64.Encoded)
    assert data.source is url  # the URL held, its base64 not copied
    assert common.data_url("image/png", data) is url
    other = common.data_url("image/webp", data)
    assert other == "data:image/webp;base64," + url.split(",", 1)[1]
    assert data == bytes(range(256)) * 9


def test_marks_are_replaced_by_the_base64_once() -> None:
    data = bytes(range(256)) * 3
    encoded = _base64.check(base64.b64encode(b"kept").decode())
    splicer = _base64.Splicer()
    written = orjson.dumps(
        {"a": [_base64.Spliced(data), "\x00 escaped"], "b": _base64.Spliced(encoded)},
        default=splicer,
    )
    assert written.count(b"\x00") == 4  # two marks; the string's NUL is escaped
    expected = {
        "a": [base64.b64encode(data).decode(), "\x00 escaped"],
        "b": base64.b64encode(b"kept").decode(),
    }
    assert orjson.loads(splicer.text(written)) == expected
    with pytest.raises(TypeError):
        orjson.dumps({"c": object()}, default=splicer)


@pytest.mark.parametrize(
    "foreign", [b'"\x00"', b'"\x00x\x00"', b'"\x009\x00"', b'"\x000\x00"']
)
def test_a_nul_that_is_no_mark_is_refused(foreign: bytes) -> None:
    # A fragment in extras holding a raw NUL would make the document no JSON;
    # next to media, it is told from the marks and refused.
    image = c.Image(data=b"\x89PNG", extras={"raw": orjson.Fragment(foreign)})
    user = c.User((image,))
    with pytest.raises(c.SerializationError, match="NUL"):
        c.to_json(c.Conversation([user]))
    with pytest.raises(c.SerializationError, match="NUL"):
        c.to_jsonl([user])
