"""Whole requests in the tests: each provider SDK's request types, the corpus,
and the checks every request module's tests make.

``SDK_ACCEPTS[provider](body)`` raises (a pydantic ``ValidationError`` or an
``AssertionError`` naming the keys) unless ``body``, a whole request body
rendered for ``provider``, is one its SDK's request types take.
"""

from __future__ import annotations

import copy
import functools
import json
import typing
import warnings
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from hypothesis import strategies as st

import canisters
from canisters import Request, providers

from .providers_support import Corpus, adapter
from .strategies import json_values

DATA = Path(__file__).parent / "data" / "providers"


def _known(kind: Any, *extra: str) -> set[str]:
    return set(typing.get_type_hints(kind)) | set(extra)


def _keys(body: dict[str, Any], known: set[str]) -> None:
    assert set(body) <= known, sorted(set(body) - known)


def openai_chat_accepts(body: dict[str, Any]) -> None:
    """The openai SDK's ``CompletionCreateParamsNonStreaming`` and the types of
    its typed fields."""
    from openai.types.chat import (
        ChatCompletionMessageParam,
        ChatCompletionToolChoiceOptionParam,
        ChatCompletionToolUnionParam,
    )
    from openai.types.chat.completion_create_params import (
        CompletionCreateParamsNonStreaming,
        ResponseFormat,
    )

    _keys(body, _known(CompletionCreateParamsNonStreaming, "stream"))
    plain = {key: value for key, value in body.items() if key != "stream"}
    adapter(CompletionCreateParamsNonStreaming).validate_python(plain)
    adapter(list[ChatCompletionMessageParam]).validate_python(body["messages"])
    if "tools" in body:
        adapter(list[ChatCompletionToolUnionParam]).validate_python(body["tools"])
    if "tool_choice" in body:
        adapter(ChatCompletionToolChoiceOptionParam).validate_python(
            body["tool_choice"]
        )
    if "response_format" in body:
        adapter(ResponseFormat).validate_python(body["response_format"])


def openai_responses_accepts(body: dict[str, Any]) -> None:
    """The openai SDK's ``ResponseCreateParamsNonStreaming``."""
    from openai.types.responses.response_create_params import (
        ResponseCreateParamsNonStreaming,
    )

    _keys(body, _known(ResponseCreateParamsNonStreaming, "stream"))
    plain = {key: value for key, value in body.items() if key != "stream"}
    adapter(ResponseCreateParamsNonStreaming).validate_python(plain)


def anthropic_accepts(body: dict[str, Any]) -> None:
    """The anthropic SDK's ``MessageCreateParamsNonStreaming`` (which requires
    ``max_tokens``, ``messages`` and ``model``)."""
    from anthropic.types.message_create_params import (
        MessageCreateParamsNonStreaming,
    )

    _keys(body, _known(MessageCreateParamsNonStreaming, "stream") | set(_SAMPLING))
    for key in ("max_tokens", "messages", "model"):
        assert key in body, key
    plain = {key: value for key, value in body.items() if key != "stream"}
    for key, kind in _SAMPLING.items():
        if key in plain:
            adapter(kind).validate_python(plain.pop(key))
    adapter(MessageCreateParamsNonStreaming).validate_python(plain)


# The Messages API's sampling fields, which the SDK's request types no longer
# list (the SDK sends them through ``extra_body``).
_SAMPLING = {"temperature": float, "top_p": float, "top_k": int}


@functools.cache
def _gemini_types() -> dict[str, Any]:
    """The google-genai type of each key of a ``generateContent`` REST body (the
    SDK's models take the REST casing as aliases, and forbid unknown keys)."""
    from google.genai import types

    kinds: dict[str, Any] = {
        "contents": list[types.Content],
        "systemInstruction": types.Content,
        "tools": list[types.Tool],
        "toolConfig": types.ToolConfig,
        "generationConfig": types.GenerationConfig,
        "safetySettings": list[types.SafetySetting],
        "cachedContent": str,
        "labels": dict[str, str],
        "serviceTier": str,
    }
    snake = {
        "".join(f"_{c.lower()}" if c.isupper() else c for c in key): kind
        for key, kind in kinds.items()
    }
    return {**kinds, **snake, "model": str, "stream": bool, "store": bool}


