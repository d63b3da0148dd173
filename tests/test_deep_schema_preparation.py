"""Tools whose schemas are slow to check by drawing (a `oneOf` of free-form stage objects, values of kilobytes)
do not keep a run from calling: every tool is called, the deep ones too, and the same seed sends the same frames."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from tests.conftest import SERVERS_DIR, run_cli

pytestmark = pytest.mark.process

DEEP = SERVERS_DIR / "deep_schema_server.py"
TOOLS = ("explain_query", "export_query", "list_collections", "db_stats", "list_databases")


def calls_by_tool(frames: bytes) -> dict[str, int]:
    """How many tools/call requests the frame log shows for each tool name."""
    counts: dict[str, int] = {}
    for line in frames.splitlines():
        start = line.find(b"{")
        if start < 0 or b'"tools/call"' not in line:
            continue
        try:
            frame = json.loads(line[start:])
        except ValueError:
            continue
        params = frame.get("params") if isinstance(frame, dict) else None
        name = params.get("name") if isinstance(params, dict) else None
        if frame.get("method") == "tools/call" and isinstance(name, str):
            counts[name] = counts.get(name, 0) + 1
    return counts


def test_every_tool_is_called_beside_tools_of_deep_schemas_and_the_frames_repeat(tmp_path: Path) -> None:
    logs = []
    for attempt in ("a", "b"):
        folder = tmp_path / attempt
        folder.mkdir()
        result = run_cli(["run", "--seed", "3", "--max-examples", "3", "--budget", "240",
                          "--phases", "coverage", "--log-frames", "frames.log", "--json", "report.json", "--",
                          sys.executable, str(DEEP)], timeout=360, cwd=folder)
        assert result.returncode in (0, 1), result.stdout + result.stderr
        report = json.loads((folder / "report.json").read_text())
        assert report["stopped"] is None, report["stopped"]
        logs.append((folder / "frames.log").read_bytes())
    counts = calls_by_tool(logs[0])
    assert set(TOOLS) <= set(counts), counts
    assert counts["explain_query"] > 1 and counts["export_query"] > 1, counts
    assert logs[0] == logs[1]
