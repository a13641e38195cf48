"""The fast path of reading documents: msgspec decodes them into wire structs.

Internal to :mod:`canisters.serialization`, which loads this module (and msgspec
with it) on the first read, so that ``import canisters`` stays cheap.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from datetime import datetime
from typing import Annotated, Any, Final, Literal

import attrs

from . import _provided_records
from ._base64 import check
from ._formats import (
    CANISTER_FORMAT,
    CONTENT_FORMAT,
    CONVERSATION_FORMAT,
    FORMAT_VERSION,
    JSONL_HEADER,
    OPAQUE_LIMIT,
    nests_deeper,
    utf8,
)
from ._frozen import EMPTY, FrozenDict, freeze
from ._trusted import _shadow, _trusted
from .canisters import (
    Assistant,
    Document,
    ErrorInfo,
    Invocation,
    Metadata,
    Result,
    Supervisor,
    Usage,
    User,
)
from .content import Audio, File, Image, Media, Reasoning, Text, Video
from .conversation import Conversation
from .protocols import Canister, Content

# A document holding only the built-in classes, in their usual shapes, is
# decoded by msgspec into "wire" structs whose fields have exactly the types the
# hooks above accept; msgspec checks those types in C, and the structs are turned
# into canisters by code generated once per class, which sets the slots as the
# trusted constructors do. Anything else -- a tag msgspec does not know (a
# registered class), an unknown field, a value of another type, an older
# version, text that is not JSON -- makes msgspec or the conversion raise, and
# the document is read again by the hooks, which give the result or the located
# error they always gave: the fast path is an optimisation, never a second
# definition of the format. It also shares, within one document, the strings
# that recur (a result's invocation id with its invocation's, tool and model
# names, finish reasons, trace ids, policies), in the memo that dies with the
# read (the hooks share them in serialization's bounded table), and one
# Metadata between the canisters whose metadata names only the same model and
# finish reason.

# Where a JSON value of a wire struct goes: frozen, and listed for check_held.
_WIRE_JSON: Final = """\
    value = wire.{field}
    if value:
        obj.{field} = FrozenDict(value)
        memo[HELD].append(value)
    else:
        obj.{field} = EMPTY
"""
_WIRE_EXTRAS: Final = _WIRE_JSON.format(field="extras")
_WIRE_END: Final = """\
    obj.__class__ = cls
    return obj
"""
_WIRE_ENVELOPE: Final = (
    """\
def build(wire, memo):
    obj = shadow()
    obj.id = wire.id
    moment = wire.timestamp
    if moment.tzinfo is None:
        raise ValueError(moment)
    obj.timestamp = moment
    obj.parent_id = wire.parent_id
    value = wire.trace_id
    obj.trace_id = value if value is None else memo.setdefault(value, value)
    value = wire.policy
    obj.policy = value if value is None else memo.setdefault(value, value)
    obj.step = wire.step
    value = wire.metadata
    obj.metadata = value if value is None else value.build(memo)
"""
    + _WIRE_EXTRAS
)
_WIRE_CONTENT: Final = """\
    parts = wire.content
    obj.content = (
        (parts[0].build(memo),)
        if len(parts) == 1
        else tuple([part.build(memo) for part in parts])
    )
"""
_WIRE_TAILS: Final[dict[Any, str]] = {
    User: _WIRE_CONTENT,
    Assistant: _WIRE_CONTENT,
    Supervisor: _WIRE_CONTENT,
    Document: _WIRE_CONTENT
    + "    obj.title = wire.title\n    obj.document_id = wire.document_id\n",
    Invocation: """\
    value = wire.name
    obj.name = memo.setdefault(value, value)
"""
    + _WIRE_JSON.format(field="arguments")
    + """\
    value = wire.invocation_id
    obj.invocation_id = memo.setdefault(value, value)
""",
    Result: """\
    value = wire.invocation_id
    obj.invocation_id = memo.setdefault(value, value)
    value = wire.name
    obj.name = memo.setdefault(value, value)
"""
    + _WIRE_CONTENT
    + """\
    value = wire.error
    obj.error = value if value is None else value.build(memo)
""",
}
_WIRE_TEXT: Final = (
    """\
def build(wire, memo):
    obj = shadow()
    obj.text = wire.text
    obj.mime_type = wire.mime_type
    obj.id = wire.id
