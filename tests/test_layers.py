"""The package's import rules that import-linter does not see.

``lint-imports`` (README's test command; the contracts are in pyproject.toml)
holds the layers, the absence of cycles and the private modules. It sees which
modules import which, not the names imported: this test holds the same rule for
every private name, by reading every ``import`` of ``sources/`` (also those
inside functions and under ``if TYPE_CHECKING:``).

The rule: a name starting with one underscore (a module, a function, a class, a
constant) is imported only from within the package that holds it. A private
module belongs to its parent package; a private name defined in a module belongs
to that module's package (the module itself when it is a package's
``__init__``). So ``canisters.providers._common`` serves every module under
``canisters.providers`` and nothing outside it, and the root package's private
modules (``canisters._wire``) serve the whole library.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

SOURCES = Path(__file__).resolve().parent.parent / "sources"
README = SOURCES.parent / "README.rst"

EXEMPT: set[tuple[str, str]] = set()


def _private(component: str) -> bool:
    return component.startswith("_") and not (
        component.startswith("__") and component.endswith("__")
    )


def _modules() -> dict[str, Path]:
    found = {}
    for path in SOURCES.rglob("*.py"):
        parts = path.relative_to(SOURCES).with_suffix("").parts
        if parts[-1] == "__init__":
            parts = parts[:-1]
        found[".".join(parts)] = path
    return found


def _imported(module: str, path: Path) -> list[tuple[int, str]]:
    """Every dotted name ``module`` imports (``from a import b`` gives ``a.b``)."""
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    names = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom):
            if node.level:
                steps = package.split(".")
                base = steps[: len(steps) - node.level + 1]
                target = ".".join([*base, *([node.module] if node.module else [])])
            else:
                target = node.module or ""
            names += [(node.lineno, f"{target}.{alias.name}") for alias in node.names]
        elif isinstance(node, ast.Import):
            names += [(node.lineno, alias.name) for alias in node.names]
    return names


def _owner(name: str, modules: dict[str, Path]) -> str | None:
    """The package a private ``name`` belongs to (``None``: nothing private)."""
    steps = name.split(".")
    owner = None
    for index, step in enumerate(steps):
        if not _private(step):
            continue
        holder = ".".join(steps[:index])
        if ".".join(steps[: index + 1]) in modules or modules[holder].name == (
            "__init__.py"
        ):
            owner = holder  # a private module, or a name of a package's __init__
        else:
            owner = holder.rpartition(".")[0]  # a name defined in a plain module
    return owner


def _within(module: str, package: str) -> bool:
    return module == package or module.startswith(package + ".")


def _crossings() -> list[tuple[str, int, str, str]]:
    modules = _modules()
    found = []
    for module, path in sorted(modules.items()):
        for line, name in _imported(module, path):
            if not name.startswith("canisters."):
                continue
            owner = _owner(name, modules)
            if owner is not None and not _within(module, owner):
                found.append((module, line, name, owner))
    return found


def _exempt(module: str, name: str) -> bool:
    return any(
        _within(module, importer) and _within(name, imported)
        for importer, imported in EXEMPT
    )


def test_no_private_name_is_imported_from_outside_its_package() -> None:
    crossings = [
        f"{module} (line {line}) imports {name}, private to {owner}"
        for module, line, name, owner in _crossings()
        if not _exempt(module, name)
    ]
    assert crossings == []


def test_every_exemption_is_still_needed() -> None:
    used = {
        (importer, imported)
        for importer, imported in EXEMPT
        for module, _, name, _ in _crossings()
        if _within(module, importer) and _within(name, imported)
    }
    assert used == EXEMPT


def test_the_rule_tells_private_names_apart() -> None:
    """The walk itself: what counts as private, and whose."""
    modules = _modules()
    assert _owner("canisters.providers._common.expect_str", modules) == (
        "canisters.providers"
    )
    assert _owner("canisters.serialization._paused", modules) == "canisters"
    assert _owner("canisters._wire.Fast", modules) == "canisters"
    assert _owner("canisters._html.page.Options", modules) == "canisters"
    assert _owner("canisters.providers.openai_chat.messages._Renderer", modules) == (
        "canisters.providers.openai_chat"
    )
    assert _owner("canisters.storage._async_postgres", modules) == "canisters.storage"
    assert _owner("canisters.storage.aio.ThreadedStore", modules) is None
    assert _owner("canisters.__version__", modules) is None


def test_readme_test_command_runs_the_import_contract() -> None:
    command = re.search(
        r"^   python3 -m venv \.venv && \.venv/bin/pip install -q -e '\.\[test\]'.*$",
        README.read_text(encoding="utf-8"),
        re.MULTILINE,
    )
    assert command is not None
    assert "&& .venv/bin/lint-imports &&" in command.group()
