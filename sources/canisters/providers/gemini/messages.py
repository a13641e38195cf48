"""The conversation of a Gemini request: ``systemInstruction`` and ``contents``
(see the package's docstring for the spellings read and kept)."""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime
from typing import Any, Final

from ..._frozen import FrozenDict
from ...canisters import Supervisor, now
from ...conversation import Conversation
from ...protocols import Canister, Content
from .. import _common as common
from .._common import SUPERVISOR, describe, expect_str, plain_text
from .reading import (
    _TURN_KEYS,
    NAME,
    _item_path,
    _mark,
    _Pairing,
    _parse_turn,
    _parts,
    _Reader,
    _single,
    _wrap,
)
from .writing import _empty_from_elsewhere, _Renderer

__all__ = ["NAME", "REQUEST_FIELDS", "parse_request", "render_request"]


REQUEST_FIELDS = ("systemInstruction", "system_instruction", "contents")
"""The request fields that carry the conversation (either casing)."""


_SPLIT: Final = {"split": True}


def _parse_contents(
    raw: Any, path: str, moment: datetime, *, fast: bool = True
) -> list[Canister]:
    single = _single(raw)
    turns = _parts(raw, path)
    pairing = _Pairing()
    canisters: list[Canister] = []
    previous: str | None = None
    one_pass = _one_pass[0] if fast and _one_pass else None
    for index, turn in enumerate(turns):
        if one_pass is not None and type(turn) is dict and len(turn) == 2:
            # A user or model turn of parts, built the fast way (see _parse_plain).
            role, parts = turn.get("role"), turn.get("parts")
            found = (
                one_pass._parse_plain(role, parts, index, pairing, moment)
                if (role == "user" or role == "model") and type(parts) is list
                else None
            )
            if found is not None:
                if previous == role:
                    _mark(found[0], _SPLIT)
                previous = role
                canisters += found
                continue
        turn_path = f"{path}[{index}]" if not single else path
        role, found = _parse_turn(
            common.expect_mapping(turn, turn_path), index, turn_path, pairing, moment
        )
        wire = role if role in ("model", "user") else "user"
        if role not in ("model", "user", "function"):
            wire = "raw"  # a turn kept whole (see _wire_role)
        if previous == wire:
            _mark(found[0], _SPLIT)
        previous = wire
        canisters.extend(found)
    if single and canisters:
        _mark(canisters[0], {"contents_object": True})
    return canisters


def _parse_system(raw: Any, key: str, moment: datetime) -> Supervisor:
    path = f"$.{key}"
    supervisor: Supervisor
    if isinstance(raw, str):
        extras = FrozenDict({NAME: {"string": True, "key": key}})
        supervisor = common.new_supervisor(moment, extras, (plain_text(raw),))
        return supervisor
    system = common.expect_mapping(raw, path)
    reader = _Reader()
    marks: dict[str, Any] = {}
    if key != "systemInstruction":
        marks["key"] = key
    role = reader.get(system, "role")
    if role is not None:
        marks["instruction"] = {"role": role}
    raw_parts = reader.get(system, "parts")
    if isinstance(raw_parts, Mapping):
        marks["parts_object"] = True
    parts: list[Content] = []
    for number, value in enumerate(_parts(raw_parts, f"{path}.parts")):
        part_path = _item_path(f"{path}.parts", raw_parts, number)
        part = common.expect_mapping(value, part_path)
        if "text" not in part and part:
            parts.append(common.opaque_part(NAME, part))  # a kind not known here
            continue
        parts.append(plain_text(expect_str(part.get("text"), f"{part_path}.text")))
    common.bind_parts(marks, parts)
    rest = reader.rest(system, _TURN_KEYS)
    if rest:
        marks["system"] = rest
    supervisor = common.new_supervisor(moment, _wrap(marks), tuple(parts))
    return supervisor


def parse_request(body: object, *, fast: bool = True) -> Conversation:
    """The normalizer's ``parse_request``, unguarded; ``fast=False`` reads every
    turn the general way (what the fast way must give, exactly)."""
    mapping = body if type(body) is dict else common.as_mapping(body)
    canisters: list[Canister] = []
    # Every canister of the body is made at the moment it was read.
    moment = now()
    for key in ("systemInstruction", "system_instruction"):
        raw = mapping.get(key)
        if raw is not None:
            supervisor = (
                _one_pass[0]._plain_system(raw, moment)
                if fast and _one_pass and key == "systemInstruction"
                else None
            )
            canisters.append(supervisor or _parse_system(raw, key, moment))
            break
    if "contents" in mapping:
        canisters += _parse_contents(
            mapping["contents"], "$.contents", moment, fast=fast
        )
    conversation: Conversation = common.new_conversation(tuple(canisters))
    return conversation


def render_request(
    conversation: Conversation, options: Mapping[str, Any], *, fast: bool = True
) -> dict[str, Any]:
    """The normalizer's ``render_request``; ``fast=False`` renders the contents the
    general way (what the fast way must give, exactly)."""
    settings = common.options_from(options)
    canisters, own, *_ = common.request_canisters(conversation, settings, NAME)
    positions = common.positions(conversation)
    renderer = _Renderer(settings)
    supervisors: list[tuple[int, Canister]] = []
    rest: list[tuple[int, Canister]] = []
    for canister in canisters:
        index = positions[canister.id]
        if _empty_from_elsewhere(canister):
            settings.note(
                "dropped",
                NAME,
                describe(index, canister),
                "empty message: Gemini refuses a turn without parts",
            )
            continue
        if canister.role is SUPERVISOR:
            if rest:
                settings.note(
                    "moved",
                    NAME,
                    describe(index, canister),
                    "Gemini has one system instruction, before the contents",
                )
            supervisors.append((index, canister))
        else:
            rest.append((index, canister))
    body: dict[str, Any] = {}
    if supervisors:
        key, system = renderer.system(supervisors)
        body[key] = system
    if fast and _one_pass and not own:
        body["contents"] = _one_pass[0]._plain_contents(renderer, rest)
    else:
        body["contents"] = renderer.contents(rest)
    return body


# The one-pass paths (.fast) for the common shapes, registered by that module
# when the package loads it: this module never imports it.
_one_pass: list[Any] = []


def _register_one_pass(module: Any) -> None:
    """Let the general path use ``module``'s one-pass paths."""
    _one_pass[:] = [module]
