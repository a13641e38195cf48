"""The conversation of a tiny request: ``lines``, each a role and a text."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from canisters import Assistant, Conversation, Role, Supervisor, Text, User
from canisters.providers import kit

NAME = "tiny"
_LINE_KEYS = frozenset({"role", "text"})
_KINDS: dict[str, Any] = {"system": Supervisor, "user": User, "assistant": Assistant}
_ROLES = {Role.Supervisor: "system", Role.User: "user", Role.Assistant: "assistant"}


def parse_request(body: object) -> Conversation:
    """The conversation of a request body's ``lines``."""
    lines = kit.expect_list(kit.as_mapping(body).get("lines"), "$.lines")
    canisters = []
    for index, raw in enumerate(lines):
        path = f"$.lines[{index}]"
        line = kit.expect_mapping(raw, path)
        role = kit.expect_str(line.get("role"), f"{path}.role")
        kind = _KINDS.get(role)
        if kind is None:
            # A line of a role tiny does not know: kept whole, in its place,
            # sent back to tiny only.
            marks: dict[str, Any] = {"raw": dict(line)}
            kit.bind(marks, [role])
            canisters.append(Assistant((), extras={NAME: marks}))
            continue
        text = kit.expect_str(line.get("text"), f"{path}.text")
        rest = kit.rest(line, _LINE_KEYS)
        canisters.append(
            kind((Text(text),), extras={NAME: {"line": rest}} if rest else {})
        )
    return Conversation(canisters)


def render_request(
    conversation: Conversation, options: Mapping[str, Any]
) -> dict[str, Any]:
    """The ``lines`` of a request body."""
    opts = kit.options_from(options)
    sent = kit.request_canisters(conversation, opts, NAME).canisters
    return {"lines": [line for line in render_lines(sent, opts) if line is not None]}


def render_lines(canisters: list[Any], opts: kit.Options) -> list[Any]:
    """Each canister as a line (``None``: dropped by the unsupported policy)."""
    lines: list[dict[str, Any] | None] = []
    for index, canister in enumerate(canisters):
        own = kit.mine(canister, NAME)
        if "raw" in own:
            lines.append(dict(own["raw"]))
            continue
        role = _ROLES.get(canister.role)
        where = kit.describe(index, canister)
        if role is None:  # calls, results, documents: tiny has no line for them
            text = kit.unsupported(opts, NAME, where, "tiny has lines of text only")
            lines.append(None if text is None else {"role": "user", "text": text})
            continue
        texts = []
        for number, part in enumerate(canister.content):
            if part.type == "text":
                texts.append(part.text)
                continue
            where = kit.describe(index, canister, number, part)
            if part.type == "reasoning":
                if (
                    kit.reasoning_action(part, NAME, opts, where, native=False)
                    == "text"
                ):
                    texts.append(part.text)
                continue
            text = kit.unsupported(opts, NAME, where, "tiny takes text only")
            if text is not None:
                texts.append(text)
        lines.append({"role": role, "text": "\n".join(texts), **own.get("line", {})})
    return lines