"""
    + _WIRE_EXTRAS
    + _WIRE_END
)


def _generated(source: str, cls: type) -> Callable[..., Any]:
    """Compile a wire builder for ``cls`` (see :func:`_shadow`)."""
    shadow = _shadow(cls)
    if shadow is None:  # pragma: no cover - see _shadow
        raise TypeError(f"cannot build {cls} from its shadow")
    namespace: dict[str, Any] = {
        "cls": cls,
        "shadow": shadow,
        "FrozenDict": FrozenDict,  # what freeze() makes of a non-empty dict
        "EMPTY": EMPTY,
        "HELD": HELD,
        "Usage": Usage,
        "usage_shadow": _shadow(Usage),
    }
    exec(source, namespace)
    build: Callable[..., Any] = namespace["build"]
    return build


def _media_from_wire(cls: type[Media]) -> Callable[[Any, dict[Any, Any]], Media]:
    with_filename = cls is File

    def build(wire: Any, memo: dict[Any, Any]) -> Media:
        data, refs, extras = wire.data, wire.refs, wire.extras
        if extras:
            memo[HELD].append(extras)
        extra = {"filename": wire.filename} if with_filename else {}
        return cls(
            data=None if data is None else check(data),
            url=wire.url,
            content_id=wire.content_id,
            refs=EMPTY if refs is None else freeze(refs),
            mime_type=wire.mime_type,
            hint=wire.hint,
            id=wire.id,
            extras=EMPTY if extras is None else freeze(extras),
            **extra,
        )

    return build


_WIRE_REASONING: Final = (
    """\
def build(wire, memo):
    signature = wire.signature
    redacted = wire.redacted
    provider = wire.provider
    if provider:
        provider = memo.setdefault(provider, provider)
    elif signature is not None or redacted is not None:
        raise ValueError("a signature without its provider: the hooks say where")
    obj = shadow()
    obj.text = wire.text
    obj.signature = signature
    obj.redacted = redacted
    obj.provider = provider
    obj.id = wire.id
"""
    + _WIRE_EXTRAS
    + _WIRE_END
)


_WIRE_METADATA: Final = """\
def build(wire, memo):
    model = wire.model
    if model is not None:
        model = memo.setdefault(model, model)
    finish_reason = wire.finish_reason
    if finish_reason is not None:
        finish_reason = memo.setdefault(finish_reason, finish_reason)
    usage = wire.usage
    custom = wire.custom
    latency_ms = wire.latency_ms
    cache_hit = wire.cache_hit
    retries = wire.retries
    quality = wire.quality
    key = None
    if (
        custom is None
        and latency_ms is None
        and cache_hit is None
        and retries is None
        and quality is None
    ):
        if usage is None:
            # Only a model and a finish reason, as on many turns: one Metadata each.
            key = (model, finish_reason)
            shared = memo.get(key)
            if shared is not None:
                return shared
        custom = EMPTY
    elif custom:
        memo[HELD].append(custom)
        custom = FrozenDict(custom)
    else:
        custom = EMPTY
    if usage is not None:
        # Usage, on every turn of a recorded run: built here, ints as the wire
        # type checks.
        counts = usage
        usage = usage_shadow()
        usage.input_tokens = counts.input_tokens
        usage.output_tokens = counts.output_tokens
        usage.cached_tokens = counts.cached_tokens
        usage.cache_write_tokens = counts.cache_write_tokens
        usage.reasoning_tokens = counts.reasoning_tokens
        usage.__class__ = Usage
    obj = shadow()
    obj.model = model
    obj.latency_ms = latency_ms
    obj.usage = usage
    obj.cache_hit = cache_hit
    obj.retries = retries
    obj.quality = quality
    obj.finish_reason = finish_reason
    obj.custom = custom
    obj.__class__ = cls
    if key is not None:
        memo[key] = obj
    return obj
