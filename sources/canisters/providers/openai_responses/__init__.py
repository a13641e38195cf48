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

from .._base import BaseNormalizer
from . import (
    fast,  # noqa: F401  (registers the one-pass paths with messages)
    messages,
    request,
    response,
)
from .errors import DIALECT
from .messages import NAME
from .messages import REQUEST_FIELDS as REQUEST_FIELDS
from .messages import RESPONSE_FIELDS as RESPONSE_FIELDS
from .stream import OpenAIResponsesAccumulator

__all__ = ["NAME", "NORMALIZER", "OpenAIResponses", "OpenAIResponsesAccumulator"]


class OpenAIResponses(BaseNormalizer):
    """The ``openai-responses`` normalizer (OpenAI Responses API); streams are
    read by :class:`OpenAIResponsesAccumulator` (events as dicts or
    ``openai.types.responses.ResponseStreamEvent``); whole requests by
    :mod:`canisters.providers.openai_responses.request`."""

    __slots__ = ()

    name = NAME
    reads = ("instructions", "input")
    messages = messages
    response = response
    request_settings = request
    stream = OpenAIResponsesAccumulator
    dialect = DIALECT


NORMALIZER = OpenAIResponses()
"""The registered instance."""
