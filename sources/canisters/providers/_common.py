"""Logic every normalizer shares: options, the fidelity report, pairing, folding,
policies, media encoding, argument strings, SDK-object coercion and error paths.

Provider modules stay thin: they map one provider's JSON shapes to canisters and
back, and call into this module for everything that is the same across
providers. The functions here are stable: other normalizers (first-party and
plugins) build on them.
"""

from __future__ import annotations

import base64
import binascii
import functools
import hashlib
import inspect
import json
import mimetypes
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any, Literal, NamedTuple, NoReturn, TypeVar

import attrs
import orjson

from .. import _base64
from .._frozen import EMPTY, FrozenDict
from .._trusted import _fresh, _trusted
from ..canisters import (
    Assistant,
    Document,
    ErrorCode,
    ErrorInfo,
    Invocation,
    Metadata,
    Result,
    Supervisor,
    Usage,
    User,
)
from ..content import (
    _URL_SCHEME,
    Audio,
    File,
    Image,
    Reasoning,
    Text,
    Video,
    _element_type,
    _opaque,
)
from ..conversation import Conversation, canisters_in
from ..exceptions import (
    CanistersError,
    MalformedPayload,
    ModelError,
    ProviderError,
    _excerpt,
)
from ..protocols import Canister, Content, Role
from ..serialization import (
    _TOO_DEEP,
    MAX_DEPTH,
    _deep_steps,
    _gc_disable,
    _gc_enable,
    _gc_enabled,
    _may_nest_deeper,
    _nests_deeper,
    _paused,
)
from ._rules.capabilities import Capabilities
from ._rules.ids import SAFE_CHARACTERS, fit_id
from ._rules.outcomes import FidelityWarning
from ._rules.policy import apply_policy
from ._rules.reasoning import ReasoningTable

__all__ = [
    "Event",
    "FidelityWarning",
    "Options",
    "BOUND",
    "SIGNATURES",
    "UNKNOWN",
    "bind",
    "bind_parts",
    "element_type",
    "opaque_part",
    "Report",
    "STRAY",
    "Unsupported",
    "as_mapping",
    "b64decode_exact",
    "b64encode",
    "complete_pairs",
    "data_url",
    "decode_error_text",
    "describe",
    "encode_error_text",
    "expect_list",
    "expect_mapping",
    "expect_optional_str",
    "encode_arguments",
    "expect_str",
    "expect_url",
    "built",
    "group_turns",
    "guarded",
    "guarded_keeping",
    "guarded_reading",
    "joins_alternating",
    "joins_step",
    "json_object",
    "media_bytes",
    "INTERPOSED",
    "mark_interposed",
    "media_mime",
    "mime_from_url",
    "mine",
    "marker",
    "holder",
    "with_marks",
    "response_metadata",
    "options_from",
    "rest",
    "parse_arguments",
    "parse_data_url",
    "positions",
    "reasoning_action",
    "ref_key",
    "Request",
    "adopt",
    "request_canisters",
    "trial_options",
    "render_arguments",
    "render_tool_id",
    "sanitize_tool_id",
    "unfit_tool_id",
    "sniff_mime",
    "synthesize_id",
    "unsupported",
    "with_response",
]

Unsupported = Literal["error", "drop", "placeholder"]
"""What to do with content a provider cannot take."""

Resolver = Callable[[str], bytes]
"""Turns a URL or a ``sha256:`` content id into bytes, for providers needing them."""

_F = TypeVar("_F", bound=Callable[..., Any])
_T = TypeVar("_T")

# The roles as globals, for the loops that compare every canister's role: reading
# a member off the enum class costs about ten times as much as reading a global.
USER = Role.User
ASSISTANT = Role.Assistant
SUPERVISOR = Role.Supervisor
DOCUMENT = Role.Document
INVOCATION = Role.Invocation
RESULT = Role.Result


# Canisters of the common wire shapes -------------------------------------------------

# The parsers read the commonest shapes (a message holding one text, a tool call
# whose arguments are compact JSON) in a fast way that builds their canisters
# through trusted constructors: every value is checked by the parser, and attrs'
# converters and checks would only repeat it. A canister's constructor takes its
# timestamp, its extras (frozen), then the class's own fields, in order; the id
# is made fresh and the rest of the envelope left out.
new_text = _trusted(Text)
new_reasoning = _trusted(Reasoning)
new_user = _fresh(User)
new_assistant = _fresh(Assistant)
new_supervisor = _fresh(Supervisor)
new_invocation = _fresh(Invocation)
new_result = _fresh(Result)
new_document = _fresh(Document)
new_conversation = _trusted(Conversation)
"""``Conversation(canisters)`` for a tuple of canisters the caller has built."""
# Media parts whose one source (or refs), absolute URL and string refs the caller
# has checked; fields in order: data, url, content_id, refs, mime_type, hint, id,
# extras (and filename, for a file).
new_image = _trusted(Image)
new_audio = _trusted(Audio)
new_video = _trusted(Video)
new_file = _trusted(File)


plain_text: Callable[[str], Text] = _trusted(
    Text, mime_type="text/plain", id=None, extras=EMPTY
)
"""``Text(text)``, for a ``str`` the caller has checked."""


_loads = orjson.loads


def compact_arguments(text: str) -> FrozenDict[str, Any] | None:
    """The arguments ``text`` holds when it is exactly what
    :func:`encode_arguments` writes for them (what :func:`parse_arguments` then
    keeps nothing of), frozen; ``None`` for any other text, which
    :func:`parse_arguments` reads.

    orjson reads and writes the text back: when the bytes agree, the text was
    canonical and orjson read it as the standard library does (an integer beyond
    64 bits, a repeated key, an escaped lone surrogate or ``NaN`` never
    round-trips). A text holding ``null`` is left to :func:`parse_arguments`:
    :func:`encode_arguments` writes such arguments through the standard library,
    whose numbers may be spelled otherwise (``1e-07`` for orjson's ``1e-7``).
    """
    if "null" in text:
        return None
    try:
        value = _loads(text)
        if type(value) is not dict:
            return None
        encoded = _dumps(value)
        if encoded != text.encode():
            return None
    except (ValueError, TypeError):
        return None
    return FrozenDict(value) if value else EMPTY


# Options and the fidelity report -----------------------------------------------------


@attrs.frozen
class Event:
    """One thing a conversion did not carry over exactly."""

    kind: Literal[
        "dropped",
        "downgraded",
        "moved",
        "synthesized",
        "placeholder",
        "cut",
        "approximated",
        "conflict",
    ]
    """What happened: dropped, downgraded (e.g. reasoning sent as text), moved
    (e.g. a tool-result image carried in a follow-up user message), synthesized
    (e.g. a made-up id, or a value a format requires), replaced by a
    placeholder, cut (a stream that ended early, read with
    ``truncated="keep"``: the missing end, and each piece left out because it
    did not finish), approximated (a request field sent changed, e.g. a
    temperature clamped), or conflict (request fields the format takes only
    apart, e.g. thinking with a forced tool)."""
    provider: str
    """The provider the conversion was for."""
    where: str
    """The canister and part concerned (``"canister 3 (user), part 1 (audio)"``),
    or the request field (``"generation.temperature"``)."""
    detail: str
    """What exactly, in words."""
    rule: str | None = None
    """For a request field approximated, synthesized or in conflict: the rule
    applied (``"reasoning table: high = 16384 tokens"``)."""


@attrs.define
class Report:
    """Collects the :class:`Event` s of one or more conversions.

    Pass one as ``report=`` to a normalizer's ``render_*`` method::

        report = providers.Report()
        body = normalizer.render_request(conversation, report=report)
        for event in report.events: ...
    """

    events: list[Event] = attrs.field(factory=list)
    """What happened, in order."""

    def add(
        self,
        kind: Any,
        provider: str,
        where: str,
        detail: str,
        rule: str | None = None,
    ) -> None:
        """Record one event."""
        self.events.append(Event(kind, provider, where, detail, rule))

    def __bool__(self) -> bool:
        return bool(self.events)

    def __len__(self) -> int:
        return len(self.events)


