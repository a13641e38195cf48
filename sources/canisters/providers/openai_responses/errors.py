"""The Responses API's errors: OpenAI's dialect (see
:mod:`canisters.providers.openai_chat.errors`), under this provider's name."""

from __future__ import annotations

from typing import Final

from ..openai_chat.errors import OpenAIDialect
from .messages import NAME

__all__ = ["DIALECT"]

DIALECT: Final = OpenAIDialect(NAME)
"""The ``openai-responses`` dialect."""