def gemini_accepts(body: dict[str, Any]) -> None:
    """The google-genai types of each key of a ``generateContent`` body."""
    kinds = _gemini_types()
    _keys(body, set(kinds))
    for key, value in body.items():
        adapter(kinds[key]).validate_python(value)


def ollama_accepts(body: dict[str, Any]) -> None:
    """The ollama client's ``ChatRequest``."""
    from ollama._types import ChatRequest

    _keys(body, set(ChatRequest.model_fields))
    ChatRequest.model_validate(body)


@functools.cache
def _converse_input() -> Any:
    import botocore.session

    service = botocore.session.get_session().get_service_model("bedrock-runtime")
    return service.operation_model("Converse").input_shape


def bedrock_converse_accepts(body: dict[str, Any]) -> None:
    """botocore's parameter validation for ``Converse`` (the body's bytes as the
    SDK takes them; the model, which the REST API takes in the URL, as
    ``modelId``)."""
    from botocore.validate import ParamValidator

    from canisters.providers.bedrock_converse import to_sdk

    params = {**to_sdk(body)}
    params["modelId"] = params.pop("model", None) or "model-in-the-url"
    report = ParamValidator().validate(params, _converse_input())
    assert not report.has_errors(), report.generate_report()


# The keys each OpenAI Chat dialect adds: at the top of a request (checked by
# hand, the SDK's types do not know them) and on an assistant message (the
# SDK's message types take extra keys; checked here by their own shapes).
_DIALECT_TOP = {
    "openai-chat-reasoning": frozenset(),
    "openrouter": frozenset({"reasoning", "provider", "models", "transforms", "usage"}),
}
_DIALECT_MESSAGE = {
    "openai-chat-reasoning": {"reasoning_content": (str,)},
    "openrouter": {"reasoning": (str, type(None)), "reasoning_details": (list,)},
}
_DETAIL_TYPES = {"reasoning.text", "reasoning.summary", "reasoning.encrypted"}


def _openrouter_reasoning(value: Any) -> None:
    assert isinstance(value, dict), value
    assert set(value) <= {"effort", "max_tokens", "enabled", "exclude"}, value
    assert isinstance(value.get("effort", ""), str)
    assert isinstance(value.get("max_tokens", 0), int)
    for key in ("enabled", "exclude"):
        assert isinstance(value.get(key, False), bool)


def dialect_accepts(name: str) -> Callable[[dict[str, Any]], None]:
    """The check of an OpenAI Chat dialect: the openai SDK's, on the body
    without the dialect's keys, which are checked by their own shapes."""

    def accepts(body: dict[str, Any]) -> None:
        plain = {k: v for k, v in body.items() if k not in _DIALECT_TOP[name]}
        if "reasoning" in body and name == "openrouter":
            _openrouter_reasoning(body["reasoning"])
        messages = []
        for message in body.get("messages", []):
            own = _DIALECT_MESSAGE[name]
            for key, types in own.items():
                if key in message:
                    assert message.get("role") == "assistant", message
                    assert isinstance(message[key], types), (key, message[key])
            for detail in message.get("reasoning_details", ()):
                assert isinstance(detail, dict) and detail.get("type") in _DETAIL_TYPES
            messages.append({k: v for k, v in message.items() if k not in own})
        if "messages" in body:
            plain["messages"] = messages
        openai_chat_accepts(plain)

    return accepts


SDK_ACCEPTS: dict[str, Callable[[dict[str, Any]], None]] = {
    "openai-chat": openai_chat_accepts,
    "openai-responses": openai_responses_accepts,
    "open-responses": openai_responses_accepts,
    "anthropic": anthropic_accepts,
    "gemini": gemini_accepts,
    "ollama": ollama_accepts,
    "bedrock-converse": bedrock_converse_accepts,
    "openai-chat-reasoning": dialect_accepts("openai-chat-reasoning"),
    "openrouter": dialect_accepts("openrouter"),
}


def whole_request_providers() -> list[str]:
    """The registered providers whose normalizer reads and writes whole requests."""
    return [
        name
        for name in providers.names()
        if isinstance(providers.get(name), providers.RequestNormalizer)
    ]


def corpus_requests(provider: str) -> list[Path]:
    """The corpus cases of ``provider`` holding a request body its SDK takes
    (``kind: "request"``, not marked ``sdk_refuses``)."""
    found = []
    for path in sorted((DATA / provider).glob("*.json")):
        case = json.loads(path.read_text(encoding="utf-8"))
        if case.get("kind") == "request" and not case.get("sdk_refuses"):
            found.append(path)
    return found


