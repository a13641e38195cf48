"""Real recorded streams of every provider, held to the provider SDKs' own view of them."""

from __future__ import annotations

import importlib
import io
import json
import random
import re
import subprocess
import sys
import warnings
from pathlib import Path
from typing import Any, TypeVar

import pytest
from pydantic import ValidationError

from canisters import Conversation, Reasoning, Text, providers
from canisters.cli import run
from canisters.protocols import Canister
from canisters.providers import MalformedPayload, Normalizer
from canisters.providers.streams import read_events

from .providers_support import fields
from .streams_support import (
    DIRECTORY,
    PROVIDERS,
    REFERENCES,
    Stream,
    all_streams,
    comparable,
    reference_body,
    sdk_events,
    stream_text,
    streams,
    validation_errors,
)

STREAMS = all_streams()

# The providers whose normalizer reads streams so far (issue 15 lands them one
# by one); the corpus tests below hold every provider.
STREAMED = ("openai-chat", "anthropic", "openai-responses", "gemini", "ollama")

# Real streams the implementation does not read yet, with what goes wrong:
# for every test of the stream (key: the stream) or for one test (key: the
# test's name and the stream). Strict: a mark goes when its fix lands.
DISAGREES = {
    ("parse", "openai-chat/moderation-trailing-chunk"): (
        "the reference, openai's ChatCompletionStreamState, takes the trailing "
        "moderation chunk's 'usage': null over the usage chunk before it; the "
        "accumulator keeps the usage the stream sent"
    ),
}

# Streams the provider SDK's own client cannot read (so no SDK objects).
SDK_REFUSES = {
    "ollama/docs-history-final-without-message": (
        "ollama-python's ChatResponse requires 'message'; the final object of "
        "this documented stream has none"
    ),
}


def parsed(test: str) -> list[Any]:
    """The streams of the providers that read streams, marked where they
    disagree with the implementation in ``test``."""
    params = []
    for stream in STREAMS:
        if stream.provider not in STREAMED:
            continue
        reason = DISAGREES.get(stream.id) or DISAGREES.get((test, stream.id))
        marks = [pytest.mark.xfail(strict=True, reason=reason)] if reason else []
        params.append(pytest.param(stream, marks=marks, id=stream.id))
    return params


def by_id(stream: Stream) -> str:
    return stream.id


# ------------------------------------------------------------------ the corpus


@pytest.mark.parametrize("provider", PROVIDERS)
def test_every_provider_has_five_streams(provider: str) -> None:
    assert len(streams(provider)) >= 5


def test_source_lists_every_file_and_no_other() -> None:
    source = (DIRECTORY / "SOURCE.md").read_text(encoding="utf-8")
    listed = set(re.findall(r"^- `([^`]+)`:", source, flags=re.MULTILINE))
    on_disk = {f"{stream.provider}/{stream.path.name}" for stream in STREAMS}
    assert listed == on_disk
    for stream in STREAMS:
        if stream.paired is not None:
            assert f"{stream.provider}/{stream.name}" in source


@pytest.mark.parametrize("stream", STREAMS, ids=by_id)
def test_reference_is_a_response_the_sdk_accepts(stream: Stream) -> None:
    body = reference_body(stream)
    # A recording older than the installed SDK may miss a field it now
    # requires; nothing else is allowed.
    assert {kind for _, kind in validation_errors(stream.provider, body)} <= {
        "missing",
        "extra_forbidden",
    }


@pytest.mark.parametrize(
    "stream", [s for s in STREAMS if s.paired is not None], ids=by_id
)
def test_paired_body_is_what_the_stream_ends_with(stream: Stream) -> None:
    assert REFERENCES[stream.provider](stream.events()) == stream.paired_body()


# ------------------------------------------------ what canisters makes of them


def normalizer(stream: Stream) -> Normalizer:
    return providers.get(stream.provider)


def texts(conversation: Conversation) -> list[tuple[str, str]]:
    """Per canister: its answer text and its reasoning text."""
    result = []
    for canister in conversation:
        answer, reasoning = [], []
        for part in getattr(canister, "content", ()):
            if isinstance(part, Text):
                answer.append(part.text)
            elif isinstance(part, Reasoning):
                reasoning.append(part.text)
        result.append(("".join(answer), "".join(reasoning)))
    return result


