"""Base64 in provider bodies: bytes when the text is their one spelling, the text
kept as it came otherwise, so that a body goes back exactly."""

from __future__ import annotations

import base64

from hypothesis import given, settings
from hypothesis import strategies as st

from canisters import Conversation, Image, User, providers
from canisters.exceptions import MalformedPayload
from canisters.providers import _common as common

from .budget import examples

# Letters whose last bits differ ("A", "Q", "g", "w" end in 0000, 0000, 0000,
# 0000 but differ above; "B", "R" end in 0001), both alphabets, and padding.
_ALPHABET = "ABQRgwz09+/-_="


@settings(max_examples=examples(400))
@given(st.text(alphabet=_ALPHABET, max_size=14))
def test_a_spelling_is_exact_when_encoding_the_bytes_gives_it_back(text: str) -> None:
    try:
        data, exact = common.b64decode_exact(text)
    except MalformedPayload:
        return
    assert exact == (common.b64encode(data) == text)


@settings(max_examples=examples(200))
@given(st.text(alphabet=_ALPHABET, max_size=14), st.binary(max_size=10))
def test_data_urls_become_bytes_only_in_their_one_spelling(
    payload: str, data: bytes
) -> None:
    chat = providers.get("openai-chat")
    for text in (payload, base64.b64encode(data).decode()):
        url = f"data:image/png;base64,{text}"
        body = {
            "messages": [
                {
                    "role": "user",
                    "content": [{"type": "image_url", "image_url": {"url": url}}],
                }
            ]
        }
        (user,) = chat.parse_request(body)
        assert isinstance(user, User)
        (image,) = user.content
        assert isinstance(image, Image)
        canonical = common.parse_data_url(url) is not None
        if canonical:
            assert image.data is not None
            assert common.b64encode(image.data) == text
        else:
            assert image.url == url
        rendered = chat.render_request(Conversation([user]))
        assert rendered["messages"][0]["content"][0]["image_url"]["url"] == url
