"""Seconds from the start of a run to the finding of each planted bug of the test servers (in process, engine API).

A run stops as soon as every bug it looks for is found (or its budget is spent: not found). The bugs are the
ones the test suite expects: the switches of tests/servers/mcp_server.py (tests/test_known_bugs.py), of
tests/servers/tool_server.py (tests/test_tool_bugs.py), and the bundled example server's nine.
"""

from __future__ import annotations

import statistics
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import anyio

from mcpfuzz.engine.config import RunConfig
from mcpfuzz.engine.events import Finding, FindingFound
from mcpfuzz.engine.runner import run
from mcpfuzz.oracles.base import all_oracles

ROOT = Path(__file__).resolve().parent.parent
SERVERS = ROOT / "tests" / "servers"
Match = Callable[[Finding], bool]


@dataclass(frozen=True)
class Bug:
    """A planted bug: the server command that has it and how its finding is told."""

    name: str
    command: tuple[str, ...]
    matches: Match
    phases: tuple[str, ...] | None = None  # None: a whole run


@dataclass(frozen=True)
class BugTimes:
    """One bug's seconds to its finding per seed (None: not found within the budget)."""

    bug: str
    seconds: tuple[float | None, ...]

    @property
    def found(self) -> list[float]:
        return [s for s in self.seconds if s is not None]

    def line(self) -> str:
        found = self.found
        median = f"{statistics.median(found):8.2f}" if found else "       -"
        worst = f"{max(found):8.2f}" if len(found) == len(self.seconds) else "  missed"
        each = " ".join("   -" if s is None else f"{s:4.1f}" for s in self.seconds)
        return f"{self.bug:<44} {median} {worst}   {each}"


def _oracle(*names: str, target: str = "") -> Match:
    """A finding of one of these oracles (on a target starting with `target`)."""
    return lambda finding: finding.oracle in names and finding.target.startswith(target)


def _switch(server: Path, switch: str) -> tuple[str, ...]:
    return (sys.executable, str(server), "--bug", switch)


def planted_bugs() -> list[list[Bug]]:
    """The bugs, grouped by the server process a run targets (one run per group and seed)."""
    sys.path.insert(0, str(ROOT))
    from tests.test_known_bugs import EXPECTED as PROTOCOL_BUGS
    from tests.test_tool_bugs import EXPECTED as TOOL_BUGS

    groups = [[Bug(f"mcp_server {switch}", _switch(SERVERS / "mcp_server.py", switch), _oracle(*oracles))]
              for switch, oracles in sorted(PROTOCOL_BUGS.items())]
    groups += [[Bug(f"tool_server {switch}", _switch(SERVERS / "tool_server.py", switch), _oracle(*oracles))]
               for switch, (_, oracles, _) in sorted(TOOL_BUGS.items())]
    # The same bugs by the fuzz phase's draws alone (no coverage calls before it): what the draw is for.
    groups += [[Bug(f"tool_server {switch}, fuzz phase only", _switch(SERVERS / "tool_server.py", switch),
                    _oracle(*oracles), ("probe", "fuzz"))]
               for switch, (_, oracles, _) in sorted(TOOL_BUGS.items())]
    example = (sys.executable, "-m", "mcpfuzz.example")
    groups.append([
        Bug("example 1 numeric string ids", example, _oracle("id-preserved")),
        Bug("example 2 batch crash", example,
            lambda f: f.oracle == "no-crash" and not f.target.startswith("template/")),
        Bug("example 3 stdout noise", example, _oracle("stdout-clean")),
        Bug("example 4 invalid request code", example, _oracle("invalid-request")),
        Bug("example 5 unknown tool traceback", example, _oracle("invalid-params", "no-internal-leak")),
        Bug("example 6 search limit 50", example, _oracle("valid-input-accepted", target="tool/search")),
        Bug("example 7 add_note output", example, _oracle("output-schema", target="tool/add_note")),
        Bug("example 8 empty template id crash", example, _oracle("no-crash", target="template/")),
        Bug("example 9 system prompt role", example, _oracle("response-schema", target="prompt/")),
    ])
    return groups


def time_group(bugs: list[Bug], seed: int, budget: float) -> dict[str, float | None]:
    """One run of the group's server; seconds from its start to each bug's first finding."""
    found: dict[str, float | None] = dict.fromkeys((bug.name for bug in bugs), None)
    phases = {"phases": bugs[0].phases} if bugs[0].phases else {}
    config = RunConfig(command=list(bugs[0].command), seed=seed, timeout=1.0, call_timeout=4.0, budget=budget,
                       oracles=tuple(all_oracles()), corpus=None, replay_corpus=False, **phases)

    async def main() -> None:
        started = time.perf_counter()
        with anyio.CancelScope() as scope:

            def listen(event: object) -> None:
                if not isinstance(event, FindingFound):
                    return
                for bug in bugs:
                    if found[bug.name] is None and bug.matches(event.finding):
                        found[bug.name] = time.perf_counter() - started
                if all(seconds is not None for seconds in found.values()):
                    scope.cancel()

            await run(config, listen)

    anyio.run(main)
    return found


def time_to_bugs(seeds: tuple[int, ...], budget: float, progress: Callable[[str], None]) -> list[BugTimes]:
    """Every planted bug's seconds to its finding, one run per server and seed."""
    rows: list[BugTimes] = []
    for group in planted_bugs():
        per_seed = []
        for seed in seeds:
            progress(f"time to bug: {group[0].name if len(group) == 1 else 'example server'}, seed {seed}")
            per_seed.append(time_group(group, seed, budget))
        rows += [BugTimes(bug.name, tuple(times[bug.name] for times in per_seed)) for bug in group]
    return rows


HEADER = f"{'bug':<44} {'median':>8} {'worst':>8}   seconds per seed (- not found)"
