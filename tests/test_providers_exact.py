"""Every recorded body renders back exactly to its own provider, also after a trip
through canisters' JSON and a store.

"Exactly" is JSON-exact: the same values of the same JSON types (``10.0`` is not
``10``, ``true`` is not ``1``), every string the same (arguments strings included),
object keys compared as sets. The ``peer-*`` bodies were sent by pydantic-ai's and
LangChain's own models, the ``ollama`` client and the ``google-genai`` SDK (see
their ``source``; recorded by ``.auxiliary/scripts/record_peer_bodies.py`` and
``explore_peer_bodies.py``). A body marked ``sdk_refuses`` is one a peer sends
although the provider SDK's request types refuse it: it is held to the exact round
trip all the same.
"""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from canisters import Conversation, UnsupportedContent, from_json, providers, to_json
from canisters.providers import bedrock_converse, gemini, ollama, openai_responses
from canisters.storage import open_store

from .providers_support import fields

DATA = Path(__file__).parent / "data" / "providers"
CASES = sorted(DATA.glob("*/*.json"))
REQUEST_FIELDS = {
    "anthropic": ("system", "messages"),
    "bedrock-converse": bedrock_converse.REQUEST_FIELDS,
    "gemini": gemini.REQUEST_FIELDS,
    "ollama": ollama.REQUEST_FIELDS,
    "openai-chat": ("messages",),
    "openai-responses": openai_responses.REQUEST_FIELDS,
    "open-responses": openai_responses.REQUEST_FIELDS,
    "openai-chat-reasoning": ("messages",),
    "openrouter": ("messages",),
}
RESPONSE_FIELDS: dict[str, tuple[str, ...] | None] = {
    "anthropic": None,
    "bedrock-converse": None,
    "gemini": None,
    "ollama": ollama.RESPONSE_FIELDS,
    "openai-chat": None,
    "openai-responses": None,
    "open-responses": None,
    "openai-chat-reasoning": None,
    "openrouter": None,
}
# The formats whose peer bodies the recording script made (the bedrock-converse
# ones are pydantic-ai's own cassettes, each named in its source).
RECORDED = ("anthropic", "gemini", "ollama", "openai-chat", "openai-responses")
PEERS = [
    path
    for path in CASES
    if path.name.startswith("peer-") and path.parent.name in RECORDED
]


def exact(value: Any) -> str:
    """A JSON form telling apart what ``==`` on dicts confuses (``1.0``, ``1``, ``True``)."""
    return json.dumps(value, sort_keys=True, ensure_ascii=False)


def load(path: Path) -> dict[str, Any]:
    return json.loads(path.read_text())  # type: ignore[no-any-return]


def is_error(body: dict[str, Any]) -> bool:
    return body.get("error") is not None or body.get("type") == "error"


def trips(conversation: Conversation, tmp_path: Path) -> list[Conversation]:
    """The conversation as parsed, through canisters' JSON, and through a store."""
    through_json = from_json(to_json(conversation))
    assert isinstance(through_json, Conversation)
    with open_store(tmp_path / "store") as store:
        store.extend("c", conversation)
    with open_store(tmp_path / "store") as store:
        stored = store.load("c")
    return [conversation, through_json, stored]


def test_peer_bodies_per_provider() -> None:
    counts = Counter(load(path)["provider"] for path in PEERS)
    assert {name: counts[name] >= 10 for name in RECORDED} == dict.fromkeys(
        RECORDED, True
    )
    for path in PEERS:
        case = load(path)
        assert case["kind"] == "request" and path.parent.name == case["provider"]
        assert "record_peer_bodies.py" in case["source"]
        # the library and its version: "pydantic-ai-slim 2.68.0 ...", "langchain ..."
        assert any(char.isdigit() for char in case["source"].split(",")[0])


@pytest.mark.parametrize(
    "path", CASES, ids=[f"{p.parent.name}/{p.stem}" for p in CASES]
)
def test_recorded_body_round_trips_exactly(path: Path, tmp_path: Path) -> None:
    case = load(path)
    name, body = case["provider"], case["payload"]
    normalizer = providers.get(name)
    if case["kind"] == "request":
        expected = exact(fields(body, REQUEST_FIELDS[name]))
        conversation = normalizer.parse_request(body)
        for trip in trips(conversation, tmp_path):
            report = providers.Report()
            rendered = normalizer.render_request(trip, incomplete="keep", report=report)
            assert exact(rendered) == expected
            assert report.events == []
        return
    if is_error(body):
        return  # refused as malformed: the provider tests check it
    wanted = RESPONSE_FIELDS[name]
    expected = exact(body if wanted is None else fields(body, wanted))
    for trip in trips(normalizer.parse_response(body), tmp_path):
        assert exact(normalizer.render_response(trip)) == expected


