"""OpenAI Responses conversation fields: a request's ``instructions`` and
``input``, both ways, and the names of the fields a request and a response
carry. The items are read by :mod:`.reading` and written by :mod:`.writing`,
which :mod:`.response` uses for a response's ``output`` items too."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..._frozen import EMPTY, FrozenDict
from ...canisters import now
from ...conversation import Conversation
from ...exceptions import MalformedPayload
from ...protocols import Canister, Role
from .. import _common as common
from .._common import (
    expect_list,
    mine,
    new_supervisor,
    new_user,
    plain_text,
)
from .reading import _Parser
from .wire import BASE, NAME, Wire
from .writing import _Renderer

__all__ = [
    "NAME",
    "Messages",
    "REQUEST_FIELDS",
    "RESPONSE_FIELDS",
    "parse_request",
    "render_request",
]

REQUEST_FIELDS = ("instructions", "input")
"""The request fields that carry the conversation."""

RESPONSE_FIELDS = (
    "id",
    "object",
    "created_at",
    "status",
    "error",
    "incomplete_details",
    "model",
    "output",
    "usage",
    "parallel_tool_calls",
    "tool_choice",
    "tools",
)
"""The response fields :meth:`OpenAIResponses.render_response` produces (the last
three echo the request; the SDK's ``Response`` requires them)."""


def _parse_input(
    body: Mapping[str, Any], *, fast: bool = True, wire: Wire = BASE
) -> list[Canister]:
    """The canisters of a request's ``instructions`` and ``input``; ``fast=False``
    reads every item the general way (what the fast way must give, exactly).
    ``wire`` is the format read (a dialect's is read the general way)."""
    parser = _Parser(now(), wire)
    instructions = body.get("instructions")
    if isinstance(instructions, str):
        parser.canisters.append(
            new_supervisor(parser.moment, EMPTY, (plain_text(instructions),))
        )
    elif instructions is not None:
        raise MalformedPayload("expected a string", "$.instructions")
    value = body.get("input")
    if isinstance(value, str):
        extras = FrozenDict({wire.name: {"string": True}})
        parser.canisters.append(new_user(parser.moment, extras, (plain_text(value),)))
        return parser.canisters
    if value is None:
        return parser.canisters
    if type(value) is not list:
        value = expect_list(value, "$.input")
    one_pass = _one_pass[0] if fast and _one_pass and wire is BASE else None
    for index, item in enumerate(value):
        # The common shapes are read the fast way; anything else, the general way.
        if (
            one_pass is not None
            and type(item) is dict
            and one_pass._plain_item(parser, index, item)
        ):
            continue
        parser.item(index, item, f"$.input[{index}]")
    parser.flush()
    return parser.canisters


def parse_request(
    body: object, *, fast: bool = True, wire: Wire = BASE
) -> Conversation:
    """The normalizer's ``parse_request``, unguarded; ``fast=False`` reads every
    item the general way (what the fast way must give, exactly)."""
    mapping = body if type(body) is dict else common.as_mapping(body)
    return common.new_conversation(tuple(_parse_input(mapping, fast=fast, wire=wire)))


def _instructions(
    canisters: list[tuple[int, Canister]], name: str = NAME
) -> tuple[Any, list[tuple[int, Canister]]]:
    if not canisters:
        return None, canisters
    index, first = canisters[0]
    if first.role is not Role.Supervisor or "role" in mine(first, name) or index != 0:
        return None, canisters
    parts = first.content  # type: ignore[attr-defined]
    if not all(part.type == "text" for part in parts):
        return None, canisters
    return "\n".join(part.text for part in parts), canisters[1:]


def render_request(
    conversation: Conversation,
    options: Mapping[str, Any],
    *,
    fast: bool = True,
    wire: Wire = BASE,
) -> dict[str, Any]:
    """The normalizer's ``render_request``; ``fast=False`` renders the input items
    the general way (what the fast way must give, exactly). ``wire`` is the
    format written (a dialect's is written the general way)."""
    name = wire.name
    settings = common.options_from(options)
    kept, own, *_ = common.request_canisters(conversation, settings, name)
    positions = common.positions(conversation)
    indexed = [(positions[canister.id], canister) for canister in kept]
    instructions, rest_ = _instructions(indexed, name)
    body: dict[str, Any] = {}
    if instructions is not None:
        body["instructions"] = instructions
    if (
        len(rest_) == 1
        and rest_[0][1].role is Role.User
        and mine(rest_[0][1], name).get("string")
    ):
        body["input"] = rest_[0][1].content[0].text  # type: ignore[attr-defined]
        return body
    renderer = _Renderer(settings, response=False, wire=wire)
    if fast and _one_pass and not own and wire is BASE:
        body["input"] = _one_pass[0]._plain_items(renderer, rest_)
    else:
        body["input"] = renderer.items(rest_)
    return body


# The one-pass paths (.fast) for the common shapes, registered by that module
# when the package loads it: this module never imports it.
_one_pass: list[Any] = []


def _register_one_pass(module: Any) -> None:
    """Let the general path use ``module``'s one-pass paths."""
    _one_pass[:] = [module]


class Messages:
    """The conversation fields of one OpenAI Responses format, as
    :class:`~canisters.providers.kit.BaseNormalizer` takes them (its
    ``messages``): :func:`parse_request` and :func:`render_request` for
    ``wire``, the general way."""

    __slots__ = ("wire",)

    def __init__(self, wire: Wire) -> None:
        self.wire = wire

    def parse_request(self, body: object) -> Conversation:
        """Read the ``instructions`` and ``input`` of a request body."""
        return parse_request(body, fast=False, wire=self.wire)

    def render_request(
        self, conversation: Conversation, options: Mapping[str, Any]
    ) -> dict[str, Any]:
        """Render ``instructions`` and ``input`` in the format."""
        return render_request(conversation, options, fast=False, wire=self.wire)
