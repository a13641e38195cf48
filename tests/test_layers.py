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


def _private(component: str) -> bool:
    return component.startswith("_") and not (
        component.startswith("__") and component.endswith("__")
    )


def _modules(root: Path = SOURCES) -> dict[str, Path]:
    found = {}
    for path in root.rglob("*.py"):
        parts = path.relative_to(root).with_suffix("").parts
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


def _crossings(
    modules: dict[str, Path] | None = None,
) -> list[tuple[str, int, str, str]]:
    modules = _modules() if modules is None else modules
    found = []
    for module, path in sorted(modules.items()):
        for line, name in _imported(module, path):
            if not name.startswith("canisters."):
                continue
            owner = _owner(name, modules)
            if owner is not None and not _within(module, owner):
                found.append((module, line, name, owner))
    return found


def test_no_private_name_is_imported_from_outside_its_package() -> None:
    crossings = [
        f"{module} (line {line}) imports {name}, private to {owner}"
        for module, line, name, owner in _crossings()
    ]
    assert crossings == []


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


def test_the_walk_finds_a_crossing(tmp_path: Path) -> None:
    """A private name imported from outside its package is found."""
    package = tmp_path / "canisters"
    (package / "storage").mkdir(parents=True)
    (package / "__init__.py").write_text("")
    (package / "storage" / "__init__.py").write_text("")
    (package / "storage" / "_common.py").write_text("def check(): ...\n")
    (package / "storage" / "files.py").write_text(
        "from ._common import check\n"  # within its package
    )
    (package / "recording.py").write_text(
        "def record():\n    from .storage._common import check\n"
    )
    modules = _modules(tmp_path)
    found = _crossings(modules)
    assert [(module, name) for module, _, name, _ in found] == [
        ("canisters.recording", "canisters.storage._common.check")
    ]
