"""Whole requests: the pieces several formats spell alike.

OpenAI's top-level settings (model, cache, user, metadata, tier, stream), tool
choice and structured output (OpenAI Chat, OpenAI Responses), Chat-shaped
function tools (OpenAI Chat, Ollama), the tool choice's parallel flag and
names. Each format's request settings module
(:mod:`canisters.providers._requests`) uses them for its own spelling.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from .._frozen import EMPTY, FrozenDict
from ..requests import (
    CacheConfig,
    Generation,
    OutputFormat,
    ProviderTool,
    ReasoningConfig,
    Request,
    Tool,
    ToolChoice,
)
from . import _rules as rules
from ._requests import (
    Rendering,
    is_mapping,
    new_cache,
    new_request,
    new_tool,
    new_tool_choice,
)
from ._rules import Outcomes

__all__ = [
    "chat_function",
    "chat_tool_entries",
    "function_parameters",
    "new_cache_of",
    "OPENAI_RETENTIONS",
    "openai_metadata",
    "openai_request",
    "render_openai_cache",
    "render_openai_choice",
    "render_openai_plain",
    "openai_choice",
    "openai_choice_value",
    "openai_format",
    "render_service_tier",
    "tool_choice_names",
    "with_parallel",
]


def new_cache_of(key: str | None, retention: str | None) -> CacheConfig | None:
    """The cache settings of a checked ``key`` and ``retention``; ``None`` when
    neither is given."""
    if key is None and retention is None:
        return None
    return new_cache(key, retention)  # type: ignore[no-any-return]


def with_parallel(
    choice: ToolChoice | None, parallel: bool | None
) -> ToolChoice | None:
    """``choice`` with a checked ``parallel`` flag read beside it (a choice of
    that flag alone when there is none); ``choice`` itself when ``parallel``
    is ``None``."""
    if parallel is None:
        return choice
    return new_tool_choice(  # type: ignore[no-any-return]
        choice.mode if choice else None, choice.names if choice else (), parallel
    )


def tool_choice_names(
    mode: str, names: tuple[str, ...], outcomes: Outcomes
) -> tuple[str, ...]:
    """The names to send with ``mode``: none under ``"none"`` (any given
    dropped, reported)."""
    if mode == "none" and names:
        outcomes.dropped(
            "tool_choice.names", "no tool may be called: the names are left out"
        )
        return ()
    return names


_MODES = ("none", "auto", "required")


def openai_choice(
    raw: object,
    named: Callable[[object], str | None],
    allowed: object,
    marks: dict[str, Any],
) -> ToolChoice | None:
    """An OpenAI ``tool_choice``: ``raw`` a mode, or a function ``named``
    (which gives the name of a function reference, or ``None``); else
    ``allowed``, the ``{"mode", "tools"}`` of an ``allowed_tools`` choice
    (``None`` when ``raw`` is not one), as a subset of functions, marked
    (``marks["tool_choice"] = "allowed_tools"``). ``None`` when it is none
    of these."""
    if raw in _MODES:
        return new_tool_choice(raw, (), None)  # type: ignore[no-any-return]
    name = named(raw)
    if name is not None:
        return new_tool_choice("required", (name,), None)  # type: ignore[no-any-return]
    if (
        is_mapping(allowed)
        and allowed.keys() == {"mode", "tools"}
        and allowed["mode"] in ("auto", "required")
        and type(allowed["tools"]) is list
        and allowed["tools"]
    ):
        names = [named(item) for item in allowed["tools"]]
        if all(name is not None for name in names):
            marks["tool_choice"] = "allowed_tools"
            return new_tool_choice(allowed["mode"], tuple(names), None)  # type: ignore[no-any-return]
    return None


def openai_choice_value(
    mode: str,
    names: tuple[str, ...],
    rendering: Rendering,
    reference: Callable[[str], dict[str, Any]],
    allowed: Callable[[str, list[dict[str, Any]]], dict[str, Any]],
) -> Any:
    """The ``tool_choice`` OpenAI sends for ``mode`` and ``names``: one
    function's ``reference`` when one is forced (unless the request was read
    from an ``allowed_tools`` choice), the ``allowed`` object of their
    references for a subset, else the mode."""
    if (
        mode == "required"
        and len(names) == 1
        and rendering.own.get("tool_choice") != "allowed_tools"
    ):
        return reference(names[0])
    if names:
        return allowed(mode, [reference(name) for name in names])
    return mode


def render_openai_choice(
    choice: ToolChoice,
    rendering: Rendering,
    out: dict[str, Any],
    reference: Callable[[str], dict[str, Any]],
    allowed: Callable[[str, list[dict[str, Any]]], dict[str, Any]],
    legacy: Callable[[str, tuple[str, ...], dict[str, Any]], bool] | None = None,
) -> None:
    """``choice`` as OpenAI sends it: ``parallel_tool_calls``, and the
    ``tool_choice`` of :func:`openai_choice_value` for its mode and names (none
    under ``"none"``), unless ``legacy(mode, names, out)`` wrote it another way
    (and tells so)."""
    if choice.parallel is not None:
        out["parallel_tool_calls"] = choice.parallel
    mode = choice.mode
    if mode is None:
        return
    names = tool_choice_names(mode, choice.names, rendering.outcomes)
    if legacy is not None and legacy(mode, names, out):
        return
    out["tool_choice"] = openai_choice_value(mode, names, rendering, reference, allowed)


def render_service_tier(
    request: Request,
    rendering: Rendering,
    out: dict[str, Any],
    key: str = "service_tier",
) -> None:
    """The service tier into ``out[key]``: as it came for a request of this
    format, else through :func:`~canisters.providers._rules.generation.service_tier`."""
    if request.service_tier is None:
        return
    tier = (
        request.service_tier
        if rendering.native
        else rules.service_tier(
            request.service_tier, rendering.capabilities, rendering.outcomes
        )
    )
    if tier is not None:
        out[key] = tier


def openai_request(
    values: Mapping[str, Any],
    *,
    tools: list[Tool | ProviderTool] | None,
    tool_choice: ToolChoice | None,
    output: OutputFormat | None,
    generation: Generation,
    reasoning: ReasoningConfig | None,
    extras: FrozenDict[str, Any],
) -> Request:
    """The request of an OpenAI body (Chat or Responses): the ``values`` read
    through :data:`~canisters.providers._requests.OPENAI_PLAIN` (model, cache,
    user, metadata, tier, stream) with the parts each format reads its own
    way."""
    get = values.get
    metadata = get("metadata")
    return new_request(
        model=get("model"),
        tools=tuple(tools) if tools else (),
        tool_choice=tool_choice,
        output=output,
        generation=generation,
        reasoning=reasoning,
        cache=new_cache_of(get("cache_key"), get("retention")),
        user=get("user"),
        metadata=FrozenDict(metadata) if metadata is not None else None,
        service_tier=get("service_tier"),
        stream=get("stream"),
        extras=extras,
    )


def render_openai_plain(
    request: Request, rendering: Rendering, out: dict[str, Any]
) -> None:
    """The settings OpenAI Chat and Responses spell alike into ``out``: the
    cache (:func:`render_openai_cache`), ``user``, ``metadata``
    (:func:`openai_metadata`), the tier (:func:`render_service_tier`) and
    ``stream``."""
    render_openai_cache(request, rendering, out)
    if request.user is not None:
        out["user"] = request.user
    if request.metadata is not None:
        out["metadata"] = openai_metadata(request.metadata, rendering)
    render_service_tier(request, rendering, out)
    if request.stream is not None:
        out["stream"] = request.stream


OPENAI_RETENTIONS = ("in_memory", "24h")
"""The ``prompt_cache_retention`` values OpenAI takes (Chat and Responses)."""


def render_openai_cache(
    request: Request, rendering: Rendering, out: dict[str, Any]
) -> None:
    """``prompt_cache_key`` and ``prompt_cache_retention`` (OpenAI Chat and
    Responses spell them alike): a retention from another format that OpenAI
    does not take is dropped, reported."""
    if request.cache is None:
        return
    if request.cache.key is not None:
        out["prompt_cache_key"] = request.cache.key
    retention = request.cache.retention
    if retention is not None:
        if rendering.native or retention in OPENAI_RETENTIONS:
            out["prompt_cache_retention"] = retention
        else:
            rendering.outcomes.dropped(
                "cache.retention", f"{retention!r} is not a retention OpenAI takes"
            )


def openai_metadata(
    metadata: Mapping[str, Any], rendering: Rendering
) -> dict[str, Any]:
    """The ``metadata`` sent to OpenAI (Chat and Responses), which takes string
    values only: another format's others are dropped, reported."""
    if rendering.native:
        return dict(metadata)
    sent: dict[str, Any] = {}
    for key, value in metadata.items():
        if isinstance(value, str):
            sent[key] = value
        else:
            rendering.outcomes.dropped(
                f"metadata.{key}", "OpenAI metadata takes string values only"
            )
    return sent