def _check_choice(name: str, allowed: tuple[str, ...]) -> Callable[..., None]:
    def check(instance: object, attribute: object, value: object) -> None:
        if value not in allowed:
            raise ProviderError(
                f"option {name} must be one of {', '.join(allowed)}; "
                f"got {_excerpt(value)}"
            )

    return check


def _check_type(name: str, kind: str) -> Callable[..., None]:
    def check(instance: object, attribute: object, value: object) -> None:
        if value is None:
            return
        if kind == "int":
            fits = type(value) is int and value > 0
        elif kind == "str":
            fits = isinstance(value, str)
        else:
            fits = isinstance(
                value, {"Capabilities": Capabilities}.get(kind, ReasoningTable)
            )
        if not fits:
            what = {"int": "a positive int", "str": "a string"}.get(kind, f"a {kind}")
            raise ProviderError(f"option {name} must be {what}; got {_excerpt(value)}")

    return check


@attrs.frozen
class Options:
    """The per-call options of ``render_request`` / ``render_response``.

    They are given as keyword arguments (``render_request(c, unsupported="drop")``).
    """

    unsupported: Unsupported = attrs.field(
        default="error",
        validator=_check_choice("unsupported", ("error", "drop", "placeholder")),
    )
    """Content the provider cannot take: ``"error"`` raises
    :class:`~canisters.UnsupportedContent`, ``"drop"`` drops it with a warning,
    ``"placeholder"`` replaces it with a text marker."""
    resolver: Resolver | None = None
    """Turns a URL or content id into bytes where the provider needs inline data.
    The library itself never fetches anything."""
    media_labels: bool = False
    """Put a text label (``"Media 1: girl wearing a hat"``) before each media part
    that has a ``hint``."""
    incomplete: Literal["skip", "error", "keep"] = attrs.field(
        default="skip", validator=_check_choice("incomplete", ("skip", "error", "keep"))
    )
    """Invocations without a result and results without an invocation, when
    rendering a request: ``"skip"`` leaves them out (reported), ``"error"`` raises
    :class:`~canisters.ProviderError`, ``"keep"`` sends them anyway."""
    reasoning: Literal["drop", "text"] = attrs.field(
        default="drop", validator=_check_choice("reasoning", ("drop", "text"))
    )
    """Reasoning the target provider cannot take back (another provider's, or any
    for providers without reasoning input): drop it, or send its text as text."""
    report: Report | None = None
    """Where to record what the conversion dropped, downgraded, moved or made up."""
    model: str | None = attrs.field(default=None, validator=_check_type("model", "str"))
    """``render_full_request`` only: the model to send, in place of the
    request's (the model names of one provider mean nothing to another)."""
    capabilities: Capabilities | None = attrs.field(
        default=None, validator=_check_type("capabilities", "Capabilities")
    )
    """``render_full_request`` only: what the target model takes
    (:class:`~canisters.providers.Capabilities`); ``None``: the format's
    conservative profile. Never guessed from the model's name."""
    max_tokens: int | None = attrs.field(
        default=None, validator=_check_type("max_tokens", "int")
    )
    """``render_full_request`` only: the output limit sent to a format that
    requires one (Anthropic) when the request has none; ``None``: the capability
    profile's ``default_max_tokens``. Reported as synthesized."""
    reasoning_table: ReasoningTable | None = attrs.field(
        default=None, validator=_check_type("reasoning_table", "ReasoningTable")
    )
    """``render_full_request`` only: how effort levels and token budgets
    translate (:class:`~canisters.providers.ReasoningTable`); ``None``: the
    default table."""

    def note(
        self,
        kind: Any,
        provider: str,
        where: str,
        detail: str,
        rule: str | None = None,
    ) -> None:
        """Record an event in :attr:`report`, if one was given."""
        if self.report is not None:
            self.report.add(kind, provider, where, detail, rule)


DEFAULT_OPTIONS = Options()


_OPTION_NAMES = frozenset(field.name for field in attrs.fields(Options))
# The options built last and the keyword arguments they were built from: a
# whole request's rendering builds them for its settings and again for its
# conversation, from the same values.
_last_options: tuple[dict[str, Any], Options] | None = None


def options_from(options: Mapping[str, Any]) -> Options:
    """Build :class:`~canisters.providers.Options` from keyword arguments;
    unknown names raise."""
    global _last_options
    if not options:
        return DEFAULT_OPTIONS
    last = _last_options
    if last is not None and len(last[0]) == len(options):
        for name, value in last[0].items():
            if options.get(name, options) is not value:
                break
        else:
            return last[1]  # the same values (Options are immutable)
    unknown = sorted(set(options) - _OPTION_NAMES)
    if unknown:
        known = ", ".join(sorted(_OPTION_NAMES))
        raise ProviderError(f"unknown option(s) {', '.join(unknown)}; known: {known}")
    built = Options(**options)
    _last_options = (dict(options), built)
    return built


# Errors and input shapes -------------------------------------------------------------


STRAY = (
    KeyError,
    TypeError,
    ValueError,
    AttributeError,
    IndexError,
    OverflowError,
    RecursionError,
)
"""The exceptions :func:`guarded` turns into
:class:`~canisters.MalformedPayload`: what code
reading malformed JSON raises when a shape check is missing."""


def guarded(function: _F) -> _F:
    """Turn any stray exception of a parser into :class:`~canisters.MalformedPayload`.

    Parsers check the shapes they rely on and name the path; this is the net under
    them, so that arbitrary input never escapes as ``KeyError`` or ``TypeError``.
    The body (the last positional argument, or ``body=``) is first held to
    :data:`BODY_DEPTH`; see :func:`guarded_reading` for a parser that reads only
    some of its keys.
    """
    return _guarded(function, None)


def guarded_reading(*keys: str) -> Callable[[_F], _F]:
    """:func:`guarded`, for a parser that reads only ``keys`` of a mapping body,
    as a request parser reads the messages but not the tools, schemas and
    settings beside them: only the values of ``keys`` are held to
    :data:`BODY_DEPTH`, at their paths (``$.messages``), so that a gateway does
    not walk a request's tool definitions on every call. A body that is not a
    dict is held whole, as :func:`guarded` holds it.
    """

    def decorate(function: _F) -> _F:
        return _guarded(function, keys)

    return decorate


def guarded_keeping(
    *keys: str,
) -> Callable[[Callable[[Any, list[Any]], _T]], Callable[[Any], _T]]:
    """:func:`guarded_reading`, for a request parser ``function(body, kept)``
    that tells what it keeps unread instead of having the whole of ``keys``
    held to the bound before it reads them.

    The parser appends to ``kept`` every nested value (dict or list) it keeps
    without reading it through (tool arguments, a block's other keys, a
    message it reads the general way); a parser that reads a whole body into
    typed parts then has nothing written out to be held, where
    :func:`guarded_reading` writes the body out first, a sixth of reading a
    short request. What was kept is held to the bound after the parse; when it
    nests too deeply, or when the parse fails (a body too deep is told so
    before anything else), ``keys`` are held as :func:`guarded_reading` holds
    them, so the refusal and its path are the same.
    """

    def decorate(function: Callable[[Any, list[Any]], _T]) -> Callable[[Any], _T]:
        dumps = orjson.dumps
        held = _holder(keys)

        def wrapper(body: Any) -> _T:
            kept: list[Any] = []
            # The collector is paused as serialization._paused pauses it,
            # inline: a call more would cost a short body a twentieth.
            running = _gc_enabled()
            if running:
                _gc_disable()
            try:
                result = function(body, kept)
            except Exception as error:
                held(body)
                _reraise(error)
            finally:
                if running:
                    _gc_enable()
            if kept:
                try:
                    dumps(kept)  # within the bound when orjson writes it
                except Exception:  # orjson.JSONEncodeError, a TypeError
                    held(body)
            return result

        functools.update_wrapper(wrapper, function)
        del wrapper.__wrapped__  # type: ignore[attr-defined]
        # What the parser is called with: the body alone.
        signature = inspect.signature(function)
        first = next(iter(signature.parameters.values()))
        wrapper.__signature__ = signature.replace(parameters=[first])  # type: ignore[attr-defined]
        return wrapper

    return decorate


