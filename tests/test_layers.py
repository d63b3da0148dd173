"""The import layering of ARCHITECTURE.md, checked on the source with `ast`; strategies/ does no I/O."""

from __future__ import annotations

import ast
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.conftest import REPO_ROOT

pytestmark = pytest.mark.unit

PACKAGE_DIR = REPO_ROOT / "mcpfuzz"
STRATEGIES_DIR = REPO_ROOT / "strategies"

# Layer -> rank: a module may import its own layer and layers of a lower rank. transport and strategies
# share a rank but are distinct layers, so neither may import the other.
RANKS = {"jsonrpc": 0, "transport": 1, "corpus": 1, "strategies": 1, "oracles": 2, "lint": 2, "engine": 3, "report": 4,
         "cli": 5, "testing": 6}
# Not layers: the package root (only __version__) and the example server (standalone); both import nothing
# from the layers, and no layer imports the example.
ROOT, EXAMPLE = "root", "example"
SUBPACKAGES = {"jsonrpc", "transport", "corpus", "strategies", "oracles", "lint", "engine", "report", "example",
               "testing"}
# The only thing anyone may take from the package root.
ROOT_NAMES = {"__version__"}
IO_MODULES = {"anyio", "subprocess", "socket", "httpx", "os"}


@dataclass(frozen=True)
class Import:
    """One imported module (with the name taken from it, for `from X import name`) and where."""

    module: str
    name: str | None
    line: int

    def show(self) -> str:
        """How the import reads, for failure messages."""
        return f"from {self.module} import {self.name}" if self.name else f"import {self.module}"


@dataclass(frozen=True)
class SourceModule:
    """A module of the project: its dotted name as installed, its layer and its file."""

    name: str
    layer: str
    path: Path

    @property
    def is_package(self) -> bool:
        """True for an `__init__.py`."""
        return self.path.name == "__init__.py"


def dotted_name(path: Path) -> str:
    """The installed module name of a source file (strategies/ installs as mcpfuzz.strategies)."""
    if path.is_relative_to(STRATEGIES_DIR):
        parts = ["mcpfuzz", "strategies", *path.relative_to(STRATEGIES_DIR).with_suffix("").parts]
    else:
        parts = ["mcpfuzz", *path.relative_to(PACKAGE_DIR).with_suffix("").parts]
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def layer_of_name(name: str) -> str | None:
    """The layer of a dotted module name inside mcpfuzz, or None for a module outside it."""
    parts = name.split(".")
    if parts[0] != "mcpfuzz":
        return None
    if len(parts) == 1:
        return ROOT
    if parts[1] in ("cli", "__main__"):  # `python -m mcpfuzz` is the command line
        return "cli"
    if parts[1] == "example":
        return EXAMPLE
    return parts[1] if parts[1] in SUBPACKAGES else f"unknown ({'.'.join(parts[:2])})"


def project_modules() -> list[SourceModule]:
    """Every module under mcpfuzz/ and strategies/."""
    paths = sorted(PACKAGE_DIR.rglob("*.py")) + sorted(STRATEGIES_DIR.rglob("*.py"))
    modules = []
    for path in paths:
        name = dotted_name(path)
        modules.append(SourceModule(name, layer_of_name(name) or "?", path))
    return modules


def resolve_relative(module: SourceModule, level: int, target: str | None) -> str:
    """The absolute name of `from .target import ...` written in `module`."""
    package = module.name.split(".")
    if not module.is_package:
        package.pop()
    base = package[: len(package) - (level - 1)]
    return ".".join([*base, target] if target else base)


def imports_of(module: SourceModule, source: str | None = None) -> Iterator[Import]:
    """Every import in a module, including those inside functions and TYPE_CHECKING blocks."""
    tree = ast.parse(source if source is not None else module.path.read_text(encoding="utf-8"))
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield Import(alias.name, None, node.lineno)
        elif isinstance(node, ast.ImportFrom):
            base = resolve_relative(module, node.level, node.module) if node.level else node.module or ""
            for alias in node.names:
                # `from mcpfuzz import engine` imports the submodule mcpfuzz.engine.
                if base == "mcpfuzz" and alias.name in SUBPACKAGES | {"cli"}:
                    yield Import(f"mcpfuzz.{alias.name}", None, node.lineno)
                else:
                    yield Import(base, alias.name, node.lineno)


