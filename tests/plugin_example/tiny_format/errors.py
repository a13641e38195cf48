"""Tiny's errors: OpenAI's shape, which the kit's Dialect reads and writes."""

from __future__ import annotations

from canisters.providers.kit import Dialect

from .messages import NAME

DIALECT = Dialect(NAME)
