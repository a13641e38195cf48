"""Canisters written as OpenAI Responses items (the general way): the ``input``
items of a request and the ``output`` items of a response, for
:mod:`.messages`, :mod:`.response` and :mod:`.fast`."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ...content import Text
from ...exceptions import _excerpt
from ...protocols import Canister, Role
from .. import _common as common
from .._common import (
    ASSISTANT,
    SUPERVISOR,
    USER,
    b64encode,
    data_url,
    describe,
    inline_data,
    media_bytes,
    media_mime,
    mine,
    reasoning_action,
    render_arguments,
    synthesize_id,
)
from .._rules import documents, thinking
from . import provided
from .wire import BASE, Wire

_AUDIO_BACK = {"audio/wav": "wav", "audio/x-wav": "wav", "audio/mpeg": "mp3"}
# A request's message role for a canister holding one plain text.
_PLAIN_ROLE = {USER: "user", SUPERVISOR: "developer", ASSISTANT: "assistant"}
_TEXTS = frozenset({"text", "cited_text"})  # a cited text: annotations kept


class _Renderer:
    def __init__(
        self, options: common.Options, response: bool, wire: Wire = BASE
    ) -> None:
        self.options = options
        self.response = response
        self.wire = wire

    def media(self, part: Any, where: str, *, tool: bool) -> dict[str, Any] | None:
        extras = mine(part, self.wire.name)
        reference = part.refs.get(self.wire.ref)
        if (
            part.type in ("image", "file")
            and reference is None
            and part.url is None
            and not part.content_id
            and inline_data(part) is None
        ):
            # Only another format's file id locates it (OpenAI's store is not
            # the dialect's, nor another provider's).
            return self.refuse(
                where, f"{part.type} held only by another format's file id"
            )
        rendered: dict[str, Any]
        if part.type == "image":
            rendered = {"type": "input_image"}
            if part.url is not None and not extras.get("data_url"):
                rendered["image_url"] = part.url
            elif (
                inline_data(part) is not None or part.url is not None or part.content_id
            ):
                data = media_bytes(part, self.options)
                if data is None:
                    if reference is None:
                        return self.refuse(where, "give a resolver for its content id")
                else:
                    rendered["image_url"] = data_url(media_mime(part, data), data)
            if reference is not None:
                rendered["file_id"] = reference
            rendered.update(extras.get("part", {"detail": "auto"}))
            return rendered
        if part.type == "file":
            rendered = {"type": "input_file"}
            if part.url is not None and not part.url.startswith("data:"):
                rendered["file_url"] = part.url
            elif (
                inline_data(part) is not None or part.url is not None or part.content_id
            ):
                data = media_bytes(part, self.options)
                if data is None:
                    if reference is None:
                        return self.refuse(where, "give a resolver for its content id")
                else:
                    raw = extras.get("raw_base64")
                    if raw is True:
                        rendered["file_data"] = b64encode(data)
                    elif isinstance(raw, str):
                        rendered["file_data"] = raw
                    else:
                        rendered["file_data"] = data_url(media_mime(part, data), data)
            if reference is not None:
                rendered["file_id"] = reference
            if part.filename is not None:
                rendered["filename"] = part.filename
            elif "file_data" in rendered and not extras:
                # The API wants a filename with inline file data.
                rendered["filename"] = part.hint or "file"
            rendered.update(extras.get("part", {}))
            return rendered
        if part.type == "audio" and not tool and extras.get("input_audio"):
            # Only audio that came as input_audio goes back: the API and the SDK
            # types take no other audio input.
            data = media_bytes(part, self.options)
            mime = part.mime_type or media_mime(part, data)
            audio_format = extras.get("format", _AUDIO_BACK.get(mime))
            if data is None or audio_format is None:
                return self.refuse(where, "audio input needs wav or mp3 bytes")
            raw = extras.get("raw")
            rendered = {
                "type": "input_audio",
                "input_audio": {
                    "data": raw if isinstance(raw, str) else b64encode(data),
                    "format": audio_format,
                },
            }
            rendered.update(extras.get("part", {}))
            return rendered
        return self.refuse(where, f"the Responses API cannot take {part.type} here")

    def refuse(
        self, where: str, reason: str, *, output: bool = False
    ) -> dict[str, Any] | None:
        text = common.unsupported(self.options, self.wire.name, where, reason)
        if text is None:
            return None
        return {"type": "output_text" if output else "input_text", "text": text}

    def parts(
        self, canister: Any, index: int, parts: Any, *, output: bool, tool: bool = False
    ) -> list[dict[str, Any]]:
        rendered: list[dict[str, Any]] = []
        for number, part in parts:
            extras = mine(part, self.wire.name)
            if part.type in _TEXTS:
                if "raw" in extras and not part.text:
                    rendered.append(dict(extras["raw"]))  # a part kept whole
                    continue
                if extras.get("refusal"):
                    wire = {"type": "refusal", "refusal": part.text}
                elif output or extras.get("output"):
                    wire = {"type": "output_text", "text": part.text}
                    if "part" not in extras and self.response:
                        wire["annotations"] = []
                else:
                    wire = {"type": "input_text", "text": part.text}
                wire.update(extras.get("part", {}))
                if part.type == "cited_text" and part.citations:
                    where = describe(index, canister, number, part)
                    kept = wire.get("annotations")
                    if wire["type"] == "output_text" and self.response:
                        wire["annotations"] = provided.annotations_of(
                            part, kept, self.options, where, self.wire.name
                        )
                    elif not provided.annotated(part, kept):
                        # Rule: annotations are an output text's only, and in
                        # a request's input only on an output message of
                        # OpenAI's (which has its item id).
                        common.unsupported(
                            self.options,
                            self.wire.name,
                            where,
                            f"citations have no place in {wire['type']} of a request",
                        )
                rendered.append(wire)
                continue
            where = describe(index, canister, number, part)
            if part.type in ("image", "file", "audio", "video") and output:
                # Rule: an assistant message holds output_text and refusal only.
                media = self.refuse(
                    where, f"{part.type} in an assistant message", output=True
                )
                if media is not None:
                    rendered.append(media)
            elif part.type in ("image", "file", "audio", "video"):
                media = self.media(part, where, tool=tool)
                if media is not None:
                    rendered.append(media)
            elif part.type == "reasoning":
                action = reasoning_action(
                    part, self.wire.name, self.options, where, native=False
                )
                if action == "text":
                    rendered.append(
                        {"type": "input_text", "text": thinking.as_text(part)}
                    )
            else:
                media = self.refuse(
                    where, f"unknown part type {_excerpt(part.type)}", output=output
                )
                if media is not None:
                    rendered.append(media)
        return rendered

    def message(
        self,
        role: str,
        canister: Any,
        index: int,
        parts: Any,
        info: Mapping[str, Any],
        keys: Mapping[str, Any] | None = None,
    ) -> dict[str, Any]:
        output = role == "assistant"
        rendered = self.parts(canister, index, parts, output=output)
        content: Any = rendered
        listed = info.get("list", self.response and output)
        simple = all(
            part.get("type") in ("input_text", "output_text")
            and set(part) == {"type", "text"}
            for part in rendered
        )
        if not listed and simple and len(rendered) <= 1:
            content = rendered[0]["text"] if rendered else ""
        if (
            output
            and not rendered
            and parts
            and mine(parts[0][1], self.wire.name).get("empty")
        ):
            content = [] if listed else ""
        message: dict[str, Any] = {}
        typed = info.get("typed", self.wire.typed or (self.response and output))
        if typed:
            message["type"] = "message"
        message["role"] = role
        message["content"] = content
        if keys is None:
            keys = info.get("rest")  # where the keys were stored before
        if keys is not None:
            message.update(keys)
        elif self.response and output:
            message["id"] = synthesize_id("msg_", index, canister.id)
            message["status"] = "completed"
        return message

    def reasoning(self, part: Any, index: int) -> dict[str, Any]:
        extras = mine(part, self.wire.name)
        item: dict[str, Any] = {"type": "reasoning"}
        if part.id is not None:
            item["id"] = part.id
        elif "item" not in extras and not extras.get("no_id"):
            item["id"] = synthesize_id("rs_", index, part.text, part.redacted)
        content = extras.get("content") if self.wire.raw_reasoning else None
        if content is not None:
            # Raw reasoning: the part's text (or its parts, as they came).
            item["content"] = (
                [{"type": "reasoning_text", "text": part.text}]
                if content is True
                else content
            )
        if "summary" in extras:
            item["summary"] = extras["summary"]
        elif content is not None:
            item["summary"] = []
        else:
            item["summary"] = [{"type": "summary_text", "text": part.text}]
        if part.redacted is not None:
            item["encrypted_content"] = part.redacted
        item.update(extras.get("item", {}))
        return item

    def raw_reasoning(self, part: Any, index: int) -> dict[str, Any]:
        """Another format's plain reasoning as a reasoning item of raw text
        (its id made here: the SDK's item type requires one)."""
        return {
            "type": "reasoning",
            "id": synthesize_id("rs_", index, part.text, None),
            "summary": [],
            "content": [{"type": "reasoning_text", "text": part.text}],
        }

    def assistant(self, canister: Any, index: int) -> list[dict[str, Any]]:
        extras = mine(canister, self.wire.name)
        if "raw" in extras:
            return [dict(extras["raw"])]
        items: list[dict[str, Any]] = []
        run: list[tuple[int, Any]] = []
        info: Mapping[str, Any] = {}
        keys: Mapping[str, Any] | None = None

        def close() -> None:
            if run:
                items.append(
                    self.message("assistant", canister, index, list(run), info, keys)
                )
                run.clear()

        for number, part in enumerate(canister.content):
            part_extras = mine(part, self.wire.name)
            if part.type == "reasoning":
                close()
                where = describe(index, canister, number, part)
                if part.provider == self.wire.name:
                    items.append(self.reasoning(part, index))
                    continue
                action = reasoning_action(
                    part,
                    self.wire.name,
                    self.options,
                    where,
                    native=False,
                    plain=self.wire.raw_reasoning,
                )
                if action == "native":  # plain reasoning as raw reasoning text
                    items.append(self.raw_reasoning(part, index))
                    continue
                if action == "text":
                    info, keys = {}, None
                    run.append((number, Text(thinking.as_text(part))))
                continue
            if "item" in part_extras:
                close()
                info, keys = part_extras["item"], part_extras.get("keys")
            elif not run:
                info, keys = {}, None
            run.append((number, part))
            if not info and not self.response:
                # A request's assistant message takes one output_text only, unless
                # it is a whole output item (id, status): one message per text
                # (or per placeholder of media, which it refuses).
                close()
        close()
        if not items and not canister.content and not (self.response and not extras):
            # A reply's turn that only calls tools has no message item of its own.
            items.append(self.message("assistant", canister, index, [], {}))
        return items

    def call(self, canister: Any, index: int) -> dict[str, Any]:
        extras = mine(canister, self.wire.name)
        item: dict[str, Any] = {
            "type": "function_call",
            "call_id": canister.invocation_id,
            "name": canister.name,
            "arguments": render_arguments(canister.arguments, extras.get("arguments")),
        }
        keys = extras.get("keys", extras.get("item"))  # "item": stored before
        if keys is not None:
            item.update(keys)
        elif self.response:
            item["id"] = synthesize_id("fc_", index, canister.invocation_id)
            item["status"] = "completed"
        return item

    def result(self, canister: Any, index: int) -> dict[str, Any]:
        extras = mine(canister, self.wire.name)
        output: Any
        if canister.error is not None:
            output = common.encode_error_text(canister.error)
        else:
            rendered = self.parts(
                canister,
                index,
                list(enumerate(canister.content)),
                output=False,
                tool=True,
            )
            simple = all(
                part.get("type") == "input_text" and set(part) == {"type", "text"}
                for part in rendered
            )
            if simple and len(rendered) <= 1 and not extras.get("list"):
                output = rendered[0]["text"] if rendered else ""
            else:
                output = rendered
        item: dict[str, Any] = {
            "type": "function_call_output",
            "call_id": canister.invocation_id,
            "output": output,
        }
        item.update(extras.get("keys", extras.get("item", {})))
        return item

    def items(self, canisters: list[tuple[int, Canister]]) -> list[dict[str, Any]]:
        items: list[dict[str, Any]] = []
        for index, canister in canisters:
            extras = mine(canister, self.wire.name)
            match canister.role:
                case Role.User:
                    if extras.get("string"):
                        self.options.note(
                            "downgraded",
                            self.wire.name,
                            describe(index, canister),
                            "input string",
                        )
                    items.append(
                        self.message(
                            "user",
                            canister,
                            index,
                            list(enumerate(canister.content)),  # type: ignore[attr-defined]
                            extras.get("item", {}),
                            extras.get("keys"),
                        )
                    )
                case Role.Supervisor:
                    items.append(
                        self.message(
                            extras.get("role", "developer"),
                            canister,
                            index,
                            list(enumerate(canister.content)),  # type: ignore[attr-defined]
                            extras.get("item", {}),
                            extras.get("keys"),
                        )
                    )
                case Role.Document:
                    document: Any = canister
                    if extras.get("item_reference"):
                        item = {"type": "item_reference", "id": document.document_id}
                        item.update(extras.get("item", {}))
                        items.append(item)
                        continue
                    canister = documents.as_user_content(
                        canister,
                        self.options,
                        self.wire.name,
                        describe(index, canister),
                    )
                    items.append(
                        self.message(
                            "user",
                            canister,
                            index,
                            list(enumerate(canister.content)),
                            {},
                        )
                    )
                case Role.Assistant:
                    items.extend(self.assistant(canister, index))
                case Role.Invocation:
                    items.append(self.call(canister, index))
                case Role.Result:
                    items.append(self.result(canister, index))
        return items
