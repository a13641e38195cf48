"""The fast way of parsing a request gives exactly what the general way gives.

Parsers build the canisters of the commonest wire shapes (a message holding one
string, tool calls with compact JSON arguments) in a fast way and everything else
the general way. For every body both must agree: the same canisters (ids and
timestamps aside, which are made fresh), with the same extras, or the same error.
"""

from __future__ import annotations

import copy
import json
import warnings
from collections.abc import Callable
from pathlib import Path
from typing import Any

import attrs
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from canisters import CanistersError, Conversation, providers
from canisters.providers import _common as common
from canisters.providers import anthropic, ollama, openai_chat, openai_responses

from .budget import examples
from .test_providers_fast import _benchmark_corpus, any_conversation

Parse = Callable[..., Conversation]

PARSE: dict[str, Parse] = {
    "anthropic": anthropic.messages.parse_request,
    "ollama": ollama.messages.parse_request,
    "openai-chat": openai_chat.messages.parse_request,
    "openai-responses": openai_responses.messages.parse_request,
}
DATA = Path(__file__).parent / "data" / "providers"


def _outcome(parse: Parse, body: Any, *, fast: bool) -> Any:
    """What parsing ``body`` gives, with the ids and timestamps numbered, and
    the warnings it gave (a part the model cannot hold, dropped), which both
    ways must give alike."""
    body = copy.deepcopy(body)  # a parser must not change its input
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            conversation = common.guarded(parse)(body, fast=fast)
        except CanistersError as error:
            return ("error", type(error), str(error), _told(caught))
    told = _told(caught)
    for canister in conversation:
        assert_public(canister)
    canisters = [
        attrs.evolve(canister, id=str(index), timestamp=FIXED)  # type: ignore[misc]
        for index, canister in enumerate(conversation)
    ]
    # repr tells a FrozenDict from a dict and shows the order of keys.
    return ("canisters", canisters, repr(canisters), told)


def _told(caught: list[warnings.WarningMessage]) -> list[tuple[type, str]]:
    return [(warning.category, str(warning.message)) for warning in caught]


def assert_public(canister: Any) -> None:
    """``canister`` and its parts are what their public constructors make of
    their fields: the parsers build them the trusted way, skipping attrs'
    converters and checks. ``attrs.evolve`` runs both; repr tells a FrozenDict
    from a dict and a tuple from a list."""
    for item in (canister, *getattr(canister, "content", ())):
        assert repr(attrs.evolve(item)) == repr(item)


def check_same(name: str, body: Any) -> None:
    parse = PARSE[name]
    assert _outcome(parse, body, fast=True) == _outcome(parse, body, fast=False)


FIXED = (
    providers.get("openai-chat")
    .parse_request({"messages": [{"role": "user", "content": "x"}]})[0]
    .timestamp
)


def _rendered(name: str, conversation: Conversation) -> dict[str, Any]:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            return providers.get(name).render_request(
                conversation, unsupported="placeholder", incomplete="keep"
            )
        except CanistersError:
            return {"messages": []}


# Messages near the common shapes: each one a step away from the fast way.
texts = st.sampled_from(
    ["", "hi", '{"error": "x"}', '{"error":{"code":"E","message":"m"}}']
)
canonical = st.sampled_from(
    [
        "{}",
        '{"q":"cats"}',
        '{"a":null}',
        '{"f":1.0}',
        '{"u":"é"}',
        '{"d":{"a":[1,{"b":true}]}}',
    ]
)
arguments = canonical | st.sampled_from(
    [
        '{"q": "cats"}',
        '{"a":1,"a":2}',
        '{"n":123456789012345678901234567890}',
        '{"n":1e400}',
        '{"x":NaN}',
        '{"s":"\\ud800"}',
        '{"u":"\\u00e9"}',
        "",
    ]
)
call_ids = st.sampled_from(["call_1", "call_2", "toolu-3"])


