"""Serialization and parsing when the texts are not ASCII.

Run: ``python .auxiliary/benchmarks/languages.py [--messages N] [--repeat N]``.

The corpora of ``run.py`` write English. Chat applications serve every language,
and emoji turn up in any of them. Here the chat corpus (short turns, small tool
calls) is written four ways, the same conversations with each text rewritten:

* ``ascii``: as ``run.py`` has it;
* ``latin``: accented letters (``é``, ``à``, ``ç``), as French or Portuguese;
* ``cjk``: every word a Chinese one, as Chinese or Japanese;
* ``emoji``: an emoji closing each sentence of English.

Each is serialized with :func:`canisters.to_json` against LangChain's
``messages_to_dict`` and ``orjson.dumps`` and parsed with
:func:`canisters.from_json` against pydantic-ai's ``validate_json``, as
``run.py`` times them (best of interleaved rounds, a collection left pending
charged to the call). ``to_json`` returns text, LangChain's path bytes: the
UTF-8 decode, a copy for ASCII, is a conversion for anything else, and a text
holding one emoji takes four bytes a character in Python.
"""

from __future__ import annotations

import argparse
import zlib
from collections.abc import Callable
from typing import Any

import corpus
import orjson
import peers
from langchain_core import messages as lc
from pydantic_ai.messages import ModelMessagesTypeAdapter as adapter
from run import Timer

import canisters

_CJK = tuple("的是在有人这中大为上个国我以要他时来用们生到作地于出就分对成会可主发年动")
_LATIN = str.maketrans({"e": "é", "a": "à", "c": "ç", "o": "ô"})


def _cjk(text: str) -> str:
    words = text.split(" ")
    return (
        "".join(
            _CJK[zlib.crc32(word.encode()) % len(_CJK)] + _CJK[len(word) % len(_CJK)]
            for word in words
        )
        + "。"
    )


SCRIPTS: dict[str, Callable[[str], str]] = {
    "ascii": lambda text: text,
    "latin": lambda text: text.translate(_LATIN),
    "cjk": _cjk,
    "emoji": lambda text: text.replace(".", " 🙂."),
}
"""How each variant rewrites a text of the corpus."""


def rewritten(
    specs: list[list[corpus.Spec]], rewrite: Callable[[str], str]
) -> list[list[corpus.Spec]]:
    """The conversations with every text (turns, parts, results) rewritten."""
    out = []
    for conversation in specs:
        changed = []
        for spec in conversation:
            spec = dict(spec)
            if "text" in spec:
                spec["text"] = rewrite(spec["text"])
            if "parts" in spec:
                spec["parts"] = [
                    {**part, "text": rewrite(part["text"])} if "text" in part else part
                    for part in spec["parts"]
                ]
            changed.append(spec)
        out.append(changed)
    return out


def measure(specs: list[list[corpus.Spec]], timer: Timer) -> dict[str, float]:
    """Seconds per message of each library's serialize and parse."""
    ours = [peers.canisters_from_specs(s) for s in specs]
    theirs_lc = [peers.langchain_from_specs(s) for s in specs]
    theirs_pa = [peers.pydantic_ai_from_specs(s) for s in specs]
    ours_json = [canisters.to_json(c) for c in ours]
    pa_json = [adapter.dump_json(m) for m in theirs_pa]
    assert [canisters.from_json(t) for t in ours_json] == ours
    dumps = orjson.dumps
    functions: dict[str, Callable[[], Any]] = {
        "serialize canisters": lambda: [canisters.to_json(c) for c in ours],
        "serialize langchain": lambda: [
            dumps(lc.messages_to_dict(m)) for m in theirs_lc
        ],
        "parse canisters": lambda: [canisters.from_json(t) for t in ours_json],
        "parse pydantic-ai": lambda: [adapter.validate_json(t) for t in pa_json],
    }
    count = corpus.message_count(specs)
    return {k: v / count for k, v in timer.interleaved(functions).items()}


def main(argv: list[str] | None = None) -> None:
    """Print each variant's figures and ratios."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--messages", type=int, default=10_000)
    parser.add_argument("--repeat", type=int, default=7)
    parser.add_argument("--seed", type=int, default=0)
    arguments = parser.parse_args(argv)
    timer = Timer(arguments.repeat, 1.5)
    base = corpus.chat_corpus(arguments.messages, arguments.seed)
    print(
        f"chat corpus, {corpus.message_count(base):,} messages, "
        f"best of >= {arguments.repeat} interleaved rounds; us per message"
    )
    print(
        f"{'texts':<7} {'to_json':>8} {'LangChain':>10} {'ratio':>6}   "
        f"{'from_json':>9} {'pydantic-ai':>11} {'ratio':>6}"
    )
    for name, rewrite in SCRIPTS.items():
        figures = measure(rewritten(base, rewrite), timer)
        ours_out, lc_out = (
            figures["serialize canisters"],
            figures["serialize langchain"],
        )
        ours_in, pa_in = figures["parse canisters"], figures["parse pydantic-ai"]
        print(
            f"{name:<7} {ours_out * 1e6:8.2f} {lc_out * 1e6:10.2f} "
            f"{lc_out / ours_out:5.2f}x   {ours_in * 1e6:9.2f} {pa_in * 1e6:11.2f} "
            f"{pa_in / ours_in:5.2f}x"
        )


if __name__ == "__main__":
    main()
