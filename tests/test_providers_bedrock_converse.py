"""Bedrock Converse held to botocore: rendered requests pass its parameter
validation for ``Converse``, rendered replies are what its stubber accepts for
the output shape, its exceptions and stream events read as errors; blobs in
both of their forms; cache points, reasoning and settings across formats."""

from __future__ import annotations

import base64
import json
import warnings
from pathlib import Path
from typing import Any

import pytest

from canisters import Conversation, File, Reasoning, User, providers
from canisters.cli import run
from canisters.providers import ErrorResponse, Report
from canisters.providers.bedrock_converse import to_json, to_sdk

botocore = pytest.importorskip("botocore")
boto3 = pytest.importorskip("boto3")
from botocore.exceptions import ClientError  # noqa: E402
from botocore.parsers import RestJSONParser  # noqa: E402
from botocore.stub import Stubber  # noqa: E402
from botocore.validate import ParamValidator  # noqa: E402

DATA = Path(__file__).parent / "data"
ROOT = Path(__file__).parent.parent
NAME = "bedrock-converse"
BEDROCK = providers.get(NAME)
MODEL = botocore.session.get_session().get_service_model("bedrock-runtime")
CONVERSE = MODEL.operation_model("Converse")


def corpus(provider: str, kind: str) -> dict[str, Any]:
    found = {}
    for path in sorted((DATA / "providers" / provider).glob("*.json")):
        case = json.loads(path.read_text(encoding="utf-8"))
        if case["kind"] == kind and not (
            kind == "response" and isinstance(case["payload"].get("error"), dict)
        ):
            found[f"{provider}/{path.stem}"] = case["payload"]
    return found


REQUESTS = corpus(NAME, "request")
REPLIES = corpus(NAME, "response")
OTHERS = ("anthropic", "gemini", "ollama", "openai-chat", "openai-responses")


def invalid(body: dict[str, Any]) -> str:
    """botocore's report on ``body`` as the parameters of ``Converse`` (a REST
    body has its model id in the URL: boto3 takes it as ``modelId``)."""
    params = {"modelId": "model-in-the-url", **to_sdk(body)}
    report = ParamValidator().validate(params, CONVERSE.input_shape)
    return report.generate_report()  # type: ignore[no-any-return]


def parsed(body: dict[str, Any]) -> dict[str, Any]:
    """What botocore's parser makes of ``body`` sent as the HTTP response of
    ``Converse`` (members the installed service model does not know, such as a
    newer usage count, are left out)."""
    text = json.dumps(to_json(body)).encode()
    response = {"status_code": 200, "headers": {}, "body": text}
    answer: dict[str, Any] = RestJSONParser().parse(response, CONVERSE.output_shape)
    answer.pop("ResponseMetadata", None)
    return answer


def stubbed(body: dict[str, Any]) -> dict[str, Any]:
    """What boto3's ``converse`` returns when the stubber answers ``body``
    (which it first holds to the output shape)."""
    client = boto3.client(
        "bedrock-runtime",
        region_name="us-east-1",
        aws_access_key_id="testing",
        aws_secret_access_key="testing",
    )
    with Stubber(client) as stubber:
        stubber.add_response("converse", to_sdk(body))  # validated against the shape
        answer: dict[str, Any] = client.converse(modelId="m", messages=[])
    answer.pop("ResponseMetadata", None)
    return answer


def quietly(function: Any, *args: Any, **kwargs: Any) -> Any:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return function(*args, **kwargs)


def test_the_corpus_has_ten_bodies_of_each_kind() -> None:
    errors = list((DATA / "providers" / NAME / "errors").glob("*.json"))
    streams = list((DATA / "streams" / NAME).glob("*.ndjson"))
    assert min(len(REQUESTS), len(REPLIES), len(errors), len(streams)) >= 10


@pytest.mark.parametrize("name", sorted(REQUESTS))
def test_recorded_requests_render_back_valid(name: str) -> None:
    body = REQUESTS[name]
    rendered = BEDROCK.render_full_request(BEDROCK.parse_full_request(body))
    assert rendered == body
    assert invalid(rendered) == ""


