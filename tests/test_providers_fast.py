"""The fast way of rendering a request gives exactly what the general way gives.

Normalizers render canisters without extras for their provider in one pass (the
fast way) and everything else the general way. For every input both must agree:
the same body (key order included), the same report, the same warnings, or the
same error.
"""

from __future__ import annotations

import importlib.util
import json
import sys
import warnings
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import attrs
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import canisters as c
from canisters import CanistersError, Conversation, providers
from canisters.protocols import Role
from canisters.providers import (
    anthropic,
    gemini,
    ollama,
    openai_chat,
    openai_responses,
)

from . import strategies
from .budget import examples

Render = Callable[..., dict[str, Any]]

FAST: dict[str, Render] = {
    "anthropic": anthropic.messages.render_request,
    "gemini": gemini.messages.render_request,
    "ollama": ollama.messages.render_request,
    "openai-chat": openai_chat.messages.render_request,
    "openai-responses": openai_responses.messages.render_request,
}
DATA = Path(__file__).parent / "data" / "providers"
BENCHMARKS = Path(__file__).resolve().parent.parent / ".auxiliary" / "benchmarks"


def _png_resolver(source: str) -> bytes:
    return b"\x89PNG\r\n\x1a\n" + source.encode()


def _ordered(value: Any) -> Any:
    """The value with every mapping turned into its list of items: key order counts."""
    if isinstance(value, Mapping):
        return [(key, _ordered(item)) for key, item in value.items()]
    if isinstance(value, (list, tuple)):
        return [_ordered(item) for item in value]
    return value


def _outcome(
    render: Render, conversation: Any, options: dict[str, Any], *, fast: bool
) -> tuple[Any, ...]:
    report = providers.Report()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            body = render(conversation, {**options, "report": report}, fast=fast)
        except CanistersError as error:
            result: Any = ("error", type(error), str(error))
        else:
            result = ("body", _ordered(body), json.dumps(body, default=repr))
    return (
        result,
        report.events,
        [(warning.category, str(warning.message)) for warning in caught],
    )


def check_same(name: str, conversation: Any, **options: Any) -> None:
    """Render both ways, with a report and without, and compare everything."""
    render = FAST[name]
    assert _outcome(render, conversation, options, fast=True) == _outcome(
        render, conversation, options, fast=False
    )
    plain: list[Any] = []
    for fast in (True, False):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            try:
                plain.append(_ordered(render(conversation, options, fast=fast)))
            except CanistersError as error:
                plain.append((type(error), str(error)))
    assert plain[0] == plain[1]


def _without_extras(conversation: Any) -> Conversation:
    """The conversation with every canister's and part's extras left out."""
    items = []
    for canister in conversation:
        changes: dict[str, Any] = {"extras": {}}
        content = getattr(canister, "content", None)
        if content is not None:
            changes["content"] = tuple(
                attrs.evolve(part, extras={}) for part in content
            )
        items.append(attrs.evolve(canister, **changes))
    return Conversation(items)


@st.composite
def paired(draw: st.DrawFn) -> Conversation:
    """A conversation whose results often answer its invocations, in few steps."""
    items = list(draw(strategies.conversations))
    calls = [
        canister.invocation_id  # type: ignore[attr-defined]
        for canister in items
        if canister.role is Role.Invocation
    ]
    for index, canister in enumerate(items):
        changes: dict[str, Any] = {"step": draw(st.none() | st.integers(0, 2))}
        if canister.role is Role.Result and calls and draw(st.booleans()):
            changes["invocation_id"] = draw(st.sampled_from(calls))
        items[index] = attrs.evolve(canister, **changes)
    return Conversation(items)


plain_texts = st.builds(
    c.Text, st.sampled_from(["", "hi", "two words", '{"error": "not one"}'])
)
single_texts = plain_texts.map(lambda part: (part,))
contents = st.one_of(
    single_texts,
    single_texts,
    st.lists(plain_texts | strategies.parts, max_size=3).map(tuple),
)
call_ids = st.sampled_from(["call_1", "call_2", "toolu-3", "call.4"])
steps = st.none() | st.integers(0, 1)
few_extras = st.just({}) | st.sampled_from(
    [
        {"gemini": {"x": 1}},
        {"anthropic": {"split": True}},
        {"anthropic": {"content": "list"}},
        {"openai-chat": {"content": "list"}},
        {"openai-chat": {"split": True}},
    ]
)


