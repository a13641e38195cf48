"""A downstream application, checked by ``mypy --strict`` (never run by pytest).

It subclasses canisters, writes its own class satisfying a Protocol, and pins the
types of the public API with ``assert_type``.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime, timezone
from typing import Any

import attrs
from typing_extensions import assert_type

import canisters
from canisters import (
    Assistant,
    Conversation,
    ErrorInfo,
    Image,
    Invocation,
    MessageBuilder,
    Metadata,
    Pair,
    Result,
    ResultBuilder,
    Role,
    Sanitized,
    Text,
    Usage,
    User,
)
from canisters import serialization as ser
from canisters.protocols import (
    Canister,
    Content,
    ImageContent,
    InvocationCanister,
    ResultCanister,
    UserCanister,
)


@attrs.frozen
class TicketUser(User):
    """An application's user canister with its own field."""

    ticket: str = attrs.field(default="", kw_only=True)


@attrs.frozen
class SmsUser:
    """Not a subclass: satisfies UserCanister by its shape."""

    role = Role.User
    content: tuple[Content, ...] = ()
    id: str = attrs.field(factory=canisters.new_id)
    timestamp: datetime = attrs.field(factory=lambda: datetime.now(timezone.utc))
    parent_id: str | None = None
    trace_id: str | None = None
    policy: str | None = None
    step: int | None = None
    metadata: Metadata | None = None
    extras: Mapping[str, Any] = attrs.field(factory=dict)


def accepts_user(user: UserCanister) -> str:
    return user.id


ticket = TicketUser("hello", ticket="T-1", step=1)
sms = SmsUser(content=(Text("hi"),))
accepts_user(ticket)
accepts_user(sms)
assert_type(canisters.register_canister(TicketUser, "ticket-user"), type[TicketUser])

image: ImageContent = Image(url="https://example.com/cat.png")
call = Invocation("search", {"q": "cats"})
assert_type(call.arguments, Mapping[str, Any])
answer = ResultBuilder.respond_to(call).success({"hits": 2})
assert_type(answer, Result)
failed = ResultBuilder.respond_to(call).error("TIMEOUT", "slow", retryable=True)
assert_type(failed.error, ErrorInfo | None)

conversation = Conversation([sms, ticket, Assistant("hi"), call, answer])
assert_type(conversation[0], Canister)
assert_type(conversation[1:], Conversation)
assert_type(conversation.append(User("more")), Conversation)
assert_type(conversation.pending_invocations(), tuple[InvocationCanister, ...])
assert_type(conversation.pairs(), tuple[Pair, ...])
assert_type(conversation.results(), tuple[ResultCanister, ...])
assert_type(conversation.steps(), dict[int | None, Conversation])
assert_type(conversation.usage(), Usage)
assert_type(conversation.window(10, size=lambda c: 1.0), Conversation)
assert_type(conversation.fork(at=call.id), Conversation)

builder = MessageBuilder.next_step(conversation[-1], role=Role.Assistant)
assert_type(builder.add_text("x"), MessageBuilder)
assert_type(builder.add_invocation("f", {"a": 1}), Invocation)
assert_type(builder.build_all(), tuple[Canister, ...])

assert_type(canisters.to_json(conversation), str)
assert_type(canisters.from_jsonl(canisters.to_jsonl(conversation)), Conversation)
loaded = canisters.from_json(canisters.to_json(call))
if isinstance(loaded, Invocation):
    assert_type(loaded.name, str)
assert_type(canisters.sanitize(conversation), Sanitized)
canisters.validate(conversation)
assert_type(ser.unstructure_canister(call), dict[str, Any])
assert_type(canisters.child_of(call, answer), Result)

try:
    canisters.validate([])
except canisters.InvalidConversation as error:
    for problem in error.problems:
        assert_type(problem.index, int)
except canisters.CanistersError:
    pass