# The classes of loss named in issue 17, one by one ---------------------------------


def test_anthropic_tool_result_text_blocks_stay_blocks() -> None:
    normalizer = providers.get("anthropic")
    result = {
        "type": "tool_result",
        "tool_use_id": "toolu_1",
        "content": [{"type": "text", "text": "Sunny"}],
    }
    body = {
        "messages": [
            {
                "role": "assistant",
                "content": [
                    {"type": "tool_use", "id": "toolu_1", "name": "w", "input": {}}
                ],
            },
            {"role": "user", "content": [result]},
        ]
    }
    rendered = normalizer.render_request(normalizer.parse_request(body))
    assert rendered["messages"][1]["content"] == [result]


def test_odd_tool_ids_kept_for_anthropic_and_rewritten_elsewhere_with_a_report() -> (
    None
):
    body = {
        "messages": [
            {"role": "user", "content": "Time?"},
            {
                "role": "assistant",
                "content": None,
                "tool_calls": [
                    {
                        "id": "call:1/a.b",
                        "type": "function",
                        "function": {"name": "now", "arguments": "{}"},
                    }
                ],
            },
            {"role": "tool", "tool_call_id": "call:1/a.b", "content": "12:00"},
        ]
    }
    conversation = providers.get("openai-chat").parse_request(body)
    anthropic_ = providers.get("anthropic")
    report = providers.Report()
    rendered = anthropic_.render_request(conversation, report=report)
    assert rendered["messages"][1]["content"][0]["id"] == "call_1_a_b"
    assert rendered["messages"][2]["content"][0]["tool_use_id"] == "call_1_a_b"
    assert [(e.kind, e.where) for e in report.events] == [
        ("synthesized", "canister 1 (invocation)"),
        ("synthesized", "canister 2 (result)"),
    ]
    assert "'call:1/a.b' rewritten to 'call_1_a_b'" in report.events[0].detail
    # Parsed from Anthropic, the same ids go back to Anthropic unchanged.
    again = anthropic_.parse_request(
        json.loads(json.dumps(rendered).replace("call_1_a_b", "call:1/a.b"))
    )
    report = providers.Report()
    back = anthropic_.render_request(again, report=report)
    assert back["messages"][1]["content"][0]["id"] == "call:1/a.b"
    assert report.events == []
    # ... and keep their own id for OpenAI Chat, which takes any string.
    chat = providers.get("openai-chat").render_request(again)
    assert chat["messages"][1]["tool_calls"][0]["id"] == "call:1/a.b"


@pytest.mark.parametrize("content", ["", []])
def test_anthropic_empty_user_message_kept(content: Any) -> None:
    normalizer = providers.get("anthropic")
    body = {
        "messages": [
            {"role": "user", "content": "Hi"},
            {"role": "assistant", "content": "Hello"},
            {"role": "user", "content": content},
        ]
    }
    report = providers.Report()
    rendered = normalizer.render_request(normalizer.parse_request(body), report=report)
    assert rendered == body
    assert report.events == []


def test_empty_user_message_from_elsewhere_still_left_out_for_anthropic() -> None:
    body = {
        "messages": [{"role": "user", "content": "Hi"}, {"role": "user", "content": ""}]
    }
    conversation = providers.get("openai-chat").parse_request(body)
    report = providers.Report()
    rendered = providers.get("anthropic").render_request(conversation, report=report)
    # Read by OpenAI Chat's parser just before: another format's, so the empty
    # text rule leaves the empty message out (see test_rules_conversation).
    assert rendered == {"messages": [{"role": "user", "content": "Hi"}]}
    assert [(e.kind, e.where, e.detail) for e in report.events] == [
        ("dropped", "canister 1 (user), part 0 (text)", "empty text"),
        ("dropped", "canister 1 (user)", "a message of empty text only"),
    ]


TOOL_IMAGE = {
    "messages": [
        {"role": "user", "content": "Chart?"},
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {
                    "id": "call_1",
                    "type": "function",
                    "function": {"name": "chart", "arguments": "{}"},
                }
            ],
        },
        {
            "role": "tool",
            "tool_call_id": "call_1",
            "content": [
                {"type": "text", "text": "chart:"},
                {
                    "type": "image_url",
                    "image_url": {"url": "https://example.com/c.png"},
                },
            ],
        },
    ]
}