def _holder(keys: tuple[str, ...] | None) -> Callable[[object], None]:
    """What :func:`guarded` (``keys`` ``None``) and :func:`guarded_reading`
    hold a body to: raise :class:`~canisters.MalformedPayload` at the path of a value
    nesting more than :data:`BODY_DEPTH` levels."""
    dumps = orjson.dumps
    limit = BODY_DEPTH - 1  # a key's value sits one level into the body

    def held(body: object) -> None:
        # check_depth's first step (see _nests_deeper), inline: what orjson
        # writes nests within the bound; anything else is walked.
        if keys is not None and type(body) is dict:
            for key in keys:
                value = body.get(key)
                if type(value) is dict or type(value) is list:
                    try:
                        dumps(value)
                    except Exception:  # orjson.JSONEncodeError, a TypeError
                        check_depth(value, limit, f"$.{key}")
        elif type(body) is dict or type(body) is list:
            try:
                dumps(body)
            except Exception:  # orjson.JSONEncodeError, a TypeError
                check_depth(body)

    return held


def _guarded(function: _F, keys: tuple[str, ...] | None) -> _F:
    held = _holder(keys)

    # A parser of a body alone (or a method of one) gets a wrapper of the same
    # parameters: packing and unpacking *args and **kwargs cost as much as the
    # rest of the net, on every body a gateway reads.
    shape = _parameters(function)
    if shape == ("body",):

        def wrapper(body: Any) -> Any:
            held(body)
            running = _gc_enabled()
            if running:
                _gc_disable()
            try:
                return function(body)
            except Exception as error:
                _reraise(error)
            finally:
                if running:
                    _gc_enable()

    elif shape == ("self", "body"):

        def wrapper(self: Any, body: Any) -> Any:  # type: ignore[misc]
            held(body)
            running = _gc_enabled()
            if running:
                _gc_disable()
            try:
                return function(self, body)
            except Exception as error:
                _reraise(error)
            finally:
                if running:
                    _gc_enable()

    else:

        def wrapper(*args: Any, **kwargs: Any) -> Any:  # type: ignore[misc]
            held(kwargs["body"] if "body" in kwargs else args[-1] if args else None)
            try:
                return _paused(functools.partial(function, *args, **kwargs))
            except Exception as error:
                _reraise(error)

    return functools.wraps(function)(wrapper)  # type: ignore[return-value]


def _parameters(function: Callable[..., Any]) -> tuple[str, ...] | None:
    """The names of ``function``'s parameters when they are all plain ones
    (positional or keyword, without defaults); ``None`` otherwise."""
    code = getattr(function, "__code__", None)
    if (
        code is None
        or getattr(function, "__defaults__", None)
        or getattr(function, "__kwdefaults__", None)
        or code.co_kwonlyargcount
        or code.co_posonlyargcount
        or code.co_flags & (inspect.CO_VARARGS | inspect.CO_VARKEYWORDS)
    ):
        return None
    return tuple(code.co_varnames[: code.co_argcount])


def _reraise(error: Exception) -> NoReturn:
    """Raise what a parser raises for ``error``: a stray exception of code
    reading a malformed body, and the model's refusal of a value it read, become
    :class:`~canisters.MalformedPayload` (caused by ``error``); anything else
    (a provider's
    error among them) is raised as it is."""
    if isinstance(error, ProviderError):
        raise error
    if isinstance(error, (ModelError, CanistersError)):
        raise MalformedPayload(str(error)) from error
    if isinstance(error, STRAY):
        raise MalformedPayload(f"{type(error).__name__}: {error}") from error
    raise error


BODY_DEPTH = MAX_DEPTH - 8
"""The deepest nesting of arrays and objects a provider body may have: the
values it holds then sit within :data:`~canisters.serialization.MAX_DEPTH` in the
conversation document, whichever field of the body they come from."""

ARGUMENTS_DEPTH = MAX_DEPTH - 3
"""The deepest nesting of a tool call's arguments as a JSON string (their object
sits three levels down in the conversation document)."""

_PATH_STEPS = 12  # a path cut to its first steps: an ancestor of the deep value


def check_depth(body: object, limit: int = BODY_DEPTH, path: str = "$") -> None:
    """Raise :class:`~canisters.MalformedPayload` if ``body`` (dicts and lists)
    nests more
    than ``limit`` levels, at the path of the value nesting too deeply (its
    first steps), on every Python version and without recursion."""
    if type(body) is not dict and type(body) is not list:
        return
    if not _nests_deeper(body, limit):
        return
    steps = _deep_steps(body, limit)[:_PATH_STEPS]
    where = path + "".join(
        f"[{step}]" if isinstance(step, int) else f".{step}" for step in steps
    )
    raise MalformedPayload(_TOO_DEEP, where)


def as_mapping(
    body: object, path: str = "$", *, received: bool = False
) -> Mapping[str, Any]:
    """Return ``body`` as a JSON mapping, converting provider SDK objects.

    Pydantic models (the OpenAI and Anthropic SDKs' responses and messages) are
    dumped with ``model_dump(mode="json", exclude_unset=True)`` so that only the
    fields the provider sent come back; ``to_dict()`` is tried next.
    ``received`` says the object holds what a provider sent (a response, a
    stream chunk): google-genai's bytes then read in the standard base64 the API
    sent, not the URL-safe form its models dump (and its client sends).
    """
    if type(body) is dict or isinstance(body, Mapping):
        return body
    dump = getattr(body, "model_dump", None)
    if callable(dump):
        try:
            # warnings=False: the OpenAI SDK's ParsedResponse (client.responses
            # .parse() and .stream()) dumps fine but warns about its own types.
            dumped = dump(
                mode="json", exclude_unset=True, by_alias=True, warnings=False
            )
        except TypeError:
            dumped = dump()
        if isinstance(dumped, Mapping):
            if received and type(body).__module__.startswith("google.genai"):
                raw = dump(mode="python", exclude_unset=True, by_alias=True)
                return _standard_base64(dumped, raw)  # type: ignore[no-any-return]
            return dumped
    to_dict = getattr(body, "to_dict", None)
    if callable(to_dict):
        dumped = to_dict()
        if isinstance(dumped, Mapping):
            return dumped
    raise MalformedPayload(f"expected an object, got {type(body).__name__}", path)


def _standard_base64(dumped: Any, raw: Any) -> Any:
    """``dumped`` with every value that is bytes in ``raw`` (the same model dumped
    without converting) written in standard base64.

    google-genai's models dump bytes (inline data, thought signatures) in
    URL-safe base64; the REST API sends and takes the standard alphabet, so an
    SDK object reads as the body the API sent.
    """
    if isinstance(raw, bytes):
        return b64encode(raw)
    if isinstance(raw, dict) and isinstance(dumped, dict):
        return {
            key: _standard_base64(value, raw.get(key)) for key, value in dumped.items()
        }
    if isinstance(raw, list) and isinstance(dumped, list) and len(raw) == len(dumped):
        return [_standard_base64(d, r) for d, r in zip(dumped, raw, strict=True)]
    return dumped


def expect_mapping(value: object, path: str) -> Mapping[str, Any]:
    """Return ``value`` if it is a JSON object (SDK objects converted), else raise."""
    # A dict, the common case, without the ABC check (several times slower).
    if type(value) is dict or isinstance(value, Mapping):
        return value
    if hasattr(value, "model_dump") or hasattr(value, "to_dict"):
        return as_mapping(value, path)
    raise MalformedPayload(f"expected an object, got {_kind(value)}", path)


