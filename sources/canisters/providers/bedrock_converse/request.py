"""Bedrock Converse request settings: everything beside ``system`` and
``messages``.

Neutral fields and their Converse spelling: ``modelId``; ``inferenceConfig``
(``maxTokens``, ``temperature``, ``topP``, ``stopSequences``:
:class:`~canisters.Generation`); ``toolConfig.tools`` (``toolSpec`` with
``inputSchema.json``: :class:`~canisters.Tool`; a ``cachePoint`` entry, or any
other, a :class:`~canisters.ProviderTool` of this format) and
``toolConfig.toolChoice`` (``auto``, ``any``: ``required``, ``tool``: required
with its name); ``outputConfig.textFormat`` (a JSON Schema sent as JSON text:
:class:`~canisters.OutputFormat`); ``additionalModelRequestFields.thinking``
(Anthropic's thinking on Bedrock: :class:`~canisters.ReasoningConfig`);
``requestMetadata`` (string pairs: the request's ``metadata``);
``serviceTier.type``. ``guardrailConfig``, ``promptVariables``,
``additionalModelResponseFieldPaths``, ``performanceConfig``, the rest of
``outputConfig`` and of ``additionalModelRequestFields``, and any other key
are kept verbatim in ``extras["bedrock-converse"]["body"]``.

Converse has no user or cache setting beside its ``cachePoint`` blocks, nor
JSON output without a schema, and ConverseStream is an operation of its own
(no ``stream`` key): from another format these are dropped, reported; so are
``top_k`` and the other sampling settings ``inferenceConfig`` lacks.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from canisters.providers import kit
from canisters.requests import (
    OutputFormat,
    ProviderTool,
    ReasoningConfig,
    Request,
    Tool,
    ToolChoice,
)

from .messages import NAME

__all__ = ["CONVERSATION_KEYS", "NAME", "parse_settings", "render_settings"]

CONVERSATION_KEYS = frozenset({"system", "messages"})

_INFERENCE = {
    "maxTokens": ("max_output_tokens", lambda v: kit.is_int(v) and v > 0),
    "temperature": ("temperature", kit.is_number),
    "topP": ("top_p", kit.is_number),
    "stopSequences": ("stop", kit.is_strings),
}
_SPEC_KEYS = frozenset({"name", "description", "inputSchema"})
# Generation field -> inferenceConfig key, beside maxTokens.
_SENT = {"temperature": "temperature", "top_p": "topP", "stop": "stopSequences"}


# Parsing ---------------------------------------------------------------------------


def parse_settings(body: Mapping[str, Any]) -> Request:
    """The fields of a Converse request other than ``system`` and ``messages``."""
    fields = kit.Fields(body, skip=CONVERSATION_KEYS)
    marks: dict[str, Any] = {}
    model = fields.take("modelId", kit.is_str)
    generation = kit.new_generation()
    inference = fields.rest.get("inferenceConfig")
    if kit.is_mapping(inference):
        inner = kit.Fields(inference)
        values = inner.read(_INFERENCE)
        if "stop" in values:
            values["stop"] = tuple(values["stop"])
        generation = kit.new_generation(**values)
        if inner.rest or not values:
            fields.rest["inferenceConfig"] = inner.rest
        else:
            fields.take("inferenceConfig")
    tools, choice = _parse_tools(fields, marks)
    reasoning = _parse_reasoning(fields, marks)
    output = _parse_output(fields, marks)
    metadata = fields.take("requestMetadata", kit.is_string_map)
    tier = fields.rest.get("serviceTier")
    service_tier = None
    if kit.is_mapping(tier) and set(tier) == {"type"} and kit.is_str(tier["type"]):
        service_tier = fields.take("serviceTier")["type"]
    if fields.rest:
        marks[kit.BODY] = fields.rest
    return Request(
        model=model,
        tools=tools,
        tool_choice=choice,
        output=output,
        generation=generation,
        reasoning=reasoning,
        metadata=metadata,
        service_tier=service_tier,
        extras={NAME: marks},
    )


def _parse_tools(
    fields: kit.Fields, marks: dict[str, Any]
) -> tuple[tuple[Tool | ProviderTool, ...], ToolChoice | None]:
    config = fields.rest.get("toolConfig")
    if not kit.is_mapping(config):
        return (), None
    inner = kit.Fields(config)
    entries = inner.rest.get("tools")
    tools: list[Tool | ProviderTool] = []
    if isinstance(entries, list) and all(kit.is_mapping(e) for e in entries):
        inner.take("tools")
        for entry in entries:
            tools.append(_tool(entry) or ProviderTool(NAME, dict(entry)))
        if not entries:
            marks["tools"] = []
    choice = None
    raw = inner.rest.get("toolChoice")
    if kit.is_mapping(raw) and len(raw) == 1:
        mode, value = next(iter(raw.items()))
        if mode in ("auto", "any") and value == {}:
            choice = ToolChoice("auto" if mode == "auto" else "required")
        elif (
            mode == "tool"
            and kit.is_mapping(value)
            and set(value) == {"name"}
            and kit.is_str(value["name"])
        ):
            choice = ToolChoice("required", (value["name"],))
        if choice is not None:
            inner.take("toolChoice")
    if inner.rest:
        fields.rest["toolConfig"] = inner.rest
    else:
        fields.take("toolConfig")
    return tuple(tools), choice


def _tool(entry: Mapping[str, Any]) -> Tool | None:
    spec = entry.get("toolSpec")
    if len(entry) != 1 or not kit.is_mapping(spec) or not kit.is_str(spec.get("name")):
        return None
    schema = spec.get("inputSchema")
    if "inputSchema" in spec and not (
        kit.is_mapping(schema) and set(schema) == {"json"}
    ):
        return None
    parameters = schema["json"] if schema is not None else None
    description = spec.get("description")
    if (parameters is not None and not kit.is_mapping(parameters)) or not (
        description is None or kit.is_str(description)
    ):
        return None
    rest = kit.rest(spec, _SPEC_KEYS)
    return Tool(
        spec["name"],
        description,
        parameters,
        extras={NAME: {"spec": rest}} if rest else {},
    )


def _parse_reasoning(
    fields: kit.Fields, marks: dict[str, Any]
) -> ReasoningConfig | None:
    extra = fields.rest.get("additionalModelRequestFields")
    thinking = extra.get("thinking") if kit.is_mapping(extra) else None
    if not kit.is_mapping(thinking) or not kit.is_mapping(extra):
        return None
    kind, budget = thinking.get("type"), thinking.get("budget_tokens")
    if kind == "enabled" and set(thinking) == {"type", "budget_tokens"}:
        if type(budget) is not int or budget <= 0:
            return None
        reasoning = ReasoningConfig(enabled=True, budget_tokens=budget)
    elif kind == "disabled" and set(thinking) == {"type"}:
        reasoning = ReasoningConfig(enabled=False)
    else:
        return None
    rest = kit.rest(extra, frozenset({"thinking"}))
    if rest:
        fields.rest["additionalModelRequestFields"] = rest
    else:
        fields.take("additionalModelRequestFields")
    return reasoning


def _compact(schema: Any) -> str:
    return json.dumps(schema, separators=(",", ":"), ensure_ascii=False)


def _parse_output(fields: kit.Fields, marks: dict[str, Any]) -> OutputFormat | None:
    config = fields.rest.get("outputConfig")
    text = config.get("textFormat") if kit.is_mapping(config) else None
    if not kit.is_mapping(config) or not kit.is_mapping(text) or len(text) != 2:
        return None
    structure = text.get("structure")
    inner = structure.get("jsonSchema") if kit.is_mapping(structure) else None
    if (
        text.get("type") != "json_schema"
        or not kit.is_mapping(structure)
        or set(structure) != {"jsonSchema"}
        or not kit.is_mapping(inner)
        or not set(inner) <= {"schema", "name", "description"}
        or not all(kit.is_str(value) for value in inner.values())
    ):
        return None
    try:
        schema = json.loads(inner["schema"])
    except (KeyError, ValueError):
        return None
    if not kit.is_mapping(schema):
        return None
    if _compact(schema) != inner["schema"]:
        marks["schema"] = inner["schema"]  # the text as sent
    rest = kit.rest(config, frozenset({"textFormat"}))
    if rest:
        fields.rest["outputConfig"] = rest
    else:
        fields.take("outputConfig")
    return OutputFormat(
        "json_schema", schema, inner.get("name"), inner.get("description")
    )


# Rendering -------------------------------------------------------------------------


def render_settings(request: Request, rendering: kit.Rendering) -> dict[str, Any]:
    """The body's keys other than ``system`` and ``messages``."""
    out: dict[str, Any] = {}
    outcomes = rendering.outcomes
    kept = dict(rendering.own_body)
    rendering.write_model(out, "modelId")
    _render_generation(request, rendering, kept, out)
    _render_tools(request, rendering, kept, out)
    if request.reasoning is not None:
        _render_reasoning(request.reasoning, rendering, kept, out)
    if request.metadata is not None:
        if kit.is_string_map(request.metadata):
            out["requestMetadata"] = dict(request.metadata)
        else:
            outcomes.dropped("metadata", "requestMetadata holds strings only")
    if request.output is not None:
        _render_output(request.output, rendering, kept, out)
    for field, reason in (
        ("cache", "Converse caches at cachePoint blocks only"),
        ("user", "Converse takes no end-user id"),
    ):
        if getattr(request, field) is not None:
            outcomes.dropped(field, reason)
    if request.service_tier is not None:
        tier: str | None = request.service_tier
        if not rendering.native and tier is not None:
            tier = kit.service_tier(tier, rendering.capabilities, outcomes)
        if tier is not None:
            out["serviceTier"] = {"type": tier}
    if request.stream is not None and not rendering.native:
        outcomes.dropped("stream", "ConverseStream is an operation of its own")
    out.update(kept)
    return out


