"""The provider registry: names, lookup, registration, plugins, lazy loading."""

from __future__ import annotations

import gc
import subprocess
import sys
from importlib import metadata
from typing import Any

import pytest

import canisters
from canisters import Conversation, providers
from canisters.providers import _common as common


@pytest.fixture(autouse=True)
def _clean_registry() -> Any:
    providers._reset_for_tests()
    yield
    providers._reset_for_tests()


class Echo:
    """A minimal plugin normalizer."""

    name = "echo"

    def parse_request(self, body: Any) -> Conversation:
        return Conversation([canisters.User(body["text"])])

    def render_request(
        self, conversation: Conversation, **options: Any
    ) -> dict[str, Any]:
        return {"text": conversation[0].content[0].text}  # type: ignore[attr-defined]

    def parse_response(self, body: Any) -> Conversation:
        return Conversation([canisters.Assistant(body["text"])])

    def render_response(
        self, conversation: Conversation, **options: Any
    ) -> dict[str, Any]:
        return {"text": conversation[0].content[0].text}  # type: ignore[attr-defined]


def test_builtin_names() -> None:
    assert {"openai-chat", "anthropic"} <= set(providers.names())
    assert list(providers.names()) == sorted(providers.names())


@pytest.mark.parametrize("name", ["openai-chat", "anthropic"])
def test_get_builtin(name: str) -> None:
    normalizer = providers.get(name)
    assert normalizer.name == name
    assert isinstance(normalizer, providers.Normalizer)
    assert providers.get(name) is normalizer


def test_unknown_provider_lists_known() -> None:
    with pytest.raises(canisters.UnknownProvider) as caught:
        providers.get("nope")
    assert caught.value.name == "nope"
    assert "openai-chat" in caught.value.known
    assert "anthropic" in str(caught.value)
    assert isinstance(caught.value, LookupError)


def test_register_and_replace() -> None:
    providers.register("echo", Echo())
    assert "echo" in providers.names()
    conversation = providers.get("echo").parse_request({"text": "hi"})
    assert providers.get("echo").render_request(conversation) == {"text": "hi"}
    with pytest.raises(canisters.ProviderError):
        providers.register("echo", Echo())
    replacement = Echo()
    providers.register("echo", replacement, replace=True)
    assert providers.get("echo") is replacement


def test_register_refuses_non_normalizers() -> None:
    with pytest.raises(canisters.ProviderError):
        providers.register("bad", object())  # type: ignore[arg-type]
    with pytest.raises(canisters.ProviderError):
        providers.register("", Echo())


def test_entry_point_plugins_load_lazily() -> None:
    point = metadata.EntryPoint(
        name="echo-plugin", value=f"{__name__}:Echo", group=providers.ENTRY_POINT_GROUP
    )
    broken = metadata.EntryPoint(
        name="broken", value="no_such_module_here:X", group=providers.ENTRY_POINT_GROUP
    )
    providers._reset_for_tests({"echo-plugin": point, "broken": broken})
    assert "echo-plugin" in providers.names()
    normalizer = providers.get("echo-plugin")
    assert isinstance(normalizer, Echo)
    assert providers.get("echo-plugin") is normalizer
    with pytest.raises(canisters.ProviderError, match="broken"):
        providers.get("broken")


def test_unknown_option_raises() -> None:
    conversation = Conversation([canisters.User("hi")])
    with pytest.raises(canisters.ProviderError, match="unknown option"):
        providers.get("openai-chat").render_request(conversation, colour="blue")
    with pytest.raises(canisters.ProviderError, match="unsupported"):
        providers.get("openai-chat").render_request(conversation, unsupported="ignore")


