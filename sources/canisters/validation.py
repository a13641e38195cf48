"""Well-formedness rules for conversations, and sanitizing client history.

:func:`validate` checks every rule and reports every problem at once;
:func:`problems` returns them without raising. :func:`sanitize` makes history a
client submitted safe to send on.

The rules, by :attr:`~canisters.Problem.code`:

``empty-user-message``
    a user canister with no content, or whose only content is text that is
    empty or all whitespace (spaces, tabs, newlines); blank text beside an image
    or other media is still a valid message
``invocation-without-name``
    an invocation whose name is empty
``duplicate-invocation-id``
    two invocations share an ``invocation_id``
``orphan-result``
    a result whose invocation is not in the conversation
``result-before-invocation``
    a result that comes before its invocation
``result-name-mismatch``
    a result whose name differs from its invocation's
``duplicate-result``
    a second result for the same invocation
``duplicate-canister-id``
    two canisters share an ``id``
``bad-content-id``
    a media part whose ``content_id`` is not ``sha256:`` + 64 lowercase hex
``naive-timestamp``
    a timestamp without a timezone

Given the request's tools (``validate(conversation, tools=request.tools)``),
two more:

``unknown-tool``
    an invocation of a name no tool has
``invalid-arguments``
    an invocation whose arguments do not match its tool's ``parameters``
    schema (each mismatch named by its path, as :func:`argument_problems`
    gives them)

Arguments are checked with `jsonschema <https://python-jsonschema.readthedocs.io>`_
(the ``schemas`` extra: ``pip install 'canisters[schemas]'``), against the
draft the schema names in ``$schema`` (2020-12 when it names none).
"""

from __future__ import annotations

import importlib
import re
from collections.abc import Iterable, Mapping
from datetime import datetime
from typing import TYPE_CHECKING, Any

import attrs

from .content import _opaque, is_content_id
from .conversation import Conversation, canisters_in
from .exceptions import InvalidConversation, MissingExtra, ModelError, Problem, _excerpt
from .protocols import Canister, Content, Role

if TYPE_CHECKING:
    from .requests import ProviderTool, Tool

__all__ = [
    "Removal",
    "Sanitized",
    "argument_problems",
    "problems",
    "sanitize",
    "validate",
]

_MEDIA_TYPES = frozenset({"image", "audio", "video", "file"})


def _empty(canister: Canister) -> bool:
    """Whether ``canister`` holds nothing but text that is empty after stripping,
    and no element a normalizer kept whole for its provider (see
    :doc:`/providers`: elements of types it does not know, server-tool blocks)."""
    for part in canister.content:  # type: ignore[attr-defined]
        if part.type != "text":
            return False
        text = getattr(part, "text", None)
        if not isinstance(text, str) or text.strip() or _opaque(part) is not None:
            return False
    return not any(
        isinstance(marks, Mapping) and "bound" in marks
        for marks in canister.extras.values()
    )


def _tool_table(
    tools: Iterable[Tool | ProviderTool],
) -> dict[str, Tool | None]:
    """Each tool's name, with the tool when its arguments can be checked."""
    from .requests import ProviderTool, Tool

    if isinstance(tools, (str, Mapping)) or not isinstance(tools, Iterable):
        raise ModelError(f"tools must be Tool objects, got {_excerpt(tools)}")
    table: dict[str, Tool | None] = {}
    for tool in tools:
        if isinstance(tool, Tool):
            table[tool.name] = tool
        elif isinstance(tool, ProviderTool):
            name = tool.body.get("name")
            if isinstance(name, str):
                table.setdefault(name, None)
        else:
            raise ModelError(f"tools must be Tool objects, got {_excerpt(tool)}")
    return table


def _path(steps: Iterable[Any]) -> str:
    return "$" + "".join(
        f"[{step}]" if isinstance(step, int) else f".{step}" for step in steps
    )


def argument_problems(tool: Tool, arguments: Mapping[str, Any]) -> tuple[str, ...]:
    """Where ``arguments`` do not match ``tool.parameters``, each as
    ``"$.path: what"``, in path order; empty when they match or the tool has no
    schema. A schema that is not valid JSON Schema raises
    :class:`~canisters.ModelError`. Needs the ``schemas`` extra."""
    schema = tool.parameters
    if schema is None:
        return ()
    try:
        jsonschema = importlib.import_module("jsonschema")
    except ImportError as error:
        raise MissingExtra("jsonschema", "schemas") from error
    kind = jsonschema.validators.validator_for(
        schema, default=jsonschema.Draft202012Validator
    )
    try:
        kind.check_schema(schema)
    except jsonschema.SchemaError as error:
        raise ModelError(
            f"tool {tool.name!r} has an invalid schema at "
            f"{_path(error.absolute_path)}: {error.message}",
            field="parameters",
        ) from None
    validator = kind(schema)
    errors = sorted(
        validator.iter_errors(arguments),
        key=lambda error: [str(step) for step in error.absolute_path],
    )
    return tuple(f"{_path(error.absolute_path)}: {error.message}" for error in errors)


