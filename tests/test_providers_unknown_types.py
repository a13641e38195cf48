"""Elements of types the normalizers do not know are kept whole, in their place.

For every recorded body of every provider, an element of a made-up type is
inserted at every position of every list of conversation elements (messages,
items, blocks, parts): the body is read, renders back to its provider exactly,
and every other provider either refuses it (``UnsupportedContent``) or reports
what it did with it.
"""

from __future__ import annotations

import copy
import json
import warnings
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

import canisters
from canisters import UnsupportedContent, providers, validation
from canisters.cli import run
from canisters.providers import bedrock_converse, gemini, ollama, openai_responses

from .providers_support import Corpus, fields
from .streams_support import all_streams

NAMES = (
    "anthropic",
    "openai-chat",
    "openai-responses",
    "open-responses",
    "gemini",
    "ollama",
    "bedrock-converse",
    "openai-chat-reasoning",
    "openrouter",
)

REQUEST_FIELDS = {
    "anthropic": ("system", "messages"),
    "bedrock-converse": bedrock_converse.REQUEST_FIELDS,
    "openai-chat": ("messages",),
    "openai-responses": openai_responses.REQUEST_FIELDS,
    "open-responses": openai_responses.REQUEST_FIELDS,
    "gemini": gemini.REQUEST_FIELDS,
    "ollama": ollama.REQUEST_FIELDS,
    "openai-chat-reasoning": ("messages",),
    "openrouter": ("messages",),
}
RESPONSE_FIELDS: dict[str, tuple[str, ...] | None] = {
    "anthropic": None,
    "bedrock-converse": None,
    "openai-chat": None,
    "openai-chat-reasoning": None,
    "openrouter": None,
    # A Responses reply goes back whole: its envelope is kept.
    "openai-responses": None,
    "open-responses": None,
    "gemini": gemini.RESPONSE_FIELDS,
    "ollama": ollama.RESPONSE_FIELDS,
}

# The made-up elements: a block, part or item of a type no provider has, and a
# message or turn of a role no provider has.
TYPED = {"type": "made_up_element", "payload": {"nested": [1, "two", None]}}
ROLE = {"role": "made_up_role", "content": "said by nobody"}
GEMINI_PART = {"madeUpPart": {"payload": [1, "two"]}}
GEMINI_TURN = {"role": "madeUpRole", "parts": [{"text": "said by nobody"}]}
BEDROCK_BLOCK = {"madeUpBlock": {"payload": [1, "two"]}}
BEDROCK_MESSAGE = {"role": "made_up_role", "content": [{"text": "said by nobody"}]}

# The lists of conversation elements, by the key holding them, and what goes in.
LISTS: dict[str, dict[str, dict[str, Any]]] = {
    "anthropic": {"system": TYPED, "content": TYPED},
    "openai-chat": {"messages": ROLE, "content": TYPED},
    "openai-chat-reasoning": {"messages": ROLE, "content": TYPED},
    "openrouter": {"messages": ROLE, "content": TYPED},
    "openai-responses": {"input": TYPED, "output": TYPED, "content": TYPED},
    "open-responses": {"input": TYPED, "output": TYPED, "content": TYPED},
    "gemini": {"contents": GEMINI_TURN, "parts": GEMINI_PART},
    "ollama": {"messages": ROLE},
    "bedrock-converse": {
        "system": BEDROCK_BLOCK,
        "messages": BEDROCK_MESSAGE,
        "content": BEDROCK_BLOCK,
    },
}


def _is_error(body: dict[str, Any]) -> bool:
    # A Responses reply says "error": null: a reply, not an error body.
    return (
        body.get("error") is not None or body.get("type") == "error" or "Error" in body
    )


def _positions(
    provider: str, value: Any, path: tuple[Any, ...] = ()
) -> Iterator[tuple[tuple[Any, ...], int, dict[str, Any]]]:
    """Each place an element can go: the path of a list, an index in it, and the
    element of a made-up type that goes there."""
    if isinstance(value, dict):
        for key, inner in value.items():
            element = LISTS[provider].get(key)
            if (
                element is not None
                and isinstance(inner, list)
                and all(isinstance(item, dict) for item in inner)
                and "functionResponse" not in path  # Gemini's media, not parts
                and "source" not in path  # an Anthropic document's own content
            ):
                for index in range(len(inner) + 1):
                    yield (*path, key), index, element
            yield from _positions(provider, inner, (*path, key))
    elif isinstance(value, list):
        for index, item in enumerate(value):
            yield from _positions(provider, item, (*path, index))


def _inserted(
    body: dict[str, Any], path: tuple[Any, ...], index: int, element: Any
) -> dict[str, Any]:
    changed = copy.deepcopy(body)
    target: Any = changed
    for step in path:
        target = target[step]
    target.insert(index, copy.deepcopy(element))
    return changed


def _cases() -> list[tuple[str, Path]]:
    found = []
    for name in NAMES:
        for path in Corpus(name).cases:
            case = json.loads(path.read_text())
            if not _is_error(case["payload"]):
                found.append((name, path))
    return found


