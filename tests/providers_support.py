"""What the provider test modules share: the recorded corpus, comparisons, checks."""

from __future__ import annotations

import functools
import json
import re
from collections.abc import Callable
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import attrs
import pytest

from canisters import Conversation, providers

EPOCH = datetime(2000, 1, 1, tzinfo=timezone.utc)

KEPT_KEY = re.compile(
    r"canister \d+ \([a-z]+\)(, part \d+ \([a-z_]+\))?\.[A-Za-z_][\w-]*"
)
"""The report path of another format's wire key kept on a canister or part
(``canister 1 (user), part 0 (text).cache_control``): what the target cannot
say is refused, or dropped and reported, there."""


@functools.cache
def adapter(kind: Any) -> Any:
    """A pydantic ``TypeAdapter`` for an SDK type, built once (building one costs
    far more than a validation)."""
    from pydantic import TypeAdapter

    return TypeAdapter(kind)


def never(body: dict[str, Any]) -> bool:
    return False


@attrs.frozen
class Corpus:
    """The recorded payloads of one provider, under ``data/providers/<name>``."""

    name: str

    @property
    def directory(self) -> Path:
        return Path(__file__).parent / "data" / "providers" / self.name

    @property
    def cases(self) -> list[Path]:
        return sorted(self.directory.glob("*.json"))

    def load(self, name: str) -> dict[str, Any]:
        """The payload of one recorded case."""
        case = json.loads((self.directory / name).read_text())
        return case["payload"]  # type: ignore[no-any-return]

    def normalizer(self) -> providers.Normalizer:
        return providers.get(self.name)


def anonymous(conversation: Conversation) -> list[Any]:
    """The conversation with ids and timestamps set aside."""
    return [attrs.evolve(c, id="x", timestamp=EPOCH) for c in conversation]  # type: ignore[misc]


def fields(body: dict[str, Any], names: tuple[str, ...]) -> dict[str, Any]:
    return {key: value for key, value in body.items() if key in names}


def check_corpus_size(cases: list[Path]) -> None:
    kinds = [json.loads(path.read_text())["kind"] for path in cases]
    assert kinds.count("request") >= 10
    assert kinds.count("response") >= 5


def check_recorded_round_trip(
    corpus: Corpus,
    path: Path,
    *,
    request_fields: tuple[str, ...],
    response_fields: tuple[str, ...] | None = None,
    is_error: Callable[[dict[str, Any]], bool] = never,
    check_rendered: Callable[[dict[str, Any]], None] | None = None,
    **options: Any,
) -> None:
    """Parse and render a recorded case, and parse the rendering again.

    A request renders back to its ``request_fields`` (with ``options``) and parses
    again to the same conversation; a response renders back to its
    ``response_fields`` (the whole body when None); an error body, as told by
    ``is_error``, is refused as malformed.
    """
    case = json.loads(path.read_text())
    assert case["source"] and case["provider"] == corpus.name
    body = case["payload"]
    normalizer = corpus.normalizer()
    if case["kind"] == "request":
        conversation = normalizer.parse_request(body)
        rendered = normalizer.render_request(conversation, **options)
        assert rendered == fields(body, request_fields)
        again = normalizer.parse_request(rendered)
        assert anonymous(again) == anonymous(conversation)
        if check_rendered is not None and "sdk_refuses" not in case:
            # (a peer body the SDK's types refuse goes back as it came all the same)
            check_rendered(rendered)
    elif is_error(body):
        with pytest.raises(providers.MalformedPayload):
            normalizer.parse_response(body)
    else:
        reply = normalizer.parse_response(body)
        expected = body if response_fields is None else fields(body, response_fields)
        assert normalizer.render_response(reply) == expected
