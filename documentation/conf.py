"""Sphinx configuration for the canisters documentation."""

from __future__ import annotations

import importlib.metadata

project = "canisters"
author = "The canisters developers"
copyright = "2026, The canisters developers"  # noqa: A001
release = importlib.metadata.version("canisters")
version = release

extensions = [
    "sphinx.ext.autodoc",
    "sphinx.ext.viewcode",
]

nitpicky = True
nitpick_ignore_regex = [
    # Type variables and private helpers that autodoc meets in signatures.
    (r"py:.*", r"(canisters\.)?.*\._[A-Za-z].*"),
    (r"py:class", r"[A-Z]"),
    (r"py:class", r"(K|V|C|T)"),
    (r"py:class", r"attr\..*"),
    (r"py:class", r"cattrs\..*"),
    (r"py:class", r"NoneType"),
    # The standard library: no intersphinx, the build must work offline.
    (r"py:.*", r"(datetime|typing|typing_extensions|collections\.abc|enum|re|os|pathlib|logging|threading|types|asyncio|io|sqlite3)\..*"),
    (r"py:class", r"(Any|Callable|Mapping|Sequence|Iterable|Iterator|Path|datetime|Enum|Exception|ValueError|LookupError|OSError|RuntimeError|object|bytes|str|int|float|bool|dict|list|tuple|type|None|Self|Awaitable|Coroutine)"),
]
autodoc_member_order = "bysource"
autodoc_typehints = "description"
autodoc_default_options = {"members": True, "show-inheritance": True}
html_theme = "furo"
html_title = "canisters"
exclude_patterns = ["_build"]