@st.composite
def shaped(draw: st.DrawFn) -> Conversation:
    """A conversation shaped like an agent loop: instructions, user turns and
    documents, assistant turns with calls in one step or another and their results
    (some missing, some orphaned); mostly plain texts, extras now and then, media,
    reasoning and errors among."""

    def envelope(step: int | None) -> dict[str, Any]:
        return {"step": step, "extras": draw(few_extras)}

    items: list[Any] = []
    for _ in range(draw(st.integers(0, 6))):
        kind = draw(
            st.sampled_from(
                ["supervisor", "user", "document", "turn", "turn", "turn", "result"]
            )
        )
        if kind == "turn":
            step = draw(steps)
            if draw(st.booleans()):
                items.append(c.Assistant(draw(contents), **envelope(step)))
            calls = []
            for _ in range(draw(st.integers(0, 2))):
                call = draw(call_ids)
                calls.append(call)
                items.append(
                    c.Invocation(
                        draw(strategies.names),
                        draw(st.just({}) | strategies.arguments),
                        invocation_id=call,
                        **envelope(draw(st.just(step) | steps)),
                    )
                )
            for call in calls:
                if draw(st.integers(0, 4)):
                    items.append(
                        c.Result(
                            call,
                            "",
                            draw(contents),
                            draw(strategies.errors),
                            **envelope(draw(st.just(step) | steps)),
                        )
                    )
        elif kind == "result":
            items.append(c.Result(draw(call_ids), "", draw(contents), **envelope(None)))
        elif kind == "document":
            items.append(
                c.Document(
                    draw(contents), draw(st.none() | st.just("A")), **envelope(None)
                )
            )
        else:
            cls = c.User if kind == "user" else c.Supervisor
            items.append(cls(draw(contents), **envelope(None)))
    return Conversation(items)


options = st.fixed_dictionaries(
    {},
    optional={
        "unsupported": st.sampled_from(["error", "drop", "placeholder"]),
        "media_labels": st.booleans(),
        "incomplete": st.sampled_from(["skip", "error", "keep"]),
        "reasoning": st.sampled_from(["drop", "text"]),
        "resolver": st.just(_png_resolver),
    },
)
any_conversation = (
    shaped()
    | shaped()
    | strategies.conversations
    | paired()
    | strategies.conversations.map(_without_extras)
    | paired().map(_without_extras)
)


@pytest.mark.parametrize("name", sorted(FAST))
@settings(
    max_examples=examples(600),
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)
@given(conversation=any_conversation, chosen=options)
def test_fast_is_general(
    name: str, conversation: Conversation, chosen: dict[str, Any]
) -> None:
    check_same(name, conversation, **chosen)


