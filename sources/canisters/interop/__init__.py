"""Interop with other conversation models: pydantic-ai, LangChain, OpenTelemetry.

Each submodule converts both ways and imports its library only when called:

- :mod:`canisters.interop.pydantic_ai`: ``to_canisters`` / ``from_canisters`` for
  pydantic-ai's ``ModelMessage`` lists (extra ``pydantic-ai``);
- :mod:`canisters.interop.langchain`: the same for LangChain ``BaseMessage`` lists
  (extra ``langchain``);
- :mod:`canisters.interop.otel`: ``to_otel`` / ``from_otel`` for the OpenTelemetry
  GenAI semantic conventions' message attributes (plain JSON, no extra).

Conversions are lossless where the other side can hold a field; what it cannot
hold is recorded in a :class:`canisters.providers.Report` passed as ``report=``,
the same report the provider normalizers fill. ``import canisters`` imports none
of these modules and none of the libraries.
"""

from __future__ import annotations

__all__: list[str] = []