@pytest.mark.parametrize(
    "name", sorted(n for other in OTHERS for n in corpus(other, "request"))
)
def test_other_formats_requests_render_to_parameters_botocore_accepts(
    name: str,
) -> None:
    provider = name.split("/")[0]
    body = corpus(provider, "request")[name]
    request = quietly(providers.get(provider).parse_full_request, body)
    report = Report()
    rendered = quietly(
        BEDROCK.render_full_request,
        request,
        unsupported="drop",
        report=report,
        model="anthropic.claude-3-5-sonnet-20240620-v1:0",
    )
    if not rendered["messages"]:
        pytest.skip("nothing left to send")  # Converse needs a message
    assert invalid(rendered) == ""


def test_readme_example_converted_to_bedrock_is_what_botocore_accepts(
    tmp_path: Path,
) -> None:
    example = ROOT / "documentation" / "examples" / "anthropic-request.json"
    chat, converse = tmp_path / "chat.json", tmp_path / "converse.json"
    arguments = ["convert", "--from", "anthropic", "--to", "openai-chat"]
    assert run([*arguments, str(example), "-o", str(chat)]) == 0
    arguments = ["convert", "--from", "openai-chat", "--to", NAME]
    assert run([*arguments, str(chat), "-o", str(converse)]) == 0
    body = json.loads(converse.read_text(encoding="utf-8"))
    assert invalid(body) == ""
    kinds = [next(iter(block)) for m in body["messages"] for block in m["content"]]
    assert {"image", "toolUse", "toolResult"} <= set(kinds)
    assert body["system"] and body["toolConfig"]["tools"][0]["toolSpec"]["name"]


@pytest.mark.parametrize("name", sorted(REPLIES))
def test_recorded_replies_go_through_the_stubber(name: str) -> None:
    body = REPLIES[name]
    reply = BEDROCK.parse_response(body)
    assert BEDROCK.render_response(reply) == body
    answer = stubbed(parsed(body))
    # boto3's answer reads as the JSON body does, but for what botocore left out.
    from_sdk = BEDROCK.parse_response(answer)
    assert [c.role for c in from_sdk] == [c.role for c in reply]
    assert from_sdk[0].metadata.finish_reason == reply[0].metadata.finish_reason


@pytest.mark.parametrize(
    "name", sorted(n for other in OTHERS for n in corpus(other, "response"))
)
def test_other_formats_replies_render_to_what_the_stubber_accepts(name: str) -> None:
    provider = name.split("/")[0]
    reply = quietly(
        providers.get(provider).parse_response, corpus(provider, "response")[name]
    )
    rendered = quietly(BEDROCK.render_response, reply, unsupported="drop")
    answer = stubbed(rendered)
    assert answer["output"]["message"]["role"] == "assistant"
    assert answer["stopReason"] == rendered["stopReason"]


def test_blobs_are_read_in_both_forms_and_written_as_they_came() -> None:
    png = b"\x89PNG\r\n\x1a\n" + bytes(range(40))
    sdk = {
        "messages": [
            {
                "role": "user",
                "content": [
                    {"text": "look"},
                    {"image": {"format": "png", "source": {"bytes": png}}},
                ],
            },
            {
                "role": "assistant",
                "content": [{"reasoningContent": {"redactedContent": b"\x00\x01"}}],
            },
        ]
    }
    rest = to_json(sdk)
    assert rest["messages"][0]["content"][1]["image"]["source"]["bytes"] == (
        base64.b64encode(png).decode()
    )
    assert to_sdk(rest) == sdk
    from_sdk, from_rest = BEDROCK.parse_request(sdk), BEDROCK.parse_request(rest)
    image = from_sdk[0].content[1]  # type: ignore[attr-defined]
    assert image.data == png == from_rest[0].content[1].data  # type: ignore[attr-defined]
    assert BEDROCK.render_request(from_sdk) == sdk
    assert BEDROCK.render_request(from_rest) == rest
    assert invalid(BEDROCK.render_request(from_sdk)) == ""
    # A part made elsewhere goes as base64 text: the JSON form.
    made = Conversation([User([image.__class__(data=png, mime_type="image/png")])])
    block = BEDROCK.render_request(made)["messages"][0]["content"][0]
    assert block["image"]["source"]["bytes"] == base64.b64encode(png).decode()