def test_openai_chat_tool_message_image_stays_in_place() -> None:
    normalizer = providers.get("openai-chat")
    report = providers.Report()
    rendered = normalizer.render_request(
        normalizer.parse_request(TOOL_IMAGE), report=report
    )
    assert rendered == TOOL_IMAGE
    assert report.events == []


def test_tool_result_image_from_elsewhere_moves_to_a_user_message() -> None:
    conversation = providers.get("openai-chat").parse_request(TOOL_IMAGE)
    anthropic_ = providers.get("anthropic")
    moved = anthropic_.parse_request(anthropic_.render_request(conversation))
    report = providers.Report()
    rendered = providers.get("openai-chat").render_request(moved, report=report)
    assert [m["role"] for m in rendered["messages"]] == [
        "user",
        "assistant",
        "tool",
        "user",
    ]
    assert rendered["messages"][2]["content"] == "chart:"
    assert [event.kind for event in report.events] == ["moved"]


def test_json_text_result_goes_to_gemini_as_the_object() -> None:
    body = {
        "messages": [
            {"role": "user", "content": "Book"},
            {
                "role": "assistant",
                "content": None,
                "tool_calls": [
                    {
                        "id": "call_1",
                        "type": "function",
                        "function": {"name": "book", "arguments": "{}"},
                    }
                ],
            },
            {"role": "tool", "tool_call_id": "call_1", "content": '{"booked": true}'},
        ]
    }
    conversation = providers.get("openai-chat").parse_request(body)
    rendered = providers.get("gemini").render_request(conversation)
    response = rendered["contents"][2]["parts"][0]["functionResponse"]["response"]
    assert response == {"booked": True}
    # {"output": "<JSON>"} received from Gemini goes back as it came.
    gemini_ = providers.get("gemini")
    sent = {
        "contents": [
            {"role": "model", "parts": [{"functionCall": {"name": "f", "args": {}}}]},
            {
                "role": "user",
                "parts": [
                    {"functionResponse": {"name": "f", "response": {"output": "{}"}}}
                ],
            },
        ]
    }
    assert gemini_.render_request(gemini_.parse_request(sent)) == sent


# Renders the SDK types accept but the APIs refuse (issue 17) ------------------------


def test_empty_message_from_elsewhere_is_no_gemini_turn() -> None:
    body = {
        "messages": [
            {"role": "user", "content": "Hi"},
            {"role": "assistant", "content": ""},
            {"role": "user", "content": ""},
            {"role": "user", "content": "Still there?"},
        ]
    }
    conversation = providers.get("ollama").parse_request(body)  # "" is no content
    report = providers.Report()
    rendered = providers.get("gemini").render_request(conversation, report=report)
    assert rendered == {
        "contents": [
            {"role": "user", "parts": [{"text": "Hi"}, {"text": "Still there?"}]}
        ]
    }
    assert [(e.kind, e.where) for e in report.events] == [
        ("dropped", "canister 1 (assistant)"),
        ("dropped", "canister 2 (user)"),
    ]


def test_gemini_empty_turn_of_its_own_goes_back_as_it_came() -> None:
    gemini_ = providers.get("gemini")
    sent = {
        "contents": [
            {"role": "user", "parts": [{"text": "Hi"}]},
            {"role": "model", "parts": []},
            {"role": "user", "parts": [{"text": "Still there?"}]},
        ]
    }
    assert gemini_.render_request(gemini_.parse_request(sent)) == sent


IMAGE_BEFORE_RESPONSE = {
    "contents": [
        {"role": "user", "parts": [{"text": "Plot it"}]},
        {"role": "model", "parts": [{"functionCall": {"name": "plot", "args": {}}}]},
        {
            "role": "user",
            "parts": [
                {"inlineData": {"mimeType": "image/png", "data": "iVBORw0KGgo="}},
                {"functionResponse": {"name": "plot", "response": {"output": "ok"}}},
            ],
        },
    ]
}


def test_openai_chat_gets_every_tool_call_answered_before_the_next_message() -> None:
    gemini_ = providers.get("gemini")
    conversation = gemini_.parse_request(IMAGE_BEFORE_RESPONSE)
    report = providers.Report()
    rendered = providers.get("openai-chat").render_request(conversation, report=report)
    roles = [message["role"] for message in rendered["messages"]]
    assert roles == ["user", "assistant", "tool", "user"]
    call = rendered["messages"][1]["tool_calls"][0]["id"]
    assert rendered["messages"][2]["tool_call_id"] == call
    assert rendered["messages"][3]["content"][0]["type"] == "image_url"
    assert [(e.kind, e.where) for e in report.events] == [
        ("moved", "canister 2 (user)")
    ]
    # Gemini itself gets the turn back as it came.
    assert gemini_.render_request(conversation) == IMAGE_BEFORE_RESPONSE


