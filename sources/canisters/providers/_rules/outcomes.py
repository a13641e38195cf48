"""Recording, and policing, what a translation did not carry over exactly."""

from __future__ import annotations

from typing import TYPE_CHECKING

from .policy import apply_policy
from .warning import FidelityWarning as FidelityWarning

if TYPE_CHECKING:
    from .._common import Options

__all__ = ["Outcomes"]


class Outcomes:
    """What the rendering of a request's settings did not carry exactly.

    Every method records one :class:`~canisters.providers.Event` in the
    ``report=`` of the call, naming the field (``"generation.top_k"``), what
    happened, and the rule used. Under ``unsupported="error"`` (the default)
    :meth:`dropped`, :meth:`approximated` and :meth:`conflict` raise
    :class:`~canisters.UnsupportedContent` instead; ``"drop"`` and
    ``"placeholder"`` apply the fallback described (a dropped field also warns
    :class:`~canisters.providers.FidelityWarning`). :meth:`synthesized` (a
    value the format requires, from an option or the capability profile) never
    raises.
    """

    __slots__ = ("options", "provider")

    def __init__(self, options: Options, provider: str) -> None:
        self.options = options
        """The options of the call."""
        self.provider = provider
        """The format rendered."""

    def dropped(self, field: str, reason: str) -> None:
        """``field`` is left out: the format has no equivalent."""
        apply_policy(
            self.options,
            self.provider,
            field,
            reason,
            refused_as=f"request field {field}",
        )

    def approximated(self, field: str, detail: str, rule: str) -> None:
        """``field`` is sent changed (``detail``), by ``rule``."""
        apply_policy(
            self.options,
            self.provider,
            field,
            f"{detail} ({rule})",
            kind="approximated",
            detail=detail,
            rule=rule,
            refused_as=f"request field {field}",
        )

    def conflict(self, field: str, detail: str, resolution: str) -> None:
        """``field`` conflicts with another (``detail``), settled by
        ``resolution``."""
        apply_policy(
            self.options,
            self.provider,
            field,
            f"{detail}; {resolution}",
            kind="conflict",
            detail=detail,
            rule=resolution,
            refused_as=f"request field {field}",
        )

    def moved(self, field: str, detail: str) -> None:
        """``field`` is not in the body but goes elsewhere (``detail`` says
        where); never raises."""
        self.options.note("moved", self.provider, field, detail)

    def synthesized(self, field: str, detail: str, rule: str) -> None:
        """``field`` is sent with a value the request did not have."""
        self.options.note("synthesized", self.provider, field, detail, rule)