def test_cache_points_and_cache_control_carry_both_ways() -> None:
    anthropic = providers.get("anthropic")
    body = {
        "model": "claude",
        "max_tokens": 100,
        "system": [
            {"type": "text", "text": "rules", "cache_control": {"type": "ephemeral"}}
        ],
        "messages": [
            {
                "role": "user",
                "content": [
                    {
                        "type": "text",
                        "text": "long",
                        "cache_control": {"type": "ephemeral", "ttl": "1h"},
                    }
                ],
            }
        ],
    }
    converse = BEDROCK.render_full_request(
        anthropic.parse_full_request(body), unsupported="error"
    )
    assert converse["system"] == [
        {"text": "rules"},
        {"cachePoint": {"type": "default"}},
    ]
    assert converse["messages"][0]["content"] == [
        {"text": "long"},
        {"cachePoint": {"type": "default", "ttl": "1h"}},
    ]
    assert invalid(converse) == ""
    back = anthropic.render_full_request(
        BEDROCK.parse_full_request(converse), unsupported="error"
    )
    assert back["system"] == body["system"]
    assert back["messages"] == body["messages"]


def test_signed_reasoning_stays_here_and_is_reported_elsewhere() -> None:
    name = "bedrock-converse/peer-pydantic-ai-thinking-part-anthropic-1-request"
    body = REQUESTS[name]
    conversation = BEDROCK.parse_request(body)
    signed = [
        part
        for canister in conversation
        for part in getattr(canister, "content", ())
        if isinstance(part, Reasoning)
    ]
    assert signed and all(p.signature and p.provider == NAME for p in signed)
    report = Report()
    sent = providers.get("anthropic").render_request(
        conversation, unsupported="drop", report=report
    )
    assert "thinking" not in json.dumps(sent)
    assert any("reasoning" in event.detail for event in report.events)


def test_settings_read_into_the_neutral_request_and_back() -> None:
    body = {
        "modelId": "anthropic.claude-sonnet-4",
        "messages": [{"role": "user", "content": [{"text": "hi"}]}],
        "inferenceConfig": {
            "maxTokens": 2048,
            "temperature": 1,
            "stopSequences": ["x"],
        },
        "toolConfig": {
            "tools": [
                {
                    "toolSpec": {
                        "name": "get",
                        "description": "d",
                        "inputSchema": {"json": {"type": "object"}},
                    }
                },
                {"cachePoint": {"type": "default"}},
            ],
            "toolChoice": {"tool": {"name": "get"}},
        },
        "additionalModelRequestFields": {
            "thinking": {"type": "enabled", "budget_tokens": 1024},
            "top_k": 5,
        },
        "additionalModelResponseFieldPaths": ["/stop_sequence"],
        "guardrailConfig": {"guardrailIdentifier": "g", "guardrailVersion": "1"},
        "promptVariables": {"topic": {"text": "x"}},
        "requestMetadata": {"team": "a"},
        "performanceConfig": {"latency": "optimized"},
        "serviceTier": {"type": "priority"},
    }
    request = BEDROCK.parse_full_request(body)
    assert request.model == "anthropic.claude-sonnet-4"
    assert request.generation.max_output_tokens == 2048
    assert request.generation.stop == ("x",)
    assert request.tool_choice is not None and request.tool_choice.names == ("get",)
    assert request.reasoning is not None and request.reasoning.budget_tokens == 1024
    assert dict(request.metadata or {}) == {"team": "a"}
    assert request.service_tier == "priority"
    assert BEDROCK.render_full_request(request) == body
    assert invalid(body) == ""
    chat = providers.get("openai-chat").render_full_request(request, unsupported="drop")
    assert chat["tool_choice"] == {"type": "function", "function": {"name": "get"}}
    assert chat["max_completion_tokens"] == 2048 or chat.get("max_tokens") == 2048


