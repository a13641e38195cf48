"""canisters convert --from/--to pydantic-ai, langchain and otel."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import canisters as c
from canisters.cli import run
from canisters.interop import langchain, otel, pydantic_ai

pytest.importorskip("pydantic_ai")
pytest.importorskip("langchain_core")

CONVERSATION = c.Conversation(
    [
        c.Supervisor("Be brief."),
        c.User("Weather in Paris?"),
        c.Invocation("weather", {"city": "Paris"}, invocation_id="call-1"),
        c.Result("call-1", "weather", "rainy"),
        c.Assistant("It is rainy.", metadata=c.Metadata(finish_reason="stop")),
    ]
)


def _convert(
    capsys: pytest.CaptureFixture[str], source: str, target: str, path: Path
) -> tuple[int, str, str]:
    code = run(["convert", "--from", source, "--to", target, str(path)])
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def _roles(conversation: c.Conversation) -> list[c.Role]:
    return [canister.role for canister in conversation]


@pytest.mark.parametrize("form", ["pydantic-ai", "langchain", "otel"])
def test_convert_from_and_to_each_form(
    form: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    neutral = tmp_path / "conversation.json"
    neutral.write_text(c.to_json(CONVERSATION))
    code, out, _err = _convert(capsys, "canisters", form, neutral)
    assert code == 0
    converted = tmp_path / f"{form}.json"
    converted.write_text(out)
    if form == "pydantic-ai":
        read = pydantic_ai.from_json(out)
    elif form == "langchain":
        read = langchain.from_json(out)
    else:
        read = otel.from_otel(json.loads(out))
    assert _roles(read) == _roles(CONVERSATION)
    code, out, _err = _convert(capsys, form, "canisters", converted)
    assert code == 0
    back = c.from_json(out)
    assert isinstance(back, c.Conversation)
    assert _roles(back) == _roles(CONVERSATION)
    assert back.results()[0].name == "weather"


def test_convert_between_libraries_lists_losses(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    history = tmp_path / "history.json"
    history.write_bytes(pydantic_ai.to_json(CONVERSATION))
    code, out, err = _convert(capsys, "pydantic-ai", "otel", history)
    assert code == 0
    attributes = json.loads(out)
    assert attributes[otel.SYSTEM_INSTRUCTIONS] == [
        {"type": "text", "content": "Be brief."}
    ]
    assert "timestamp not kept" in err  # OTel holds no timestamps


def test_bad_interop_input_is_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    bad = tmp_path / "bad.json"
    bad.write_text('[{"kind": "nonsense"}]')
    for form in ("pydantic-ai", "langchain", "otel"):
        code, _out, err = _convert(capsys, form, "canisters", bad)
        assert code == 2
        assert err.startswith("canisters: error: ") and err.count("\n") == 1
