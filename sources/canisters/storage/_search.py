"""Full-text search over the text of stored canisters, shared by the backends.

What a canister's searchable text is (:func:`record_text`), how a query reads
(:func:`parse_query`), how a hit's snippet is cut and marked, and each
backend's way of finding hits: SQLite's FTS5 table kept by the append's
transaction, PostgreSQL's ``tsvector`` column with a GIN index (its plans are in
:mod:`._search_postgres`), and a scan of the logs for the file backend.

A query is words (letters and digits; anything else separates them), each of
which the canister's text must hold as a whole word, case aside; a word ending
in ``*`` matches every word it begins. Every backend reads a text into words
the same way (Python's, before the text reaches the database's index), so that
one query finds the same canisters everywhere. Hits come in the order of the
conversations' ids, then of their place in the conversation.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterable, Iterator, Mapping
from typing import Any, Final

import attrs
import orjson

from ..exceptions import StorageError
from ..protocols import Role
from ..serialization import FORMAT_VERSION, migrate
from ._common import STORED, STORED_MARK, check_id
from ._retries import index_key

__all__ = ["InvalidQuery", "SearchHit"]

_WORD: Final = re.compile(r"[^\W_]+")
_QUERY_WORD: Final = re.compile(r"[^\W_]+\*?")
_KINDS: Final = frozenset(role.value for role in Role)
# The longest word a PostgreSQL lexeme holds (2 KiB less one byte); a longer
# one is left out of the index by every backend.
MAX_WORD_BYTES: Final = 2046
# Characters within which a word is within MAX_WORD_BYTES whatever they are.
_SURELY_SHORT: Final = MAX_WORD_BYTES // 4
# Every ASCII character that is not a letter or digit mapped to a space, and
# every capital to its small letter (a table for bytes.translate, which runs
# without a lookup per character).
_ASCII_GAPS: Final = bytes(
    (code | 0x20 if chr(code).isupper() else code) if chr(code).isalnum() else 32
    for code in range(128)
) + bytes(range(128, 256))
# Snippets: characters shown around the first match.
SNIPPET_WIDTH: Final = 160
_LEAD: Final = 48


class InvalidQuery(StorageError, ValueError):
    """A search query, limit or filter that cannot be searched for."""

    def __init__(self, message: str) -> None:
        super().__init__(message)


@attrs.frozen
class SearchHit:
    """One canister a search found."""

    conversation_id: str
    """The conversation holding the canister (the one searched, when the search
    was limited to one: a fork holds what it shares with its parent)."""
    canister_id: str
    """The canister's id."""
    kind: str
    """The canister's role: ``"user"``, ``"assistant"``, ``"result"``, ..."""
    snippet: str
    """Text around the first match, on one line (``…`` where it was cut)."""
    marks: tuple[tuple[int, int], ...] = ()
    """The ``(start, end)`` offsets in :attr:`snippet` of every matching word."""

    def marked(self, before: str = "[", after: str = "]") -> str:
        """Return :attr:`snippet` with each match between ``before`` and ``after``."""
        pieces = []
        last = 0
        for start, end in self.marks:
            pieces += [self.snippet[last:start], before, self.snippet[start:end], after]
            last = end
        pieces.append(self.snippet[last:])
        return "".join(pieces)


Term = tuple[str, bool]
"""A query word, lower-cased, and whether it is a prefix."""


def parse_query(query: object) -> tuple[Term, ...]:
    """Return the words of ``query``; raise :class:`InvalidQuery` when it has none."""
    if type(query) is not str:
        raise InvalidQuery(f"a search query is a string, got {type(query).__name__}")
    terms: dict[Term, None] = {}
    for match in _QUERY_WORD.finditer(query):
        word = match[0]
        prefix = word.endswith("*")
        word = (word[:-1] if prefix else word).lower()
        if len(word.encode("utf-8", "replace")) <= MAX_WORD_BYTES:
            terms[(word, prefix)] = None
    if not terms:
        raise InvalidQuery(
            f"search query {query[:80]!r} holds no word to look for (letters or digits)"
        )
    return tuple(terms)


def check_search(
    query: object, limit: object, conversation: object, kinds: Iterable[str] | None
) -> tuple[tuple[Term, ...], int, tuple[str, ...] | None, str | None]:
    """Check a search's arguments, in the order every backend checks them: return
    the query's words, the limit, the kinds to search (``None``: all) and the
    conversation the search is limited to (``None``: every one)."""
    terms = parse_query(query)
    if type(limit) is not int or limit < 1:
        raise InvalidQuery(f"a search limit is a positive integer, got {limit!r}")
    wanted = check_kinds(kinds)
    within = None if conversation is None else check_id(conversation)
    return terms, limit, wanted, within