def expect_list(value: object, path: str) -> Sequence[Any]:
    """Return ``value`` if it is a JSON array, else raise."""
    if isinstance(value, (list, tuple)):
        return value
    raise MalformedPayload(f"expected an array, got {_kind(value)}", path)


def expect_str(value: object, path: str) -> str:
    """Return ``value`` if it is a string, else raise."""
    if isinstance(value, str):
        return value
    raise MalformedPayload(f"expected a string, got {_kind(value)}", path)


def expect_optional_str(value: object, path: str) -> str | None:
    """Return ``value`` if it is a string or ``None``, else raise."""
    if value is None or isinstance(value, str):
        return value
    raise MalformedPayload(f"expected a string or null, got {_kind(value)}", path)


def expect_url(value: object, path: str) -> str:
    """Return ``value`` if it is an absolute URL (``https:``, ``data:``...), as media
    parts take them, else raise at ``path``."""
    text = expect_str(value, path)
    if _URL_SCHEME.match(text) is None:
        raise MalformedPayload(f"expected an absolute URL, got {_excerpt(text)}", path)
    return text


def built(factory: Callable[..., _T], path: str, /, **fields: Any) -> _T:
    """Return ``factory(**fields)``; a value the model refuses (:class:`ModelError`)
    raises :class:`~canisters.MalformedPayload` at ``path``, the item it was read
    from."""
    try:
        return factory(**fields)
    except ModelError as error:
        raise MalformedPayload(str(error), path) from None


def _kind(value: object) -> str:
    if value is None:
        return "null"
    return {
        bool: "a boolean",
        int: "a number",
        float: "a number",
        str: "a string",
        list: "an array",
        dict: "an object",
    }.get(type(value), type(value).__name__)


def rest(source: Mapping[str, Any], known: frozenset[str]) -> dict[str, Any]:
    """Return the keys of ``source`` outside ``known``: what rides in ``extras``."""
    if known.issuperset(source):
        return {}
    kept = {}
    for key, value in source.items():  # a loop: a comprehension is a call
        if key not in known:
            kept[key] = value
    return kept


def mine(item: Canister | Content, provider: str) -> Mapping[str, Any]:
    """Return the ``extras`` a canister or part keeps for ``provider`` (or empty)."""
    extras = item.extras
    if not extras:
        return extras
    value = extras.get(provider)
    return value if isinstance(value, Mapping) else {}


def marker(provider: str) -> Callable[..., FrozenDict[str, Any]]:
    """A function of marks (keywords) giving the extras of a new part or
    canister: ``provider``'s entry made of the truthy ones, frozen as a canister
    keeps its extras, or the shared empty extras when none is (most often)."""

    def extras(**marks: Any) -> FrozenDict[str, Any]:
        kept = {}
        for key, value in marks.items():  # a loop: a comprehension is a call
            if value:
                kept[key] = value
        return FrozenDict({provider: kept}) if kept else EMPTY

    return extras


def holder(provider: str) -> Callable[[Mapping[str, Any]], FrozenDict[str, Any]]:
    """A function of a mapping giving the extras of a new part or canister that
    hold it whole (a copy) as ``provider``'s entry, falsy values too (they record
    what a body left out), or the shared empty extras when it is empty."""

    def extras(entry: Mapping[str, Any]) -> FrozenDict[str, Any]:
        return FrozenDict({provider: dict(entry)}) if entry else EMPTY

    return extras


def with_marks(
    extras: Mapping[str, Any], provider: str, marks: Mapping[str, Any]
) -> dict[str, Any]:
    """``extras`` with ``provider``'s entry made of the truthy ``marks`` (and
    without it when none is), for a parser marking what it read."""
    kept = {key: value for key, value in marks.items() if value}
    changed = dict(extras)
    if kept:
        changed[provider] = kept
    else:
        changed.pop(provider, None)
    return changed


def response_metadata(
    model: object, usage: Usage | None, finish: str | None, response_id: object
) -> Metadata:
    """Return a reply's metadata from the fields a response body reports.

    ``model`` and ``response_id`` count only when they are strings.
    """
    return Metadata(
        model=model if isinstance(model, str) else None,
        usage=usage,
        finish_reason=finish,
        custom={"response_id": response_id} if isinstance(response_id, str) else {},
    )


def with_response(
    canister: Canister, provider: str, metadata: Metadata, envelope: dict[str, Any]
) -> Canister:
    """Return the first canister of a reply carrying the response's metadata.

    The rest of the response body, ``envelope``, rides in the canister's extras for
    ``provider`` under ``"response"``, so that rendering the reply gives it back.
    """
    return attrs.evolve(  # type: ignore[misc]
        canister,
        metadata=metadata,
        extras={
            **canister.extras,
            provider: {**mine(canister, provider), "response": envelope},
        },
    )


# Tool-call arguments -----------------------------------------------------------------

# What json.dumps(value, ensure_ascii=False) does, without building an encoder for
# every call. Error texts keep this spaced form.
_encode = json.JSONEncoder(ensure_ascii=False).encode
_encode_compact = json.JSONEncoder(ensure_ascii=False, separators=(",", ":")).encode
_dumps = orjson.dumps


def encode_arguments(arguments: Mapping[str, Any]) -> str:
    """Return the canonical JSON text of tool-call arguments: compact, unescaped.

    This is the form OpenAI's APIs write themselves (``{"city":"Paris"}``), and
    what pydantic-ai sends. orjson writes it about ten times faster than
    ``json``; the standard library takes over where orjson cannot be exact:
    integers beyond 64 bits and keys that are not strings (which orjson refuses),
    and NaN or infinities (which orjson would write as ``null``, so any output
    holding ``null`` is written again by the standard library).
    """
    try:
        encoded = _dumps(arguments)
    except TypeError:
        return _encode_standard(arguments)
    text = encoded.decode()
    # Searched in the text: ``in`` on bytes costs three times as much.
    if "null" in text:
        return _encode_standard(arguments)
    return text


def _encode_standard(arguments: Mapping[str, Any]) -> str:
    if _nests_deeper(arguments, ARGUMENTS_DEPTH):  # which parse_arguments refuses
        raise ProviderError(f"tool-call arguments are {_TOO_DEEP}")
    try:
        return _encode_compact(arguments)
    except RecursionError:
        raise ProviderError("tool-call arguments are nested too deeply") from None
    except (TypeError, ValueError) as error:
        raise ProviderError(
            f"tool-call arguments are not JSON-serializable: {error}"
        ) from None


def render_arguments(arguments: Mapping[str, Any], kept: object = None) -> str:
    """Render arguments as the JSON string OpenAI-style providers send.

    ``kept`` is the string as originally received (pretty-printed, odd key order):
    it is returned as is while it still decodes to ``arguments``, or, blank (as
    some servers send for a call without arguments), while there are none.
    """
    if isinstance(kept, str):
        if not arguments and not kept.strip():
            return kept
        try:
            if json.loads(kept) == arguments:
                return kept
        except (ValueError, RecursionError):
            pass
    return encode_arguments(arguments)


# What json.loads calls in C once it has skipped leading whitespace.
_scan_json: Callable[[str, int], tuple[Any, int]] = json.JSONDecoder().scan_once  # type: ignore[attr-defined]


def _json_object(text: str) -> Any:
    """``json.loads(text)``: a text that is one object and nothing around it (as
    arguments are) goes straight to the standard library's scanner, without
    the two whitespace matches and the checks around it (a third of the
    time, for short arguments); any other text, and every error, through
    ``json.loads`` itself."""
    if text[:1] == "{" and text[-1:] == "}":
        try:
            value, end = _scan_json(text, 0)
        except Exception:  # StopIteration, RecursionError: json.loads says why
            pass
        else:
            if end == len(text):
                return value
    return json.loads(text)


