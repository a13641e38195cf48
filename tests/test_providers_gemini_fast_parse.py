"""Gemini's fast way of parsing a request gives exactly what its general way gives.

``parse_request`` reads the turns of the commonest shapes (texts, thoughts,
inline data, file URIs, calls and responses with their ids) in a fast way and
every other turn the general way. For every body both must agree: the same
canisters (ids and timestamps aside, which are made fresh), with the same
extras, or the same error at the same path.
"""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from canisters import CanistersError, Conversation, providers
from canisters.providers.gemini import messages as gemini

from .budget import examples
from .test_providers_fast import _benchmark_corpus, any_conversation
from .test_providers_fast_parse import _outcome, _rendered, _spy

DATA = Path(__file__).parent / "data" / "providers" / "gemini"


def check_same(body: Any) -> None:
    fast = _outcome(gemini.parse_request, body, fast=True)
    assert fast == _outcome(gemini.parse_request, body, fast=False)


# Values near the common ones: each a step away from the fast way.
texts = st.sampled_from(["", "hi", '{"a": 1}', "[1]"])
ids = st.sampled_from(["call_1", "call_2", ""])
names = st.sampled_from(["f", "g"])
signatures = st.sampled_from(["c2ln", "c2lnMg=="])
mimes = st.sampled_from(
    ["image/png", "audio/wav", "video/mp4", "application/pdf", "text/plain", ""]
)
# Canonical, non-canonical, URL-safe and invalid base64.
encoded = st.sampled_from(["iVBORw0KGgo=", "aGk=", "", "iVBORw", "aGl-", "aG!="])
uris = st.sampled_from(["gs://bucket/a.pdf", "https://example.com/a.png", "a.png"])
# A value of a wrong type, for any field.
wrong = st.sampled_from([None, 3, "x", [], {}])


def rarely(draw: st.DrawFn, odds: int) -> bool:
    """True about one time in ``odds + 1``."""
    return draw(st.integers(0, odds)) == odds


# Each body draws how odd its parts are (``odd``: a part strays from the
# common shape in each way one time in about ``odd + 1``), so that some bodies
# are mostly read the fast way and the others mostly the general way.


def _maybe(draw: st.DrawFn, value: Any, odd: int) -> Any:
    """``value``, or (more rarely than ``odd`` says) a value of a wrong type."""
    return draw(wrong) if rarely(draw, 3 * odd) else value


def _extra(draw: st.DrawFn, mapping: dict[str, Any], odd: int) -> None:
    """Rarely, add a key no reader knows to ``mapping``."""
    if rarely(draw, 2 * odd):
        mapping["x"] = draw(st.sampled_from([1, None, {"y": [1]}]))


@st.composite
def blobs(draw: st.DrawFn, odd: int) -> dict[str, Any]:
    """An ``inlineData`` or ``fileData`` part."""
    source: dict[str, Any] = {}
    if not rarely(draw, odd):
        key = "mime_type" if rarely(draw, odd) else "mimeType"
        source[key] = _maybe(draw, draw(mimes), odd)
    if draw(st.booleans()):
        source["data"] = _maybe(draw, draw(encoded), odd)
        kind = "inlineData"
    else:
        source["fileUri"] = _maybe(draw, draw(uris), odd)
        kind = "fileData"
    _extra(draw, source, odd)
    if rarely(draw, odd):
        kind = "inline_data" if kind == "inlineData" else "file_data"
    return {kind: _maybe(draw, source, odd)}


@st.composite
def calls(draw: st.DrawFn, odd: int) -> dict[str, Any]:
    call: dict[str, Any] = {"name": _maybe(draw, draw(names), odd)}
    if not rarely(draw, odd):
        call["args"] = _maybe(draw, draw(st.sampled_from([{}, {"q": "x"}])), odd)
    if not rarely(draw, odd):
        call["id"] = _maybe(draw, draw(ids), odd)
    _extra(draw, call, odd)
    key = "function_call" if rarely(draw, odd) else "functionCall"
    return {key: _maybe(draw, call, odd)}


responses = st.sampled_from(
    [
        {"output": "done"},
        {"output": '{"a": 1}'},
        {"output": " {}"},
        {"output": "[1, 2]"},
        {"output": 3},
        {"output": "a", "more": 1},
        {"error": "boom"},
        {"error": {"code": "E", "message": "m"}},
        {"a": 1},
        {},
    ]
)