PNG = c.Image(data=b"\x89PNG\r\n\x1a\n", hint="a dot")
EDGES = {
    "empty text then a text": [c.User(""), c.User("hi")],
    "empty content then a text": [c.Assistant(()), c.Assistant("hi")],
    "empty document then a text": [c.Document(()), c.User("hi")],
    "instructions between turns": [
        c.User("a"),
        c.Supervisor("be brief"),
        c.User((c.Text("b"), c.Audio(data=b"RIFF0000WAVE"))),
        c.Supervisor((c.Text("c"), PNG)),
    ],
    "calls in another step": [
        c.Assistant("x", step=0),
        c.Invocation("f", {}, invocation_id="call_1", step=1),
        c.Invocation("g", {"a": [1]}, invocation_id="call 2", step=1),
        c.Result("call_1", "f", "one", step=1),
        c.Result("call 2", "g", "two", step=1),
    ],
    "media in results, then a call": [
        c.Invocation("f", {}, invocation_id="call_1"),
        c.Result("call_1", "f", (c.Text("see"), PNG)),
        c.Invocation("g", {}, invocation_id="call_2", step=3),
        c.Result("call_2", "g", (PNG,)),
        c.User("thanks"),
    ],
    "errors": [
        c.Invocation("f", {}, invocation_id="call_1"),
        c.Result("call_1", "f", "boom", c.ErrorInfo("TOOL_ERROR", "bad")),
        c.Invocation("g", {}, invocation_id="call_2"),
        c.Result("call_2", "g", (), c.ErrorInfo("TIMEOUT", "slow", True)),
    ],
    "reasoning": [
        c.Assistant((c.Reasoning("hmm", signature="sig", provider="anthropic"),)),
        c.Assistant((c.Reasoning("hmm"), c.Text("x"))),
    ],
    # A reasoning model's turns (what OpenAI Responses writes in one pass).
    "reasoning and texts": [
        c.User("q"),
        c.Assistant(
            (
                c.Reasoning("plan", None, "enc", "openai-responses", id="rs_1"),
                c.Text("a"),
                c.Text(""),
            )
        ),
        c.Assistant((c.Text("b"), c.Reasoning("", None, "x", "openai-responses"))),
        c.Assistant((c.Reasoning("only", provider="openai-responses"),)),
        c.Assistant((c.Text("c", extras={"anthropic": {"k": 1}}), c.Text("d"))),
        c.Assistant((c.Text("e"), c.Reasoning("other", provider="gemini"))),
        c.Assistant((c.Text("f", mime_type="text/markdown"), c.Text("g"))),
        # Extended thinking (what Anthropic writes in one pass).
        c.Assistant(
            (
                c.Reasoning("think", "sig", None, "anthropic"),
                c.Text("h"),
                c.Reasoning("", None, "blob", "anthropic"),
            )
        ),
        c.Assistant((c.Reasoning("", "sig", None, "anthropic"), c.Text("i"))),
        c.Assistant((c.Reasoning("unsigned", provider="anthropic"), c.Text("j"))),
        c.Assistant((c.Reasoning("t", "sig", None, "anthropic"), c.Text(""))),
        c.User("again"),
        c.Assistant(
            (c.Reasoning("t", "sig", None, "anthropic", extras={"x": {}}), c.Text("k"))
        ),
        # Gemini's thoughts (what Gemini writes in one pass).
        c.Assistant((c.Reasoning("think", "c2ln", None, "gemini"), c.Text("l"))),
        c.Assistant(
            (c.Reasoning("unsigned", provider="gemini"), c.Text("m"), c.Text(""))
        ),
        c.User((c.Reasoning("a user's", "c2ln", None, "gemini"), c.Text("n"))),
        c.Assistant(
            (
                c.Reasoning(
                    "t", "c2ln", None, "gemini", extras={"gemini": {"part": {}}}
                ),
                c.Text("o"),
            )
        ),
    ],
    # User parts the one pass writes itself (texts and images), and their edges.
    "user media": [
        c.User((c.Text("a"), c.Image(url="https://example.com/a.png"))),
        c.User((c.Image(data=b"\x89PNG\r\n\x1a\n", mime_type="image/png"),)),
        c.User((c.Text("b"), c.Image(url="data:image/png;base64,iVBORw0KGgo="))),
        c.User((c.Text("c"), c.Image(data=b"\x89PNG\r\n\x1a\n"))),
        c.User((c.Image(data=b"\xff\xd8\xff", mime_type="image/jpeg", hint="x"),)),
        c.User((c.Text(""), c.Text("f"))),
        c.User((c.Text("g"), PNG)),
        c.User((c.Text("h", extras={"gemini": {"thought": False}}), c.Text("i"))),
        c.User(()),
    ],
    "user media refused": [
        c.User((c.Text("a"), c.Image(url="https://example.com/a.png"))),
        c.User((c.Image(data=b"BM0000", mime_type="image/bmp"), c.Text("d"))),
        c.User((c.Image(url="gs://bucket/b.png"), c.Text("e"))),
        c.User((c.Text("j"), c.Audio(data=b"RIFF0000WAVE"))),
        c.Assistant((c.Text("k"), c.Image(url="https://example.com/k.png"))),
    ],
}


