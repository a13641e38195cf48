"""A function tool's parameters: an object schema at the root, for every target.

Every format takes a function's arguments as one JSON object, and some refuse a
parameters schema that does not say so (Anthropic answers 400 to an
``input_schema`` without ``type: "object"``; OpenAI's strict mode too). A
schema from another format whose root has no ``type`` is sent with
``type: "object"`` added, reported as synthesized (it only says what every
format assumes). A schema read from the target's own format goes back as it
came.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from .outcomes import Outcomes

__all__ = ["object_root"]


def object_root(
    schema: Mapping[str, Any], field: str, outcomes: Outcomes
) -> Mapping[str, Any]:
    """``schema`` with ``type: "object"`` at its root when it has no type
    (noted at ``field``), else ``schema`` itself."""
    if "type" in schema:
        return schema
    outcomes.synthesized(
        f"{field}.type",
        'the parameters schema has no type; type "object" sent',
        "a function's arguments are an object",
    )
    return {"type": "object", **schema}
