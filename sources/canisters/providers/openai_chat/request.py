"""OpenAI Chat Completions request settings: everything beside ``messages``.

The reference request settings module (see
:mod:`canisters.providers._requests`): :func:`parse_settings` reads a body's
fields other than ``messages`` into a :class:`~canisters.Request`,
:func:`render_settings` writes them back, through the rules of
:mod:`canisters.providers._rules`.

Neutral fields and their Chat spelling: ``model``, ``stream``, ``tools``
(``type: "function"`` entries are :class:`~canisters.Tool` s, any other entry a
:class:`~canisters.ProviderTool`), ``tool_choice`` and ``parallel_tool_calls``
(:class:`~canisters.ToolChoice`), ``response_format``
(:class:`~canisters.OutputFormat`), ``max_completion_tokens``,
``temperature``, ``top_p``, ``stop``, ``seed``, ``presence_penalty``,
``frequency_penalty``, ``n``, ``logprobs``, ``top_logprobs``
(:class:`~canisters.Generation`), ``reasoning_effort``
(:class:`~canisters.ReasoningConfig`), ``prompt_cache_key`` and
``prompt_cache_retention`` (:class:`~canisters.CacheConfig`), ``user``,
``metadata``, ``service_tier``; the deprecated ``functions`` and
``function_call`` are read as tools and a tool choice.

``extras["openai-chat"]`` of the request holds ``body`` (every other key, and
a key whose value has another shape, verbatim) and the markers of spellings:
``max_tokens`` (the limit was spelled ``max_tokens``), ``stop: "string"``
(one stop sequence as a string), ``tool_choice: "allowed_tools"`` (one tool
allowed through ``allowed_tools`` rather than forced), ``functions`` (the
legacy ``functions`` / ``function_call`` spelling). A tool's extras hold
``entry`` and ``function``: the other keys of its entry and of its
``function`` object.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from ..._frozen import FrozenDict
from ...requests import (
    Generation,
    OutputFormat,
    ProviderTool,
    ReasoningConfig,
    Request,
    Tool,
    ToolChoice,
)
from .._requests import (
    NO_GENERATION,
    OPENAI_PLAIN,
    Fields,
    Rendering,
    is_bool,
    is_int,
    is_mapping,
    is_number,
    is_str,
    is_strings,
    new_generation,
    new_output,
    new_provider_tool,
    new_reasoning,
    new_tool_choice,
    own_extras,
)
from .._requests_shared import (
    chat_function,
    chat_tool_entries,
    function_parameters,
    openai_choice,
    openai_format,
    openai_request,
    render_openai_choice,
    render_openai_plain,
    with_parallel,
)

__all__ = [
    "CONVERSATION_KEYS",
    "NAME",
    "Settings",
    "parse_settings",
    "render_settings",
]

NAME = "openai-chat"
CONVERSATION_KEYS = frozenset({"messages"})

_TOOL_KEYS = frozenset({"type", "function"})
_FUNCTION_KEYS = frozenset({"name", "description", "parameters", "strict"})


# Parsing ------------------------------------------------------------------------------
#
# Every value is checked before it is kept (is_str, is_int...), so the parts are
# built by the trusted constructors of _requests; a value that does not pass
# stays in the body's kept keys, verbatim.


# Wire key -> (neutral name, check): the top-level values read as they are, in
# one pass over the body's keys (Fields.read).
_PLAIN = {**OPENAI_PLAIN, "reasoning_effort": ("effort", is_str)}
# Wire key -> (Generation field, check).
_GENERATION = {
    "max_completion_tokens": ("max_output_tokens", is_int),
    "temperature": ("temperature", is_number),
    "top_p": ("top_p", is_number),
    "seed": ("seed", is_int),
    "presence_penalty": ("presence_penalty", is_number),
    "frequency_penalty": ("frequency_penalty", is_number),
    "n": ("candidates", is_int),
    "logprobs": ("logprobs", is_bool),
    "top_logprobs": ("top_logprobs", is_int),
}

# Generation field -> wire key, as rendered (before and after ``stop``).
_SAMPLING = {"temperature": "temperature", "top_p": "top_p"}
_SENT = {
    "seed": "seed",
    "presence_penalty": "presence_penalty",
    "frequency_penalty": "frequency_penalty",
    "candidates": "n",
    "logprobs": "logprobs",
    "top_logprobs": "top_logprobs",
}


def parse_settings(
    body: Mapping[str, Any],
    name: str = NAME,
    read: Callable[[Fields, dict[str, Any]], ReasoningConfig | None] | None = None,
) -> Request:
    """The fields of a Chat Completions request body other than ``messages``,
    for the format ``name`` (a dialect's ``read`` reads its own fields first)."""
    fields = Fields(body, skip=CONVERSATION_KEYS)
    rest = fields.rest
    marks: dict[str, Any] = {}
    own = read(fields, marks) if read is not None else None
    values = fields.read(_PLAIN)
    get = values.get
    # Each part is read when its keys are there (most bodies give a few).
    tools = _parse_tools(fields, name) if "tools" in rest else None
    if tools is None and "functions" in rest:
        tools = _parse_functions(fields, marks, name)
    choice = (
        _parse_choice(fields, marks)
        if "tool_choice" in rest or "function_call" in rest
        else None
    )
    choice = with_parallel(choice, get("parallel"))
    output = _parse_output(fields) if "response_format" in rest else None
    generation = _parse_generation(fields, marks) if rest else NO_GENERATION
    effort = get("effort")
    reasoning = (
        new_reasoning(None, effort, None, None, None) if effort is not None else own
    )
    return openai_request(
        values,
        tools=tools,
        tool_choice=choice,
        output=output,
        generation=generation,
        reasoning=reasoning,
        extras=own_extras(name, marks, fields.rest),
    )


def _parse_tools(fields: Fields, name: str) -> list[Tool | ProviderTool] | None:
    entries = fields.rest.get("tools")
    if type(entries) is not list or not entries:
        return None
    tools: list[Tool | ProviderTool] = []
    for entry in entries:
        if type(entry) is not dict and not is_mapping(entry):
            return None  # kept as it came
        tool = None
        if entry.get("type") == "function":
            tool = chat_function(entry.get("function"), entry, name, strict=True)
        tools.append(
            tool if tool is not None else new_provider_tool(name, FrozenDict(entry))
        )
    del fields.rest["tools"]
    return tools


def _parse_functions(
    fields: Fields, marks: dict[str, Any], name: str
) -> list[Tool | ProviderTool] | None:
    """The legacy ``functions`` (and ``function_call``), when every entry reads."""
    entries = fields.rest.get("functions")
    if type(entries) is not list or not entries:
        return None
    tools: list[Tool | ProviderTool] = []
    for entry in entries:
        tool = chat_function(entry, None, name, strict=True)
        if tool is None or "strict" in entry:
            return None
        tools.append(tool)
    fields.take("functions")
    marks["functions"] = True
    return tools


def _named(value: object) -> str | None:
    """The name of ``{"type": "function", "function": {"name": ...}}``."""
    if (
        is_mapping(value)
        and value.keys() == _TOOL_KEYS
        and value["type"] == "function"
        and is_mapping(value["function"])
        and value["function"].keys() == {"name"}
        and isinstance(value["function"]["name"], str)
    ):
        return value["function"]["name"]
    return None


def _parse_choice(fields: Fields, marks: dict[str, Any]) -> ToolChoice | None:
    if marks.get("functions"):
        call = fields.rest.get("function_call")
        if call in ("none", "auto"):
            fields.take("function_call")
            return new_tool_choice(call, (), None)  # type: ignore[no-any-return]
        if (
            is_mapping(call)
            and call.keys() == {"name"}
            and isinstance(call["name"], str)
        ):
            fields.take("function_call")
            return new_tool_choice("required", (call["name"],), None)  # type: ignore[no-any-return]
        return None
    raw = fields.rest.get("tool_choice")
    if raw is None:
        return None
    allowed = (
        raw["allowed_tools"]
        if is_mapping(raw)
        and raw.keys() == {"type", "allowed_tools"}
        and raw["type"] == "allowed_tools"
        else None
    )
    choice = openai_choice(raw, _named, allowed, marks)
    if choice is not None:
        fields.take("tool_choice")
    return choice


def _parse_output(fields: Fields) -> OutputFormat | None:
    raw = fields.rest.get("response_format")
    if raw is None:
        return None
    output: OutputFormat | None = None
    if is_mapping(raw):
        kind = raw.get("type")
        size = len(raw)  # with kind given, "type" is one of the keys
        if size == 1 and kind == "text":
            output = new_output("text", None, None, None, None)
        elif size == 1 and kind == "json_object":
            output = new_output("json", None, None, None, None)
        elif size == 2 and kind == "json_schema" and "json_schema" in raw:
            inner = raw["json_schema"]
            if (
                is_mapping(inner)
                and "name" in inner
                and _SCHEMA_KEYS.issuperset(inner)
                and isinstance(inner["name"], str)
            ):
                get = inner.get
                description, schema, strict = (
                    get("description"),
                    get("schema"),
                    get("strict"),
                )
                if (
                    (description is not None or "description" not in inner)
                    and (description is None or isinstance(description, str))
                    and (schema is None or is_mapping(schema))
                    and (schema is not None or "schema" not in inner)
                    and (strict is None or strict is True or strict is False)
                    and (strict is not None or "strict" not in inner)
                ):
                    output = new_output(
                        "json_schema",
                        FrozenDict(schema) if schema is not None else None,
                        inner["name"],
                        description,
                        strict,
                    )
    if output is not None:
        del fields.rest["response_format"]
    return output


_SCHEMA_KEYS = frozenset({"name", "description", "schema", "strict"})


def _parse_generation(fields: Fields, marks: dict[str, Any]) -> Generation:
    rest = fields.rest
    values = fields.read(_GENERATION)
    if (
        "max_tokens" in rest
        and "max_completion_tokens" not in rest
        and "max_output_tokens" not in values
    ):
        limit = fields.take("max_tokens", is_int)
        if limit is not None:
            values["max_output_tokens"] = limit
            marks["max_tokens"] = True
    if "stop" in rest:
        if (text := fields.take("stop", is_str)) is not None:
            values["stop"] = (text,)
            marks["stop"] = "string"
        elif (listed := fields.take("stop", is_strings)) is not None:
            values["stop"] = tuple(listed)
    return new_generation(**values) if values else NO_GENERATION


# Rendering ----------------------------------------------------------------------------


def render_settings(
    request: Request,
    rendering: Rendering,
    write: Callable[[Request, Rendering, dict[str, Any]], bool] | None = None,
) -> dict[str, Any]:
    """The body's keys other than ``messages``, for ``request`` (a dialect's
    ``write`` writes the reasoning configuration its way)."""
    out: dict[str, Any] = {}
    rendering.write_model(out)
    legacy = bool(rendering.own.get("functions")) and all(
        isinstance(tool, Tool) for tool in rendering.tools
    )
    _render_tools(rendering, out, legacy)
    if request.tool_choice is not None:
        _render_choice(request.tool_choice, rendering, out, legacy)
    if request.output is not None:
        _render_output(request.output, rendering, out)
    if request.generation is not NO_GENERATION:
        _render_generation(request.generation, rendering, out)
    if request.reasoning is not None and (
        write is None or not write(request, rendering, out)
    ):
        _render_reasoning(request.reasoning, rendering, out)
    render_openai_plain(request, rendering, out)
    out.update(rendering.own_body)
    return out


def _function_body(
    tool: Tool, extra: Mapping[str, Any], rendering: Rendering, *, legacy: bool
) -> dict[str, Any]:
    function: dict[str, Any] = {"name": tool.name}
    if tool.description is not None:
        function["description"] = tool.description
    if tool.parameters is not None:
        function["parameters"] = function_parameters(tool, rendering)
    if tool.strict is not None and not legacy:
        function["strict"] = tool.strict
    if extra:
        function.update(extra.get("function", ()))
    return function


def _render_tools(rendering: Rendering, out: dict[str, Any], legacy: bool) -> None:
    if not rendering.tools:
        return
    if legacy:
        out["functions"] = [
            _function_body(tool, rendering.tool_extras(tool), rendering, legacy=True)
            for tool in rendering.tools
            if isinstance(tool, Tool)
        ]
        return
    out["tools"] = chat_tool_entries(
        rendering,
        lambda tool, extra: _function_body(tool, extra, rendering, legacy=False),
    )


def _reference(name: str) -> dict[str, Any]:
    return {"type": "function", "function": {"name": name}}


def _render_choice(
    choice: ToolChoice, rendering: Rendering, out: dict[str, Any], legacy: bool
) -> None:
    render_openai_choice(
        choice, rendering, out, _reference, _allowed, _function_call if legacy else None
    )


def _function_call(mode: str, names: tuple[str, ...], out: dict[str, Any]) -> bool:
    """The legacy ``function_call`` of ``mode`` and ``names``, when it spells
    them (tells whether it does)."""
    if mode == "required" and len(names) == 1:
        out["function_call"] = {"name": names[0]}
        return True
    if mode in ("none", "auto") and not names:
        out["function_call"] = mode
        return True
    # Any other choice needs the tools form: the functions go as tools.
    out["tools"] = [
        {"type": "function", "function": function}
        for function in out.pop("functions", ())
    ]
    return False


def _allowed(mode: str, tools: list[dict[str, Any]]) -> dict[str, Any]:
    return {"type": "allowed_tools", "allowed_tools": {"mode": mode, "tools": tools}}


def _render_output(
    output: OutputFormat, rendering: Rendering, out: dict[str, Any]
) -> None:
    found = openai_format(output, rendering)
    if found is not None and found["type"] == "json_schema":
        del found["type"]  # the schema's fields go in their own object
        found = {"type": "json_schema", "json_schema": found}
    if found is not None:
        out["response_format"] = found


def _render_generation(
    generation: Generation, rendering: Rendering, out: dict[str, Any]
) -> None:
    outcomes = rendering.outcomes
    if generation.max_output_tokens is not None:
        key = (
            "max_tokens" if rendering.own.get("max_tokens") else "max_completion_tokens"
        )
        out[key] = generation.max_output_tokens
    out.update(rendering.settings(generation, _SAMPLING))
    if generation.top_k is not None:
        outcomes.dropped("generation.top_k", "OpenAI Chat has no top_k")
    if generation.stop is not None:
        stop = rendering.stops(generation.stop)
        if rendering.own.get("stop") == "string" and len(stop) == 1:
            out["stop"] = stop[0]
        else:
            out["stop"] = stop
    out.update(rendering.settings(generation, _SENT))


def _render_reasoning(
    reasoning: ReasoningConfig, rendering: Rendering, out: dict[str, Any]
) -> None:
    outcomes = rendering.outcomes
    effort = rendering.effort(reasoning)
    if effort is not None:
        out["reasoning_effort"] = effort
    if reasoning.summary is not None:
        outcomes.dropped(
            "reasoning.summary", "OpenAI Chat returns no reasoning summary"
        )
    if reasoning.include_thoughts:
        outcomes.dropped(
            "reasoning.include_thoughts", "OpenAI Chat returns no reasoning"
        )


class Settings:
    """The request settings of one OpenAI Chat format (the
    :class:`~canisters.providers._requests.RequestSettings` a normalizer names):
    :func:`parse_settings` and :func:`render_settings` for the format ``name``,
    with a dialect's reader and writer of its own fields."""

    __slots__ = ("CONVERSATION_KEYS", "NAME", "read", "write")

    def __init__(
        self,
        name: str,
        read: Callable[[Fields, dict[str, Any]], ReasoningConfig | None] | None = None,
        write: Callable[[Request, Rendering, dict[str, Any]], bool] | None = None,
    ) -> None:
        self.NAME = name
        self.CONVERSATION_KEYS = CONVERSATION_KEYS
        self.read = read
        self.write = write

    def parse_settings(self, body: Mapping[str, Any]) -> Request:
        """The fields of a request body other than ``messages``."""
        return parse_settings(body, self.NAME, self.read)

    def render_settings(self, request: Request, rendering: Rendering) -> dict[str, Any]:
        """The body's keys other than ``messages``, for ``request``."""
        return render_settings(request, rendering, self.write)
