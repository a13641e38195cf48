"""Whole requests on every normalizer: the shared part.

A normalizer gets ``parse_full_request`` and ``render_full_request`` by
inheriting :class:`WholeRequests` and naming its *request settings module*
(:class:`RequestSettings`) as the class attribute ``request_settings``. That
module only spells its own format:

- ``NAME``: the provider name;
- ``CONVERSATION_KEYS``: the top-level keys ``parse_request`` /
  ``render_request`` read and write (``{"messages"}``);
- ``parse_settings(body) -> Request``: every other top-level key of ``body``,
  read into the neutral fields, what has no neutral field kept verbatim in
  ``extras[NAME]["body"]`` (:data:`BODY`), and how the body spelled a field
  that has several spellings as a *marker*, another key of ``extras[NAME]``;
- ``render_settings(request, rendering) -> dict``: the body's keys other than
  the conversation's, from the neutral fields, ``rendering.own`` (the markers)
  and ``rendering.own_body`` (the kept keys, merged last), applying the rules
  of :mod:`canisters.providers._rules` and noting every outcome that is not
  exact through ``rendering.outcomes``.

For a body of its own format, ``render_settings(parse_settings(body))`` must
give back exactly the body's other keys: this is what makes
``render_full_request(parse_full_request(body)) == body``. Markers carry no data
(only spellings): what another provider's markers say is ignored, while another
provider's kept keys (unless :meth:`Rendering.claim` ed), tool extras and
provider tools are dropped and reported here, so a module never has to.

Writing one, following ``canisters/providers/openai_chat/request.py`` (the
reference module):

1. Parse with a :class:`Fields` of the body (``skip=CONVERSATION_KEYS``):
   :meth:`Fields.read` the keys whose values are taken as they are, from a
   table of key, neutral name and check (:func:`is_str`, :func:`is_int`,
   :func:`is_number`, :func:`is_bool`, :func:`is_mapping`,
   :func:`is_strings`, or your own), in one pass; :meth:`Fields.take` any
   other key with its check, when it is there (most bodies give a few of a
   format's keys: read a part only when its keys are given). A value that
   fails stays in ``fields.rest``, which becomes ``extras[NAME][BODY]``.
   Read a nested object (Gemini's ``generationConfig``, Ollama's
   ``options``) the same way with a ``Fields`` of its own, and keep what is
   left of it under a marker to merge back when rendering. Take a composite
   value (a ``tool_choice``, a ``thinking`` object) only when every key of it
   is understood, else leave it whole: what is kept verbatim comes back
   verbatim.
2. Build the parts with the trusted constructors (:func:`new_request`,
   :func:`new_tool`, :func:`new_generation`, :func:`new_tool_choice`...),
   freezing mappings (``FrozenDict(schema)``): the values are checked
   already. Tools of other kinds are :func:`new_provider_tool` ``(NAME,
   entry)``; a tool's other keys go in its own extras
   (``{NAME: {...}}``): everything in a tool's extras is data.
3. Render each neutral field the format has; for one it lacks, note it
   (``rendering.outcomes.dropped(field, reason)``); for one sent changed,
   ``approximated(field, detail, rule)``; fields that clash, ``conflict``; a
   value the format requires, ``synthesized`` (or use
   :meth:`Rendering.max_output_tokens`). The rules of
   :mod:`canisters.providers._rules` do the cross-format work and the noting:
   :func:`~canisters.providers.translate_schema` for schemas, ``narrowed`` /
   ``forced_with_reasoning`` / ``output_as_tool`` for tools, ``effort_for`` /
   ``budget_for`` for reasoning, ``clamped`` / ``stops`` / ``service_tier`` /
   ``sampling_with_reasoning`` / ``json_with_tools`` for settings. Apply the
   limits of ``rendering.capabilities`` only when ``not rendering.native``:
   a request read from this format goes back as it came.
   :meth:`Rendering.temperature` and :meth:`Rendering.stops` apply them to
   those two settings (:meth:`Rendering.settings` writes a format's plain
   generation settings with them), :meth:`Rendering.effort` to the effort
   level;
   :func:`own_extras` makes the parsed request's extras.
   What several formats spell alike is shared in
   :mod:`canisters.providers._requests_shared`: OpenAI's top-level settings
   (``openai_request``, ``render_openai_plain``), tool choice
   (``render_openai_choice``), structured output (``openai_format``), strict
   parameters (``function_parameters``) and tier (``render_service_tier``),
   Chat-shaped function tools (``chat_function``, ``chat_tool_entries``), a
   tool choice's flag and names (``with_parallel``, ``tool_choice_names``).
4. Wire it: ``class MyNormalizer(streams.Streaming, WholeRequests)`` with
   ``request_settings = my_request_module``.
5. Test as ``tests/test_providers_openai_chat_request.py`` does, with the
   checks of ``tests/requests_support.py``: every
   recorded request of the format and hand-written hard cases come back
   exactly (also after ``to_json`` / ``from_json``), rendered bodies pass the
   SDK's request types, the cross-format outcomes are the ones reported, and
   a property test of any body.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from collections.abc import Set as AbstractSet
from typing import TYPE_CHECKING, Any, Final, Protocol, TypeGuard

from .._frozen import EMPTY, FrozenDict
from .._trusted import _trusted
from ..conversation import Conversation
from ..exceptions import CanistersError, MalformedPayload, ProviderError, _excerpt
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
from . import _common as common
from . import _rules as rules
from ._common import Options
from ._guards import _holder
from ._lazy import lazy_request, pending_body
from ._rules import (
    DEFAULT_CAPABILITIES,
    DEFAULT_REASONING_TABLE,
    Capabilities,
    Outcomes,
    ReasoningTable,
    capabilities_for,
)
from ._rules.crossing import crossing
from ._rules.empty import renumbered
from ._rules.parameters import object_root

__all__ = [
    "BODY",
    "OPENAI_PLAIN",
    "Fields",
    "Rendering",
    "RequestSettings",
    "WholeRequests",
    "is_bool",
    "is_int",
    "is_mapping",
    "is_number",
    "is_str",
    "is_string_map",
    "is_strings",
    "kept_body",
    "own_extras",
    "new_cache",
    "new_generation",
    "new_output",
    "new_provider_tool",
    "new_reasoning",
    "new_request",
    "new_tool",
    "new_tool_choice",
]

BODY = "body"
"""The key of ``Request.extras[provider]`` holding the body's top-level keys
that have no neutral field, verbatim."""


# Trusted constructors --------------------------------------------------------------
#
# A parser checks every value it reads (is_str, is_int... below); building the
# request's parts through their constructors would check them again, and cost
# a settings parse as much as the conversation's. These build without the
# checks: every argument must already be of the field's type (tuples of
# strings, FrozenDicts for mappings, ``EMPTY`` for no extras). Use the
# constructors themselves for anything not checked.

_new_request = _trusted(Request)
_new_generation = _trusted(Generation)
_NO_CONVERSATION = Conversation()
NO_GENERATION = Generation()
"""The generation settings of a request that gives none."""

new_tool: Any = _trusted(Tool)
"""``new_tool(name, description, parameters, strict, extras)``, trusted:
``parameters`` a ``FrozenDict`` or ``None``, ``extras`` a ``FrozenDict``."""
new_provider_tool: Any = _trusted(ProviderTool)
"""``new_provider_tool(provider, body)``, trusted: ``body`` a ``FrozenDict``."""
new_tool_choice: Any = _trusted(ToolChoice)
"""``new_tool_choice(mode, names, parallel)``, trusted: ``names`` a tuple."""
new_output: Any = _trusted(OutputFormat)
"""``new_output(type, schema, name, description, strict)``, trusted."""
new_reasoning: Any = _trusted(ReasoningConfig)
"""``new_reasoning(enabled, effort, budget_tokens, summary,
include_thoughts)``, trusted."""
new_cache: Any = _trusted(CacheConfig)
"""``new_cache(key, retention)``, trusted."""


def new_generation(
    max_output_tokens: int | None = None,
    temperature: float | None = None,
    top_p: float | None = None,
    top_k: int | None = None,
    stop: tuple[str, ...] | None = None,
    seed: int | None = None,
    presence_penalty: float | None = None,
    frequency_penalty: float | None = None,
    candidates: int | None = None,
    logprobs: bool | None = None,
    top_logprobs: int | None = None,
) -> Generation:
    """:class:`~canisters.Generation` from checked values (``stop`` a tuple);
    the shared empty one when none is given."""
    if (
        max_output_tokens is None
        and temperature is None
        and top_p is None
        and top_k is None
        and stop is None
        and seed is None
        and presence_penalty is None
        and frequency_penalty is None
        and candidates is None
        and logprobs is None
        and top_logprobs is None
    ):
        return NO_GENERATION
    return _new_generation(
        max_output_tokens,
        temperature,
        top_p,
        top_k,
        stop,
        seed,
        presence_penalty,
        frequency_penalty,
        candidates,
        logprobs,
        top_logprobs,
    )


def new_request(
    *,
    model: str | None = None,
    tools: tuple[Tool | ProviderTool, ...] = (),
    tool_choice: ToolChoice | None = None,
    output: OutputFormat | None = None,
    generation: Generation = NO_GENERATION,
    reasoning: ReasoningConfig | None = None,
    cache: CacheConfig | None = None,
    user: str | None = None,
    metadata: FrozenDict[str, Any] | None = None,
    service_tier: str | None = None,
    stream: bool | None = None,
    extras: FrozenDict[str, Any] = EMPTY,
) -> Request:
    """:class:`~canisters.Request` (without its conversation, which
    ``parse_full_request`` adds) from checked values: what a settings parser
    returns."""
    return _new_request(
        _NO_CONVERSATION,
        model,
        tools,
        tool_choice,
        output,
        generation,
        reasoning,
        cache,
        user,
        metadata,
        service_tier,
        stream,
        extras,
    )


_MARKS: dict[str, FrozenDict[str, Any]] = {}


def marked(extras: Mapping[str, Any], provider: str) -> Mapping[str, Any]:
    """``extras`` with an entry for ``provider`` (empty when it has none): the
    mark of a request read from that format."""
    if provider in extras:
        return extras
    if extras:
        return FrozenDict({**extras, provider: EMPTY})
    # the extras of every request read with nothing kept: shared
    return _MARKS.get(provider) or _MARKS.setdefault(
        provider, FrozenDict({provider: EMPTY})
    )


# Shape checks -----------------------------------------------------------------------


def is_str(value: object) -> bool:
    """A string."""
    return isinstance(value, str)


def is_bool(value: object) -> bool:
    """A boolean."""
    return isinstance(value, bool)


def is_int(value: object) -> bool:
    """An int (not a bool)."""
    return type(value) is int


def is_number(value: object) -> bool:
    """An int or a float (not a bool)."""
    return type(value) is int or type(value) is float


_NOT_MAPPINGS = frozenset({str, int, float, bool, type(None), list})


def is_mapping(value: object) -> TypeGuard[Mapping[str, Any]]:
    """A JSON object (a dict, and any other JSON value, told at once, without
    the ABC's check)."""
    kind = type(value)
    if kind is dict:
        return True
    if kind in _NOT_MAPPINGS:
        return False
    return isinstance(value, (dict, Mapping))  # a dict subclass told first


def is_strings(value: object) -> bool:
    """A non-empty list of strings."""
    return (
        type(value) is list
        and bool(value)
        and all(isinstance(item, str) for item in value)
    )


def is_string_map(value: object) -> bool:
    """A JSON object of string values."""
    return is_mapping(value) and all(isinstance(item, str) for item in value.values())


def own_extras(
    provider: str, marks: dict[str, Any], rest: dict[str, Any]
) -> FrozenDict[str, Any]:
    """The extras of a request ``provider``'s parser read: its ``marks`` (the
    markers), with the keys ``rest`` kept verbatim as :data:`BODY`."""
    if rest:
        marks[BODY] = rest
    return FrozenDict({provider: marks}) if marks else EMPTY


OPENAI_PLAIN = {
    "model": ("model", is_str),
    "stream": ("stream", is_bool),
    "parallel_tool_calls": ("parallel", is_bool),
    "prompt_cache_key": ("cache_key", is_str),
    "prompt_cache_retention": ("retention", is_str),
    "user": ("user", is_str),
    "metadata": ("metadata", is_string_map),
    "service_tier": ("service_tier", is_str),
}
"""The top-level keys OpenAI Chat and OpenAI Responses spell alike, for
:meth:`Fields.read`: wire key -> (name, check)."""


class Fields:
    """The keys of a body (or of an object in it) not read yet.

    A parser :meth:`take` s each key it has a neutral field for, with a check of
    the value's shape; a value that does not pass (a ``null``, a string where a
    number goes) stays, and :attr:`rest` keeps it verbatim with the keys no
    neutral field holds, for the renderer of the same format to send back::

        fields = Fields(body, skip=CONVERSATION_KEYS)
        model = fields.take("model", is_str)
        ...
        extras = {NAME: {BODY: fields.rest}} if fields.rest else {}
    """

    __slots__ = ("rest",)

    def __init__(
        self, source: Mapping[str, Any], skip: frozenset[str] = frozenset()
    ) -> None:
        rest: dict[str, Any] = dict(source)
        for key in skip:
            rest.pop(key, None)
        self.rest = rest
        """The keys left: not read, or read and refused by their check."""

    def take(self, key: str, fits: Any = None) -> Any:
        """The value of ``key``, removed from :attr:`rest`, when present and
        ``fits(value)`` (any value when ``fits`` is ``None``); else ``None``."""
        if key not in self.rest:
            return None
        value = self.rest[key]
        if fits is not None and not fits(value):
            return None
        del self.rest[key]
        return value

    def read(self, table: Mapping[str, tuple[str, Any]]) -> dict[str, Any]:
        """:meth:`take` of every key of ``table`` (``{key: (name, fits)}``) at
        once: the values present that fit, under their ``name``, in one pass
        over the keys left (a body gives a few of the keys a format has)."""
        rest = self.rest
        values: dict[str, Any] = {}
        for key in rest.keys() & table.keys():  # the keys given, found at C speed
            name, fits = table[key]
            value = rest[key]
            if fits(value):
                values[name] = value
                del rest[key]
        return values

    def has(self, key: str) -> bool:
        """Whether ``key`` is still to read."""
        return key in self.rest


class RequestSettings(Protocol):
    """A provider's request settings module (the module itself is one)."""

    NAME: str
    """The provider name."""
    CONVERSATION_KEYS: frozenset[str]
    """The top-level keys the conversation is read from and written to."""

    def parse_settings(self, body: Mapping[str, Any]) -> Request:
        """The request's fields other than the conversation."""

    def render_settings(self, request: Request, rendering: Rendering) -> dict[str, Any]:
        """The body's keys other than the conversation's."""


def kept_body(request: Request, provider: str) -> Mapping[str, Any]:
    """The top-level keys ``provider``'s parser kept verbatim in ``request``."""
    own = request.extras.get(provider)
    body = own.get(BODY) if is_mapping(own) else None
    return body if is_mapping(body) else EMPTY


class Rendering:
    """What ``render_settings`` renders with: the options, the rules chosen for
    them, and where outcomes are noted.

    Built by :class:`WholeRequests` for one call.
    """

    __slots__ = (
        "_offered",
        "_unclaimed",
        "capabilities",
        "foreign",
        "model",
        "native",
        "options",
        "outcomes",
        "own",
        "own_body",
        "provider",
        "reasoning_table",
        "tools",
    )

    def __init__(self, request: Request, options: Options, provider: str) -> None:
        self.provider = provider
        """The format rendered."""
        self.options = options
        """The options of the call."""
        self.outcomes = Outcomes(options, provider)
        """Where every outcome that is not exact is noted (and refused under
        ``unsupported="error"``)."""
        given = options.capabilities
        self.capabilities: Capabilities = (
            given
            if type(given) is Capabilities
            else (given is None and DEFAULT_CAPABILITIES.get(provider))
            or capabilities_for(provider, given)
        )
        """What the target model takes."""
        self.reasoning_table: ReasoningTable = (
            options.reasoning_table or DEFAULT_REASONING_TABLE
        )
        """How effort levels and budgets translate."""
        self.model = options.model if options.model is not None else request.model
        """The model to send (the ``model=`` option wins)."""
        extras = request.extras
        own = extras.get(provider)
        self.own: Mapping[str, Any] = (
            own if type(own) is FrozenDict or is_mapping(own) else EMPTY
        )
        """The request's extras for this format: its markers and kept keys."""
        self.native = own is not None
        """Whether the request was read from this format (its extras have an
        entry for it, as ``parse_full_request`` always makes): its values go
        back as they came, without the limits of :attr:`capabilities`
        (temperature range, stop sequences, tiers), which apply to values
        translated from another format."""
        self.foreign = bool(extras) and not self.native
        """Whether the request was read from another format (its extras name
        another format and not this one)."""
        body = self.own.get(BODY) if self.own else None
        self.own_body: Mapping[str, Any] = (
            body if body is not None and is_mapping(body) else EMPTY
        )
        """The top-level keys this format's parser kept verbatim."""
        self.tools: tuple[Tool | ProviderTool, ...] = self._tools(request)
        """The request's tools this format can take: the function tools, and
        the provider tools bound to this format (the others are dropped,
        reported)."""
        self._unclaimed: dict[tuple[str, str], Any] = {}
        if len(extras) > (own is not None):  # other formats' entries
            self._foreign(request)

    def _tools(self, request: Request) -> tuple[Tool | ProviderTool, ...]:
        tools = self._offered = request.tools
        for tool in tools:  # most often: function tools without extras
            if type(tool) is not Tool or tool.extras:
                break
        else:
            return tools
        kept: list[Tool | ProviderTool] = []
        for index, tool in enumerate(request.tools):
            if isinstance(tool, ProviderTool) and tool.provider != self.provider:
                kind = tool.body.get(
                    "type", tool.body.get("name", next(iter(tool.body), "?"))
                )
                self.outcomes.dropped(
                    f"tools[{index}]",
                    f"the {tool.provider} provider tool ({_excerpt(kind)}) runs only "
                    f"there",
                )
                continue
            if isinstance(tool, Tool):
                for provider, extra in tool.extras.items():
                    if provider != self.provider and extra:
                        self.outcomes.dropped(
                            f"tools[{index}].extras.{provider}",
                            f"{provider}-only keys of tool {tool.name!r}: "
                            f"{', '.join(sorted(_keys(extra)))}",
                        )
            kept.append(tool)
        return tuple(kept)

    def _foreign(self, request: Request) -> None:
        for provider in request.extras:
            if provider != self.provider:
                for key, value in kept_body(request, provider).items():
                    self._unclaimed[provider, key] = value

    def claim(self, provider: str, key: str) -> Any:
        """The value another format's parser kept verbatim as ``key``, taken
        by this format's renderer (``None`` when absent): a field the neutral
        model lacks but the two formats share (OpenAI Chat's ``store`` for
        OpenAI Responses). What is not claimed is dropped, reported, after
        ``render_settings``."""
        return self._unclaimed.pop((provider, key), None)

    def finish(self) -> None:
        """Report the other formats' kept fields nobody claimed as dropped."""
        if not self._unclaimed:
            return
        for provider, key in self._unclaimed:
            self.outcomes.dropped(
                f"extras.{provider}.body.{key}",
                f"{provider}'s field without an equivalent",
            )
        self._unclaimed.clear()

    def write_model(self, out: dict[str, Any], key: str = "model") -> None:
        """Write the model into the body ``out`` at ``key``, for a format whose
        body names it. A request read from another format naming none (a
        Gemini request: its model is in the URL) is reported: the body needs
        one before it is sent (give ``model=``)."""
        if self.model is not None:
            out[key] = self.model
        elif not self.native and self.foreign:
            self.options.note(
                "dropped",
                self.provider,
                "model",
                f"the request names no model, which {self.provider}'s body "
                f"takes as {key!r}: give model= or set it before sending",
            )

    def max_output_tokens(self, value: int | None) -> int | None:
        """The output limit to send: ``value``, or for a format requiring one
        (its profile has a ``default_max_tokens``) the ``max_tokens=`` option
        or that default, reported as synthesized."""
        if value is not None:
            return value
        default = self.capabilities.default_max_tokens
        if default is None:
            return None
        given = self.options.max_tokens
        sent = given if given is not None else default
        self.outcomes.synthesized(
            "generation.max_output_tokens",
            f"the request has no output limit; {sent} sent",
            "the max_tokens option" if given is not None else "the profile's default",
        )
        return sent

    def temperature(self, value: float) -> float:
        """The temperature to send: ``value`` for a request of this format,
        else held to the model's range (:attr:`capabilities`), reported when
        moved."""
        if self.native:
            return value
        return rules.clamped(
            "generation.temperature",
            value,
            self.capabilities.temperature,
            self.outcomes,
        )

    def stops(self, values: tuple[str, ...]) -> list[str]:
        """The stop sequences to send: ``values`` for a request of this
        format, else as :func:`~canisters.providers._rules.generation.stops`
        keeps them for the model."""
        if self.native:
            return list(values)
        return rules.stops(values, self.capabilities, self.outcomes)

    def settings(
        self, generation: Generation, keys: Mapping[str, str]
    ) -> dict[str, Any]:
        """The settings of ``generation`` named in ``keys`` (``{field: wire
        key}``) that it gives, under their wire keys in the order of ``keys``:
        the temperature as :meth:`temperature` sends it, the stop sequences as
        :meth:`stops` does, any other value as it is."""
        sent: dict[str, Any] = {}
        for name, key in keys.items():
            value = getattr(generation, name)
            if value is None:
                continue
            if name == "temperature":
                value = self.temperature(value)
            elif name == "stop":
                value = self.stops(value)
            sent[key] = value
        return sent

    def effort(self, reasoning: ReasoningConfig) -> str | None:
        """The effort level to send for ``reasoning``, as
        :func:`~canisters.providers._rules.generation.effort_for` gives it for
        the model (:attr:`capabilities`, :attr:`reasoning_table`): a request of
        this format's own level as it came."""
        return rules.effort_for(
            reasoning,
            self.capabilities,
            self.reasoning_table,
            self.outcomes,
            native=self.native,
        )

    def where(self, tool: Tool | ProviderTool) -> str:
        """The field naming ``tool`` in reports: ``tools[i]``, ``i`` its
        position in the request (not in :attr:`tools`, which may have lost
        some)."""
        for index, offered in enumerate(self._offered):
            if offered is tool:
                return f"tools[{index}]"
        return "tools"

    def parameters(self, tool: Tool) -> Mapping[str, Any] | None:
        """The parameters schema of ``tool`` to send: as it came for a request
        of this format, else with the rules every target needs
        (:func:`~canisters.providers._rules.parameters.object_root`)."""
        schema = tool.parameters
        if schema is None or self.native or "type" in schema:
            return schema
        return object_root(schema, f"{self.where(tool)}.parameters", self.outcomes)

    def tool_extras(self, tool: Tool) -> Mapping[str, Any]:
        """The extras ``tool`` keeps for this format."""
        extras = tool.extras
        if not extras:
            return extras
        return extras.get(self.provider) or EMPTY  # a Tool's extras are mappings


def _keys(extra: Any) -> list[str]:
    if isinstance(extra, Mapping):
        found: list[str] = []
        for key, value in extra.items():
            if isinstance(value, Mapping) and value:
                found += [f"{key}.{inner}" for inner in value]
            else:
                found.append(str(key))
        return found
    return [repr(extra)]


class WholeRequests:
    """``parse_full_request`` / ``render_full_request`` for a normalizer
    naming its :class:`RequestSettings` module as the class attribute
    ``request_settings``.

    The class also needs the normalizer's ``name``, ``parse_request`` and
    ``render_request``, which it calls for the conversation.
    """

    __slots__ = ()

    if TYPE_CHECKING:  # what the normalizer class supplies
        request_settings: RequestSettings
        name: str
        parse_request: Callable[..., Conversation]
        render_request: Callable[..., dict[str, Any]]

    def parse_full_request(self, body: Any) -> Request:
        """Read a whole request body (or SDK params) into a
        :class:`~canisters.Request`: the conversation as ``parse_request``
        reads it, every other field into the neutral fields or, verbatim, into
        ``extras``; rendering it back to this format gives the body exactly.

        The settings (every key but the conversation's) are read when a field
        of the request other than ``conversation`` is first asked for, or
        when it is rendered to another format (malformed ones raise then);
        rendered back to this format before that, they go as they came, and
        only the conversation is rendered again. Until then the request keeps
        a copy of the body's top level, and the values nested in it (a tool's
        schema) are the body's own, shared with the bodies it renders: change
        them in neither while the request is in use, or read a field first."""
        mapping = common.as_mapping(body)
        conversation = self.parse_request(mapping)
        return lazy_request(
            conversation, mapping, self.name, self._read_settings, marked
        )

    def _read_settings(self, body: Mapping[str, Any]) -> Request:
        """The settings of ``body`` (a request without its conversation)."""
        return _parse_settings(self.request_settings, body)

    def render_full_request(self, request: Request, **options: Any) -> dict[str, Any]:
        """Render a whole request body from ``request``.

        The conversation goes as ``render_request`` sends it, with the same
        options; the other fields are translated where the format has an
        equivalent, and otherwise approximated or dropped: every outcome that is
        not exact is an :class:`~canisters.providers.Event` in ``report=``
        (naming the field, what happened and the rule), and refused with
        :class:`~canisters.UnsupportedContent` under ``unsupported="error"``
        (the default). See :class:`~canisters.providers.Options` for
        ``model=``, ``capabilities=``, ``max_tokens=`` and
        ``reasoning_table=``.
        """
        if not isinstance(request, Request):
            raise ProviderError(
                f"render_full_request takes a Request, got {type(request).__name__}"
            )
        render = getattr(self, "_render_as_read", None) or self.render_request
        # Settings not read since the body was (see parse_full_request) go
        # back as they came, where no option changes them, beside the
        # conversation this format's parser returned, rendered as it came.
        unread = pending_body(request, self.name)
        if unread is not None and _SETTING_OPTIONS.isdisjoint(options):
            messages = render(request.conversation, **options)
            return _as_read(unread, messages, self.request_settings.CONVERSATION_KEYS)
        opts = common.options_from(options)
        # The cross-format rules, once (the format's renderer is then called
        # without them); a request read from this format (its extras mark it)
        # keeps its ids and empty text.
        conversation, kept = crossing(
            request.conversation, self.name, opts, native=self.name in request.extras
        )
        since = len(opts.report.events) if opts.report is not None else 0
        messages = render(conversation, **options)
        renumbered(opts.report, since, kept)
        rendering = Rendering(request, opts, self.name)
        try:
            settings = self.request_settings.render_settings(request, rendering)
            rendering.finish()
        except CanistersError:
            raise
        except common.STRAY as error:
            raise ProviderError(
                f"{self.name}: cannot render the request's settings: {error}"
            ) from error
        if "model" in settings:  # first, as the SDKs and docs write it
            body = {"model": settings.pop("model")}
            body.update(messages)
        else:
            body = dict(messages)
        body.update(settings)
        return body


_held = _holder(None)

_SETTING_OPTIONS: Final = frozenset(
    {"model", "max_tokens", "capabilities", "reasoning_table"}
)
"""The options that change how settings are rendered."""


def _as_read(
    body: Mapping[str, Any], messages: dict[str, Any], keys: AbstractSet[str]
) -> dict[str, Any]:
    """``body`` with the values of its conversation's ``keys`` those of
    ``messages`` (in place; ``messages``' others after them)."""
    out: dict[str, Any] = {}
    for key, value in body.items():
        # (a conversation key the renderer does not write, such as a null
        # system instruction, is the settings' to give back: as it came)
        out[key] = messages.pop(key) if key in keys and key in messages else value
    out.update(messages)
    return out


def _parse_settings(settings: RequestSettings, body: Mapping[str, Any]) -> Request:
    """``settings.parse_settings(body)`` under the parsers' net: a stray error
    becomes :class:`~canisters.providers.MalformedPayload`, and the keys it
    reads (the conversation's were read already) are held to the depth bound."""
    try:
        request = settings.parse_settings(body)
    except CanistersError:
        raise
    except common.STRAY as error:
        _held(_settings_keys(settings, body))
        raise MalformedPayload(f"unexpected shape: {error}") from None
    if request.tools or request.extras or request.output is not None:
        _held(_settings_keys(settings, body))  # what may nest: schemas, kept keys
    return request


def _settings_keys(settings: RequestSettings, body: Mapping[str, Any]) -> Any:
    others = dict(body)  # copied at C speed, then the conversation's keys taken off
    for key in settings.CONVERSATION_KEYS:
        others.pop(key, None)
    return others