CASES = _cases()


def _element_type(element: dict[str, Any]) -> str:
    return str(element.get("type") or element.get("role") or next(iter(element)))


@pytest.mark.parametrize(
    ("provider", "path"), CASES, ids=[f"{n}-{p.stem}" for n, p in CASES]
)
def test_an_element_of_unknown_type_is_kept_in_its_place(
    provider: str, path: Path
) -> None:
    case = json.loads(path.read_text())
    body = case["payload"]
    normalizer = providers.get(provider)
    request = case["kind"] == "request"
    # A body may end on a call not answered yet (Anthropic's, Ollama's
    # function-call-merge body): kept, as the body has it.
    options = {"incomplete": "keep"}
    if request:
        before = normalizer.parse_request(body)
    else:
        before = normalizer.parse_response(body)
    problems = sorted(p.code for p in validation.problems(before))
    tested = 0
    for where, index, element in _positions(provider, body):
        changed = _inserted(body, where, index, element)
        name = _element_type(element)
        if request:
            conversation = normalizer.parse_request(changed)
            assert normalizer.render_request(conversation, **options) == fields(
                changed, REQUEST_FIELDS[provider]
            ), (where, index)
        else:
            conversation = normalizer.parse_response(changed)
            wanted = RESPONSE_FIELDS[provider]
            expected = changed if wanted is None else fields(changed, wanted)
            assert normalizer.render_response(conversation) == expected, (where, index)
        # The element is no problem of the conversation's own.
        found = sorted(p.code for p in validation.problems(conversation))
        assert found == problems, (where, index)
        for target in NAMES:
            if target == provider:
                continue
            other = providers.get(target)
            report = providers.Report()
            try:
                other.render_request(conversation, report=report)
            except UnsupportedContent:
                pass  # refused, as asked by default
            else:
                assert report.events, (target, where, index)
            # Dropped as asked, and reported by its type, or (inside an element
            # kept whole, such as a server-tool block) with the element holding it.
            report = providers.Report()
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                other.render_request(conversation, unsupported="drop", report=report)
            assert any(
                name in event.where or provider in event.detail
                for event in report.events
            ), (target, where, index, report.events)
        tested += 1
    assert tested == len(list(_positions(provider, body)))


@pytest.mark.parametrize("provider", NAMES)
@pytest.mark.parametrize("policy", ["drop", "placeholder"])
def test_unknown_elements_follow_the_unsupported_option(
    provider: str, policy: str
) -> None:
    """Rendered for another provider, an element of unknown type is dropped or
    replaced by a placeholder as asked, and reported."""
    body = {
        "anthropic": {"messages": [{"role": "user", "content": [TYPED]}]},
        "openai-chat": {"messages": [{"role": "user", "content": [TYPED]}]},
        "openai-chat-reasoning": {"messages": [{"role": "user", "content": [TYPED]}]},
        "openrouter": {"messages": [{"role": "user", "content": [TYPED]}]},
        "openai-responses": {"input": [{"role": "user", "content": [TYPED]}]},
        "open-responses": {"input": [{"role": "user", "content": [TYPED]}]},
        "gemini": {"contents": [{"role": "user", "parts": [GEMINI_PART]}]},
        "ollama": {"messages": [ROLE]},
        "bedrock-converse": {
            "messages": [{"role": "user", "content": [BEDROCK_BLOCK]}]
        },
    }[provider]
    conversation = providers.get(provider).parse_request(body)
    for target in NAMES:
        if target == provider:
            continue
        report = providers.Report()
        with warnings.catch_warnings(record=True):
            warnings.simplefilter("always")
            rendered = providers.get(target).render_request(
                conversation, unsupported=policy, report=report
            )
        kinds = {"drop": "dropped", "placeholder": "placeholder"}
        assert [event.kind for event in report.events][:1] == [kinds[policy]]
        assert provider in report.events[0].detail
        text = json.dumps(rendered)
        assert ("omitted" in text) is (policy == "placeholder")
        assert "nested" not in text and "payload" not in text  # the element's own


def test_counts() -> None:
    """The corpus the property test runs over, per provider (in the test's ids)."""
    for name in NAMES:
        bodies = [path for n, path in CASES if n == name]
        assert bodies
        positions = sum(
            len(list(_positions(name, json.loads(p.read_text())["payload"])))
            for p in bodies
        )
        assert positions >= len(bodies)


# Streams ------------------------------------------------------------------------------

STREAMS = [s for s in all_streams() if s.provider in NAMES]