@pytest.mark.parametrize(
    ("choice", "wire"),
    [
        ({"type": "auto"}, {"auto": {}}),
        ({"type": "any"}, {"any": {}}),
        ({"type": "tool", "name": "get"}, {"tool": {"name": "get"}}),
    ],
)
def test_tool_choice_from_anthropic(choice: dict[str, Any], wire: Any) -> None:
    body = {
        "model": "claude",
        "max_tokens": 10,
        "tool_choice": choice,
        "tools": [{"name": "get", "input_schema": {"type": "object"}}],
        "messages": [{"role": "user", "content": "hi"}],
    }
    request = providers.get("anthropic").parse_full_request(body)
    converse = BEDROCK.render_full_request(request, unsupported="drop")
    assert converse["toolConfig"]["toolChoice"] == wire
    assert invalid(converse) == ""


def events(name: str) -> list[Any]:
    path = DATA / "streams" / NAME / name
    return [json.loads(line) for line in path.read_text().splitlines() if line]


@pytest.mark.parametrize(
    "name", sorted(p.name for p in (DATA / "streams" / NAME).glob("*.ndjson"))
)
def test_streams_accumulate_to_a_reply_the_stubber_accepts(name: str) -> None:
    reply = BEDROCK.parse_stream(events(name))
    body = BEDROCK.render_response(reply)
    stubbed(parsed(body))
    assert BEDROCK.parse_response(body)[0].metadata == reply[0].metadata


def test_a_stream_of_sdk_events_with_bytes_reads_as_the_json_one() -> None:
    json_events = events("vercel-redacted-content-tool.ndjson")
    sdk_events = [to_sdk(event) for event in json_events]
    assert sdk_events != json_events  # the redacted content is bytes
    from_sdk = BEDROCK.parse_stream(sdk_events)
    from_json = BEDROCK.parse_stream(json_events)
    first = from_sdk[0].content[0]  # type: ignore[attr-defined]
    assert first.redacted == from_json[0].content[0].redacted  # type: ignore[attr-defined]
    tool = [c for c in from_json if c.role.value == "invocation"]
    assert tool and tool[0].arguments["groups"][0]["name"] == "Sales"  # type: ignore[attr-defined]


def test_a_citations_stream_keeps_its_citations() -> None:
    citation = {
        "location": {"documentPage": {"documentIndex": 0, "start": 1, "end": 2}}
    }
    stream = [
        {"messageStart": {"role": "assistant"}},
        {
            "contentBlockDelta": {
                "contentBlockIndex": 0,
                "delta": {"citation": citation},
            }
        },
        {"contentBlockDelta": {"contentBlockIndex": 0, "delta": {"text": "cited"}}},
        {"contentBlockStop": {"contentBlockIndex": 0}},
        {"messageStop": {"stopReason": "end_turn"}},
        {
            "metadata": {
                "usage": {"inputTokens": 1, "outputTokens": 1, "totalTokens": 2}
            }
        },
    ]
    body = BEDROCK.render_response(BEDROCK.parse_stream(stream))
    assert body["output"]["message"]["content"] == [
        {"citationsContent": {"content": [{"text": "cited"}], "citations": [citation]}}
    ]


@pytest.mark.parametrize(
    ("code", "status", "kind"),
    [
        ("ValidationException", 400, "invalid_request"),
        ("ThrottlingException", 429, "rate_limited"),
        ("AccessDeniedException", 403, "permission"),
        ("ModelErrorException", 424, "server_error"),
        ("ServiceUnavailableException", 503, "overloaded"),
        ("ModelTimeoutException", 408, "timeout"),
        ("ModelNotReadyException", 429, "overloaded"),
        ("ResourceNotFoundException", 404, "not_found"),
        ("InternalServerException", 500, "server_error"),
        ("ServiceQuotaExceededException", 400, "quota_exceeded"),
    ],
)
def test_the_exceptions_boto3_raises_read_as_their_kinds(
    code: str, status: int, kind: str
) -> None:
    response = {
        "Error": {"Code": code, "Message": f"{code} said"},
        "ResponseMetadata": {"HTTPStatusCode": status},
    }
    error = ClientError(response, "Converse")  # type: ignore[arg-type]
    reply = BEDROCK.parse_error(error)
    assert (reply.kind, reply.status, reply.type) == (kind, status, code)
    assert reply.message == f"{code} said"
    assert BEDROCK.render_error(reply) == (status, response)
    with pytest.raises(ErrorResponse):
        BEDROCK.parse_response(response)


