"""Gemini ``generateContent`` responses: the first candidate, its finish
reason, usage, model version and response id."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

import attrs

from ...canisters import Assistant, Usage, now
from ...conversation import Conversation
from ...protocols import Canister, Role
from .. import _common as common
from .._common import Options
from .._rules import envelope
from .._rules.finish import render_finish
from . import provided
from .errors import DIALECT
from .reading import NAME, _key, _Pairing, _parse_turn, _Reader
from .writing import _Renderer

__all__ = ["RESPONSE_FIELDS", "parse_response", "render_response"]

RESPONSE_FIELDS = (
    "candidates",
    "promptFeedback",
    "prompt_feedback",
    "usageMetadata",
    "usage_metadata",
    "modelVersion",
    "model_version",
    "responseId",
    "response_id",
    "createTime",
    "create_time",
)
"""The response fields :meth:`GeminiNormalizer.render_response` produces."""

_FINISH = {
    "STOP": "stop",
    "MAX_TOKENS": "length",
    "SAFETY": "content_filter",
    "RECITATION": "content_filter",
    "BLOCKLIST": "content_filter",
    "PROHIBITED_CONTENT": "content_filter",
    "SPII": "content_filter",
}
_FINISH_BACK = {
    "stop": ("STOP", True),
    "tool_calls": ("STOP", True),  # Gemini ends a turn of calls with STOP
    "length": ("MAX_TOKENS", True),
    "content_filter": ("SAFETY", True),
    "refusal": ("SAFETY", False),
    "pause": ("STOP", False),
}


_CANDIDATE_KEYS: Final = frozenset({"content", "finishReason"})
_RESPONSE_KEYS: Final = frozenset(
    {"candidates", "promptFeedback", "usageMetadata", "modelVersion", "responseId"}
)

envelope.declare(
    NAME,
    envelope.Envelope(
        ("response",),
        writes=frozenset(
            {
                envelope.ID,
                envelope.MODEL,
                envelope.FINISH,
                envelope.USAGE,
                envelope.CACHED,
                envelope.REASONING,
            }
        ),
        carried={
            "response.candidates": envelope.MARKER,
            "response.content": envelope.MARKER,
            "response.candidate_snake": envelope.MARKER,
            "response.response_snake": envelope.MARKER,
            "response.finishReason": envelope.FINISH,
            "response.promptFeedback.blockReason": envelope.FINISH,
            "response.usageMetadata.promptTokenCount": envelope.USAGE,
            "response.usageMetadata.candidatesTokenCount": envelope.USAGE,
            "response.usageMetadata.thoughtsTokenCount": envelope.REASONING,
            "response.usageMetadata.cachedContentTokenCount": envelope.CACHED,
            "response.modelVersion": envelope.MODEL,
            "response.responseId": envelope.ID,
        },
        derived={
            "response.usageMetadata.totalTokenCount": envelope.total(
                "usageMetadata",
                "promptTokenCount",
                "candidatesTokenCount",
                "thoughtsTokenCount",
                "toolUsePromptTokenCount",
            )
        },
        positions=frozenset({"response.candidate.index"}),
    ),
)


def _usage(raw: Mapping[str, Any]) -> Usage:
    reader = _Reader()

    def count(name: str) -> int:
        value = reader.get(raw, name)
        return value if type(value) is int else 0

    thoughts = count("thoughtsTokenCount")
    return Usage(
        input_tokens=count("promptTokenCount"),
        output_tokens=count("candidatesTokenCount") + thoughts,
        cached_tokens=count("cachedContentTokenCount"),
        reasoning_tokens=thoughts,
    )


def parse_response(body: Any) -> Conversation:
    """Read the first candidate, usage, model version and response id."""
    DIALECT.check(body)
    body = common.as_mapping(body, received=True)
    reader = _Reader()
    candidates = reader.get(body, "candidates")
    extras: dict[str, Any] = {}
    canisters: list[Canister] = []
    finish: str | None = None
    if candidates is None:
        extras["candidates"] = None
    else:
        candidates = common.expect_list(candidates, "$.candidates")
        if not candidates:
            extras["candidates"] = []
        else:
            candidate = common.expect_mapping(candidates[0], "$.candidates[0]")
            candidate_reader = _Reader()
            content = candidate_reader.get(candidate, "content")
            if content is not None:
                content = common.expect_mapping(content, "$.candidates[0].content")
                if content:
                    _, canisters = _parse_turn(
                        content,
                        0,
                        "$.candidates[0].content",
                        _Pairing(),
                        now(),
                    )
                    canisters = provided.grounded(
                        canisters,
                        candidate.get("groundingMetadata")
                        or candidate.get("grounding_metadata"),
                        content.get("parts"),
                    )
                    canisters = provided.attributed(
                        canisters,
                        candidate.get("citationMetadata")
                        or candidate.get("citation_metadata"),
                        content.get("parts"),
                    )
                else:
                    extras["content"] = {}
            else:
                extras["content"] = None
            raw_finish = candidate_reader.get(candidate, "finishReason")
            if raw_finish is not None:
                finish = _FINISH.get(str(raw_finish), str(raw_finish).lower())
                extras["finishReason"] = raw_finish
            rest = candidate_reader.rest(candidate, _CANDIDATE_KEYS)
            if rest:
                extras["candidate"] = rest
            if candidate_reader.snake:
                extras["candidate_snake"] = sorted(candidate_reader.snake)
            if len(candidates) > 1:
                extras["more_candidates"] = list(candidates[1:])
    if (
        any(canister.role is Role.Invocation for canister in canisters)
        and finish == "stop"
    ):
        finish = "tool_calls"
    feedback = reader.get(body, "promptFeedback")
    if feedback is not None:
        extras["promptFeedback"] = feedback
        if (
            not canisters
            and finish is None
            and isinstance(feedback, Mapping)
            and _Reader().get(feedback, "blockReason") is not None
        ):
            # The prompt was blocked: no candidate, the reason in the feedback.
            finish = "content_filter"
    usage = None
    raw_usage = reader.get(body, "usageMetadata")
    if raw_usage is not None:
        raw_usage = common.expect_mapping(raw_usage, "$.usageMetadata")
        usage = _usage(raw_usage)
        extras["usageMetadata"] = dict(raw_usage)
    model = reader.get(body, "modelVersion")
    response_id = reader.get(body, "responseId")
    if model is not None:
        extras["modelVersion"] = model
    if response_id is not None:
        extras["responseId"] = response_id
    rest = reader.rest(body, _RESPONSE_KEYS)
    if rest:
        extras["response_rest"] = rest
    if reader.snake:
        extras["response_snake"] = sorted(reader.snake)
    metadata = common.response_metadata(model, usage, finish, response_id)
    if not canisters:
        canisters = [Assistant(content=())]
    canisters[0] = common.with_response(canisters[0], NAME, metadata, extras)
    return Conversation(tuple(canisters))


def render_response(conversation: Conversation, settings: Options) -> dict[str, Any]:
    """Render one candidate with its finish reason, usage, model and id."""
    canisters = common.canisters_of(conversation, NAME)
    if not canisters:
        return {"candidates": []}
    first = canisters[0]
    extras = dict(common.mine(first, NAME).get("response", {}))
    metadata = first.metadata
    snake = extras.get("response_snake", ())
    body: dict[str, Any] = {}
    if "candidates" in extras:
        # None: the body had no candidates at all (a blocked prompt).
        if extras["candidates"] is not None:
            body[_key("candidates", snake)] = extras["candidates"]
    else:
        renderer = _Renderer(settings)
        candidate: dict[str, Any] = {}
        candidate_snake = extras.get("candidate_snake", ())
        only_empty = (
            len(canisters) == 1 and first.role is Role.Assistant and not first.content  # type: ignore[attr-defined]
        )
        if "content" in extras and only_empty:
            if extras["content"] is not None:
                candidate["content"] = extras["content"]
        else:
            stripped = [
                _strip_response(canister) if number == 0 else canister
                for number, canister in enumerate(canisters)
            ]
            turns = renderer.contents(list(enumerate(stripped)))
            turn = turns if isinstance(turns, dict) else (turns[0] if turns else {})
            if isinstance(turns, list) and len(turns) > 1:
                merged: list[Any] = []
                for extra in turns:
                    value = extra.get("parts", [])
                    merged.extend(value if isinstance(value, list) else [value])
                turn = {"role": "model", "parts": merged}
            candidate["content"] = {}
            if "parts" in turn or not turn:
                candidate["content"]["parts"] = turn.get("parts", [])
            if "role" in turn:
                candidate["content"]["role"] = "model"
        finish = extras.get("finishReason")
        if finish is None and metadata is not None and metadata.finish_reason:
            finish = render_finish(metadata.finish_reason, _FINISH_BACK, NAME, settings)
        if finish is not None:
            candidate[_key("finishReason", candidate_snake)] = finish
        candidate.update(extras.get("candidate", {}))
        body[_key("candidates", snake)] = [
            candidate,
            *extras.get("more_candidates", []),
        ]
    if "promptFeedback" in extras:
        body[_key("promptFeedback", snake)] = extras["promptFeedback"]
    if "usageMetadata" in extras:
        body[_key("usageMetadata", snake)] = extras["usageMetadata"]
    elif metadata is not None and metadata.usage is not None:
        usage = metadata.usage
        rendered: dict[str, Any] = {
            "promptTokenCount": usage.input_tokens,
            "candidatesTokenCount": usage.output_tokens - usage.reasoning_tokens,
            "totalTokenCount": usage.total_tokens,
        }
        if usage.reasoning_tokens:
            rendered["thoughtsTokenCount"] = usage.reasoning_tokens
        if usage.cached_tokens:
            rendered["cachedContentTokenCount"] = usage.cached_tokens
        body["usageMetadata"] = rendered
    model = extras.get("modelVersion", metadata.model if metadata else None)
    if model is not None:
        body[_key("modelVersion", snake)] = model
    response_id = extras.get(
        "responseId", metadata.custom.get("response_id") if metadata else None
    )
    if response_id is not None:
        body[_key("responseId", snake)] = response_id
    body.update(extras.get("response_rest", {}))
    return body


def _strip_response(canister: Canister) -> Canister:
    extras = {
        key: value
        for key, value in common.mine(canister, NAME).items()
        if key != "response"
    }
    return attrs.evolve(canister, extras={**canister.extras, NAME: extras})  # type: ignore[misc]
