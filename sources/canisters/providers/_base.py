"""One base class implementing the normalizer protocols once.

A provider package declares what it is made of, and :class:`BaseNormalizer`
wires it: the net under every parser (a stray exception becomes
:class:`~canisters.providers.MalformedPayload`, the body is held to the depth
bound), the garbage collector paused while a body is read or written, the
keyword options turned into :class:`~canisters.providers.Options`, whole
requests, streams and error bodies::

    class MyFormat(BaseNormalizer):
        name = "my-format"
        reads = ("messages",)      # the top-level keys the conversation is in
        messages = my_messages     # parse_request(body), render_request(c, options)
        response = my_response     # parse_response(body), render_response(c, options)
        request_settings = my_request  # parse_settings / render_settings
        stream = MyAccumulator     # the accumulator class
        dialect = MY_DIALECT       # the error dialect

Each of ``messages`` and ``response`` is a module (or any object) holding
plain functions; the wrappers are made once, when the class is defined, so a
call costs what calling the function under its net costs.
"""

from __future__ import annotations

import functools
import weakref
from collections.abc import Callable, Mapping
from typing import Any, ClassVar

from ..conversation import Conversation
from ..exceptions import ProviderError
from ..serialization import _paused
from . import _common as common
from ._errors import Dialect, ErrorReply, from_exception
from ._options import Report, Unsupported
from ._requests import RequestSettings, WholeRequests
from ._rules.crossing import crossing, foreign, slot
from ._rules.empty import renumbered
from ._rules.envelope import report_envelope
from ._rules.kept import carry_kept
from ._rules.outcomes import Outcomes
from .streams import Accumulator, Streaming

__all__ = ["BaseNormalizer", "WireReplies"]


class BaseNormalizer(Streaming, WholeRequests):
    """The normalizer of a provider package, from its declarations.

    A subclass sets, as class attributes:

    ``name``
        the provider name;
    ``reads``
        the top-level keys of a request body the conversation is read from
        (held to the depth bound before they are read);
    ``keeps``
        true when ``messages.parse_request`` takes a second argument, a list
        it appends every nested value it keeps unread to (see
        :func:`~canisters.providers.kit.guarded_keeping`): only those are then
        held to the bound, after the parse;
    ``messages``
        ``parse_request(body)`` (``body`` a mapping or an SDK object; raise
        :class:`~canisters.providers.MalformedPayload` with the path of what is
        wrong) and ``render_request(conversation, options)`` (``options`` the
        keyword options as given: read them with
        :func:`~canisters.providers.kit.options_from`);
    ``response``
        ``parse_response(body)`` and ``render_response(conversation,
        options)`` (``options`` an :class:`~canisters.providers.Options`);
    ``request_settings``
        the :class:`~canisters.providers._requests.RequestSettings` of whole requests
        (optional: without it, ``parse_full_request`` is refused);
    ``stream``
        the :class:`~canisters.providers.streams.Accumulator` class (optional);
    ``dialect``
        the error :class:`~canisters.providers.kit.Dialect` (optional).
    """

    __slots__ = ()

    name: str
    """The provider name."""
    reads: tuple[str, ...] = ()
    keeps: bool = False
    messages: Any
    response: Any
    request_settings: RequestSettings
    stream: type[Accumulator] | None = None
    dialect: Dialect | None = None
    _render_as_read: Callable[..., dict[str, Any]] | None = None
    """``render_request`` without the cross-format rules (what
    ``render_full_request`` calls once it applied them)."""

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        space = vars(cls)
        if "messages" in space:
            # Marked within the net, the collector paused.
            read = cls.messages.parse_request
            if cls.keeps:
                guarded = common.guarded_keeping(*cls.reads)(_keeping(read, cls.name))
            else:
                guarded = common.guarded_reading(*cls.reads)(_alone(read, cls.name))
            cls.parse_request = staticmethod(guarded)  # type: ignore[method-assign,assignment]
            render = cls.messages.render_request
            cls.render_request = staticmethod(_rendering(render, cls.name))  # type: ignore[method-assign]
            cls._render_as_read = staticmethod(_as_read(render))
        if "response" in space:
            cls.parse_response = staticmethod(  # type: ignore[method-assign]
                common.guarded(cls.response.parse_response)
            )
            cls.render_response = staticmethod(  # type: ignore[method-assign]
                _responding(cls.response.render_response, cls.name)
            )

    def parse_request(self, body: Any) -> Conversation:
        """Read a request body's conversation fields (a mapping, or the
        provider SDK's params)."""
        raise NotImplementedError

    def render_request(
        self, conversation: Conversation, **options: Any
    ) -> dict[str, Any]:
        """Render the conversation fields of a request body; see
        :class:`~canisters.providers.Options`."""
        raise NotImplementedError

    def parse_response(self, body: Any) -> Conversation:
        """Read a response body (or the provider SDK's response object): the
        reply with usage, model, id and finish reason."""
        raise NotImplementedError

    def render_response(
        self, conversation: Conversation, **options: Any
    ) -> dict[str, Any]:
        """Render a response body from a reply; see
        :class:`~canisters.providers.Options`."""
        raise NotImplementedError

    def accumulator(self) -> Accumulator:
        """A fresh accumulator for one stream."""
        if self.stream is None:
            raise ProviderError(f"{self.name} does not read streams")
        return self.stream()

    def parse_error(self, body: Any, *, status: int | None = None) -> ErrorReply:
        """Read the provider's error body (or the exception its SDK raised) into
        an :class:`~canisters.providers.ErrorReply`; ``status`` is the HTTP
        status it came with, when the caller has it. A body that is not an error
        raises :class:`~canisters.providers.MalformedPayload`."""
        if isinstance(body, BaseException):
            body, status = from_exception(body, status)
        elif not isinstance(body, (Mapping, list)):
            body = common.as_mapping(body, received=True)
        return self._dialect().parse(body, status)

    def render_error(
        self,
        reply: ErrorReply,
        *,
        report: Report | None = None,
        unsupported: Unsupported = "drop",
    ) -> tuple[int, dict[str, Any]]:
        """Write ``reply`` as the provider's error body: ``(HTTP status, body)``.

        A reply read from this provider comes back as it was read; one from
        another provider (or made by hand) gets this provider's status, type and
        code for its kind, with its message and parameter. What of it is not
        written as it is (its type, code or status rewritten for the kind, a
        parameter, extras or envelope key the shape has no place for) is an
        :class:`~canisters.providers.Event` in ``report``, and refused with
        :class:`~canisters.UnsupportedContent` under ``unsupported="error"``;
        the default, ``"drop"``, relays the refusal.
        """
        return self._dialect().render(reply, report=report, unsupported=unsupported)

    def _dialect(self) -> Dialect:
        if self.dialect is None:
            raise ProviderError(f"{self.name} does not read error bodies")
        return self.dialect

    def __repr__(self) -> str:
        return f"<normalizer {self.name}>"


