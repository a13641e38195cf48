"""Builders: :class:`MessageBuilder` for turns, :class:`ResultBuilder` for results.

A message builder keeps the ``step`` (``next_step`` advances it,
``continue_step`` keeps it), collects text and media in order, generates unique
invocation ids, and builds one canister; the invocations it created are
available beside it::

    builder = MessageBuilder.next_step(last, role=Role.Assistant)
    builder.add_text("Let me look.")
    call = builder.add_invocation("search", {"query": "hobbit movie"})
    turn = builder.build()                 # the assistant canister
    everything = builder.build_all()       # (turn, call)

    result = ResultBuilder.respond_to(call).success({"hits": 3})
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Final

from .canisters import (
    Assistant,
    Document,
    ErrorInfo,
    Invocation,
    Result,
    Supervisor,
    User,
    new_id,
)
from .content import Audio, File, Image, Media, Text, Video, is_content_id
from .exceptions import BuilderError, ModelError, _excerpt
from .protocols import Canister, Content, InvocationCanister, Role

if TYPE_CHECKING:
    from .requests import Tool

__all__ = ["INVALID_ARGUMENTS", "MessageBuilder", "ResultBuilder"]

INVALID_ARGUMENTS: Final = "invalid_arguments"
"""The error code of a result made by :meth:`ResultBuilder.check_arguments`:
the arguments did not match the tool's schema, and the tool did not run."""

_CONTENT_ROLES: dict[Role, type[User | Assistant | Supervisor | Document]] = {
    Role.User: User,
    Role.Assistant: Assistant,
    Role.Supervisor: Supervisor,
    Role.Document: Document,
}


def _step_of(last: Canister | int | None) -> int | None:
    if last is None:
        return None
    if isinstance(last, bool):
        raise BuilderError("last must be a canister, a step number or None")
    if isinstance(last, int):
        if last < 0:
            raise BuilderError(f"step numbers are not negative, got {last}")
        return last
    step = getattr(last, "step", None)
    if step is not None and not isinstance(step, int):
        raise BuilderError(f"the canister's step is not a number: {_excerpt(step)}")
    if not hasattr(last, "role"):
        raise BuilderError(
            f"last must be a canister, a step number or None, got {type(last).__name__}"
        )
    return step


