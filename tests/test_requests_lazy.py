"""Whole requests read their settings when first needed (see
``WholeRequests.parse_full_request``): what a user can tell, and what not."""

from __future__ import annotations

import copy
import pickle
from typing import Any

import attrs
import pytest

import canisters
from canisters import Request, providers

BODY: dict[str, Any] = {
    "messages": [{"role": "user", "content": "Weather in Paris?"}],
    "temperature": 0.5,
    "model": "gpt-4.1",  # after the messages: the order comes back too
    "tools": [
        {
            "type": "function",
            "function": {"name": "weather", "parameters": {"type": "object"}},
        }
    ],
    "service_tier": "flex",
}
CHAT = providers.get("openai-chat")
pytestmark = pytest.mark.filterwarnings("ignore::canisters.providers.FidelityWarning")


def _read() -> Request:
    return CHAT.parse_full_request(copy.deepcopy(BODY))


def test_a_request_rendered_back_unread_is_the_body_in_its_order() -> None:
    body = CHAT.render_full_request(_read())
    assert body == BODY
    assert list(body) == list(BODY)


def test_its_fields_read_the_settings_when_first_asked_for() -> None:
    request = _read()
    assert request.model == "gpt-4.1"
    assert request.generation.temperature == 0.5
    assert [tool.name for tool in request.functions] == ["weather"]
    assert request.service_tier == "flex"
    assert CHAT.render_full_request(request) == BODY  # read: translated back


def test_malformed_settings_are_refused_when_read_and_kept_until_then() -> None:
    anthropic = providers.get("anthropic")
    body = {
        "model": "claude-x",
        "max_tokens": 64,
        "messages": [{"role": "user", "content": "Weather in Paris?"}],
        "thinking": {"type": "adaptive", "display": []},
    }
    request = anthropic.parse_full_request(body)
    assert anthropic.render_full_request(request) == body  # unread: as it came
    with pytest.raises(providers.MalformedPayload, match="unexpected shape"):
        _ = request.reasoning
    with pytest.raises(providers.MalformedPayload, match="unexpected shape"):
        canisters.to_json(request)


def test_it_is_a_request_in_every_way() -> None:
    request = _read()
    read = _read()
    _ = read.model
    plain = Request(**{f.name: getattr(read, f.name) for f in attrs.fields(Request)})
    assert type(plain) is Request
    assert isinstance(request, Request)
    assert repr(plain).startswith("Request(") and repr(request).startswith("Request(")
    assert plain == read and read == plain
    assert (plain != read) is False and (read != plain) is False
    assert hash(plain) == hash(read)
    for twin in (
        copy.copy(request),
        copy.deepcopy(request),
        pickle.loads(pickle.dumps(request)),
        canisters.from_json(canisters.to_json(request)),
    ):
        assert twin == request
    changed = attrs.evolve(request, model="gpt-5")
    assert changed.model == "gpt-5"
    assert CHAT.render_full_request(changed)["model"] == "gpt-5"


def test_the_body_changed_after_reading_does_not_change_the_request() -> None:
    body = copy.deepcopy(BODY)
    request = CHAT.parse_full_request(body)
    body["temperature"] = 1.5
    del body["service_tier"]
    assert CHAT.render_full_request(request) == BODY
    assert request.generation.temperature == 0.5


def test_options_that_change_settings_are_applied() -> None:
    request = _read()
    assert CHAT.render_full_request(request, model="gpt-5")["model"] == "gpt-5"
    report = providers.Report()
    rendered = CHAT.render_full_request(_read(), report=report)
    assert rendered == BODY and report.events == []


def test_another_format_reads_the_settings() -> None:
    report = providers.Report()
    body = providers.get("anthropic").render_full_request(
        _read(), unsupported="drop", report=report, max_tokens=1024
    )
    assert body["model"] == "gpt-4.1"
    assert body["temperature"] == 0.5
    assert body["tools"][0]["name"] == "weather"
    assert any("service_tier" in str(event) for event in report.events)


@pytest.mark.parametrize("name", ["anthropic", "gemini", "openai-responses"])
def test_every_format_reads_lazily(name: str) -> None:
    chat = _read()
    normalizer = providers.get(name)
    body = normalizer.render_full_request(chat, unsupported="drop", max_tokens=64)
    again = normalizer.parse_full_request(copy.deepcopy(body))
    assert normalizer.render_full_request(again) == body
    assert again.generation.temperature == 0.5
    assert normalizer.render_full_request(again) == body
