"""CorpusWriter: a run's findings written to its corpus folder as they are found, and rewritten at the end."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from mcpfuzz.corpus.redact import Redactor
from mcpfuzz.corpus.store import CorpusError, CorpusStore
from mcpfuzz.engine.config import RunConfig
from mcpfuzz.engine.events import EventSink, Finding, Notice
from mcpfuzz.engine.transcripts import save_findings
from mcpfuzz.strategies.payloads.canaries import CanaryLayout
from mcpfuzz.transport.connect import ServerTarget


@dataclass
class CorpusWriter:
    """One transcript per finding; a folder that cannot be written is said once, never at every finding."""

    store: CorpusStore | None
    target: ServerTarget
    seed: int
    redactor: Redactor
    emit: EventSink
    where: str = ""
    saved: set[str] = field(default_factory=set)  # fingerprints this run has written
    written: set[Path] = field(default_factory=set)  # the transcripts this run wrote (not a regression to replay)
    problem: str = ""
    # What this run last wrote for each fingerprint (the transcript's text, its path): unchanged ones are not
    # written again at the end.
    last_written: dict[str, tuple[str, str]] = field(default_factory=dict)
    # --security: the folders the frames name; `target` then keeps `{workspace}` unexpanded, so a replay can put
    # a workspace of its own there.
    security: CanaryLayout | None = None

    @classmethod
    def open(cls, config: RunConfig, redactor: Redactor, emit: EventSink) -> CorpusWriter:
        """The run's corpus folder (`--corpus`), or none; a folder that cannot be used is said and left out."""
        store = None
        if config.corpus is not None:
            try:
                store = CorpusStore(config.corpus)
            except CorpusError as error:
                emit(Notice(f"{error}; running without a corpus", level="error"))
        return cls(store, config.target, config.seed, redactor, emit, str(config.corpus))

    def save(self, findings: tuple[Finding, ...]) -> dict[str, str]:
        """Write (or rewrite) each finding's transcript; the paths by fingerprint."""
        if self.store is None or not findings:
            return {}
        try:
            paths = save_findings(self.store, list(findings), command=self.target, seed=self.seed,
                                  redactor=self.redactor, counted=self.saved,
                                  security=self.security, written=self.last_written)
            self.written.update(Path(path).resolve() for path in paths.values())
            return paths
        except (OSError, CorpusError) as error:
            text = f"the corpus could not be written to {self.where}: {error}"
            if text != self.problem:
                self.problem = text
                self.emit(Notice(text, level="error"))
            return {}
