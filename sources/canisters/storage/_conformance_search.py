"""The search tests of the storage conformance suite (see :mod:`.testing`)."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from ..canisters import (
    Assistant,
    Document,
    ErrorInfo,
    Invocation,
    Result,
    Supervisor,
    User,
)
from ..exceptions import ConversationNotFound
from ..protocols import Canister
from ..provided import Citation, CitedText, UrlSource
from . import InvalidQuery, Store

__all__ = ["SearchConformance"]


def _chat() -> list[Canister]:
    invocation = Invocation("forecast", {"city": "Reykjavík", "days": 3})
    return [
        Supervisor("You answer questions about the WEATHER."),
        User("What will the weather be like in Reykjavík tomorrow?"),
        invocation,
        Result(invocation.invocation_id, "forecast", "Sleet and strong wind"),
        Result(
            invocation.invocation_id,
            "forecast",
            error=ErrorInfo("unavailable", "the barometer service timed out"),
        ),
        Assistant(
            "word " * 300 + "Expect a glacial breeze " + "word " * 300,
        ),
        Document(("Tides and currents of the North Atlantic",), "Almanac"),
        Assistant(
            (
                CitedText(
                    "Mount Columbia " + "rises " * 300,
                    citations=[Citation(UrlSource("https://e.com"), None, 0, 14)],
                ),
            )
        ),
    ]


class SearchConformance:
    """Search: every backend finds the same canisters for the same query."""

    def test_search_finds_the_text_of_every_kind(self, store: Store) -> None:
        """User and assistant text (also when stored by hash, also cited), tool
        calls, results, errors and documents are found, whole words, case
        aside."""
        chat = _chat()
        store.extend("chat", chat)
        store.append("other", User("nothing to see here"))
        expected = {
            "weather": [chat[0].id, chat[1].id],
            "reykjavík": [chat[1].id, chat[2].id],
            "FORECAST": [chat[2].id, chat[3].id, chat[4].id],
            "sleet": [chat[3].id],
            "barometer": [chat[4].id],
            "glacial": [chat[5].id],
            "almanac": [chat[6].id],
            "atlantic": [chat[6].id],
            "columbia": [chat[7].id],  # a cited answer, stored by hash
        }
        for query, ids in expected.items():
            hits = store.search(query, limit=10)
            assert [hit.canister_id for hit in hits] == ids, query
            assert {hit.conversation_id for hit in hits} == {"chat"}
        kinds = [hit.kind for hit in store.search("forecast", limit=10)]
        assert kinds == ["invocation", "result", "result"]
        assert store.search("weathe", limit=10) == []
        assert store.search("nothing", limit=10)[0].conversation_id == "other"

    def test_search_needs_every_word_and_reads_prefixes(self, store: Store) -> None:
        """Every word of a query must be in the text; ``word*`` matches the words
        it begins."""
        first, second = User("red apples and green pears"), User("red cherries")
        store.extend("fruit", [first, second])
        assert [h.canister_id for h in store.search("red", limit=5)] == [
            first.id,
            second.id,
        ]
        assert [h.canister_id for h in store.search("red pears", limit=5)] == [first.id]
        assert store.search("red plums", limit=5) == []
        assert [h.canister_id for h in store.search("cherr*", limit=5)] == [second.id]
        assert [h.canister_id for h in store.search("pear", limit=5)] == []
        assert [h.canister_id for h in store.search("pear*", limit=5)] == [first.id]

    def test_search_marks_the_match_in_a_snippet(self, store: Store) -> None:
        """A hit's snippet is the text around the match, the match marked."""
        chat = _chat()
        store.extend("chat", chat)
        (hit,) = store.search("glacial", limit=5)
        assert "[glacial]" in hit.marked()
        assert hit.marked("<mark>", "</mark>").count("<mark>glacial</mark>") == 1
        assert len(hit.snippet) < 250
        assert hit.snippet.startswith("…")
        assert hit.snippet.endswith("…")
        for start, end in hit.marks:
            assert hit.snippet[start:end].lower() == "glacial"

    def test_search_limit_order_and_filters(self, store: Store) -> None:
        """Hits come by conversation id, then by place; ``limit``, ``kinds`` and
        ``conversation`` narrow them."""
        for name in ("b-chat", "a-chat", "c-chat"):
            store.extend(name, [User(f"kiwi one {name}"), Assistant("kiwi two")])
        hits = store.search("kiwi", limit=100)
        assert [(h.conversation_id, h.kind) for h in hits] == [
            (name, kind)
            for name in ("a-chat", "b-chat", "c-chat")
            for kind in ("user", "assistant")
        ]
        assert store.search("kiwi", limit=3) == hits[:3]
        assert [
            h.conversation_id for h in store.search("kiwi", limit=9, kinds=["user"])
        ] == [
            "a-chat",
            "b-chat",
            "c-chat",
        ]
        found = store.search("kiwi", limit=9, conversation="b-chat")
        assert found == [h for h in hits if h.conversation_id == "b-chat"]
        assert (
            store.search("kiwi", limit=9, conversation="b-chat", kinds=["result"]) == []
        )

    def test_a_fork_is_searched_with_the_prefix_it_shares(self, store: Store) -> None:
        """A search limited to a fork sees what it shares with its parent, not
        what its parent gained after the fork point."""
        first, second, third = (
            User("lemon one"),
            User("lemon two"),
            User("lemon three"),
        )
        store.extend("root", [first, second, third])
        fork = store.fork("root", at=second.id)
        own = Assistant("lemon four")
        store.append(fork, own)
        found = store.search("lemon", limit=10, conversation=fork)
        assert [h.canister_id for h in found] == [first.id, second.id, own.id]
        assert {h.conversation_id for h in found} == {fork}
        everywhere = store.search("lemon", limit=10)
        assert sorted(h.canister_id for h in everywhere) == sorted(
            x.id for x in (first, second, third, own)
        )
        deeper = store.fork(fork, at=first.id)
        assert [
            h.canister_id for h in store.search("lemon", limit=10, conversation=deeper)
        ] == [first.id]

    def test_search_forgets_what_is_deleted_and_retries_add_nothing(
        self, store: Store
    ) -> None:
        """A deleted conversation is no longer found; an append retried is found
        once."""
        canister = User("plum pudding")
        store.append("chat", canister)
        store.append("chat", canister)
        store.extend("chat", [canister])
        assert len(store.search("plum", limit=10)) == 1
        store.delete("chat")
        assert store.search("plum", limit=10) == []

    def test_search_index_is_rebuilt(self, opener: Callable[..., Store]) -> None:
        """Rebuilding the index finds what was found before, through any handle."""
        chat = _chat()
        with opener() as store:
            store.extend("chat", chat)
            before = store.search("forecast", limit=10)
            assert store.rebuild_search_index() in (0, len(chat))
            assert store.search("forecast", limit=10) == before
        with opener() as again:
            assert again.search("forecast", limit=10) == before

    def test_bad_searches_say_what_is_wrong(self, store: Store) -> None:
        """A query without a word, a bad limit or kind, or an unknown conversation."""
        store.append("chat", User("anything"))
        for query in ("", "  ", "*", "!?"):
            with pytest.raises(InvalidQuery, match="no word"):
                store.search(query, limit=5)
        with pytest.raises(InvalidQuery, match="limit"):
            store.search("anything", limit=0)
        with pytest.raises(InvalidQuery, match="kind 'robot'"):
            store.search("anything", limit=5, kinds=["robot"])
        with pytest.raises(ConversationNotFound):
            store.search("anything", limit=5, conversation="missing")
        assert isinstance(InvalidQuery("x"), ValueError)