def _with_unknown(provider: str, events: list[Any], index: int) -> list[Any] | None:
    """The events with something of a made-up type at ``index``: an event of its
    own (Anthropic, Responses), or a field or part inside the event there (Chat,
    Gemini, Ollama, whose streams have no event types); ``None`` when that event
    has no place for one."""
    changed = copy.deepcopy(events)
    if provider == "anthropic":
        changed.insert(index, {"type": "made_up_event", "payload": {"a": 1}})
        return changed
    if provider == "openai-responses":
        changed.insert(index, {"type": "response.made_up_event", "sequence_number": 0})
        return changed
    if index == len(events):
        return None
    event = changed[index]
    if provider == "openai-chat":
        if not event.get("choices"):
            return None
        event["choices"][0].setdefault("delta", {})["made_up_field"] = {"a": 1}
    elif provider == "gemini":
        content = (event.get("candidates") or [{}])[0].get("content")
        if not isinstance(content, dict) or not isinstance(content.get("parts"), list):
            return None
        content["parts"].append(GEMINI_PART)
    else:
        if "message" not in event:
            return None
        event["message"]["made_up_field"] = "kept"
    return changed


@pytest.mark.parametrize("stream", STREAMS, ids=[s.id for s in STREAMS])
def test_a_stream_with_unknown_events_or_parts_is_read(stream: Any) -> None:
    """An accumulator never fails a stream for an event, field or part of a
    type it does not know: an event that carries nothing it skips, a part it
    keeps whole."""
    events = stream.events()
    normalizer = providers.get(stream.provider)
    try:
        expected = normalizer.render_response(normalizer.parse_stream(events))
    except providers.MalformedPayload:
        pytest.skip("a recorded stream the accumulator refuses on its own")
    tested = 0
    for index in range(len(events) + 1):
        changed = _with_unknown(stream.provider, events, index)
        if changed is None:
            continue
        rendered = normalizer.render_response(normalizer.parse_stream(changed))
        if stream.provider in ("anthropic", "openai-responses"):
            assert rendered == expected, index  # the event skipped
        else:
            assert "made_up_field" in json.dumps(rendered) or "madeUpPart" in (
                json.dumps(rendered)
            ), index  # the field or part kept
        tested += 1
    assert tested


def test_an_anthropic_block_and_delta_of_unknown_types_are_kept() -> None:
    """A block of a type the accumulator does not know grows by its deltas as
    the SDK's does: text fields appended, other fields set (the compaction
    block and its compaction_delta, streamed as the compaction docs show)."""
    events = [
        {
            "type": "message_start",
            "message": {
                "id": "msg_1",
                "type": "message",
                "role": "assistant",
                "model": "claude-opus-4-6",
                "content": [],
                "stop_reason": None,
                "stop_sequence": None,
                "usage": {"input_tokens": 10, "output_tokens": 1},
            },
        },
        {
            "type": "content_block_start",
            "index": 0,
            "content_block": {"type": "compaction", "content": None},
        },
        {
            "type": "content_block_delta",
            "index": 0,
            "delta": {"type": "compaction_delta", "content": "Summary: a web"},
        },
        {
            "type": "content_block_delta",
            "index": 0,
            "delta": {"type": "compaction_delta", "content": " scraper"},
        },
        {"type": "content_block_stop", "index": 0},
        {
            "type": "content_block_start",
            "index": 1,
            "content_block": {"type": "text", "text": ""},
        },
        {
            "type": "content_block_delta",
            "index": 1,
            "delta": {"type": "text_delta", "text": "Based on our conversation"},
        },
        {"type": "content_block_stop", "index": 1},
        {
            "type": "message_delta",
            "delta": {"stop_reason": "end_turn", "stop_sequence": None},
            "usage": {"output_tokens": 5},
        },
        {"type": "message_stop"},
    ]
    normalizer = providers.get("anthropic")
    reply = normalizer.parse_stream(events)
    assert normalizer.render_response(reply)["content"] == [
        {"type": "compaction", "content": "Summary: a web scraper"},
        {"type": "text", "text": "Based on our conversation"},
    ]


# Shown, stored and read back ----------------------------------------------------------


@pytest.mark.parametrize(
    ("provider", "name", "shown"),
    [
        ("anthropic", "peer-langchain-search-result-request.json", "[search_result"),
        ("openai-chat", "qwen-video-url-part-request.json", "[video_url"),
        (
            "openai-responses",
            "codex-lite-additional-tools-request.json",
            "[additional_tools",
        ),
        (
            "gemini",
            "tool-combination-tool-call-response-parts-request.json",
            "[toolCall",
        ),
        ("ollama", "granite-control-thinking-request.json", "[control"),
    ],
)
def test_show_names_each_kept_element_and_its_provider(
    provider: str, name: str, shown: str, tmp_path: Path, capsys: Any
) -> None:
    """``canisters show`` shows an element kept whole as what it is: its type
    and the provider it goes back to; a canisters document keeps it, and
    renders back to the same body."""
    body = Corpus(provider).load(name)
    conversation = providers.get(provider).parse_request(body)
    document = tmp_path / "conversation.json"
    document.write_text(canisters.to_json(conversation))
    assert run(["--no-color", "show", str(document)]) == 0
    assert f"{shown} · kept whole for {provider}]" in capsys.readouterr().out
    again = canisters.from_json(document.read_text())
    assert providers.get(provider).render_request(again, incomplete="keep") == fields(
        body, REQUEST_FIELDS[provider]
    )
