"""ConverseStream: the events as boto3 yields them decoded (``{"messageStart":
{...}}``, ``contentBlockStart``, ``contentBlockDelta``, ``contentBlockStop``,
``messageStop``, ``metadata``), accumulated to the reply Converse sends
whole."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from canisters.conversation import Conversation
from canisters.exceptions import MalformedPayload
from canisters.providers import kit, streams

from .errors import _EVENTS, DIALECT
from .messages import NAME
from .response import parse_response

_parse_response = kit.guarded(parse_response)


class BedrockConverseAccumulator(kit.Accumulator):
    """Accumulates one ConverseStream: text, reasoning (text, signature,
    redacted content), tool input (JSON text in pieces), a server tool's result
    and citations grow per
    ``contentBlockIndex``; ``messageStop`` gives the stop reason and
    ``additionalModelResponseFields``, ``metadata`` the usage, metrics and
    trace; the stream ends with the second of these two (either comes first).
    An exception event raises."""

    provider = NAME

    def __init__(self) -> None:
        super().__init__()
        self._role = "assistant"
        self._blocks: dict[int, dict[str, Any]] = {}
        self._end: dict[str, Any] = {}
        self._stopped = False
        self._metadata = False

    def _expected(self) -> str:
        return "the messageStop and metadata events"

    def _parse(self, body: Mapping[str, Any]) -> Conversation:
        return _parse_response(body)

    def _block(self, event: Mapping[str, Any], path: str) -> dict[str, Any]:
        index = event.get("contentBlockIndex")
        if type(index) is not int:
            raise MalformedPayload("expected an integer", f"{path}.contentBlockIndex")
        return self._blocks.setdefault(index, {})

    def _absorb(self, event: Mapping[str, Any], path: str) -> bool:
        if len(event) == 1 and next(iter(event)) in _EVENTS:
            raise DIALECT.stream_error(event, path)
        if len(event) != 1:
            raise MalformedPayload("expected one event", path)
        kind, value = next(iter(event.items()))
        where = f"{path}.{kind}"
        value = kit.expect_mapping(value, where)
        if kind == "messageStart":
            self._role = kit.expect_str(value.get("role"), f"{where}.role")
        elif kind == "contentBlockStart":
            start = kit.expect_mapping(value.get("start"), f"{where}.start")
            block = self._block(value, where)
            if "toolUse" in start:
                use = kit.expect_mapping(start["toolUse"], f"{where}.start.toolUse")
                block["toolUse"] = {**use, "input": ""}
            else:
                block.update(streams.fresh(dict(start)))
        elif kind == "contentBlockDelta":
            self._delta(value, where)
        elif kind == "messageStop":
            self._end.update(value)
            self._stopped = True
            return self._metadata
        elif kind == "metadata":
            self._end.update(value)
            self._metadata = True
            return self._stopped
        elif kind != "contentBlockStop":
            self._end.setdefault("unknownEvents", []).append(dict(event))
        return False

    def _delta(self, value: Mapping[str, Any], where: str) -> None:
        block = self._block(value, where)
        delta = kit.expect_mapping(value.get("delta"), f"{where}.delta")
        for key, piece in delta.items():
            at = f"{where}.delta.{key}"
            if key == "text":
                self._grow(block, "text", kit.expect_str(piece, at), at)
            elif key == "toolUse":
                use = block.setdefault("toolUse", {"input": ""})
                text = kit.expect_mapping(piece, at).get("input", "")
                self._grow(use, "input", kit.expect_str(text, f"{at}.input"), at)
            elif key == "reasoningContent":
                held = block.setdefault("reasoningContent", {})
                for name, part in kit.expect_mapping(piece, at).items():
                    if name == "redactedContent":
                        held["redactedContent"] = part
                        continue
                    inner = held.setdefault("reasoningText", {})
                    self._grow(inner, name, kit.expect_str(part, f"{at}.{name}"), at)
            elif key == "toolResult":  # a server tool's result, in pieces
                held = block.setdefault("toolResult", {})
                items = kit.expect_list(piece, at)
                held.setdefault("content", []).extend(streams.fresh(items))
            elif key == "citation":
                held = block.setdefault("citationsContent", {"citations": []})
                held["citations"].append(streams.fresh(piece))
            else:
                block.setdefault("unknownDeltas", []).append(
                    {key: streams.fresh(piece)}
                )

    def _body(self, mode: str, note: Any) -> tuple[Mapping[str, Any], dict[str, str]]:
        content: list[Any] = []
        for index in sorted(self._blocks):
            block = self._blocks[index]
            if "toolUse" in block:
                use = dict(block["toolUse"])
                raw = "".join(use.get("input") or "") or "{}"
                where = f"$.output.message.content[{index}].toolUse.input"
                use["input"] = kit.parse_arguments(raw, where)[0]
                content.append({"toolUse": use})
            elif "citationsContent" in block:
                text = "".join(block.get("text", ""))
                held = block["citationsContent"]
                content.append(
                    {"citationsContent": {"content": [{"text": text}], **held}}
                )
            elif "text" in block:
                content.append({"text": "".join(block["text"])})
            elif "reasoningContent" in block:
                held = block["reasoningContent"]
                if "reasoningText" in held:
                    inner = {k: "".join(v) for k, v in held["reasoningText"].items()}
                    content.append({"reasoningContent": {"reasoningText": inner}})
                else:
                    content.append({"reasoningContent": dict(held)})
            else:
                content.append(dict(block))
        message = {"role": self._role, "content": content}
        return {"output": {"message": message}, **self._end}, {}
