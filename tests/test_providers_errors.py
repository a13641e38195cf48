"""Provider error bodies: read into ErrorReply, raised by parse_response and by
streams, written back per provider and held to each provider's SDK."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import attrs
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from canisters import ModelError, ProviderError, UnsupportedContent, providers
from canisters.providers import ERROR_KINDS, ErrorKind, ErrorReply, ErrorResponse

from .budget import examples

DATA = Path(__file__).parent / "data" / "providers"
NAMES = providers.names()
CASES = sorted(DATA.glob("*/errors/*.json"))

# What each recorded body is (the kind a reader of the body would name).
EXPECTED: dict[str, ErrorKind] = {
    "anthropic/authentication-401": "authentication",
    "anthropic/model-not-found-404": "not_found",
    "anthropic/orphan-tool-result-400": "invalid_request",
    "anthropic/overloaded-529": "overloaded",
    "anthropic/overloaded-stream-event": "overloaded",
    "anthropic/rate-limit-429": "rate_limited",
    "bedrock-converse/issue-bedrock-client-mac-throttling-429": "rate_limited",
    "bedrock-converse/pydantic-ai-count-tokens-400": "invalid_request",
    "bedrock-converse/pydantic-ai-invalid-model-400": "invalid_request",
    "bedrock-converse/vercel-duplicate-tool-ids-400": "invalid_request",
    "bedrock-converse/vercel-empty-message-400": "invalid_request",
    "bedrock-converse/vercel-image-not-supported-400": "invalid_request",
    "bedrock-converse/vercel-model-returned-errors-400": "invalid_request",
    "bedrock-converse/vercel-model-stream-error-event": "server_error",
    "bedrock-converse/vercel-nothing-to-cache-400": "invalid_request",
    "bedrock-converse/vercel-reasoning-in-user-message-400": "invalid_request",
    "bedrock-converse/vercel-temperature-not-supported-400": "invalid_request",
    "bedrock-converse/vercel-tool-name-pattern-400": "invalid_request",
    "gemini/authentication-400": "authentication",
    "gemini/model-not-found-404": "not_found",
    "gemini/overloaded-503": "overloaded",
    "gemini/overloaded-503-list": "overloaded",
    "gemini/resource-exhausted-429": "rate_limited",
    "ollama/custom-model-not-found-404": "not_found",
    "ollama/failed-to-generate": "server_error",
    "ollama/model-not-found-404": "not_found",
    "ollama/stream-error-line": "unknown",
    "openai-chat/authentication-401": "authentication",
    "openai-chat/invalid-image-url-400": "invalid_request",
    "openai-chat/model-not-found-404": "not_found",
    "openai-chat/overloaded-503": "overloaded",
    "openai-chat-reasoning/dashscope-enable-thinking-non-streaming": "invalid_request",
    "openai-chat-reasoning/deepseek-developer-role-400": "invalid_request",
    "openai-chat-reasoning/deepseek-insufficient-balance": "quota_exceeded",
    "openai-chat-reasoning/deepseek-reasoning-content-not-passed-back-400": (
        "invalid_request"
    ),
    "openai-chat-reasoning/deepseek-reasoning-content-quoted-400": "invalid_request",
    "openai-chat-reasoning/kserve-vllm-context-length-400": "context_length_exceeded",
    "openai-chat-reasoning/kserve-vllm-context-length-500": "server_error",
    "openai-chat-reasoning/vllm-auto-tool-choice-400": "invalid_request",
    "openai-chat-reasoning/vllm-flat-auto-tool-choice-400": "invalid_request",
    "openai-chat-reasoning/vllm-flat-max-tokens-400": "invalid_request",
    "openrouter/more-credits-402": "quota_exceeded",
    "openrouter/no-auth-credentials-401": "authentication",
    "openrouter/no-cookie-auth-credentials-401": "authentication",
    "openrouter/no-endpoints-tool-use-404": "not_found",
    "openrouter/no-endpoints-tool-use-selection-404": "not_found",
    "openrouter/pydantic-ai-openrouter-errors-raised-0-429": "rate_limited",
    "openrouter/pydantic-ai-openrouter-errors-raised-1-429": "rate_limited",
    "openrouter/pydantic-ai-openrouter-errors-raised-2-429": "rate_limited",
    "openrouter/pydantic-ai-openrouter-stream-error-event": "invalid_request",
    "openrouter/user-not-found-401": "authentication",
    "openai-responses/authentication-401": "authentication",
    "openai-responses/model-not-found-400": "not_found",
    "open-responses/model-not-found-404": "not_found",
}
# Formats with fewer than the two error bodies asked of every other, and why.
FEW_ERRORS: dict[str, str] = {
    "open-responses": (
        "one: the specification's example; no error body an Open Responses "
        "server sent was found recorded (its corpus' SOURCE.md)"
    ),
}


def case_id(path: Path) -> str:
    return f"{path.parent.parent.name}/{path.stem}"


def load(path: Path) -> dict[str, Any]:
    return json.loads(path.read_text(encoding="utf-8"))  # type: ignore[no-any-return]


def normalizer(name: str) -> Any:
    found = providers.get(name)
    assert isinstance(found, providers.ErrorNormalizer)
    return found


def test_every_provider_has_real_error_bodies() -> None:
    counts = {name: 0 for name in NAMES}
    for path in CASES:
        case = load(path)
        assert case["kind"] == "error" and case["source"]
        assert case["provider"] == path.parent.parent.name
        counts[case["provider"]] += 1
    assert all(
        count >= (1 if name in FEW_ERRORS else 2) for name, count in counts.items()
    ), counts
    assert sorted(EXPECTED) == sorted(map(case_id, CASES))
    for name in NAMES:
        listed = (DATA / name / "errors" / "SOURCE.md").read_text(encoding="utf-8")
        for path in (DATA / name / "errors").glob("*.json"):
            assert f"`{path.name}`" in listed


@pytest.mark.parametrize("path", CASES, ids=case_id)
def test_recorded_error_is_read_and_written_back(path: Path) -> None:
    case = load(path)
    name, body, status = case["provider"], case["payload"], case["status"]
    reader = normalizer(name)
    reply = reader.parse_error(body, status=status)
    assert reply.kind == EXPECTED[case_id(path)]
    assert reply.provider == name and reply.status == status
    assert reply.message  # every recorded body says something
    rendered_status, rendered = reader.render_error(reply)
    if status is not None:
        assert rendered_status == status
    unwrapped = body[0] if isinstance(body, list) else body
    assert rendered == unwrapped  # a list-wrapped Gemini error comes back unwrapped
    again = reader.parse_error(rendered, status=rendered_status)
    if status is None:  # a stream event: the status written tells the kind
        reply = attrs.evolve(reply, status=rendered_status, kind=again.kind)
    assert again == reply


@pytest.mark.parametrize(
    "path", [p for p in CASES if load(p)["form"] == "body"], ids=case_id
)
def test_parse_response_on_an_error_body_raises_error_response(path: Path) -> None:
    case = load(path)
    reader = normalizer(case["provider"])
    with pytest.raises(ErrorResponse) as raised:
        reader.parse_response(case["payload"])
    error = raised.value
    assert isinstance(error, ProviderError)
    assert not isinstance(error, providers.MalformedPayload)
    assert error.reply == reader.parse_error(case["payload"])
    text = str(error)
    assert "\n" not in text and text.startswith(f"{case['provider']} refused the call")
    assert error.reply.kind in text


def test_error_reply_fields_and_message() -> None:
    reply = normalizer("openai-chat").parse_error(
        {
            "error": {
                "message": "This model's maximum context length is 8192 tokens.\n"
                "However, your messages resulted in 9000 tokens.",
                "type": "invalid_request_error",
                "param": "messages",
                "code": "context_length_exceeded",
                "innererror": {"x": 1},
            }
        },
        status=400,
    )
    assert reply.kind == "context_length_exceeded" and reply.param == "messages"
    assert reply.code == "context_length_exceeded" and reply.extras == {
        "innererror": {"x": 1}
    }
    assert not reply.retryable
    assert str(reply).startswith(
        "context_length_exceeded (HTTP 400, invalid_request_error, "
        "context_length_exceeded): This model's maximum context length"
    )
    assert "\n" not in str(ErrorResponse(reply))
    assert ErrorReply("overloaded").retryable
    assert set(ERROR_KINDS) >= {"overloaded", "rate_limited", "content_refused"}


@pytest.mark.parametrize(
    ("name", "body", "kind"),
    [
        (  # Anthropic: a too-long prompt is an invalid request saying so
            "anthropic",
            {
                "type": "error",
                "error": {
                    "type": "invalid_request_error",
                    "message": "prompt is too long: 208310 tokens > 200000 maximum",
                },
            },
            "context_length_exceeded",
        ),
        (
            "openai-chat",
            {
                "error": {
                    "message": "You exceeded your current quota.",
                    "type": "insufficient_quota",
                    "param": None,
                    "code": "insufficient_quota",
                }
            },
            "quota_exceeded",
        ),
        (  # Azure OpenAI's content filter
            "openai-chat",
            {
                "error": {
                    "message": "The response was filtered.",
                    "type": None,
                    "param": "prompt",
                    "code": "content_filter",
                    "status": 400,
                }
            },
            "content_refused",
        ),
        (  # a Responses response that failed, sent with HTTP 200
            "openai-responses",
            {
                "id": "resp_1",
                "object": "response",
                "status": "failed",
                "error": {"code": "rate_limit_exceeded", "message": "Slow down."},
                "output": [],
            },
            "rate_limited",
        ),
        (
            "anthropic",
            {"type": "error", "error": {"type": "billing_error"}},
            "quota_exceeded",
        ),
        ("gemini", {"error": {"code": 504, "status": "DEADLINE_EXCEEDED"}}, "timeout"),
        ("ollama", {"error": "unauthorized", "signin_url": "https://x"}, "unknown"),
    ],
)
def test_kinds_read_from_codes_types_and_messages(
    name: str, body: dict[str, Any], kind: ErrorKind
) -> None:
    reader = normalizer(name)
    assert reader.parse_error(body).kind == kind
    with pytest.raises(ErrorResponse):
        reader.parse_response(body)


def test_a_failed_responses_response_is_relayed_as_an_error_body() -> None:
    reader = normalizer("openai-responses")
    failed = {
        "id": "resp_1",
        "object": "response",
        "status": "failed",
        "model": "gpt-4o",
        "error": {"code": "server_error", "message": "The model failed."},
        "output": [],
    }
    reply = reader.parse_error(failed)
    assert reply.kind == "server_error" and reply.envelope["id"] == "resp_1"
    assert reader.render_error(reply) == (
        500,
        {
            "error": {
                "message": "The model failed.",
                "type": None,
                "param": None,
                "code": "server_error",
            }
        },
    )


@pytest.mark.parametrize("name", NAMES)
def test_what_is_not_an_error_body_is_refused(name: str) -> None:
    reader = normalizer(name)
    for body in ({"model": "x"}, [], "text", {"error": None}):
        with pytest.raises(providers.MalformedPayload):
            reader.parse_error(body)
    with pytest.raises(ProviderError, match="HTTP status"):
        reader.parse_error({"error": "x", "type": "error"}, status=99)
    with pytest.raises(ProviderError, match="ErrorReply"):
        reader.render_error({"error": "x"})


def test_error_reply_refuses_bad_fields() -> None:
    with pytest.raises(ModelError, match="kind"):
        ErrorReply("nope")  # type: ignore[arg-type]
    with pytest.raises(ModelError, match="status"):
        ErrorReply("unknown", status=1000)
    with pytest.raises(ModelError, match="code"):
        ErrorReply("unknown", code=True)
    with pytest.raises(ModelError, match="message"):
        ErrorReply("unknown", 5)  # type: ignore[arg-type]


# Streams ---------------------------------------------------------------------------


def _anthropic_stream() -> list[Any]:
    event = load(DATA / "anthropic" / "errors" / "overloaded-stream-event.json")
    start = {
        "type": "message_start",
        "message": {
            "id": "msg_1",
            "type": "message",
            "role": "assistant",
            "model": "claude",
            "content": [],
            "stop_reason": None,
            "usage": {"input_tokens": 1, "output_tokens": 1},
        },
    }
    return [start, event["payload"]]


def _ollama_stream() -> list[Any]:
    line = load(DATA / "ollama" / "errors" / "stream-error-line.json")["payload"]
    chunk = {
        "model": "gemma3",
        "created_at": "2025-10-26T17:21:21.196249Z",
        "message": {"role": "assistant", "content": " Yes"},
        "done": False,
    }
    return [chunk, line]


STREAMS: dict[str, tuple[Callable[[], list[Any]], ErrorKind]] = {
    "anthropic": (_anthropic_stream, "overloaded"),
    "ollama": (_ollama_stream, "unknown"),
    "gemini": (
        lambda: [
            {"error": {"code": 503, "message": "overloaded", "status": "UNAVAILABLE"}}
        ],
        "overloaded",
    ),
    "openai-chat": (
        lambda: [
            {
                "error": {
                    "message": "Rate limit reached",
                    "type": "requests",
                    "param": None,
                    "code": "rate_limit_exceeded",
                }
            }
        ],
        "rate_limited",
    ),
    "openai-responses": (
        lambda: [
            {
                "type": "error",
                "code": "rate_limit_exceeded",
                "message": "Rate limit reached",
                "param": None,
                "sequence_number": 1,
            }
        ],
        "rate_limited",
    ),
    "openai-chat-reasoning": (
        lambda: [
            {
                "error": {
                    "message": "Rate limit reached",
                    "type": "requests",
                    "param": None,
                    "code": "rate_limit_exceeded",
                }
            }
        ],
        "rate_limited",
    ),
    "openrouter": (
        lambda: [
            load(DATA / "openrouter" / "errors" / "user-not-found-401.json")["payload"]
        ],
        "authentication",
    ),
}
STREAMS["open-responses"] = STREAMS["openai-responses"]  # the same error event


@pytest.mark.parametrize("name", sorted(STREAMS))
def test_a_stream_with_an_error_event_raises_error_response(name: str) -> None:
    make, kind = STREAMS[name]
    events = make()
    with pytest.raises(ErrorResponse) as raised:
        normalizer(name).parse_stream(events)
    assert raised.value.reply.kind == kind
    assert raised.value.reply.provider == name
    # (a Gemini error object says its HTTP status; the others do not)
    assert raised.value.reply.status == (503 if name == "gemini" else None)
    assert raised.value.path == f"$[{len(events) - 1}]"
    assert f"mid-stream at $[{len(events) - 1}]" in str(raised.value)


def test_responses_stream_failed_event_raises_error_response() -> None:
    response = {
        "id": "resp_1",
        "object": "response",
        "status": "in_progress",
        "output": [],
        "error": None,
    }
    failed = dict(
        response,
        status="failed",
        error={"code": "server_error", "message": "The model failed."},
    )
    events = [
        {"type": "response.created", "sequence_number": 0, "response": response},
        {"type": "response.failed", "sequence_number": 1, "response": failed},
    ]
    with pytest.raises(ErrorResponse) as raised:
        normalizer("openai-responses").parse_stream(events)
    assert raised.value.reply.kind == "server_error"
    assert raised.value.reply.message == "The model failed."
    assert raised.value.path == "$[1].response"


def test_stream_error_of_a_plugin_reads_what_it_can() -> None:
    from canisters.providers import streams

    error = streams.stream_error({"type": "overloaded_error", "message": "x"}, "$[2]")
    assert isinstance(error, ErrorResponse) and error.path == "$[2]"
    assert error.reply.message == "x" and error.reply.type == "overloaded_error"
    assert streams.stream_error("boom", "$[0]", provider="p").reply.message == "boom"
    assert "{'detail': 'x'}" in str(streams.stream_error({"detail": "x"}, "$[0]"))


# Across providers -------------------------------------------------------------------

# The kind a provider's body gives back for each kind written into it: a provider
# without a form for a kind writes the nearest one it has.
NEAREST: dict[str, dict[ErrorKind, ErrorKind]] = {
    "anthropic": {
        "context_length_exceeded": "invalid_request",
        "content_refused": "invalid_request",
        "unknown": "server_error",
    },
    "bedrock-converse": {
        "request_too_large": "invalid_request",
        "context_length_exceeded": "invalid_request",
        "content_refused": "invalid_request",
        "unknown": "server_error",
    },
    "gemini": {
        "context_length_exceeded": "invalid_request",
        "content_refused": "invalid_request",
        "quota_exceeded": "rate_limited",
        "unknown": "server_error",
    },
    "ollama": {
        "context_length_exceeded": "invalid_request",
        "content_refused": "invalid_request",
        "quota_exceeded": "rate_limited",
        "unknown": "server_error",
    },
    "openai-chat": {"unknown": "server_error"},
    "openai-chat-reasoning": {"unknown": "server_error"},
    "openai-responses": {"unknown": "server_error"},
    "open-responses": {"unknown": "server_error"},
    # OpenRouter's body says only its status (its code): kinds sharing one meet
    "openrouter": {
        "context_length_exceeded": "invalid_request",
        "content_refused": "invalid_request",
        "unknown": "server_error",
    },
}


@pytest.mark.parametrize("target", NAMES)
@pytest.mark.parametrize("kind", ERROR_KINDS)
def test_a_kind_written_for_a_provider_reads_back(kind: ErrorKind, target: str) -> None:
    writer = normalizer(target)
    status, body = writer.render_error(ErrorReply(kind, "refused", provider="other"))
    assert writer.parse_error(body, status=status).kind == NEAREST[target].get(
        kind, kind
    )


@pytest.mark.parametrize("path", CASES, ids=case_id)
@pytest.mark.parametrize("target", NAMES)
def test_an_error_of_one_provider_is_relayed_by_another(
    path: Path, target: str
) -> None:
    case = load(path)
    reply = normalizer(case["provider"]).parse_error(
        case["payload"], status=case["status"]
    )
    writer = normalizer(target)
    status, body = writer.render_error(reply)
    relayed = writer.parse_error(body, status=status)
    assert relayed.message == reply.message
    # The nearest kind the target spells, or the kind itself where the message
    # tells it (a context length exceeded, read from the message).
    assert relayed.kind in (NEAREST[target].get(reply.kind, reply.kind), reply.kind)


# Held to the SDKs --------------------------------------------------------------------


def _openai_raise(status: int, body: dict[str, Any]) -> Exception:
    import httpx2
    import openai

    transport = httpx2.MockTransport(lambda request: httpx2.Response(status, json=body))
    client = openai.OpenAI(
        api_key="k",
        base_url="http://test/v1",
        max_retries=0,
        http_client=httpx2.Client(transport=transport),
    )
    with pytest.raises(openai.APIStatusError) as raised:
        client.chat.completions.create(model="m", messages=[])
    return raised.value


def _anthropic_raise(status: int, body: dict[str, Any]) -> Exception:
    import anthropic
    import httpx2

    transport = httpx2.MockTransport(lambda request: httpx2.Response(status, json=body))
    client = anthropic.Anthropic(
        api_key="k",
        base_url="http://test",
        max_retries=0,
        http_client=httpx2.Client(transport=transport),
    )
    with pytest.raises(anthropic.APIStatusError) as raised:
        client.messages.create(model="m", max_tokens=1, messages=[])
    return raised.value


def _gemini_raise(status: int, body: dict[str, Any]) -> Exception:
    import httpx
    from google import genai
    from google.genai import errors, types

    transport = httpx.MockTransport(lambda request: httpx.Response(status, json=body))
    client = genai.Client(
        api_key="k",
        http_options=types.HttpOptions(
            base_url="http://test",
            httpx_client=httpx.Client(transport=transport),
            retry_options=types.HttpRetryOptions(attempts=1),
        ),
    )
    with pytest.raises(errors.APIError) as raised:
        client.models.generate_content(model="m", contents="hi")
    return raised.value


def _ollama_raise(status: int, body: dict[str, Any]) -> Exception:
    import httpx
    import ollama

    transport = httpx.MockTransport(lambda request: httpx.Response(status, json=body))
    client = ollama.Client(host="http://test", transport=transport)
    with pytest.raises(ollama.ResponseError) as raised:
        client.chat(model="m", messages=[])
    return raised.value


def _sdk_classes() -> Iterator[tuple[str, ErrorKind, str]]:
    openai_classes: dict[ErrorKind, str] = {
        "invalid_request": "BadRequestError",
        "authentication": "AuthenticationError",
        "permission": "PermissionDeniedError",
        "not_found": "NotFoundError",
        "request_too_large": "APIStatusError",
        "context_length_exceeded": "BadRequestError",
        "rate_limited": "RateLimitError",
        "quota_exceeded": "RateLimitError",
        "overloaded": "InternalServerError",
        "timeout": "InternalServerError",
        "server_error": "InternalServerError",
        "content_refused": "BadRequestError",
        "unknown": "InternalServerError",
    }
    anthropic_classes: dict[ErrorKind, str] = {
        "invalid_request": "BadRequestError",
        "authentication": "AuthenticationError",
        "permission": "PermissionDeniedError",
        "not_found": "NotFoundError",
        "request_too_large": "ContentTooLargeError",
        "context_length_exceeded": "BadRequestError",
        "rate_limited": "RateLimitError",
        "quota_exceeded": "PaymentRequiredError",
        "overloaded": "OverloadedError",
        "timeout": "GatewayTimeoutError",
        "server_error": "InternalServerError",
        "content_refused": "BadRequestError",
        "unknown": "InternalServerError",
    }
    for kind in ERROR_KINDS:
        for name in ("openai-chat", "openai-responses", "openai-chat-reasoning"):
            yield name, kind, f"openai.{openai_classes[kind]}"
        # OpenRouter's 402 is the openai SDK's APIStatusError (it has no class)
        yield (
            "openrouter",
            kind,
            "openai.APIStatusError"
            if kind == "quota_exceeded"
            else f"openai.{openai_classes[kind]}",
        )
        yield "anthropic", kind, f"anthropic.{anthropic_classes[kind]}"
        client_side = kind in (
            "invalid_request",
            "authentication",
            "permission",
            "not_found",
            "request_too_large",
            "context_length_exceeded",
            "rate_limited",
            "quota_exceeded",
            "content_refused",
        )
        yield (
            "gemini",
            kind,
            "google.genai.errors." + ("ClientError" if client_side else "ServerError"),
        )
        yield "ollama", kind, "ollama.ResponseError"


SDK_CLASSES = list(_sdk_classes())
RAISERS: dict[str, Callable[[int, dict[str, Any]], Exception]] = {
    "openai-chat": _openai_raise,
    "openai-responses": _openai_raise,
    "open-responses": _openai_raise,
    "openai-chat-reasoning": _openai_raise,
    "openrouter": _openai_raise,
    "anthropic": _anthropic_raise,
    "gemini": _gemini_raise,
    "ollama": _ollama_raise,
}


@pytest.mark.parametrize(("name", "kind", "expected"), SDK_CLASSES)
def test_the_sdk_raises_its_matching_exception(
    name: str, kind: ErrorKind, expected: str
) -> None:
    """A rendered error given to the provider's SDK over a mocked transport
    raises that SDK's class for the kind, and reads back from the exception."""
    writer = normalizer(name)
    status, body = writer.render_error(ErrorReply(kind, "refused", provider="other"))
    error = RAISERS[name](status, body)
    assert f"{type(error).__module__.split('.')[0]}.{type(error).__name__}" == (
        expected
        if not expected.startswith("google")
        else f"google.{type(error).__name__}"
    )
    if expected.startswith("google"):
        assert type(error).__name__ == expected.rsplit(".", 1)[1]
    read = writer.parse_error(error)
    assert read.kind == NEAREST[name].get(kind, kind)
    assert read.message == "refused" and read.status == status


