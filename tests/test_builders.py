"""MessageBuilder and ResultBuilder."""

from __future__ import annotations

import pytest

import canisters as c


def test_next_and_continue_step() -> None:
    last = c.User("hi", step=4, trace_id="t")
    assert c.MessageBuilder.next_step(last).step == 5
    assert c.MessageBuilder.continue_step(last).step == 4
    assert c.MessageBuilder.next_step(7).step == 8
    assert c.MessageBuilder.continue_step(7).step == 7
    assert c.MessageBuilder.next_step().step == 0
    assert c.MessageBuilder.next_step(c.User("x")).step == 0
    with pytest.raises(c.BuilderError):
        c.MessageBuilder.next_step(-1)
    with pytest.raises(c.BuilderError):
        c.MessageBuilder.next_step("three")  # type: ignore[arg-type]


def test_builds_interleaved_content_in_order() -> None:
    last = c.Assistant("previous", step=1, trace_id="trace")
    builder = c.MessageBuilder.continue_step(last, policy="planner")
    builder.add_image("girl wearing a hat", "https://example.com/1.png")
    builder.add_image("fancy dress", b"\x89PNG", mime_type="image/png")
    builder.add_text("Take the dress from the second image.")
    builder.add_audio(None, "sha256:" + "a" * 64)
    builder.add_video("clip", "https://example.com/v.mp4")
    builder.add_file("report", b"%PDF-1.7", filename="r.pdf")
    message = builder.build()
    assert message.role is c.Role.User and message.step == 1
    assert message.policy == "planner" and message.trace_id == "trace"
    assert message.parent_id == last.id
    types = [part.type for part in message.content]
    assert types == ["image", "image", "text", "audio", "video", "file"]
    first, second = message.content[0], message.content[1]
    assert isinstance(first, c.Image) and first.hint == "girl wearing a hat"
    assert isinstance(second, c.Image) and second.data == b"\x89PNG"
    audio = message.content[3]
    assert isinstance(audio, c.Audio) and audio.content_id == "sha256:" + "a" * 64
    document = message.content[5]
    assert isinstance(document, c.File) and document.filename == "r.pdf"


def test_bad_media_is_a_builder_error() -> None:
    builder = c.MessageBuilder.next_step()
    with pytest.raises(c.BuilderError):
        builder.add_image("x", 42)  # type: ignore[arg-type]
    with pytest.raises(c.BuilderError):
        builder.add_image("x", "not a url")


def test_invocations_get_unique_ids_and_the_step() -> None:
    builder = c.MessageBuilder.next_step(2, role=c.Role.Assistant)
    builder.add_text("Let me check.")
    calls = [builder.add_invocation("search", {"q": str(i)}) for i in range(50)]
    assert len({call.invocation_id for call in calls}) == 50
    assert all(call.step == 3 for call in calls)
    assert builder.last_invocation == calls[-1]
    everything = builder.build_all()
    assert everything[0].role is c.Role.Assistant and everything[1:] == tuple(calls)
    with pytest.raises(c.BuilderError, match="already used"):
        builder.add_invocation("x", invocation_id=calls[0].invocation_id)
    with pytest.raises(c.BuilderError, match="name"):
        builder.add_invocation("")
    with pytest.raises(c.BuilderError, match="mapping"):
        builder.add_invocation("x", [1, 2])  # type: ignore[arg-type]


def test_builder_refuses_non_content_roles() -> None:
    with pytest.raises(c.BuilderError):
        c.MessageBuilder.next_step(role=c.Role.Result)


def test_result_builder_success_and_error() -> None:
    call = c.Invocation("search", {"q": "x"}, step=3, trace_id="t")
    ok = c.ResultBuilder.respond_to(call).success({"hits": [1, 2]})
    assert (ok.invocation_id, ok.name, ok.step, ok.trace_id) == (
        call.invocation_id,
        "search",
        3,
        "t",
    )
    assert ok.policy == "runtime" and ok.parent_id == call.id
    assert ok.content == (c.Text('{"hits":[1,2]}', "application/json"),)
    assert c.ResultBuilder.respond_to(call).success("plain").content == (
        c.Text("plain"),
    )
    image = c.Image(url="https://e.com/x.png")
    assert c.ResultBuilder.respond_to(call).success([image]).content == (image,)
    failed = c.ResultBuilder.respond_to(call).error(
        "TIMEOUT", "took too long", retryable=True
    )
    assert failed.error == c.ErrorInfo("TIMEOUT", "took too long", True)
    c.validate([call, ok])


def test_result_builder_refuses_mismatches() -> None:
    call = c.Invocation("search")
    builder = c.ResultBuilder.respond_to(call)
    with pytest.raises(c.BuilderError, match="invocation id"):
        builder.success("x", invocation_id="other")
    with pytest.raises(c.BuilderError, match="name"):
        builder.error("E", "m", name="other")
    assert builder.success("x", invocation_id=call.invocation_id, name="search")
    with pytest.raises(c.BuilderError):
        c.ResultBuilder.respond_to(c.User("x"))  # type: ignore[arg-type]
    with pytest.raises(c.BuilderError, match="JSON"):
        builder.success(object())
