"""Tiny replies: ``{"id", "model", "line": {"role", "text"}, "stop"}``."""

from __future__ import annotations

from typing import Any

from canisters import Assistant, Conversation, Text
from canisters.providers import kit

from .errors import DIALECT
from .messages import NAME, render_lines

# The envelope: which keys the reply's metadata holds (so another format's
# reply body can carry them), and what a Tiny reply body can say; every other
# key of another format's envelope is reported when its reply comes here.
_ENVELOPE = kit.Envelope
kit.declare_envelope(
    NAME,
    _ENVELOPE(
        ("response",),
        writes=frozenset({_ENVELOPE.MODEL, _ENVELOPE.FINISH}),
        carried={
            "response.id": _ENVELOPE.ID,
            "response.model": _ENVELOPE.MODEL,
            "response.stop": _ENVELOPE.FINISH,
        },
    ),
)
_FINISH = {"end": "stop", "limit": "length"}
_STOPS = {neutral: wire for wire, neutral in _FINISH.items()}


def parse_response(body: object) -> Conversation:
    """The reply of a response body."""
    mapping = kit.as_mapping(body)
    DIALECT.check(mapping)
    line = kit.expect_mapping(mapping.get("line"), "$.line")
    text = kit.expect_str(line.get("text"), "$.line.text")
    stop = kit.expect_optional_str(mapping.get("stop"), "$.stop")
    finish = _FINISH.get(stop, stop) if stop is not None else None
    metadata = kit.response_metadata(
        mapping.get("model"), None, finish, mapping.get("id")
    )
    envelope = kit.rest(mapping, frozenset({"line"}))
    rest = kit.rest(line, frozenset({"role", "text"}))
    reply = Assistant((Text(text),), extras={NAME: {"line": rest}} if rest else {})
    return Conversation([kit.with_response(reply, NAME, metadata, envelope)])


def render_response(conversation: Conversation, opts: kit.Options) -> dict[str, Any]:
    """A response body from a reply: its assistant turns' texts as one line."""
    canisters = kit.canisters_of(conversation, NAME)
    lines = [line for line in render_lines(canisters, opts) if line is not None]
    texts = [line["text"] for line in lines if line["role"] == "assistant"]
    first = canisters[0] if canisters else None
    envelope = dict(kit.mine(first, NAME).get("response", {})) if first else {}
    if first is not None and not envelope:  # a reply read from another format
        metadata = first.metadata
        finish = metadata.finish_reason if metadata else None
        envelope = {"stop": _STOPS.get(finish or "stop", "end")}
        if metadata is not None and metadata.model is not None:
            envelope["model"] = metadata.model
    head = lines[0] if lines and lines[0]["role"] == "assistant" else {}
    line = {**head, "role": "assistant", "text": "".join(texts)}
    return {**envelope, "line": line}
