"""The storage conformance suite: the tests every backend must pass.

The library runs it against each of its own backends (files, SQLite and
PostgreSQL, each with its blobs local and in S3); a plugin backend runs it too,
from its own test suite (pytest installed), by subclassing
:class:`StoreConformance` and saying how to open its store::

    import pytest
    from canisters.storage.testing import StoreConformance

    class TestMyBackend(StoreConformance):
        @pytest.fixture
        def opener(self, tmp_path):
            # Each call opens the same, initially empty, store; options are
            # open_store's (policy=, durability=).
            return lambda **options: MyStore(tmp_path / "store", **options)

Every test uses the public :class:`~canisters.storage.Store` API only. Checks
that need to reach under a backend (editing its records or blobs behind its
back, to prove tampering is found) stay in each backend's own tests.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Iterator
from typing import Any

import pytest

from ..canisters import (
    Assistant,
    Document,
    Invocation,
    Metadata,
    Result,
    Supervisor,
    Usage,
    User,
)
from ..content import Audio, File, Image, Reasoning, Text, Video
from ..conversation import Conversation
from ..exceptions import (
    CanisterNotFound,
    ContentNotFound,
    ConversationNotFound,
    DuplicateCanister,
    ModelError,
    StorageError,
)
from ..protocols import Canister
from ..provided import Citation, CitedText, ProviderToolResult, SearchHit, UrlSource
from . import Fork, InvalidIdentifier, StoragePolicy, Store, verify
from ._conformance_redaction import RedactionConformance
from ._conformance_search import SearchConformance

__all__ = ["StoreConformance"]

PNG = b"\x89PNG\r\n\x1a\n" + bytes(range(256)) * 4
PROMPT = "You are a careful assistant."


def _sample() -> list[Canister]:
    invocation = Invocation("lookup", {"q": "weather", "n": [1, 2.5, None]}, step=1)
    return [
        Supervisor(PROMPT),
        User(
            (
                Text("What is in this picture?"),
                Image(data=PNG, mime_type="image/png", hint="a test pattern"),
                Audio(url="https://example.com/a.wav"),
                File(content_id="sha256:" + "ab" * 32, filename="a.pdf"),
            )
        ),
        Assistant(
            (
                Reasoning("thinking", "sig==", None, "anthropic"),
                Text("x" * 5000, "text/markdown"),
            ),
            metadata=Metadata(model="m", usage=Usage(10, 20), latency_ms=1.5),
        ),
        invocation,
        Result(invocation.invocation_id, "lookup", "sunny", step=1),
        Document(("reference material " * 100,), "Title", "doc-1"),
    ]


def _blobs(store: Store) -> int:
    return store.stats().blobs


_PAGE = "lorem ipsum " * 100
_CITATION = Citation(UrlSource("https://e.com", "E"), None, 0, 5)


def _ran(**found: Any) -> ProviderToolResult:
    """A web fetch the provider ran, with what it ``found``."""
    return ProviderToolResult("web_fetch", "srvtoolu_1", "anthropic", **found)


BAD_IDS = [
    "../escape",
    "..",
    ".",
    ".hidden",
    "/etc/passwd",
    "a/b",
    "a\\b",
    "nul\x00byte",
    "x" * 129,
    "",
    "spaces are not ok",
    "C:evil",
    "-dash",
]


class StoreConformance(SearchConformance, RedactionConformance):
    """Tests every :class:`~canisters.storage.Store` passes; subclass it in a test
    module and define the ``opener`` fixture (see the module's documentation)."""

    @pytest.fixture
    def store(self, opener: Callable[..., Store]) -> Iterator[Store]:
        """The store under test, opened by ``opener`` and closed afterwards."""
        with opener() as opened:
            yield opened

    def test_load_returns_equal_canisters(self, store: Store) -> None:
        """Load returns equal canisters."""
        sample = _sample()
        store.append("chat", sample[0])
        store.extend("chat", sample[1:])
        loaded = store.load("chat")
        assert isinstance(loaded, Conversation)
        assert loaded == sample
        assert [type(x) for x in loaded] == [type(x) for x in sample]

    def test_media_sources_come_back_as_given(self, store: Store) -> None:
        """Media sources come back as given."""
        parts = (
            Image(data=PNG),
            Image(url="https://example.com/x.png"),
            Image(content_id=store.content.put(PNG)),
            Video(refs={"gemini": "files/abc"}),
        )
        store.append("media", User(parts))
        loaded = store.load("media")[0]
        assert loaded.content == parts  # type: ignore[attr-defined]
        assert loaded.content[0].data == PNG  # type: ignore[attr-defined]
        assert loaded.content[0].content_id is None  # type: ignore[attr-defined]

    def test_reopened_store_sees_everything(self, opener: Callable[..., Store]) -> None:
        """Reopened store sees everything."""
        sample = _sample()
        with opener() as first:
            first.extend("chat", sample[:3])
        with opener() as second:
            second.extend("chat", sample[3:])
            assert second.load("chat") == sample

    def test_two_handles_append_alternately(self, opener: Callable[..., Store]) -> None:
        """Two handles append alternately."""
        with opener() as one, opener() as two:
            expected = []
            for index in range(10):
                canister = User(f"message {index}")
                (one if index % 2 else two).append("chat", canister)
                expected.append(canister)
            assert one.load("chat") == expected
            assert two.verify("chat").ok

    def test_extend_with_nothing_creates_an_empty_conversation(
        self, store: Store
    ) -> None:
        """Extend with nothing creates an empty conversation."""
        store.extend("empty", [])
        assert store.exists("empty")
        assert store.load("empty") == []
        assert store.head("empty") == (0, "")

    def test_conversations_exists_and_delete(self, store: Store) -> None:
        """Conversations exists and delete."""
        assert store.conversations() == []
        store.append("b", User("hi"))
        store.append("a", User("hi"))
        assert store.conversations() == ["a", "b"]
        assert store.exists("a")
        assert not store.exists("c")
        store.delete("a")
        assert not store.exists("a")
        assert store.conversations() == ["b"]
        with pytest.raises(ConversationNotFound):
            store.load("a")
        with pytest.raises(ConversationNotFound):
            store.delete("a")
        store.append("a", User("again"))
        assert len(store.load("a")) == 1

    def test_unknown_conversation(self, store: Store) -> None:
        """Unknown conversation."""
        with pytest.raises(ConversationNotFound) as raised:
            store.load("nope")
        assert isinstance(raised.value, StorageError)
        assert isinstance(raised.value, LookupError)
        with pytest.raises(ConversationNotFound):
            store.verify("nope")
        with pytest.raises(ConversationNotFound):
            store.fork("nope", "x")

    @pytest.mark.parametrize(
        ("canister", "blobs"),
        [
            (User("short"), 0),
            (User("x" * 1023), 0),
            (User("x" * 1024), 1),
            (User("é" * 512), 1),  # 1024 UTF-8 bytes
            (User("é" * 511), 0),
            (Supervisor("Be brief."), 1),
            (User((Image(data=b"1"),)), 1),
            (User((Image(url="https://example.com/x.png"),)), 0),
            (Assistant((Reasoning("r" * 4000),)), 0),
            (Invocation("f", {"text": "x" * 4000}), 0),
            (Assistant((CitedText("x" * 1024, citations=[_CITATION]),)), 1),
            (Assistant((_ran(stdout="x" * 1023),)), 0),
            (Assistant((_ran(stdout="x" * 1024),)), 1),
            (Assistant((_ran(opaque={"document": "x" * 1024}),)), 1),
            (Assistant((_ran(hits=[SearchHit(url="https://e.com", text=_PAGE)]),)), 1),
            (Assistant((_ran(output={"page": _PAGE}, stderr=_PAGE),)), 2),
        ],
    )
    def test_hybrid_policy(self, store: Store, canister: Canister, blobs: int) -> None:
        """Hybrid policy."""
        store.append("chat", canister)
        assert _blobs(store) == blobs
        assert store.load("chat") == [canister]

    def test_policy_is_configurable(self, opener: Callable[..., Store]) -> None:
        """Policy is configurable."""
        policy = StoragePolicy(
            inline_text_limit=10, supervisor_by_hash=False, media_by_hash=False
        )
        with opener(policy=policy) as store:
            assert store.policy == policy
            store.append("chat", Supervisor("Be brief."))
            store.append("chat", User((Image(data=PNG),)))
            assert _blobs(store) == 0
            store.append("chat", User("more than ten bytes"))
            assert _blobs(store) == 1
            assert len(store.load("chat")) == 3

    def test_a_large_tool_output_is_stored_once(self, store: Store) -> None:
        """What a provider's tool found (a fetched page, code's output, the
        provider's item), when large, is stored once for every conversation
        that holds it, and loads as it was."""
        found = _ran(
            stdout=_PAGE,
            hits=[SearchHit(url="https://e.com", title="E", text=_PAGE)],
            opaque={"type": "web_fetch_tool_result", "content": {"text": _PAGE}},
        )
        for name in ("one", "two", "three"):
            store.append(name, Assistant((found, Text(f"read by {name}"))))
        stats = store.stats()
        assert stats.blobs == 3  # the page text, the hits, the item
        assert stats.references == 9
        loaded = store.load("two")[0].content[0]  # type: ignore[attr-defined]
        assert loaded == found
        assert loaded.opaque["content"]["text"] == _PAGE

    def test_shared_prompt_and_image_are_stored_once(self, store: Store) -> None:
        """Shared prompt and image are stored once."""
        for name in ("one", "two", "three"):
            store.extend(
                name,
                [
                    Supervisor(PROMPT),
                    User((Text(f"hello from {name}"), Image(data=PNG))),
                ],
            )
        stats = store.stats()
        assert stats.conversations == 3
        assert stats.records == 6
        assert stats.blobs == 2
        assert stats.blob_bytes == len(PROMPT.encode()) + len(PNG)
        assert store.load("two")[1].content[1].data == PNG  # type: ignore[attr-defined]

    def test_hydration_cache_disabled_still_works(
        self, opener: Callable[..., Store]
    ) -> None:
        """Hydration cache disabled still works."""
        with opener(policy=StoragePolicy(cache_bytes=0)) as store:
            store.extend("chat", _sample())
            assert store.load("chat") == _sample()[:0] + list(store.load("chat"))
            assert store.load("chat")[0].content[0].text == PROMPT  # type: ignore[attr-defined]

    @pytest.mark.parametrize("cache_bytes", [0, 64 * 2**20])
    def test_a_blob_named_twice_loads_as_one_object(
        self, opener: Callable[..., Store], cache_bytes: int
    ) -> None:
        """A load hydrates each blob once: every part naming it shares the value."""
        long_text = "a long answer " * 200
        policy = StoragePolicy(cache_bytes=cache_bytes)
        with opener(policy=policy) as store:
            for turn in range(3):
                store.extend(
                    "chat",
                    [
                        User((Text(f"look {turn}"), Image(data=PNG))),
                        Assistant(long_text),
                    ],
                )
            loaded = store.load("chat")
        images = [canister.content[1] for canister in loaded[::2]]  # type: ignore[attr-defined]
        texts = [canister.content[0] for canister in loaded[1::2]]  # type: ignore[attr-defined]
        assert [image.data for image in images] == [PNG] * 3
        assert all(image.data is images[0].data for image in images)
        assert [text.text for text in texts] == [long_text] * 3
        assert all(text.text is texts[0].text for text in texts)

    def test_content_store(self, store: Store) -> None:
        """Content store."""
        content_id = store.content.put(b"hello")
        assert content_id == "sha256:" + hashlib.sha256(b"hello").hexdigest()
        assert store.content.put(b"hello") == content_id
        assert store.content.has(content_id)
        assert store.content.get(content_id) == b"hello"
        assert list(store.content.ids()) == [content_id]
        missing = "sha256:" + "0" * 64
        assert not store.content.has(missing)
        with pytest.raises(ContentNotFound):
            store.content.get(missing)
        with pytest.raises(ModelError, match="bytes"):
            store.content.put("text")  # type: ignore[arg-type]

    def test_fork_shares_the_prefix(self, store: Store) -> None:
        """Fork shares the prefix."""
        sample = _sample()
        store.extend("main", sample)
        fork = store.fork("main", at=sample[2].id)
        assert fork != "main"
        assert store.exists(fork)
        assert store.load(fork) == sample[:3]
        records_before = store.stats().records
        added = User("a different question")
        store.append(fork, added)
        assert store.stats().records == records_before + 1
        assert store.load(fork) == [*sample[:3], added]
        store.append("main", User("main goes on"))
        assert store.load(fork) == [*sample[:3], added]
        assert len(store.load("main")) == len(sample) + 1
        report = store.verify(fork)
        assert report.ok
        assert report.records == 4
        assert store.head(fork) == (report.records, report.head)
        assert sorted(store.conversations()) == sorted(["main", fork])

    def test_fork_of_a_fork_and_deletion_order(self, store: Store) -> None:
        """Fork of a fork and deletion order."""
        first, second, third = User("1"), Assistant("2"), User("3")
        store.extend("root", [first, second])
        child = store.fork("root", at=second.id)
        store.append(child, third)
        grandchild = store.fork(child, at=third.id)
        fourth = Assistant("4")
        store.append(grandchild, fourth)
        assert store.load(grandchild) == [first, second, third, fourth]
        assert store.verify(grandchild).ok
        early = store.fork("root", at=first.id)
        assert store.load(early) == [first]
        with pytest.raises(StorageError, match="has forks"):
            store.delete("root")
        with pytest.raises(StorageError, match="has forks"):
            store.delete(child)
        store.delete(grandchild)
        store.delete(child)
        store.delete(early)
        store.delete("root")
        assert store.conversations() == []

    def test_a_fork_of_a_fork_inside_what_it_inherited(self, store: Store) -> None:
        """A fork of a fork made at a canister its parent inherited loads,
        verifies, takes appends (retried ones recorded once) and forks again."""
        messages = [User(f"message {n}") for n in range(6)]
        store.extend("root", messages)
        first = store.fork("root", at=messages[3].id)
        extra = User("x")
        store.extend(first, [extra])
        second = store.fork(first, at=messages[1].id)
        assert store.load(second) == messages[:2]
        report = store.verify(second)
        assert report.ok, report.problems
        assert store.head(second) == (2, report.head)
        store.extend(second, [messages[0], messages[1]])
        assert store.head(second) == (2, report.head)
        with pytest.raises(DuplicateCanister):
            store.append(second, User("changed", id=messages[1].id))
        added = Assistant("y")
        # The canisters past the fork point are new to the fork, wherever else
        # they are.
        store.extend(second, [messages[1], added, added, messages[3]])
        assert store.load(second) == [*messages[:2], added, messages[3]]
        third = store.fork(second, at=messages[0].id)
        assert store.load(third) == messages[:1]
        store.extend(third, [messages[0], messages[2], extra])
        assert store.load(third) == [messages[0], messages[2], extra]
        assert store.verify(third).ok
        assert store.load(first) == [*messages[:4], extra]
        assert store.verify(first).ok

    def test_a_digest_named_as_text_and_as_media_loads(
        self, opener: Callable[..., Store]
    ) -> None:
        """A blob named as a prompt's text and, after many other blobs, as a
        file's bytes loads through both names, on this handle and a fresh one."""
        images = [Image(data=b"image %d" % n) for n in range(63)]
        conversation = [
            Supervisor("hello"),
            *(User((image,)) for image in images),
            User((File(data=b"hello", filename="hello.txt"),)),
        ]
        with opener() as store:
            store.extend("chat", conversation)
            assert store.load("chat") == conversation
        with opener() as store:
            assert store.load("chat") == conversation
            assert store.verify("chat").ok

    def test_forks_and_origin(self, opener: Callable[..., Store]) -> None:
        """A conversation lists its own forks (not theirs), sorted by id, each
        with its parent, the canister it was forked at and the records it
        shares; a fork tells its origin, other conversations ``None``."""
        messages = [User(f"message {n}") for n in range(4)]
        with opener() as store:
            store.extend("root", messages)
            store.extend("other", messages[:1])
            late = store.fork("root", at=messages[2].id)
            early = store.fork("root", at=messages[0].id)
            store.append(late, Assistant("late"))
            inner = store.fork(late, at=messages[1].id)
            assert store.origin("root") is None
            assert store.origin(late) == Fork(late, "root", messages[2].id, 3)
            assert store.origin(inner) == Fork(inner, late, messages[1].id, 2)
            assert store.forks("root") == sorted(
                [
                    Fork(late, "root", messages[2].id, 3),
                    Fork(early, "root", messages[0].id, 1),
                ],
                key=lambda fork: fork.conversation_id,
            )
            assert store.forks(late) == [store.origin(inner)]
            assert store.forks(inner) == []
            assert store.forks("other") == []
            with pytest.raises(ConversationNotFound):
                store.forks("nope")
            with pytest.raises(ConversationNotFound):
                store.origin("nope")
            with pytest.raises(InvalidIdentifier):
                store.forks("../x")
            store.delete(inner)
            assert store.forks(late) == []
        with opener() as reopened:
            assert [fork.conversation_id for fork in reopened.forks("root")] == sorted(
                [late, early]
            )
            assert reopened.origin(early) == Fork(early, "root", messages[0].id, 1)

    def test_fork_at_an_unknown_canister(self, store: Store) -> None:
        """Fork at an unknown canister."""
        store.append("root", User("hi"))
        with pytest.raises(CanisterNotFound):
            store.fork("root", at="no-such-canister")

    def test_intact_chain_verifies(self, store: Store) -> None:
        """Intact chain verifies."""
        store.extend("chat", [User(f"message {n}") for n in range(5)])
        report = verify(store, "chat")
        assert report.ok
        assert report.records == 5
        assert report.problems == ()
        assert store.head("chat") == (5, report.head)

    @pytest.mark.parametrize("bad", BAD_IDS)
    def test_unsafe_conversation_ids_are_refused(self, store: Store, bad: str) -> None:
        """Unsafe conversation ids are refused."""
        with pytest.raises(InvalidIdentifier) as raised:
            store.append(bad, User("hi"))
        assert isinstance(raised.value, StorageError)
        assert isinstance(raised.value, ValueError)
        assert repr(bad) in str(raised.value)
        for call in (store.load, store.exists, store.delete, store.verify):
            with pytest.raises(InvalidIdentifier):
                call(bad)
        with pytest.raises(InvalidIdentifier):
            store.sidecar(bad, "audit")
        with pytest.raises(InvalidIdentifier):
            store.sidecar("ok", bad)
        assert store.conversations() == []

    def test_the_error_says_why(self, store: Store) -> None:
        """The error says why."""
        with pytest.raises(InvalidIdentifier, match="NUL"):
            store.load("a\x00")
        with pytest.raises(InvalidIdentifier, match="absolute"):
            store.load("/abs")
        with pytest.raises(InvalidIdentifier, match=r"'\.\.'"):
            store.load("../x")
        with pytest.raises(InvalidIdentifier, match="longer than 128"):
            store.load("x" * 200)
        with pytest.raises(InvalidIdentifier, match="str"):
            store.load(5)  # type: ignore[arg-type]

    def test_longest_id_is_accepted(self, store: Store) -> None:
        """Longest id is accepted."""
        name = "a" * 128
        store.append(name, User("hi"))
        assert store.conversations() == [name]

    @pytest.mark.parametrize(
        "bad",
        ["sha256:../../etc", "sha256:" + "A" * 64, "md5:abc", "sha256:" + "0" * 63],
    )
    def test_unsafe_content_ids_are_refused(self, store: Store, bad: str) -> None:
        """Unsafe content ids are refused."""
        with pytest.raises(InvalidIdentifier):
            store.content.get(bad)
        with pytest.raises(InvalidIdentifier):
            store.content.has(bad)

    def test_sidecar(self, store: Store) -> None:
        """Sidecar."""
        audit = store.sidecar("chat", "audit")
        assert audit.conversation_id == "chat"
        assert audit.name == "audit"
        assert audit.read_lines() == []
        audit.append_line('{"decision": "allow"}')
        audit.append_line("second ✓")
        assert store.sidecar("chat", "audit").read_lines() == [
            '{"decision": "allow"}',
            "second ✓",
        ]
        assert store.sidecar("chat", "other").read_lines() == []
        with pytest.raises(ValueError, match="line break"):
            audit.append_line("two\nlines")
        with pytest.raises(ModelError, match="lone surrogate"):
            audit.append_line("half of a pair: \ud83d")
        with pytest.raises(ModelError, match="NUL"):
            audit.append_line("a\x00b")
        assert audit.read_lines() == ['{"decision": "allow"}', "second ✓"]
        store.append("chat", User("hi"))
        store.delete("chat")
        assert store.sidecar("chat", "audit").read_lines() == []

    def test_garbage_collection(self, store: Store) -> None:
        """Garbage collection."""
        store.append("keep", User((Image(data=PNG),)))
        store.append("drop", User((Image(data=b"other image"),)))
        loose = store.content.put(b"put but never referenced")
        store.sidecar("keep", "audit").append_line("sha256:" + "cd" * 32)
        referenced = store.content.put(b"named in a side file")
        store.sidecar("keep", "notes").append_line(f"see {referenced}")
        store.delete("drop")
        assert store.collect_garbage(older_than=3600).removed == ()
        preview = store.collect_garbage(dry_run=True)
        dropped = "sha256:" + hashlib.sha256(b"other image").hexdigest()
        assert set(preview.removed) == {loose, dropped}
        assert store.content.has(loose)
        report = store.collect_garbage()
        assert report.removed == preview.removed
        assert report.freed_bytes == len(b"put but never referenced") + len(
            b"other image"
        )
        assert report.kept == 2
        assert not store.content.has(loose)
        assert store.content.has(referenced)
        assert store.load("keep")[0].content[0].data == PNG  # type: ignore[attr-defined]
        assert store.referenced_content() >= {referenced}

    def test_stats(self, store: Store) -> None:
        """Stats."""
        store.extend("a", _sample())
        stats = store.stats()
        assert stats.conversations == 1
        assert stats.records == len(_sample())
        assert stats.log_bytes > 0
        assert stats.blobs == 4  # prompt, image, long markdown, long document

    def test_integers_beyond_64_bits_stay_exact(self, store: Store) -> None:
        """Integers beyond 64 bits stay exact."""
        canister = Invocation("f", {"big": 2**80, "small": -(2**70), "list": [2**64]})
        store.append("big", canister)
        store.append("big", User("after"))
        assert store.load("big")[0] == canister
        assert store.verify("big").ok

    def test_sidecar_names(self, store: Store) -> None:
        """Sidecar names."""
        assert store.sidecar_names("chat") == []
        store.sidecar("chat", "zeta").append_line("z")
        store.sidecar("chat", "Alpha").append_line("a")
        store.sidecar("other", "x").append_line("x")
        assert store.sidecar_names("chat") == ["Alpha", "zeta"]
        with pytest.raises(InvalidIdentifier):
            store.sidecar_names("../x")

    def test_appending_a_held_canister_again_records_nothing(
        self, opener: Callable[..., Store]
    ) -> None:
        """An append retried (the same canister again) records nothing, however
        it comes back: alone, in an extend among new ones, twice in one extend,
        or through another handle."""
        first, second, third = User("one"), Assistant("two"), User("three")
        with opener() as store:
            store.append("chat", first)
            head = store.head("chat")
            store.append("chat", first)
            assert store.head("chat") == head
            store.extend("chat", [first, second, second, third])
            store.extend("chat", [third, first])
            assert store.load("chat") == [first, second, third]
        with opener() as other:
            other.append("chat", second)
            assert other.load("chat") == [first, second, third]
            assert other.verify("chat").ok
            assert other.head("chat")[0] == 3
            other.delete("chat")
            other.append("chat", second)
            assert other.load("chat") == [second]

    def test_a_different_canister_with_a_taken_id_is_refused(
        self, store: Store
    ) -> None:
        """A different canister under an id the conversation holds is refused,
        and nothing of its append is written."""
        first = User("one")
        store.append("chat", first)
        head = store.head("chat")
        impostor = User("not the same", id=first.id)
        with pytest.raises(DuplicateCanister) as raised:
            store.append("chat", impostor)
        assert isinstance(raised.value, StorageError)
        assert raised.value.canister_id == first.id
        with pytest.raises(DuplicateCanister):
            store.extend("chat", [Assistant("new"), impostor])
        twin = User("new")
        with pytest.raises(DuplicateCanister, match="same append"):
            store.extend("chat", [twin, User("other", id=twin.id)])
        assert store.head("chat") == head
        assert store.load("chat") == [first]
        store.append("elsewhere", impostor)  # ids are per conversation
        assert store.load("elsewhere") == [impostor]
        # A refused append to a new conversation creates nothing.
        with pytest.raises(DuplicateCanister, match="same append"):
            store.extend("new", [twin, User("other", id=twin.id)])
        assert not store.exists("new")
        assert store.conversations() == ["chat", "elsewhere"]

    def test_a_fork_holds_the_ids_of_its_prefix(self, store: Store) -> None:
        """A fork holds the canisters of the prefix it shares, not those its
        parent gained after the fork point."""
        first, second, third = User("one"), Assistant("two"), User("three")
        store.extend("root", [first, second, third])
        fork = store.fork("root", at=second.id)
        store.extend(fork, [first, second])
        assert store.load(fork) == [first, second]
        store.append(fork, third)
        store.append(fork, third)
        assert store.load(fork) == [first, second, third]
        with pytest.raises(DuplicateCanister):
            store.append(fork, User("changed", id=first.id))
        grandchild = store.fork(fork, at=third.id)
        store.extend(grandchild, [first, third, Assistant("four")])
        assert store.load(grandchild)[:3] == [first, second, third]
        assert len(store.load(grandchild)) == 4
        assert store.verify(grandchild).ok
