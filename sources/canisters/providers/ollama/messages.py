"""Ollama ``/api/chat`` messages: the conversation, both directions.

Ollama messages carry a string ``content``, raw base64 ``images`` (no media type,
no URLs: URL images need a resolver, other media follow the unsupported-content
policy), ``tool_calls`` with arguments as objects, ``thinking`` text without a
signature, and tool results as ``role: "tool"`` messages matched to their call
by ``tool_name`` and order. Calls carry no id on the wire: parsing makes up a
stable one (the same body always gives the same ids) and rendering leaves it
out again.

Provider-only fields ride in ``extras["ollama"]``: ``content`` (``None`` when
the message had no ``content`` key), ``images`` and ``tool_calls`` (``None`` for
a null echo, ``[]`` when sent empty), ``tool_name`` (``None`` when a tool message
had none, ``"null"`` when it was null), ``message`` (keys the message's role does
not model, kept as sent: ``thinking``, ``tool_calls`` or ``tool_name`` on a user
message, say, and unknown keys), ``raw`` on images (base64 that is not
canonical), ``id`` / ``function`` / ``call`` on invocations, and ``response``
(``created_at``, ``done``, durations...) on the first canister of a response.
Nothing a request body holds is lost: rendering gives it back exactly.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime
from typing import Any, Final

from ..._frozen import EMPTY, FrozenDict, freeze
from ...canisters import ErrorInfo, Result, now
from ...content import Image, Text
from ...conversation import Conversation
from ...exceptions import MalformedPayload
from ...protocols import Canister, Role
from .. import _common as common
from .._common import (
    ASSISTANT,
    DOCUMENT,
    INVOCATION,
    RESULT,
    b64encode,
    encode_error_text,
    expect_list,
    expect_mapping,
    expect_str,
    mine,
    new_assistant,
    new_conversation,
    new_invocation,
    new_reasoning,
    new_result,
    new_supervisor,
    new_user,
    plain_text,
    rest,
    synthesize_id,
)
from .._rules import documents, kept
from .._rules.thinking import as_text as thinking_text

__all__ = ["NAME", "REQUEST_FIELDS", "parse_request", "render_request"]

NAME = "ollama"
"""The provider name."""

REQUEST_FIELDS = ("messages",)
"""The request fields that carry the conversation."""

_MESSAGE_KEYS = {
    "system": frozenset({"role", "content", "images"}),
    "user": frozenset({"role", "content", "images"}),
    "assistant": frozenset({"role", "content", "images", "thinking", "tool_calls"}),
    "tool": frozenset({"role", "content", "images", "tool_name"}),
}
"""The keys each role's messages model; any other key (``thinking`` on a user
message, say) rides in ``extras["ollama"]["message"]`` as it was sent."""
_CALL_KEYS = frozenset({"function", "id"})

# The keys of a message, call or function no field models, kept as sent. A
# call's "type" can only be "function" (the parser refuses another).
kept.declare(NAME, canister=("message", "function", "call"), quiet={"type": "function"})
_FUNCTION_KEYS = frozenset({"name", "arguments"})
_WIRE_ROLE = {
    Role.Supervisor: "system",
    Role.User: "user",
    Role.Document: "user",
    Role.Assistant: "assistant",
    Role.Invocation: "assistant",
    Role.Result: "tool",
}


# Parsing --------------------------------------------------------------------------

# The general way checks every value it reads (and names the path of a bad one),
# so it builds parts and canisters through the trusted constructors: attrs'
# converters and checks would only repeat those checks. The canisters of one body
# share the moment it was read.


def _image(text: str, path: str) -> Image:
    """The image of one base64 string of a message's ``images``."""
    data, exact = common.b64read_exact(text, path)
    extras = EMPTY if exact else FrozenDict({NAME: {"raw": text}})
    image: Image = common.new_image(data, None, None, EMPTY, None, None, None, extras)
    return image


def _images(
    message: Mapping[str, Any], path: str, extras: dict[str, Any]
) -> list[Image]:
    if "images" not in message:
        return []
    raw = message["images"]
    if raw is None:
        extras["images"] = None
        return []
    listed = expect_list(raw, f"{path}.images")
    if not listed:
        extras["images"] = []  # sent empty
    return [
        _image(
            expect_str(value, f"{path}.images[{number}]"), f"{path}.images[{number}]"
        )
        for number, value in enumerate(listed)
    ]