_STRICT = "OpenAI strict mode"


def function_parameters(tool: Tool, rendering: Rendering) -> dict[str, Any]:
    """The parameters of ``tool`` (which has some) as OpenAI sends them: made
    strict-compatible when the tool asks for strict mode and comes from
    another format (never is strict mode switched on for a schema of its
    own)."""
    parameters = rendering.parameters(tool)
    assert parameters is not None
    if tool.strict and not rendering.native:
        return rules.schema_for(
            parameters,
            "openai-strict",
            f"{rendering.where(tool)}.parameters",
            rendering.outcomes,
            _STRICT,
        )
    return dict(parameters)


def openai_format(output: OutputFormat, rendering: Rendering) -> dict[str, Any] | None:
    """``output`` as OpenAI's format object (``{"type": "text"}``,
    ``{"type": "json_object"}``, or ``{"type": "json_schema", "name",
    "description", "schema", "strict"}`` flat); ``None`` when the model takes no
    structured output (dropped, reported)."""
    outcomes = rendering.outcomes
    if output.type == "text":
        return {"type": "text"}
    if rendering.capabilities.structured_output == "none":
        outcomes.dropped("output", "the model takes no structured output")
        return None
    if output.type == "json" or output.schema is None:
        if output.type == "json_schema":
            outcomes.approximated(
                "output.schema",
                "a JSON Schema output without a schema sent as JSON",
                "no schema = json_object",
            )
        return {"type": "json_object"}
    if output.name is None:
        outcomes.synthesized(
            "output.name", "the schema named 'response'", "OpenAI requires a name"
        )
    found: dict[str, Any] = {
        "type": "json_schema",
        "name": output.name if output.name is not None else "response",
    }
    if output.description is not None:
        found["description"] = output.description
    if output.strict and not rendering.native:
        found["schema"] = rules.schema_for(
            output.schema, "openai-strict", "output.schema", outcomes, _STRICT
        )
    else:
        found["schema"] = dict(output.schema)
    if output.strict is not None:
        found["strict"] = output.strict
    return found


