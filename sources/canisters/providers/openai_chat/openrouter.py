"""OpenRouter (``openrouter``): OpenAI Chat with OpenRouter's reasoning::

    normalizer = providers.get("openrouter")

Assistant messages (replies, stream deltas, requests) carry ``reasoning``
(the text) and ``reasoning_details``: entries ``reasoning.text`` (``text``,
``signature``), ``reasoning.summary`` (``summary``) and
``reasoning.encrypted`` (``data``), each with ``id``, ``format``
(``anthropic-claude-v1``, ``openai-responses-v1``...) and ``index``. Each entry
is a :class:`~canisters.Reasoning` part (the text or summary in ``text``, a
signature in ``signature``, encrypted data in ``redacted``, bound to
``openrouter``), the entry itself kept in ``extras["openrouter"]["entry"]`` so
it goes back unchanged on the next turn; ``reasoning`` beside the entries is
kept verbatim, and read as one part where no entries came. In a stream, the
entries of one ``index`` grow together (their text concatenated, as
``content`` is).

Reasoning going to OpenRouter from another format: plain text (no signature)
goes as ``reasoning``; Anthropic's signed or redacted thinking goes as an entry
of format ``anthropic-claude-v1``; any other provider's signed reasoning is
dropped or sent as text (the ``reasoning`` option).

Whole requests: OpenRouter's ``reasoning`` object (``effort``,
``max_tokens``, ``enabled``) is the request's
:class:`~canisters.ReasoningConfig` (``exclude`` kept beside it);
``provider``, ``models``, ``transforms``, ``usage`` and the other keys are
kept verbatim. Everything else is OpenAI Chat's
(``canisters.providers.openai_chat``), read by the same modules with this
dialect's name.
"""

from __future__ import annotations

import functools
from collections.abc import Mapping
from typing import Any

import attrs

from ...content import Reasoning
from ...protocols import Content
from ...requests import ReasoningConfig, Request
from ..kit import (
    GENERIC_RENDERS,
    BaseNormalizer,
    Fields,
    Rendering,
    guarded,
    mine,
)
from .messages import Messages, declare
from .request import Settings
from .response import Response, declare_envelope, parse_response
from .stream import OpenAIChatAccumulator
from .wire import ChatErrors, Wire

__all__ = ["NAME", "NORMALIZER", "OpenRouter", "OpenRouterAccumulator"]

NAME = "openrouter"
"""The provider name."""

ANTHROPIC_FORMAT = "anthropic-claude-v1"
"""The ``format`` of an entry holding Anthropic's thinking."""

_DETAILS = "reasoning_details"
_FIELDS = {"reasoning.text": "text", "reasoning.summary": "summary"}


_CARRIED = frozenset({"type", "text", "summary", "signature", "data"})
"""An entry's keys read into its part (``format`` too, where it names
Anthropic's thinking: the part is Anthropic's)."""


def _part(entry: Mapping[str, Any], keys: Mapping[str, Any] | None = None) -> Reasoning:
    """The part an entry of ``reasoning_details`` stands for, holding it (and
    ``keys``: what of the entry no field holds, reported elsewhere)."""
    kind = entry.get("type")
    text = entry.get(_FIELDS.get(kind, ""), "") if isinstance(kind, str) else ""
    signature = entry.get("signature") if kind == "reasoning.text" else None
    data = entry.get("data") if kind == "reasoning.encrypted" else None
    held: dict[str, Any] = {"entry": dict(entry)}
    if keys:
        held["keys"] = dict(keys)
    return Reasoning(
        text if isinstance(text, str) else "",
        signature=signature if isinstance(signature, str) else None,
        redacted=data if isinstance(data, str) else None,
        # Anthropic's thinking, signed by Anthropic: Anthropic takes it back.
        provider="anthropic" if entry.get("format") == ANTHROPIC_FORMAT else NAME,
        extras={NAME: held},
    )


def _uncarried(entry: Mapping[str, Any], item: int) -> dict[str, Any]:
    """The keys of ``entry`` its part does not hold: all but the carried ones,
    its ``format`` where it names Anthropic's, and its ``index`` where it is
    the number of the reasoning item it belongs to (``item``)."""
    keys = {key: value for key, value in entry.items() if key not in _CARRIED}
    if keys.get("format") == ANTHROPIC_FORMAT:
        del keys["format"]
    if type(keys.get("index")) is int and keys["index"] == item:
        del keys["index"]
    return keys