def _text(message: Mapping[str, Any], path: str, extras: dict[str, Any]) -> list[Text]:
    if "content" not in message:
        extras["content"] = None
        return []
    content = message["content"]
    if content is None:
        extras["content"] = "null"
        return []
    text = expect_str(content, f"{path}.content")
    return [plain_text(text)] if text else []


def _error(text: str) -> ErrorInfo | None:
    """The error a tool message's ``text`` holds when it is exactly what rendering
    writes; other text (the same object spaced otherwise, say) stays text."""
    error = common.decode_error_text(text)
    return error if error is not None and encode_error_text(error) == text else None


_wrap = common.holder(NAME)
"""The extras holding a mapping whole as this provider's entry."""


_LEAD: Final = {"lead": True}
_SYNTHESIZED: Final = {"id": False}


class _Parser:
    """Reads the messages of one body in order, pairing results with calls."""

    def __init__(self, moment: datetime) -> None:
        self.open: list[tuple[str, str]] = []
        self.moment = moment

    def message(self, index: int, raw: Any, path: str = "") -> list[Canister]:
        """The canisters of one message, read the general way."""
        path = path or f"$.messages[{index}]"
        message = expect_mapping(raw, path)
        role = expect_str(message.get("role"), f"{path}.role")
        known = _MESSAGE_KEYS.get(role)
        if known is None:
            # A message of a role not known here, kept whole as a canister that
            # goes back to Ollama only.
            marks: dict[str, Any] = {"raw": dict(message)}
            common.bind(marks, [role])
            return [new_assistant(self.moment, _wrap(marks), ())]
        extras: dict[str, Any] = {}
        other = rest(message, known)
        if other:
            extras["message"] = other
        if role == "system" or role == "user":
            texts = _text(message, path, extras)
            images = _images(message, path, extras)
            build = new_supervisor if role == "system" else new_user
            return [build(self.moment, _wrap(extras), (*texts, *images))]
        if role == "assistant":
            return self.assistant(index, message, path, extras)
        return [self.tool(index, message, path, extras)]

    def assistant(
        self, index: int, message: Mapping[str, Any], path: str, extras: dict[str, Any]
    ) -> list[Canister]:
        content: list[Any] = []
        if "thinking" in message and message["thinking"] is not None:
            thinking = expect_str(message["thinking"], f"{path}.thinking")
            content.append(new_reasoning(thinking, None, None, NAME, None, EMPTY))
        elif "thinking" in message:
            extras["thinking"] = None
        content.extend(_text(message, path, extras))
        content.extend(_images(message, path, extras))
        calls = message.get("tool_calls")
        if calls is None:
            if "tool_calls" in message:
                extras["tool_calls"] = None
            return [new_assistant(self.moment, _wrap(extras), tuple(content))]
        listed = expect_list(calls, f"{path}.tool_calls")
        if not listed:
            extras["tool_calls"] = []  # sent empty
        # A message holding only tool calls needs no assistant canister: its
        # first call says it leads a message of its own.
        lead = bool(listed) and not content and not extras
        canisters: list[Canister] = []
        if not lead:
            canisters.append(new_assistant(self.moment, _wrap(extras), tuple(content)))
        for number, value in enumerate(listed):
            call_path = f"{path}.tool_calls[{number}]"
            call = expect_mapping(value, call_path)
            function = expect_mapping(call.get("function"), f"{call_path}.function")
            name = expect_str(function.get("name"), f"{call_path}.function.name")
            call_extras: dict[str, Any] = {}
            if "arguments" not in function or function["arguments"] is None:
                # Ollama may leave the arguments out of a call.
                call_extras["arguments"] = function.get("arguments", "absent")
                arguments: Mapping[str, Any] = EMPTY
            else:
                arguments = freeze(
                    expect_mapping(
                        function["arguments"], f"{call_path}.function.arguments"
                    )
                )
            given = call.get("id")
            if given is None:
                invocation_id = synthesize_id("ollama_call_", index, number, name)
                # False: no id key; "null": the key with a null value.
                call_extras["id"] = "null" if "id" in call else False
            else:
                invocation_id = expect_str(given, f"{call_path}.id")
            other = rest(function, _FUNCTION_KEYS)
            if other.get("index", None) == number and type(number) is type(
                other["index"]
            ):
                # The call's place in the message, which the renderer writes.
                del other["index"]
                call_extras["index"] = True
            if other:
                call_extras["function"] = other
            other = rest(call, _CALL_KEYS)
            if other.get("type", "function") != "function":
                raise MalformedPayload('expected "function"', f"{call_path}.type")
            if other:
                call_extras["call"] = other
            if lead and not number:
                call_extras["lead"] = True
            self.open.append((invocation_id, name))
            canisters.append(
                new_invocation(
                    self.moment, _wrap(call_extras), name, arguments, invocation_id
                )
            )
        return canisters

    def tool(
        self, index: int, message: Mapping[str, Any], path: str, extras: dict[str, Any]
    ) -> Canister:
        name_value = message.get("tool_name")
        name = "" if name_value is None else expect_str(name_value, f"{path}.tool_name")
        if name_value is None:
            # None: no tool_name key; "null": the key with a null value.
            extras["tool_name"] = "null" if "tool_name" in message else None
        invocation_id, name = self.answered(
            message.get("tool_call_id"), name, name_value is None, index
        )
        texts = _text(message, path, extras)
        images = _images(message, path, extras)
        error = None
        if len(texts) == 1:
            error = _error(texts[0].text)
            if error is not None:
                texts = []
        result: Result = new_result(
            self.moment, _wrap(extras), invocation_id, name, (*texts, *images), error
        )
        return result

    def answered(
        self, given: object, name: str, nameless: bool, index: int
    ) -> tuple[str, str]:
        """The id of the call a tool message of ``index`` answers, and the tool's
        name (the call's, for a ``nameless`` message), the call no longer open."""
        if isinstance(given, str):
            self.open = [entry for entry in self.open if entry[0] != given]
            return given, name
        for number, (open_id, open_name) in enumerate(self.open):
            # Ollama matches results to calls by name and order.
            if nameless or open_name == name:
                del self.open[number]
                return open_id, open_name
        return synthesize_id("ollama_result_", index, name), name

    def plain(self, index: int, message: dict[str, Any]) -> list[Canister] | None:
        """The canisters of ``message`` when it has one of the common shapes,
        built as :meth:`message` would build them; ``None`` when it has another.

        The shapes: a message whose ``content`` is a string, with no other key
        (any role but ``tool``); a user message with ``images`` beside it; a tool
        message with its ``tool_name``; an assistant message with ``thinking``
        text and ``tool_calls`` (each a ``function`` with a name and arguments
        as an object, and perhaps an ``id``).
        """
        content = message.get("content")
        role = message.get("role")
        if type(content) is not str or type(role) is not str:
            return None
        size = len(message)
        parts: list[Any] = [plain_text(content)] if content else []
        if size == 2:
            build = _PLAIN.get(role)
            if build is None:
                return None  # a tool message without its tool's name
            return [build(self.moment, EMPTY, tuple(parts))]
        if role == "tool":
            name = message.get("tool_name")
            if size != 3 or type(name) is not str:
                return None
            invocation_id, name = self.answered(None, name, False, index)
            error = _error(content) if content else None
            result: Result = new_result(
                self.moment,
                EMPTY,
                invocation_id,
                name,
                () if error is not None else tuple(parts),
                error,
            )
            return [result]
        if role == "user":
            images = message.get("images")
            if size != 3 or type(images) is not list or not images:
                return None
            for number, text in enumerate(images):
                if type(text) is not str:
                    return None
                parts.append(_image(text, f"$.messages[{index}].images[{number}]"))
            return [new_user(self.moment, EMPTY, tuple(parts))]
        if role != "assistant":
            return None
        thinking = message.get("thinking")
        calls = message.get("tool_calls")
        if size != 2 + (thinking is not None) + (calls is not None):
            return None  # another key, or one of these as null
        if thinking is not None:
            if type(thinking) is not str:
                return None
            parts.insert(0, new_reasoning(thinking, None, None, NAME, None, EMPTY))
        if calls is None:
            return [new_assistant(self.moment, EMPTY, tuple(parts))]
        if type(calls) is not list or not calls:
            return None  # not a list, or sent empty
        return self.plain_calls(index, calls, parts)

    def plain_calls(
        self, index: int, calls: list[Any], parts: list[Any]
    ) -> list[Canister] | None:
        """The canisters of an assistant message of ``parts`` and ``calls`` (not
        empty) for :meth:`plain`; ``None`` when a call has another shape."""
        made: list[Canister] = []
        if parts:
            made.append(new_assistant(self.moment, EMPTY, tuple(parts)))
        found: list[tuple[str, str]] = []
        for number, call in enumerate(calls):
            if type(call) is not dict:
                return None
            function = call.get("function")
            if type(function) is not dict or len(function) != 2:
                return None
            name, arguments = function.get("name"), function.get("arguments")
            if type(name) is not str or type(arguments) is not dict:
                return None
            identifier = call.get("id")
            if type(identifier) is str and len(call) == 2:
                marks = _LEAD if not made else None
            elif identifier is None and len(call) == 1:
                identifier = synthesize_id("ollama_call_", index, number, name)
                marks = {**_SYNTHESIZED, **_LEAD} if not made else _SYNTHESIZED
            else:
                return None
            found.append((identifier, name))
            extras = FrozenDict({NAME: dict(marks)}) if marks else EMPTY
            made.append(
                new_invocation(
                    self.moment,
                    extras,
                    name,
                    FrozenDict(arguments) if arguments else EMPTY,
                    identifier,
                )
            )
        self.open += found
        return made


