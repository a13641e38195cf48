"""OpenAI Responses (``openai-responses``): ``instructions`` + ``input`` items in
requests, ``output`` items and ``usage`` in responses.

Items map to canisters: ``message`` items to users, supervisors (roles
``developer`` and ``system``) and assistants; ``reasoning`` items to
:class:`~canisters.Reasoning` parts of the assistant turn they precede, with
``encrypted_content`` kept byte-exact in ``redacted`` and the item id in the
part's ``id``; ``function_call`` / ``function_call_output`` to invocations and
results paired by ``call_id``; ``item_reference`` to an empty
:class:`~canisters.Document` whose ``document_id`` is the referenced item id.
Item types without a neutral meaning (server tool calls and the like) ride
whole in an empty assistant canister's extras.

Provider-only fields ride in ``extras["openai-responses"]``: ``item`` (other
item keys such as ``id`` and ``status``, whether ``type`` was given, string or
list content), on the first part of each message item; ``part`` (other part
keys such as ``annotations``, ``logprobs``, ``detail``); ``role`` on
supervisors (``"system"``, or ``"developer"`` where it would otherwise read as
``instructions``); ``summary`` on reasoning (when it is not one entry);
``arguments`` on invocations (the string when it is not the compact JSON
canisters writes);
and ``response`` (``id``, ``status``, ``usage``...) on the first canister of a
response.
"""

from __future__ import annotations

from typing import Any

from ...conversation import Conversation
from ...serialization import _paused
from .. import _errors, streams
from .._common import guarded_reading
from .._requests import WholeRequests
from . import request, response
from .messages import (
    NAME,
    REQUEST_FIELDS,  # noqa: F401 (read from this path by the tests)
    RESPONSE_FIELDS,  # noqa: F401
    _parse_request,
    _Parser,  # noqa: F401
    _render_request,
)
from .stream import OpenAIResponsesAccumulator

__all__ = ["NAME", "NORMALIZER", "OpenAIResponses", "OpenAIResponsesAccumulator"]


class OpenAIResponses(streams.Streaming, _errors.ErrorNormalizing, WholeRequests):
    """The ``openai-responses`` normalizer (OpenAI Responses API); streams are
    read by :class:`OpenAIResponsesAccumulator` (events as dicts or
    ``openai.types.responses.ResponseStreamEvent``)."""

    __slots__ = ()

    name = NAME
    """The provider name."""

    request_settings = request
    """The request settings module: the fields beside ``instructions`` and
    ``input``."""

    @guarded_reading("instructions", "input")
    def parse_request(self, body: Any) -> Conversation:
        """Read ``instructions`` and ``input`` of a request body or SDK params."""
        return _parse_request(body)

    def render_request(
        self, conversation: Conversation, **options: Any
    ) -> dict[str, Any]:
        """Render ``{"instructions": ..., "input": [...]}`` (``instructions`` only
        when the conversation starts with a plain supervisor)."""
        return _paused(_render_request, conversation, options)

    # The functions themselves: a method calling them would be one more call.
    parse_response = staticmethod(response.parse_response)
    render_response = staticmethod(response.render_response)

    def accumulator(self) -> OpenAIResponsesAccumulator:
        """A fresh accumulator for one Responses stream."""
        return OpenAIResponsesAccumulator()

    def __repr__(self) -> str:
        return f"<normalizer {NAME}>"


NORMALIZER = OpenAIResponses()
"""The registered instance."""