def _read(extra: dict[str, Any], path: str) -> list[Content]:
    details = extra.get(_DETAILS)
    if type(details) is list and details and all(type(e) is dict for e in details):
        del extra[_DETAILS]
        parts: list[Reasoning] = []
        item, last = -1, object()
        for entry in details:
            index = entry.get("index")
            if index != last or type(index) is not int:  # a new reasoning item
                item, last = item + 1, index
            parts.append(_part(entry, _uncarried(entry, item)))
        if "reasoning" in extra:  # the text of the entries, kept as it came
            text = extra.pop("reasoning")
            joined = "".join(part.text for part in parts if part.text)
            first = dict(parts[0].extras[NAME])
            # The same text as the entries' says nothing more; other text is
            # kept, and reported where it goes to another format.
            first["reasoning"] = True if text == joined else text
            if text != joined:
                first["keys"] = {**first.get("keys", {}), "reasoning": text}
            parts[0] = attrs.evolve(parts[0], extras={NAME: first})
        return list[Content](parts)
    text = extra.get("reasoning")
    if type(text) is str:
        del extra["reasoning"]
        return [Reasoning(text, provider=NAME)]
    return []


def _takes(part: Any) -> bool:
    """Reasoning read here, plain reasoning text, or Anthropic's thinking."""
    return part.provider in (NAME, "anthropic") or (
        part.signature is None and part.redacted is None
    )


def _entry(part: Any, index: int) -> dict[str, Any] | None:
    """The entry ``part`` goes back as; ``None`` for plain text without one."""
    held = mine(part, NAME).get("entry")
    if isinstance(held, Mapping) and _part(held).text == part.text:
        read = _part(held)
        if (read.signature, read.redacted) == (part.signature, part.redacted):
            return dict(held)  # unchanged, as it came
    if part.redacted is not None:
        entry = {"type": "reasoning.encrypted", "data": part.redacted}
    elif part.signature is not None:
        entry = {"type": "reasoning.text", "text": part.text}
        entry["signature"] = part.signature
    else:
        return None
    if part.provider == "anthropic":
        entry["format"] = ANTHROPIC_FORMAT
    entry["index"] = index
    return entry


def _write(parts: list[Any], message: dict[str, Any]) -> None:
    entries = [_entry(part, index) for index, part in enumerate(parts)]
    if all(entry is None for entry in entries):
        message["reasoning"] = "".join(part.text for part in parts)
        return
    first = mine(parts[0], NAME)
    text = first.get("reasoning", not first.get("entry"))
    if text is True:  # the entries' text beside them (also from another format)
        message["reasoning"] = "".join(part.text for part in parts if part.text)
    elif text is not False:  # as it came, unlike the entries' text
        message["reasoning"] = text
    message[_DETAILS] = [
        entry
        if entry is not None
        else {"type": "reasoning.text", "text": part.text, "index": index}
        for index, (part, entry) in enumerate(zip(parts, entries, strict=True))
    ]


WIRE = Wire(NAME, read=_read, takes=_takes, write=_write, quotes=True)
"""The dialect's wire (see :class:`~canisters.providers.openai_chat.wire.Wire`)."""

# An entry's keys its part does not hold: reported where the part goes to
# another format; its id and format (where the reasoning came from) only
# OpenRouter resolves.
declare(NAME, max_id=None, part=("keys",), references=frozenset({"id", "format"}))
declare_envelope(
    NAME,
    quiet={"response.usage.cost": 0, "response.usage.is_byok": False},
)


# Whole requests ---------------------------------------------------------------------

_REASONING_KEYS = frozenset({"effort", "max_tokens", "enabled", "exclude"})


def _read_settings(fields: Fields, marks: dict[str, Any]) -> ReasoningConfig | None:
    raw = fields.rest.get("reasoning")
    if not isinstance(raw, Mapping) or not raw.keys() <= _REASONING_KEYS:
        return None
    effort, budget = raw.get("effort"), raw.get("max_tokens")
    enabled, exclude = raw.get("enabled"), raw.get("exclude")
    if (
        (effort is not None and not isinstance(effort, str))
        or (budget is not None and (type(budget) is not int or budget < 0))
        or (enabled is not None and type(enabled) is not bool)
        or (exclude is not None and type(exclude) is not bool)
        or any(raw[key] is None for key in raw)
    ):
        return None  # kept as it came
    fields.take("reasoning")
    marks["reasoning"] = {"exclude": exclude} if "exclude" in raw else {}
    return ReasoningConfig(enabled=enabled, effort=effort, budget_tokens=budget)


def _write_settings(
    request: Request, rendering: Rendering, out: dict[str, Any]
) -> bool:
    own = rendering.own.get("reasoning")
    if rendering.native and not isinstance(own, Mapping):
        return False  # spelled reasoning_effort, as OpenAI Chat spells it
    reasoning = request.reasoning
    assert reasoning is not None
    value: dict[str, Any] = {}
    if reasoning.enabled is not None:
        value["enabled"] = reasoning.enabled
    if reasoning.effort is not None:
        value["effort"] = reasoning.effort
    if reasoning.budget_tokens is not None:
        value["max_tokens"] = reasoning.budget_tokens
    if reasoning.summary is not None:
        rendering.outcomes.dropped(
            "reasoning.summary", "OpenRouter takes no reasoning summary setting"
        )
    if reasoning.include_thoughts is False and not isinstance(own, Mapping):
        value["exclude"] = True
    if isinstance(own, Mapping):
        value.update(own)
    if value:
        out["reasoning"] = value
    return True