@st.composite
def tool_calls(draw: st.DrawFn) -> Any:
    function: dict[str, Any] = {"name": draw(st.sampled_from(["f", "g"]))}
    if draw(st.integers(0, 9)):
        function["arguments"] = draw(arguments)
    if not draw(st.integers(0, 9)):
        function["strict"] = True
    call: dict[str, Any] = {"id": draw(call_ids)}
    kind = draw(st.integers(0, 9))
    if kind:
        call["type"] = "function" if kind > 1 or draw(st.integers(0, 3)) else "custom"
    call["function"] = function if draw(st.integers(0, 30)) else "f"
    if not draw(st.integers(0, 9)):
        call["index"] = 0
    return call


# Parts after a first text part: media, a refusal, marks, and malformed ones.
parts = st.sampled_from(
    [
        {"type": "text", "text": "b", "cache_control": {"type": "ephemeral"}},
        {"type": "refusal", "refusal": "no"},
        {"type": "image_url", "image_url": {"url": "https://example.com/a.png"}},
        {"type": "image_url", "image_url": {"url": "data:image/png;base64,iVBORw=="}},
        {"type": "image_url", "image_url": {"url": "a.png"}},
        {"type": "input_audio", "input_audio": {"data": "UklGRg==", "format": "wav"}},
        {"type": "file", "file": {"file_id": "file-1"}},
        {"type": "file", "file": {"file_data": "data:application/pdf;base64,JVBE"}},
        {"type": "file", "file": {}},
        {"type": "bogus"},
    ]
)


@st.composite
def messages(draw: st.DrawFn) -> Any:
    role = draw(
        st.sampled_from(
            ["system", "user", "assistant", "assistant", "tool", "developer"]
        )
    )
    message: dict[str, Any] = {"role": role}
    shape = draw(st.integers(0, 9))
    if shape < 7 and not (role == "assistant" and shape > 3):
        message["content"] = draw(texts)
    elif shape < 8:
        message["content"] = None
    elif shape == 8:
        text = {"type": "text", "text": draw(texts)}
        message["content"] = [text, *draw(st.lists(parts, max_size=2))]
    if role == "assistant" and not draw(st.integers(0, 4)):
        message["refusal"] = draw(st.sampled_from([None, "no"]))
    if role == "assistant" and not draw(st.integers(0, 4)):
        # What SDKs dump of a reply: the fields not set as null.
        for key in draw(st.lists(st.sampled_from(["annotations", "audio"]))):
            message[key] = draw(st.sampled_from([None, []]))
        message["function_call"] = draw(st.sampled_from([None, None, {"name": "f"}]))
    if role == "assistant" and draw(st.booleans()):
        message["tool_calls"] = draw(st.lists(tool_calls(), max_size=3) | st.none())
    if role == "tool" and draw(st.integers(0, 29)):
        message["tool_call_id"] = draw(call_ids)
    if not draw(st.integers(0, 9)):
        message["name"] = "someone"
    if not draw(st.integers(0, 99)):
        return draw(st.sampled_from(["not a message", {"role": "bot", "content": ""}]))
    return message


ids = st.sampled_from(["toolu_1", "toolu_2", "call 3", "call:1/a.b"])
# Less common blocks, each as real requests send it (or a step away from that).
rare_blocks = st.sampled_from(
    [
        {"type": "thinking", "thinking": "hm", "signature": "c2ln"},
        {"type": "thinking", "thinking": "hm"},
        {"type": "redacted_thinking", "data": "ZGF0YQ=="},
        {"type": "redacted_thinking", "thinking": "hm", "signature": "c2ln"},
        {"type": "document", "source": {"type": "url", "url": "https://e.com/a.pdf"}},
        {
            "type": "document",
            "source": {"type": "text", "media_type": "text/plain", "data": "x"},
            "title": "T",
            "citations": {"enabled": True},
        },
        {"type": "document", "source": {"type": "base64", "data": "JVBERi0="}},
        {"type": "document", "source": {"type": "content", "content": "x"}},
        {"type": "server_tool_use", "id": "srvtoolu_1", "name": "web_search"},
        {"type": "web_search_tool_result", "tool_use_id": "srvtoolu_1", "content": []},
        {"type": "image", "source": {"type": "base64", "data": "iVBORw=="}},
        {"type": "image", "source": {"type": "base64", "data": "iVBORw"}},
        {"type": "image", "source": {"type": "file", "file_id": "file_1"}},
        {"type": "image", "source": {"type": "url", "url": "not a url"}},
        {"type": "text", "text": "x", "citations": [{"type": "char_location"}]},
    ]
)
result_content = st.sampled_from(
    [
        [],
        [{"type": "text", "text": "a"}, {"type": "text", "text": "b"}],
        [
            {"type": "text", "text": "a"},
            {"type": "image", "source": {"type": "url", "url": "https://e.com/a"}},
        ],
        [{"type": "image", "source": {"type": "url", "url": "https://e.com/a"}}],
        [{"type": "search_result", "source": "s", "title": "t", "content": []}],
        [{"type": "bogus"}],
    ]
)