def grows(before: list[tuple[str, str]], after: list[tuple[str, str]]) -> bool:
    """Whether every canister's text in ``after`` continues its text in ``before``."""
    return len(after) >= len(before) and all(
        now[0].startswith(then[0]) and now[1].startswith(then[1])
        for then, now in zip(before, after, strict=False)
    )


def the_end(stream: Stream, events: list[dict[str, Any]]) -> int:
    """The index of the event that completes the response.

    The last event, except that an OpenAI Chat stream may go on after its
    last choice's ``finish_reason`` with chunks without choices (the usage,
    moderation results); without ``[DONE]``, which is no event, a stream cut
    among those cannot be told from a whole one.
    """
    if stream.provider == "openai-chat":
        return max(i for i, event in enumerate(events) if event.get("choices"))
    return len(events) - 1


Piece = TypeVar("Piece", bytes, str)


def chunks(raw: Piece, seed: int) -> list[Piece]:
    """``raw`` cut into pieces of 1 to 40 bytes or characters (cuts inside
    lines, inside CR LF, inside multi-byte characters)."""
    generator = random.Random(seed)
    pieces, start = [], 0
    while start < len(raw):
        end = start + generator.randint(1, 40)
        pieces.append(raw[start:end])
        start = end
    return pieces


@pytest.mark.parametrize("stream", STREAMS, ids=by_id)
def test_read_events_gives_the_wire_events(stream: Stream) -> None:
    raw = stream.raw()
    expected = stream.events()
    assert list(read_events(raw)) == expected
    assert list(read_events(raw.decode("utf-8"))) == expected
    assert list(read_events(io.BytesIO(raw))) == expected
    for seed in range(3):
        assert list(read_events(iter(chunks(raw, seed)))) == expected
        # Text pieces too.
        text = raw.decode("utf-8")
        assert list(read_events(iter(chunks(text, seed)))) == expected


@pytest.mark.parametrize(
    "stream", [s for s in STREAMS if s.provider == "gemini"], ids=by_id
)
def test_read_events_gives_the_chunks_of_a_gemini_json_array(stream: Stream) -> None:
    # No recording of streamGenerateContent without alt=sse was found: the
    # same chunks as the JSON array that form sends (pretty-printed).
    expected = stream.events()
    array = json.dumps(expected, indent=2, ensure_ascii=False).encode("utf-8")
    assert list(read_events(array)) == expected
    assert list(read_events(iter(chunks(array, 7)))) == expected


@pytest.mark.parametrize("stream", parsed("parse"))
def test_parse_stream_equals_the_non_streamed_parse(stream: Stream) -> None:
    parsed = normalizer(stream).parse_stream(stream.events())
    expected = normalizer(stream).parse_response(reference_body(stream))
    assert comparable(parsed) == comparable(expected)


@pytest.mark.parametrize("stream", parsed("sdk"))
def test_parse_stream_takes_the_sdk_event_objects(stream: Stream) -> None:
    if stream.id in SDK_REFUSES:
        with pytest.raises(ValidationError):
            sdk_events(stream)
        return
    objects, dicts = sdk_events(stream)
    from_sdk = normalizer(stream).parse_stream(objects)
    from_json = normalizer(stream).parse_stream(dicts)
    assert comparable(from_sdk) == comparable(from_json)


@pytest.mark.parametrize("stream", parsed("render"))
def test_rendered_stream_is_a_response_the_sdk_accepts(stream: Stream) -> None:
    conversation = normalizer(stream).parse_stream(stream.events())
    rendered = normalizer(stream).render_response(conversation)
    reference = reference_body(stream)
    # Where a normalizer renders only the response's conversation fields (the
    # Responses API echoes the request's tools, ...), the reference is held to
    # those same fields.
    module = importlib.import_module(
        f"canisters.providers.{stream.provider.replace('-', '_')}"
    )
    names = getattr(module, "RESPONSE_FIELDS", None)
    expected = reference if names is None else fields(reference, names)
    assert validation_errors(stream.provider, rendered) <= validation_errors(
        stream.provider, expected
    )
    assert stream_text(rendered, stream.provider) == stream_text(
        reference, stream.provider
    )