def test_sdk_classes_checked() -> None:
    assert len({expected for _, _, expected in SDK_CLASSES}) >= 20


_JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=8),
    lambda inner: (
        st.lists(inner, max_size=3)
        | st.dictionaries(
            st.sampled_from(
                ["error", "type", "message", "code", "status", "param", "x"]
            ),
            inner,
            max_size=4,
        )
    ),
    max_leaves=12,
)


@settings(max_examples=examples(200), deadline=None)
@given(st.sampled_from(NAMES), _JSON, st.none() | st.integers(0, 700))
def test_parse_error_on_any_input_reads_or_refuses_in_its_own_words(
    name: str, body: Any, status: int | None
) -> None:
    reader = normalizer(name)
    try:
        reply = reader.parse_error(body, status=status)
    except ProviderError as refused:  # said in a line, and nothing else escapes
        problem = str(refused)
        reply = None
    if reply is None:
        assert "\n" not in problem
        return
    assert reply.kind in ERROR_KINDS and reply.provider == name
    rendered_status, rendered = reader.render_error(reply)
    assert reader.parse_error(rendered, status=rendered_status).message == (
        reply.message
    )


@pytest.mark.parametrize(
    "body",
    [
        {"type": "error"},
        {"type": "error", "error": "Overloaded"},
        {"type": "error", "error": None},
        {"type": "error", "error": ["overloaded_error"]},
    ],
    ids=repr,
)
def test_an_anthropic_error_without_an_error_object_is_refused_at_its_path(
    body: dict[str, Any],
) -> None:
    with pytest.raises(providers.MalformedPayload) as refused:
        normalizer("anthropic").parse_error(body, status=529)
    assert refused.value.path == "$.error"