def test_import_is_lazy() -> None:
    code = (
        "import sys, canisters, canisters.providers as p\n"
        "bad = [m for m in ('openai', 'anthropic', 'google.genai', 'ollama', "
        "'pydantic', 'canisters.providers.openai_chat', "
        "'canisters.providers.anthropic') if m in sys.modules]\n"
        "assert not bad, bad\n"
        "p.get('anthropic')\n"
        "assert 'canisters.providers.anthropic' in sys.modules\n"
        "assert 'canisters.providers.openai_chat' not in sys.modules\n"
        "assert 'anthropic' not in sys.modules\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True)


def test_public_surface() -> None:
    assert sorted(providers.__all__) == [
        "Capabilities",
        "DEFAULT_CAPABILITIES",
        "ENTRY_POINT_GROUP",
        "ERROR_KINDS",
        "ErrorKind",
        "ErrorNormalizer",
        "ErrorReply",
        "ErrorResponse",
        "Event",
        "FidelityWarning",
        "MalformedPayload",
        "Normalizer",
        "Options",
        "ReasoningTable",
        "Report",
        "RequestNormalizer",
        "SchemaChange",
        "StreamingNormalizer",
        "capabilities_for",
        "get",
        "is_strict_compatible",
        "names",
        "register",
        "translate_schema",
        "upgrade",
    ]
    for name in providers.__all__:
        # (constants and type aliases are documented where they are declared)
        assert getattr(providers, name).__doc__ or name in (
            "ENTRY_POINT_GROUP",
            "ErrorKind",
        )
    assert issubclass(providers.MalformedPayload, canisters.ProviderError)
    assert issubclass(providers.ErrorResponse, canisters.ProviderError)


@pytest.mark.parametrize("name", providers.names())
@pytest.mark.parametrize("bad", ["not a conversation", 5, ["a string item"]])
def test_render_refuses_what_is_not_a_conversation(name: str, bad: object) -> None:
    normalizer = providers.get(name)
    for render in (normalizer.render_request, normalizer.render_response):
        with pytest.raises(canisters.ProviderError, match=name):
            render(bad)  # type: ignore[arg-type]


def test_marks_are_a_provider_entry_in_extras() -> None:
    """``with_marks``, ``marker``, ``holder`` and ``mine``, the helpers plugins
    mark what they read with: truthy marks make the provider's entry, none
    removes it (or gives the shared empty extras), nothing else moves; a holder
    keeps a whole entry, falsy values too."""
    from canisters.providers import _common as common

    extras = {"other": {"kept": True}, "mine": {"old": 1}}
    marked = common.with_marks(extras, "mine", {"split": True, "content": None})
    assert marked == {"other": {"kept": True}, "mine": {"split": True}}
    assert common.mine(canisters.User("hi", extras=marked), "mine") == {"split": True}
    assert common.with_marks(extras, "mine", {"split": False}) == {
        "other": {"kept": True}
    }
    assert extras == {"other": {"kept": True}, "mine": {"old": 1}}  # not changed
    extras_of = common.marker("mine")
    assert extras_of(split=True, content=None) == {"mine": {"split": True}}
    assert extras_of(split=False, content=None) is canisters.User("hi").extras
    hold = common.holder("mine")
    entry = {"id": False, "lead": True}
    held = hold(entry)
    assert held == {"mine": {"id": False, "lead": True}}  # falsy values too
    entry["lead"] = False
    assert held["mine"]["lead"] is True  # a copy
    assert hold({}) is canisters.User("hi").extras


def test_a_request_parser_is_held_to_the_depth_bound_where_it_reads() -> None:
    """``guarded_reading``, the net under a parser reading only some keys of a
    body: their values are held to the depth bound at their paths, the rest of
    the body is not walked, a body that is not a dict is held whole, and a stray
    error becomes the library's."""
    from canisters.exceptions import MalformedPayload
    from canisters.providers import _common as common

    @common.guarded_reading("messages")
    def parse(body: Any) -> int:
        return len(body["messages"])

    def nested(levels: int) -> Any:
        value: Any = "leaf"
        for _ in range(levels):
            value = [value]
        return value

    deep = nested(common.BODY_DEPTH + 5)
    assert parse({"messages": [1, 2], "tools": deep}) == 2
    assert parse(body={"messages": [1], "tools": deep}) == 1
    with pytest.raises(MalformedPayload, match="nested too deeply") as caught:
        parse({"messages": [deep], "tools": []})
    assert caught.value.path.startswith("$.messages[0][0]")
    with pytest.raises(MalformedPayload, match="nested too deeply") as caught:
        parse([deep])
    assert caught.value.path.startswith("$[0][0]")
    with pytest.raises(MalformedPayload, match="KeyError"):
        parse({"tools": []})


def test_the_net_under_a_parser_keeps_its_shape() -> None:
    """``guarded`` wraps a parser of a body, a method of one and any other
    signature alike: the body, given by position or by keyword, is held to the
    depth bound, a stray error becomes the library's (caused by it), and a
    provider's own error passes as it is."""
    from canisters.exceptions import MalformedPayload, ProviderError
    from canisters.providers import _common as common

    failure = ProviderError("the provider said no")

    class Parser:
        @common.guarded
        def parse(self, body: Any) -> Any:
            if body == "refuse":
                raise failure
            return body["x"]

    @common.guarded
    def alone(body: Any) -> Any:
        return body["x"]

    @common.guarded
    def other(body: Any, extra: int = 1) -> Any:
        return body["x"] + extra

    deep: Any = "leaf"
    for _ in range(common.BODY_DEPTH + 5):
        deep = [deep]
    parser = Parser()
    for parse in (parser.parse, alone, lambda body: other(body, extra=0)):
        assert parse({"x": 1}) == 1
        with pytest.raises(MalformedPayload, match="KeyError") as caught:
            parse({})
        assert isinstance(caught.value.__cause__, KeyError)
        with pytest.raises(MalformedPayload, match="nested too deeply"):
            parse({"x": deep})
    assert (
        parser.parse(body={"x": 2}) == alone(body={"x": 2}) == other(body={"x": 1}) == 2
    )
    with pytest.raises(MalformedPayload, match="nested too deeply"):
        alone(body=[deep])
    with pytest.raises(ProviderError) as raised:
        parser.parse("refuse")
    assert raised.value is failure and raised.value.__cause__ is None
    assert Parser.parse.__doc__ is None and alone.__name__ == "alone"


def test_the_net_that_holds_what_a_parser_keeps() -> None:
    """``guarded_keeping`` holds to the depth bound what the parser says it
    kept unread, after the parse: a body nesting too deeply elsewhere is not
    walked, one whose kept value nests too deeply is refused at that value's
    path in the body, a failing parse of a body too deep is refused for its
    depth first, and what orjson cannot write but nests within the bound
    passes. The wrapper is called with the body alone."""
    import inspect

    from canisters.exceptions import MalformedPayload
    from canisters.providers import _common as common

    @common.guarded_keeping("messages")
    def parse(body: Any, kept: list[Any]) -> int:
        """Count the messages, keeping the first unread."""
        if body["messages"][0] == "fail":
            raise ValueError("the parser refuses")
        kept.append(body["messages"][0])
        return len(body["messages"])

    deep: Any = "leaf"
    for _ in range(common.BODY_DEPTH + 5):
        deep = [deep]
    assert list(inspect.signature(parse).parameters) == ["body"]
    assert parse.__doc__ == "Count the messages, keeping the first unread."
    assert parse({"messages": [1, deep]}) == 2  # read, not kept: the parser's
    assert parse({"messages": [{10**30: 1}, 2]}) == 2  # walked: within the bound
    with pytest.raises(MalformedPayload, match="nested too deeply") as caught:
        parse({"messages": [{"a": deep}]})
    assert caught.value.path.startswith("$.messages[0].a[0]")
    with pytest.raises(MalformedPayload, match="nested too deeply") as caught:
        parse({"messages": ["fail", deep]})  # the depth is told first
    assert caught.value.path.startswith("$.messages[1][0]")
    with pytest.raises(MalformedPayload, match="the parser refuses") as caught:
        parse({"messages": ["fail", 1], "tools": deep})
    assert isinstance(caught.value.__cause__, ValueError)
    with pytest.raises(MalformedPayload, match="KeyError") as caught:
        parse({"tools": deep})
    assert isinstance(caught.value.__cause__, KeyError)


def _collections_during(work: Any) -> tuple[int, bool]:
    """How many collections the cyclic garbage collector started while ``work()``
    ran, with a threshold of one container (so that any container made while it
    runs sets one off), and whether it runs afterwards."""
    started: list[int] = []

    def note(phase: str, info: dict[str, int]) -> None:
        if phase == "start":
            started.append(info["generation"])

    threshold = gc.get_threshold()
    gc.collect()
    gc.callbacks.append(note)
    gc.set_threshold(1, 1, 1)
    try:
        work()
        # The last allocation inside work() may be followed by a collection
        # the moment the collector is given back: count only those before.
        running = gc.isenabled()
    finally:
        gc.set_threshold(*threshold)
        gc.callbacks.remove(note)
    return len(started), running


@pytest.mark.parametrize("name", providers.names())
@pytest.mark.parametrize("running", [True, False])
def test_render_and_parse_pause_the_collector(name: str, running: bool) -> None:
    """Rendering and reading a request make thousands of containers that hold no
    cycles: the collector is paused while they are made (no collection starts,
    however low its threshold), and given back as it was found, running or
    paused by the application, when the body is refused too."""
    conversation = Conversation(
        [
            canisters.Supervisor("Be brief."),
            *[
                turn
                for number in range(50)
                for turn in (
                    canisters.User(f"question {number}"),
                    canisters.Assistant(f"answer {number}"),
                )
            ],
        ]
    )
    normalizer = providers.get(name)
    body = normalizer.render_request(conversation)
    render, parse = normalizer.render_request, normalizer.parse_request
    # Calling them makes a container or two (the options, a bound method)
    # before the collector pauses: one collection each at most.
    few = (0, 1) if running else (0,)
    was = gc.isenabled()
    try:
        (gc.enable if running else gc.disable)()
        # What the threshold does to a collector left running.
        control = _collections_during(lambda: [{"a": [n]} for n in range(100)])
        assert control == (control[0], running)
        assert (control[0] >= 50) is running
        rendered: list[Any] = []
        started, after = _collections_during(
            lambda: rendered.append(render(conversation))
        )
        assert started in few
        assert after is running
        assert rendered == [body]
        parsed: list[Conversation] = []
        started, after = _collections_during(lambda: parsed.append(parse(body)))
        assert started in few
        assert after is running
        assert [canister.content for canister in parsed[0]] == [
            canister.content for canister in conversation
        ]

        def refused() -> None:
            with pytest.raises(canisters.ProviderError):
                normalizer.parse_request({"messages": 5, "contents": 5, "input": 5})
            with pytest.raises(canisters.ProviderError):
                normalizer.render_request("not a conversation")  # type: ignore[arg-type]

        assert _collections_during(refused)[1] is running
    finally:
        (gc.enable if was else gc.disable)()


@pytest.mark.parametrize(
    "net",
    [
        lambda f: common.guarded_keeping("messages")(f),
        lambda f: common.guarded_reading("messages")(lambda body: f(body, [])),
        lambda f: common.guarded(lambda body: f(body, [])),
    ],
    ids=["guarded_keeping", "guarded_reading", "guarded"],
)
@pytest.mark.parametrize(
    "raised", [KeyboardInterrupt, ValueError, None], ids=["interrupt", "error", "none"]
)
def test_the_nets_give_the_collector_back(
    net: Any, raised: type[BaseException] | None
) -> None:
    """A parser under a net runs with the collector paused, and the collector
    runs again afterwards whatever the parser does: returns, raises an error
    (told as MalformedPayload), or is interrupted."""
    seen: list[bool] = []

    def parser(body: Any, kept: list[Any]) -> str:
        seen.append(gc.isenabled())
        if raised is not None:
            raise raised("stop")
        return "read"

    parse = net(parser)
    was = gc.isenabled()
    gc.enable()
    try:
        if raised is None:
            assert parse({"messages": []}) == "read"
        else:
            expected = KeyboardInterrupt if raised is KeyboardInterrupt else Exception
            with pytest.raises(expected):
                parse({"messages": []})
        assert gc.isenabled()
    finally:
        (gc.enable if was else gc.disable)()
    assert seen == [False]
