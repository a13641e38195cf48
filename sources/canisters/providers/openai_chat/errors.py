"""OpenAI's error dialect: ``{"error": {"message", "type", "param", "code"}}``,
the shape :class:`~canisters.providers.kit.Dialect` reads and writes itself
(Chat Completions, Responses, and the servers that copy them)."""

from __future__ import annotations

from typing import Final

from .._errors import Dialect
from .wire import NAME

__all__ = ["DIALECT"]

DIALECT: Final = Dialect(NAME)
"""The ``openai-chat`` dialect."""
