"""Whole requests: the conversation and everything else a model call carries.

A :class:`Request` holds the conversation, the model, the tools, the tool
choice, the output format, the generation settings, the reasoning and caching
configuration, the user and metadata, the service tier and the stream flag.
Every class is frozen and slotted, like the canisters; a field given a value of
the wrong type is refused with :class:`~canisters.ModelError`.

``None`` always means "not said": the request leaves the provider's default in
place, and a body rendered from it does not carry the field.

A field a provider's body has and this model lacks is kept verbatim in
``extras[provider]`` of the request (or of the :class:`Tool` it belongs to),
so that nothing a body holds is lost; see
:meth:`canisters.providers.RequestNormalizer.parse_full_request`.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any, Literal

import attrs

from ._frozen import EMPTY, freeze
from ._typecheck import number, refuse, text_or_none, whole
from .conversation import Conversation
from .exceptions import ModelError, _excerpt

__all__ = [
    "CacheConfig",
    "Generation",
    "OutputFormat",
    "ProviderTool",
    "ReasoningConfig",
    "Request",
    "Tool",
    "ToolChoice",
]

ToolMode = Literal["none", "auto", "required"]
OutputType = Literal["text", "json", "json_schema"]


def _strings(value: Iterable[str] | str | None) -> tuple[str, ...]:
    if value is None:
        return ()
    if isinstance(value, str):
        return (value,)
    if not isinstance(value, Iterable):
        raise ModelError(f"expected strings, got {_excerpt(value)}")
    return tuple(value)


def _optional_strings(value: Iterable[str] | str | None) -> tuple[str, ...] | None:
    return None if value is None else _strings(value)


def _optional_mapping(value: Mapping[str, Any] | None) -> Mapping[str, Any] | None:
    return None if value is None else freeze(value)


def _check_strings(owner: object, name: str) -> None:
    value = getattr(owner, name)
    if value is not None and not all(isinstance(item, str) for item in value):
        raise refuse(owner, name, "strings")


def _check_bools(owner: object, *names: str) -> None:
    for name in names:
        value = getattr(owner, name)
        if value is not None and not isinstance(value, bool):
            raise refuse(owner, name, "a bool or None")


def _check_wholes(owner: object, *names: str) -> None:
    for name in names:
        value = getattr(owner, name)
        if value is not None and not whole(value):
            raise refuse(owner, name, "an int or None")


def _check_numbers(owner: object, *names: str) -> None:
    for name in names:
        value = getattr(owner, name)
        if value is not None and not number(value):
            raise refuse(owner, name, "a number or None")


def _check_extras(owner: object) -> None:
    for key, value in owner.extras.items():  # type: ignore[attr-defined]
        if not isinstance(key, str) or not isinstance(value, Mapping):
            raise refuse(owner, "extras", "a mapping of provider names to mappings")


@attrs.frozen(weakref_slot=False)
class Tool:
    """A function the model may call: the application runs it.

    ``Tool("get_weather", "Weather of a city", {"type": "object", ...})``.
    """

    name: str
    """The name the model calls the tool by."""
    description: str | None = None
    """What the tool does, for the model."""
    parameters: Mapping[str, Any] | None = attrs.field(
        default=None, converter=_optional_mapping
    )
    """The arguments, as a JSON Schema (``None``: the body gave none)."""
    strict: bool | None = None
    """Whether the provider must hold the arguments to the schema exactly
    (OpenAI and Anthropic ``strict``); ``None``: not said."""
    extras: Mapping[str, Any] = attrs.field(default=EMPTY, converter=freeze)
    """Provider-only keys of the tool's entry, under the provider's name
    (``{"openai-chat": {...}}``)."""

    def __attrs_post_init__(self) -> None:
        if not isinstance(self.name, str) or not self.name:
            raise refuse(self, "name", "a non-empty string")
        text_or_none(self, "description")
        _check_bools(self, "strict")
        _check_extras(self)


@attrs.frozen(weakref_slot=False)
class ProviderTool:
    """A tool the provider runs itself (web search, code execution, an MCP
    server...), kept as its body in the provider's own spelling.

    It is bound to its provider: a body of another format cannot carry it, and
    rendering it there drops it (reported) or refuses it under
    ``unsupported="error"``.
    """

    provider: str
    """The provider whose format :attr:`body` is spelled in."""
    body: Mapping[str, Any] = attrs.field(converter=freeze)
    """The tool's entry, verbatim (``{"type": "web_search_20250305", ...}``)."""

    def __attrs_post_init__(self) -> None:
        if not isinstance(self.provider, str) or not self.provider:
            raise refuse(self, "provider", "a non-empty string")