def parse_arguments(raw: object, path: str) -> tuple[dict[str, Any], str | None]:
    """Decode a JSON arguments string into a mapping.

    Returns the mapping and the original string when :func:`render_arguments`
    would not reproduce it exactly (so that it can ride in ``extras``). A string
    that is not a JSON object raises :class:`~canisters.MalformedPayload`.
    """
    if type(raw) is not str and isinstance(raw, Mapping):
        return dict(raw), None
    text = expect_str(raw, path)
    if text.strip() == "":
        # Some servers send "" for a call without arguments.
        return {}, text
    try:
        value = _json_object(text)
    except ValueError as error:
        raise MalformedPayload(f"arguments are not valid JSON: {error}", path) from None
    except RecursionError:
        raise MalformedPayload(
            f"arguments are not valid JSON: {_TOO_DEEP}", path
        ) from None
    if _may_nest_deeper(text, ARGUMENTS_DEPTH) and _nests_deeper(
        value, ARGUMENTS_DEPTH
    ):
        raise MalformedPayload(f"arguments are not valid JSON: {_TOO_DEEP}", path)
    if not isinstance(value, dict):
        raise MalformedPayload("arguments must encode a JSON object", path)
    try:
        kept = None if encode_arguments(value) == text else text
    except ProviderError as error:
        raise MalformedPayload(str(error), path) from None
    return value, kept


# Tool errors encoded in text ---------------------------------------------------------


def encode_error_text(error: ErrorInfo, *, compact: bool = False) -> str:
    """Encode an invocation error as text for providers without an error flag.

    The encoding is ``{"error": {"code": ..., "message": ...}}`` (with
    ``retryable`` and ``details`` when set), which :func:`decode_error_text` reads
    back. With ``compact``, a plain ``TOOL_ERROR`` is just its message (for
    providers whose own flag already says "error", such as Anthropic's
    ``is_error``).
    """
    plain = (
        error.code == ErrorCode.TOOL_ERROR.value
        and not error.retryable
        and error.details is None
    )
    if compact and plain:
        return error.message
    encoded: dict[str, Any] = {"code": error.code, "message": error.message}
    if error.retryable:
        encoded["retryable"] = True
    if error.details is not None:
        encoded["details"] = dict(error.details)
    return _encode({"error": encoded})


def decode_error_text(text: str, *, flagged: bool = False) -> ErrorInfo | None:
    """Read an error written by :func:`encode_error_text` back.

    With ``flagged`` (the provider said the result is an error), text that is not
    an encoded error becomes ``ErrorInfo("TOOL_ERROR", text)``; otherwise it gives
    ``None``.
    """
    if text.startswith('{"error"'):
        try:
            value = _json_object(text)
        except ValueError:
            value = None
        if isinstance(value, dict) and len(value) == 1:
            inner = value.get("error")
            if (
                isinstance(inner, dict)
                and isinstance(inner.get("code"), str)
                and isinstance(inner.get("message"), str)
                and set(inner) <= {"code", "message", "retryable", "details"}
                and isinstance(inner.get("retryable", False), bool)
                and isinstance(inner.get("details", {}), dict)
            ):
                return ErrorInfo(
                    inner["code"],
                    inner["message"],
                    inner.get("retryable", False),
                    inner.get("details"),
                )
    if flagged:
        return ErrorInfo(ErrorCode.TOOL_ERROR, text)
    return None


# Ids ---------------------------------------------------------------------------------


def synthesize_id(prefix: str, *parts: object) -> str:
    """Return a stable made-up id: ``prefix`` and a digest of ``parts``.

    Used where a provider has no call ids (legacy OpenAI functions, Gemini,
    Ollama) but another one needs them; the same input always gives the same id.
    """
    digest = hashlib.sha256(repr(parts).encode()).hexdigest()[:24]
    return f"{prefix}{digest}"


_UNSAFE_ID = re.compile(r"[^A-Za-z0-9_-]")


def sanitize_tool_id(value: str) -> str:
    """Make a call id fit ``^[A-Za-z0-9_-]+$`` (Anthropic's rule for tool ids).

    Ids that already fit are returned unchanged, so ids round-trip; others have
    each unsafe character replaced (deterministically, so calls and results
    still pair), and an empty id becomes ``"call_"``.
    """
    if value.isascii() and value.isidentifier():
        # [A-Za-z_][A-Za-z0-9_]*, most ids: checked without the pattern, 4x faster.
        return value
    if value and _UNSAFE_ID.search(value) is None:
        return value
    return fit_id(value, SAFE_CHARACTERS)


def render_tool_id(
    value: str,
    kept: object,
    options: Options,
    provider: str,
    index: int,
    canister: Canister,
) -> str:
    """Return the call id to send to a provider requiring ``^[A-Za-z0-9_-]+$``.

    ``kept`` is the id this provider sent itself (kept in the canister's extras
    when it did not fit the pattern): such an id goes back as it came, the
    provider deciding whether to take it. Any other unfit id is rewritten with
    :func:`sanitize_tool_id` and the rewrite reported as ``synthesized``.
    """
    fitted = sanitize_tool_id(value)
    if fitted is value or fitted == value or kept == value:
        return value
    options.note(
        "synthesized",
        provider,
        describe(index, canister),
        f"tool-call id {value!r} rewritten to {fitted!r}"
        f" ({provider} requires [A-Za-z0-9_-])",
    )
    return fitted


def unfit_tool_id(value: str) -> str | None:
    """Return ``value`` when :func:`sanitize_tool_id` would rewrite it, else None:
    what a parser keeps in extras so the same provider gets the id back."""
    return None if sanitize_tool_id(value) == value else value


def json_object(text: str) -> dict[str, Any] | None:
    """Return the JSON object ``text`` holds, or None when it holds no object:
    what a tool result written as JSON text means to a provider taking objects."""
    if not text.lstrip().startswith("{"):
        return None
    try:
        value = json.loads(text)
    except (ValueError, RecursionError):
        return None
    return value if isinstance(value, dict) else None


_REF_KEYS = {"openai-chat": "openai", "openai-responses": "openai"}


def ref_key(provider: str) -> str:
    """Return the key under which ``provider``'s uploaded-file ids sit in ``refs``.

    OpenAI's APIs share one file store, so both use ``"openai"``; every other
    provider uses its own name.
    """
    return _REF_KEYS.get(provider, provider)


# Pairing and folding -----------------------------------------------------------------


def canisters_of(conversation: Iterable[Canister], provider: str) -> list[Canister]:
    """Return the canisters of ``conversation`` as a list, refusing anything else.

    Every ``render_*`` starts here, so that a wrong argument is a
    :class:`~canisters.ProviderError` naming the provider, not an AttributeError.
    """
    try:
        return list(canisters_in(conversation, provider))
    except ModelError as error:
        raise ProviderError(str(error)) from error


def canisters_given(
    conversation: Iterable[Canister], provider: str
) -> Sequence[Canister]:
    """:func:`canisters_of`, without the copy when ``conversation`` is a
    :class:`~canisters.Conversation`: its own tuple, for a render that only reads
    it."""
    if type(conversation) is Conversation:
        return conversation.canisters
    return canisters_of(conversation, provider)


def trial_options(options: Options) -> Options | None:
    """The options of a fast renderer's trial: a pass that renders the canisters
    as they are, pairing invocations and results as it goes, and gives up (for
    the usual way: :func:`request_canisters`, then rendering) when a canister
    has extras or a pair is incomplete. What the trial notes goes to a report of
    its own, which :func:`adopt` hands on once the trial succeeds. ``None`` when
    no trial may run: a resolver (which a trial would call, for nothing when it
    gives up) or ``unsupported="drop"`` (whose warnings it would give twice).
    """
    if options.resolver is not None or options.unsupported == "drop":
        return None
    if options.report is None:
        return options
    trial: Options = attrs.evolve(options, report=Report())
    return trial