@st.composite
def blocks(draw: st.DrawFn, role: str) -> Any:
    kind = draw(
        st.sampled_from(["text", "text", "tool", "tool", "image", "rare", "other"])
    )
    block: dict[str, Any]
    if kind == "text":
        block = {"type": "text", "text": draw(texts)}
    elif kind == "image":
        source = {"type": "url", "url": "https://example.com/a.png"}
        block = {"type": "image", "source": source}
    elif kind == "rare":
        block = copy.deepcopy(draw(rare_blocks))
    elif kind == "other":
        block = draw(st.sampled_from([{"type": "bogus"}, "text", {"text": "x"}]))
    elif role == "assistant":
        block = {"type": "tool_use", "id": draw(ids), "name": "f"}
        block["input"] = draw(st.sampled_from([{}, {"q": "x"}, {"a": [1]}, "x"]))
    else:
        block = {"type": "tool_result", "tool_use_id": draw(ids)}
        if draw(st.integers(0, 5)):
            block["content"] = draw(
                texts
                | st.just([{"type": "text", "text": "a"}])
                | st.just(3)
                | result_content
            )
        if not draw(st.integers(0, 5)):
            block["is_error"] = draw(st.booleans())
    if isinstance(block, dict) and not draw(st.integers(0, 9)):
        block["cache_control"] = {"type": "ephemeral"}
    return block


@st.composite
def anthropic_messages(draw: st.DrawFn) -> Any:
    role = draw(st.sampled_from(["user", "assistant", "user", "assistant", "system"]))
    message: dict[str, Any] = {"role": role}
    if draw(st.integers(0, 19)):
        message["content"] = draw(
            texts | st.lists(blocks(role), max_size=4) | st.just(None)
        )
    if not draw(st.integers(0, 9)):
        message["name"] = "someone"
    return message


@st.composite
def anthropic_bodies(draw: st.DrawFn) -> dict[str, Any]:
    body: dict[str, Any] = {
        "messages": draw(st.lists(anthropic_messages(), max_size=8))
    }
    if draw(st.booleans()):
        body["system"] = draw(texts | st.just([{"type": "text", "text": "be brief"}]))
    return body


def mostly(good: st.SearchStrategy[Any], bad: Any) -> st.SearchStrategy[Any]:
    """``good``, or one time in twenty one of the ``bad`` values: a body stops at
    its first error, so malformed values stay rare enough for most bodies to
    get through."""
    return st.integers(0, 19).flatmap(
        lambda n: good if n else st.sampled_from(list(bad))
    )


# Ollama: base64 images (canonical, unpadded, URL-safe, not base64 at all).
base64_images = mostly(
    st.sampled_from(["iVBORw0K", "iVBORw==", "aGk", "aGl=", "a-_b"]), ["!!", 3]
)
ollama_arguments = st.sampled_from([{}, {"q": "x"}, {"d": {"a": [1, None]}}])


@st.composite
def ollama_calls(draw: st.DrawFn) -> Any:
    function: dict[str, Any] = {"name": draw(st.sampled_from(["f", "g"]))}
    if draw(st.integers(0, 9)):
        function["arguments"] = draw(ollama_arguments | st.just(None))
    if not draw(st.integers(0, 19)):
        function["arguments"] = draw(st.sampled_from(['{"q":"x"}', [1]]))
    if not draw(st.integers(0, 9)):
        function["index"] = 0
    call: dict[str, Any] = {}
    if draw(st.booleans()):
        call["id"] = draw(mostly(call_ids, [None, 3]))
    call["function"] = function if draw(st.integers(0, 30)) else "f"
    if not draw(st.integers(0, 9)):
        call["type"] = "function"
    return call if draw(st.integers(0, 50)) else "call"