@st.composite
def results(draw: st.DrawFn, odd: int) -> dict[str, Any]:
    result: dict[str, Any] = {}
    if not rarely(draw, odd):
        result["id"] = _maybe(draw, draw(ids), odd)
    result["name"] = _maybe(draw, draw(names), odd)
    if not rarely(draw, odd):
        result["response"] = _maybe(draw, copy.deepcopy(draw(responses)), odd)
    if rarely(draw, odd):
        result["parts"] = [draw(blobs(odd))]
    _extra(draw, result, odd)
    key = "function_response" if rarely(draw, odd) else "functionResponse"
    return {key: _maybe(draw, result, odd)}


@st.composite
def thoughts(draw: st.DrawFn, odd: int) -> dict[str, Any]:
    """A text part with ``thought`` or a signature (or both, or neither)."""
    part: dict[str, Any] = {"text": _maybe(draw, draw(texts), odd)}
    if draw(st.booleans()):
        part["thought"] = draw(st.sampled_from([True, True, False, None, 1]))
    if draw(st.booleans()):
        key = "thought_signature" if rarely(draw, odd) else "thoughtSignature"
        part[key] = _maybe(draw, draw(signatures), odd)
    return part


others = st.sampled_from(
    [
        {"executableCode": {"language": "PYTHON", "code": "print(1)"}},
        {"codeExecutionResult": {"outcome": "OUTCOME_OK"}},
        {"text": None},
        {"functionCall": None},
        {},
        "hi",
        None,
    ]
)
KINDS = ["text", "call", "result", "blob", "thought"]


@st.composite
def parts(draw: st.DrawFn, odd: int) -> Any:
    kind = "other" if rarely(draw, 2 * odd) else draw(st.sampled_from(KINDS))
    part: Any
    if kind == "text":
        part = {"text": draw(texts)}
    elif kind == "thought":
        part = draw(thoughts(odd))
    elif kind == "blob":
        part = draw(blobs(odd))
    elif kind == "call":
        part = draw(calls(odd))
    elif kind == "result":
        part = draw(results(odd))
    else:
        part = copy.deepcopy(draw(others))
    if isinstance(part, dict) and part:
        if rarely(draw, odd) and "thoughtSignature" not in part:
            part["thoughtSignature"] = draw(signatures)
        _extra(draw, part, odd)
    return part


@st.composite
def turns(draw: st.DrawFn, odd: int) -> Any:
    turn: dict[str, Any] = {}
    if not rarely(draw, 2 * odd):
        odd_role = rarely(draw, 2 * odd)
        roles = ["bot", 3] if odd_role else ["user", "model"] * 3 + ["function"]
        turn["role"] = draw(st.sampled_from(roles))
    if not rarely(draw, 2 * odd):
        turn["parts"] = (
            draw(parts(odd) | wrong)  # Gemini takes a single part
            if rarely(draw, odd)
            else draw(st.lists(parts(odd), max_size=4))
        )
    _extra(draw, turn, odd)
    return draw(wrong) if rarely(draw, 5 * odd) else turn


systems = st.sampled_from(
    [
        {"parts": [{"text": "be brief"}]},
        "be brief",
        "",
        {"parts": [{"text": "a"}, {"text": "b", "thought": True}]},
        {"parts": []},
        {"parts": {"text": "be brief"}},
        {"role": "user", "parts": [{"text": "be brief"}]},
        {"parts": [{"text": "a"}], "x": 1},
    ]
)
bad_systems = st.sampled_from(
    [{"parts": [{"text": 3}]}, {"parts": ["a"]}, {"parts": "a"}, {}, 3]
)


@st.composite
def bodies(draw: st.DrawFn) -> dict[str, Any]:
    odd = draw(st.sampled_from([4, 19, 99]))
    body: dict[str, Any] = {}
    if draw(st.booleans()):
        snake = rarely(draw, odd)
        key = "system_instruction" if snake else "systemInstruction"
        body[key] = copy.deepcopy(draw(bad_systems if rarely(draw, odd) else systems))
        if rarely(draw, odd):
            # The other spelling, given as null.
            body["systemInstruction" if snake else "system_instruction"] = None
    if not rarely(draw, 2 * odd):
        body["contents"] = (
            draw(turns(odd) | wrong)  # Gemini takes a single turn
            if rarely(draw, odd)
            else draw(st.lists(turns(odd), max_size=6))
        )
    if rarely(draw, odd):
        body["generationConfig"] = {"temperature": 0}
    return body


