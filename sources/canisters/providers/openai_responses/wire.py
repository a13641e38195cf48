"""What one OpenAI Responses format spells its own way: :class:`Wire`.

OpenAI Responses (``openai-responses``) and its dialect Open Responses
(``open-responses``, :mod:`.open_responses`) share every module of this
package; each takes the :class:`Wire` of the format it reads or writes as a
parameter: its name (the key of its extras, the provider its parts and
reports name) and what the dialect reads and writes that OpenAI's API does
not.
"""

from __future__ import annotations

from ..._frozen import FrozenDict
from .. import _common as common

__all__ = ["BASE", "NAME", "Wire"]

NAME = "openai-responses"
"""The provider name of OpenAI Responses itself."""


class Wire:
    """One OpenAI Responses format: its ``name`` and what it spells its own way.

    ``raw_reasoning``: a reasoning item's ``content`` (raw reasoning text) is
    read as the :class:`~canisters.Reasoning` text and written back, and
    plain reasoning of any format goes as such content. ``typed``: request
    message items are written with ``"type": "message"`` (the dialect's
    schema requires it). ``extensions``: ``<slug>:<type>`` items and parts
    are an implementor's extensions, kept whole as known types.
    ``bare_allowed``: an ``allowed_tools`` choice may leave its ``mode`` out.
    """

    __slots__ = (
        "bare_allowed",
        "extensions",
        "name",
        "output_text",
        "raw_reasoning",
        "ref",
        "typed",
        "wrap",
    )

    def __init__(
        self,
        name: str,
        *,
        raw_reasoning: bool = False,
        typed: bool = False,
        extensions: bool = False,
        bare_allowed: bool = False,
    ) -> None:
        self.name = name
        """The provider name: the key of the extras this format keeps."""
        self.ref = common.ref_key(name)
        """The key of the format's uploaded-file ids in a part's ``refs``."""
        self.wrap = common.holder(name)
        """The extras holding a mapping whole as this format's entry."""
        self.output_text = FrozenDict({name: {"output": True}})
        """The extras of a plain ``output_text`` part."""
        self.raw_reasoning = raw_reasoning
        self.typed = typed
        self.extensions = extensions
        self.bare_allowed = bare_allowed

    def __repr__(self) -> str:
        return f"<OpenAI Responses wire {self.name}>"


BASE = Wire(NAME)
"""OpenAI Responses itself."""