def _mutated(value: Any, data: st.DataObject) -> Any:
    """``value`` with one of its items replaced by another kind of value,
    dropped, or left; recursively, at one place drawn along the way."""
    if isinstance(value, dict) and value:
        key = data.draw(st.sampled_from(sorted(value)))
        action = data.draw(st.sampled_from(["into", "replace", "drop"]))
        changed = dict(value)
        if action == "drop":
            del changed[key]
        elif action == "replace":
            changed[key] = data.draw(_JSON)
        else:
            changed[key] = _mutated(value[key], data)
        return changed
    if isinstance(value, list) and value:
        index = data.draw(st.integers(0, len(value) - 1))
        changed_list = list(value)
        changed_list[index] = _mutated(value[index], data)
        return changed_list
    return data.draw(_JSON)


@settings(max_examples=examples(300), deadline=None, derandomize=True)
@given(st.data())
def test_recorded_error_bodies_mutated_read_or_are_refused(
    data: st.DataObject,
) -> None:
    """Every recorded error body with a field replaced or dropped, at any
    depth, is read or refused with the library's error: no other exception
    escapes a relay that reads what the provider sent."""
    path = data.draw(st.sampled_from(CASES), label="case")
    body = _mutated(load(path)["payload"], data)
    status = data.draw(st.none() | st.integers(100, 599), label="status")
    problem = ""
    try:
        normalizer(path.parent.parent.name).parse_error(body, status=status)
    except ProviderError as refused:
        problem = str(refused)
    assert "\n" not in problem