@settings(
    max_examples=examples(400),
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
)
@given(body=bodies())
def test_fast_is_general(body: dict[str, Any]) -> None:
    check_same(body)


@settings(
    max_examples=examples(150),
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
)
@given(conversation=any_conversation)
def test_fast_is_general_on_rendered_bodies(conversation: Conversation) -> None:
    check_same(_rendered("gemini", conversation))


def _recorded() -> list[Path]:
    return sorted(
        path
        for path in DATA.glob("*.json")
        if json.loads(path.read_text(encoding="utf-8"))["kind"] == "request"
    )


@pytest.mark.parametrize("path", _recorded(), ids=lambda path: path.stem)
def test_fast_is_general_on_recorded_bodies(path: Path) -> None:
    check_same(json.loads(path.read_text(encoding="utf-8"))["payload"])


def test_fast_is_general_on_the_benchmark_corpus() -> None:
    for conversation in _benchmark_corpus():
        check_same(_rendered("gemini", conversation))


def test_the_common_shapes_take_the_fast_way(monkeypatch: pytest.MonkeyPatch) -> None:
    calls = _spy(monkeypatch, gemini, "_parse_turn")
    systems = _spy(monkeypatch, gemini, "_parse_system")
    body: dict[str, Any] = {
        "systemInstruction": {"parts": [{"text": "be brief"}]},
        "contents": [
            {
                "role": "user",
                "parts": [
                    {"text": "what is this?"},
                    {"inlineData": {"mimeType": "image/png", "data": "iVBORw0KGgo="}},
                    {"fileData": {"mimeType": "audio/wav", "fileUri": "gs://b/a"}},
                ],
            },
            {
                "role": "model",
                "parts": [
                    {"text": "hm", "thought": True, "thoughtSignature": "c2ln"},
                    {"text": "looking", "thoughtSignature": "c2lnMg=="},
                    {"functionCall": {"name": "f", "args": {"q": "x"}, "id": "c1"}},
                ],
            },
            {
                "role": "user",
                "parts": [
                    {
                        "functionResponse": {
                            "id": "c1",
                            "name": "f",
                            "response": {"output": '{"a": 1}'},
                        }
                    }
                ],
            },
            {"role": "user", "parts": [{"text": "thanks"}]},
        ],
    }
    conversation = providers.get("gemini").parse_request(body)
    assert calls == [] and systems == []
    assert [canister.role.value for canister in conversation] == [
        "supervisor",
        "user",
        "assistant",
        "invocation",
        "result",
        "user",
    ]
    assert [part.type for part in conversation[1].content] == [  # type: ignore[attr-defined]
        "text",
        "image",
        "audio",
    ]
    assert conversation[2].extras == {"gemini": {"bound": ["thoughtSignature"]}}
    assert conversation[4].extras == {"gemini": {"output": True}}
    assert conversation[5].extras == {"gemini": {"split": True}}
    # Every canister of one body has the moment it was read.
    assert len({canister.timestamp for canister in conversation}) == 1
    check_same(body)
    assert providers.get("gemini").render_request(conversation) == body
    # A turn with a key the fast way does not know goes the general way, the
    # others still the fast way.
    calls.clear()
    body["contents"][1]["parts"][2]["functionCall"]["x"] = 1
    conversation = providers.get("gemini").parse_request(body)
    assert len(calls) == 1
    assert conversation[3].extras == {"gemini": {"call": {"x": 1}}}


def test_a_malformed_turn_is_refused_at_its_path() -> None:
    """What the fast way cannot read goes the general way, which refuses it at
    its path; calls read the fast way before it still pair."""
    body = {
        "contents": [
            {
                "role": "model",
                "parts": [{"functionCall": {"name": "f", "args": {}, "id": "c1"}}],
            },
            {"role": "user", "parts": [{"functionResponse": {"name": "f"}}]},
            {"role": "model", "parts": [{"text": "ok"}, {"inlineData": "x"}]},
        ]
    }
    with pytest.raises(CanistersError, match=r"contents\[2\]\.parts\[1\]\.inlineData"):
        providers.get("gemini").parse_request(body)
    del body["contents"][2]
    conversation = providers.get("gemini").parse_request(body)
    call, result = conversation
    assert result.invocation_id == call.invocation_id == "c1"  # type: ignore[attr-defined]
    check_same(body)


PNG = "iVBORw0KGgo="
CALL = {"functionCall": {"name": "f", "args": {}, "id": "c1"}}


