"""The report files a run asked for (JSON, JUnit XML, SARIF, Markdown, HTML), written from one JSON report."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from mcpfuzz.engine.config import RunConfig
from mcpfuzz.engine.events import CheckpointSaved, Event, RunFinished
from mcpfuzz.report.html_report import write_html
from mcpfuzz.report.json_report import report_json, write_report_data
from mcpfuzz.report.junit import write_junit
from mcpfuzz.report.run_timeline import RunTimeline
from mcpfuzz.report.sarif import write_sarif
from mcpfuzz.report.summary_md import write_summary


@dataclass(frozen=True)
class ReportPaths:
    """Where each report goes; None for a report not asked for."""

    json: str | None = None
    junit: str | None = None
    sarif: str | None = None
    summary: str | None = None
    html: str | None = None


class ReportFiles:
    """Writes every report asked for at RunFinished, and at each soak checkpoint (a killed job still has them).

    A file that cannot be written is remembered in `problem` (the caller exits 2 after the run); at a
    checkpoint it is passed to `warn` once, and the soak goes on. With an HTML report asked for, every
    event also feeds the timeline its charts are drawn from.
    """

    def __init__(self, config: RunConfig, paths: ReportPaths, warn: Callable[[str], None] = lambda text: None,
                 *, events: bool = True) -> None:
        self.config = config
        self.paths = paths
        self.warn = warn
        self.problem = ""
        self._warned: set[str] = set()
        # `events=False`: only `write` is called (a shared store's merged report): the page has no timeline.
        self.events = events
        self.timeline: RunTimeline | None = RunTimeline() if paths.html and events else None

    def start(self) -> None:
        """Nothing to open: each write replaces the whole file atomically."""

    def handle(self, event: Event) -> None:
        """The final reports, or the reports so far at a checkpoint."""
        if self.timeline is not None:
            self.timeline.handle(event)
        if isinstance(event, RunFinished):
            self.problem = self.write(event)
        elif isinstance(event, CheckpointSaved):
            problem = self.write(event.finished)
            if problem and problem not in self._warned:
                self._warned.add(problem)
                self.warn(problem)

    def finish(self) -> None:
        """Nothing to close."""

    def write(self, finished: RunFinished) -> str:
        """Write every report asked for; what could not be written (the rest is then skipped), or ""."""
        if not any((self.paths.json, self.paths.junit, self.paths.sarif, self.paths.summary, self.paths.html)):
            return ""
        report = report_json(self.config, finished)
        oracles = self.config.oracles
        timeline = (self.timeline or RunTimeline()) if self.events else None
        writers: tuple[tuple[str, str | None, Callable[[Path], None]], ...] = (
            ("JSON report", self.paths.json, lambda p: write_report_data(p, report)),
            ("JUnit XML report", self.paths.junit, lambda p: write_junit(p, report, oracles)),
            ("SARIF report", self.paths.sarif, lambda p: write_sarif(p, report, oracles)),
            ("Markdown summary", self.paths.summary, lambda p: write_summary(p, report)),
            ("HTML report", self.paths.html, lambda p: write_html(p, report, timeline)))
        for what, path, write in writers:
            if not path:
                continue
            try:
                write(Path(path))
            except OSError as error:
                return f"cannot write the {what} to {path}: {error.strerror}"
        return ""
