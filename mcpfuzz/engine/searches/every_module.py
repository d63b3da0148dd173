"""mcpfuzz's own modules imported before the first draw, so that the same seed draws the same values.

Hypothesis also draws literals (strings, numbers) from the local modules loaded in the process, and an
editable install makes mcpfuzz's own modules local. A module imported lazily (a report, a rare phase) at a
moment that depends on timing would change that pool in the middle of a run, and with it the frames a seed
sends. Importing every module first fixes the pool for the whole run: the same source draws the same frames.
"""

from __future__ import annotations

import importlib
import pkgutil
import re
from functools import cache
from pathlib import Path

# Packages that a run never loads: the pytest plugin (pytest is optional), the standalone example server.
NOT_LOADED = ("mcpfuzz.testing", "mcpfuzz.example")


# A statement at column 0 that calls something: `register(...)`, `atexit.register(...)`, `_chain()`. Read as
# text because parsing every module would cost each run a large part of a second (tests/test_every_module.py
# checks that the text agrees with the parsed module on every module of the package).
TOP_LEVEL_CALL = re.compile(r"^[A-Za-z_][\w.]*\(", re.MULTILINE)


def acts_when_imported(path: Path) -> bool:
    """True for a module whose top level calls something (a tracer or hook meant to run inside a server)."""
    try:
        source = path.read_text(encoding="utf-8")
    except (OSError, ValueError):
        return True
    return TOP_LEVEL_CALL.search(source) is not None


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