@pytest.mark.parametrize(
    "part",
    [
        {"text": "a", "thought": 1},
        {"text": "a", "thought": False},
        {"text": "a", "thought": None},
        {"text": "a", "thought": True, "x": 1},
        {"text": "a", "thought": True, "thoughtSignature": 3},
        {"text": "a", "thought_signature": "c2ln"},
        {"text": "a", "thoughtSignature": "c2ln", "x": 1},
        {"text": 3},
        {"inlineData": {"mimeType": "image/png", "data": PNG, "x": 1}},
        {"inlineData": {"mimeType": "image/png", "data": "iVBORw"}},
        {"inlineData": {"mimeType": "image/png", "data": "aGl-"}},
        {"inlineData": {"mimeType": "image/png", "data": "aG!="}},
        {"inlineData": {"data": PNG}},
        {"inlineData": {"mimeType": 3, "data": PNG}},
        {"inlineData": {"mime_type": "image/png", "data": PNG}},
        {"inlineData": {"mimeType": "image/png", "data": PNG}, "thoughtSignature": "c"},
        {"inline_data": {"mimeType": "image/png", "data": PNG}},
        {"fileData": {"mimeType": "video/mp4", "fileUri": "gs://b/a", "x": 1}},
        {"fileData": {"mimeType": "video/mp4", "fileUri": "a.mp4"}},
        {"fileData": {"fileUri": "gs://b/a"}},
        {"fileData": {"mimeType": "video/mp4", "file_uri": "gs://b/a"}},
        {"functionCall": {"name": "f", "args": {}, "id": "c2", "x": 1}},
        {"functionCall": {"name": "f", "args": {}}},
        {"functionCall": {"name": "f", "id": "c2"}},
        {"functionCall": {"name": "f", "args": "x", "id": "c2"}},
        {"functionCall": {"name": 3, "args": {}, "id": "c2"}},
        {**CALL, "thoughtSignature": "c2ln"},
        {"functionResponse": {"id": "c1", "name": "f", "response": {}, "x": 1}},
        {
            "functionResponse": {
                "id": "c1",
                "name": "f",
                "response": {"output": "a"},
                "parts": [{"inlineData": {"mimeType": "image/png", "data": PNG}}],
            }
        },
        {"functionResponse": {"id": "c1", "name": "f", "response": {"output": 3}}},
        {"functionResponse": {"id": "c1", "name": "f", "response": {"output": " {}"}}},
        {
            "functionResponse": {
                "id": "c1",
                "name": "f",
                "response": {"output": "a", "b": 1},
            }
        },
        {"functionResponse": {"id": "c1", "name": "f", "response": {"error": "boom"}}},
        {"functionResponse": {"id": "c1", "name": "f", "response": {"a": 1}}},
        {"functionResponse": {"name": "f", "response": {"output": "a"}}},
        {"functionResponse": {"id": 1, "name": "f", "response": {"output": "a"}}},
        {"executableCode": {"language": "PYTHON", "code": "print(1)"}},
        {"text": "a", "functionCall": CALL["functionCall"]},
    ],
)
def test_parts_beside_the_common_ones(part: dict[str, Any]) -> None:
    """Each part a step away from a shape the fast way reads, in a turn of
    common parts after a call it may answer: read alike either way."""
    for role in ("user", "model"):
        for before in ([], [{"text": "hi"}]):
            turn = {"role": role, "parts": [*before, part, {"text": "b"}]}
            check_same({"contents": [{"role": "model", "parts": [CALL]}, turn]})


def test_a_result_answers_its_call_once() -> None:
    """A result read the fast way answers its call: a later result without an
    id (read the general way) pairs with the next call of that name."""
    body = {
        "contents": [
            {
                "role": "model",
                "parts": [
                    CALL,
                    {"functionCall": {"name": "f", "args": {}, "id": "c2"}},
                ],
            },
            {
                "role": "user",
                "parts": [
                    {
                        "functionResponse": {
                            "id": "c1",
                            "name": "f",
                            "response": {"output": "a"},
                        }
                    }
                ],
            },
            {
                "role": "user",
                "parts": [
                    {"functionResponse": {"name": "f", "response": {"output": "b"}}}
                ],
            },
        ]
    }
    conversation = providers.get("gemini").parse_request(body)
    assert [canister.invocation_id for canister in conversation] == [  # type: ignore[attr-defined]
        "c1",
        "c2",
        "c1",
        "c2",
    ]
    check_same(body)