def check_kinds(kinds: Iterable[str] | None) -> tuple[str, ...] | None:
    """Return the canister kinds to search (``None``: all), each checked."""
    if kinds is None:
        return None
    if isinstance(kinds, str):
        kinds = (kinds,)
    found = []
    for kind in kinds:
        value = kind.value if isinstance(kind, Role) else kind
        if value not in _KINDS:
            raise InvalidQuery(
                f"unknown canister kind {value!r} in kinds: use "
                + ", ".join(sorted(_KINDS))
            )
        found.append(str(value))
    return tuple(dict.fromkeys(found))


# --------------------------------------------------------------------------- #
# What is searched


def clean(text: str) -> str:
    """``text`` as every database holds it: no NUL, no lone surrogate."""
    if "\x00" in text:
        text = text.replace("\x00", " ")
    if text.isascii():  # no surrogate: nothing to replace
        return text
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        text = text.encode("utf-8", "replace").decode("utf-8")
    return text


def record_text(record: Mapping[str, Any], fetch: Callable[[str], bytes]) -> str:
    """Return the searchable text of a (dehydrated) record.

    The text of its text and reasoning parts (stored text read through
    ``fetch``), a document's title, a tool call's name and arguments, a result's
    name and error message; media are left out (their hints and file names
    too). Lines are joined by newlines.
    """
    pieces: list[str] = []
    role = record.get("role")
    if role in ("invocation", "result"):
        name = record.get("name")
        if type(name) is str:
            pieces.append(name)
    if role == "invocation":
        arguments = record.get("arguments")
        if arguments:
            pieces.append(json.dumps(arguments, ensure_ascii=False, default=str))
    if role == "document":
        title = record.get("title")
        if type(title) is str:
            pieces.append(title)
    parts = record.get("content")
    if type(parts) is list:
        for part in parts:
            if type(part) is not dict or part.get("type") not in (
                "text",
                "cited_text",
                "reasoning",
            ):
                continue
            text = part.get("text")
            if type(text) is str:
                pieces.append(text)
                continue
            stored = part.get(STORED)
            content_id = stored.get("text") if type(stored) is dict else None
            if type(content_id) is str:
                pieces.append(fetch(content_id).decode("utf-8", "replace"))
    error = record.get("error")
    if type(error) is dict and type(error.get("message")) is str:
        pieces.append(error["message"])
    return clean("\n".join(pieces))


def words(text: str) -> list[str]:
    """Return the distinct words of ``text``, lower-cased, in order of appearance."""
    if text.isascii():
        # _WORD's words are the runs of ASCII letters and digits: the others
        # become spaces, and the whole text is lower-cased and split at once.
        gaps = text.encode("ascii").translate(_ASCII_GAPS).decode("ascii")
        return [
            word for word in dict.fromkeys(gaps.split()) if len(word) <= MAX_WORD_BYTES
        ]
    # Each spelling is lower-cased once (the first of a lower-cased word stays
    # first), and only a word that could be too long is measured in bytes.
    return [
        word
        for word in dict.fromkeys(map(str.lower, dict.fromkeys(_WORD.findall(text))))
        if len(word) <= _SURELY_SHORT or len(word.encode("utf-8")) <= MAX_WORD_BYTES
    ]


def matches(terms: tuple[Term, ...], text: str) -> bool:
    """Tell whether ``text`` holds every term (the file backend's test)."""
    found = set(words(text))
    for word, prefix in terms:
        if word in found:
            continue
        if not prefix or not any(each.startswith(word) for each in found):
            return False
    return True


