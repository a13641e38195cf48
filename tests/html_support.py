"""Conversations for the page tests: one with every kind of part, one hostile,
media bytes made here (a real PNG, a real WAV), and an HTML reader that lists
every element with its attributes."""

from __future__ import annotations

import base64
import struct
import zlib
from html.parser import HTMLParser

import attrs

from canisters import (
    Assistant,
    Audio,
    Conversation,
    Document,
    ErrorInfo,
    File,
    Image,
    Invocation,
    Metadata,
    Reasoning,
    Result,
    Supervisor,
    Text,
    Usage,
    User,
    Video,
)


def png(
    width: int = 64, height: int = 48, rgb: tuple[int, int, int] = (200, 40, 40)
) -> bytes:
    """A real PNG of one colour."""
    row = b"\x00" + bytes(rgb) * width
    raw = row * height

    def chunk(kind: bytes, data: bytes) -> bytes:
        crc = zlib.crc32(kind + data) & 0xFFFFFFFF
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", crc)

    header = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    return (
        b"\x89PNG\r\n\x1a\n"
        + chunk(b"IHDR", header)
        + chunk(b"IDAT", zlib.compress(raw))
        + chunk(b"IEND", b"")
    )


def wav(samples: int = 800) -> bytes:
    """A real WAV: silence, 8 kHz, 8 bits, mono."""
    data = b"\x80" * samples
    fmt = struct.pack("<HHIIHH", 1, 1, 8000, 8000, 1, 8)
    body = b"WAVE" + b"fmt " + struct.pack("<I", len(fmt)) + fmt
    body += b"data" + struct.pack("<I", len(data)) + data
    return b"RIFF" + struct.pack("<I", len(body)) + body


PDF = b"%PDF-1.4\n% a tiny document\n"
SVG_SCRIPT = (
    b'<svg xmlns="http://www.w3.org/2000/svg" onload="window.__pwned=1">'
    b"<script>window.__pwned=1;document.title='pwned'</script></svg>"
)


def sample() -> Conversation:
    """Every role, every pairing (answered, failed, pending, orphan), every
    medium, folded reasoning, a document with a file, usage on two replies."""
    weather = Invocation("get_weather", {"city": "Paris"}, step=1, policy="agent")
    broken = Invocation("lookup", {"id": 7}, step=1)
    waiting = Invocation("slow_tool", {}, step=2)
    return Conversation(
        [
            Supervisor("You answer briefly."),
            Document(
                (
                    Text("The handbook says hello."),
                    File(
                        data=PDF, mime_type="application/pdf", filename="handbook.pdf"
                    ),
                ),
                title="Handbook",
                document_id="doc-1",
            ),
            User(
                (
                    Text("What is in this picture, and what is the weather?"),
                    Image(data=png(), mime_type="image/png", hint="a red square"),
                    Audio(data=wav(), mime_type="audio/wav"),
                    Video(url="https://example.com/clip.mp4", mime_type="video/mp4"),
                ),
                step=1,
            ),
            Assistant(
                (
                    Reasoning("The picture is red; I should call the weather tool."),
                    Text("A red square. Let me check the weather."),
                ),
                step=1,
                metadata=Metadata(model="model-a", usage=Usage(120, 30)),
            ),
            weather,
            broken,
            Result(weather.invocation_id, "get_weather", "sunny, 21 °C", step=1),
            Result(
                broken.invocation_id,
                "lookup",
                error=ErrorInfo("NOT_FOUND", "no record 7"),
                step=1,
            ),
            Assistant(
                "It is sunny.",
                step=2,
                metadata=Metadata(model="model-a", usage=Usage(200, 10)),
            ),
            waiting,
            Result("nobody-asked", "ghost", "an orphan result", step=2),
        ]
    )


HOSTILE_TEXTS = (
    "<script>window.__pwned=1;document.title='pwned'</script>",
    "<img src=x onerror=\"window.__pwned=1;document.title='pwned'\">",
    '"><svg onload="window.__pwned=1">',
    "</textarea></style></title><script>window.__pwned=1</script>",
    '<a href="javascript:window.__pwned=1">click</a>',
    '<iframe src="https://example.com/"></iframe><link rel=stylesheet href="https://example.com/x.css">',
    '<meta http-equiv="refresh" content="0;url=https://example.com/">',
)


def hostile() -> Conversation:
    """Content that would run a script, load a resource or navigate, if it could."""
    svg_url = "data:image/svg+xml;base64," + base64.b64encode(SVG_SCRIPT).decode()
    call = Invocation(
        "<script>window.__pwned=1</script>",
        {"<img src=x onerror=window.__pwned=1>": "javascript:window.__pwned=1"},
        invocation_id='"><script>window.__pwned=1</script>',
        policy="<b onmouseover=window.__pwned=1>",
    )
    return Conversation(
        [
            Supervisor(
                "<style>body{background:url(https://example.com/bg.png)}</style>"
            ),
            User(
                (
                    *(Text(text) for text in HOSTILE_TEXTS),
                    Text(
                        "<b>html</b><script>window.__pwned=1</script>",
                        mime_type="text/html",
                    ),
                    Image(data=SVG_SCRIPT, mime_type="image/svg+xml"),
                    Image(data=SVG_SCRIPT, mime_type="image/png"),
                    Image(url=svg_url),
                    Image(url="javascript:window.__pwned=1"),
                    Image(url="https://example.com/tracker.png", mime_type="image/png"),
                    Audio(url="https://example.com/sound.mp3"),
                    Video(
                        data=b"<html><script>window.__pwned=1</script></html>",
                        mime_type="video/mp4",
                    ),
                    File(
                        data=b"<script>window.__pwned=1</script>",
                        mime_type="text/html",
                        filename="<script>x</script>.html",
                    ),
                ),
                id='"><script>window.__pwned=1</script>',
            ),
            Assistant(
                (
                    Reasoning("<script>window.__pwned=1</script>"),
                    Text("x" * 200_000 + "<script>window.__pwned=1</script>"),
                ),
                metadata=Metadata(
                    model="<script>window.__pwned=1</script>",
                    finish_reason="<i>stop</i>",
                ),
                extras={
                    "x": {"<script>": "</script><script>window.__pwned=1</script>"}
                },
            ),
            call,
            Result(
                call.invocation_id,
                call.name,
                "<script>window.__pwned=1</script>",
                error=ErrorInfo("<script>", "<img src=x onerror=window.__pwned=1>"),
            ),
        ]
    )


@attrs.frozen
class Element:
    """One start tag of a page."""

    tag: str
    attributes: dict[str, str]


class Page(HTMLParser):
    """Every element of an HTML document, in order, and its text."""

    def __init__(self, text: str) -> None:
        super().__init__(convert_charrefs=True)
        self.elements: list[Element] = []
        self.texts: list[str] = []
        self.feed(text)
        self.close()

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.elements.append(Element(tag, {k: v or "" for k, v in attrs}))

    def handle_startendtag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.handle_starttag(tag, attrs)

    def handle_data(self, data: str) -> None:
        self.texts.append(data)

    def all(self, tag: str) -> list[Element]:
        return [element for element in self.elements if element.tag == tag]

    @property
    def text(self) -> str:
        return "".join(self.texts)