@pytest.mark.parametrize("name", sorted(FAST))
@pytest.mark.parametrize("edge", sorted(EDGES))
def test_fast_is_general_on_edges(name: str, edge: str) -> None:
    for chosen in (
        {},
        {"unsupported": "placeholder"},
        {"unsupported": "drop", "reasoning": "text", "media_labels": True},
    ):
        check_same(name, Conversation(EDGES[edge]), **chosen)


def _recorded() -> list[Path]:
    """Every recorded body that holds a conversation (not HTTP error bodies)."""
    return sorted(
        path
        for path in DATA.glob("*/*.json")
        if "error" not in json.loads(path.read_text(encoding="utf-8"))["payload"]
    )


@pytest.mark.parametrize("name", sorted(FAST))
@pytest.mark.parametrize("path", _recorded(), ids=lambda p: f"{p.parent.name}/{p.stem}")
def test_fast_is_general_on_recorded_bodies(path: Path, name: str) -> None:
    case = json.loads(path.read_text(encoding="utf-8"))
    source = providers.get(case["provider"])
    parse = source.parse_request if case["kind"] == "request" else source.parse_response
    conversation = parse(case["payload"])
    for variant in (conversation, _without_extras(conversation)):
        for chosen in (
            {},
            {"unsupported": "placeholder"},
            {"unsupported": "drop", "reasoning": "text", "media_labels": True},
            {"incomplete": "keep"},
        ):
            check_same(name, variant, **chosen)


def _benchmark_corpus() -> list[Conversation]:
    loaded = {}
    sys.path.insert(0, str(BENCHMARKS))
    try:
        for module in ("corpus", "peers"):
            spec = importlib.util.spec_from_file_location(
                f"_fast_{module}", BENCHMARKS / f"{module}.py"
            )
            assert spec is not None and spec.loader is not None
            loaded[module] = importlib.util.module_from_spec(spec)
            sys.modules.setdefault(module, loaded[module])
            spec.loader.exec_module(loaded[module])
    finally:
        sys.path.remove(str(BENCHMARKS))
    specs = loaded["corpus"].corpus(800) + loaded["corpus"].chat_corpus(300)
    return [loaded["peers"].canisters_from_specs(s) for s in specs]


