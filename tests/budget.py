"""How many examples the property tests draw.

``CANISTERS_TEST_EXAMPLES`` scales the ``max_examples`` of every property test
(default 1). ``.ci/run`` runs the whole suite at full scale on the default
Python and at 0.25 on each other supported Python, where what is checked is that
the library behaves the same, so that CI on four interpreters stays well under
its time limit. Raise it (say to 4) for a deeper search before a release.
"""

from __future__ import annotations

import os

SCALE = float(os.environ.get("CANISTERS_TEST_EXAMPLES", "1"))


def examples(count: int) -> int:
    """``count`` scaled by ``CANISTERS_TEST_EXAMPLES``, at least 10."""
    return max(10, round(count * SCALE))