def problems(
    conversation: Iterable[Canister],
    *,
    tools: Iterable[Tool | ProviderTool] | None = None,
) -> tuple[Problem, ...]:
    """Return every rule the conversation breaks, in conversation order; with
    ``tools``, also every invocation of an unknown tool or with arguments its
    tool's schema refuses."""
    found: list[Problem] = []
    table = None if tools is None else _tool_table(tools)
    items = canisters_in(conversation, "problems")
    seen_ids: set[str] = set()
    invocations: dict[str, tuple[int, Any]] = {}
    for index, canister in enumerate(items):
        if canister.role is Role.Invocation:
            invocation_id = canister.invocation_id  # type: ignore[attr-defined]
            if invocation_id not in invocations:
                invocations[invocation_id] = (index, canister)
    answered: set[str] = set()
    seen_invocations: set[str] = set()

    for index, canister in enumerate(items):
        identifier = canister.id

        def report(code: str, message: str) -> None:
            found.append(Problem(index, identifier, code, message))  # noqa: B023

        if identifier in seen_ids:
            report(
                "duplicate-canister-id",
                f"canister id {_excerpt(identifier)} is used twice",
            )
        seen_ids.add(identifier)
        timestamp = canister.timestamp
        if not isinstance(timestamp, datetime) or timestamp.utcoffset() is None:
            report(
                "naive-timestamp", f"timestamp {_excerpt(timestamp)} has no timezone"
            )
        for position, part in enumerate(getattr(canister, "content", ())):
            if part.type in _MEDIA_TYPES:
                content_id = getattr(part, "content_id", None)
                if content_id is not None and not is_content_id(content_id):
                    report(
                        "bad-content-id",
                        f"content[{position}] has a malformed content id "
                        f"{_excerpt(content_id)}",
                    )
        role = canister.role
        if role is Role.User:
            if _empty(canister):
                report("empty-user-message", "user message has no content")
        elif role is Role.Invocation:
            invocation_id = canister.invocation_id  # type: ignore[attr-defined]
            name = canister.name  # type: ignore[attr-defined]
            if not name or not name.strip():
                report("invocation-without-name", "invocation has no name")
            if invocation_id in seen_invocations:
                report(
                    "duplicate-invocation-id",
                    f"invocation id {_excerpt(invocation_id)} is used twice",
                )
            seen_invocations.add(invocation_id)
            if table is not None and name:
                if name not in table:
                    report(
                        "unknown-tool",
                        f"invocation of {_excerpt(name)}, which no tool has",
                    )
                elif (tool := table[name]) is not None:
                    wrong = argument_problems(tool, canister.arguments)  # type: ignore[attr-defined]
                    if wrong:
                        report(
                            "invalid-arguments",
                            f"arguments of {_excerpt(name)} do not match its "
                            f"schema: {'; '.join(wrong)}",
                        )
        elif role is Role.Result:
            invocation_id = canister.invocation_id  # type: ignore[attr-defined]
            target = invocations.get(invocation_id)
            if target is None:
                report(
                    "orphan-result",
                    f"result answers invocation {_excerpt(invocation_id)}, "
                    "which is not in the conversation",
                )
                continue
            position, invocation = target
            if position > index:
                report(
                    "result-before-invocation",
                    f"result comes before its invocation {_excerpt(invocation_id)} "
                    f"(at {position})",
                )
            if canister.name != invocation.name:  # type: ignore[attr-defined]
                report(
                    "result-name-mismatch",
                    f"result names {_excerpt(canister.name)} but invocation "  # type: ignore[attr-defined]
                    f"{_excerpt(invocation_id)} is {_excerpt(invocation.name)}",
                )
            if invocation_id in answered:
                report(
                    "duplicate-result",
                    f"invocation {_excerpt(invocation_id)} already has a result",
                )
            answered.add(invocation_id)
    return tuple(found)


def validate(
    conversation: Iterable[Canister],
    *,
    tools: Iterable[Tool | ProviderTool] | None = None,
) -> None:
    """Raise :class:`~canisters.InvalidConversation` listing every problem found
    (with ``tools``: calls to unknown tools and arguments that do not match
    their schema too)."""
    found = problems(conversation, tools=tools)
    if found:
        raise InvalidConversation(found)