def _merge(
    key: str, config: dict[str, Any], kept: dict[str, Any], out: dict[str, Any]
) -> None:
    """``out[key]``: ``config`` and the keys of that object this format kept
    (a kept value that is not an object stays as it came)."""
    held = kept.pop(key, None)
    if held is not None and not kit.is_mapping(held):
        kept[key] = held
    elif held is not None or config:
        out[key] = {**config, **(held or {})}


def _render_output(
    output: OutputFormat,
    rendering: kit.Rendering,
    kept: dict[str, Any],
    out: dict[str, Any],
) -> None:
    if output.type == "text":
        return  # what Converse answers without an output format
    if output.schema is None:
        rendering.outcomes.dropped(
            "output", "outputConfig takes a JSON Schema; JSON without one has none"
        )
        return
    schema = rendering.own.get("schema") if rendering.native else None
    inner: dict[str, Any] = {"schema": schema or _compact(output.schema)}
    if output.name is not None:
        inner["name"] = output.name
    if output.description:
        inner["description"] = output.description
    if output.strict is False:  # Converse always holds the answer to the schema
        rendering.outcomes.dropped(
            "output.strict", "outputConfig always holds the answer to the schema"
        )
    text = {"type": "json_schema", "structure": {"jsonSchema": inner}}
    _merge("outputConfig", {"textFormat": text}, kept, out)