def adopt(options: Options, trial: Options) -> None:
    """Record in ``options``' report what a successful trial noted."""
    if trial is not options and options.report is not None and trial.report:
        for event in trial.report.events:
            options.report.add(event.kind, event.provider, event.where, event.detail)


def complete_pairs(
    canisters: Sequence[Canister], options: Options, provider: str
) -> list[Canister]:
    """Leave out invocations without a result and results without an invocation.

    Providers reject a call that is never answered and an answer to no call; what
    happens follows ``options.incomplete``. A result counts only after its
    invocation.
    """
    return _complete_pairs(canisters, options, provider).canisters


class Request(NamedTuple):
    """The canisters a request sends (:func:`request_canisters`)."""

    canisters: list[Canister]
    """What :func:`canisters_of`, then :func:`complete_pairs` give."""
    own: bool
    """Whether any of them keeps extras for the provider. When none does, a
    normalizer may render them the way that holds for canisters without extras,
    which is faster."""
    supervisors: list[int]
    """Where the supervisors are among them."""
    interposed: bool = False
    """Whether a user canister stands after an invocation not yet answered."""


def request_canisters(
    conversation: Iterable[Canister],
    options: Options,
    provider: str,
    *,
    adjacent: bool = False,
) -> Request:
    """Return the canisters a request sends, with what renderers ask of them first
    (in the one pass that pairs invocations and results).

    ``adjacent`` is for providers that want the results of a turn's calls right
    after the calls (OpenAI Chat, Anthropic): a user canister standing between
    calls and their results, as a Gemini turn holding an image and then a
    function response gives, moves after those results (reported as moved).
    """
    canisters = canisters_of(conversation, provider)
    request = _complete_pairs(canisters, options, provider, fresh=canisters)
    if adjacent and request.interposed:
        kept = _results_first(request.canisters, options, provider)
        return request._replace(canisters=kept)
    return request


INTERPOSED = "interposed"
"""The ``extras[provider]`` key of a user canister that the provider's own body
placed between calls and their results (see :func:`mark_interposed`)."""


def mark_interposed(canisters: list[Canister], provider: str) -> list[Canister]:
    """Mark, in place, the user canisters a ``provider``'s body placed between
    calls and their results, so that :func:`request_canisters` leaves them where
    they stood when rendering back to that provider (which decides whether it
    accepts them); for any other provider they move as usual."""
    roles = [canister.role for canister in canisters]
    if INVOCATION not in roles or RESULT not in roles:
        return canisters  # nothing stands between calls and results
    first = roles.index(INVOCATION)
    end = len(roles) - roles[::-1].index(RESULT)  # after the last result
    if USER not in roles[first:end]:
        # No user canister after a call and before a result (most bodies).
        return canisters
    held: list[int] = []
    marked: list[int] = []
    open_calls: set[str] = set()
    for index, canister in enumerate(canisters):
        role = canister.role
        if role is RESULT and canister.invocation_id in open_calls:  # type: ignore[attr-defined]
            open_calls.discard(canister.invocation_id)  # type: ignore[attr-defined]
            marked.extend(held)
            if not open_calls:
                held.clear()
        elif role is USER and open_calls:
            held.append(index)
        else:
            held.clear()
            if role is INVOCATION:
                open_calls.add(canister.invocation_id)  # type: ignore[attr-defined]
            elif role is not RESULT:
                open_calls.clear()
    for index in dict.fromkeys(marked):
        canister = canisters[index]
        own = {**canister.extras.get(provider, {}), INTERPOSED: True}
        canisters[index] = attrs.evolve(  # type: ignore[misc]
            canister, extras={**canister.extras, provider: own}
        )
    return canisters


def _results_first(
    canisters: list[Canister], options: Options, provider: str
) -> list[Canister]:
    """Move user canisters that stand between invocations and their results
    after those results (see :func:`request_canisters`)."""
    out: list[Canister] = []
    held: list[tuple[int, Canister]] = []  # users waiting for results to pass
    passed: set[int] = set()  # held users a result went before
    open_calls: set[str] = set()

    def release() -> None:
        for index, user in held:
            out.append(user)
            if index in passed:
                options.note(
                    "moved",
                    provider,
                    describe(index, user),
                    f"{provider} wants the results of calls right after them: "
                    "placed after the results",
                )
        held.clear()

    for index, canister in enumerate(canisters):
        role = canister.role
        if role is RESULT and canister.invocation_id in open_calls:  # type: ignore[attr-defined]
            open_calls.discard(canister.invocation_id)  # type: ignore[attr-defined]
            out.append(canister)
            passed.update(index for index, _ in held)
            if not open_calls:
                release()
        elif (
            role is Role.User
            and open_calls
            and not mine(canister, provider).get(INTERPOSED)
        ):
            held.append((index, canister))
        else:
            release()
            if role is INVOCATION:
                open_calls.add(canister.invocation_id)  # type: ignore[attr-defined]
            elif role is not RESULT:
                open_calls.clear()
            out.append(canister)
    release()
    return out


def _complete_pairs(
    canisters: Sequence[Canister],
    options: Options,
    provider: str,
    fresh: list[Canister] | None = None,
) -> Request:
    """:func:`complete_pairs` as a :class:`Request`; ``canisters`` is returned as
    is when it is ``fresh``, a list of the caller's."""
    invoked: dict[str, int] = {}
    answered: set[str] = set()
    orphans: list[int] = []
    duplicates: set[int] = set()
    foreign: list[int] = []
    supervisors: list[int] = []
    own = interposed = False
    for index, canister in enumerate(canisters):
        if canister.extras:
            own = own or provider in canister.extras
            if _bound_elsewhere(canister, provider):
                foreign.append(index)
        role = canister.role
        if role is INVOCATION:
            invoked.setdefault(canister.invocation_id, index)  # type: ignore[attr-defined]
        elif role is RESULT:
            invocation_id = canister.invocation_id  # type: ignore[attr-defined]
            if invocation_id in answered:
                # Rule: one result per call (Anthropic answers 400 to two
                # tool_result blocks for one tool_use): the second is an orphan.
                orphans.append(index)
                duplicates.add(index)
            elif invocation_id in invoked:
                answered.add(invocation_id)
            else:
                orphans.append(index)
        elif role is SUPERVISOR:
            supervisors.append(index)
        elif role is Role.User and len(answered) < len(invoked):
            interposed = True
    if foreign:
        canisters = _without_bound(canisters, foreign, options, provider)
        return _complete_pairs(canisters, options, provider)
    if options.incomplete == "keep" or (len(answered) == len(invoked) and not orphans):
        kept = fresh if canisters is fresh else list(canisters)
        return Request(kept, own, supervisors, interposed)
    pending = [index for key, index in invoked.items() if key not in answered]
    if options.incomplete == "error":
        names = [
            describe(index, canisters[index]) for index in sorted(pending + orphans)
        ]
        raise ProviderError(
            f"incomplete invocation/result pairs for {provider}: {'; '.join(names)}"
        )
    skipped = set(pending) | set(orphans)
    for index in sorted(skipped):
        options.note(
            "dropped",
            provider,
            describe(index, canisters[index]),
            "a second result for one invocation skipped"
            if index in duplicates
            else "incomplete invocation/result pair skipped",
        )
    kept = [c for index, c in enumerate(canisters) if index not in skipped]
    supervisors = [index for index, c in enumerate(kept) if c.role is SUPERVISOR]
    return Request(kept, own, supervisors, interposed)


BOUND = "bound"
"""Extras key: the names of provider-bound artifacts a canister carries.

A normalizer sets ``extras[provider][BOUND]`` on a canister holding something
only ``provider`` understands: a signature kept in extras, a server-tool item,
a code-execution part kept as an empty text placeholder. Rendering for any
other provider reports them as dropped (:func:`complete_pairs`), leaves out the
placeholders and the canisters that were nothing else.
"""