class MessageBuilder:
    """Build one content canister of a step, and the invocations made in it.

    Create it with :meth:`next_step` or :meth:`continue_step`.
    """

    __slots__ = (
        "_invocations",
        "_parent_id",
        "_parts",
        "_policy",
        "_role",
        "_trace_id",
        "step",
    )

    def __init__(
        self,
        step: int,
        *,
        role: Role = Role.User,
        policy: str | None = None,
        trace_id: str | None = None,
        parent_id: str | None = None,
    ) -> None:
        if role not in _CONTENT_ROLES:
            raise BuilderError(
                f"a message builder builds user, assistant, supervisor or document "
                f"canisters, not {role.value}"
            )
        self.step = step
        """The step every canister built here carries."""
        self._role = role
        self._policy = policy
        self._trace_id = trace_id
        self._parent_id = parent_id
        self._parts: list[Content] = []
        self._invocations: list[Invocation] = []

    @classmethod
    def next_step(
        cls,
        last: Canister | int | None = None,
        *,
        role: Role = Role.User,
        policy: str | None = None,
        trace_id: str | None = None,
    ) -> MessageBuilder:
        """Start the step after ``last`` (a canister or a step number).

        With ``last`` ``None`` or a canister without a step, the step is 0. The
        trace of a canister ``last`` is kept, and it becomes the parent.
        """
        step = _step_of(last)
        return cls(
            0 if step is None else step + 1,
            role=role,
            policy=policy,
            trace_id=trace_id or getattr(last, "trace_id", None),
            parent_id=getattr(last, "id", None),
        )

    @classmethod
    def continue_step(
        cls,
        last: Canister | int | None = None,
        *,
        role: Role = Role.User,
        policy: str | None = None,
        trace_id: str | None = None,
    ) -> MessageBuilder:
        """Add to the step of ``last`` (a canister or a step number; 0 if unknown)."""
        step = _step_of(last)
        return cls(
            0 if step is None else step,
            role=role,
            policy=policy,
            trace_id=trace_id or getattr(last, "trace_id", None),
            parent_id=getattr(last, "id", None),
        )

    # Content -------------------------------------------------------------------

    def add_text(self, text: str, mime_type: str = "text/plain") -> MessageBuilder:
        """Append a text part; returns the builder, so calls chain."""
        if not isinstance(text, str):
            raise BuilderError(f"add_text takes a str, got {type(text).__name__}")
        self._parts.append(Text(text, mime_type))
        return self

    def add_part(self, part: Content) -> MessageBuilder:
        """Append any content part (a :class:`~canisters.Reasoning`, say)."""
        if not isinstance(getattr(part, "type", None), str):
            raise BuilderError(f"not a content part: {type(part).__name__}")
        self._parts.append(part)
        return self

    def _media(
        self,
        cls: type[Media],
        hint: str | None,
        source: str | bytes,
        mime_type: str | None,
        extra: Mapping[str, Any] | None = None,
    ) -> MessageBuilder:
        fields: dict[str, Any] = {"hint": hint, "mime_type": mime_type, **(extra or {})}
        if isinstance(source, (bytes, bytearray, memoryview)):
            fields["data"] = bytes(source)
        elif isinstance(source, str):
            fields["content_id" if is_content_id(source) else "url"] = source
        else:
            raise BuilderError(
                f"media source must be a URL, a content id or bytes, "
                f"got {type(source).__name__}"
            )
        try:
            part = cls(**fields)
        except ModelError as error:
            raise BuilderError(str(error)) from error
        self._parts.append(part)
        return self

    def add_image(
        self,
        hint: str | None,
        url_or_bytes: str | bytes,
        *,
        mime_type: str | None = None,
    ) -> MessageBuilder:
        """Append an image from a URL, a ``sha256:`` content id or bytes.

        ``hint`` is a non-semantic label (``"girl wearing a hat"``), or ``None``.
        """
        return self._media(Image, hint, url_or_bytes, mime_type)

    def add_audio(
        self,
        hint: str | None,
        url_or_bytes: str | bytes,
        *,
        mime_type: str | None = None,
    ) -> MessageBuilder:
        """Append audio; see :meth:`add_image`."""
        return self._media(Audio, hint, url_or_bytes, mime_type)

    def add_video(
        self,
        hint: str | None,
        url_or_bytes: str | bytes,
        *,
        mime_type: str | None = None,
    ) -> MessageBuilder:
        """Append a video; see :meth:`add_image`."""
        return self._media(Video, hint, url_or_bytes, mime_type)

    def add_file(
        self,
        hint: str | None,
        url_or_bytes: str | bytes,
        *,
        mime_type: str | None = None,
        filename: str | None = None,
    ) -> MessageBuilder:
        """Append a document (a PDF, say); see :meth:`add_image`."""
        return self._media(File, hint, url_or_bytes, mime_type, {"filename": filename})

    # Invocations ---------------------------------------------------------------

    def add_invocation(
        self,
        name: str,
        arguments: Mapping[str, Any] | None = None,
        *,
        invocation_id: str | None = None,
    ) -> Invocation:
        """Create an invocation in this step, with a unique ``invocation_id``."""
        if not isinstance(name, str) or not name.strip():
            raise BuilderError("an invocation needs a name")
        if arguments is not None and not isinstance(arguments, Mapping):
            raise BuilderError(
                f"arguments must be a mapping, got {type(arguments).__name__}"
            )
        used = {invocation.invocation_id for invocation in self._invocations}
        if invocation_id is None:
            invocation_id = f"call_{new_id()[:24]}"
        elif invocation_id in used:
            raise BuilderError(
                f"invocation id {_excerpt(invocation_id)} is already used"
            )
        invocation = Invocation(
            name,
            arguments or {},
            invocation_id=invocation_id,
            step=self.step,
            policy=self._policy,
            trace_id=self._trace_id,
            parent_id=self._parent_id,
        )
        self._invocations.append(invocation)
        return invocation

    @property
    def invocations(self) -> tuple[Invocation, ...]:
        """The invocations created so far, in order."""
        return tuple(self._invocations)

    @property
    def last_invocation(self) -> Invocation | None:
        """The invocation created last, if any."""
        return self._invocations[-1] if self._invocations else None

    # Building ------------------------------------------------------------------

    def build(self) -> User | Assistant | Supervisor | Document:
        """Return the content canister: the parts added so far, in order."""
        cls = _CONTENT_ROLES[self._role]
        return cls(
            tuple(self._parts),
            step=self.step,
            policy=self._policy,
            trace_id=self._trace_id,
            parent_id=self._parent_id,
        )

    def build_all(self) -> tuple[Canister, ...]:
        """Return the content canister (when it has parts) and then the invocations.

        This is the order a conversation records an assistant turn in.
        """
        head: tuple[Canister, ...] = (self.build(),) if self._parts else ()
        return head + tuple(self._invocations)


