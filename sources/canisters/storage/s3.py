"""Blobs in an S3-compatible object store (``blobs="s3://bucket/prefix"``).

Any backend keeps its conversations where it always does and its content blobs
in the bucket: ``open_store(location, blobs="s3://bucket/prefix")``. Endpoint,
region and credentials come from the standard AWS settings (``AWS_ENDPOINT_URL``,
``AWS_ACCESS_KEY_ID``, ``AWS_SECRET_ACCESS_KEY``, ``AWS_PROFILE``, the
``~/.aws`` files, ...) through boto3, so S3, MinIO, R2 and other compatible
stores all work. Needs the ``s3`` extra.

Each blob is the object ``<prefix>/sha256/<2 hex>/<64 hex>``, written once with
a conditional put (``If-None-Match: *``): concurrent writers of one blob are
safe, and an existing blob is never rewritten. Every read is checked against
the blob's hash. Nothing on the hot path lists the bucket; only garbage
collection and statistics do. A prefix belongs to one store: garbage collection
removes every blob there that the store's logs do not reference.
"""

from __future__ import annotations

import functools
import time
from collections.abc import Callable, Iterator
from typing import Any, Final, ParamSpec, TypeVar

from ..exceptions import ContentNotFound, IntegrityError, StorageError
from ._common import check_bytes, check_content_id, content_id_of

__all__ = ["S3ContentStore"]

P = ParamSpec("P")
T = TypeVar("T")

SCHEME: Final = "s3://"
# The botocore settings of the client a store makes (one given to
# S3ContentStore keeps its own): see S3ContentStore.
_CLIENT: Final = {
    "connect_timeout": 3,
    "read_timeout": 10,
    "retries": {"total_max_attempts": 3, "mode": "standard"},
}
_MISSING: Final = frozenset(("404", "NoSuchKey", "NotFound"))
_EXISTS: Final = frozenset(("412", "PreconditionFailed"))
_RACING: Final = frozenset(("409", "ConditionalRequestConflict"))


def _client_errors(method: Callable[P, T]) -> Callable[P, T]:
    """Turn a botocore error into a :class:`StorageError`."""

    @functools.wraps(method)
    def wrapper(*args: P.args, **kwargs: P.kwargs) -> T:
        import botocore.exceptions

        try:
            return method(*args, **kwargs)
        except (
            botocore.exceptions.BotoCoreError,
            botocore.exceptions.ClientError,
        ) as error:
            raise StorageError(f"S3 {method.__name__} failed: {error}") from error

    return wrapper


def _code(error: Any) -> str:
    return str(error.response.get("Error", {}).get("Code", ""))


