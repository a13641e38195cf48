"""Media bytes as base64 (canisters._base64, msgspec's codec): in documents, the
base64 canisters writes is the standard library's, byte for byte, on every
writing path (orjson, and the standard library where orjson cannot be exact),
and it reads what the standard library reads; in provider bodies, base64 and
data URLs are read, and judged exact, as when they were encoded again."""

from __future__ import annotations

import base64
import binascii
import json
import re
from datetime import datetime, timezone
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import canisters as c
from canisters import _base64
from canisters._base64 import Encoded
from canisters.providers import _common as common

from .budget import examples

WHEN = datetime(2025, 1, 1, tzinfo=timezone.utc)


def _user(*parts: Any) -> c.User:
    return c.User((c.Text("look"), *parts), id="u1", timestamp=WHEN)


def _datas(text: str) -> list[str]:
    """Every ``data`` field of a JSON or JSONL text, in order."""
    found: list[str] = []

    def walk(value: Any) -> None:
        if isinstance(value, dict):
            if isinstance(value.get("data"), str):
                found.append(value["data"])
            for item in value.values():
                walk(item)
        elif isinstance(value, list):
            for item in value:
                walk(item)

    for line in text.splitlines():
        walk(json.loads(line))
    return found


@settings(max_examples=examples(100), deadline=None)
@given(st.lists(st.binary(max_size=300), min_size=1, max_size=4))
def test_written_base64_is_the_standard_librarys(blobs: list[bytes]) -> None:
    parts = [c.Image(data=blob, mime_type="image/png") for blob in blobs]
    conversation = c.Conversation([_user(*parts)])
    expected = [base64.b64encode(blob).decode() for blob in blobs]
    for text in (c.to_json(conversation), c.to_jsonl(conversation)):
        assert _datas(text) == expected
    assert _datas(c.to_json(parts[0])) == expected[:1]
    assert c.from_json(c.to_json(conversation)) == conversation
    assert c.from_jsonl(c.to_jsonl(conversation)) == conversation


@pytest.mark.parametrize(
    "extras",
    [
        {"big": 2**70},  # beyond 64 bits: orjson refuses it
        {"ratio": float("nan")},  # orjson would write null
        {"odd": "\ud800"},  # a lone surrogate: orjson refuses it
    ],
)
def test_media_next_to_what_orjson_cannot_write(extras: dict[str, Any]) -> None:
    # The standard library writes such documents; the image's base64 is the same.
    image = c.Audio(data=bytes(range(256)) * 40, mime_type="audio/wav")
    user = _user(image, c.Image(url="https://example.com/a.png", extras=extras))
    conversation = c.Conversation([user])
    expected = [base64.b64encode(image.data).decode()]  # type: ignore[arg-type]
    for text in (c.to_json(user), c.to_json(conversation), c.to_jsonl(conversation)):
        assert expected[0] in text
    assert _datas(c.to_json(user)) == expected
    back = c.from_json(c.to_json(conversation))
    assert isinstance(back, c.Conversation)
    assert back[0].content[1] == image  # type: ignore[attr-defined]
    assert c.from_jsonl(c.to_jsonl(conversation))[0].content[1] == image  # type: ignore[attr-defined]


def _standard(text: str) -> tuple[str, Any]:
    try:
        return "bytes", base64.b64decode(text, validate=True)
    except (binascii.Error, ValueError) as error:
        return "error", str(error)


# Base64's alphabet, its padding, the URL-safe letters, whitespace, and what a
# JSON string would read as an escape or end (quote, backslash, "u").
ALPHABET = 'AQgw+/=_-09u \n\\"é\x00'


@settings(max_examples=examples(500), deadline=None)
@given(
    st.one_of(
        st.text(alphabet=ALPHABET, max_size=14),
        st.binary(max_size=40).map(lambda b: base64.b64encode(b).decode()),
    )
)
def test_base64_is_read_as_the_standard_library_reads_it(text: str) -> None:
    expected = _standard(text)
    try:
        got: tuple[str, Any] = "bytes", _base64.decode(text)
    except (binascii.Error, ValueError) as error:
        got = "error", str(error)
    assert got == expected
    # In a document: the same bytes, or a located error.
    part = {"type": "image", "data": text, "mime_type": "image/png"}
    document = json.dumps(
        {
            "format": "canisters.content",
            "version": c.serialization.FORMAT_VERSION,
            "content": part,
        }
    )
    if expected[0] == "bytes":
        assert c.from_json(document) == c.Image(data=expected[1], mime_type="image/png")
    else:
        with pytest.raises(c.SerializationError, match="invalid base64"):
            c.from_json(document)


