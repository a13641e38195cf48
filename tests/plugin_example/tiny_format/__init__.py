"""The ``tiny`` format: a provider plugin built on :mod:`canisters.providers.kit`."""

from __future__ import annotations

from canisters.providers.kit import BaseNormalizer

from . import messages, request, response
from .errors import DIALECT
from .messages import NAME
from .stream import TinyAccumulator

__all__ = ["NAME", "TinyAccumulator", "TinyNormalizer"]


class TinyNormalizer(BaseNormalizer):
    """The ``tiny`` normalizer."""

    __slots__ = ()

    name = NAME
    reads = ("lines",)
    messages = messages
    response = response
    request_settings = request
    stream = TinyAccumulator
    dialect = DIALECT
