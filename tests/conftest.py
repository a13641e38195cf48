"""Fixtures shared by the test modules (the storage servers: see storage_servers),
and the example budget of property tests without settings of their own (see
budget)."""

from hypothesis import settings

from .browser_support import browser, browser_page  # noqa: F401
from .budget import examples
from .storage_servers import (  # noqa: F401
    own_postgres,
    postgres_location,
    postgres_server,
    s3_blobs,
    s3_endpoint,
)

settings.register_profile("canisters", max_examples=examples(100))
settings.load_profile("canisters")
