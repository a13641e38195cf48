"""The Responses API's errors: OpenAI's shape (a failed ``response`` object
among them), which :class:`~canisters.providers.kit.Dialect` reads and writes
itself, under this provider's name."""

from __future__ import annotations

from typing import Final

from .._errors import Dialect
from .messages import NAME

__all__ = ["DIALECT"]

DIALECT: Final = Dialect(NAME)
"""The ``openai-responses`` dialect."""
