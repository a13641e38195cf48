"""Hostile and broken input: what the library accepts, what it refuses, and how.

Issues 13 and 20. Every refusal is the library's own exception with a path; every
value accepted is written and read back exactly (see the reliability page).
"""

from __future__ import annotations

import pytest

from canisters import Image, ModelError
from canisters._frozen import FrozenDict
from canisters.exceptions import _EXCERPT_LIMIT, _excerpt


def test_a_long_value_is_cut_in_the_message_with_its_length() -> None:
    url = "https://example.com/" + "x" * 4_000_000
    with pytest.raises(ModelError) as caught:
        Image(url="not a url " + url)
    message = str(caught.value)
    assert len(message) < 4 * _EXCERPT_LIMIT
    assert "(4,000,030 characters)" in message
    assert "'not a url https" in message  # the start of the value is kept


def test_excerpt_bounds_every_kind_of_value() -> None:
    nested: dict[str, object] = {}
    level = nested
    for _ in range(10_000):
        level["a"] = level = {}
    assert _excerpt(nested) == "{'a': {'a': {'a': {...}}}}"
    assert _excerpt(FrozenDict(a=1)) == "{'a': 1}"
    assert _excerpt("short") == "'short'"
    assert _excerpt(10**5000) == "<an integer of 16,610 bits>"
    assert _excerpt(b"\x00" * 10_000).endswith("(10,000 bytes)")
    assert _excerpt("\ud800") == "'\\ud800'"
    many = {str(i) * 300: "y" * 500 for i in range(50)}
    assert len(_excerpt(many)) < 4 * _EXCERPT_LIMIT + 40

    class Broken:
        def __repr__(self) -> str:
            raise RuntimeError("no")

    assert _excerpt(Broken()).startswith("<Broken")
