"""The redaction and retention tests of the conformance suite (see :mod:`.testing`)."""

from __future__ import annotations

import json
from collections.abc import Callable
from datetime import datetime, timedelta, timezone

import pytest

import canisters as c

from . import Redaction, StoragePolicy, Store

__all__ = ["RedactionConformance"]

SECRET = "hunter2-the-password"


def _chat() -> list[c.Canister]:
    invocation = c.Invocation("login", {"password": SECRET}, step=1)
    return [
        c.User(f"my password is {SECRET}"),
        c.Assistant("Noted."),
        invocation,
        c.Result(invocation.invocation_id, "login", f"logged in with {SECRET}"),
        c.User(("x" * 2000 + " " + SECRET,)),  # stored by hash
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
        assert isinstance(tombstone, c.User)
        assert tombstone.timestamp == chat[0].timestamp
        assert tombstone.content == (c.Text("[redacted: user asked (GDPR art. 17)]"),)
        assert tombstone.extras["redacted"]["reason"] == note.reason
        verification = store.verify("chat")
        assert verification.ok
        assert verification.redactions == (note,)
        assert store.head("chat") == head
        store.append("chat", c.Assistant("after"))
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
        assert isinstance(invocation, c.Invocation)
        assert isinstance(result, c.Result)
        assert (invocation.name, dict(invocation.arguments)) == ("login", {})
        assert invocation.invocation_id == chat[2].invocation_id
        assert result.invocation_id == invocation.invocation_id
        assert result.content == (c.Text("[redacted: retention]"),)
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
        store.append(fork, c.User("in the fork"))
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
        with pytest.raises(c.DuplicateCanister):
            store.append("chat", chat[1])
        with pytest.raises(c.CanisterNotFound):
            store.redact("chat", "no-such-canister", reason="x")
        with pytest.raises(c.ConversationNotFound):
            store.redact("missing", chat[0].id, reason="x")
        for reason in ("", "  ", "two\nlines", 42):
            with pytest.raises(c.StorageError, match="reason"):
                store.redact("chat", chat[0].id, reason=reason)  # type: ignore[arg-type]
        assert store.verify("chat").ok

    def test_expire_deletes_old_conversations_with_their_forks(
        self, store: Store
    ) -> None:
        """A conversation whose last canister is older than the limit goes, its
        forks first; one with a newer fork stays; a dry run changes nothing."""
        old = c.User("old", timestamp=_old(100))
        store.append("old", old)
        store.fork("old", at=old.id)  # an empty fork: as old as what it shares
        store.append("new", c.User("new"))
        kept = c.User("kept", timestamp=_old(100))
        store.append("kept", kept)
        young = store.fork("kept", at=kept.id)
        store.append(young, c.User("recent"))
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
        with pytest.raises(c.StorageError, match="retention_days"):
            store.expire()
        with pytest.raises(c.StorageError, match="timezone-aware"):
            store.expire(datetime(2020, 1, 1))
        with pytest.raises(c.StorageError, match="'delete' or 'redact'"):
            store.expire(timedelta(days=1), action="shred")  # type: ignore[arg-type]

    def test_expire_can_redact_and_keep_the_skeleton(
        self, opener: Callable[..., Store]
    ) -> None:
        """With the policy's retention, expired conversations are redacted."""
        policy = StoragePolicy(retention_days=30, retention_action="redact")
        with opener(policy=policy) as store:
            chat = [c.User(f"{SECRET} {n}", timestamp=_old(60)) for n in range(3)]
            store.extend("chat", chat)
            store.append("new", c.User(SECRET))
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