_CHAT_TOOL_KEYS = frozenset({"type", "function"})
_CHAT_FUNCTION_KEYS = frozenset({"name", "description", "parameters"})
_CHAT_STRICT_KEYS = _CHAT_FUNCTION_KEYS | {"strict"}


def chat_function(
    raw: object,
    entry: Mapping[str, Any] | None,
    provider: str,
    *,
    strict: bool,
) -> Tool | None:
    """A Chat-shaped ``function`` object (of a ``tools`` ``entry``, whose keys
    beside ``type`` and ``function`` it keeps) as a tool of ``provider``:
    ``None`` when it is not shaped as one. With ``strict``, its ``strict``
    flag is read; without, it is kept with the other keys, and the known keys
    given as null, in the tool's extras (``function``, ``entry``)."""
    if type(raw) is not dict and not is_mapping(raw):
        return None
    get = raw.get
    name = get("name")
    description = get("description")
    parameters = get("parameters")
    flag = get("strict") if strict else None
    if (
        not isinstance(name, str)
        or not name
        or (description is not None and not isinstance(description, str))
        or (
            parameters is not None
            and type(parameters) is not dict
            and not is_mapping(parameters)
        )
        or (flag is not None and flag is not True and flag is not False)
    ):
        return None
    extra: dict[str, Any] = {}
    given = 1 + (description is not None) + (parameters is not None)
    if len(raw) != given + (flag is not None):
        # Other keys, and the known ones given as null, are kept as they came.
        known = _CHAT_STRICT_KEYS if strict else _CHAT_FUNCTION_KEYS
        other = {
            key: value
            for key, value in raw.items()
            if key not in known or value is None
        }
        if other:
            extra["function"] = other
    if entry is not None and len(entry) != 2:  # keys beside type and function
        extra["entry"] = {
            key: value for key, value in entry.items() if key not in _CHAT_TOOL_KEYS
        }
    return new_tool(  # type: ignore[no-any-return]
        name,
        description,
        FrozenDict(parameters) if parameters is not None else None,
        flag,
        FrozenDict({provider: extra}) if extra else EMPTY,
    )


def chat_tool_entries(
    rendering: Rendering,
    function_body: Callable[[Tool, Mapping[str, Any]], dict[str, Any]],
) -> list[Any]:
    """The Chat-shaped ``tools`` entries of ``rendering.tools``: a provider
    tool's body as it is, a function tool as ``{"type": "function",
    "function": function_body(tool, extra)}`` with the other keys of its entry
    kept in ``extra`` (the tool's extras for this format)."""
    entries: list[Any] = []
    for tool in rendering.tools:
        if isinstance(tool, ProviderTool):
            entries.append(dict(tool.body))
            continue
        extra = rendering.tool_extras(tool)
        entry: dict[str, Any] = {
            "type": "function",
            "function": function_body(tool, extra),
        }
        if extra:
            entry.update(extra.get("entry", ()))
        entries.append(entry)
    return entries
