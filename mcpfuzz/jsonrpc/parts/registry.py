"""Every part of `mcpfuzz.jsonrpc.parts`, found by its module: a part in a new module is read back with no list
to edit."""

from __future__ import annotations

import importlib
import pkgutil
from functools import cache

from mcpfuzz.jsonrpc import parts
from mcpfuzz.jsonrpc.parts.part import CasePart, registered


@cache
def registered_parts() -> tuple[type[CasePart], ...]:
    """Every part class, each module of the parts package imported once (in name order, so reading is stable)."""
    for module in sorted(info.name for info in pkgutil.iter_modules(parts.__path__)):
        importlib.import_module(f"{parts.__name__}.{module}")
    return registered()
