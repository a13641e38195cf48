"""A file's name and media type across formats, through the public API: the
name carried where the target has a place for it (Anthropic's document title,
OpenAI's filename, Bedrock's document name), reported where it has none; a
declared type the target refuses, sent as the type of the bytes, reported."""

from __future__ import annotations

import base64
from typing import Any

import pytest

from canisters import UnsupportedContent, providers

from .requests_support import SDK_ACCEPTS, render

PDF = base64.b64encode(b"%PDF-1.4 x").decode()


def chat(filename: str = "report.pdf", mime: str = "application/pdf") -> dict[str, Any]:
    data = f"data:{mime};base64,{PDF}"
    part = {"type": "file", "file": {"file_data": data, "filename": filename}}
    return {
        "model": "m",
        "max_tokens": 64,
        "messages": [
            {"role": "user", "content": [{"type": "text", "text": "sum"}, part]}
        ],
    }


def test_a_files_name_is_an_anthropic_documents_title_and_back() -> None:
    body, events = render("openai-chat", chat(), "anthropic")
    document = body["messages"][0]["content"][1]
    assert document["type"] == "document" and document["title"] == "report.pdf"
    assert not [event for event in events if "filename" in event.where]
    SDK_ACCEPTS["anthropic"](body)
    # Read back, a titled document block is a document: its title goes to
    # OpenAI Chat by the documents rule, as a leading text.
    back, _ = render("anthropic", body, "openai-chat", unsupported="drop")
    title, file = back["messages"][1]["content"]
    assert title == {"type": "text", "text": "Document: report.pdf"}
    assert file["type"] == "file"


def test_a_tool_result_documents_title_round_trips_as_its_file_name() -> None:
    anthropic = {
        "model": "m",
        "max_tokens": 64,
        "messages": [
            {"role": "user", "content": "read it"},
            {
                "role": "assistant",
                "content": [
                    {"type": "tool_use", "id": "t1", "name": "get", "input": {}}
                ],
            },
            {
                "role": "user",
                "content": [
                    {
                        "type": "tool_result",
                        "tool_use_id": "t1",
                        "content": [
                            {
                                "type": "document",
                                "title": "q3.pdf",
                                "source": {
                                    "type": "base64",
                                    "media_type": "application/pdf",
                                    "data": PDF,
                                },
                            }
                        ],
                    }
                ],
            },
        ],
    }
    normalizer = providers.get("anthropic")
    request = normalizer.parse_full_request(anthropic)
    (part,) = request.conversation[-1].content  # type: ignore[attr-defined]
    assert part.filename == "q3.pdf"
    assert normalizer.render_full_request(request) == anthropic
    bedrock, _ = render("anthropic", anthropic, "bedrock-converse")
    (result,) = bedrock["messages"][-1]["content"]
    assert result["toolResult"]["content"][0]["document"]["name"].startswith("q3")


def test_gemini_reports_a_files_name_it_has_no_place_for() -> None:
    body, events = render("openai-chat", chat(), "gemini", unsupported="drop")
    (event,) = [event for event in events if event.where.endswith(".filename")]
    assert event.kind == "dropped" and "report.pdf" in event.detail
    assert "inlineData" in body["contents"][0]["parts"][1]
    with pytest.raises(UnsupportedContent, match="file name"):
        render("openai-chat", chat(), "gemini", unsupported="error")


def test_a_declared_type_anthropic_refuses_goes_as_the_bytes_type_reported() -> None:
    body, events = render("openai-chat", chat(mime="application/x-pdf"), "anthropic")
    document = body["messages"][0]["content"][1]
    assert document["source"]["media_type"] == "application/pdf"
    (event,) = [event for event in events if "application/x-pdf" in event.detail]
    assert event.kind == "synthesized"