class S3ContentStore:
    """Content-addressed blobs in a bucket, under a prefix.

    ``location`` is ``s3://bucket`` or ``s3://bucket/prefix``; ``client`` a
    boto3 S3 client (by default one made from the standard AWS settings, which
    connects within 3 s, waits at most 10 s for each read of a response and
    makes three attempts in all, so that a request to an endpoint that stopped
    answering fails in seconds, not minutes). Give
    one to a store as ``blobs=S3ContentStore(location, client=client)`` when
    the endpoint, credentials or botocore settings are not the environment's,
    or to share one client among many stores (boto3 clients are thread-safe).
    """

    __slots__ = ("_bucket", "_client", "_prefix")

    def __init__(self, location: str, *, client: Any = None) -> None:
        if not isinstance(location, str) or not location.startswith(SCHEME):
            raise StorageError(
                f"blobs location {location!r} is not an s3://bucket/prefix URL"
            )
        bucket, _, prefix = location[len(SCHEME) :].partition("/")
        prefix = prefix.strip("/")
        if not bucket or "\x00" in location or ".." in prefix.split("/"):
            raise StorageError(
                f"blobs location {location!r} names no bucket: use s3://bucket/prefix"
            )
        if client is None:
            try:
                import boto3
            except ImportError as error:
                raise StorageError(
                    "blobs in S3 need boto3: pip install 'canisters[s3]'"
                ) from error
            from botocore.config import Config

            client = boto3.client("s3", config=Config(**_CLIENT))
        self._client = client
        self._bucket = bucket
        self._prefix = f"{prefix}/sha256/" if prefix else "sha256/"

    @property
    def location(self) -> str:
        """The ``s3://bucket/prefix`` the blobs live under."""
        return f"{SCHEME}{self._bucket}/{self._prefix[: -len('sha256/')]}".rstrip("/")

    def key(self, content_id: str) -> str:
        """The object key of ``content_id``."""
        digest = check_content_id(content_id)[7:]
        return f"{self._prefix}{digest[:2]}/{digest}"

    def put(self, data: bytes) -> str:
        """Store ``data`` once and return its ``sha256:`` id."""
        data = check_bytes(data)
        content_id = content_id_of(data)
        self.store(content_id, data)
        return content_id

    @_client_errors
    def store(self, content_id: str, data: bytes) -> bool:
        """Write ``data`` under ``content_id`` unless it is there; ``True`` if new.

        A conditional put: when another writer stores the same blob at the same
        moment, one write wins and both return once the blob is readable.
        """
        import botocore.exceptions

        key = self.key(content_id)
        for attempt in range(8):
            try:
                self._client.put_object(
                    Bucket=self._bucket, Key=key, Body=data, IfNoneMatch="*"
                )
                return True
            except botocore.exceptions.ClientError as error:
                code = _code(error)
                if code in _EXISTS:
                    return False
                if code not in _RACING:
                    raise
            # Another writer's put of the same blob is in flight: wait for it.
            time.sleep(0.05 * (attempt + 1))
            if self.has(content_id):
                return False
        raise StorageError(f"S3 store of {content_id} kept conflicting")

    @_client_errors
    def get(self, content_id: str) -> bytes:
        """Return the bytes of ``content_id``, checking them against the id."""
        import botocore.exceptions

        key = self.key(content_id)
        try:
            response = self._client.get_object(Bucket=self._bucket, Key=key)
        except botocore.exceptions.ClientError as error:
            if _code(error) in _MISSING:
                raise ContentNotFound(content_id) from None
            raise
        data: bytes = response["Body"].read()
        if content_id_of(data) != content_id:
            raise IntegrityError(
                f"blob {content_id} no longer matches its id (tampered or corrupt)"
            )
        return data

    @_client_errors
    def has(self, content_id: str) -> bool:
        """Tell whether the blob is stored (one ``HEAD`` request)."""
        import botocore.exceptions

        key = self.key(content_id)
        try:
            self._client.head_object(Bucket=self._bucket, Key=key)
        except botocore.exceptions.ClientError as error:
            if _code(error) in _MISSING:
                return False
            raise
        return True

    @_client_errors
    def entries(self) -> list[tuple[str, int, float]]:
        """Return ``(content_id, size, stored_at)`` of every blob (lists the bucket)."""
        found = []
        paginator = self._client.get_paginator("list_objects_v2")
        for page in paginator.paginate(Bucket=self._bucket, Prefix=self._prefix):
            for item in page.get("Contents", ()):
                name = "sha256:" + item["Key"].rsplit("/", 1)[-1]
                if len(name) == 71:
                    found.append(
                        (name, int(item["Size"]), item["LastModified"].timestamp())
                    )
        return found

    def ids(self) -> Iterator[str]:
        """Yield the id of every stored blob (lists the bucket)."""
        return iter([content_id for content_id, _, _ in self.entries()])

    @_client_errors
    def delete(self, content_ids: list[str]) -> None:
        """Remove the blobs ``content_ids``."""
        for start in range(0, len(content_ids), 1000):
            chunk = content_ids[start : start + 1000]
            self._client.delete_objects(
                Bucket=self._bucket,
                Delete={"Objects": [{"Key": self.key(i)} for i in chunk]},
            )

    def __repr__(self) -> str:
        return f"S3ContentStore({self.location!r})"


def open_blobs(location: object) -> S3ContentStore:
    """Return the external content store ``location`` names (``s3://`` only), or
    ``location`` itself when it is an :class:`S3ContentStore` (one made with a
    client of its own, which several stores may share)."""
    if isinstance(location, S3ContentStore):
        return location
    if isinstance(location, str) and location.startswith(SCHEME):
        return S3ContentStore(location)
    raise StorageError(
        f"unknown blobs location {location!r}: use s3://bucket/prefix "
        "(or leave blobs out to keep them in the store)"
    )
