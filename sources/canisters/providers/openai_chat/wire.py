"""What one OpenAI Chat format spells its own way: :class:`Wire`.

OpenAI Chat (``openai-chat``) and its dialects (the OpenAI-compatible servers
that carry reasoning: ``openai-chat-reasoning``, ``openrouter``) share every
module of this package; each module takes the :class:`Wire` of the format it
reads or writes as a parameter: its name (the key of its extras, the provider
its reports name) and how its assistant messages carry reasoning. The shared
tables of the wire format are here too, and :class:`ChatErrors`, the base of
the dialects' error shapes.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ..._frozen import FrozenDict
from ...protocols import Content, Role
from .. import _common as common
from ..kit import Dialect

__all__ = ["BASE", "NAME", "ChatErrors", "Wire"]

NAME = "openai-chat"
"""The provider name of OpenAI Chat itself."""


class Wire:
    """One OpenAI Chat format: its ``name`` and, for a dialect that carries
    reasoning in assistant messages, how it reads it (``read(extra, path)``:
    the reasoning parts, taken from ``extra``, the message's keys not read
    otherwise), which parts it takes back (``takes(part)``) and how it writes
    them (``write(parts, message)``). The base format has none of the
    three: reasoning it reads nowhere, and sends back only as text.
    ``quotes``: whether its ``url_citation`` annotations carry the quoted
    passage (OpenRouter's ``content``)."""

    __slots__ = (
        "extras",
        "name",
        "quotes",
        "read",
        "ref",
        "refusal_field",
        "takes",
        "write",
    )

    def __init__(
        self,
        name: str,
        *,
        read: Callable[[dict[str, Any], str], list[Content]] | None = None,
        takes: Callable[[Any], bool] | None = None,
        write: Callable[[list[Any], dict[str, Any]], None] | None = None,
        quotes: bool = False,
    ) -> None:
        self.name = name
        """The provider name: the key of the extras this format keeps."""
        self.extras = common.marker(name)
        """The extras of marks (see :func:`~canisters.providers.kit.marker`)."""
        self.ref = common.ref_key(name)
        """The key of the format's uploaded-file ids in a part's ``refs``."""
        self.refusal_field = FrozenDict({name: {"refusal": "field"}})
        """The extras of a refusal given as ``message.refusal``."""
        self.read = read
        self.takes = takes
        self.write = write
        self.quotes = quotes
        """Whether a citation's quoted passage goes in its annotation."""

    def __repr__(self) -> str:
        return f"<OpenAI Chat wire {self.name}>"


BASE = Wire(NAME)
"""OpenAI Chat itself."""


class ChatErrors(Dialect):
    """The base of the dialects' error shapes (OpenAI-compatible servers
    carrying reasoning): without a status (a stream's error), a numeric code
    in the HTTP range is the status."""

    __slots__ = ()

    def classify(
        self,
        type: object,
        code: object,
        status: int | None,
        message: str,
        reason: object = None,
    ) -> Any:
        """The kind of an error; without a status, a numeric code is one."""
        if status is None and isinstance(code, int) and 400 <= code < 600:
            status = code
        return super().classify(type, code, status, message, reason)


WIRE_ROLE = {
    Role.Supervisor: "system",
    Role.User: "user",
    Role.Document: "user",
    Role.Assistant: "assistant",
    Role.Invocation: "assistant",
    Role.Result: "tool",
}
MESSAGE_KEYS = {
    "system": frozenset({"role", "content"}),
    "developer": frozenset({"role", "content"}),
    "user": frozenset({"role", "content"}),
    "assistant": frozenset({"role", "content", "tool_calls", "function_call"}),
    "tool": frozenset({"role", "content", "tool_call_id"}),
    "function": frozenset({"role", "content", "name"}),
}
AUDIO_FORMATS = {
    "audio/wav": "wav",
    "audio/x-wav": "wav",
    "audio/wave": "wav",
    "audio/mpeg": "mp3",
    "audio/mp3": "mp3",
}
MEDIA = frozenset({"image", "file", "audio"})
TEXTS = frozenset({"text", "cited_text"})
"""The part types written as text parts (a cited text: its citations as the
message's annotations)."""
TURN = (Role.Assistant, Role.Invocation)


def default_form(
    parts: list[Content] | tuple[Content, ...], role: str, wire: Wire = BASE
) -> str:
    """The wire form of a message's content written without a mark."""
    if not parts:
        return "null" if role == "assistant" else "list"
    if (
        len(parts) == 1
        and parts[0].type in TEXTS
        and not common.mine(parts[0], wire.name)
    ):
        return "string"
    return "list"


def without_reasoning(parts: Any, wire: Wire) -> tuple[list[Any], list[Any]]:
    """``parts`` split into those ``wire`` writes as reasoning and the others."""
    if wire.takes is None:
        return [], list(parts)
    taken: list[Any] = []
    others: list[Any] = []
    for part in parts:
        (taken if part.type == "reasoning" and wire.takes(part) else others).append(
            part
        )
    return taken, others