@pytest.mark.parametrize("name", sorted(FAST))
def test_fast_is_general_on_the_benchmark_corpus(name: str) -> None:
    for conversation in _benchmark_corpus():
        check_same(name, conversation)
        check_same(name, conversation, media_labels=True, unsupported="placeholder")
        # Cut anywhere: pairs left incomplete are skipped, kept, or refused.
        cut = Conversation(list(conversation)[: len(conversation) // 2 + 1])
        for incomplete in ("skip", "keep", "error"):
            check_same(name, cut, incomplete=incomplete)


PLAIN = Conversation(
    [
        c.Supervisor("be brief"),
        c.User((c.Text("look"), c.Image(url="https://example.com/a.png"))),
        c.Assistant("a cat", step=1),
        c.Invocation("search", {"q": "cats"}, invocation_id="call_1", step=1),
        c.Result("call_1", "search", "cats are cats", step=1),
    ]
)
FAST_WAY = {
    "anthropic": "canisters.providers.anthropic.fast:_render_plain_messages",
    "gemini": "canisters.providers.gemini.fast:_plain_contents",
    # The one-pass module, which the general one never imports.
    "openai-chat": "canisters.providers.openai_chat.fast:_render_plain_messages",
    "openai-responses": "canisters.providers.openai_responses.fast:_plain_items",
}


@pytest.mark.parametrize("name", sorted(FAST_WAY))
def test_canisters_without_extras_take_the_fast_way(
    name: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    module, _, way = FAST_WAY[name].rpartition(":")
    owner: Any = sys.modules[module or FAST[name].__module__]
    *path, attribute = way.split(".")
    for step in path:
        owner = getattr(owner, step)
    fast_way = getattr(owner, attribute)
    calls: list[object] = []

    def spy(*args: Any, **kwargs: Any) -> Any:
        rendered = fast_way(*args, **kwargs)
        if rendered is not None:  # a trial that gave up did not render
            calls.append(args)
        return rendered

    monkeypatch.setattr(owner, attribute, spy)
    normalizer = providers.get(name)
    normalizer.render_request(PLAIN)
    assert len(calls) == 1
    # Other providers' extras do not matter; the provider's own send it the
    # general way.
    other = "anthropic" if name == "gemini" else "gemini"
    foreign = attrs.evolve(PLAIN[2], extras={other: {"x": 1}})
    normalizer.render_request(Conversation([*PLAIN[:2], foreign]))
    assert len(calls) == 2
    own = attrs.evolve(PLAIN[2], extras={name: {"message": {"name": "bot"}}})
    normalizer.render_request(Conversation([*PLAIN[:2], own]))
    assert len(calls) == 2


def _calls(
    monkeypatch: pytest.MonkeyPatch, owner: Any, name: str
) -> list[tuple[Any, ...]]:
    """The arguments of each call of the general renderer's method ``name``."""
    general = getattr(owner, name)
    calls: list[tuple[Any, ...]] = []

    def spy(self: Any, *args: Any, **kwargs: Any) -> Any:
        calls.append(args)
        return general(self, *args, **kwargs)

    monkeypatch.setattr(owner, name, spy)
    return calls


ONE_PASS = [
    # A reasoning model's turn to OpenAI Responses: reasoning items beside it.
    (
        "openai-responses",
        "items",
        (c.Reasoning("plan", None, "enc", "openai-responses", id="rs_1"), c.Text("a")),
        lambda body: body["input"],
        [
            {"role": "user", "content": "q"},
            {
                "type": "reasoning",
                "id": "rs_1",
                "summary": [{"type": "summary_text", "text": "plan"}],
                "encrypted_content": "enc",
            },
            {"role": "assistant", "content": "a"},
        ],
    ),
    # Extended thinking to Anthropic: signed and redacted thinking blocks.
    (
        "anthropic",
        "parts",
        (
            c.Reasoning("plan", "sig", None, "anthropic"),
            c.Text("a"),
            c.Reasoning("", None, "blob", "anthropic"),
        ),
        lambda body: body["messages"][1],
        {
            "role": "assistant",
            "content": [
                {"type": "thinking", "thinking": "plan", "signature": "sig"},
                {"type": "text", "text": "a"},
                {"type": "redacted_thinking", "data": "blob"},
            ],
        },
    ),
    # Gemini's thoughts: a thought part with its signature, then the texts.
    (
        "gemini",
        "content_parts",
        (c.Reasoning("plan", "c2ln", None, "gemini"), c.Text("a"), c.Text("b")),
        lambda body: body["contents"][1],
        {
            "role": "model",
            "parts": [
                {"text": "plan", "thought": True, "thoughtSignature": "c2ln"},
                {"text": "a"},
                {"text": "b"},
            ],
        },
    ),
]


@pytest.mark.parametrize(
    ("name", "general", "parts", "sent_as", "expected"),
    ONE_PASS,
    ids=[case[0] for case in ONE_PASS],
)
def test_a_reasoning_models_turns_render_in_one_pass(
    monkeypatch: pytest.MonkeyPatch,
    name: str,
    general: str,
    parts: tuple[Any, ...],
    sent_as: Any,
    expected: Any,
) -> None:
    module: Any = sys.modules[FAST[name].__module__]
    sent = _calls(monkeypatch, module._Renderer, general)
    normalizer = providers.get(name)
    body = normalizer.render_request(Conversation([c.User("q"), c.Assistant(parts)]))
    assert sent == []
    assert sent_as(body) == expected
    # Another provider's reasoning sends the turn the general way.
    other = "gemini" if name == "anthropic" else "anthropic"
    turn = c.Assistant((c.Reasoning("plan", "sig", None, other), c.Text("a")))
    normalizer.render_request(Conversation([c.User("q"), turn]), reasoning="text")
    assert len(sent) == 1
