"""The console reporter: live progress on a terminal, plain lines otherwise, findings and a summary."""

from __future__ import annotations

import shlex
from collections import Counter

from rich.console import Console
from rich.markup import escape
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TaskID, TextColumn, TimeElapsedColumn

from mcpfuzz.engine.config import RunConfig
from mcpfuzz.engine.events import (
    CaseDone,
    CheckpointSaved,
    Event,
    Finding,
    FindingFound,
    Notice,
    PhaseStarted,
    ProbeDone,
    RunFinished,
    RunStarted,
    TargetsPlanned,
)
from mcpfuzz.oracles.base import Severity
from mcpfuzz.report.json_report import rerun_command
from mcpfuzz.report.reproduce import reproduction

SEVERITY_STYLE = {Severity.CRITICAL: "bold red", Severity.HIGH: "red", Severity.MEDIUM: "yellow",
                  Severity.LOW: "cyan"}


MAX_SKIPPED_LINES = 20  # a server may list thousands of tools: the header stays readable


class ConsoleReporter:
    """The event handler that writes the run for a person: live progress, findings, the summary (stdout by default)."""

    def __init__(self, config: RunConfig, console: Console | None = None, *, verbose: bool = False) -> None:
        self.config = config
        # soft_wrap: long reproductions stay one copy-pasteable line, also when piped to a file.
        self.console = console or Console(highlight=False, soft_wrap=True)
        self.verbose = verbose
        self._progress: Progress | None = None
        self._task: TaskID | None = None
        self._live = self.console.is_terminal

    def start(self) -> None:
        """Nothing is printed before RunStarted."""

    def handle(self, event: Event) -> None:
        """Print what the event tells (by its type: `_on_<EventName>`); other events print nothing."""
        handler = getattr(self, "_on_" + type(event).__name__, None)
        if handler is not None:
            handler(event)

    def finish(self) -> None:
        """Leave the terminal clean when the run ends early (a progress bar still drawn)."""
        self._stop_progress()

    def _on_RunStarted(self, event: RunStarted) -> None:
        from mcpfuzz import __version__

        self.console.print(f"[bold]mcpfuzz {__version__}[/] · server: {escape(event.server)}")
        self.console.print(f"seed {event.seed} · budget {event.budget:g}s · timeout {event.timeout:g}s · "
                           f"{len(event.oracles)} oracles", style="dim")

    def _on_ProbeDone(self, event: ProbeDone) -> None:
        info = event.server_info or {}
        name = f"{info.get('name', '?')} {info.get('version', '')}".strip()
        tools = ", ".join(event.tools[:8]) + (f" (+{len(event.tools) - 8})" if len(event.tools) > 8 else "")
        self.console.print(f"probe: [bold]{event.era}[/] era, protocol {event.protocol_version}, "
                           f"server {escape(name)}, {len(event.tools)} tools" + (f": {escape(tools)}" if tools else ""))

    def _on_TargetsPlanned(self, event: TargetsPlanned) -> None:
        kinds = {label.partition("/")[0] for label in (*event.fuzzed, *(label for label, _ in event.skipped))}
        for kind in sorted(kinds or {"tool"}):
            names = [label.partition("/")[2] for label in event.fuzzed if label.partition("/")[0] == kind]
            self.console.print(f"{kind}s: {len(names)} to call" + (f": {escape(', '.join(names[:10]))}"
                                                                   if names else ""))
            skipped = [(label.partition("/")[2], reason) for label, reason in event.skipped
                       if label.partition("/")[0] == kind]
            for name, reason in skipped[:MAX_SKIPPED_LINES]:
                self.console.print(f"  skipped {escape(name)}: {escape(reason)}", style="yellow")
            if len(skipped) > MAX_SKIPPED_LINES:
                self.console.print(f"  ... and {len(skipped) - MAX_SKIPPED_LINES} more skipped", style="yellow")

    def _on_PhaseStarted(self, event: PhaseStarted) -> None:
        self._stop_progress()
        if event.total is None:
            if event.detail:
                self.console.print(f"{event.name}: {escape(event.detail)}")
            return
        if self._live:
            self._progress = Progress(TextColumn("{task.description:<10}"), BarColumn(), MofNCompleteColumn(),
                                      TimeElapsedColumn(), TextColumn("{task.fields[found]}"),
                                      console=self.console, transient=True)
            self._progress.start()
            self._task = self._progress.add_task(event.name, total=event.total, found="")
        else:
            self.console.print(f"{event.name}: {event.total} cases")

    def _on_CaseDone(self, event: CaseDone) -> None:
        if self._progress is not None and self._task is not None:
            self._progress.advance(self._task)

    def _on_FindingFound(self, event: FindingFound) -> None:
        finding = event.finding
        style = SEVERITY_STYLE[finding.severity]
        self.console.print(f"  [{style}]{finding.severity}[/] {finding.oracle} · {escape(finding.target)}: "
                           f"{escape(_first_line(finding.message))}")

    def _on_Notice(self, event: Notice) -> None:
        self.console.print(f"[yellow]{event.level}:[/] {escape(event.message)}")

    def _on_CheckpointSaved(self, event: CheckpointSaved) -> None:
        """A soak's progress line, once per checkpoint."""
        finished = event.finished
        stats = finished.stats
        new = sum(1 for f in finished.findings if not f.known)
        parts = [f"{_clock(stats.duration)}", f"{stats.cases:,} cases", f"{stats.frames_sent:,} frames",
                 f"{len(finished.findings)} findings ({new} new)", f"{stats.restarts} restarts"]
        resources = stats.resources or {}
        server_rss = (resources.get("server_rss_mb") or {}).get("last")
        own_rss = (resources.get("mcpfuzz_rss_mb") or {}).get("last")
        if server_rss is not None:
            parts.append(f"server RSS {server_rss:g} MB")
        if own_rss is not None:
            parts.append(f"mcpfuzz RSS {own_rss:g} MB")
        self._stop_progress()
        self.console.print(f"checkpoint: {' · '.join(parts)} → {escape(event.path)}", style="dim")

    def _on_RunFinished(self, event: RunFinished) -> None:
        self._stop_progress()
        if event.error:
            self.console.print(f"[bold red]error:[/] {escape(event.error)}")
        findings = sorted(event.findings, key=lambda f: -f.severity)
        if findings:
            self.console.rule("findings")
            for number, finding in enumerate(findings, 1):
                self._print_finding(number, finding, event.corpus_paths.get(finding.fingerprint))
        self._print_summary(event)

    def _print_finding(self, number: int, finding: Finding, corpus_path: str | None = None) -> None:
        style = SEVERITY_STYLE[finding.severity]
        self.console.print(f"\n[bold]{number}.[/] [{style}]{finding.severity.name}[/] [bold]{finding.oracle}[/] "
                           f"on {escape(finding.target)} ({escape(finding.case_title)})")
        self.console.print(f"   {escape(finding.message)}")
        if finding.reproducible is False:
            self.console.print("   not reproducible: it did not fail again when re-run on a fresh server "
                               "(timing or state); the transcript keeps what was observed", style="yellow")
        self.console.print(f"   expected: {escape(finding.expected)}", style="dim")
        if finding.observed:
            for line in finding.received[:3]:
                self.console.print(f"   saw:      {escape(line[:300])}")
            if finding.rule:  # a lint problem: what the server declares, shown again by `mcpfuzz lint`
                self.console.print(f"   reproduce: {escape(rerun_command(self.config.target, 'lint'))}", style="dim")
                return
            self.console.print(f"   reproduce: run mcpfuzz on this server again (--seed {self.config.seed}); this "
                               "shows over many requests, so no single frame replays it", style="dim")
            return
        frame = finding.frames[-1] if finding.frames else b""
        self.console.print(f"   sent:     {escape(_show_frame(frame))}")
        for line in finding.received[:3]:
            self.console.print(f"   got:      {escape(line[:300])}")
        command, notes = reproduction(self.config.target, finding.frames)
        self.console.print("   reproduce:", style="dim")
        self.console.print(f"     {escape(command)}", soft_wrap=True)
        for note in notes:
            self.console.print(f"     ({escape(note)})", style="dim")
        if corpus_path:
            self.console.print(f"     mcpfuzz replay {escape(shlex.quote(corpus_path))}")

    def _print_summary(self, event: RunFinished) -> None:
        counts = Counter(f.severity for f in event.findings)
        failing = sum(n for s, n in counts.items() if s >= self.config.fail_on)
        stats = event.stats
        self.console.rule("summary")
        parts = [f"{counts.get(s, 0)} {s}" for s in sorted(Severity, reverse=True)]
        self.console.print(f"{len(event.findings)} findings ({', '.join(parts)}) · {stats.cases} cases "
                           f"({stats.tool_calls} tool calls) · "
                           f"{stats.frames_sent} frames · {stats.restarts} restarts · {stats.duration:.1f}s · "
                           f"seed {self.config.seed}")
        if event.protocol_version:
            self.console.print(f"protocol {event.protocol_version} ({event.era} era)", style="dim")
        if event.corpus_paths and self.config.corpus is not None:
            self.console.print(f"corpus: {len(event.corpus_paths)} transcripts in {self.config.corpus} "
                               f"(mcpfuzz replay {shlex.quote(str(self.config.corpus))})", style="dim")
        if event.stopped:
            self.console.print(f"stopped early: {event.stopped}", style="yellow")
        if event.error:
            self.console.print("[bold red]ERROR[/]: the server could not be tested")
        elif failing:
            self.console.print(f"[bold red]FAILED[/]: {failing} findings at or above {self.config.fail_on}")
        elif event.stopped:
            self.console.print(f"[bold yellow]INCOMPLETE[/]: no findings at or above {self.config.fail_on} in the "
                               "part that ran")
        else:
            self.console.print(f"[bold green]PASSED[/]: no findings at or above {self.config.fail_on}")

    def _stop_progress(self) -> None:
        if self._progress is not None:
            self._progress.stop()
            self._progress = None
            self._task = None


def _clock(seconds: float) -> str:
    """1h02m03s, 2m05s or 7s."""
    whole = int(seconds)
    hours, rest = divmod(whole, 3600)
    minutes, secs = divmod(rest, 60)
    if hours:
        return f"{hours}h{minutes:02d}m{secs:02d}s"
    return f"{minutes}m{secs:02d}s" if minutes else f"{secs}s"


def _first_line(text: str) -> str:
    return text.splitlines()[0] if text else ""


def _show_frame(frame: bytes, limit: int = 240) -> str:
    text = frame.decode("utf-8", "backslashreplace")
    return text if len(text) <= limit else f"{text[:limit]}... ({len(frame)} bytes)"
