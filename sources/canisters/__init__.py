"""One provider-neutral, strongly typed model of LLM conversations.

The model, its Protocols and the errors load with the package; builders,
validation and serialization load on first use of one of their names, so that
``import canisters`` stays cheap for programs that only need some of it.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from . import _display
from .canisters import (
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
    child_of,
    new_id,
)
from .content import Audio, File, Image, Media, Reasoning, Text, Video
from .conversation import Conversation, Pair
from .exceptions import (
    BuilderError,
    CanisterNotFound,
    CanistersError,
    ContentNotFound,
    ConversationNotFound,
    DuplicateCanister,
    IntegrityError,
    InvalidConversation,
    MalformedPayload,
    ModelError,
    PendingInvocations,
    Problem,
    PromptMismatch,
    ProviderError,
    RecordingError,
    SerializationError,
    SnapshotRestoreError,
    StorageError,
    UnknownProvider,
    UnsupportedContent,
)
from .protocols import Modality, Role
from .provided import (
    Citation,
    CitedText,
    Compaction,
    DocumentSource,
    ProviderToolCall,
    ProviderToolResult,
    SearchHit,
    SearchResultSource,
    UrlSource,
)

if TYPE_CHECKING:
    from .builders import MessageBuilder, ResultBuilder
    from .requests import (
        CacheConfig,
        Generation,
        OutputFormat,
        ProviderTool,
        ReasoningConfig,
        Request,
        Tool,
        ToolChoice,
    )
    from .serialization import (
        from_json,
        from_jsonl,
        register_canister,
        register_content,
        to_json,
        to_jsonl,
    )
    from .validation import Removal, Sanitized, problems, sanitize, validate

_LAZY = {
    "CacheConfig": "requests",
    "Generation": "requests",
    "OutputFormat": "requests",
    "ProviderTool": "requests",
    "ReasoningConfig": "requests",
    "Request": "requests",
    "Tool": "requests",
    "ToolChoice": "requests",
    "MessageBuilder": "builders",
    "ResultBuilder": "builders",
    "from_json": "serialization",
    "from_jsonl": "serialization",
    "register_canister": "serialization",
    "register_content": "serialization",
    "to_json": "serialization",
    "to_jsonl": "serialization",
    "Removal": "validation",
    "Sanitized": "validation",
    "problems": "validation",
    "sanitize": "validation",
    "validate": "validation",
}


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'canisters' has no attribute {name!r}")
    value = getattr(importlib.import_module(f".{module}", __name__), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_LAZY))


def _load_html() -> None:
    """Load :mod:`canisters.html`, which registers the notebook display."""
    from . import html  # noqa: F401


_display.register_loader(_load_html)


__version__ = "0.1.0"

__all__ = [
    "Assistant",
    "Audio",
    "BuilderError",
    "CacheConfig",
    "CanisterNotFound",
    "CanistersError",
    "Citation",
    "CitedText",
    "Compaction",
    "ContentNotFound",
    "Conversation",
    "ConversationNotFound",
    "DuplicateCanister",
    "Document",
    "DocumentSource",
    "ErrorCode",
    "ErrorInfo",
    "File",
    "Generation",
    "Image",
    "IntegrityError",
    "InvalidConversation",
    "Invocation",
    "MalformedPayload",
    "Media",
    "MessageBuilder",
    "Metadata",
    "Modality",
    "ModelError",
    "OutputFormat",
    "Pair",
    "PendingInvocations",
    "Problem",
    "PromptMismatch",
    "ProviderError",
    "ProviderTool",
    "ProviderToolCall",
    "ProviderToolResult",
    "Reasoning",
    "ReasoningConfig",
    "RecordingError",
    "Removal",
    "Request",
    "Result",
    "ResultBuilder",
    "Role",
    "Sanitized",
    "SearchHit",
    "SearchResultSource",
    "SerializationError",
    "SnapshotRestoreError",
    "StorageError",
    "Supervisor",
    "Text",
    "Tool",
    "ToolChoice",
    "UnknownProvider",
    "UnsupportedContent",
    "UrlSource",
    "Usage",
    "User",
    "Video",
    "__version__",
    "child_of",
    "from_json",
    "from_jsonl",
    "new_id",
    "problems",
    "register_canister",
    "register_content",
    "sanitize",
    "to_json",
    "to_jsonl",
    "validate",
]