@pytest.mark.parametrize("stream", parsed("accumulator"))
def test_accumulator_grows_to_the_parse(stream: Stream) -> None:
    events = stream.events()
    accumulator = normalizer(stream).accumulator()
    seen: list[tuple[str, str]] = []
    handed: list[Canister] = []
    for event in events:
        handed.extend(accumulator.feed(event))
        now = texts(accumulator.snapshot())
        assert grows(seen, now), (seen, now)
        seen = now
    final = accumulator.finish()
    assert comparable(final) == comparable(normalizer(stream).parse_stream(events))
    assert texts(final) == seen
    # Each canister was handed out once, as it is in the end (a usage-only
    # chunk after the finish may still add usage to its metadata).
    assert [c.id for c in handed] == [c.id for c in final]
    assert texts(Conversation(handed)) == texts(final)


def cuts(stream: Stream, events: list[dict[str, Any]]) -> list[int]:
    """Where to cut a stream: before any event, after the first, a third and
    half way in, and just before the event that completes it."""
    end = the_end(stream, events)
    return sorted(cut for cut in {0, 1, end // 3, end // 2, end} if cut <= end)


@pytest.mark.parametrize("stream", parsed("truncated"))
def test_truncated_stream_raises_or_keeps_what_was_complete(stream: Stream) -> None:
    events = stream.events()
    whole = texts(normalizer(stream).parse_stream(events))
    for cut in cuts(stream, events):
        with pytest.raises(MalformedPayload, match=re.escape(f"$[{cut}]")):
            normalizer(stream).parse_stream(events[:cut])
        report = providers.Report()
        kept = normalizer(stream).parse_stream(
            events[:cut], truncated="keep", report=report
        )
        assert isinstance(kept, Conversation)
        assert report.events, f"cut after {cut} events, nothing reported"
        assert all(event.provider == stream.provider for event in report.events)
        assert grows(texts(kept), whole)


@pytest.mark.parametrize("stream", parsed("cli"))
def test_cli_converts_a_stream_file(stream: Stream, tmp_path: Path) -> None:
    parsed = normalizer(stream).parse_stream(stream.events())
    for target in PROVIDERS:
        output = tmp_path / f"{target}.json"
        code = run(
            [
                "convert",
                "--from",
                stream.provider,
                "--to",
                target,
                "-q",
                "--unsupported",
                "placeholder",
                "-o",
                str(output),
                str(stream.path),
            ]
        )
        assert code == 0, target
        body = json.loads(output.read_text(encoding="utf-8"))
        # What the library gives for the stream, whichever the target (ids a
        # render makes up for another provider differ from one render to the
        # next: those bodies are compared as the target reads them).
        renderer = providers.get(target)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", providers.FidelityWarning)
            expected = renderer.render_response(parsed, unsupported="placeholder")
        if target == stream.provider:
            assert body == expected
        else:
            again = renderer.parse_response(body)
            wanted = renderer.parse_response(expected)
            assert [c.role for c in again] == [c.role for c in wanted], target
            assert texts(again) == texts(wanted), target


@pytest.mark.parametrize("stream", parsed("show"))
def test_cli_shows_a_stream_file(
    stream: Stream, capsys: pytest.CaptureFixture[str]
) -> None:
    assert run(["show", "--from", stream.provider, str(stream.path)]) == 0
    shown = capsys.readouterr().out
    for answer, _ in texts(normalizer(stream).parse_stream(stream.events())):
        assert answer.split("\n")[0][:30] in shown


def test_the_command_converts_a_saved_stream() -> None:
    # The installed command, for real, on a saved Anthropic stream (SSE with
    # event: lines, a ping, a thinking signature).
    (stream,) = [s for s in STREAMS if s.id == "anthropic/thinking-signature"]
    out = subprocess.run(
        [
            *(sys.executable, "-m", "canisters", "convert"),
            *("--from", "anthropic", "--to", "anthropic", str(stream.path)),
        ],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert out.returncode == 0, out.stderr
    parsed = normalizer(stream).parse_stream(stream.events())
    assert json.loads(out.stdout) == normalizer(stream).render_response(parsed)