def violation(module: SourceModule, imported: Import) -> str | None:
    """Why this import breaks the layering, or None when it is allowed."""
    if imported.module == "strategies" or imported.module.startswith("strategies."):
        return "strategies/ must be imported as mcpfuzz.strategies"
    target = layer_of_name(imported.module)
    if target is None:
        return None
    if target == ROOT:
        if imported.name in ROOT_NAMES or (module.layer not in (ROOT, EXAMPLE) and imported.name is None):
            return None
        return f"only {', '.join(f'mcpfuzz.{n}' for n in sorted(ROOT_NAMES))} may come from the package root"
    if target == module.layer:
        return None
    if module.layer in (ROOT, EXAMPLE):
        return f"{module.layer} imports nothing from the mcpfuzz layers"
    if target not in RANKS:
        return f"layer {module.layer} may not import {target}"
    if RANKS[target] < RANKS[module.layer]:
        return None
    return f"layer {module.layer} may not import layer {target} (it is not below {module.layer})"


def where(module: SourceModule, imported: Import) -> str:
    """`path:line (module): import` for a failure message."""
    return f"{module.path.relative_to(REPO_ROOT)}:{imported.line} ({module.name}): {imported.show()}"


def test_every_module_has_a_layer() -> None:
    """Each module under mcpfuzz/ and strategies/ belongs to a known layer (new folders need a place)."""
    modules = project_modules()
    assert len(modules) > 20, "found too few modules: is the repository layout as expected?"
    unknown = [f"{m.path.relative_to(REPO_ROOT)} -> {m.layer}" for m in modules
               if m.layer not in RANKS and m.layer not in (ROOT, EXAMPLE)]
    assert not unknown, "modules outside every layer of ARCHITECTURE.md:\n" + "\n".join(unknown)


def test_imports_follow_the_layers() -> None:
    """No module imports a layer above its own (or across transport and strategies)."""
    problems = []
    for module in project_modules():
        for imported in imports_of(module):
            reason = violation(module, imported)
            if reason:
                problems.append(f"{where(module, imported)}: {reason}")
    assert not problems, "imports that break ARCHITECTURE.md's layering:\n" + "\n".join(problems)


def test_strategies_do_no_io() -> None:
    """strategies/ imports none of anyio, subprocess, socket, httpx, os."""
    problems = []
    for module in project_modules():
        if module.layer != "strategies":
            continue
        for imported in imports_of(module):
            if imported.module.split(".")[0] in IO_MODULES:
                problems.append(f"{where(module, imported)}: strategies/ is generation only, no I/O")
    assert not problems, "\n".join(problems)


@pytest.mark.parametrize(("name", "layer", "source", "bad"), [
    ("mcpfuzz.jsonrpc.frame", "jsonrpc", "from mcpfuzz.engine.session.session import Session", True),
    ("mcpfuzz.transport.stdio", "transport", "from mcpfuzz.strategies import catalogue", True),
    ("mcpfuzz.strategies.catalogue", "strategies", "import mcpfuzz.transport.stdio", True),
    ("mcpfuzz.strategies.catalogue", "strategies", "from strategies.messages import FrameBuilder", True),
    ("mcpfuzz.oracles.ids", "oracles", "from mcpfuzz import engine", True),
    ("mcpfuzz.engine.runner", "engine", "from ..report import console", True),
    ("mcpfuzz.example.__main__", EXAMPLE, "from mcpfuzz.jsonrpc.ids import ABSENT", True),
    ("mcpfuzz.example.__main__", EXAMPLE, "from mcpfuzz import __version__", False),
    ("mcpfuzz.jsonrpc.versions", "jsonrpc", "from mcpfuzz import __version__", False),
    ("mcpfuzz.engine.runner", "engine", "from mcpfuzz.strategies.catalogue import catalogue", False),
    ("mcpfuzz.oracles.builtin", "oracles", "from . import ids", False),
    ("mcpfuzz.cli", "cli", "from mcpfuzz.report.console import ConsoleReporter", False),
])
def test_checker_flags_bad_imports(name: str, layer: str, source: str, bad: bool) -> None:
    """The checker itself tells allowed imports from forbidden ones."""
    path = PACKAGE_DIR / (name.removeprefix("mcpfuzz.").replace(".", "/") + ".py")
    module = SourceModule(name, layer, path)
    reasons = [violation(module, imported) for imported in imports_of(module, source)]
    assert any(reasons) == bad, reasons
