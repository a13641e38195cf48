"""The provider conformance suite: the tests every normalizer must pass.

The library runs it against each built-in normalizer with its recorded corpus; a
plugin runs it too, from its own test suite (pytest and hypothesis installed),
by subclassing :class:`NormalizerConformance` and giving its normalizer and
corpus::

    import pytest
    from canisters.providers.testing import Corpus, NormalizerConformance

    class TestMyFormat(NormalizerConformance):
        @pytest.fixture
        def normalizer(self):
            return MyNormalizer()

        @pytest.fixture
        def corpus(self):
            return Corpus.from_directory("tests/data/my-format")

What it holds a normalizer to, on every body of the corpus:

- exact round trips in its own format: conversations
  (``render_request(parse_request(body))``), whole requests, replies and error
  bodies give back the body they were read from;
- a stream's events accumulate to the reply: event by event as at once, and as
  the same reply sent whole, when the corpus pairs them;
- every whole request renders for every other format (``targets``): the target
  reads what it was given, or the render is refused with the library's error
  (:class:`~canisters.UnsupportedContent` under ``unsupported="error"``);
  under ``unsupported="drop"`` it is sent, with what changed in the report;
- an element of a type the format does not know is kept: it renders back
  exactly, and another format refuses it or reports it;
- a body mutated at random (a value replaced, a key removed) is read or refused
  with the library's own error, never a bare ``KeyError`` or ``TypeError``.

Every check uses the public API of :mod:`canisters.providers` only.
"""

from __future__ import annotations

import contextlib
import copy
import json
import warnings
from collections.abc import Callable, Iterator, Mapping
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import attrs
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ..conversation import Conversation
from ..exceptions import CanistersError, UnsupportedContent
from . import (
    ErrorNormalizer,
    Normalizer,
    Report,
    RequestNormalizer,
    StreamingNormalizer,
    get,
)
from .streams import read_events

__all__ = ["BUILT_IN", "Corpus", "NormalizerConformance"]

BUILT_IN = (
    "anthropic",
    "bedrock-converse",
    "gemini",
    "ollama",
    "openai-chat",
    "openai-chat-reasoning",
    "openai-responses",
    "open-responses",
    "openrouter",
)
"""The built-in formats, the default targets of the cross-format renders."""


@attrs.frozen
class Corpus:
    """The bodies a normalizer is held to, each by a name that failures show.

    ``request_fields`` and ``response_fields`` are the top-level keys that
    ``render_request`` and ``render_response`` write (``None``: the whole
    response body). ``streams`` maps a name to the stream's events (decoded
    JSON values, or the raw wire text, read with
    :func:`~canisters.providers.streams.read_events`) and the same reply sent
    whole, where known. ``unknown`` holds request bodies with an element of a
    type the format does not know.
    """

    requests: Mapping[str, Any] = attrs.field(factory=dict)
    """Request bodies, read whole and for their conversation."""
    responses: Mapping[str, Any] = attrs.field(factory=dict)
    """Response bodies."""
    errors: Mapping[str, tuple[Any, int | None]] = attrs.field(factory=dict)
    """Error bodies with the HTTP status they came with (``None`` for a
    stream's error event)."""
    streams: Mapping[str, tuple[Any, Any]] = attrs.field(factory=dict)
    """Streams: the events, and the same reply sent whole (or ``None``)."""
    unknown: Mapping[str, Any] = attrs.field(factory=dict)
    """Request bodies holding an element of a type the format does not know."""
    request_fields: tuple[str, ...] = ("messages",)
    """The top-level keys of a request that hold the conversation."""
    response_fields: tuple[str, ...] | None = None
    """The keys of a response that ``render_response`` writes (``None``: all)."""
    targets: tuple[str, ...] = BUILT_IN
    """The formats the cross-format renders go to."""

    @classmethod
    def from_directory(cls, directory: str | Path, **fields: Any) -> Corpus:
        """Read a corpus laid out as the library's own (``tests/data``): each
        ``*.json`` an object whose ``kind`` is ``"request"`` or ``"response"``
        and whose ``payload`` is the body; ``errors/*.json`` with ``payload``
        and ``status``; ``streams/*.sse`` or ``*.ndjson`` (wire text), each
        with its ``<name>.response.json`` when the same reply was also sent
        whole. ``fields`` are the other fields of :class:`Corpus`."""
        root = Path(directory)
        found: dict[str, dict[str, Any]] = {"request": {}, "response": {}}
        for path in sorted(root.glob("*.json")):
            case = json.loads(path.read_text(encoding="utf-8"))
            found[case["kind"]][path.stem] = case["payload"]
        errors = {}
        for path in sorted(root.glob("errors/*.json")):
            case = json.loads(path.read_text(encoding="utf-8"))
            errors[path.stem] = (case["payload"], case["status"])
        streams = {}
        for path in sorted(root.glob("streams/*")):
            if path.suffix in (".sse", ".ndjson"):
                whole = path.with_suffix(".response.json")
                reply = json.loads(whole.read_text()) if whole.exists() else None
                streams[path.stem] = (path.read_bytes(), reply)
        return cls(
            requests=found["request"],
            responses=found["response"],
            errors=errors,
            streams=streams,
            **fields,
        )