SIGNATURES: set[str] = set()
"""The bound names that carry only a signature (Gemini's ``thoughtSignature``),
declared by their normalizer. Another provider cannot check them, so they are
dropped and reported as reasoning signed elsewhere is; every other bound element
holds content (a server tool's call or results, code run and its output) and
follows the ``unsupported`` option."""


def _bound_elsewhere(canister: Canister, provider: str) -> bool:
    for name, data in canister.extras.items():
        if name != provider and BOUND in data:
            return True
    return False


UNKNOWN = "unknown"
"""Extras key, beside :data:`BOUND`: the types among a canister's bound names that
the normalizer does not know (a block, part, item or role a provider added
since). Rendering for another provider applies the ``unsupported`` option to
them (:func:`unsupported`): refused, dropped or replaced by a placeholder, and
reported."""


element_type = _element_type
"""The name an element of a type the normalizer does not know goes by (its
``type``, ``role`` or kind)."""


def opaque_part(provider: str, element: Mapping[str, Any]) -> Text:
    """The part standing for a content element of a type the normalizer does not
    know: an empty text holding the element whole in
    ``extras[provider]["raw"]``, at the element's place among the parts. The
    canister holding it is marked with :func:`bind`."""
    extras = FrozenDict({provider: {"raw": dict(element)}})
    part: Text = new_text("", "text/plain", None, extras)
    return part


def bind_parts(marks: dict[str, Any], parts: Iterable[Any]) -> None:
    """Mark a canister's extras ``marks`` as holding the parts of unknown types
    among ``parts`` (made by :func:`opaque_part`), if any (see :func:`bind`)."""
    found = [
        held[1]
        for part in parts
        # An element kept whole is an empty text: most parts fail the first test.
        if type(part) is Text and not part.text and (held := _opaque(part)) is not None
    ]
    if found:
        bind(marks, [element_type(raw) for raw in found])


def bind(marks: dict[str, Any], types: Iterable[str], *, unknown: bool = True) -> None:
    """Mark a canister's extras ``marks`` (its provider's entry) as holding
    elements of ``types`` that go back to that provider only (:data:`BOUND`),
    and, when ``unknown``, as types the normalizer does not know
    (:data:`UNKNOWN`)."""
    names = list(types)
    if not names:
        return
    marks[BOUND] = [*marks.get(BOUND, ()), *names]
    if unknown:
        marks[UNKNOWN] = [*marks.get(UNKNOWN, ()), *names]


def reply_canisters(
    conversation: Conversation, options: Options, provider: str
) -> Conversation:
    """A reply to render for ``provider``: what another provider's elements
    (server-tool blocks, items of unknown types) left out, each reported as
    in a request (:data:`BOUND`); every canister stays, as the first holds the
    reply's metadata."""
    canisters = canisters_given(conversation, provider)
    foreign = [
        index
        for index, canister in enumerate(canisters)
        if canister.extras and _bound_elsewhere(canister, provider)
    ]
    if not foreign:
        return conversation
    return Conversation(
        tuple(_without_bound(canisters, foreign, options, provider, keep=True))
    )


def _without_bound(
    canisters: Sequence[Canister],
    foreign: list[int],
    options: Options,
    provider: str,
    *,
    keep: bool = False,
) -> list[Canister]:
    kept = list(canisters)
    for index in reversed(foreign):
        canister = kept[index]
        owners = [
            name
            for name, data in canister.extras.items()
            if name != provider and BOUND in data
        ]
        where = describe(index, canister)
        placeholders: list[Text] = []
        for owner in owners:
            data = canister.extras[owner]
            unknown = list(dict.fromkeys(data.get(UNKNOWN, ())))
            if unknown:
                text = unsupported(
                    options,
                    provider,
                    f"{where}, element ({', '.join(unknown)})",
                    f"{owner} type the library does not know",
                )
                if text is not None:
                    placeholders.append(new_text(text, "text/plain", None, EMPTY))
            names = [name for name in data[BOUND] if name not in unknown]
            signatures = [name for name in names if name in SIGNATURES]
            held = [name for name in names if name not in SIGNATURES]
            if held:
                text = unsupported(
                    options,
                    provider,
                    f"{where}, element ({', '.join(dict.fromkeys(held))})",
                    f"{owner}-only {', '.join(held)} not sent to {provider}",
                )
                if text is not None:
                    placeholders.append(new_text(text, "text/plain", None, EMPTY))
            if signatures:
                options.note(
                    "dropped",
                    provider,
                    where,
                    f"{owner}-only {', '.join(signatures)} not sent to {provider}",
                )
        extras = {k: v for k, v in canister.extras.items() if k not in owners}
        if canister.role in (Role.Assistant, Role.User, Role.Supervisor):
            # Placeholders: empty texts standing for the owner's wire items.
            content = tuple(
                part
                for part in canister.content  # type: ignore[attr-defined]
                if not (
                    part.type == "text"
                    and not part.text
                    and any(owner in part.extras for owner in owners)
                )
            ) + tuple(placeholders)
            if not content and canister.role is not Role.User and not keep:
                del kept[index]
                continue
            kept[index] = attrs.evolve(canister, content=content, extras=extras)  # type: ignore[misc]
        else:
            kept[index] = attrs.evolve(canister, extras=extras)  # type: ignore[misc]
    return kept


def positions(canisters: Iterable[Canister]) -> dict[str, int]:
    """Map each canister id to its first index: where a canister kept or
    rewritten by :func:`complete_pairs` stood in the conversation."""
    found: dict[str, int] = {}
    for index, canister in enumerate(canisters):
        found.setdefault(canister.id, index)
    return found


def joins_alternating(provider: str) -> Callable[[Canister, Canister], bool]:
    """Join rule for providers that need alternating roles (Anthropic).

    A canister joins the previous turn when both have the same wire role, unless
    it was parsed from a separate message (``extras[provider]["split"]``).
    """

    def joins(previous: Canister, canister: Canister) -> bool:
        return not mine(canister, provider).get("split")

    return joins


def joins_step(provider: str) -> Callable[[Canister, Canister], bool]:
    """Join rule for folding invocations into the assistant turn before them.

    An invocation joins the previous assistant or invocation of the same step
    (``None`` matches any), unless it was parsed from a separate message
    (``extras[provider]["split"]``). Everything else starts a new message.
    """

    def joins(previous: Canister, canister: Canister) -> bool:
        if canister.role is not Role.Invocation:
            return False
        steps = (previous.step, canister.step)
        if None not in steps and steps[0] != steps[1]:
            return False
        return not mine(canister, provider).get("split")

    return joins


def group_turns(
    canisters: Iterable[Canister],
    wire_role: Callable[[Canister], str],
    joins: Callable[[Canister, Canister], bool],
) -> list[tuple[str, list[Canister]]]:
    """Group canisters into wire messages.

    ``wire_role`` names the message role each canister goes into; a canister
    starts a new message when its role differs from the previous one's or when
    ``joins(previous_canister, canister)`` says no. Folding an assistant turn with its
    invocations and merging consecutive user turns are both this function with
    different ``joins`` rules.
    """
    turns: list[tuple[str, list[Canister]]] = []
    for canister in canisters:
        role = wire_role(canister)
        if turns and turns[-1][0] == role and joins(turns[-1][1][-1], canister):
            turns[-1][1].append(canister)
        else:
            turns.append((role, [canister]))
    return turns


# Unsupported content and reasoning ---------------------------------------------------


def describe(
    index: int, canister: Canister, part_index: int | None = None, part: Any = None
) -> str:
    """Name a canister (and a part of it) for errors and reports."""
    # _value_: what .value gives, without the enum's descriptor (a quarter of
    # the cost of this function on the parts rendered through it).
    role = canister.role._value_
    if part_index is None:
        return f"canister {index} ({role})"
    kind = getattr(part, "type", type(part).__name__)
    return f"canister {index} ({role}), part {part_index} ({kind})"