@pytest.mark.parametrize(
    ("event", "kind"),
    [
        ("throttlingException", "rate_limited"),
        ("validationException", "invalid_request"),
        ("modelStreamErrorException", "server_error"),
        ("internalServerException", "server_error"),
        ("serviceUnavailableException", "overloaded"),
    ],
)
def test_a_stream_exception_event_raises(event: str, kind: str) -> None:
    stream = [{"messageStart": {"role": "assistant"}}, {event: {"message": "no"}}]
    with pytest.raises(ErrorResponse) as raised:
        BEDROCK.parse_stream(stream)
    assert raised.value.reply.kind == kind
    assert raised.value.reply.message == "no"


def test_another_formats_error_is_written_as_boto3_raises_it() -> None:
    reply = providers.get("anthropic").parse_error(
        {"type": "error", "error": {"type": "rate_limit_error", "message": "slow"}},
        status=429,
    )
    status, body = BEDROCK.render_error(reply)
    assert (status, body) == (
        429,
        {"Error": {"Message": "slow", "Code": "ThrottlingException"}},
    )


@pytest.mark.parametrize("kind", providers.ERROR_KINDS)
def test_the_exception_written_for_a_kind_is_the_one_boto3_raises(kind: Any) -> None:
    status, body = BEDROCK.render_error(
        providers.ErrorReply(kind, "refused", provider="other")
    )
    code = body["Error"]["Code"]
    client = boto3.client(
        "bedrock-runtime",
        region_name="us-east-1",
        aws_access_key_id="testing",
        aws_secret_access_key="testing",
    )
    with Stubber(client) as stubber:
        stubber.add_client_error(
            "converse",
            service_error_code=code,
            service_message="refused",
            http_status_code=status,
        )
        with pytest.raises(ClientError) as raised:
            client.converse(modelId="m", messages=[])
    modeled = getattr(client.exceptions, code, None)
    assert modeled is None or isinstance(raised.value, modeled)
    reply = BEDROCK.parse_error(raised.value)
    assert (reply.kind, reply.status) == (
        BEDROCK.parse_error(body, status=status).kind,
        status,
    )
    nearest = {"request_too_large", "context_length_exceeded", "content_refused"}
    wanted = "invalid_request" if kind in nearest else kind
    assert reply.kind == ("server_error" if kind == "unknown" else wanted)


def test_structured_output_goes_to_output_config_and_back() -> None:
    schema = {
        "type": "object",
        "properties": {"city": {"type": "string"}},
        "required": ["city"],
    }
    chat = providers.get("openai-chat")
    body = {
        "model": "gpt",
        "messages": [{"role": "user", "content": "where?"}],
        "response_format": {
            "type": "json_schema",
            "json_schema": {"name": "City", "schema": schema},
        },
    }
    converse = BEDROCK.render_full_request(
        chat.parse_full_request(body), unsupported="error"
    )
    inner = converse["outputConfig"]["textFormat"]["structure"]["jsonSchema"]
    assert json.loads(inner["schema"]) == schema and inner["name"] == "City"
    assert invalid(converse) == ""
    back = chat.render_full_request(
        BEDROCK.parse_full_request(converse), unsupported="error"
    )
    assert back["response_format"]["json_schema"]["schema"] == schema


def test_a_file_name_becomes_a_document_name_converse_takes() -> None:
    pdf = b"%PDF-1.4 a"
    made = Conversation(
        [User([File(data=pdf, mime_type="application/pdf", filename="q3  report.pdf")])]
    )
    report = Report()
    block = BEDROCK.render_request(made, report=report)["messages"][0]["content"][0]
    assert block["document"]["name"] == "q3 report-pdf"
    assert [event.kind for event in report.events] == ["synthesized"]
    again = BEDROCK.render_request(
        BEDROCK.parse_request({"messages": [{"role": "user", "content": [block]}]})
    )
    assert again["messages"][0]["content"][0] == block