@st.composite
def ollama_messages(draw: st.DrawFn) -> Any:
    role = draw(st.sampled_from(["system", "user", "assistant", "assistant", "tool"]))
    message: dict[str, Any] = {"role": role}
    if draw(st.integers(0, 19)):
        message["content"] = draw(mostly(texts | st.just(None), [3]))
    if not draw(st.integers(0, 4)):
        message["images"] = draw(
            mostly(st.lists(base64_images, max_size=2) | st.none(), ["iVBORw0K"])
        )
    # Each key mostly on the role that models it, one time in twelve on another
    # role (which keeps it as it was sent).
    seldom = st.integers(0, 11).map(lambda n: n == 0)
    if draw(st.integers(0, 3).map(lambda n: n == 0) if role == "assistant" else seldom):
        message["thinking"] = draw(mostly(st.sampled_from(["hm", "", None]), [3]))
    if draw(st.booleans() if role == "assistant" else seldom):
        message["tool_calls"] = draw(
            mostly(st.lists(ollama_calls(), max_size=3) | st.none(), ["x"])
        )
    if draw(st.integers(0, 9).map(bool) if role == "tool" else seldom):
        message["tool_name"] = draw(mostly(st.sampled_from(["f", "g", "f", None]), [3]))
    if role == "tool" and not draw(st.integers(0, 9)):
        message["tool_call_id"] = draw(call_ids)
    if not draw(st.integers(0, 9)):
        message["name"] = "someone"
    if not draw(st.integers(0, 19)):
        # Keys in the general way's order rather than the usual one.
        message = dict(reversed(message.items()))
    if not draw(st.integers(0, 99)):
        return draw(
            st.sampled_from(["not a message", {"role": "bot", "content": ""}, {}])
        )
    return message


# OpenAI Responses: message items' parts, each as requests send it or a step away.
input_parts = st.sampled_from(
    [
        {"type": "input_text", "text": "a"},
        {"type": "output_text", "text": "b"},
        {"type": "output_text", "text": "b", "annotations": []},
        {"type": "refusal", "refusal": "no"},
        {"type": "input_image", "image_url": "https://example.com/a.png"},
        {
            "type": "input_image",
            "image_url": "data:image/png;base64,iVBORw0K",
            "detail": "auto",
        },
        {"type": "input_image", "file_id": "file-1", "detail": "low"},
        {"type": "input_file", "file_data": "JVBERi0=", "filename": "a.pdf"},
        {"type": "input_file", "file_url": "https://example.com/a.pdf"},
        {"type": "input_audio", "input_audio": {"data": "UklGRg==", "format": "wav"}},
    ]
)
MALFORMED_PARTS = (
    {"type": "input_text"},
    {"type": "input_image", "image_url": "a.png"},
    {"type": "input_image"},
    {"type": "bogus"},
    "text",
)
item_parts = mostly(input_parts, MALFORMED_PARTS)
summaries = st.sampled_from(
    [
        [],
        [{"type": "summary_text", "text": "hm"}],
        [{"type": "summary_text", "text": "a"}, {"type": "summary_text", "text": "b"}],
        [{"type": "other", "text": "hm"}],
        [{"text": 3}],
    ]
)


