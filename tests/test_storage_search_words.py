"""The words every backend indexes: the ASCII fast path and the general one
give what a plain reading of the word pattern gives (lower-cased, distinct, in
order of appearance, none longer than a PostgreSQL lexeme)."""

from __future__ import annotations

import random
import re

import pytest

from canisters.storage import _search

_PATTERN = re.compile(r"[^\W_]+")


def _reference(text: str) -> list[str]:
    lowered = (match[0].lower() for match in _PATTERN.finditer(text))
    return [
        word
        for word in dict.fromkeys(lowered)
        if len(word.encode("utf-8")) <= _search.MAX_WORD_BYTES
    ]


@pytest.mark.parametrize(
    "text",
    [
        "",
        "Hello, hello WORLD_wide web-2.0 x86_64",
        "tabs\tand\nnewlines\x7f and ~punctuation~ !",
        "Ünïcödé İstanbul ΟΔΟΣ οδος straße STRASSE 日本語 テキスト",
        "a\u0301 combining e\u0301\u0301 marks",
        "x" * _search.MAX_WORD_BYTES + " short",
        "x" * (_search.MAX_WORD_BYTES + 1) + " short",
        "é" * (_search.MAX_WORD_BYTES // 2) + " é" * 3,
        "é" * (_search.MAX_WORD_BYTES // 2 + 1) + " kept",
    ],
)
def test_words_are_the_patterns_words(text: str) -> None:
    assert _search.words(text) == _reference(text)


def test_words_of_random_texts() -> None:
    chance = random.Random(46)
    alphabet = [chr(code) for code in range(128)] + list("ÀéßİΣσςЖ\u0301\u2028日本")
    for _ in range(3000):
        text = "".join(chance.choice(alphabet) for _ in range(chance.randint(0, 40)))
        assert _search.words(text) == _reference(text), repr(text)
