"""Anthropic Messages conversation fields: ``system`` and ``messages``, both ways."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..._frozen import EMPTY
from ...canisters import now
from ...conversation import Conversation
from ...exceptions import CanistersError, MalformedPayload, _excerpt
from ...protocols import Canister
from .. import _common as common
from .._common import (
    expect_list,
    expect_mapping,
    mine,
    new_assistant,
    new_conversation,
    new_supervisor,
    new_user,
    plain_text,
)
from .reading import NAME, _mark_fresh, _message_form, _parse_blocks, _parse_system
from .writing import (
    _render_messages,
    _render_system,
    _Renderer,
    _top_level,
    _without_empty,
)

__all__ = ["NAME", "parse_request", "render_request"]


_MESSAGE_KEYS = frozenset({"role", "content"})


def parse_request(
    body: object, kept: list[Any] | None = None, *, fast: bool = True
) -> Conversation:
    """Read ``system`` and ``messages`` of a Messages request body (or SDK
    params); the normalizer guards the call. ``fast=False`` reads every message the
    general way (what the fast way must give, exactly). What it keeps unread
    goes to ``kept`` (see :func:`~canisters.providers._common.guarded_keeping`):
    the system prompt or a message read the general way, whole; from a message
    read the fast way, a block read the general way and a call's arguments."""
    if kept is None:
        kept = []
    mapping = body if type(body) is dict else common.as_mapping(body)
    one_pass = _one_pass[0] if fast and _one_pass else None
    canisters: list[Canister] = []
    # The canisters the fast way builds share the moment the body was read.
    moment = now()
    if "system" in mapping and mapping["system"] is not None:
        system = mapping["system"]
        if fast and type(system) is str:
            canisters.append(new_supervisor(moment, EMPTY, (plain_text(system),)))
        elif (
            one_pass is not None
            and (supervisor := one_pass._plain_system(system, moment, kept)) is not None
        ):
            canisters.append(supervisor)
        else:
            kept.append(system)
            canisters.append(_parse_system(system, moment))
    names: dict[str, str] = {}
    previous: str | None = None
    for index, raw in enumerate(expect_list(mapping.get("messages"), "$.messages")):
        if one_pass is not None and type(raw) is dict and len(raw) == 2:
            # A user or assistant message of blocks, built the fast way (see
            # _parse_plain).
            role, content = raw.get("role"), raw.get("content")
            items = (
                one_pass._parse_plain(
                    role, content, moment, names, previous == role, kept
                )
                if content and (role == "user" or role == "assistant")
                else None
            )
            if items is not None:
                canisters += items
                previous = role
                continue
        path = f"$.messages[{index}]"
        kept.append(raw)
        message = expect_mapping(raw, path)
        if "role" not in message:
            raise MalformedPayload("missing role", path)
        role = message["role"]
        if role not in ("user", "assistant", "system"):
            raise MalformedPayload(f"unknown role {_excerpt(role)}", f"{path}.role")
        if "content" not in message:
            raise MalformedPayload("missing content", path)
        extra = common.rest(message, _MESSAGE_KEYS)
        if role == "system":
            supervisor = _parse_system(message["content"], moment)
            _mark_fresh(supervisor, {"in_messages": True, "message": extra})
            canisters.append(supervisor)
            previous = role
            continue
        content = message["content"]
        items, form = _parse_blocks(role, content, path, names, moment)
        if not items:
            build = new_assistant if role == "assistant" else new_user
            items = [build(moment, EMPTY, ())]
        default = _message_form(items)
        marks: dict[str, Any] = {"message": extra, "split": previous == role}
        if form != default:
            marks["content"] = form
        if not content:
            marks["empty"] = True  # "" or []: given back to Anthropic as it came
        if any(marks.values()) or mine(items[0], NAME):
            _mark_fresh(items[0], marks)
        canisters.extend(items)
        previous = role
    if names:  # the body held calls (each named as it was read)
        common.mark_interposed(canisters, NAME)
    return new_conversation(tuple(canisters))


def render_request(
    conversation: Conversation, options: Mapping[str, Any], *, fast: bool = True
) -> dict[str, Any]:
    """Render ``{"system": ..., "messages": [...]}`` for a Messages request.

    Supervisors become the top-level ``system`` (a string, or text blocks when
    there are several or they carry ``cache_control``); consecutive turns of one
    role are merged, as Anthropic requires alternating roles. ``fast=False``
    renders every message the general way (what the fast way must give,
    exactly)."""
    opts = common.options_from(options)
    # Provided parts settled once, before a trial (whose notes it would lose).
    given = common.settle_provided(
        common.canisters_given(conversation, NAME), opts, NAME
    )
    # A trial (see OpenAI chat) renders the messages before the system prompt:
    # not with media labels, which are numbered in the order they are written.
    one_pass = _one_pass[0] if fast and _one_pass else None
    trial = (
        None if one_pass is None or opts.media_labels else common.trial_options(opts)
    )
    messages = None
    supervisors: list[int] = []
    if trial is not None:
        renderer = _Renderer(trial)
        try:
            messages = one_pass._render_plain_messages(  # type: ignore[union-attr]
                renderer, given, trial=True, supervisors=supervisors
            )
        except CanistersError:  # given again by the usual way, or not at all
            messages = None
    if messages is not None:
        # Without extras, every supervisor goes to the top-level system prompt.
        canisters, own = given, False
        system = [(index, given[index]) for index in supervisors]
        if trial is not opts:  # the trial's renderer noted to the trial's report
            renderer = _Renderer(opts)
    else:
        renderer = _Renderer(opts)
        canisters, own, supervisors, _ = common.request_canisters(
            given, opts, NAME, adjacent=True
        )
        system = [
            (index, canisters[index])
            for index in supervisors
            if _top_level(canisters[index])
        ]
    for number, (index, canister) in enumerate(system):
        if index != number:  # other canisters came before
            opts.note(
                "moved",
                NAME,
                common.describe(index, canister),
                "instructions moved to the top-level system prompt",
            )
    body: dict[str, Any] = {}
    if system:
        if len(system) == 1:
            body["system"] = _render_system(
                renderer, system[0][0], system[0][1], string_ok=True
            )
        else:
            blocks: list[dict[str, Any]] = []
            for index, supervisor in system:
                blocks.extend(
                    _render_system(renderer, index, supervisor, string_ok=False)
                )
            body["system"] = blocks
    if messages is not None:
        common.adopt(opts, trial)  # type: ignore[arg-type]
        body["messages"] = messages
    elif one_pass is not None and not own:
        body["messages"] = one_pass._render_plain_messages(renderer, canisters)
    else:
        body["messages"] = _without_empty(
            _render_messages(renderer, canisters), opts, renderer.kept
        )
    return body


# The one-pass paths (.fast) for the common shapes, registered by that module
# when the package loads it: this module never imports it.
_one_pass: list[Any] = []


def _register_one_pass(module: Any) -> None:
    """Let the general path use ``module``'s one-pass paths."""
    _one_pass[:] = [module]
