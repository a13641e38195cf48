"""The SQLite backend (``sqlite:///path/to.db``)."""

from __future__ import annotations

from typing import Any

from ..exceptions import StorageError

__all__ = ["SQLiteStore"]


class SQLiteStore:
    """The SQLite backend (being written)."""

    def __init__(self, path: str, **options: Any) -> None:
        raise StorageError("the SQLite backend is not available yet")
