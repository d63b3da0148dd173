"""The peer tools: installed into their own virtual environments on request, run against our server.

Each peer is run twice on the same server command, behind the counting wrapper:
- timed: counts scaled to the wall time so that it does not finish before it, stopped after the same
  wall time as mcpfuzz; the frames that reached the server in that time are its speed (neither peer
  has a time budget for the whole run, and neither writes a report when interrupted);
- default: its default settings with a fixed seed, run to the end; the findings of its report on
  a clean server are false positives.
"""

from __future__ import annotations

import json
import shlex
import subprocess
import sys
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

from tool_runs import ToolRun, run_tool, served

INSTALL_TIMEOUT = 900  # seconds for one pip install on a slow shared machine
DEFAULT_RUN_CAP = 300.0  # a default run that has not ended by then is stopped (and has no findings count)
# Counts for the timed runs, per second of the run: out of reach within it (both tools are stopped at
# the cap), yet small enough to cover several tools and, for mcp-fuzzer, its protocol phase too. Far
# larger counts distort them: mcp-fuzzer creates every run's task up front (1,000,000 runs cost
# 400 MB and most of a 10 s run).
TOOLPROOF_EXAMPLES_PER_SECOND = 30
MCP_FUZZER_RUNS_PER_SECOND = 100


@dataclass(frozen=True)
class PeerResult:
    """A peer's two runs, or why there are none."""

    name: str
    timed: ToolRun | None = None
    default: ToolRun | None = None
    findings: int | None = None
    detail: str = ""
    error: str = ""


class Peer:
    """A peer tool: how to install it, start it and read its findings."""

    name = ""
    requirements: tuple[str, ...] = ()

    def timed_argv(self, venv: Path, server: list[str], seconds: float, workdir: Path) -> list[str]:
        """Command line of the timed run."""
        raise NotImplementedError

    def default_argv(self, venv: Path, server: list[str], workdir: Path) -> list[str]:
        """Command line of the default run (it must write a report into `workdir`)."""
        raise NotImplementedError

    def findings(self, workdir: Path) -> tuple[int, str]:
        """Findings count of the default run's report, and a summary by kind."""
        raise NotImplementedError


class Toolproof(Peer):
    """mcp-toolproof: Hypothesis and hypothesis-jsonschema through the official `mcp` SDK client."""

    name = "mcp-toolproof"
    # hypothesis-jsonschema 0.23.1 breaks on object schemas with hypothesis >= 6.170.10: pin below.
    requirements = ("mcp-toolproof==0.3.1", "hypothesis==6.170.9")

    def timed_argv(self, venv: Path, server: list[str], seconds: float, workdir: Path) -> list[str]:
        """--examples is per tool and mode; --max-time (per tool) stops calls but not drawing, so it is out of reach."""
        examples = max(50, int(TOOLPROOF_EXAMPLES_PER_SECOND * seconds))
        return [str(venv / "bin" / "toolproof"), "fuzz", "--seed", "1", "--examples", str(examples), "--max-time",
                f"{seconds * 10:g}", "--timeout-ms", "5000", "--", *server]

    def default_argv(self, venv: Path, server: list[str], workdir: Path) -> list[str]:
        """Its defaults: 50 examples per tool, valid and invalid."""
        return [str(venv / "bin" / "toolproof"), "fuzz", "--seed", "1", "--json", str(workdir / "report.json"),
                "--", *server]

    def findings(self, workdir: Path) -> tuple[int, str]:
        """`summary.fuzz_findings`, by kind."""
        report = json.loads((workdir / "report.json").read_text())
        kinds = Counter(finding.get("kind", "?") for tool in report["fuzz"]["tools"]
                        for finding in tool.get("findings", []))
        return int(report["summary"]["fuzz_findings"]), _by_kind(kinds)