def test_anthropic_gets_tool_results_first_in_the_user_message() -> None:
    conversation = providers.get("gemini").parse_request(IMAGE_BEFORE_RESPONSE)
    rendered = providers.get("anthropic").render_request(conversation)
    last = rendered["messages"][-1]
    assert last["role"] == "user"
    assert [block["type"] for block in last["content"]] == ["tool_result", "image"]


def test_user_message_after_answered_calls_stays_in_place() -> None:
    body = {
        "messages": [
            {"role": "user", "content": "Go"},
            {
                "role": "assistant",
                "content": None,
                "tool_calls": [
                    {
                        "id": "a",
                        "type": "function",
                        "function": {"name": "f", "arguments": "{}"},
                    },
                    {
                        "id": "b",
                        "type": "function",
                        "function": {"name": "f", "arguments": "{}"},
                    },
                ],
            },
            {"role": "tool", "tool_call_id": "a", "content": "1"},
            {"role": "tool", "tool_call_id": "b", "content": "2"},
            {"role": "user", "content": "Thanks"},
        ]
    }
    chat = providers.get("openai-chat")
    report = providers.Report()
    assert chat.render_request(chat.parse_request(body), report=report) == body
    assert report.events == []


def test_bodies_marked_sdk_refused_are_refused_by_the_sdk_types() -> None:
    from pydantic import ValidationError

    from .test_providers_matrix import validate

    marked = [path for path in CASES if "sdk_refuses" in load(path)]
    assert marked
    for path in marked:
        case = load(path)
        with pytest.raises(ValidationError):
            validate(case["provider"], case["payload"], replay=True)


def test_media_in_an_assistant_turn_is_refused_by_openai_responses() -> None:
    # A Gemini model turn holding a generated image (pydantic-ai's FilePart).
    body = load(DATA / "gemini" / "peer-pydantic-ai-slim-file-part-request.json")
    conversation = providers.get("gemini").parse_request(body["payload"])
    responses = providers.get("openai-responses")
    with pytest.raises(UnsupportedContent, match="image in an assistant message"):
        responses.render_request(conversation)
    rendered = responses.render_request(conversation, unsupported="placeholder")
    # A request's assistant message takes one output text: one message each.
    assert [(item["role"], item["content"]) for item in rendered["input"]] == [
        ("user", "Draw"),
        ("assistant", "[image omitted: image in an assistant message]"),
        ("assistant", "Here."),
        ("user", "Nice"),
    ]


def test_anthropic_search_result_in_a_tool_result_goes_back_to_anthropic_only() -> None:
    path = DATA / "anthropic" / "peer-langchain-search-result-request.json"
    conversation = providers.get("anthropic").parse_request(load(path)["payload"])
    # The search results are content the model read: refused unless told.
    with pytest.raises(UnsupportedContent, match="search_result"):
        providers.get("openai-chat").render_request(conversation)
    report = providers.Report()
    with pytest.warns(providers.FidelityWarning):
        chat = providers.get("openai-chat").render_request(
            conversation, report=report, unsupported="drop"
        )
    assert chat["messages"][-1] == {
        "role": "tool",
        "tool_call_id": "call_v",
        "content": "",
    }
    assert [(e.kind, e.detail) for e in report.events] == [
        ("dropped", "anthropic-only search_result not sent to openai-chat")
    ]


@pytest.mark.parametrize(
    ("source", "target", "name"),
    [
        ("anthropic", "openai-chat", "peer-langchain-human-between-request.json"),
        (
            "openai-chat",
            "anthropic",
            "peer-pydantic-ai-slim-user-before-result-request.json",
        ),
    ],
)
def test_user_content_between_call_and_result_stays_only_for_its_provider(
    source: str, target: str, name: str
) -> None:
    # The provider's own body goes back as it came (the exact test); for the
    # other, which wants results right after their calls, the user content moves.
    conversation = providers.get(source).parse_request(
        load(DATA / source / name)["payload"]
    )
    report = providers.Report()
    providers.get(target).render_request(conversation, report=report)
    assert [(e.kind, e.where) for e in report.events] == [
        ("moved", "canister 2 (user)")
    ]