def _exact(value: Any) -> str:
    """A JSON form telling apart what ``==`` confuses (``1.0``, ``1``, ``True``)."""
    return json.dumps(value, sort_keys=True, ensure_ascii=False)


_EPOCH = datetime(2000, 1, 1, tzinfo=timezone.utc)


def _anonymous(conversation: Conversation) -> list[Any]:
    """The canisters without their ids and timestamps, which every read makes."""
    return [attrs.evolve(c, id="x", timestamp=_EPOCH) for c in conversation]  # type: ignore[misc]


def _events(raw: Any) -> list[Any]:
    return list(read_events(raw)) if isinstance(raw, (bytes, str)) else list(raw)


def _mutations(body: Any, path: tuple[Any, ...] = ()) -> Iterator[tuple[Any, ...]]:
    """The path of every value in ``body``."""
    yield path
    if isinstance(body, Mapping):
        for key, value in body.items():
            yield from _mutations(value, (*path, key))
    elif isinstance(body, list):
        for index, value in enumerate(body):
            yield from _mutations(value, (*path, index))


_JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=8),
    lambda inner: (
        st.lists(inner, max_size=3)
        | st.dictionaries(st.text(max_size=8), inner, max_size=3)
    ),
    max_leaves=6,
)


class NormalizerConformance:
    """The conformance tests; subclass and override the ``normalizer`` and
    ``corpus`` fixtures."""

    @pytest.fixture
    def normalizer(self) -> Normalizer:
        """The normalizer under test."""
        raise NotImplementedError("override the normalizer fixture")

    @pytest.fixture
    def corpus(self) -> Corpus:
        """Its corpus."""
        raise NotImplementedError("override the corpus fixture")

    # Its own format ----------------------------------------------------------

    def test_conversations_round_trip(
        self, normalizer: Normalizer, corpus: Corpus
    ) -> None:
        for name, body in corpus.requests.items():
            wanted = {k: body[k] for k in corpus.request_fields if k in body}
            report = Report()
            rendered = normalizer.render_request(
                normalizer.parse_request(body), incomplete="keep", report=report
            )
            assert _exact(rendered) == _exact(wanted), name
            assert report.events == [], name

    def test_whole_requests_round_trip(
        self, normalizer: Normalizer, corpus: Corpus
    ) -> None:
        if not isinstance(normalizer, RequestNormalizer):
            pytest.skip("not a RequestNormalizer")
        for name, body in corpus.requests.items():
            request = normalizer.parse_full_request(body)
            rendered = normalizer.render_full_request(request, incomplete="keep")
            assert _exact(rendered) == _exact(body), name

    def test_replies_round_trip(self, normalizer: Normalizer, corpus: Corpus) -> None:
        fields = corpus.response_fields
        for name, body in corpus.responses.items():
            wanted = (
                body if fields is None else {k: body[k] for k in fields if k in body}
            )
            rendered = normalizer.render_response(normalizer.parse_response(body))
            assert _exact(rendered) == _exact(wanted), name

    def test_errors_round_trip(self, normalizer: Normalizer, corpus: Corpus) -> None:
        if not isinstance(normalizer, ErrorNormalizer):
            pytest.skip("not an ErrorNormalizer")
        for name, (body, status) in corpus.errors.items():
            reply = normalizer.parse_error(body, status=status)
            assert reply.provider == normalizer.name, name
            assert reply.status == status, name
            written_status, written = normalizer.render_error(reply)
            one = body[0] if isinstance(body, list) and len(body) == 1 else body
            assert written == one, name
            assert status is None or written_status == status, name

    def test_streams_accumulate_to_the_reply(
        self, normalizer: Normalizer, corpus: Corpus
    ) -> None:
        if not isinstance(normalizer, StreamingNormalizer):
            pytest.skip("not a StreamingNormalizer")
        for name, (raw, whole) in corpus.streams.items():
            events = _events(raw)
            reply = normalizer.parse_stream(events)
            accumulator = normalizer.accumulator()
            for event in events:
                accumulator.feed(event)
            assert accumulator.complete, name
            assert _anonymous(accumulator.finish()) == _anonymous(reply), name
            again = normalizer.parse_response(normalizer.render_response(reply))
            assert _anonymous(again) == _anonymous(reply), name
            if whole is not None:
                sent = normalizer.parse_response(whole)
                assert _anonymous(reply) == _anonymous(sent), name

    # Across formats ----------------------------------------------------------

    def test_requests_render_for_every_format(
        self, normalizer: Normalizer, corpus: Corpus
    ) -> None:
        if not isinstance(normalizer, RequestNormalizer):
            pytest.skip("not a RequestNormalizer")
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            for name, body in corpus.requests.items():
                request = normalizer.parse_full_request(body)
                for target_name in corpus.targets:
                    target = get(target_name)
                    assert isinstance(target, RequestNormalizer), target_name
                    where = f"{name} -> {target_name}"
                    try:
                        sent = target.render_full_request(request, unsupported="error")
                    except UnsupportedContent:
                        sent = None  # refused, as asked: what else goes?
                    except CanistersError:
                        continue  # refused with the library's own error
                    report = Report()
                    try:
                        dropped = target.render_full_request(
                            request, unsupported="drop", report=report
                        )
                    except CanistersError:
                        continue  # refused with the library's own error
                    if sent is not None:
                        assert dropped == sent, where
                    else:
                        assert report.events, where
                    target.parse_full_request(dropped)

    def test_unknown_types_are_kept(
        self, normalizer: Normalizer, corpus: Corpus
    ) -> None:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            for name, body in corpus.unknown.items():
                conversation = normalizer.parse_request(body)
                wanted = {k: body[k] for k in corpus.request_fields if k in body}
                rendered = normalizer.render_request(conversation, incomplete="keep")
                assert _exact(rendered) == _exact(wanted), name
                for target_name in corpus.targets:
                    target = get(target_name)
                    with pytest.raises(UnsupportedContent):
                        target.render_request(conversation, unsupported="error")
                    report = Report()
                    target.render_request(
                        conversation, unsupported="drop", report=report
                    )
                    assert report.events, f"{name} -> {target_name}"

    # Anything at all ---------------------------------------------------------

    def test_mutated_bodies_raise_only_the_librarys_errors(
        self, normalizer: Normalizer, corpus: Corpus
    ) -> None:
        bodies = [
            *corpus.requests.values(),
            *corpus.responses.values(),
            *(body for body, _ in corpus.errors.values()),
        ]
        if not bodies:
            pytest.skip("an empty corpus")
        readers: list[Callable[[Any], object]] = [
            normalizer.parse_request,
            normalizer.parse_response,
        ]
        if isinstance(normalizer, RequestNormalizer):
            readers.append(normalizer.parse_full_request)
        if isinstance(normalizer, ErrorNormalizer):
            readers.append(normalizer.parse_error)

        @settings(
            max_examples=100,
            deadline=None,
            database=None,
            suppress_health_check=list(HealthCheck),
        )
        @given(st.data())
        def check(data: st.DataObject) -> None:
            body = copy.deepcopy(data.draw(st.sampled_from(bodies)))
            path = data.draw(st.sampled_from(list(_mutations(body))))
            if path:
                holder = body
                for step in path[:-1]:
                    holder = holder[step]
                if data.draw(st.booleans()) and isinstance(holder, dict):
                    del holder[path[-1]]
                else:
                    holder[path[-1]] = data.draw(_JSON)
            else:
                body = data.draw(_JSON)
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                for reader in readers:
                    with contextlib.suppress(CanistersError):
                        reader(body)

        check()