@st.composite
def responses_items(draw: st.DrawFn) -> Any:
    kind = draw(
        st.sampled_from(
            ["message"] * 5
            + ["function_call"] * 2
            + ["function_call_output"] * 2
            + ["reasoning", "rare"]
        )
    )
    item: dict[str, Any]
    if kind == "message":
        item = {}
        if not draw(st.integers(0, 3)):
            item["type"] = "message" if draw(st.integers(0, 29)) else "bogus"
        if draw(st.integers(0, 29)):
            item["role"] = draw(
                mostly(
                    st.sampled_from(["user", "assistant", "developer", "system"]),
                    ["bot", 3],
                )
            )
        if draw(st.integers(0, 29)):
            content = texts | st.lists(item_parts, max_size=3)
            item["content"] = draw(mostly(content, [None, 3]))
    elif kind == "function_call":
        item = {"type": "function_call", "call_id": draw(call_ids)}
        item["name"] = draw(mostly(st.sampled_from(["f", "g"]), [3]))
        if draw(st.integers(0, 19)):
            item["arguments"] = draw(
                mostly(arguments | st.just('{"a":null,"f":1e-7}'), [{"q": "x"}, 3])
            )
    elif kind == "function_call_output":
        item = {"type": "function_call_output", "call_id": draw(call_ids)}
        if draw(st.integers(0, 19)):
            item["output"] = draw(mostly(texts | st.lists(item_parts, max_size=2), [3]))
    elif kind == "reasoning":
        item = {"type": "reasoning", "summary": draw(summaries)}
        if draw(st.booleans()):
            item["id"] = draw(mostly(st.just("rs_1"), [3]))
        if draw(st.booleans()):
            item["encrypted_content"] = draw(st.sampled_from(["ZW5j", None]))
    else:
        item = copy.deepcopy(
            draw(
                st.sampled_from(
                    [
                        {"type": "item_reference", "id": "msg_1"},
                        {"type": "web_search_call", "id": "ws_1", "status": "done"},
                        {"type": "item_reference", "id": "msg_1"},
                        {"type": "web_search_call", "id": "ws_1", "status": "done"},
                        {"type": "bogus"},
                        {},
                    ]
                )
            )
        )
    if item and not draw(st.integers(0, 7)):
        item[draw(st.sampled_from(["id", "status"]))] = "x"
    if not draw(st.integers(0, 19)):
        item = dict(reversed(item.items()))
    return item if draw(st.integers(0, 99)) else "not an item"


@st.composite
def responses_bodies(draw: st.DrawFn) -> dict[str, Any]:
    body: dict[str, Any] = {}
    if draw(st.booleans()):
        body["instructions"] = draw(mostly(texts | st.none(), [3]))
    if draw(st.integers(0, 19)):
        items = st.lists(responses_items(), max_size=8)
        body["input"] = draw(mostly(items | items | texts, [3]))
    return body


BODIES = {
    "anthropic": anthropic_bodies(),
    "ollama": st.lists(ollama_messages(), max_size=8).map(lambda m: {"messages": m}),
    "openai-chat": st.lists(messages(), max_size=8).map(lambda m: {"messages": m}),
    "openai-responses": responses_bodies(),
}


@pytest.mark.parametrize("name", sorted(PARSE))
@settings(
    max_examples=examples(400),
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
)
@given(data=st.data())
def test_fast_is_general(name: str, data: st.DataObject) -> None:
    check_same(name, data.draw(BODIES[name]))


@pytest.mark.parametrize("name", sorted(PARSE))
@settings(
    max_examples=examples(150),
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
)
@given(conversation=any_conversation)
def test_fast_is_general_on_rendered_bodies(
    name: str, conversation: Conversation
) -> None:
    check_same(name, _rendered(name, conversation))


def _recorded() -> list[Path]:
    """The recorded request bodies of the providers with a fast way."""
    return sorted(
        path
        for name in PARSE
        for path in (DATA / name).glob("*.json")
        if json.loads(path.read_text(encoding="utf-8"))["kind"] == "request"
    )


@pytest.mark.parametrize("path", _recorded(), ids=lambda p: f"{p.parent.name}/{p.stem}")
def test_fast_is_general_on_recorded_bodies(path: Path) -> None:
    case = json.loads(path.read_text(encoding="utf-8"))
    check_same(case["provider"], case["payload"])


@pytest.mark.parametrize("name", sorted(PARSE))
def test_fast_is_general_on_the_benchmark_corpus(name: str) -> None:
    for conversation in _benchmark_corpus():
        check_same(name, _rendered(name, conversation))


def _spy(monkeypatch: pytest.MonkeyPatch, module: Any, name: str) -> list[object]:
    """The arguments of each call of ``module.name`` (the general way's reader)
    from now on, which still reads as before."""
    calls: list[object] = []
    general = getattr(module, name)

    def spy(*args: Any) -> Any:
        calls.append(args)
        return general(*args)

    monkeypatch.setattr(module, name, spy)
    return calls


