"""The warning of the ``"drop"`` policy (its own module: the policy and the
outcomes both use it)."""

from __future__ import annotations

__all__ = ["FidelityWarning"]


class FidelityWarning(UserWarning):
    """Warned when content is dropped under the ``"drop"`` policy."""