"""


def _error_from_wire(wire: Any, memo: dict[Any, Any]) -> ErrorInfo:
    details = wire.details
    if details:
        memo[HELD].append(details)
    return ErrorInfo(wire.code, wire.message, wire.retryable, details)


def _hooked(
    names: list[str], read: Callable[[Mapping[str, Any]], Any], unset: object
) -> Callable[..., Any]:
    """A wire builder that hands the fields present to a part's structure hook
    (``unset`` marks an absent one, ``null`` is handed on): the parts of
    :mod:`canisters.provided` are read by their hooks, inside the fast path's
    single decoding of the document."""

    def build(wire: Any, memo: Any) -> Any:
        record: dict[str, Any] = {}
        for name in names:
            value = getattr(wire, name)
            if value is not unset:
                record[name] = value
                if isinstance(value, (dict, list)):
                    memo[HELD].append(value)
        return read(record)

    return build


class _Fast:
    """The decoders of the fast path (built on first use: msgspec loads then)."""

    def __init__(self) -> None:
        import msgspec
        from msgspec import Meta

        text = str | None
        mapping = dict[str, Any] | None
        number = int | float | None
        options: dict[str, Any] = {
            "kw_only": True,
            "forbid_unknown_fields": True,
            "gc": False,
            "module": __name__,
        }

        def struct(
            name: str,
            fields: list[Any],
            build: Callable[..., Any] | None,
            **more: Any,
        ) -> type:
            namespace = {} if build is None else {"build": build}
            made: type = msgspec.defstruct(
                f"_Wire{name}", fields, namespace=namespace, **options, **more
            )
            return made

        content_tag = {"tag_field": "type"}
        text_part = struct(
            "Text",
            [
                ("text", str),
                ("mime_type", str, "text/plain"),
                ("id", text, None),
                ("extras", mapping, None),
            ],
            _generated(_WIRE_TEXT, Text),
            tag="text",
            **content_tag,
        )
        media_fields = [
            # The base64 is checked as the hooks check it, not decoded (see
            # _base64.check): what it refuses, the hooks read again and refuse.
            ("data", str | None, None),
            ("url", text, None),
            ("content_id", text, None),
            ("refs", mapping, None),
            ("mime_type", text, None),
            ("hint", text, None),
            ("id", text, None),
            ("extras", mapping, None),
        ]
        media = [
            struct(
                cls.__name__,
                media_fields + ([("filename", text, None)] if cls is File else []),
                _media_from_wire(cls),
                tag=cls.type,
                **content_tag,
            )
            for cls in (Image, Audio, Video, File)
        ]
        reasoning = struct(
            "Reasoning",
            [
                ("text", str, ""),
                ("signature", text, None),
                ("redacted", text, None),
                ("provider", text, None),
                ("id", text, None),
                ("extras", mapping, None),
            ],
            _generated(_WIRE_REASONING, Reasoning),
            tag="reasoning",
            **content_tag,
        )
        part: Any = text_part | reasoning
        for cls, tag, _out, read in _provided_records.HOOKS:
            names = [field.name for field in attrs.fields(cls)]
            part = part | struct(
                cls.__name__,
                [(name, Any, msgspec.UNSET) for name in names],
                _hooked(names, read, msgspec.UNSET),
                tag=tag,
                **content_tag,
            )
        for kind in media:
            part = part | kind
        usage = struct(
            "Usage",
            [
                ("input_tokens", int, 0),
                ("output_tokens", int, 0),
                ("cached_tokens", int, 0),
                ("cache_write_tokens", int, 0),
                ("reasoning_tokens", int, 0),
            ],
            None,  # the metadata builder makes the Usage
        )
        metadata = struct(
            "Metadata",
            [
                ("model", text, None),
                ("latency_ms", number, None),
                ("usage", usage | None, None),
                ("cache_hit", bool | None, None),
                ("retries", int | None, None),
                ("quality", number, None),
                ("finish_reason", text, None),
                ("custom", mapping, None),
            ],
            _generated(_WIRE_METADATA, Metadata),
        )
        error = struct(
            "Error",
            [
                ("code", str),
                ("message", str),
                ("retryable", bool, False),
                ("details", mapping, None),
            ],
            _error_from_wire,
        )
        envelope = [
            ("id", Annotated[str, Meta(min_length=1)]),
            ("timestamp", datetime),
            ("parent_id", text, None),
            ("trace_id", text, None),
            ("policy", text, None),
            ("step", Annotated[int, Meta(ge=0)] | None, None),
            ("metadata", metadata | None, None),
            ("extras", mapping, None),
        ]
        content: Any = ("content", list[part], [])
        fields: dict[type, list[Any]] = {
            User: [content],
            Assistant: [content],
            Supervisor: [content],
            Document: [content, ("title", text, None), ("document_id", text, None)],
            Invocation: [
                ("name", str),
                ("arguments", mapping, None),
                ("invocation_id", str),
            ],
            Result: [
                ("invocation_id", str),
                ("name", str),
                content,
                ("error", error | None, None),
            ],
        }
        # A field the wire structs lack would be left unset: fail loudly instead.
        for cls, names in [
            *((cls, [f[0] for f in envelope + more]) for cls, more in fields.items()),
            (Text, list(text_part.__struct_fields__)),  # type: ignore[attr-defined]
            (Reasoning, list(reasoning.__struct_fields__)),  # type: ignore[attr-defined]
            (Metadata, list(metadata.__struct_fields__)),  # type: ignore[attr-defined]
            (Usage, list(usage.__struct_fields__)),  # type: ignore[attr-defined]
        ]:
            if sorted(names) != sorted(f.name for f in attrs.fields(cls)):
                raise RuntimeError(f"the wire struct misses fields of {cls}")
        canister: Any = None
        for cls, tail in _WIRE_TAILS.items():
            source = _WIRE_ENVELOPE + tail + _WIRE_END
            kind = struct(
                cls.__name__,
                envelope + fields[cls],
                _generated(source, cls),
                tag_field="role",
                tag=cls.role.value,
            )
            canister = kind if canister is None else canister | kind
        version = Literal[FORMAT_VERSION]  # type: ignore[valid-type]
        new_conversation = _trusted(Conversation)

        def conversation_from_wire(wire: Any) -> Conversation:
            memo = new_memo()
            built = new_conversation(tuple([c.build(memo) for c in wire.canisters]))
            check_held(memo)
            return built

        def canister_from_wire(wire: Any) -> Canister:
            memo = new_memo()
            built: Canister = wire.canister.build(memo)
            check_held(memo)
            return built

        def content_from_wire(wire: Any) -> Content:
            memo = new_memo()
            built: Content = wire.content.build(memo)
            check_held(memo)
            return built

        documents = (
            struct(
                "ConversationDocument",
                [("version", version), ("canisters", list[canister])],
                conversation_from_wire,
                tag=CONVERSATION_FORMAT,
                tag_field="format",
            )
            | struct(
                "CanisterDocument",
                [("version", version), ("canister", canister)],
                canister_from_wire,
                tag=CANISTER_FORMAT,
                tag_field="format",
            )
            | struct(
                "ContentDocument",
                [("version", version), ("content", part)],
                content_from_wire,
                tag=CONTENT_FORMAT,
                tag_field="format",
            )
        )
        self.document = msgspec.json.Decoder(documents).decode
        decoder = msgspec.json.Decoder(canister)
        self.canister = decoder.decode
        self.canister_lines = decoder.decode_lines
        # A line of a store's log (see canisters.storage), whose record is read
        # here once its chain and digest are checked.
        self.log_record = msgspec.json.Decoder(
            msgspec.defstruct(
                "_WireLogRecord",
                [
                    ("seq", int),
                    ("prev", str),
                    ("v", version),
                    ("canister", canister),
                    ("digest", str),
                ],
                **options,
            )
        ).decode
        self.any = msgspec.json.Decoder().decode
        self.new_conversation = new_conversation

    def from_json(self, text: str | bytes) -> Conversation | Canister | Content:
        value: Conversation | Canister | Content = self.document(utf8(text)).build()
        return value

    def from_jsonl(self, text: str | bytes) -> Conversation:
        data = utf8(text)
        # The header line, then every canister line in one call: msgspec skips
        # blank lines as the hooks do (and refuses one of other whitespace,
        # which the hooks then read). The header as to_jsonl writes it is
        # recognized without decoding it.
        written: str | bytes
        if isinstance(data, str):
            written, newline = _HEADER_LINE, data.find("\n")
        else:
            written, newline = _HEADER_LINE_BYTES, data.find(b"\n")
        if not data.startswith(written):  # type: ignore[arg-type]
            header = self.any(data if newline < 0 else data[:newline])
            if (
                type(header) is not dict
                or header.get("format") != CONVERSATION_FORMAT
                or header.get("version") != FORMAT_VERSION
            ):
                raise ValueError("not a current header")
        wires = [] if newline < 0 else self.canister_lines(data[newline + 1 :])
        memo = new_memo()
        value = self.new_conversation(tuple([wire.build(memo) for wire in wires]))
        check_held(memo)
        return value


# The header line to_jsonl writes, newline included.
_HEADER_LINE_BYTES: Final = JSONL_HEADER + b"\n"
_HEADER_LINE: Final = _HEADER_LINE_BYTES.decode()


HELD: Final = object()
"""The key of a build's memo under which the builders list the JSON values
(extras, arguments, metadata's custom, an error's details) they set."""


def new_memo() -> dict[Any, Any]:
    """A memo for the builders: what they share within one document (recurring
    strings, metadata naming only a model), and the JSON values they set."""
    return {HELD: []}


def check_held(memo: dict[Any, Any]) -> None:
    """Raise ``ValueError`` when a JSON value the builders set may nest too deeply
    for the form read: the hooks then read the document and decide exactly."""
    held = memo[HELD]
    if held and nests_deeper(held, OPAQUE_LIMIT + 1):
        raise ValueError("perhaps nested too deeply: the hooks decide")


_FAST: list[_Fast | None] = []


def fast() -> _Fast | None:
    """The fast path's decoders, or ``None`` where it cannot serve (see above)."""
    if not _FAST:
        try:
            fast: _Fast | None = _Fast()
        # msgspec is a dependency, and the tests require the fast path; should it
        # be missing or refuse the wire structs, the hooks still read everything.
        except Exception:  # pragma: no cover
            fast = None
        _FAST.append(fast)
    return _FAST[0]


def disable() -> None:
    """Send every document through the hooks: a built-in tag's hook was replaced."""
    _FAST[:] = [None]