class OpenRouterErrors(ChatErrors):
    """OpenRouter's error shape: ``{"error": {"code", "message", "metadata"}}``,
    the code the HTTP status (a number), with neither ``type`` nor ``param``."""

    __slots__ = ()

    writes_param = False

    def is_error(self, body: object) -> bool:
        """An error body, or a stream's chunk carrying an error beside its
        choices (how OpenRouter ends a stream that failed midway)."""
        return isinstance(body, Mapping) and isinstance(body.get("error"), Mapping)

    def write(
        self,
        reply: Any,
        status: int,
        kind: tuple[str | None, str | int | None],
        extras: dict[str, Any],
        envelope: dict[str, Any],
    ) -> dict[str, Any]:
        """The error body of ``reply``: its code, message and other keys."""
        code = kind[1] if kind[1] is not None else status
        inner: dict[str, Any] = {"code": code, "message": reply.message}
        if kind[0] is not None:
            inner["type"] = kind[0]
        inner.update(extras)
        return {"error": inner, **envelope}


_RENDERS = {
    kind: (status, None, status) for kind, (status, _, _) in GENERIC_RENDERS.items()
}
_RENDERS["quota_exceeded"] = (402, None, 402)  # out of credits


_ERRORS = OpenRouterErrors(NAME, renders=_RENDERS)


class OpenRouterAccumulator(OpenAIChatAccumulator):
    """Accumulates an OpenRouter stream: ``reasoning`` grows as ``content``
    does; the ``reasoning_details`` entries of one ``index`` (and type) grow
    into one, their strings concatenated, other keys (a ``signature``) set
    when they come."""

    provider = NAME
    reply = staticmethod(
        guarded(functools.partial(parse_response, wire=WIRE, dialect=_ERRORS))
    )
    errors = _ERRORS

    def __init__(self) -> None:
        super().__init__()
        self._details: dict[int, list[dict[str, Any]]] = {}

    def _choice(self, raw: Mapping[str, Any], path: str) -> None:
        delta = raw.get("delta")
        if isinstance(delta, Mapping) and isinstance(delta.get(_DETAILS), list):
            index = raw.get("index", 0)
            entries = self._details.setdefault(index if type(index) is int else 0, [])
            for entry in delta[_DETAILS]:
                if isinstance(entry, Mapping):
                    _grow_entry(entries, entry)
            raw = {**raw, "delta": {k: v for k, v in delta.items() if k != _DETAILS}}
        super()._choice(raw, path)

    def _absorb(self, event: Mapping[str, Any], path: str) -> bool:
        if isinstance(event.get("error"), Mapping):  # a stream failing midway
            raise _ERRORS.stream_error(event, path)
        return super()._absorb(event, path)

    def _after_end(self, event: Mapping[str, Any], path: str) -> bool:
        # OpenRouter's last chunks, after the finish reason, carry the usage or
        # an error beside an empty delta, or say the finish reason again.
        choices = event.get("choices")
        if (
            event.get("usage")
            or event.get("error")
            or (isinstance(choices, list) and all(_empty(choice) for choice in choices))
        ):
            self._absorb(event, path)
            return True
        return super()._after_end(event, path)

    def _body(self, mode: str, note: Any) -> tuple[Mapping[str, Any], dict[str, str]]:
        body, partial = super()._body(mode, note)
        for choice in body.get("choices", ()):
            entries = self._details.get(choice["index"])
            if entries:
                choice["message"][_DETAILS] = [dict(entry) for entry in entries]
        return body, partial


_GROWING = ("content", "refusal", "tool_calls", "reasoning", _DETAILS)


def _empty(choice: object) -> bool:
    """Whether a chunk's choice adds nothing to the reply."""
    delta = choice.get("delta") if isinstance(choice, Mapping) else None
    return isinstance(delta, Mapping) and not any(delta.get(k) for k in _GROWING)


def _grow_entry(entries: list[dict[str, Any]], entry: Mapping[str, Any]) -> None:
    last = entries[-1] if entries else None
    if (
        last is None
        or last.get("index") != entry.get("index")
        or last.get("type") != entry.get("type")
    ):
        entries.append(dict(entry))
        return
    for key, value in entry.items():
        old = last.get(key)
        if key in ("text", "summary", "data") and isinstance(value, str):
            last[key] = (old if isinstance(old, str) else "") + value
        elif value is not None or key not in last:
            last[key] = value


class OpenRouter(BaseNormalizer):
    """The ``openrouter`` normalizer: OpenAI Chat with OpenRouter's
    ``reasoning`` and ``reasoning_details`` and its request fields."""

    __slots__ = ()

    name = NAME
    reads = ("messages",)
    keeps = True
    messages = Messages(WIRE)
    response = Response(WIRE, _ERRORS)
    request_settings = Settings(NAME, _read_settings, _write_settings)
    stream = OpenRouterAccumulator
    dialect = _ERRORS


NORMALIZER = OpenRouter()
"""The registered instance."""
