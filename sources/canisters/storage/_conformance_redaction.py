"""The redaction and retention tests of the conformance suite (see :mod:`.testing`)."""

from __future__ import annotations

import json
from collections.abc import Callable
from datetime import datetime, timedelta, timezone

import pytest

from ..canisters import Assistant, Invocation, Result, User
from ..content import Text
from ..exceptions import (
    CanisterNotFound,
    ConversationNotFound,
    DuplicateCanister,
    StorageError,
)
from ..protocols import Canister
from . import Redaction, StoragePolicy, Store

__all__ = ["RedactionConformance"]

SECRET = "hunter2-the-password"


def _chat() -> list[Canister]:
    invocation = Invocation("login", {"password": SECRET}, step=1)
    return [
        User(f"my password is {SECRET}"),
        Assistant("Noted."),
        invocation,
        Result(invocation.invocation_id, "login", f"logged in with {SECRET}"),
        User(("x" * 2000 + " " + SECRET,)),  # stored by hash
    ]


def _old(days: float) -> datetime:
    return datetime.now(timezone.utc) - timedelta(days=days)


class RedactionConformance:
    """Redaction keeps the chain; retention expires conversations and forks."""

    def test_a_redacted_canister_keeps_its_place_and_the_chain(
        self, store: Store
    ) -> None:
        """The tombstone loads as a canister of the same kind and id saying it
        was redacted and why; verify lists the redaction, not a problem."""
        chat = _chat()
        store.extend("chat", chat)
        head = store.head("chat")
        note = store.redact("chat", chat[0].id, reason="user asked (GDPR art. 17)")
        assert isinstance(note, Redaction)
        assert (note.canister_id, note.kind, note.seq) == (chat[0].id, "user", 0)
        assert note.reason == "user asked (GDPR art. 17)"
        assert note.conversation_id == "chat"
        assert note.at.tzinfo is not None
        loaded = store.load("chat")
        assert [x.id for x in loaded] == [x.id for x in chat]
        assert list(loaded[1:]) == chat[1:]
        tombstone = loaded[0]
        assert isinstance(tombstone, User)
        assert tombstone.timestamp == chat[0].timestamp
        assert tombstone.content == (Text("[redacted: user asked (GDPR art. 17)]"),)
        assert tombstone.extras["redacted"]["reason"] == note.reason
        verification = store.verify("chat")
        assert verification.ok
        assert verification.redactions == (note,)
        assert store.head("chat") == head
        store.append("chat", Assistant("after"))
        assert store.verify("chat").ok
        assert len(store.load("chat")) == len(chat) + 1

    def test_every_kind_can_be_redacted(self, store: Store) -> None:
        """A tool call keeps its name and call id, a result its call id."""
        chat = _chat()
        store.extend("chat", chat)
        for canister in chat:
            store.redact("chat", canister.id, reason="retention")
        loaded = store.load("chat")
        invocation, result = loaded[2], loaded[3]
        assert isinstance(invocation, Invocation)
        assert isinstance(result, Result)
        assert (invocation.name, dict(invocation.arguments)) == ("login", {})
        call = chat[2]
        assert isinstance(call, Invocation)
        assert invocation.invocation_id == call.invocation_id
        assert result.invocation_id == invocation.invocation_id
        assert result.content == (Text("[redacted: retention]"),)
        assert SECRET not in repr(list(loaded))
        verification = store.verify("chat")
        assert verification.ok
        assert [r.seq for r in verification.redactions] == [0, 1, 2, 3, 4]

    def test_forks_see_a_redaction_of_what_they_share(self, store: Store) -> None:
        """Redacting through a fork erases the record its parent holds; both see
        it, and a fork made later too."""
        chat = _chat()
        store.extend("chat", chat)
        fork = store.fork("chat", at=chat[1].id)
        store.append(fork, User("in the fork"))
        note = store.redact(fork, chat[0].id, reason="secret pasted")
        assert note.conversation_id == "chat"
        for conversation in ("chat", fork, store.fork(fork, at=chat[0].id)):
            assert store.load(conversation)[0].extras["redacted"]["reason"] == (
                "secret pasted"
            )
            verification = store.verify(conversation)
            assert verification.ok
            assert [r.canister_id for r in verification.redactions] == [chat[0].id]

    def test_nothing_of_a_redaction_is_found_again(self, store: Store) -> None:
        """Search forgets it; garbage collection removes the blobs only it named;
        load, export and the audit trail hold no trace of the content."""
        chat = _chat()
        store.extend("chat", chat)
        assert len(store.search("hunter2", limit=10)) == 4
        blobs = store.stats().blobs
        for canister in chat:
            store.redact("chat", canister.id, reason="leak")
        assert store.search("hunter2", limit=10) == []
        assert store.search("redacted leak", limit=10) == []
        assert len(store.collect_garbage().removed) == 1
        assert store.stats().blobs == blobs - 1
        assert store.referenced_content() == set()
        audit = store.sidecar("chat", "audit").read_lines()
        entries = [json.loads(line) for line in audit]
        assert [e["decision"] for e in entries] == ["canister_redacted"] * len(chat)
        assert [e["canister_id"] for e in entries] == [x.id for x in chat]
        assert all(e["details"]["reason"] == "leak" for e in entries)
        assert SECRET not in "".join(audit)

    def test_redacting_again_changes_nothing_and_errors_say_why(
        self, store: Store
    ) -> None:
        """A second redaction returns the first; the canister appended again is
        refused; an unknown canister, a bad reason are errors."""
        chat = _chat()
        store.extend("chat", chat)
        first = store.redact("chat", chat[1].id, reason="one")
        assert store.redact("chat", chat[1].id, reason="two") == first
        assert len(store.sidecar("chat", "audit").read_lines()) == 1
        with pytest.raises(DuplicateCanister):
            store.append("chat", chat[1])
        with pytest.raises(CanisterNotFound):
            store.redact("chat", "no-such-canister", reason="x")
        with pytest.raises(ConversationNotFound):
            store.redact("missing", chat[0].id, reason="x")
        for reason in ("", "  ", "two\nlines", 42):
            with pytest.raises(StorageError, match="reason"):
                store.redact("chat", chat[0].id, reason=reason)  # type: ignore[arg-type]
        assert store.verify("chat").ok

    def test_expire_deletes_old_conversations_with_their_forks(
        self, store: Store
    ) -> None:
        """A conversation whose last canister is older than the limit goes, its
        forks first; one with a newer fork stays; a dry run changes nothing."""
        old = User("old", timestamp=_old(100))
        store.append("old", old)
        store.fork("old", at=old.id)  # an empty fork: as old as what it shares
        store.append("new", User("new"))
        kept = User("kept", timestamp=_old(100))
        store.append("kept", kept)
        young = store.fork("kept", at=kept.id)
        store.append(young, User("recent"))
        before = store.conversations()
        report = store.expire(timedelta(days=30), dry_run=True)
        assert report.dry_run
        forks = {fork.conversation_id for fork in store.forks("old")}
        assert set(report.expired) == {"old", *forks}
        assert report.expired[-1] == "old"  # forks first
        assert store.conversations() == before
        report = store.expire(_old(30))
        assert report.action == "delete"
        assert sorted(store.conversations()) == sorted(["new", "kept", young])
        assert report.kept == 3
        with pytest.raises(StorageError, match="retention_days"):
            store.expire()
        with pytest.raises(StorageError, match="timezone-aware"):
            store.expire(datetime(2020, 1, 1))
        with pytest.raises(StorageError, match="'delete' or 'redact'"):
            store.expire(timedelta(days=1), action="shred")  # type: ignore[arg-type]

    def test_expire_can_redact_and_keep_the_skeleton(
        self, opener: Callable[..., Store]
    ) -> None:
        """With the policy's retention, expired conversations are redacted."""
        policy = StoragePolicy(retention_days=30, retention_action="redact")
        with opener(policy=policy) as store:
            chat = [User(f"{SECRET} {n}", timestamp=_old(60)) for n in range(3)]
            store.extend("chat", chat)
            store.append("new", User(SECRET))
            report = store.expire(dry_run=True)
            assert (report.expired, report.redacted) == (("chat",), 3)
            assert store.search(SECRET.split("-")[0], limit=10) != []
            report = store.expire()
            assert (report.expired, report.action, report.redacted) == (
                ("chat",),
                "redact",
                3,
            )
            loaded = store.load("chat")
            assert [x.id for x in loaded] == [x.id for x in chat]
            assert all(x.extras["redacted"]["reason"] == "retention" for x in loaded)
            assert len(store.verify("chat").redactions) == 3
            assert store.expire().redacted == 0  # nothing left to redact
            assert [h.conversation_id for h in store.search("hunter2", limit=9)] == [
                "new"
            ]
