"""Every provider pair converts over the whole corpus.

A request parsed from any of the five formats renders for any other, and the
result is accepted by that provider's SDK request types -- or rendering raises
:class:`~canisters.UnsupportedContent` naming the part and the provider. Replies
parsed from recorded responses are rendered as the history of a next request.
"""

from __future__ import annotations

import json
import warnings
from pathlib import Path
from typing import Any

import pytest

import canisters
from canisters import Conversation, User, providers

from .providers_support import KEPT_KEY, adapter

DATA = Path(__file__).parent / "data" / "providers"
PROVIDERS = providers.names()
CASES = [
    path
    for provider in PROVIDERS
    for path in sorted((DATA / provider).glob("*.json"))
    if "error" not in json.loads(path.read_text())["payload"]
]


def validate(provider: str, body: dict[str, Any], *, replay: bool = False) -> None:
    """Check ``body`` against ``provider``'s SDK request types (and, but for a
    ``replay`` of a body the provider sent itself, given back as it came, the
    API rules the types do not carry)."""

    if provider == "openai-chat":
        from openai.types.chat import ChatCompletionMessageParam

        adapter(list[ChatCompletionMessageParam]).validate_python(body["messages"])
    elif provider in ("openai-chat-reasoning", "openrouter"):
        from .requests_support import SDK_ACCEPTS

        SDK_ACCEPTS[provider]({"model": "m", "messages": body["messages"]})
    elif provider in ("openai-responses", "open-responses"):
        from openai.types.responses import ResponseInputParam

        if "instructions" in body:
            assert isinstance(body["instructions"], str)
        # input is optional (a request may go on from a previous response):
        # Open Responses leaves it out of an empty conversation.
        if not isinstance(body.get("input", ""), str):
            adapter(ResponseInputParam).validate_python(body["input"])
    elif provider == "anthropic":
        from anthropic.types import MessageParam, TextBlockParam

        messages = body["messages"]
        adapter(list[MessageParam]).validate_python(messages)
        if "system" in body and not isinstance(body["system"], str):
            adapter(list[TextBlockParam]).validate_python(body["system"])
        # API rules the types do not carry: no empty content but an optional
        # final assistant message, and no empty text blocks.
        for number, message in enumerate(messages if not replay else ()):
            final = number == len(messages) - 1 and message["role"] == "assistant"
            assert message["content"] or final, f"message {number} has no content"
            if isinstance(message["content"], list):
                assert all(block.get("text") != "" for block in message["content"]), (
                    f"message {number} has an empty text block"
                )
    elif provider == "gemini":
        from google.genai import types

        def listed(turn: dict[str, Any]) -> dict[str, Any]:
            # Single-object parts, replayed from a REST body that used them, are
            # REST-only: the SDK types model lists.
            parts = turn.get("parts")
            return {**turn, "parts": [parts]} if isinstance(parts, dict) else turn

        contents = body["contents"]
        for turn in contents if isinstance(contents, list) else [contents]:
            types.Content.model_validate(listed(turn))
        system = body.get("systemInstruction", body.get("system_instruction"))
        if system is not None:
            types.Content.model_validate(listed(system))
    elif provider == "bedrock-converse":
        import botocore.session
        import botocore.validate

        from canisters.providers.bedrock_converse import to_sdk

        model = botocore.session.get_session().get_service_model("bedrock-runtime")
        shape = model.operation_model("Converse").input_shape
        # The model id travels in the URL of a REST body: boto3 takes it here.
        params = {"modelId": "m", **to_sdk(body)}
        report = botocore.validate.ParamValidator().validate(params, shape)
        assert not report.has_errors(), report.generate_report()
    else:
        from ollama import Image, Message

        for message in body["messages"]:
            images = message.get("images")
            if images:
                message = {**message, "images": [Image(value=i) for i in images]}
            Message.model_validate(message)


def conversation_of(path: Path) -> Conversation:
    case = json.loads(path.read_text())
    normalizer = providers.get(case["provider"])
    if case["kind"] == "request":
        return normalizer.parse_request(case["payload"])
    reply = normalizer.parse_response(case["payload"])
    return Conversation([User("next"), *reply])


@pytest.mark.parametrize("target", PROVIDERS)
@pytest.mark.parametrize(
    "path", CASES, ids=[f"{p.parent.name}/{p.stem}" for p in CASES]
)
def test_every_pair_converts(path: Path, target: str) -> None:
    conversation = conversation_of(path)
    normalizer = providers.get(target)
    refused: canisters.UnsupportedContent | None = None
    try:
        body = normalizer.render_request(conversation)
    except canisters.UnsupportedContent as error:
        refused = error
    if refused is not None:
        assert refused.provider == target
        # Names a part, or an element of a type the source's normalizer kept,
        # or a wire key the source kept on a canister or part.
        assert refused.part.startswith("canister ")
        assert (
            "part " in refused.part
            or "element " in refused.part
            or KEPT_KEY.fullmatch(refused.part)
        )
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", providers.FidelityWarning)
            for policy in ("drop", "placeholder"):
                validate(
                    target, normalizer.render_request(conversation, unsupported=policy)
                )
        return
    replay = path.parent.name == target
    if replay and "sdk_refuses" in json.loads(path.read_text()):
        return  # a peer body the SDK's types refuse, given back as it came
    validate(target, body, replay=replay)


def test_the_matrix_covers_every_provider() -> None:
    assert {path.parent.name for path in CASES} == set(PROVIDERS)
    assert set(providers.names()) >= set(PROVIDERS)