class McpFuzzer(Peer):
    """mcp-fuzzer: its own JSON-RPC client; tool and protocol fuzzing."""

    name = "mcp-fuzzer"
    requirements = ("mcp-fuzzer==0.7.0",)

    def _argv(self, venv: Path, server: list[str], workdir: Path) -> list[str]:
        # --endpoint is one command string for stdio; its sandbox and reports stay in the run's folder.
        return [str(venv / "bin" / "mcp-fuzzer"), "--mode", "all", "--protocol", "stdio", "--endpoint",
                shlex.join(server), "--seed", "1", "--timeout", "5", "--fs-root", str(workdir / "fs"),
                "--output-dir", str(workdir / "reports")]

    def timed_argv(self, venv: Path, server: list[str], seconds: float, workdir: Path) -> list[str]:
        """--runs (per tool) and --runs-per-type raised with the time; it has no time option."""
        runs = str(max(100, int(MCP_FUZZER_RUNS_PER_SECOND * seconds)))
        return [*self._argv(venv, server, workdir), "--runs", runs, "--runs-per-type", runs]

    def default_argv(self, venv: Path, server: list[str], workdir: Path) -> list[str]:
        """Its defaults: --mode all, 10 runs per tool, 5 per protocol type, aggressive."""
        return self._argv(venv, server, workdir)

    def findings(self, workdir: Path) -> tuple[int, str]:
        """`findings.json` count, by category."""
        report = json.loads((workdir / "reports" / "findings.json").read_text())
        kinds = Counter(finding.get("category", "?") for finding in report["findings"])
        return int(report["count"]), _by_kind(kinds)


PEERS: tuple[Peer, ...] = (Toolproof(), McpFuzzer())


def _by_kind(kinds: Counter[str]) -> str:
    return ", ".join(f"{kind} {count}" for kind, count in kinds.most_common())


def _tail(text: str, lines: int = 6) -> str:
    return "\n".join(text.strip().splitlines()[-lines:])


def _installed(python: Path, requirements: tuple[str, ...]) -> bool:
    """True when every pinned requirement is installed at its version in that environment."""
    pins = dict(requirement.split("==") for requirement in requirements)
    script = ("import importlib.metadata as m, json, sys\n"
              "out = {}\n"
              "for name in json.loads(sys.argv[1]):\n"
              "    try: out[name] = m.version(name)\n"
              "    except m.PackageNotFoundError: out[name] = None\n"
              "print(json.dumps(out))")
    try:
        found = subprocess.run([str(python), "-c", script, json.dumps(list(pins))], capture_output=True,
                               text=True, timeout=60, check=True)
        return json.loads(found.stdout) == pins
    except (OSError, subprocess.SubprocessError, ValueError):
        return False


def ensure_installed(peer: Peer, root: Path) -> tuple[Path | None, str]:
    """The peer's venv under `root` (created and filled with pip when missing or stale), or why not."""
    venv = root / peer.name
    python = venv / "bin" / "python"
    if python.exists() and _installed(python, peer.requirements):
        return venv, ""
    steps = [[sys.executable, "-m", "venv", "--clear", str(venv)],
             [str(python), "-m", "pip", "install", "--quiet", "--disable-pip-version-check", *peer.requirements]]
    for step in steps:
        try:
            done = subprocess.run(step, capture_output=True, text=True, timeout=INSTALL_TIMEOUT)
        except (OSError, subprocess.TimeoutExpired) as error:
            return None, f"{shlex.join(step)}: {error}"
        if done.returncode != 0:
            return None, f"{shlex.join(step)} failed (exit {done.returncode}):\n{_tail(done.stderr)}"
    return venv, ""


def run_peer(peer: Peer, root: Path, server: list[str], seconds: float, workdir: Path) -> PeerResult:
    """Install if needed, then the timed run and the default run; every failure ends as a reason."""
    venv, error = ensure_installed(peer, root)
    if venv is None:
        return PeerResult(peer.name, error=f"not installed: {error}")
    timed_dir, default_dir = workdir / "timed", workdir / "default"
    timed_dir.mkdir(parents=True)
    default_dir.mkdir(parents=True)
    timed = run_tool(peer.timed_argv(venv, served(timed_dir / "counts", server), seconds, timed_dir),
                     timed_dir / "counts", seconds, timed_dir)
    if timed.frames == 0:
        return PeerResult(peer.name, timed, error=f"no frame reached the server (exit {timed.exit_code}):\n"
                                                   f"{_tail(timed.log.read_text(errors='replace'))}")
    default = run_tool(peer.default_argv(venv, served(default_dir / "counts", server), default_dir),
                       default_dir / "counts", DEFAULT_RUN_CAP, default_dir)
    try:
        count, detail = peer.findings(default_dir)
    except (OSError, ValueError, KeyError, TypeError) as problem:
        return PeerResult(peer.name, timed, default, error=f"no findings report from the default run "
                                                           f"(exit {default.exit_code}): {problem}")
    return PeerResult(peer.name, timed, default, count, detail)
