"""Pages and notebook displays stay bounded whatever the conversation holds:
results written once however many calls share their id, every field cut in a
notebook, a size limit on the page, and values built in Python (nested a
thousand levels, integers of thousands of digits) shown, not raised."""

from __future__ import annotations

from typing import Any

import pytest

from canisters import (
    Assistant,
    Conversation,
    Document,
    ErrorInfo,
    Invocation,
    Metadata,
    Result,
    Text,
    User,
    html,
)

from .html_support import Page

MB = 1024 * 1024


def _shared(calls: int, result_size: int) -> Conversation:
    """``calls`` calls sharing one id, and one result of ``result_size``."""
    invocations = [
        Invocation("lookup", {"n": n}, invocation_id="same") for n in range(calls)
    ]
    result = Result("same", "lookup", (Text("result-start" + "r" * result_size),))
    return Conversation((User("go"), *invocations, result))


def test_a_result_shared_by_many_calls_is_written_once_and_they_are_marked() -> None:
    conversation = _shared(300, MB)
    page = html.render(conversation)
    assert page.count("result-start") == 1
    assert len(page) < 2 * MB
    parsed = Page(page)
    assert parsed.text.count("id shared by 300 calls") == 300
    assert parsed.text.count("its result is shown beside the first call") == 299
    notebook = conversation._repr_html_()
    assert len(notebook) < MB
    assert Page(notebook).text.count("id shared by 300 calls") == 199  # shown


def test_a_call_with_its_own_id_is_not_marked() -> None:
    conversation = Conversation(
        (
            User("go"),
            Invocation("f", {}, invocation_id="a"),
            Result("a", "f", (Text("done"),)),
        )
    )
    page = Page(html.render(conversation))
    assert "shared" not in page.text and "done" in page.text


def test_a_page_is_bounded_in_size() -> None:
    texts = [User(Text("t" * 1_000_000)) for _ in range(80)]  # 80 MB of text
    page = html.render(Conversation(texts))
    assert len(page) < html.PAGE_LIMIT + 2 * MB
    assert "the page reached its size limit of 67,108,864 characters" in page
    assert "size limit" not in html.render(Conversation(texts[:3]))


@pytest.mark.parametrize(
    "canister",
    [
        User("x", metadata=Metadata(custom={"blob": "m" * 5 * MB})),
        User("x", extras={"provider": {"blob": "e" * 5 * MB}}),
        User("x", id="i" * 5 * MB),
        User("x", policy="p" * 5 * MB, trace_id="t" * 5 * MB),
        Invocation("n" * 5 * MB, {"a": "v" * 5 * MB}),
        Result("c", "f", error=ErrorInfo("TOOL_ERROR", "e" * 5 * MB)),
        Document((Text("d"),), title="t" * 5 * MB),
        Assistant("x", metadata=Metadata(model="m" * 5 * MB, finish_reason="s" * MB)),
    ],
    ids=lambda c: type(c).__name__,
)
def test_the_notebook_display_cuts_every_field(canister: Any) -> None:
    shown = canister._repr_html_()
    assert len(shown) < 200_000
    assert "more characters" in shown
    assert len(Conversation((canister,))._repr_html_()) < 200_000


def test_a_notebook_display_of_many_large_canisters_is_bounded() -> None:
    canisters = [User(tuple(Text("w" * 20_000) for _ in range(50))) for _ in range(20)]
    shown = Conversation(canisters)._repr_html_()
    assert len(shown) < 9 * MB
    assert "size limit" in shown


def _nested(levels: int) -> dict[str, Any]:
    value: dict[str, Any] = {"leaf": 1}
    for _ in range(levels):
        value = {"a": value}
    return value


@pytest.mark.parametrize(
    "canister",
    [
        Invocation("f", _nested(3000)),
        User("x", extras={"p": _nested(3000)}),
        User("x", metadata=Metadata(custom={"deep": _nested(3000)})),
        Invocation("f", {"n": 10**5000}),
        User("x", extras={"p": {"n": -(10**5000)}}),
        Result("c", "f", error=ErrorInfo("E", "m", details={"n": 10**5000})),
        User("x", step=10**5000),
    ],
    ids=["arguments", "extras", "metadata", "int", "extras-int", "details", "step"],
)
def test_values_built_in_python_are_shown_not_raised(canister: Any) -> None:
    page = Page(html.render(canister))
    assert "integer of" in page.text or "nested deeper than 100 levels" in page.text
    assert canister._repr_html_()
