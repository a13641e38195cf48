"""Media read from base64 keep it: checked when read, decoded when the bytes
are asked for, written back as base64 without encoding again."""

from __future__ import annotations

import base64
import binascii
import json
import os
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import canisters as c
from canisters import _base64, providers
from canisters.content import inline
from canisters.storage import open_store

from .budget import examples

PNG = b"\x89PNG\r\n\x1a\n" + os.urandom(3000)
TEXT = base64.b64encode(PNG).decode("ascii")
ALPHABET = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"


def _openai_body(url: str) -> dict[str, object]:
    return {
        "model": "m",
        "messages": [
            {
                "role": "user",
                "content": [{"type": "image_url", "image_url": {"url": url}}],
            }
        ],
    }


def _anthropic_body(data: str) -> dict[str, object]:
    source = {"type": "base64", "media_type": "image/png", "data": data}
    return {
        "model": "m",
        "max_tokens": 10,
        "messages": [
            {"role": "user", "content": [{"type": "image", "source": source}]}
        ],
    }


def _image(conversation: c.Conversation) -> c.Image:
    part = conversation[0].content[0]  # type: ignore[attr-defined]
    assert isinstance(part, c.Image)
    return part


@settings(max_examples=examples(2000))
@given(
    st.text(alphabet=ALPHABET + "=", max_size=13)
    | st.text(alphabet=ALPHABET + "= \n-_\u00e9", max_size=13)
)
def test_checking_refuses_what_decoding_refuses(text: str) -> None:
    try:
        expected = base64.b64decode(text, validate=True)
    except (binascii.Error, ValueError):
        with pytest.raises((binascii.Error, ValueError)):
            _base64.check(text)
        return
    checked = _base64.check(text)
    decoded = checked.decode() if isinstance(checked, _base64.Encoded) else checked
    assert decoded == expected
    if isinstance(checked, _base64.Encoded):
        assert len(checked) == len(expected)
        assert checked.head(4)[:4] == expected[:4]
        assert checked == expected and hash(checked) == hash(expected)


def test_a_part_read_from_json_keeps_the_text_until_its_bytes_are_asked_for() -> None:
    written = c.to_json(c.Conversation([c.User([c.Image(data=PNG)])]))
    for read in (c.from_json(written), c.from_jsonl(c.to_jsonl(c.from_json(written)))):
        image = _image(read)
        kept = inline(image)
        assert isinstance(kept, _base64.Encoded) and kept.text == TEXT
        # Written again without being decoded or encoded.
        assert c.to_json(read) == written
        assert isinstance(inline(image), _base64.Encoded)
        assert image == c.Image(data=PNG) and hash(image) == hash(c.Image(data=PNG))
        assert image.data == PNG
        # The bytes replace the text once decoded.
        assert inline(image) is image.data


def test_rendering_base64_from_base64_gives_the_text_back() -> None:
    body = _anthropic_body(TEXT)
    read = providers.get("anthropic").parse_request(body)
    assert isinstance(inline(_image(read)), _base64.Encoded)
    rendered = providers.get("anthropic").render_request(read)
    assert rendered["messages"][0]["content"][0]["source"]["data"] is TEXT
    url = f"data:image/png;base64,{TEXT}"
    read = providers.get("openai-chat").parse_request(_openai_body(url))
    for name in ("openai-chat", "anthropic", "gemini", "ollama", "openai-responses"):
        other = providers.get(name).render_request(read)
        assert TEXT in str(other)
    assert isinstance(inline(_image(read)), _base64.Encoded)  # never decoded
    assert _image(read).data == PNG


@pytest.mark.parametrize("broken", [TEXT[:-1] + "!", "QQ=", TEXT + "\n", "=" + TEXT])
def test_malformed_base64_is_refused_as_before(broken: str) -> None:
    if broken != "QQ=":  # Anthropic's reader pads what comes unpadded
        with pytest.raises(c.MalformedPayload):
            providers.get("anthropic").parse_request(_anthropic_body(broken))
    document = c.to_json(c.Conversation([c.User([c.Image(data=PNG)])]))
    with pytest.raises(c.SerializationError, match="invalid base64"):
        c.from_json(document.replace(TEXT, json.dumps(broken)[1:-1]))
    # In a data URL, base64 that does not read back exactly stays a URL.
    read = providers.get("openai-chat").parse_request(
        _openai_body(f"data:image/png;base64,{broken}")
    )
    assert inline(_image(read)) is None


def test_a_store_keeps_a_part_read_from_base64(tmp_path: Path) -> None:
    read = c.from_json(c.to_json(c.Conversation([c.User([c.Image(data=PNG)])])))
    with open_store(str(tmp_path / "store")) as store:
        store.extend("chat", read)
        loaded = store.load("chat")
        assert loaded == read
        assert _image(loaded).data == PNG
        content_id = store.content.put(PNG)
        assert store.content.get(content_id) == PNG