def test_the_common_shapes_take_the_fast_way(monkeypatch: pytest.MonkeyPatch) -> None:
    calls = _spy(monkeypatch, openai_chat.messages, "_parse_assistant")
    body = {
        "messages": [
            {"role": "system", "content": "be brief"},
            {"role": "user", "content": "hi"},
            {"role": "assistant", "content": "hello"},
            {
                "role": "assistant",
                "content": None,
                "tool_calls": [
                    {
                        "id": "call_1",
                        "type": "function",
                        "function": {"name": "f", "arguments": '{"q":"x"}'},
                    }
                ],
            },
            {"role": "tool", "tool_call_id": "call_1", "content": "done"},
        ]
    }
    conversation = providers.get("openai-chat").parse_request(body)
    assert calls == []
    assert conversation[3].extras == {"openai-chat": {"split": True}}
    assert conversation[4].name == "f"  # type: ignore[attr-defined]
    # Every canister of one body has the moment it was read.
    assert len({canister.timestamp for canister in conversation}) == 1
    # Pretty-printed arguments (what json.dumps writes) take the fast way too,
    # keeping the text as the general way keeps it.
    body["messages"][3]["tool_calls"][0]["function"]["arguments"] = '{"q": "x"}'
    conversation = providers.get("openai-chat").parse_request(body)
    assert calls == []
    assert conversation[3].extras == {
        "openai-chat": {"arguments": '{"q": "x"}', "split": True}
    }
    # A call with a key the fast way does not know goes the general way.
    body["messages"][3]["tool_calls"][0]["index"] = 0
    conversation = providers.get("openai-chat").parse_request(body)
    assert len(calls) == 1
    assert conversation[3].extras["openai-chat"]["call"] == {"index": 0}