def snippet(
    terms: tuple[Term, ...], text: str
) -> tuple[str, tuple[tuple[int, int], ...]]:
    """Return the part of ``text`` around its first match and the matches in it."""
    exact = {word for word, prefix in terms if not prefix}
    prefixes = tuple(word for word, prefix in terms if prefix)
    spans = [
        match.span()
        for match in _WORD.finditer(text)
        if (lowered := match[0].lower()) in exact
        or (prefixes and lowered.startswith(prefixes))
    ]
    first = spans[0][0] if spans else 0
    start = max(0, first - _LEAD)
    if start:
        space = text.rfind(" ", start, first)
        start = space + 1 if space >= 0 else start
    end = min(len(text), start + SNIPPET_WIDTH)
    if end < len(text):
        space = text.rfind(" ", max(first + 1, end - 24), end)
        end = space if space > first else end
    head = "…" if start else ""
    cut = head + " ".join(text[start:end].split("\n")).replace("\t", " ")
    cut = cut.replace("\r", " ") + ("…" if end < len(text) else "")
    shift = len(head) - start
    marks = tuple(
        (begin + shift, min(stop, end) + shift)
        for begin, stop in spans
        if begin >= start and begin < end
    )
    return cut, marks


def hit(
    terms: tuple[Term, ...], conversation_id: str, canister: str, kind: str, text: str
) -> SearchHit:
    """Return the hit of a canister whose text matched."""
    cut, marks = snippet(terms, text)
    return SearchHit(conversation_id, canister_id(canister), kind, cut, marks)


def canister_id(key: str) -> str:
    """The canister id an index key (:func:`~._retries.index_key`) stands for."""
    if key.startswith("\x01"):
        value = json.loads(key[1:])
        return value if type(value) is str else key
    return key


def line_record(line: bytes) -> dict[str, Any] | None:
    """Return the record of a stored log line (``None``: unreadable or a
    tombstone), migrated to the current format."""
    try:
        document = orjson.loads(line)
    except orjson.JSONDecodeError:
        try:
            document = json.loads(line)
        except (ValueError, RecursionError):
            return None
    except RecursionError:
        return None
    if type(document) is not dict or "redacted" in document:
        return None
    record = document.get("canister")
    version = document.get("v")
    if version != FORMAT_VERSION and type(record) is dict:
        try:
            record = migrate(
                {"format": "canisters.canister", "version": version, "canister": record}
            )["canister"]
        except Exception:  # an unreadable old record: not searched
            return None
    return record if type(record) is dict else None


def entry(
    seq: int, record: Mapping[str, Any], fetch: Callable[[str], bytes]
) -> tuple[int, str, str, str] | None:
    """Return what an index holds for a record: ``(seq, canister key, kind,
    text)``, or ``None`` for a record with no id or no text."""
    found = record.get("id")
    kind = record.get("role")
    if type(found) is not str or type(kind) is not str:
        return None
    text = record_text(record, fetch)
    if not text.strip():
        return None
    return seq, index_key(found), kind, text


def fetcher(
    blobs: Iterable[tuple[str, bytes]], fallback: Callable[[str], bytes]
) -> Callable[[str], bytes]:
    """Read a blob from an append's own blobs, else through ``fallback``."""
    held = dict(blobs)

    def fetch(content_id: str) -> bytes:
        data = held.get(content_id)
        return data if data is not None else fallback(content_id)

    return fetch


# --------------------------------------------------------------------------- #
# The file backend: a scan of the logs


def scan_lines(
    terms: tuple[Term, ...],
    lines: Iterable[tuple[int, bytes]],
    fetch: Callable[[str], bytes],
    kinds: tuple[str, ...] | None,
) -> Iterator[tuple[str, str, str]]:
    """Yield ``(canister key, kind, text)`` of the lines that match.

    A line is read only when its bytes could hold every word (or it names
    stored text): most lines of a large store are passed over unparsed.
    """
    needles = [word for word, _prefix in terms]
    for _seq, line in lines:
        lowered = line.decode("utf-8", "replace").lower()
        if STORED_MARK not in line and not all(n in lowered for n in needles):
            continue
        record = line_record(line)
        if record is None:
            continue
        found = entry(0, record, fetch)
        if found is None or (kinds is not None and found[2] not in kinds):
            continue
        if matches(terms, found[3]):
            yield found[1], found[2], found[3]


# --------------------------------------------------------------------------- #
# SQLite: an FTS5 table over the text, kept by the append's transaction


