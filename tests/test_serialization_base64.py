"""Media bytes in documents: the base64 canisters writes is the standard library's,
byte for byte, on every writing path (orjson, and the standard library where
orjson cannot be exact)."""

from __future__ import annotations

import base64
import json
from datetime import datetime, timezone
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import canisters as c

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
