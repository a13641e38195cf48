"""Helpers of the PostgreSQL store's settings: its driver, timeouts, URL."""

from __future__ import annotations

import math
from typing import Any

from ..exceptions import StorageError

__all__ = ["driver", "masked", "seconds"]


def driver() -> tuple[Any, Any]:
    """Import psycopg and psycopg_pool, or say which extra to install."""
    try:
        import psycopg
        import psycopg_pool
    except ImportError as error:
        raise StorageError(
            "PostgreSQL stores need psycopg 3 and psycopg-pool: "
            "pip install 'canisters[postgres]'"
        ) from error
    return psycopg, psycopg_pool


def seconds(name: str, value: object) -> float:
    """Return ``value`` when it is a positive number of seconds, else raise."""
    if type(value) not in (int, float) or not 0 < value < math.inf:  # type: ignore[operator]
        raise StorageError(
            f"{name} must be a positive number of seconds, got {value!r}"
        )
    return float(value)  # type: ignore[arg-type]


def masked(location: str) -> str:
    """Return ``location`` with any password replaced by ``***``."""
    scheme, separator, rest = location.partition("://")
    if not separator or "@" not in rest.split("/", 1)[0]:
        return location
    credentials, _, host = rest.partition("@")
    user = credentials.split(":", 1)[0]
    return f"{scheme}://{user}:***@{host}" if ":" in credentials else location
