"""Amazon Bedrock Converse and ConverseStream: the normalizer, wiring
``messages`` (the conversation), :mod:`.request` (the other request fields),
``response`` (replies), ``stream`` (the accumulator) and ``errors`` (the error
forms), on :mod:`canisters.providers.kit` alone.

Blobs are raw bytes in boto3's parameters and base64 text in the REST JSON
body. Every parser reads both; renderers write base64 text (a JSON body),
except for a part read from raw bytes. :func:`to_sdk` turns a body into the
form ``boto3.client("bedrock-runtime").converse(**body)`` takes, :func:`to_json`
into the REST JSON form.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from canisters.providers.kit import (
    BaseNormalizer,
    ErrorReply,
    b64decode_exact,
    b64encode,
)

from . import messages, request, response
from .errors import DIALECT
from .messages import NAME, REQUEST_FIELDS
from .response import RESPONSE_FIELDS
from .stream import BedrockConverseAccumulator

__all__ = [
    "NAME",
    "NORMALIZER",
    "REQUEST_FIELDS",
    "RESPONSE_FIELDS",
    "BedrockConverseAccumulator",
    "BedrockConverseNormalizer",
    "to_json",
    "to_sdk",
]


class BedrockConverseNormalizer(BaseNormalizer):
    """The ``bedrock-converse`` normalizer: Converse request and response
    bodies (the REST JSON or boto3's dicts); streams are ConverseStream's
    decoded events (:class:`BedrockConverseAccumulator`); whole requests by
    :mod:`canisters.providers.bedrock_converse.request`."""

    __slots__ = ()

    name = NAME
    reads = REQUEST_FIELDS
    messages = messages
    response = response
    request_settings = request
    stream = BedrockConverseAccumulator
    dialect = DIALECT

    def parse_error(self, body: Any, *, status: int | None = None) -> ErrorReply:
        """Read an error body, a stream's exception event, or the
        ``botocore.exceptions.ClientError`` boto3 raised (its ``response``)."""
        held = getattr(body, "response", None)
        if isinstance(body, BaseException) and isinstance(held, Mapping):
            body = held
        return super().parse_error(body, status=status)


NORMALIZER = BedrockConverseNormalizer()
"""The registered instance."""


_OPAQUE = frozenset({"input", "json", "additionalModelRequestFields"})
"""Keys whose values are the caller's JSON: no blob in them."""


def _convert(value: Any, sdk: bool, parent: str = "") -> Any:
    if isinstance(value, dict):
        converted = {}
        for key, item in value.items():
            if key == "redactedContent" or (key == "bytes" and parent == "source"):
                if sdk and isinstance(item, str):
                    item = b64decode_exact(item)[0]
                elif not sdk and isinstance(item, (bytes, bytearray)):
                    item = b64encode(bytes(item))
            elif key not in _OPAQUE:
                item = _convert(item, sdk, key)
            converted[key] = item
        return converted
    if isinstance(value, list):
        return [_convert(item, sdk, parent) for item in value]
    return value


def to_sdk(body: Any) -> Any:
    """``body`` (a request or reply) with every blob (a media ``source``'s
    ``bytes``, ``redactedContent``) as raw bytes, as boto3 takes and gives
    them."""
    return _convert(body, True)


def to_json(body: Any) -> Any:
    """``body`` with every blob as base64 text, as the REST JSON API takes
    and gives them."""
    return _convert(body, False)