# What a relay leaves out: reported, refused under unsupported="error" -----------------


def _gemini_key_error() -> ErrorReply:
    case = load(DATA / "gemini" / "errors" / "authentication-400.json")
    reply: ErrorReply = normalizer("gemini").parse_error(
        case["payload"], status=case["status"]
    )
    return reply


def test_a_relay_reports_each_field_it_does_not_write_as_it_is() -> None:
    report = providers.Report()
    with pytest.warns(providers.FidelityWarning, match="details"):
        status, body = normalizer("openai-chat").render_error(
            _gemini_key_error(), report=report
        )
    assert (status, body["error"]["code"]) == (401, "invalid_api_key")
    said = {(event.kind, event.where): event for event in report.events}
    assert set(said) == {
        ("approximated", "error.code"),
        ("approximated", "error.status"),
        ("dropped", "error.details"),
    }
    assert "'INVALID_ARGUMENT'" in said["approximated", "error.code"].detail
    assert said["approximated", "error.status"].rule == (
        "openai-chat's error table, kind authentication"
    )


def test_a_shape_without_a_parameter_reports_the_one_it_leaves_out() -> None:
    reply = ErrorReply(
        "invalid_request",
        "bad",
        provider="openai-chat",
        type="invalid_request_error",
        param="messages[0].content",
    )
    report = providers.Report()
    with pytest.warns(providers.FidelityWarning):
        normalizer("anthropic").render_error(reply, report=report)
    assert [(e.kind, e.where) for e in report.events] == [("dropped", "error.param")]
    assert "'messages[0].content'" in report.events[0].detail
    quiet = providers.Report()
    normalizer("openai-responses").render_error(reply, report=quiet)
    assert not quiet.events  # the same type, code and param, written as they are


def test_unsupported_error_refuses_a_relay_that_is_not_exact() -> None:
    with pytest.raises(UnsupportedContent, match=r"error field error\.code"):
        normalizer("anthropic").render_error(_gemini_key_error(), unsupported="error")


@pytest.mark.parametrize("path", CASES, ids=case_id)
def test_a_reply_of_the_same_provider_goes_back_exactly_with_nothing_reported(
    path: Path,
) -> None:
    case = load(path)
    reader = normalizer(case["provider"])
    reply = reader.parse_error(case["payload"], status=case["status"])
    report = providers.Report()
    assert reader.render_error(reply, report=report, unsupported="error") == (
        reader.render_error(reply)
    )
    assert not report.events


def test_render_error_options_are_keyword_only_and_checked() -> None:
    reply = ErrorReply("overloaded", "busy")
    writer = normalizer("anthropic")
    with pytest.raises(TypeError):
        writer.render_error(reply, providers.Report())
    with pytest.raises(ProviderError, match="option unsupported"):
        writer.render_error(reply, unsupported="ignore")
