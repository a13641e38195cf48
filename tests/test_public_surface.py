"""The public surface is pinned: a rename or removal is a deliberate act."""

from __future__ import annotations

import importlib
import inspect
import subprocess
import sys

import pytest

import canisters

from .surface_support import needs_docstring

TOP_LEVEL = {
    "Citation",
    "CitedText",
    "Compaction",
    "DocumentSource",
    "ProviderToolCall",
    "ProviderToolResult",
    "SearchHit",
    "SearchResultSource",
    "UrlSource",
    "Assistant",
    "Audio",
    "BuilderError",
    "CacheConfig",
    "CanisterNotFound",
    "CanistersError",
    "ContentNotFound",
    "Conversation",
    "ConversationNotFound",
    "DuplicateCanister",
    "Document",
    "ErrorCode",
    "ErrorInfo",
    "File",
    "Generation",
    "Image",
    "IntegrityError",
    "InvalidConversation",
    "MalformedPayload",
    "Invocation",
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
    "Reasoning",
    "ReasoningConfig",
    "RecordingError",
    "Removal",
    "Request",
    "Result",
    "ResultBuilder",
    "Role",
    "Sanitized",
    "SerializationError",
    "SnapshotRestoreError",
    "StorageError",
    "Supervisor",
    "Text",
    "Tool",
    "ToolChoice",
    "UnknownProvider",
    "UnsupportedContent",
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
}

PROTOCOLS = {
    "AssistantCanister",
    "AudioContent",
    "Canister",
    "Content",
    "DocumentCanister",
    "FileContent",
    "ImageContent",
    "InvocationCanister",
    "MediaContent",
    "Modality",
    "ReasoningContent",
    "ResultCanister",
    "Role",
    "SupervisorCanister",
    "TextualContent",
    "UserCanister",
    "VideoContent",
}


def test_top_level_names() -> None:
    public = set(canisters.__all__)
    assert public == TOP_LEVEL, public ^ TOP_LEVEL
    for name in public:
        assert hasattr(canisters, name), name


def test_protocol_names() -> None:
    assert set(importlib.import_module("canisters.protocols").__all__) == PROTOCOLS


@pytest.mark.parametrize(
    "module",
    [
        "canisters",
        "canisters.protocols",
        "canisters.content",
        "canisters.canisters",
        "canisters.conversation",
        "canisters.validation",
        "canisters.builders",
        "canisters.serialization",
        "canisters.exceptions",
        "canisters.lineage",
        "canisters.recording",
        "canisters.audit",
        "canisters.providers",
        "canisters.providers.streams",
        "canisters.providers.kit",
        "canisters.providers.testing",
        "canisters.providers.openai_chat.request",
        "canisters.providers.openai_responses.request",
        "canisters.providers.anthropic.request",
        "canisters.requests",
        "canisters.providers.anthropic",
        "canisters.providers.openai_chat",
        "canisters.providers.openai_responses",
        "canisters.providers.gemini",
        "canisters.providers.gemini.request",
        "canisters.providers.ollama",
        "canisters.providers.ollama.request",
        "canisters.storage",
        "canisters.html",
        "canisters.view",
        "canisters.interop.pydantic_ai",
        "canisters.interop.langchain",
        "canisters.interop.otel",
    ],
)
def test_every_public_name_has_a_docstring(module: str) -> None:
    loaded = importlib.import_module(module)
    for name in loaded.__all__:
        value = getattr(loaded, name)
        if needs_docstring(value):
            assert inspect.getdoc(value), f"{module}.{name} has no docstring"


def test_every_error_derives_from_the_root() -> None:
    exceptions = importlib.import_module("canisters.exceptions")
    for name in exceptions.__all__:
        value = getattr(exceptions, name)
        if inspect.isclass(value) and issubclass(value, BaseException):
            assert issubclass(value, canisters.CanistersError), name


def test_import_does_not_pull_provider_sdks() -> None:
    code = (
        "import sys, canisters, canisters.providers\n"
        "heavy = {'openai', 'anthropic', 'google.genai', 'ollama', 'pydantic'}\n"
        "print(sorted(heavy & set(sys.modules)))"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    )
    assert out.stdout.strip() == "[]"