@attrs.frozen(weakref_slot=False)
class ToolChoice:
    """Which tools the model may or must call, and whether several at once.

    - ``ToolChoice("none")``: call no tool; ``ToolChoice("auto")``: the model
      decides; ``ToolChoice("required")``: call at least one tool;
    - ``ToolChoice.tool("get_weather")``: call exactly that tool
      (``mode="required"`` with one name);
    - ``ToolChoice("auto", names=("a", "b"))``: only these tools may be called
      (a subset; ``"required"``: one of them must be).

    :attr:`parallel` alone (``mode=None``) says only whether calls may run in
    parallel, leaving the choice to the provider's default.
    """

    mode: ToolMode | None = None
    """``"none"``, ``"auto"``, ``"required"``, or ``None`` (not said)."""
    names: tuple[str, ...] = attrs.field(default=(), converter=_strings)
    """The tools allowed (empty: all of them)."""
    parallel: bool | None = None
    """Whether the model may call several tools in one turn (``None``: not said)."""

    def __attrs_post_init__(self) -> None:
        if self.mode not in (None, "none", "auto", "required"):
            raise refuse(self, "mode", "'none', 'auto', 'required' or None")
        _check_strings(self, "names")
        if self.names and self.mode is None:
            raise ModelError(
                "ToolChoice.names need a mode: 'auto' (only these may be called) "
                "or 'required' (one of these must be)",
                field="names",
            )
        _check_bools(self, "parallel")

    @classmethod
    def tool(cls, name: str, *, parallel: bool | None = None) -> ToolChoice:
        """The choice forcing the one tool ``name``."""
        return cls("required", (name,), parallel)

    @property
    def forced(self) -> str | None:
        """The one tool the choice forces, if it forces one."""
        if self.mode == "required" and len(self.names) == 1:
            return self.names[0]
        return None


@attrs.frozen(weakref_slot=False)
class OutputFormat:
    """The shape of the model's answer.

    ``OutputFormat("text")``; ``OutputFormat("json")`` (any JSON object);
    ``OutputFormat("json_schema", schema={...}, name="answer", strict=True)``.
    Its ``type`` is ``"text"``, ``"json"`` or ``"json_schema"``.
    """

    type: OutputType = "text"
    """``"text"``, ``"json"`` or ``"json_schema"``."""
    schema: Mapping[str, Any] | None = attrs.field(
        default=None, converter=_optional_mapping
    )
    """The JSON Schema the answer follows (``"json_schema"`` only)."""
    name: str | None = None
    """The schema's name (OpenAI requires one)."""
    description: str | None = None
    """What the answer is, for the model."""
    strict: bool | None = None
    """Whether the provider must hold the answer to the schema exactly."""

    def __attrs_post_init__(self) -> None:
        if self.type not in ("text", "json", "json_schema"):
            raise refuse(self, "type", "'text', 'json' or 'json_schema'")
        text_or_none(self, "name", "description")
        _check_bools(self, "strict")


@attrs.frozen(weakref_slot=False)
class Generation:
    """Sampling and length settings; ``None`` leaves the provider's default."""

    max_output_tokens: int | None = None
    """The most tokens the answer may have (reasoning included where the
    provider counts it)."""
    temperature: float | None = None
    """Sampling temperature (OpenAI takes 0 to 2, Anthropic 0 to 1)."""
    top_p: float | None = None
    """Nucleus sampling mass."""
    top_k: int | None = None
    """Sample from the ``top_k`` likeliest tokens (not on OpenAI)."""
    stop: tuple[str, ...] | None = attrs.field(
        default=None, converter=_optional_strings
    )
    """Sequences that end the answer."""
    seed: int | None = None
    """Seed for reproducible sampling."""
    presence_penalty: float | None = None
    """Penalty for tokens already present (additive, -2 to 2)."""
    frequency_penalty: float | None = None
    """Penalty growing with a token's count (additive, -2 to 2)."""
    candidates: int | None = None
    """How many answers to generate (OpenAI ``n``, Gemini ``candidateCount``)."""
    logprobs: bool | None = None
    """Whether to return the log probabilities of the answer's tokens."""
    top_logprobs: int | None = None
    """How many likeliest alternatives to return per token."""

    def __attrs_post_init__(self) -> None:
        _check_wholes(
            self, "max_output_tokens", "top_k", "seed", "candidates", "top_logprobs"
        )
        _check_numbers(
            self, "temperature", "top_p", "presence_penalty", "frequency_penalty"
        )
        _check_strings(self, "stop")
        _check_bools(self, "logprobs")


