"""The unsupported policy, implemented once.

What a translation cannot carry exactly follows the ``unsupported=`` option of
the call: ``"error"`` (the default) raises
:class:`~canisters.UnsupportedContent` naming what and why; ``"drop"`` leaves
it out, warns :class:`~canisters.providers.FidelityWarning` and reports it;
``"placeholder"`` puts a text marker in the place of content (for a request
field, which has no place for text, it drops as ``"drop"`` does). A value sent
changed (approximated, or settled in a conflict) is refused under
``"error"`` and reported otherwise. Content parts
(:func:`~canisters.providers.kit.unsupported`) and request fields
(:class:`~.outcomes.Outcomes`) both go through :func:`apply_policy`.
"""

from __future__ import annotations

import warnings
from typing import TYPE_CHECKING

from ...exceptions import UnsupportedContent
from .warning import FidelityWarning

if TYPE_CHECKING:
    from .._common import Options

__all__ = ["apply_policy"]


def apply_policy(
    options: Options,
    provider: str,
    where: str,
    reason: str,
    *,
    kind: str = "dropped",
    detail: str | None = None,
    rule: str | None = None,
    refused_as: str | None = None,
    placeholder: bool = False,
    stacklevel: int = 3,
) -> str | None:
    """Apply the policy to ``where`` (the report's path), not carried for
    ``reason``.

    ``kind`` is what happens when it is not refused: ``"dropped"`` (warned),
    or ``"approximated"`` / ``"conflict"`` (``detail`` and ``rule`` reported).
    ``refused_as`` names it in the error (``"request field top_k"``), when
    not ``where``. With ``placeholder`` (content that has a place for text),
    the ``"placeholder"`` policy returns the text to put in its place.
    """
    if options.unsupported == "error":
        raise UnsupportedContent(provider, refused_as or where, reason)
    if kind != "dropped":
        options.note(kind, provider, where, detail or reason, rule)
        return None
    if placeholder and options.unsupported == "placeholder":
        options.note("placeholder", provider, where, reason)
        return f"[{where.rsplit('(', 1)[-1].rstrip(')')} omitted: {reason}]"
    warnings.warn(
        f"{provider}: dropped {refused_as or where}: {reason}",
        FidelityWarning,
        stacklevel=stacklevel + 1,
    )
    options.note("dropped", provider, where, reason)
    return None
