"""Fixtures shared by the test modules (the storage servers: see storage_servers)."""

from .storage_servers import (  # noqa: F401
    postgres_location,
    postgres_server,
    s3_blobs,
    s3_endpoint,
)