class ResultBuilder:
    """Build the result of one invocation, copying its id, name, step and trace."""

    __slots__ = ("invocation", "policy")

    def __init__(self, invocation: InvocationCanister, *, policy: str = "runtime"):
        if getattr(invocation, "role", None) is not Role.Invocation:
            raise BuilderError(
                f"respond_to takes an invocation, got {type(invocation).__name__}"
            )
        self.invocation = invocation
        """The invocation being answered."""
        self.policy = policy
        """The policy the result is attributed to (``"runtime"`` by default)."""

    @classmethod
    def respond_to(
        cls, invocation: InvocationCanister, *, policy: str = "runtime"
    ) -> ResultBuilder:
        """Start the result of ``invocation``."""
        return cls(invocation, policy=policy)

    def _check(self, invocation_id: str | None, name: str | None) -> None:
        if invocation_id is not None and invocation_id != self.invocation.invocation_id:
            raise BuilderError(
                f"result invocation id {_excerpt(invocation_id)} does not match the "
                f"invocation's {_excerpt(self.invocation.invocation_id)}"
            )
        if name is not None and name != self.invocation.name:
            raise BuilderError(
                f"result name {_excerpt(name)} does not match the invocation's "
                f"{_excerpt(self.invocation.name)}"
            )

    def _result(self, content: tuple[Content, ...], error: ErrorInfo | None) -> Result:
        invocation = self.invocation
        return Result(
            invocation.invocation_id,
            invocation.name,
            content,
            error,
            step=invocation.step,
            policy=self.policy,
            trace_id=invocation.trace_id,
            parent_id=invocation.id,
        )

    def success(
        self, value: Any, *, invocation_id: str | None = None, name: str | None = None
    ) -> Result:
        """Return a successful result holding ``value``.

        Text stays text; a content part or a sequence of parts is kept as is;
        anything else is stored as JSON text (``application/json``). Giving an
        ``invocation_id`` or ``name`` that differs from the invocation's raises
        :class:`~canisters.BuilderError`.
        """
        self._check(invocation_id, name)
        return self._result(_as_content(value), None)

    def error(
        self,
        code: str,
        message: str,
        retryable: bool = False,
        *,
        details: Mapping[str, Any] | None = None,
        invocation_id: str | None = None,
        name: str | None = None,
    ) -> Result:
        """Return a failed result with an :class:`~canisters.ErrorInfo`."""
        self._check(invocation_id, name)
        return self._result((), ErrorInfo(code, message, retryable, details))

    def check_arguments(self, tool: Tool) -> Result | None:
        """Check the invocation's arguments against ``tool``'s schema: ``None``
        when they match (run the tool), else the error result to send back
        instead of running it.

        The error's code is ``"invalid_arguments"`` (:data:`INVALID_ARGUMENTS`:
        the schema refused the arguments before the tool ran), it is retryable
        (the model may call again with better arguments), its message lists
        every problem by path, and its details hold them as ``{"problems":
        [...]}``. Needs the ``schemas`` extra (see
        :func:`canisters.validation.argument_problems`).
        """
        from .validation import argument_problems

        if tool.name != self.invocation.name:
            raise BuilderError(
                f"tool {_excerpt(tool.name)} is not the invoked "
                f"{_excerpt(self.invocation.name)}"
            )
        wrong = argument_problems(tool, self.invocation.arguments)
        if not wrong:
            return None
        return self.error(
            INVALID_ARGUMENTS,
            f"invalid arguments for {tool.name}: {'; '.join(wrong)}",
            retryable=True,
            details={"problems": list(wrong)},
        )


def _as_content(value: Any) -> tuple[Content, ...]:
    if value is None:
        return ()
    if isinstance(value, str):
        return (Text(value),)
    if isinstance(getattr(value, "type", None), str) and hasattr(value, "extras"):
        return (value,)
    if (
        isinstance(value, (list, tuple))
        and value
        and all(isinstance(getattr(v, "type", None), str) for v in value)
    ):
        return tuple(value)
    try:
        import orjson  # on first use: it takes a fair share of `import canisters`

        text = orjson.dumps(value, option=orjson.OPT_NON_STR_KEYS).decode()
    except TypeError as error:
        raise BuilderError(f"result value is not JSON-serializable: {error}") from error
    return (Text(text, "application/json"),)