def test_echoed_replies_lists_and_documents_take_the_fast_way(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """What clients send back: a reply as the SDK dumped it (``refusal: null``,
    ``annotations``, the unset fields as null), a tool message holding a list of text parts, a file part
    among text: each is read the fast way, as the general way reads it."""
    calls: list[object] = []
    for name in ("_parse_assistant", "_parse_content"):
        general = getattr(openai_chat.messages, name)

        def spy(*args: Any, general: Any = general) -> Any:
            calls.append(args)
            return general(*args)

        monkeypatch.setattr(openai_chat.messages, name, spy)
    pdf = "data:application/pdf;base64,JVBERi0xLjQK"
    call = {
        "id": "call_1",
        "type": "function",
        "function": {"name": "f", "arguments": '{"q": "x"}'},
    }
    body = {
        "messages": [
            {"role": "developer", "content": "be brief", "name": "ops"},
            {
                "role": "user",
                "content": [
                    {"type": "text", "text": "summarize"},
                    {"type": "file", "file": {"file_data": pdf, "filename": "a.pdf"}},
                ],
            },
            {
                "role": "assistant",
                "content": None,
                "refusal": None,
                "tool_calls": [call],
            },
            {
                "role": "tool",
                "tool_call_id": "call_1",
                "content": [{"type": "text", "text": "done"}],
            },
            {
                "role": "assistant",
                "content": "ok",
                "refusal": None,
                "annotations": [],
                "audio": None,
                "function_call": None,
                "tool_calls": None,
            },
        ]
    }
    openai_chat.messages.parse_request(body, fast=False)
    assert calls  # the spies see the general way
    calls.clear()
    conversation = providers.get("openai-chat").parse_request(body)
    assert calls == []
    assert conversation[1].content[1].filename == "a.pdf"  # type: ignore[attr-defined]
    assert conversation[2].extras == {
        "openai-chat": {
            "arguments": '{"q": "x"}',
            "message": {"refusal": None},
        }
    }
    assert conversation[3].name == "f"  # type: ignore[attr-defined]
    assert conversation[3].extras == {"openai-chat": {"content": "list"}}
    assert conversation[4].extras == {
        "openai-chat": {
            "message": {
                "refusal": None,
                "annotations": [],
                "audio": None,
                "tool_calls": None,
                "function_call": None,
            }
        }
    }
    check_same("openai-chat", body)
    rendered = providers.get("openai-chat").render_request(conversation)
    assert rendered == body


def test_a_result_keeps_its_content_form_after_a_user_message() -> None:
    """Found by the property test: a tool result of a list of texts with
    ``is_error: false``, in a user message after another, lost the form of its
    content under the message's split mark."""
    check_same(
        "anthropic",
        {
            "messages": [
                {"role": "user", "content": "hi"},
                {
                    "role": "user",
                    "content": [
                        {
                            "type": "tool_result",
                            "tool_use_id": "toolu_1",
                            "content": [{"type": "text", "text": "a"}],
                            "is_error": False,
                        }
                    ],
                },
            ]
        },
    )


SERVER_USE = {"type": "server_tool_use", "id": "srvtoolu_1", "name": "web_search"}


@pytest.mark.parametrize(
    "content",
    [
        # A lone text beside a server-tool block is not marked as a listed text:
        # the message is a list because of the block.
        [{"type": "text", "text": "hi"}, SERVER_USE],
        [SERVER_USE, {"type": "text", "text": "hi"}],
        [{"type": "text", "text": "hi", "cache_control": {"type": "ephemeral"}}],
        [{"type": "text", "text": ""}],
        [{"type": "redacted_thinking", "data": "ZGF0YQ=="}],
        [{"type": "redacted_thinking", "thinking": "hm", "signature": "c2ln"}],
        [{"type": "thinking", "thinking": "hm", "signature": "c2ln"}],
        [{"type": "tool_use", "id": "call:1/a.b", "name": "f", "input": {}}],
        [{"type": "tool_use", "id": "t", "name": "f", "input": {}, "caller": "x"}],
    ],
)
def test_blocks_beside_the_common_ones(content: list[Any]) -> None:
    check_same("anthropic", {"messages": [{"role": "assistant", "content": content}]})


@pytest.mark.parametrize(
    "result",
    [
        {"content": "boom", "is_error": True},
        {"content": [{"type": "text", "text": "boom"}], "is_error": True},
        {"content": [], "is_error": True},
        {"is_error": True},
        {},
        {"content": ""},
        {"content": []},
        {"content": [{"type": "image", "source": {"type": "url", "url": "https://e"}}]},
        {"content": [{"type": "text", "text": "a"}], "cache_control": {"type": "x"}},
        {"content": "a", "is_error": None},
    ],
)
def test_results_beside_the_common_ones(result: dict[str, Any]) -> None:
    block = {"type": "tool_result", "tool_use_id": "call:1/a.b", **result}
    for before in ([], [{"type": "text", "text": "hi"}]):
        check_same(
            "anthropic", {"messages": [{"role": "user", "content": [*before, block]}]}
        )


def test_anthropic_blocks_take_the_fast_way(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every block kind of a well-formed message is read the fast way; only a
    block the general way refuses (or a message of another shape) goes there."""
    calls = _spy(monkeypatch, anthropic.messages, "_parse_blocks")
    url = {"type": "url", "url": "https://example.com/a.pdf"}
    body = {
        "system": [{"type": "text", "text": "Cite.", "citations": []}],
        "messages": [
            {
                "role": "user",
                "content": [
                    {"type": "document", "source": url, "title": "A"},
                    {"type": "text", "text": "Weather?"},
                ],
            },
            {
                "role": "assistant",
                "content": [
                    {"type": "redacted_thinking", "data": "ZGF0YQ=="},
                    {"type": "server_tool_use", "id": "srvtoolu_1", "name": "s"},
                    {"type": "tool_use", "id": "call:1", "name": "f", "input": {}},
                ],
            },
            {
                "role": "user",
                "content": [
                    {
                        "type": "tool_result",
                        "tool_use_id": "call:1",
                        "content": "boom",
                        "is_error": True,
                    }
                ],
            },
        ],
    }
    conversation = providers.get("anthropic").parse_request(body)
    assert calls == []
    assert conversation[-1].error is not None  # type: ignore[attr-defined]
    check_same("anthropic", body)
    calls.clear()  # the general way, of check_same
    body["messages"][0]["content"][0]["source"] = {"type": "bogus"}
    with pytest.raises(CanistersError, match=r"messages\[0\]\.content\[0\]"):
        providers.get("anthropic").parse_request(body)
    assert len(calls) == 1


def test_ollama_common_shapes_take_the_fast_way(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """What Ollama clients send (text, images, thinking, calls without ids,
    results named by their tool) is read the fast way; a message of another
    shape goes the general way, which still names the path of a bad value."""
    calls = _spy(monkeypatch, ollama.messages._Parser, "message")
    body = {
        "messages": [
            {"role": "system", "content": "be brief"},
            {"role": "user", "content": "what is this?", "images": ["iVBORw0K"]},
            {
                "role": "assistant",
                "content": "",
                "thinking": "hm",
                "tool_calls": [
                    {"function": {"name": "look", "arguments": {"q": "x"}}},
                    {"function": {"name": "look", "arguments": {}}},
                ],
            },
            {"role": "tool", "content": "a cat", "tool_name": "look"},
            {
                "role": "assistant",
                "content": "",
                "tool_calls": [
                    {"id": "call_1", "function": {"name": "f", "arguments": {}}}
                ],
            },
            {"role": "assistant", "content": "a cat"},
        ]
    }
    conversation = providers.get("ollama").parse_request(body)
    assert calls == []
    assert [canister.role.value for canister in conversation] == [
        "supervisor",
        "user",
        "assistant",
        "invocation",
        "invocation",
        "result",
        "invocation",
        "assistant",
    ]
    first_call = conversation[3]
    assert conversation[5].invocation_id == first_call.invocation_id  # type: ignore[attr-defined]
    assert conversation[6].extras == {"ollama": {"lead": True}}
    # Every canister of one body has the moment it was read.
    assert len({canister.timestamp for canister in conversation}) == 1
    check_same("ollama", body)
    rendered = providers.get("ollama").render_request(conversation, incomplete="keep")
    assert rendered == body
    calls.clear()  # the general way, of check_same
    body["messages"][1]["images"] = ["iVBORw0K", "not base64!"]
    with pytest.raises(CanistersError, match=r"messages\[1\]\.images\[1\]"):
        providers.get("ollama").parse_request(body)
    body["messages"][1]["images"] = [3]
    with pytest.raises(CanistersError, match=r"messages\[1\]\.images\[0\]"):
        providers.get("ollama").parse_request(body)
    assert len(calls) == 1


def test_responses_common_items_take_the_fast_way(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Message items (typed or not, of a string or of parts), function calls of
    compact arguments and their string outputs are read the fast way; an item
    of another shape goes the general way, which still names the path of a bad
    value."""
    calls = _spy(monkeypatch, openai_responses.messages._Parser, "item")
    body: dict[str, Any] = {
        "instructions": "be brief",
        "input": [
            {"role": "user", "content": "hi"},
            {
                "type": "message",
                "role": "user",
                "content": [
                    {"type": "input_text", "text": "look"},
                    {"type": "input_image", "image_url": "https://e.com/a.png"},
                ],
            },
            {"role": "assistant", "content": "calling"},
            {
                "type": "function_call",
                "call_id": "call_1",
                "name": "f",
                "arguments": '{"q":"x"}',
            },
            {"type": "function_call_output", "call_id": "call_1", "output": "done"},
            {"role": "assistant", "content": [{"type": "output_text", "text": "ok"}]},
        ],
    }
    conversation = providers.get("openai-responses").parse_request(body)
    assert calls == []
    assert [canister.role.value for canister in conversation] == [
        "supervisor",
        "user",
        "user",
        "assistant",
        "invocation",
        "result",
        "assistant",
    ]
    assert conversation[5].name == "f"  # type: ignore[attr-defined]
    # Every canister of one body has the moment it was read.
    assert len({canister.timestamp for canister in conversation}) == 1
    check_same("openai-responses", body)
    rendered = providers.get("openai-responses").render_request(conversation)
    assert rendered == body
    calls.clear()  # the general way, of check_same
    body["input"][1]["content"][1]["image_url"] = "a.png"
    with pytest.raises(CanistersError, match=r"input\[1\]\.content\[1\]\.image_url"):
        providers.get("openai-responses").parse_request(body)
    body["input"][3]["arguments"] = "{"
    body["input"][1]["content"].pop()
    with pytest.raises(CanistersError, match=r"input\[3\]\.arguments"):
        providers.get("openai-responses").parse_request(body)
    assert len(calls) == 1
