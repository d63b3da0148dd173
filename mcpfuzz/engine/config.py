"""The options of a run, validated before anything starts."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from mcpfuzz.oracles.base import Severity

PHASES = ("probe", "catalogue", "lifecycle", "coverage", "fuzz", "stateful")
TOOL_PHASES = ("coverage", "fuzz", "stateful")


@dataclass
class RunConfig:
    """Everything `mcpfuzz run` was asked to do."""

    command: list[str]
    seed: int = 0
    budget: float = 60.0
    timeout: float = 5.0
    grace: float = 0.25
    oracles: tuple[str, ...] = ()
    fail_on: Severity = Severity.MEDIUM
    protocol_version: str | None = None
    phases: tuple[str, ...] = PHASES
    max_line: int = 8 * 1024 * 1024
    env: dict[str, str] = field(default_factory=dict)
    include_tools: tuple[str, ...] = ()
    exclude_tools: tuple[str, ...] = ()
    strict_types: bool = False
    corpus: Path | None = None
    replay_corpus: bool = True
    log_frames: Path | None = None
    max_examples: int | None = None

    @property
    def database_root(self) -> Path | None:
        """Where Hypothesis keeps its example database: under the corpus folder."""
        return self.corpus / ".hypothesis" if self.corpus is not None else None

    @property
    def server_label(self) -> str:
        """The server as a shell command line."""
        import shlex

        return shlex.join(self.command)