def test_base64_escaped_in_json_is_read_unescaped() -> None:
    # JSON escapes are the document's: "YQ\u003d\u003d" is "YQ==" once read.
    version = c.serialization.FORMAT_VERSION
    document = (
        f'{{"format": "canisters.content", "version": {version}, "content": '
        '{"type": "image", "data": "YQ\\u003d\\u003d", "mime_type": "image/png"}}'
    )
    assert c.from_json(document) == c.Image(data=b"a", mime_type="image/png")


# --------------------------------------------------------------------------- #
# Provider bodies: base64 and data URLs read, and judged exact, as before


def _tampered() -> st.SearchStrategy[str]:
    """Base64 of some bytes, its last letter perhaps changed (bits beyond the
    last byte), its padding perhaps dropped."""
    letters = "AQgwBRhx+/9"

    def tamper(blob: bytes, letter: str, change: bool, unpad: bool) -> str:
        text = base64.b64encode(blob).decode()
        body = text.rstrip("=")
        if change and body:
            body = body[:-1] + letter
        return body if unpad else body + "=" * (len(text) - len(body))

    return st.builds(
        tamper,
        st.binary(max_size=20),
        st.sampled_from(letters),
        st.booleans(),
        st.booleans(),
    )


def _old_exact(text: str) -> tuple[str, Any]:
    """providers._common.b64decode_exact as it was: decode, then encode again."""
    padded = text + "=" * (-len(text) % 4)
    try:
        if "-" in text or "_" in text:
            data = base64.urlsafe_b64decode(padded)
        else:
            data = base64.b64decode(padded, validate=True)
    except (binascii.Error, ValueError) as error:
        return "error", f"invalid base64: {error}"
    return "value", (data, base64.b64encode(data).decode() == text)


@settings(max_examples=examples(500), deadline=None)
@given(st.one_of(_tampered(), st.text(alphabet=ALPHABET, max_size=14)))
def test_exactness_is_judged_as_by_encoding_again(text: str) -> None:
    expected = _old_exact(text)
    try:
        got: tuple[str, Any] = "value", common.b64decode_exact(text, "$.x")
    except c.MalformedPayload as error:
        got = "error", error.reason
    assert got == expected


_OLD_DATA_URL = re.compile(r"data:([^;,]*)((?:;[^;,]*)*?);base64,(.*)", re.DOTALL)


def _old_parse_data_url(url: str) -> tuple[str, bytes] | None:
    """providers._common.parse_data_url as it was."""
    if not url.startswith("data:"):
        return None
    match = _OLD_DATA_URL.fullmatch(url)
    if match is None or match.group(2):
        return None
    try:
        data = base64.b64decode(match.group(3), validate=True)
    except (binascii.Error, ValueError):
        return None
    mime = match.group(1)
    if not mime or common.data_url(mime, data) != url:
        return None
    return mime, data


@settings(max_examples=examples(500), deadline=None)
@given(
    st.sampled_from(["data:", "data:image/png", "data:image/png;x=1", "data:;", "dat"]),
    st.sampled_from([";base64,", ";base64", ",", ";base64,,", ";BASE64,"]),
    st.one_of(_tampered(), st.text(alphabet=ALPHABET + ",;:", max_size=14)),
)
def test_data_urls_are_read_as_before(head: str, marker: str, payload: str) -> None:
    url = head + marker + payload
    read = common.parse_data_url(url)
    if read is not None:
        # Kept as base64, checked but not decoded: the same bytes.
        assert isinstance(read[1], Encoded)
        read = (read[0], read[1].decode())
    assert read == _old_parse_data_url(url)


@pytest.mark.parametrize("writer", ["to_json", "to_jsonl"])
@pytest.mark.parametrize("around", [0, 100], ids=["alone", "among 200 canisters"])
def test_a_large_part_is_released_before_the_text_is_made(
    writer: str, around: int
) -> None:
    """The records (and the base64 of their media) go as soon as their bytes are
    written: the bytes and the text they become are the only copies alive
    together, as the reliability page says. Before, the base64 outlived the
    writing and a third copy was alive when the text was made."""
    import tracemalloc

    size = 8 * 1024 * 1024
    image = c.Image(data=bytes(range(256)) * (size // 256), mime_type="image/png")
    small = [
        c.User(f"turn {index}", id=f"s{index}", timestamp=WHEN)
        for index in range(around)
    ]
    items = [*small, _user(image), *small]
    write = getattr(c, writer)
    argument: Any = c.Conversation(items) if writer == "to_json" else items
    write(argument)  # warm
    tracemalloc.start()
    try:
        text = write(argument)
        _current, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    # The base64 is 4/3 of the image: the text and its bytes make 2.67 times
    # the image, and orjson's buffer grows ahead of what it writes (which
    # tracemalloc counts, unlike the resident size): 4 times, against 5.3
    # times when the base64 outlived the writing.
    assert peak < 4.6 * size
    assert _datas(text) == [base64.b64encode(image.data).decode("ascii")]
