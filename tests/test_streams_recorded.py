"""Real recorded streams of every provider, held to the provider SDKs' own view of them."""

from __future__ import annotations

import re

import pytest

from .streams_support import (
    DIRECTORY,
    PROVIDERS,
    REFERENCES,
    Stream,
    all_streams,
    reference_body,
    streams,
    validation_errors,
)

STREAMS = all_streams()


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
