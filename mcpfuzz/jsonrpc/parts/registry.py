"""Every part of `mcpfuzz.jsonrpc.parts`, found by its module: a part in a new module is read back with no list
to edit."""

from __future__ import annotations

import importlib
import pkgutil
from functools import cache

from mcpfuzz.jsonrpc import parts
from mcpfuzz.jsonrpc.parts.part import CasePart, registered


def registered_parts() -> tuple[type[CasePart], ...]:
    """Every part class: those of each module of the parts package, and any registered elsewhere."""
    _import_all()
    return registered()


@cache
def _import_all() -> None:
    """Import each module of the parts package once (in name order, so the registry's order is stable)."""
    for module in sorted(info.name for info in pkgutil.iter_modules(parts.__path__)):
        importlib.import_module(f"{parts.__name__}.{module}")
