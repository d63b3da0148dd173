"""ARCHITECTURE.md's table of rooms is true: every folder of mcpfuzz/ and strategies/ has a row, every row is a
real folder, and each layer's "may import" is what tests/test_layers.py enforces."""

from __future__ import annotations

import re

import pytest

from tests.conftest import REPO_ROOT
from tests.test_layers import EXAMPLE, RANKS

pytestmark = pytest.mark.unit

DOC = REPO_ROOT / "ARCHITECTURE.md"
ROW = re.compile(r"^\| `([^`]+)/` \| (.+) \| ([^|]+) \|$")
MAX_LINES = 150


def rooms() -> dict[str, str]:
    """The table's rows: folder (relative to the repository, no trailing slash) -> its "may import" cell."""
    rows = {}
    for line in DOC.read_text(encoding="utf-8").splitlines():
        match = ROW.match(line)
        if match:
            assert match.group(1) not in rows, f"{match.group(1)} has two rows"
            rows[match.group(1)] = match.group(3).strip()
    return rows


def source_folders() -> set[str]:
    """Every folder under mcpfuzz/ and strategies/ (caches aside), relative to the repository."""
    found = set()
    for top in ("mcpfuzz", "strategies"):
        for path in (REPO_ROOT / top).rglob("*"):
            if path.is_dir() and "__pycache__" not in path.parts:
                found.add(path.relative_to(REPO_ROOT).as_posix())
    found.add("strategies")
    return found


def layer_of_folder(folder: str) -> str:
    """The layer a folder belongs to (test_layers' names): strategies/..., mcpfuzz/<layer>/..."""
    parts = folder.split("/")
    return "strategies" if parts[0] == "strategies" else parts[1]


def top_folder(layer: str) -> str:
    """The table's row of a layer."""
    return "strategies" if layer == "strategies" else f"mcpfuzz/{layer}"


def test_every_folder_has_a_row_and_every_row_is_a_folder() -> None:
    rows = set(rooms())
    folders = source_folders()
    assert rows, "no table of rooms found in ARCHITECTURE.md"
    assert sorted(folders - rows) == [], "folders missing from ARCHITECTURE.md's table of rooms"
    assert sorted(rows - folders) == [], "rows of ARCHITECTURE.md's table that are no folder"


def test_each_layers_imports_are_the_layers_below_it() -> None:
    """A layer's row lists exactly the layers of a lower rank (test_layers' RANKS); a sub-folder says it follows
    its layer; the example server imports nothing."""
    rows = rooms()
    for folder, cell in rows.items():
        layer = layer_of_folder(folder)
        if folder != top_folder(layer) and layer in RANKS:
            assert cell == f"as `{top_folder(layer)}/`", (folder, cell)
            continue
        if layer == EXAMPLE:
            assert cell == "nothing", (folder, cell)
            continue
        below = {name for name, rank in RANKS.items() if rank < RANKS[layer]}
        listed = set() if cell == "nothing" else {name.strip() for name in cell.split(",")}
        assert listed == below, f"{folder}: the table says {sorted(listed)}, test_layers allows {sorted(below)}"
    assert {top_folder(layer) for layer in RANKS} <= set(rows), "a layer of test_layers has no row"


def test_the_map_is_short() -> None:
    lines = DOC.read_text(encoding="utf-8").splitlines()
    assert len(lines) < MAX_LINES, len(lines)
    assert sum(1 for line in lines if line.startswith("```")) == 2, "one picture"
