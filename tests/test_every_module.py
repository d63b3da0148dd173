"""Before the first draw a run imports all of mcpfuzz but the modules that act when imported, so Hypothesis'
pool of literals from local modules is the same at every draw (the same seed sends the same frames)."""

from __future__ import annotations

import ast
import sys
from pathlib import Path

import pytest

from mcpfuzz.engine.searches.every_module import acts_when_imported, import_every_module, module_names

pytestmark = pytest.mark.unit

ROOT = Path(__file__).resolve().parent.parent


def test_the_hooks_run_inside_servers_are_never_imported() -> None:
    names = module_names()
    assert "mcpfuzz.engine.observe.hook" not in names and "mcpfuzz.engine.coverage.tracer" not in names
    assert acts_when_imported(ROOT / "mcpfuzz/engine/observe/hook.py")
    assert acts_when_imported(ROOT / "mcpfuzz/engine/coverage/tracer.py")
    assert not any(name.startswith(("mcpfuzz.testing", "mcpfuzz.example")) or name.endswith("__main__")
                   for name in names)


def test_every_other_module_is_loaded_lazily_ones_included() -> None:
    names = module_names()
    assert {"mcpfuzz.report.json_report", "mcpfuzz.engine.snapshot.changes", "mcpfuzz.strategies.arguments.bulk",
            "mcpfuzz.jsonrpc.parts.cancel"} <= set(names)
    missing = import_every_module()
    assert set(names) - set(missing) <= set(sys.modules)
    assert names == sorted(names) and len(names) == len(set(names))


def test_the_text_check_agrees_with_the_parsed_module_on_every_file() -> None:
    """A module acts when imported if its parsed top level has a call statement; the cheap text check must agree."""
    for path in [*ROOT.joinpath("mcpfuzz").rglob("*.py"), *ROOT.joinpath("strategies").rglob("*.py")]:
        tree = ast.parse(path.read_text(encoding="utf-8"))
        parsed = any(isinstance(node, ast.Expr) and isinstance(node.value, ast.Call) for node in tree.body)
        assert acts_when_imported(path) == parsed, path