def unsupported(options: Options, provider: str, where: str, reason: str) -> str | None:
    """Apply the unsupported-content policy; the one place every normalizer uses.

    Raises :class:`~canisters.UnsupportedContent` under ``"error"``; under
    ``"drop"`` warns and returns ``None``; under ``"placeholder"`` returns the text
    to put in the part's place. Both non-raising outcomes are reported.
    """
    return apply_policy(
        options, provider, where, reason, placeholder=True, stacklevel=4
    )


def reasoning_action(
    part: Any, provider: str, options: Options, where: str, *, native: bool
) -> Literal["native", "text", "drop"]:
    """Decide how a :class:`~canisters.Reasoning` part goes to ``provider``.

    ``native`` says whether the provider takes reasoning back at all. Signed or
    redacted reasoning goes natively only to the provider that issued it; unsigned
    reasoning goes natively only where the provider accepts it without a
    signature (never, for the providers built in). Everything else follows
    ``options.reasoning`` and is reported.
    """
    bound = part.signature is not None or part.redacted is not None
    if native and bound and part.provider == provider:
        return "native"
    if options.reasoning == "text" and part.text:
        options.note("downgraded", provider, where, "reasoning sent as text")
        return "text"
    options.note("dropped", provider, where, "reasoning the provider cannot take back")
    return "drop"


# Media -------------------------------------------------------------------------------


def b64encode(data: bytes) -> str:
    """Standard base64 (``+`` and ``/``, padded), as every provider takes it."""
    return _base64.encode(data)


def b64decode_exact(text: str, path: str = "$") -> tuple[bytes, bool]:
    """Decode base64 (standard or URL-safe); tell whether :func:`b64encode` of the
    bytes gives ``text`` back exactly (when not, keep the original string)."""
    padding = -len(text) % 4
    try:
        if "-" in text or "_" in text:
            data = base64.urlsafe_b64decode(text + "=" * padding)
            return data, False  # b64encode writes "+" and "/"
        data = _base64.decode(text + "=" * padding)
    except (binascii.Error, ValueError) as error:
        raise MalformedPayload(f"invalid base64: {error}", path) from None
    return data, not padding and _canonical(text, data)


def _canonical(text: str, data: bytes) -> bool:
    """Whether :func:`b64encode` gives ``text`` back from ``data``, which
    ``text`` decodes to strictly (standard alphabet, padded, nothing else).

    Each group of three bytes has one spelling, so only the last group can
    differ: in the unused bits of its last character. Re-encoding that group
    alone settles it, where re-encoding the whole (megabytes for media) took
    about a fifth of reading it.
    """
    if not data:
        return not text
    tail = data[-(len(data) % 3 or 3) :]  # what b64encode writes through binascii
    return binascii.b2a_base64(tail, newline=False).decode() == text[-4:]


_DATA_URL = re.compile(r"data:([^;,]*)((?:;[^;,]*)*?);base64,(.*)", re.DOTALL)


def parse_data_url(url: str) -> tuple[str, bytes] | None:
    """Split a base64 ``data:`` URL into media type and bytes.

    Returns ``None`` when the URL is not a base64 data URL, or when
    :func:`data_url` would not rebuild it exactly (the caller keeps it as a URL).
    """
    if not url.startswith("data:"):
        return None
    # The head, up to the first comma, is "data:", a media type and ";base64,",
    # with no other parameter (data_url() writes none back).
    start = url.find(",") + 1
    mime = url[5 : start - 8]
    if url[start - 8 : start] != ";base64," or not mime or ";" in mime:
        return None
    encoded = url[start:]
    try:
        data = _base64.decode(encoded)
    except (binascii.Error, ValueError):
        return None
    # data_url() rebuilds the head as matched: only the base64 may differ.
    if not _canonical(encoded, data):
        return None
    return mime, data


def data_url(mime_type: str, data: bytes) -> str:
    """Build a base64 ``data:`` URL."""
    return f"data:{mime_type};base64,{b64encode(data)}"


_MAGIC: tuple[tuple[bytes, int, str], ...] = (
    (b"\x89PNG\r\n\x1a\n", 0, "image/png"),
    (b"\xff\xd8\xff", 0, "image/jpeg"),
    (b"GIF87a", 0, "image/gif"),
    (b"GIF89a", 0, "image/gif"),
    (b"%PDF-", 0, "application/pdf"),
    (b"ID3", 0, "audio/mpeg"),
    (b"\xff\xfb", 0, "audio/mpeg"),
    (b"\xff\xf3", 0, "audio/mpeg"),
    (b"\xff\xf2", 0, "audio/mpeg"),
    (b"fLaC", 0, "audio/flac"),
    (b"OggS", 0, "audio/ogg"),
    (b"\x1aE\xdf\xa3", 0, "video/webm"),
    (b"PK\x03\x04", 0, "application/zip"),
)


def sniff_mime(data: bytes) -> str | None:
    """Infer a media type from the first bytes (magic numbers), or ``None``."""
    for magic, offset, mime in _MAGIC:
        if data[offset : offset + len(magic)] == magic:
            return mime
    if data[:4] == b"RIFF" and len(data) >= 12:
        return {
            b"WEBP": "image/webp",
            b"WAVE": "audio/wav",
            b"AVI ": "video/x-msvideo",
        }.get(data[8:12])
    if data[4:8] == b"ftyp":
        return "video/mp4"
    return None


_EXTRA_TYPES = {
    ".webp": "image/webp",
    ".mp3": "audio/mpeg",
    ".wav": "audio/wav",
    ".flac": "audio/flac",
    ".m4a": "audio/mp4",
    ".md": "text/markdown",
}


def mime_from_url(url: str) -> str | None:
    """Infer a media type from a URL: a ``data:`` URL's own type, else the path's
    extension; ``None`` when unknown."""
    if url.startswith("data:"):
        head = url[5:].split(",", 1)[0].split(";", 1)[0]
        return head or None
    path = url.split("?", 1)[0].split("#", 1)[0].lower()
    dot = path.rfind(".")
    if dot < 0 or "/" in path[dot:]:
        return None
    extension = path[dot:]
    return _EXTRA_TYPES.get(extension) or mimetypes.types_map.get(extension)


_DEFAULT_MIME = {
    "image": "image/png",
    "audio": "audio/wav",
    "video": "video/mp4",
    "file": "application/pdf",
}


def media_mime(part: Any, data: bytes | None = None) -> str:
    """Best-effort media type of a media part: its own, the bytes', the URL's,
    else a default for its kind (``image/png``, ``application/pdf``, ...)."""
    if part.mime_type:
        return str(part.mime_type)
    if data is not None:
        sniffed = sniff_mime(data)
        if sniffed:
            return sniffed
    if part.url:
        guessed = mime_from_url(part.url)
        if guessed:
            return guessed
    return _DEFAULT_MIME.get(part.type, "application/octet-stream")


def media_bytes(part: Any, options: Options) -> bytes | None:
    """Return the bytes of a media part: inline data, a base64 data URL, or what
    ``options.resolver`` gives for its URL or content id; ``None`` if unavailable.
    """
    if part.data is not None:
        return bytes(part.data)
    url = part.url
    if url is not None and url.startswith("data:"):
        match = _DATA_URL.fullmatch(url)
        if match is not None:
            try:
                return base64.b64decode(match.group(3))
            except (binascii.Error, ValueError):
                return None
    source = part.content_id or url
    if source is not None and options.resolver is not None:
        return options.resolver(source)
    return None


class Labeler:
    """Numbers media parts with a ``hint`` for ``media_labels`` (one per render)."""

    __slots__ = ("count", "enabled")

    def __init__(self, options: Options) -> None:
        self.enabled = options.media_labels
        self.count = 0

    def label(self, part: Any) -> Text | None:
        """Return the label text to put before ``part``, or ``None``."""
        if not self.enabled or not getattr(part, "hint", None):
            return None
        self.count += 1
        return Text(f"Media {self.count}: {part.hint}")
