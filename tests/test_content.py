"""Content parts: construction rules and protocol conformance."""

from __future__ import annotations

import pytest

import canisters as c
from canisters import protocols as p

DIGEST = "sha256:" + "ab" * 32


@pytest.mark.parametrize("cls", [c.Image, c.Audio, c.Video, c.File])
class TestMediaSources:
    def test_each_single_source_is_accepted(self, cls: type[c.Media]) -> None:
        assert cls(data=b"\x00\x01").data == b"\x00\x01"
        assert cls(url="https://example.com/x").url == "https://example.com/x"
        assert cls(content_id=DIGEST).content_id == DIGEST

    def test_refs_alone_or_beside_a_source(self, cls: type[c.Media]) -> None:
        only = cls(refs={"openai": "file-abc"})
        assert only.refs == {"openai": "file-abc"}
        both = cls(url="https://example.com/x", refs={"gemini": "files/1"})
        assert both.url and both.refs["gemini"] == "files/1"

    def test_no_source_is_refused(self, cls: type[c.Media]) -> None:
        with pytest.raises(c.ModelError, match="needs a source"):
            cls()

    @pytest.mark.parametrize(
        "sources",
        [
            {"data": b"x", "url": "https://e.com"},
            {"data": b"x", "content_id": DIGEST},
            {"url": "https://e.com", "content_id": DIGEST},
        ],
    )
    def test_two_sources_are_refused(
        self, cls: type[c.Media], sources: dict[str, object]
    ) -> None:
        with pytest.raises(c.ModelError, match="exactly one"):
            cls(**sources)

    @pytest.mark.parametrize(
        "bad",
        [
            "sha256:ABCD",
            "sha256:" + "AB" * 32,
            "md5:" + "ab" * 16,
            "sha256:" + "ab" * 31,
        ],
    )
    def test_malformed_content_id_is_refused(
        self, cls: type[c.Media], bad: str
    ) -> None:
        with pytest.raises(c.ModelError, match="content_id"):
            cls(content_id=bad)

    def test_relative_url_is_refused(self, cls: type[c.Media]) -> None:
        with pytest.raises(c.ModelError, match="absolute URL"):
            cls(url="images/cat.png")

    def test_data_must_be_bytes(self, cls: type[c.Media]) -> None:
        with pytest.raises(c.ModelError, match="bytes"):
            cls(data="not bytes")  # type: ignore[arg-type]
        assert cls(data=bytearray(b"ab")).data == b"ab"

    def test_refs_must_map_strings(self, cls: type[c.Media]) -> None:
        with pytest.raises(c.ModelError, match="refs"):
            cls(refs={"openai": 3})  # type: ignore[dict-item]


def test_modality_and_type_tags() -> None:
    assert c.Image(url="https://e.com/x").modality is c.Modality.Image
    assert c.Audio(url="https://e.com/x").modality is c.Modality.Audio
    assert c.Video(url="https://e.com/x").modality is c.Modality.Video
    assert c.File(url="https://e.com/x").modality is c.Modality.Document
    assert [
        cls.type for cls in (c.Text, c.Image, c.Audio, c.Video, c.File, c.Reasoning)
    ] == ["text", "image", "audio", "video", "file", "reasoning"]


def test_reasoning_signature_requires_provider() -> None:
    with pytest.raises(c.ModelError, match="provider"):
        c.Reasoning("thinking", signature="EqoB...")
    with pytest.raises(c.ModelError, match="provider"):
        c.Reasoning(redacted="blob")
    signed = c.Reasoning("thinking", signature="EqoB", provider="anthropic")
    assert signed.provider == "anthropic"


def test_text_must_be_str() -> None:
    with pytest.raises(c.ModelError, match="str"):
        c.Text(5)  # type: ignore[arg-type]


def test_parts_are_frozen_slotted_and_deeply_read_only() -> None:
    part = c.Text("hi", extras={"anthropic": {"cache_control": {"type": "ephemeral"}}})
    assert not hasattr(part, "__dict__")
    with pytest.raises(AttributeError):
        part.text = "other"  # type: ignore[misc]
    with pytest.raises(TypeError):
        part.extras["openai"] = {}  # type: ignore[index]
    assert part.extras == {"anthropic": {"cache_control": {"type": "ephemeral"}}}


@pytest.mark.parametrize(
    ("value", "protocol"),
    [
        (c.Text("x"), p.TextualContent),
        (c.Image(url="https://e.com"), p.ImageContent),
        (c.Audio(url="https://e.com"), p.AudioContent),
        (c.Video(url="https://e.com"), p.VideoContent),
        (c.File(url="https://e.com"), p.FileContent),
        (c.Reasoning("x"), p.ReasoningContent),
    ],
)
def test_parts_satisfy_their_protocols(value: object, protocol: type) -> None:
    assert isinstance(value, protocol)
    assert isinstance(value, p.Content)
