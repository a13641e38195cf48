"""Sphinx configuration for the canisters documentation."""

from __future__ import annotations

import importlib.metadata

project = "canisters"
author = "The canisters developers"
copyright = "2026, The canisters developers"
release = importlib.metadata.version("canisters")
version = release

extensions = [
    "sphinx.ext.autodoc",
    "sphinx.ext.viewcode",
]

_STDLIB_MODULES = (
    r"(datetime|typing|typing_extensions|collections\.abc|enum|re|os|pathlib"
    r"|logging|threading|types|asyncio|io|sqlite3|concurrent\.futures)"
)
_STDLIB_NAMES = (
    r"(Any|Callable|Mapping|Sequence|Iterable|Iterator|Path|datetime|Enum"
    r"|Exception|ValueError|LookupError|OSError|RuntimeError|object|bytes|str"
    r"|int|float|bool|dict|list|tuple|type|None|Self|Awaitable|Coroutine)"
)
nitpicky = True
nitpick_ignore_regex = [
    # Type variables and private helpers that autodoc meets in signatures.
    (r"py:.*", r"(canisters\.)?.*\._[A-Za-z].*"),
    (r"py:class", r"_base64\.Encoded"),  # media data kept as base64, internal
    (r"py:class", r"[A-Z]"),
    (r"py:class", r"(K|V|C|T)"),
    (r"py:class", r"canisters\.[\w.]*\.[A-Z]"),
    (r"py:class", r"attr\..*"),
    (r"py:class", r"cattrs\..*"),
    (r"py:class", r"NoneType"),
    # Optional drivers, imported only when their backend is used.
    (r"py:class", r"(psycopg|psycopg_pool|botocore|boto3)\..*"),
    # The other libraries of canisters.interop (optional extras, no intersphinx).
    (r"py:class", r"(ModelMessage|BaseMessage|pydantic_ai\..*|langchain_core\..*)"),
    # The standard library: no intersphinx, the build must work offline.
    (r"py:.*", _STDLIB_MODULES + r"\..*"),
    (r"py:class", _STDLIB_NAMES),
]
autodoc_member_order = "bysource"
autodoc_typehints = "description"
autodoc_default_options = {"members": True, "show-inheritance": True}
html_theme = "furo"
html_title = "canisters"
exclude_patterns = ["_build"]


def _resolve_reexports(app, env, node, contnode):  # type: ignore[no-untyped-def]
    """Resolve ``canisters.Name`` to where ``Name`` is defined and documented."""
    target = node.get("reftarget", "")
    if node.get("refdomain") != "py" or not target.startswith("canisters."):
        return None
    import importlib

    head, _, tail = target.partition(".")
    name, _, rest = tail.partition(".")
    try:
        value = getattr(importlib.import_module(head), name)
    except (AttributeError, ImportError):
        return None
    module = getattr(value, "__module__", None)
    if not module or module == head:
        return None
    node["reftarget"] = ".".join(filter(None, (module, name, rest)))
    domain = env.get_domain("py")
    kind, refdoc, target = node["reftype"], node["refdoc"], node["reftarget"]
    return domain.resolve_xref(env, refdoc, app.builder, kind, target, node, contnode)


def setup(app):  # type: ignore[no-untyped-def]
    app.connect("missing-reference", _resolve_reexports)
