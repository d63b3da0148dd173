"""mcpfuzz's own modules imported before the first draw, so that the same seed draws the same values.

Hypothesis also draws literals (strings, numbers) from the local modules loaded in the process, and an
editable install makes mcpfuzz's own modules local. A module imported lazily (a report, a rare phase) at a
moment that depends on timing would change that pool in the middle of a run, and with it the frames a seed
sends. Importing every module first fixes the pool for the whole run: the same source draws the same frames.
"""

from __future__ import annotations

import ast
import importlib
import pkgutil
from functools import cache
from pathlib import Path

# Packages that a run never loads: the pytest plugin (pytest is optional), the standalone example server.
NOT_LOADED = ("mcpfuzz.testing", "mcpfuzz.example")


def acts_when_imported(path: Path) -> bool:
    """True for a module whose top level calls something (a tracer or hook meant to run inside a server)."""
    try:
        tree = ast.parse(path.read_text(encoding="utf-8"))
    except (OSError, SyntaxError, ValueError):
        return True
    return any(isinstance(node, ast.Expr) and isinstance(node.value, ast.Call) for node in tree.body)


def module_names() -> list[str]:
    """Every module of the mcpfuzz package a run may import, in a fixed order (packages are imported to be read)."""
    names: list[str] = []
    pending = ["mcpfuzz", "mcpfuzz.strategies"]  # strategies/ is installed as mcpfuzz.strategies from a folder apart
    while pending:
        package = importlib.import_module(pending.pop())
        for info in pkgutil.iter_modules(package.__path__, prefix=f"{package.__name__}."):
            name = info.name
            if name.rsplit(".", 1)[-1] == "__main__" or name.startswith(NOT_LOADED) or name in names:
                continue
            if info.ispkg:
                pending.append(name)
            elif acts_when_imported(Path(info.module_finder.path, f"{name.rsplit('.', 1)[-1]}.py")):  # type: ignore[union-attr]
                continue
            names.append(name)
    return sorted(names)


@cache
def import_every_module() -> tuple[str, ...]:
    """Import each of `module_names()` once per process; the names that could not be imported (an extra not
    installed, such as redis for --shared) are returned."""
    missing = []
    for name in module_names():
        try:
            importlib.import_module(name)
        except ImportError:
            missing.append(name)
    return tuple(missing)
