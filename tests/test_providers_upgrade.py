"""providers.upgrade: documents written before provider content was typed."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from canisters import Assistant, Conversation, Text, User, providers, serialization

LEGACY = Path(__file__).parent / "data" / "legacy"
PROVIDERS = Path(__file__).parent / "data" / "providers"
FORMATS = ("openai-responses", "anthropic", "gemini")


def _documents() -> list[tuple[str, Path, Path]]:
    found = []
    for path in sorted(LEGACY.glob("*.json")):
        name = next(name for name in FORMATS if path.name.startswith(name + "-"))
        found.append((name, path, PROVIDERS / name / path.name[len(name) + 1 :]))
    return found


DOCUMENTS = _documents()


def _load(path: Path) -> Conversation:
    loaded = serialization.from_json(path.read_text())
    assert isinstance(loaded, Conversation)
    return loaded


def _types(conversation: Conversation) -> list[list[str]]:
    return [[part.type for part in getattr(c, "content", ())] for c in conversation]


def test_the_legacy_corpus_is_there() -> None:
    assert len(DOCUMENTS) >= 5
    assert {name for name, _, _ in DOCUMENTS} == set(FORMATS)


@pytest.mark.parametrize(
    ("name", "document", "reply"), DOCUMENTS, ids=[p.name for _, p, _ in DOCUMENTS]
)
def test_an_old_document_gets_the_parts_its_reply_reads_to_today(
    name: str, document: Path, reply: Path
) -> None:
    normalizer = providers.get(name)
    old = _load(document)
    body = json.loads(reply.read_text())["payload"]
    today = normalizer.parse_response(body)
    assert _types(old) != _types(today)  # the document is untyped
    upgraded = providers.upgrade(old)
    assert _types(upgraded) == _types(today)
    # the same reply, byte for byte, and the canisters keep who they are
    assert normalizer.render_response(upgraded) == normalizer.render_response(old)
    assert [(c.id, c.timestamp, c.metadata) for c in upgraded] == [
        (c.id, c.timestamp, c.metadata) for c in old
    ]
    # once typed, nothing is left to type, and it survives serialization
    assert providers.upgrade(upgraded) is upgraded
    assert serialization.from_json(serialization.to_json(upgraded)) == upgraded


def test_an_upgraded_reply_says_what_the_provider_ran_to_another_format() -> None:
    document = LEGACY / "anthropic-web-fetch-tool-response.json"
    old = _load(document)
    upgraded = providers.upgrade(old)
    parts = [part.type for c in upgraded for part in getattr(c, "content", ())]
    assert "provider_tool_call" in parts and "provider_tool_result" in parts
    chat = providers.get("openai-chat")
    report = providers.Report()
    with pytest.warns(providers.FidelityWarning):
        body = chat.render_response(upgraded, unsupported="placeholder", report=report)
    assert report.events
    message = body["choices"][0]["message"]
    assert "tool_calls" not in message  # never a call for the client to run
    assert "anthropic ran web_fetch" in json.dumps(message["content"])


def test_a_conversation_with_nothing_to_type_is_returned_as_it_is() -> None:
    conversation = Conversation(
        [User(content=(Text("hi"),)), Assistant(content=(Text("hello"),))]
    )
    assert providers.upgrade(conversation) is conversation
    assert providers.upgrade(Conversation([])) == Conversation([])