_PLAIN: Final = {"system": new_supervisor, "user": new_user, "assistant": new_assistant}


def parse_request(body: object, *, fast: bool = True) -> Conversation:
    """The normalizer's ``parse_request``, unguarded; ``fast=False`` reads every
    message the general way (what the fast way must give, exactly)."""
    mapping = body if type(body) is dict else common.as_mapping(body)
    messages = mapping.get("messages", [])
    if type(messages) is not list:
        messages = expect_list(messages, "$.messages")
    parser = _Parser(now())
    canisters: list[Canister] = []
    for index, message in enumerate(messages):
        # The common shapes are built the fast way; anything else, the general way.
        if fast and type(message) is dict:
            built = parser.plain(index, message)
            if built is not None:
                canisters += built
                continue
        canisters += parser.message(index, message)
    return new_conversation(tuple(canisters))


# Rendering ------------------------------------------------------------------------


class _Renderer:
    def __init__(self, options: common.Options) -> None:
        self.options = options

    def parts(self, canister: Any, index: int, message: dict[str, Any]) -> None:
        """Fill ``content``, ``images`` and ``thinking`` from the canister's parts."""
        extras = mine(canister, NAME)
        texts: list[str] = []
        images: list[str] = []
        thinking: list[str] = []
        for number, part in enumerate(canister.content):
            if part.type == "text":
                texts.append(part.text)
                continue
            where = common.describe(index, canister, number, part)
            match part.type:
                case "reasoning":
                    action = common.reasoning_action(
                        part,
                        NAME,
                        self.options,
                        where,
                        native=False,
                        plain=canister.role is Role.Assistant,
                    )
                    if action == "native":
                        thinking.append(part.text)
                    elif action == "text":
                        texts.append(thinking_text(part))
                case "image":
                    data = common.media_bytes(part, self.options)
                    if data is None:
                        text = common.unsupported(
                            self.options,
                            NAME,
                            where,
                            "Ollama takes images as base64 only; give a resolver",
                        )
                        if text is not None:
                            texts.append(text)
                        continue
                    raw = mine(part, NAME).get("raw")
                    images.append(raw if isinstance(raw, str) else b64encode(data))
                case _:
                    text = common.unsupported(
                        self.options,
                        NAME,
                        where,
                        f"Ollama cannot take {part.type} parts",
                    )
                    if text is not None:
                        texts.append(text)
        if thinking:
            message["thinking"] = "".join(thinking)
        elif "thinking" in extras:
            message["thinking"] = extras["thinking"]
        content = extras.get("content", "string")
        if content == "null" and not texts:
            message["content"] = None
        elif content is not None or texts:
            # Ollama content is one string; several text parts are joined.
            message["content"] = "\n".join(texts)
        if images:
            message["images"] = images
        elif "images" in extras:
            message["images"] = None if extras["images"] is None else []

    def call(self, canister: Any) -> dict[str, Any]:
        extras = mine(canister, NAME)
        function: dict[str, Any] = {"name": canister.name}
        if "arguments" in extras:
            if extras["arguments"] != "absent":
                function["arguments"] = extras["arguments"]
        else:
            function["arguments"] = dict(canister.arguments)
        function.update(extras.get("function", {}))
        call: dict[str, Any] = {"function": function}
        given = extras.get("id")
        if given == "null":
            call = {"id": None, **call}
        elif given is not False:
            call = {"id": canister.invocation_id, **call}
        call.update(extras.get("call", {}))
        return call

    def messages(
        self, conversation: Conversation, *, pairs: bool = True, fast: bool = True
    ) -> list[dict[str, Any]]:
        """The messages; with ``fast``, a canister without Ollama extras holding
        one plain text has its content written directly (what :meth:`parts` would
        write), so that ``fast=False`` gives exactly the same."""
        canisters = common.canisters_of(conversation, NAME)
        if pairs:
            canisters = common.complete_pairs(canisters, self.options, NAME)
        positions: dict[str, int] | None = None  # made when first needed
        rendered: list[dict[str, Any]] = []
        last: Canister | None = None
        for canister in canisters:
            extras = mine(canister, NAME)
            role = canister.role
            plain = fast and not extras
            if "raw" in extras:  # a message of a role not known here, kept whole
                rendered.append(dict(extras["raw"]))
                last = None
                continue
            if role is INVOCATION:
                if plain:
                    function = {
                        "name": canister.name,  # type: ignore[attr-defined]
                        "arguments": {**canister.arguments},  # type: ignore[attr-defined]
                    }
                    call = {"id": canister.invocation_id, "function": function}  # type: ignore[attr-defined]
                else:
                    call = self.call(canister)
                joins = (
                    last is not None
                    and (last.role is ASSISTANT or last.role is INVOCATION)
                    and not extras.get("lead")
                    and (
                        last.step is None
                        or canister.step is None
                        or last.step == canister.step
                    )
                )
                if joins:
                    joined = rendered[-1].get("tool_calls")
                    if extras.get("index"):
                        call["function"]["index"] = len(joined or ())
                    if joined is None:  # none yet, or kept as null
                        rendered[-1]["tool_calls"] = [call]
                    else:
                        joined.append(call)
                else:
                    if extras.get("index"):
                        call["function"]["index"] = 0
                    message: dict[str, Any] = {"role": "assistant", "content": ""}
                    message["tool_calls"] = [call]
                    rendered.append(message)
                last = canister
                continue
            message = {"role": _WIRE_ROLE[role]}
            content = canister.content  # type: ignore[attr-defined]
            part = content[0] if plain and len(content) == 1 else None
            if type(part) is Text and role is not DOCUMENT:  # extras or not
                message["content"] = part.text
            else:
                if positions is None:
                    positions = common.positions(conversation)
                index = positions[canister.id]
                if role is DOCUMENT:
                    canister = documents.as_user_content(
                        canister, self.options, NAME, common.describe(index, canister)
                    )
                self.parts(canister, index, message)
            if role is RESULT:
                result: Any = canister
                if result.error is not None:
                    message["content"] = encode_error_text(result.error)
                named = extras.get("tool_name", "")
                if named == "null":
                    message["tool_name"] = None
                elif named is not None:
                    message["tool_name"] = result.name
            if role is ASSISTANT and "tool_calls" in extras:
                calls = extras["tool_calls"]
                message["tool_calls"] = None if calls is None else [*calls]
            message.update(extras.get("message", {}))
            rendered.append(message)
            last = canister
        return rendered


def render_request(
    conversation: Conversation, options: Mapping[str, Any], *, fast: bool = True
) -> dict[str, Any]:
    """The normalizer's ``render_request``; ``fast=False`` renders every canister's
    parts the general way (what the fast way must give, exactly)."""
    renderer = _Renderer(common.options_from(options))
    return {"messages": renderer.messages(conversation, fast=fast)}
