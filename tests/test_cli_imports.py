"""The CLI modules import one another in one direction: no module reaches itself again, lazy imports included."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

pytestmark = pytest.mark.unit

CLI = Path(__file__).resolve().parent.parent / "mcpfuzz" / "cli"


def cli_imports() -> dict[str, set[str]]:
    """Each CLI module and the CLI modules it imports anywhere in its text (a function's lazy import too)."""
    graph: dict[str, set[str]] = {}
    for path in CLI.glob("*.py"):
        if path.stem in ("__init__", "__main__"):
            continue
        imported = set()
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("mcpfuzz.cli."):
                imported.add(node.module.rpartition(".")[2])
        graph[path.stem] = imported
    return graph


def test_no_cli_module_imports_itself_back() -> None:
    graph = cli_imports()

    def path_back(start: str) -> list[str] | None:
        stack = [(start, [start])]
        seen: set[str] = set()
        while stack:
            module, trail = stack.pop()
            for imported in graph.get(module, ()):
                if imported == start:
                    return [*trail, imported]
                if imported not in seen:
                    seen.add(imported)
                    stack.append((imported, [*trail, imported]))
        return None

    circles = [" -> ".join(trail) for module in sorted(graph) if (trail := path_back(module)) is not None]
    assert not circles, circles
    assert "main" not in graph["config_file"] and "soak" not in graph["options"]
