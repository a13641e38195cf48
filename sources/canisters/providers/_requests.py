"""Whole requests on every normalizer: the shared part.

A normalizer gets ``parse_full_request`` and ``render_full_request`` by
inheriting :class:`WholeRequests` and naming its *request settings module*
(:class:`RequestSettings`) as ``request_settings``. That module only spells its
own format:

- ``NAME``: the provider name;
- ``CONVERSATION_KEYS``: the top-level keys ``parse_request`` /
  ``render_request`` read and write (``{"messages"}``);
- ``parse_settings(body) -> Request``: every other top-level key of ``body``,
  read into the neutral fields, what has no neutral field kept verbatim in
  ``extras[NAME]["body"]``, and how the body spelled a field that has several
  spellings as a *marker*, another key of ``extras[NAME]``;
- ``render_settings(request, rendering) -> dict``: the body's keys other than
  the conversation's, from the neutral fields, ``rendering.own`` (the markers)
  and ``rendering.own_body`` (the kept keys), applying the rules of
  :mod:`canisters.providers._rules` and noting every outcome that is not exact
  through ``rendering.outcomes``.

For a body of its own format, ``render_settings(parse_settings(body))`` must
give back exactly the body's other keys: this is what makes
``render_full_request(parse_full_request(body)) == body``. Markers carry no data
(only spellings): what another provider's markers say is ignored, while another
provider's kept keys, tool extras and provider tools are dropped and reported
here, before ``render_settings`` runs, so a module never has to.

``canisters/providers/openai_chat_request.py`` is the reference module.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any, Protocol

import attrs

from ..conversation import Conversation
from ..exceptions import CanistersError, ProviderError, _excerpt
from ..requests import ProviderTool, Request, Tool
from . import _common as common
from ._common import Options
from ._rules import (
    DEFAULT_REASONING_TABLE,
    Capabilities,
    Outcomes,
    ReasoningTable,
    capabilities_for,
)

__all__ = [
    "BODY",
    "Fields",
    "Rendering",
    "RequestSettings",
    "WholeRequests",
    "is_bool",
    "is_int",
    "is_mapping",
    "is_number",
    "is_str",
    "is_strings",
    "kept_body",
]

BODY = "body"
"""The key of ``Request.extras[provider]`` holding the body's top-level keys
that have no neutral field, verbatim."""


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


def is_mapping(value: object) -> bool:
    """A JSON object."""
    return isinstance(value, Mapping)


def is_strings(value: object) -> bool:
    """A non-empty list of strings."""
    return (
        type(value) is list
        and bool(value)
        and all(isinstance(item, str) for item in value)
    )


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
        self.rest: dict[str, Any] = {
            key: value for key, value in source.items() if key not in skip
        }
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
    body = own.get(BODY) if isinstance(own, Mapping) else None
    return body if isinstance(body, Mapping) else {}


class Rendering:
    """What ``render_settings`` renders with: the options, the rules chosen for
    them, and where outcomes are noted.

    Built by :class:`WholeRequests` for one call.
    """

    __slots__ = (
        "_unclaimed",
        "capabilities",
        "model",
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
        self.capabilities: Capabilities = capabilities_for(
            provider, options.capabilities
        )
        """What the target model takes."""
        self.reasoning_table: ReasoningTable = (
            options.reasoning_table or DEFAULT_REASONING_TABLE
        )
        """How effort levels and budgets translate."""
        self.model = options.model if options.model is not None else request.model
        """The model to send (the ``model=`` option wins)."""
        own = request.extras.get(provider)
        self.own: Mapping[str, Any] = own if isinstance(own, Mapping) else {}
        """The request's extras for this format: its markers and kept keys."""
        self.own_body = kept_body(request, provider)
        """The top-level keys this format's parser kept verbatim."""
        self.tools: tuple[Tool | ProviderTool, ...] = self._tools(request)
        """The request's tools this format can take: the function tools, and
        the provider tools bound to this format (the others are dropped,
        reported)."""
        self._foreign(request)

    def _tools(self, request: Request) -> tuple[Tool | ProviderTool, ...]:
        kept: list[Tool | ProviderTool] = []
        for index, tool in enumerate(request.tools):
            if isinstance(tool, ProviderTool) and tool.provider != self.provider:
                kind = tool.body.get("type", tool.body.get("name", "?"))
                self.outcomes.dropped(
                    f"tools[{index}]",
                    f"a {tool.provider} provider tool ({_excerpt(kind)}) runs only "
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
        self._unclaimed: dict[tuple[str, str], Any] = {}
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
        for provider, key in self._unclaimed:
            self.outcomes.dropped(
                f"extras.{provider}.body.{key}",
                f"a {provider} field without an equivalent",
            )
        self._unclaimed.clear()

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

    def tool_extras(self, tool: Tool) -> Mapping[str, Any]:
        """The extras ``tool`` keeps for this format."""
        extra = tool.extras.get(self.provider)
        return extra if isinstance(extra, Mapping) else {}


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
        ``extras``; rendering it back to this format gives the body exactly."""
        mapping = common.as_mapping(body)
        conversation = self.parse_request(mapping)
        settings = _parse_settings(self.request_settings, mapping)
        return attrs.evolve(settings, conversation=conversation)

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
        opts = common.options_from(options)
        messages = self.render_request(request.conversation, **options)
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
        body: dict[str, Any] = {}
        if "model" in settings:
            body["model"] = settings.pop("model")
        body.update(messages)
        body.update(settings)
        return body


@common.guarded
def _parse_settings(settings: RequestSettings, body: Mapping[str, Any]) -> Request:
    return settings.parse_settings(body)