def _render_generation(
    request: Request,
    rendering: kit.Rendering,
    kept: dict[str, Any],
    out: dict[str, Any],
) -> None:
    generation = request.generation
    config: dict[str, Any] = {}
    limit = rendering.max_output_tokens(generation.max_output_tokens)
    if limit is not None:
        config["maxTokens"] = limit
    config.update(rendering.settings(generation, _SENT))
    unset = ("top_k", "seed", "presence_penalty", "frequency_penalty", "logprobs")
    for name in (*unset, "top_logprobs"):
        if getattr(generation, name) is not None:
            rendering.outcomes.dropped(
                f"generation.{name}", "inferenceConfig has no such setting"
            )
    if generation.candidates not in (None, 1):
        rendering.outcomes.dropped("generation.candidates", "Converse answers once")
    _merge("inferenceConfig", config, kept, out)


def _render_tools(
    request: Request,
    rendering: kit.Rendering,
    kept: dict[str, Any],
    out: dict[str, Any],
) -> None:
    config: dict[str, Any] = {}
    tools: list[Any] = []
    for tool in rendering.tools:
        if isinstance(tool, ProviderTool):
            tools.append(dict(tool.body))
            continue
        spec: dict[str, Any] = {"name": tool.name}
        if tool.description:  # Converse refuses an empty one
            spec["description"] = tool.description
        parameters = rendering.parameters(tool)
        if parameters is not None:
            spec["inputSchema"] = {"json": dict(parameters)}
        elif not rendering.native:
            spec["inputSchema"] = {"json": {"type": "object", "properties": {}}}
        if tool.strict:
            rendering.outcomes.dropped(
                f"{rendering.where(tool)}.strict", "Converse has no strict tools"
            )
        spec.update(rendering.tool_extras(tool).get("spec", {}))
        tools.append({"toolSpec": spec})
    if tools or rendering.own.get("tools") == []:
        config["tools"] = tools
    choice = request.tool_choice
    if choice is not None:
        if choice.parallel is not None:
            rendering.outcomes.dropped(
                "tool_choice.parallel", "Converse has no parallel-calls setting"
            )
        if choice.mode == "required" and len(choice.names) == 1:
            config["toolChoice"] = {"tool": {"name": choice.names[0]}}
        elif choice.mode == "required" or (choice.mode == "auto" and tools):
            mode = "any" if choice.mode == "required" else "auto"
            config["toolChoice"] = {mode: {}}
            if choice.names:
                rendering.outcomes.approximated(
                    "tool_choice.names", "any tool may be called", mode
                )
        elif choice.mode == "none" and tools:
            rendering.outcomes.dropped("tool_choice", "Converse has no choice none")
    _merge("toolConfig", config, kept, out)


def _render_reasoning(
    reasoning: ReasoningConfig,
    rendering: kit.Rendering,
    kept: dict[str, Any],
    out: dict[str, Any],
) -> None:
    outcomes = rendering.outcomes
    thinking: dict[str, Any] | None = None
    if reasoning.enabled is False:
        thinking = {"type": "disabled"}
    elif reasoning.budget_tokens is not None or reasoning.effort is not None:
        budget = kit.budget_for(
            reasoning, rendering.capabilities, rendering.reasoning_table, outcomes
        )
        if budget is not None:
            thinking = {"type": "enabled", "budget_tokens": budget}
    elif reasoning.enabled:
        outcomes.dropped(
            "reasoning.enabled", "Anthropic's thinking on Bedrock takes a budget"
        )
    for name in ("summary", "include_thoughts"):
        if getattr(reasoning, name) is not None:
            outcomes.dropped(f"reasoning.{name}", "Converse has no such setting")
    config = {"thinking": thinking} if thinking is not None else {}
    _merge("additionalModelRequestFields", config, kept, out)