@attrs.frozen(weakref_slot=False)
class ReasoningConfig:
    """How much the model thinks before answering, and what it shows of it.

    An effort level and a token budget are both kept: a body giving one gives
    it back, and a translation to a format taking the other one goes through
    :class:`canisters.providers.ReasoningTable` (reported as approximated).
    """

    enabled: bool | None = None
    """Whether the model reasons at all (Anthropic ``thinking.type``, Ollama
    ``think``); ``None``: not said."""
    effort: str | None = None
    """An effort level (``"minimal"``, ``"low"``, ``"medium"``, ``"high"``...)."""
    budget_tokens: int | None = None
    """A token budget for the reasoning."""
    summary: str | None = None
    """The reasoning summary asked for (OpenAI Responses ``"auto"``,
    ``"concise"``, ``"detailed"``)."""
    include_thoughts: bool | None = None
    """Whether to return the thoughts (Gemini ``includeThoughts``)."""

    def __attrs_post_init__(self) -> None:
        _check_bools(self, "enabled", "include_thoughts")
        text_or_none(self, "effort", "summary")
        _check_wholes(self, "budget_tokens")


@attrs.frozen(weakref_slot=False)
class CacheConfig:
    """Prompt caching set on the request itself.

    Anthropic's positional ``cache_control`` markers stay where they are, in the
    extras of the canister, part or tool they mark.
    """

    key: str | None = None
    """A key grouping requests that share a prefix (OpenAI ``prompt_cache_key``)."""
    retention: str | None = None
    """How long the cache lives (OpenAI ``prompt_cache_retention``, e.g.
    ``"24h"``)."""

    def __attrs_post_init__(self) -> None:
        text_or_none(self, "key", "retention")


def _tools(value: Iterable[Tool | ProviderTool] | None) -> tuple[Any, ...]:
    if value is None:
        return ()
    if not isinstance(value, Iterable) or isinstance(value, (str, Mapping)):
        raise ModelError(f"Request.tools must be tools, got {_excerpt(value)}")
    return tuple(value)


def _conversation(value: Any) -> Conversation:
    if isinstance(value, Conversation):
        return value
    if value is None:
        return Conversation()
    return Conversation(value)


@attrs.frozen(weakref_slot=False)
class Request:
    """A whole model request, provider-neutral.

    Read one from a body with a normalizer's ``parse_full_request``, write one
    with ``render_full_request``::

        request = providers.get("openai-chat").parse_full_request(body)
        anthropic_body = providers.get("anthropic").render_full_request(
            request, unsupported="drop", report=report
        )

    Serialize it with :func:`canisters.to_json` like a conversation.
    """

    conversation: Conversation = attrs.field(
        factory=Conversation, converter=_conversation
    )
    """The messages."""
    model: str | None = None
    """The model asked for."""
    tools: tuple[Tool | ProviderTool, ...] = attrs.field(default=(), converter=_tools)
    """The tools offered, in the body's order."""
    tool_choice: ToolChoice | None = None
    """Which tools may or must be called."""
    output: OutputFormat | None = None
    """The shape of the answer."""
    generation: Generation = attrs.field(factory=Generation)
    """Sampling and length settings."""
    reasoning: ReasoningConfig | None = None
    """Reasoning settings."""
    cache: CacheConfig | None = None
    """Prompt caching settings of the request."""
    user: str | None = None
    """An id of the end user (OpenAI ``user``, Anthropic ``metadata.user_id``)."""
    metadata: Mapping[str, Any] | None = attrs.field(
        default=None, converter=_optional_mapping
    )
    """Key-value metadata stored with the call (OpenAI ``metadata``)."""
    service_tier: str | None = None
    """The service tier asked for, in the provider's words (``"flex"``,
    ``"priority"``, ``"standard_only"``...)."""
    stream: bool | None = None
    """Whether the answer is streamed."""
    extras: Mapping[str, Any] = attrs.field(default=EMPTY, converter=freeze)
    """What the body holds beyond the fields above, under the provider's name:
    its other top-level keys verbatim under ``"body"``, and how the body spelled
    fields that have several spellings (see each provider's module)."""

    def __attrs_post_init__(self) -> None:
        text_or_none(self, "model", "user", "service_tier")
        _check_bools(self, "stream")
        for index, tool in enumerate(self.tools):
            if not isinstance(tool, (Tool, ProviderTool)):
                raise ModelError(
                    f"Request.tools[{index}] must be a Tool or a ProviderTool, "
                    f"got {_excerpt(tool)}",
                    field="tools",
                )
        for name, kind in (
            ("tool_choice", ToolChoice),
            ("output", OutputFormat),
            ("reasoning", ReasoningConfig),
            ("cache", CacheConfig),
        ):
            value = getattr(self, name)
            if value is not None and not isinstance(value, kind):
                raise refuse(self, name, f"a {kind.__name__} or None")
        if not isinstance(self.generation, Generation):
            raise refuse(self, "generation", "a Generation")
        _check_extras(self)

    @property
    def functions(self) -> tuple[Tool, ...]:
        """The function tools (:class:`Tool`), in order."""
        return tuple(tool for tool in self.tools if isinstance(tool, Tool))

    def tool(self, name: str) -> Tool | None:
        """The function tool called ``name``, if the request offers one."""
        for tool in self.tools:
            if isinstance(tool, Tool) and tool.name == name:
                return tool
        return None