@attrs.frozen
class Removal:
    """One thing :func:`sanitize` removed."""

    index: int
    """Position of the canister in the submitted conversation."""
    canister_id: str
    """Id of the canister."""
    what: str
    """What was removed: ``"canister"``, ``"content[2]"``, ``"extras"``..."""
    reason: str
    """Why it was removed."""

    def __str__(self) -> str:
        return f"[{self.index}] {self.canister_id}: removed {self.what} ({self.reason})"


@attrs.frozen
class Sanitized:
    """What :func:`sanitize` returns: the safe conversation and what it removed."""

    conversation: Conversation
    """The conversation, safe to send on."""
    removed: tuple[Removal, ...]
    """Everything removed, in order."""


_SCHEME = re.compile(r"([A-Za-z][A-Za-z0-9+.\-]*):")


def sanitize(
    conversation: Iterable[Canister],
    *,
    drop_supervisors: bool = True,
    url_schemes: Iterable[str] = ("http", "https", "data"),
    drop_provider_artifacts: bool = True,
    drop_content_ids: bool = True,
) -> Sanitized:
    """Make history submitted by a client safe to send on, and say what was removed.

    By default: supervisor canisters are dropped (a client must not set the
    system prompt); media whose URL scheme is not in ``url_schemes`` are dropped;
    provider-bound artifacts -- signed or redacted reasoning, provider file
    references and ``extras`` -- are dropped, since a client could forge them;
    media referring to the content store by ``content_id`` are dropped, since a
    client could probe blobs that are not theirs. A canister whose content
    becomes empty by this is dropped too.
    """
    schemes = {scheme.lower() for scheme in url_schemes}
    kept: list[Canister] = []
    removed: list[Removal] = []
    for index, canister in enumerate(canisters_in(conversation, "sanitize")):

        def note(what: str, reason: str) -> None:
            removed.append(Removal(index, canister.id, what, reason))  # noqa: B023

        if drop_supervisors and canister.role is Role.Supervisor:
            note("canister", "supervisor canisters are not accepted from clients")
            continue
        changes: dict[str, Any] = {}
        content = getattr(canister, "content", None)
        if content is not None:
            parts: list[Content] = []
            for position, part in enumerate(content):
                reason = _unsafe_part(
                    part, schemes, drop_provider_artifacts, drop_content_ids
                )
                if reason is not None:
                    note(f"content[{position}]", reason)
                    continue
                if drop_provider_artifacts and getattr(part, "refs", None):
                    note(f"content[{position}].refs", "provider file references")
                    part = _evolve(part, refs={})
                if drop_provider_artifacts and part.extras:
                    note(f"content[{position}].extras", "provider-specific fields")
                    part = _evolve(part, extras={})
                parts.append(part)
            if len(parts) != len(content):
                if not parts and content and canister.role is not Role.Assistant:
                    note("canister", "nothing safe remained in its content")
                    continue
                changes["content"] = tuple(parts)
            elif any(a is not b for a, b in zip(parts, content, strict=True)):
                changes["content"] = tuple(parts)
        if drop_provider_artifacts and canister.extras:
            note("extras", "provider-specific fields")
            changes["extras"] = {}
        kept.append(_evolve(canister, **changes) if changes else canister)
    return Sanitized(Conversation(tuple(kept)), tuple(removed))


def _unsafe_part(
    part: Content, schemes: set[str], artifacts: bool, content_ids: bool
) -> str | None:
    kind = part.type
    if kind == "reasoning":
        if artifacts and (
            getattr(part, "signature", None) is not None
            or getattr(part, "redacted", None) is not None
        ):
            return "signed or redacted reasoning is bound to its provider"
        return None
    if kind not in _MEDIA_TYPES:
        return None
    url = getattr(part, "url", None)
    if url is not None:
        match = _SCHEME.match(url)
        scheme = match.group(1).lower() if match else ""
        if scheme not in schemes:
            return f"URL scheme {scheme or '(none)'!r} is not allowed"
    if content_ids and getattr(part, "content_id", None) is not None:
        return "content-store references are not accepted from clients"
    has_source = any(
        getattr(part, field, None) is not None
        for field in ("data", "url", "content_id")
    )
    if artifacts and not has_source:
        return "provider file references are bound to their provider"
    return None


def _evolve(value: Any, **changes: Any) -> Any:
    if not attrs.has(type(value)):
        raise ModelError(
            f"sanitize needs attrs classes to rebuild, got {type(value).__name__}"
        )
    return attrs.evolve(value, **changes)
