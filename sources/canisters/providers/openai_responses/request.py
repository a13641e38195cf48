"""OpenAI Responses request settings: everything beside ``instructions`` and
``input``.

A request settings module (see :mod:`canisters.providers._requests`):
:func:`parse_settings` reads a body's other fields into a
:class:`~canisters.Request`, :func:`render_settings` writes them back, through
the rules of :mod:`canisters.providers._rules`.

Neutral fields and their Responses spelling: ``model``, ``stream``, ``tools``
(flat ``{"type": "function", "name", "description", "parameters", "strict"}``
entries are :class:`~canisters.Tool` s; hosted tools such as ``web_search``,
``file_search``, ``code_interpreter``, ``mcp``, ``custom`` are
:class:`~canisters.ProviderTool` s), ``tool_choice`` and
``parallel_tool_calls`` (:class:`~canisters.ToolChoice`), ``text.format``
(:class:`~canisters.OutputFormat`), ``max_output_tokens``, ``temperature``,
``top_p``, ``top_logprobs``, and ``"message.output_text.logprobs"`` in
``include`` as ``logprobs`` (:class:`~canisters.Generation`), ``reasoning``'s
``effort`` and ``summary`` (or ``generate_summary``)
(:class:`~canisters.ReasoningConfig`), ``prompt_cache_key`` and
``prompt_cache_retention`` (:class:`~canisters.CacheConfig`), ``user``,
``metadata``, ``service_tier``.

``extras["openai-responses"]`` of the request holds ``body``: every other key
(``previous_response_id``, ``conversation``, ``include``, ``store``,
``truncation``, ``background``, ``prompt``, ``safety_identifier``,
``max_tool_calls``, ``stream_options``..., a hosted-tool ``tool_choice``, a key
whose value has another shape) verbatim, and as ``text`` and ``reasoning`` the
keys of those objects without a neutral field (``text.verbosity``,
``reasoning.context``), merged back into them when rendering; and the markers
of spellings: ``tool_choice: "allowed_tools"`` (one tool allowed rather than
forced) and ``generate_summary`` (the summary spelled so). A tool's extras hold
``entry``: the other keys of its entry, and its known keys given as null.

Across formats: stop sequences, seed, top_k, penalties and candidate counts
have no Responses field (dropped, reported); log probabilities are asked for
through ``include``; a tool without ``strict`` is sent with
``strict: false``, since Responses turns strict mode on by default
(synthesized); OpenAI Chat's ``store``, ``safety_identifier`` and
``verbosity`` are taken over.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..._frozen import EMPTY, FrozenDict
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
    is_int,
    is_mapping,
    is_number,
    new_generation,
    new_output,
    new_provider_tool,
    new_reasoning,
    new_tool,
    own_extras,
)
from .._requests_shared import (
    function_parameters,
    openai_choice,
    openai_format,
    openai_request,
    render_openai_choice,
    render_openai_plain,
    with_parallel,
)
from .messages import NAME

__all__ = ["CONVERSATION_KEYS", "NAME", "Settings", "parse_settings", "render_settings"]

CONVERSATION_KEYS = frozenset({"instructions", "input"})

_FUNCTION_KEYS = frozenset({"type", "name", "description", "parameters", "strict"})
_SCHEMA_KEYS = frozenset({"type", "name", "description", "schema", "strict"})
_LOGPROBS = "message.output_text.logprobs"
# OpenAI Chat fields kept verbatim there that Responses spells alike.
_CHAT = "openai-chat"
_FROM_CHAT = ("store", "safety_identifier")

# Wire key -> (Generation field, check), read in one loop.
_GENERATION = {
    "max_output_tokens": ("max_output_tokens", is_int),
    "temperature": ("temperature", is_number),
    "top_p": ("top_p", is_number),
    "top_logprobs": ("top_logprobs", is_int),
}


# Parsing ------------------------------------------------------------------------------


def parse_settings(
    body: Mapping[str, Any], name: str = NAME, bare_allowed: bool = False
) -> Request:
    """The fields of a Responses request body other than ``instructions`` and
    ``input``, for the format ``name`` (``bare_allowed``: whether an
    ``allowed_tools`` choice may leave its mode out)."""
    fields = Fields(body, skip=CONVERSATION_KEYS)
    marks: dict[str, Any] = {}
    read = fields.read(OPENAI_PLAIN)
    get = read.get
    tools = _parse_tools(fields, name)
    choice = with_parallel(_parse_choice(fields, marks, bare_allowed), get("parallel"))
    output = _parse_text(fields)
    generation = _parse_generation(fields)
    reasoning = _parse_reasoning(fields, marks)
    return openai_request(
        read,
        tools=tools,
        tool_choice=choice,
        output=output,
        generation=generation,
        reasoning=reasoning,
        extras=own_extras(name, marks, fields.rest),
    )


def _function(entry: Mapping[str, Any], provider: str = NAME) -> Tool | None:
    """A flat ``function`` tool entry as a tool (its other keys, and its known
    ones given as null, in the tool's extras); ``None`` when it is not shaped
    as one."""
    name = entry.get("name")
    description = entry.get("description")
    parameters = entry.get("parameters")
    strict = entry.get("strict")
    if (
        not isinstance(name, str)
        or not name
        or (description is not None and not isinstance(description, str))
        or (parameters is not None and not is_mapping(parameters))
        or (strict is not None and not isinstance(strict, bool))
    ):
        return None
    extra: dict[str, Any] = {}
    if not _FUNCTION_KEYS.issuperset(entry) or None in (
        description,
        parameters,
        strict,
    ):
        other = {
            key: value
            for key, value in entry.items()
            if key not in _FUNCTION_KEYS or value is None
        }
        if other:
            extra["entry"] = other
    return new_tool(  # type: ignore[no-any-return]
        name,
        description,
        FrozenDict(parameters) if parameters is not None else None,
        strict,
        FrozenDict({provider: extra}) if extra else EMPTY,
    )


def _parse_tools(fields: Fields, name: str = NAME) -> list[Tool | ProviderTool] | None:
    entries = fields.rest.get("tools")
    if type(entries) is not list or not entries:
        return None
    if not all(is_mapping(entry) for entry in entries):
        return None  # kept as it came
    fields.take("tools")
    tools: list[Tool | ProviderTool] = []
    for entry in entries:
        tool = _function(entry, name) if entry.get("type") == "function" else None
        tools.append(tool or new_provider_tool(name, FrozenDict(entry)))
    return tools


def _named(value: object) -> str | None:
    """The name of ``{"type": "function", "name": ...}``."""
    if (
        is_mapping(value)
        and value.keys() == {"type", "name"}
        and value["type"] == "function"
        and isinstance(value["name"], str)
    ):
        return value["name"]
    return None


def _parse_choice(
    fields: Fields, marks: dict[str, Any], bare_allowed: bool = False
) -> ToolChoice | None:
    """``tool_choice`` as a mode, one function or a subset of functions; a
    hosted-tool choice (``{"type": "web_search_preview"}``, ``mcp``,
    ``custom``...) stays in the kept keys. With ``bare_allowed``, an
    ``allowed_tools`` choice without its mode is one of mode ``auto``
    (marked ``bare``)."""
    raw = fields.rest.get("tool_choice")
    allowed = (
        {"mode": raw["mode"], "tools": raw["tools"]}
        if is_mapping(raw)
        and raw.keys() == {"type", "mode", "tools"}
        and raw["type"] == "allowed_tools"
        else None
    )
    if (
        bare_allowed
        and is_mapping(raw)
        and raw.keys() == {"type", "tools"}
        and raw["type"] == "allowed_tools"
    ):
        allowed = {"mode": "auto", "tools": raw["tools"]}
        marks["bare"] = True
    choice = openai_choice(raw, _named, allowed, marks)
    if choice is not None:
        fields.take("tool_choice")
    return choice


def _parse_text(fields: Fields) -> OutputFormat | None:
    """``text.format`` as the output format; the other keys of ``text``
    (``verbosity``) stay in the kept keys as ``text``. A ``text`` without a
    format, or whose format is not understood, stays whole."""
    text = fields.rest.get("text")
    if not is_mapping(text) or "format" not in text:
        return None
    output = _parse_format(text["format"])
    if output is not None:
        _leave(fields, "text", text, "format")
    return output


def _leave(fields: Fields, key: str, raw: Mapping[str, Any], *read: str) -> None:
    """Keep the keys of object ``key`` other than ``read`` as ``key`` in the
    kept keys (none left: ``key`` is taken)."""
    left = {name: value for name, value in raw.items() if name not in read}
    if left:
        fields.rest[key] = left
    else:
        fields.take(key)


def _parse_format(raw: object) -> OutputFormat | None:
    if not is_mapping(raw):
        return None
    kind = raw.get("type")
    if raw.keys() == {"type"} and kind == "text":
        return new_output("text", None, None, None, None)  # type: ignore[no-any-return]
    if raw.keys() == {"type"} and kind == "json_object":
        return new_output("json", None, None, None, None)  # type: ignore[no-any-return]
    if (
        kind == "json_schema"
        and {"type", "name", "schema"} <= raw.keys() <= _SCHEMA_KEYS
        and isinstance(raw["name"], str)
        and is_mapping(raw["schema"])
        and isinstance(raw.get("description", ""), str)
        and isinstance(raw.get("strict", False), bool)
    ):
        return new_output(  # type: ignore[no-any-return]
            "json_schema",
            FrozenDict(raw["schema"]),
            raw["name"],
            raw.get("description"),
            raw.get("strict"),
        )
    return None


def _parse_generation(fields: Fields) -> Generation:
    rest = fields.rest
    values = fields.read(_GENERATION)
    include = rest.get("include")
    if type(include) is list and _LOGPROBS in include:
        values["logprobs"] = True  # include itself stays, as it came
    return new_generation(**values) if values else NO_GENERATION


def _parse_reasoning(fields: Fields, marks: dict[str, Any]) -> ReasoningConfig | None:
    """``reasoning``'s ``effort`` and ``summary`` (or ``generate_summary``,
    marked); its other keys stay in the kept keys as ``reasoning``. A
    ``reasoning`` giving neither stays whole."""
    raw = fields.rest.get("reasoning")
    if not is_mapping(raw):
        return None
    effort = raw.get("effort")
    effort = effort if isinstance(effort, str) else None
    read = ["effort"] if effort is not None else []
    summary = raw.get("summary")
    if isinstance(summary, str):
        read.append("summary")
    elif "summary" not in raw and isinstance(raw.get("generate_summary"), str):
        summary = raw["generate_summary"]
        read.append("generate_summary")
        marks["generate_summary"] = True
    else:
        summary = None
    if not read:
        return None
    _leave(fields, "reasoning", raw, *read)
    return new_reasoning(None, effort, None, summary, None)  # type: ignore[no-any-return]


# Rendering ----------------------------------------------------------------------------


def render_settings(request: Request, rendering: Rendering) -> dict[str, Any]:
    """The body's keys other than ``instructions`` and ``input``, for
    ``request``."""
    out: dict[str, Any] = {}
    rendering.write_model(out)
    _render_tools(rendering, out)
    if request.tool_choice is not None:
        allowed = _allowed
        if rendering.own.get("bare"):
            allowed = _bare
        render_openai_choice(request.tool_choice, rendering, out, _reference, allowed)
    _render_text(request.output, rendering, out)
    _render_generation(request.generation, rendering, out)
    if request.reasoning is not None:
        _render_reasoning(request.reasoning, rendering, out)
    render_openai_plain(request, rendering, out)
    for key in _FROM_CHAT:
        value = rendering.claim(_CHAT, key)
        if value is not None:
            out[key] = value
    for key, value in rendering.own_body.items():
        if key in _OBJECTS and key in out and is_mapping(value):
            out[key] = {**out[key], **value}  # the keys of it read are out already
        else:
            out[key] = value
    return out


_EFFORTS = ("none", "minimal", "low", "medium", "high", "xhigh", "max")
_OBJECTS = ("text", "reasoning")  # read in part; the rest kept under their key


def _function_entry(tool: Tool, rendering: Rendering) -> dict[str, Any]:
    entry: dict[str, Any] = {"type": "function", "name": tool.name}
    if tool.description is not None:
        entry["description"] = tool.description
    native = rendering.native
    if tool.parameters is not None:
        entry["parameters"] = function_parameters(tool, rendering)
    elif not native:
        entry["parameters"] = None  # required by the API: no parameters
    if tool.strict is not None:
        entry["strict"] = tool.strict
    elif not native:
        # Responses turns strict mode on when ``strict`` is left out.
        entry["strict"] = False
        rendering.outcomes.synthesized(
            f"{rendering.where(tool)}.strict",
            "strict: false sent for a tool that does not ask for strict mode",
            "Responses defaults to strict mode",
        )
    extra = rendering.tool_extras(tool)
    if extra:
        entry.update(extra.get("entry", ()))
    return entry


def _render_tools(rendering: Rendering, out: dict[str, Any]) -> None:
    if not rendering.tools:
        return
    out["tools"] = [
        dict(tool.body)
        if isinstance(tool, ProviderTool)
        else _function_entry(tool, rendering)
        for tool in rendering.tools
    ]


def _reference(name: str) -> dict[str, Any]:
    return {"type": "function", "name": name}


def _allowed(mode: str, tools: list[dict[str, Any]]) -> dict[str, Any]:
    return {"type": "allowed_tools", "mode": mode, "tools": tools}


def _bare(mode: str, tools: list[dict[str, Any]]) -> dict[str, Any]:
    """An ``allowed_tools`` choice read without its mode: so again, in mode
    ``auto``."""
    if mode != "auto":
        return _allowed(mode, tools)
    return {"type": "allowed_tools", "tools": tools}


def _render_text(
    output: OutputFormat | None, rendering: Rendering, out: dict[str, Any]
) -> None:
    text: dict[str, Any] = {}
    if output is not None:
        found = openai_format(output, rendering)
        if found is not None:
            text["format"] = found
    if not rendering.native:
        verbosity = rendering.claim(_CHAT, "verbosity")
        if verbosity is not None:
            text["verbosity"] = verbosity
    if text:
        out["text"] = text


# Generation field -> wire key (the same names).
_SENT = {name: name for name, _ in _GENERATION.values()}
_NO_FIELD = {
    "top_k": "Responses has no top_k",
    "stop": "Responses has no stop sequences",
    "seed": "Responses has no seed",
    "presence_penalty": "Responses has no presence penalty",
    "frequency_penalty": "Responses has no frequency penalty",
    "candidates": "Responses returns one answer (no n)",
}


def _render_generation(
    generation: Generation, rendering: Rendering, out: dict[str, Any]
) -> None:
    if generation is NO_GENERATION:
        return
    outcomes = rendering.outcomes
    out.update(rendering.settings(generation, _SENT))
    for name, reason in _NO_FIELD.items():
        if getattr(generation, name) is not None:
            outcomes.dropped(f"generation.{name}", reason)
    if generation.logprobs and not rendering.native:
        # Responses' way of asking for them: exact.
        out["include"] = [_LOGPROBS]


def _render_reasoning(
    reasoning: ReasoningConfig, rendering: Rendering, out: dict[str, Any]
) -> None:
    outcomes = rendering.outcomes
    entry: dict[str, Any] = {}
    effort = rendering.effort(reasoning)
    if effort is not None:
        if rendering.native or effort in _EFFORTS:
            entry["effort"] = effort
        else:
            outcomes.dropped(
                "reasoning.effort", f"{effort!r} is not an effort Responses takes"
            )
    summary = reasoning.summary
    if reasoning.include_thoughts:
        if summary is None:
            summary = "auto"
            outcomes.approximated(
                "reasoning.include_thoughts",
                "the thoughts asked for as a reasoning summary 'auto'",
                "thoughts = summary",
            )
        else:
            outcomes.dropped(
                "reasoning.include_thoughts",
                "Responses returns a summary of the reasoning, not the thoughts",
            )
    if summary is not None:
        key = "generate_summary" if rendering.own.get("generate_summary") else "summary"
        entry[key] = summary
    if entry:
        out["reasoning"] = entry


class Settings:
    """The request settings of one OpenAI Responses format (the
    :class:`~canisters.providers._requests.RequestSettings` a normalizer
    names): :func:`parse_settings` and :func:`render_settings` for the format
    ``name``."""

    __slots__ = ("CONVERSATION_KEYS", "NAME", "bare_allowed")

    def __init__(self, name: str, *, bare_allowed: bool = False) -> None:
        self.NAME = name
        self.CONVERSATION_KEYS = CONVERSATION_KEYS
        self.bare_allowed = bare_allowed

    def parse_settings(self, body: Mapping[str, Any]) -> Request:
        """The fields of a request body other than ``instructions`` and ``input``."""
        return parse_settings(body, self.NAME, self.bare_allowed)

    def render_settings(self, request: Request, rendering: Rendering) -> dict[str, Any]:
        """The body's keys other than ``instructions`` and ``input``."""
        return render_settings(request, rendering)