def payload(path: Path) -> dict[str, Any]:
    """The body of one corpus case."""
    return json.loads(path.read_text(encoding="utf-8"))["payload"]  # type: ignore[no-any-return]


def recorded_requests(provider: str) -> list[Path]:
    """The corpus cases of ``provider`` named as requests."""
    return [path for path in Corpus(provider).cases if "request" in path.stem]


def comes_back_whole(normalizer: Any, body: dict[str, Any], **options: Any) -> Request:
    """Assert that ``body`` read whole renders back exactly (with ``options``),
    also after ``to_json`` / ``from_json``; the request read."""
    request = normalizer.parse_full_request(copy.deepcopy(body))
    assert normalizer.render_full_request(request, **options) == body
    again = canisters.from_json(canisters.to_json(request))
    assert again == request
    assert normalizer.render_full_request(again, **options) == body
    return request  # type: ignore[no-any-return]


def comes_back_or_is_refused(normalizer: Any, body: dict[str, Any]) -> None:
    """Assert that any ``body`` is refused with the library's error, or read
    whole and rendered back exactly (the request also surviving a document):
    its settings before they are read (copied), and after (translated)."""
    try:
        request = normalizer.parse_full_request(body)
    except canisters.ProviderError:
        return
    # Settings not read yet go back as they came ...
    assert normalizer.render_full_request(request) == body
    try:
        request.model
    except canisters.ProviderError:
        return
    assert normalizer.render_full_request(request) == body
    again = canisters.from_json(canisters.to_json(request))
    assert again == request


def render_reported(
    normalizer: Any, request: Request, **options: Any
) -> tuple[dict[str, Any], list[Any]]:
    """``request`` rendered under ``unsupported="drop"`` (quietly), with the
    events reported."""
    report = providers.Report()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", providers.FidelityWarning)
        body = normalizer.render_full_request(
            request, unsupported="drop", report=report, **options
        )
    return body, report.events


def chat_functions(
    parameters: Mapping[str, Any], other: str | None = None
) -> st.SearchStrategy[dict[str, Any]]:
    """Chat-shaped ``function`` objects (OpenAI Chat's, Ollama's), near
    misses included: a name, a description, ``parameters`` and ``strict``
    (and the key ``other``), each perhaps any JSON value."""
    optional = {
        "description": st.text(max_size=5) | json_values,
        "parameters": st.just(parameters) | json_values,
        "strict": st.booleans() | json_values,
    }
    if other is not None:
        optional[other] = json_values
    return st.fixed_dictionaries(
        {"name": st.sampled_from(["f", "g", ""]) | json_values}, optional=optional
    )


def chat_tools(
    function: st.SearchStrategy[dict[str, Any]], other: str
) -> st.SearchStrategy[dict[str, Any]]:
    """Chat-shaped ``tools`` entries of ``function`` objects, near misses
    included: a type, the function, and the key ``other``."""
    return st.fixed_dictionaries(
        {"type": st.sampled_from(["function", "custom"]) | json_values},
        optional={"function": function, other: json_values},
    )


def bodies_of(
    base: Mapping[str, Any],
    keys: Sequence[str],
    values: Mapping[str, st.SearchStrategy[Any]],
    max_size: int = 8,
) -> st.SearchStrategy[dict[str, Any]]:
    """Bodies of ``base`` (the conversation) and up to ``max_size`` of
    ``keys``, each drawn from ``values[key]`` or any JSON value."""

    @st.composite
    def bodies(draw: Any) -> dict[str, Any]:
        body = dict(base)
        for key in draw(
            st.lists(st.sampled_from(keys), max_size=max_size, unique=True)
        ):
            body[key] = draw(values.get(key, json_values) | json_values)
        return body

    return bodies()


def render(
    source: str, body: dict[str, Any], target: str, **options: Any
) -> tuple[dict[str, Any], list[Any]]:
    """``body`` read as ``source`` and rendered whole for ``target``, with the
    report's events (fidelity warnings silenced)."""
    request = providers.get(source).parse_full_request(body)
    report = providers.Report()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", providers.FidelityWarning)
        rendered = providers.get(target).render_full_request(
            request, report=report, **options
        )
    return rendered, list(report.events)
