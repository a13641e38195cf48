"""Logic every normalizer shares, gathered: options, the fidelity report and the
unsupported policy (:mod:`._options`), the parsers' net and shape checks
(:mod:`._guards`), pairing and folding (:mod:`._pairing`), media encoding
(:mod:`._media`); here, the trusted constructors of common wire shapes,
argument strings, tool errors sent as text and tool-call ids.

Plugins use the public names of :mod:`canisters.providers.kit`.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Callable, Mapping
from typing import Any, TypeVar

import orjson

from .._frozen import EMPTY, FrozenDict
from .._trusted import _fresh, _trusted
from ..canisters import (
    Assistant,
    Document,
    ErrorCode,
    ErrorInfo,
    Invocation,
    Result,
    Supervisor,
    User,
)
from ..content import (
    Audio,
    File,
    Image,
    Reasoning,
    Text,
    Video,
)
from ..conversation import Conversation
from ..exceptions import (
    MalformedPayload,
    ProviderError,
)
from ..protocols import Canister, Role
from ..serialization import (
    _TOO_DEEP,
    _may_nest_deeper,
    _nests_deeper,
)
from ._guards import (
    ARGUMENTS_DEPTH,
    BODY_DEPTH,
    STRAY,
    as_mapping,
    built,
    check_depth,
    expect_list,
    expect_mapping,
    expect_optional_str,
    expect_str,
    expect_url,
    guarded,
    guarded_keeping,
    guarded_reading,
    holder,
    marker,
    mine,
    response_metadata,
    rest,
    with_marks,
    with_response,
)
from ._media import (
    Labeler,
    b64decode_exact,
    b64encode,
    b64read_exact,
    data_url,
    inline_data,
    media_bytes,
    media_mime,
    mime_from_url,
    parse_data_url,
    sniff_mime,
)
from ._options import (
    Event,
    Options,
    Report,
    Unsupported,
    describe,
    note_foreign_reasoning_id,
    options_from,
    reasoning_action,
    unsupported,
)
from ._pairing import (
    BOUND,
    INTERPOSED,
    SIGNATURES,
    UNKNOWN,
    Request,
    adopt,
    bind,
    bind_parts,
    canisters_given,
    canisters_of,
    complete_pairs,
    element_type,
    group_turns,
    joins_alternating,
    joins_step,
    mark_interposed,
    opaque_part,
    positions,
    reply_canisters,
    request_canisters,
    trial_options,
)
from ._rules.ids import SAFE_CHARACTERS, fit_id
from ._rules.provided import settle as settle_provided
from ._rules.warning import FidelityWarning

__all__ = [
    "ARGUMENTS_DEPTH",
    "BODY_DEPTH",
    "BOUND",
    "Event",
    "FidelityWarning",
    "INTERPOSED",
    "INVOCATION",
    "Labeler",
    "Options",
    "RESULT",
    "Report",
    "Request",
    "SIGNATURES",
    "STRAY",
    "SUPERVISOR",
    "UNKNOWN",
    "USER",
    "Unsupported",
    "adopt",
    "as_mapping",
    "b64decode_exact",
    "b64encode",
    "b64read_exact",
    "bind",
    "bind_parts",
    "built",
    "canisters_given",
    "settle_provided",
    "canisters_of",
    "check_depth",
    "complete_pairs",
    "data_url",
    "decode_error_text",
    "describe",
    "element_type",
    "encode_arguments",
    "encode_error_text",
    "expect_list",
    "expect_mapping",
    "expect_optional_str",
    "expect_str",
    "expect_url",
    "group_turns",
    "guarded",
    "guarded_keeping",
    "guarded_reading",
    "holder",
    "joins_alternating",
    "joins_step",
    "json_object",
    "mark_interposed",
    "marker",
    "inline_data",
    "media_bytes",
    "media_mime",
    "mime_from_url",
    "mine",
    "new_text",
    "opaque_part",
    "options_from",
    "parse_arguments",
    "parse_data_url",
    "positions",
    "note_foreign_reasoning_id",
    "reasoning_action",
    "ref_key",
    "render_arguments",
    "render_tool_id",
    "reply_canisters",
    "request_canisters",
    "response_metadata",
    "rest",
    "sanitize_tool_id",
    "sniff_mime",
    "synthesize_id",
    "trial_options",
    "unfit_tool_id",
    "unsupported",
    "with_marks",
    "with_response",
]


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