_weak = weakref.ref


def _alone(
    function: Callable[[Any], Conversation], name: str
) -> Callable[[Any], Conversation]:
    """``function`` of the body alone (a parser may take options beside it, such
    as ``fast=``): what the net wraps without packing arguments; each
    conversation it returns marked as read by ``name`` (so it goes back to
    ``name`` as it came: :mod:`._rules.crossing`)."""

    last = slot(name)

    def parse_request(body: Any) -> Conversation:
        conversation = function(body)
        last[0] = _weak(conversation)
        return conversation

    parse_request.__doc__ = function.__doc__
    return parse_request


def _keeping(
    function: Callable[[Any, list[Any]], Conversation], name: str
) -> Callable[[Any, list[Any]], Conversation]:
    """:func:`_alone`, for a parser taking the list of what it keeps."""

    last = slot(name)

    @functools.wraps(function)
    def parse_request(body: Any, kept: list[Any]) -> Conversation:
        conversation = function(body, kept)
        last[0] = _weak(conversation)
        return conversation

    return parse_request


def _rendering(
    function: Callable[[Conversation, Mapping[str, Any]], dict[str, Any]],
    name: str,
) -> Callable[..., dict[str, Any]]:
    options_from = common.options_from

    def crossed(conversation: Conversation, options: Mapping[str, Any]) -> Any:
        if not isinstance(conversation, Conversation) or not foreign(
            conversation, name
        ):
            return function(conversation, options)
        # Of another format: the cross-format rules first.
        opts = options_from(options)
        conversation, kept = crossing(conversation, name, opts, native=False)
        since = len(opts.report.events) if opts.report is not None else 0
        body = function(conversation, options)
        renumbered(opts.report, since, kept)
        return body

    last = slot(name)

    def render_request(conversation: Conversation, **options: Any) -> dict[str, Any]:
        read = last[0]
        if read is not None and read() is conversation:  # read here: as it came
            return _paused(function, conversation, options)
        return _paused(crossed, conversation, options)

    render_request.__doc__ = BaseNormalizer.render_request.__doc__
    return render_request


def _as_read(
    function: Callable[[Conversation, Mapping[str, Any]], dict[str, Any]],
) -> Callable[..., dict[str, Any]]:
    """``function`` without the cross-format rules."""

    def render_as_read(conversation: Conversation, **options: Any) -> dict[str, Any]:
        return _paused(function, conversation, options)

    return render_as_read


def _responding(
    function: Callable[[Conversation, common.Options], dict[str, Any]],
    name: str,
) -> Callable[..., dict[str, Any]]:
    options_from = common.options_from
    reply_canisters = common.reply_canisters

    def render_response(conversation: Conversation, **options: Any) -> dict[str, Any]:
        opts = options_from(options)
        # Another provider's elements: left out, reported (as in requests);
        # its envelope keys: carried or reported (read where the parser kept
        # them, also on a turn of elements left out).
        reply = reply_canisters(conversation, opts, name)
        report_envelope(conversation, name, opts)
        # Another format's kept wire keys (an item's id and status): carried
        # or reported, as in requests.
        reply = carry_kept(reply, name, Outcomes(opts, name))
        return function(reply, opts)

    render_response.__doc__ = BaseNormalizer.render_response.__doc__
    return render_response


class WireReplies:
    """The replies of one format of a family whose modules take the format
    as a parameter (its ``wire``: OpenAI Chat's, OpenAI Responses'), as
    :class:`BaseNormalizer` takes them (its ``response``): the family's
    ``parse(body, wire, dialect)`` and ``render(conversation, opts, wire)``,
    set as static methods by a subclass, bound to ``wire`` and to the
    ``dialect`` that reads an error body."""

    __slots__ = ("dialect", "wire")

    parse: ClassVar[Callable[..., Conversation]]
    render: ClassVar[Callable[..., dict[str, Any]]]

    def __init__(self, wire: Any, dialect: Dialect) -> None:
        self.wire = wire
        self.dialect = dialect

    def parse_response(self, body: object) -> Conversation:
        """Read a reply of the format."""
        return type(self).parse(body, self.wire, self.dialect)

    def render_response(
        self, conversation: Conversation, opts: common.Options
    ) -> dict[str, Any]:
        """Render a reply in the format."""
        return type(self).render(conversation, opts, self.wire)