SQLITE_SCHEMA: Final = (
    "CREATE TABLE IF NOT EXISTS search_rows (id INTEGER PRIMARY KEY, "
    "conversation TEXT NOT NULL, seq INTEGER NOT NULL, canister TEXT NOT NULL, "
    "kind TEXT NOT NULL, text TEXT NOT NULL)",
    "CREATE INDEX IF NOT EXISTS search_rows_place ON search_rows (conversation, seq)",
    # Neither positions (no phrase is searched) nor sizes (no ranking) are
    # kept: each append writes less.
    "CREATE VIRTUAL TABLE IF NOT EXISTS search USING fts5(text, "
    "content='search_rows', content_rowid='id', "
    "tokenize='unicode61 remove_diacritics 0', detail=none, columnsize=0)",
    # The rows up to the meta key ``search_indexed`` are in the FTS table; those
    # past it are added in batches (see _search_sqlite.catch_up). A deleted row
    # leaves the FTS table only if it was in it, and the mark never stays above
    # the last row, so that a new row (whose id follows the last) is past it.
    "INSERT OR IGNORE INTO meta (key, value) VALUES ('search_indexed', '0')",
    "DROP TRIGGER IF EXISTS search_rows_added",
    "DROP TRIGGER IF EXISTS search_rows_removed",
    "CREATE TRIGGER IF NOT EXISTS search_rows_unindexed AFTER DELETE ON search_rows "
    "BEGIN INSERT INTO search (search, rowid, text) SELECT 'delete', old.id, "
    "old.text WHERE old.id <= "
    "(SELECT CAST(value AS INTEGER) FROM meta WHERE key = 'search_indexed'); "
    "UPDATE meta SET value = CAST(min(CAST(value AS INTEGER), "
    "(SELECT coalesce(max(id), 0) FROM search_rows)) AS TEXT) "
    "WHERE key = 'search_indexed'; END",
)
"""The search tables; run again on a store made with an older form (whose
triggers indexed each row as it was written) when first opened for writing."""


def fts5_query(terms: tuple[Term, ...]) -> str:
    """The FTS5 query of ``terms``: each a quoted token, all of them required."""
    return " ".join(f'"{word}"' + ("*" if prefix else "") for word, prefix in terms)


def tsquery(terms: tuple[Term, ...]) -> str:
    """The PostgreSQL ``tsquery`` of ``terms`` (already lower-cased words)."""
    return " & ".join(f"'{word}'" + (":*" if prefix else "") for word, prefix in terms)


# --------------------------------------------------------------------------- #
# PostgreSQL: the statement that writes index rows (its plans are elsewhere)


_POSTGRES_INSERT: Final = (
    "INSERT INTO canisters_search (conversation, seq, canister, kind, text, words) "
    "SELECT %s, s, c, k, t, array_to_tsvector(string_to_array(w, ' ')) "
    "FROM unnest(%s::bigint[], %s::text[], %s::text[], %s::text[], %s::text[]) "
    "AS u(s, c, k, t, w) ON CONFLICT DO NOTHING"
)


def postgres_insert(
    conversation_id: str, entries: list[tuple[int, str, str, str]]
) -> tuple[str, tuple[Any, ...]]:
    """The statement and parameters that write the index rows of ``entries``."""
    return _POSTGRES_INSERT, (
        conversation_id,
        [seq for seq, _, _, _ in entries],
        [key for _, key, _, _ in entries],
        [kind for _, _, kind, _ in entries],
        [text for _, _, _, text in entries],
        [" ".join(words(text)) for _, _, _, text in entries],
    )


def postgres_appended(
    conversation_id: str,
    start: int,
    records: list[dict[str, Any]],
    blobs: Mapping[str, bytes],
) -> tuple[str, tuple[Any, ...]] | None:
    """The statement writing the index rows of an append's records, or ``None``."""
    fetch = fetcher(blobs.items(), _not_appended)
    entries = [
        found
        for offset, record in enumerate(records)
        if (found := entry(start + offset, record, fetch)) is not None
    ]
    return postgres_insert(conversation_id, entries) if entries else None


def _not_appended(content_id: str) -> bytes:
    raise StorageError(f"blob {content_id} is not among the append's blobs")


def postgres_rows(
    records: list[dict[str, Any]], blobs: Mapping[str, bytes]
) -> str | None:
    """The index rows of an append's records as the append function takes them
    (a JSON array of ``{"a": place in the append, "c": canister key, "k": kind,
    "t": text, "w": words}``), or ``None`` when none has text."""
    fetch = fetcher(blobs.items(), _not_appended)
    rows = [
        {"a": seq, "c": key, "k": kind, "t": text, "w": " ".join(words(text))}
        for offset, record in enumerate(records)
        if (found := entry(offset, record, fetch)) is not None
        for seq, key, kind, text in (found,)
    ]
    return orjson.dumps(rows).decode() if rows else None
