"""The public surface of canisters.storage is pinned, and every name documented."""

from __future__ import annotations

import importlib
import inspect
from types import ModuleType

import pytest

from .surface_support import needs_docstring

STORAGE = {
    "AsyncStore",
    "ContentStore",
    "CopyReport",
    "Durability",
    "ExpiryReport",
    "FileStore",
    "Fork",
    "GarbageReport",
    "IntegrityProblem",
    "InvalidIdentifier",
    "InvalidQuery",
    "Progress",
    "Redaction",
    "SQLiteStore",
    "SearchHit",
    "Sidecar",
    "StoragePolicy",
    "Store",
    "StoreStats",
    "Verification",
    "copy_store",
    "open_async_store",
    "open_store",
    "verify",
}

BACKENDS = {
    "canisters.storage.files": {
        "FileContentStore",
        "FileSidecar",
        "FileStore",
        "Locks",
    },
    "canisters.storage.sqlite": {
        "Database",
        "SQLiteContentStore",
        "SQLiteSidecar",
        "SQLiteStore",
        "Transaction",
    },
    "canisters.storage.s3": {"S3ContentStore"},
    "canisters.storage.testing": {"StoreConformance"},
    "canisters.storage.transfer": {"CopyReport", "copy_store"},
    "canisters.storage.aio": {
        "AsyncContentStore",
        "AsyncSidecar",
        "AsyncStore",
        "ThreadedContentStore",
        "ThreadedSidecar",
        "ThreadedStore",
        "open_async_store",
    },
    "canisters.storage.postgres": {
        "AsyncPostgresContentStore",
        "AsyncPostgresSidecar",
        "AsyncPostgresStore",
        "PostgresContentStore",
        "PostgresSidecar",
        "PostgresStore",
    },
}

MODULES = ["canisters.storage", *BACKENDS]


def test_storage_names() -> None:
    storage = importlib.import_module("canisters.storage")
    public = set(storage.__all__)
    assert public == STORAGE, public ^ STORAGE
    for name in public:
        assert hasattr(storage, name), name


@pytest.mark.parametrize("module", sorted(BACKENDS))
def test_backend_names(module: str) -> None:
    loaded = importlib.import_module(module)
    assert set(loaded.__all__) == BACKENDS[module], (
        set(loaded.__all__) ^ BACKENDS[module]
    )


def _documented_members(cls: type) -> list[str]:
    """Return the public methods and properties ``cls`` itself defines."""
    names = []
    for name, value in vars(cls).items():
        if name.startswith("_"):
            continue
        if inspect.isfunction(value) or isinstance(value, property):
            names.append(name)
    return names


@pytest.mark.parametrize("module", MODULES)
def test_every_public_name_has_a_docstring(module: str) -> None:
    loaded: ModuleType = importlib.import_module(module)
    assert inspect.getdoc(loaded), f"{module} has no docstring"
    for name in loaded.__all__:
        value = getattr(loaded, name)
        if not needs_docstring(value):
            continue
        assert inspect.getdoc(value), f"{module}.{name} has no docstring"
        if inspect.isclass(value) and value.__module__.startswith("canisters."):
            for member in _documented_members(value):
                assert inspect.getdoc(getattr(value, member)), (
                    f"{module}.{name}.{member} has no docstring"
                )


def test_storage_errors_are_importable_from_canisters() -> None:
    canisters = importlib.import_module("canisters")
    storage = importlib.import_module("canisters.storage")
    for name in ("ConversationNotFound", "ContentNotFound", "IntegrityError"):
        assert issubclass(getattr(canisters, name), canisters.StorageError), name
    assert issubclass(canisters.StorageError, canisters.CanistersError)
    assert issubclass(storage.InvalidIdentifier, canisters.StorageError)
