"""The console reporter: live progress on a terminal, plain lines otherwise, findings and a summary."""

from __future__ import annotations

import shlex
from collections import Counter

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TaskID, TextColumn, TimeElapsedColumn
from rich.text import Text

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
    StackFound,
    TargetsPlanned,
)
from mcpfuzz.engine.judge import counts_toward_fail_on, is_note
from mcpfuzz.engine.plan.verdict import left_out_words
from mcpfuzz.oracles.base import Severity
from mcpfuzz.report.banner import Banner
from mcpfuzz.report.coverage_summary import coverage_line
from mcpfuzz.report.finding_console import SEVERITY_STYLE, FindingPrinter, Verbosity, message_head
from mcpfuzz.report.plural import counted, restarts_said
from mcpfuzz.report.terminal_text import escape
from mcpfuzz.report.time_split import never_called, time_split
from mcpfuzz.report.triage import causes

MAX_SKIPPED_LINES = 20  # a server may list thousands of tools: the header stays readable
MAX_TARGET_ROWS = 12  # targets in the summary's table (all of them with -v)
# Findings printed in full at the default verbosity; the rest are their lines under "causes" (all of them with -v,
# and in every report file): a run that found a thousand things still ends with a readable screen, at once.
MAX_FULL_FINDINGS = 25


SECURITY_OFF = "security oracles off (sandbox-escape, command-injection; --security turns them on)"
SECURITY_ON = "security oracles on: sandbox-escape, command-injection (a temporary workspace with canaries)"

class ConsoleReporter:
    """The event handler that writes the run for a person: live progress, findings, the summary (stdout by default)."""

    def __init__(self, config: RunConfig, console: Console | None = None, *, verbosity: Verbosity = Verbosity.NORMAL,
                 program: str = "mcpfuzz", shown: Banner | None = None) -> None:
        self.config = config
        self.shown = shown  # the banner the command line wrote before the run began: not printed again
        self.program = program  # how mcpfuzz was started: printed commands must work when pasted
        # soft_wrap: long reproductions stay one copy-pasteable line, also when piped to a file.
        # No emoji codes: `template:notes://...` must not print a musical note.
        self.console = console or Console(highlight=False, soft_wrap=True, emoji=False)
        # Errors go to stderr, apart from the run's account (which `--events -` moves to stderr as well).
        self.errors = Console(highlight=False, soft_wrap=True, emoji=False, stderr=True)
        self.verbosity = verbosity
        self.findings = FindingPrinter(self.console, config.target, program, config.seed, verbosity)
        self._progress: Progress | None = None
        self._task: TaskID | None = None
        self._live = self.console.is_terminal and verbosity is not Verbosity.QUIET
        self._calls: Counter[str] = Counter()  # cases per call target (`tool/NAME`), for the summary's table
        self._call_targets: tuple[str, ...] = ()
        self._risky: tuple[tuple[str, str], ...] = ()  # targets left out for their risk hints, with the hint
        self._found = 0
        self._phase_started = 0.0
        self._phase_seconds: float | None = None
        self._phase_cases = 0

    def start(self) -> None:
        """Nothing is printed before RunStarted (the command line may have written the banner already)."""

    def handle(self, event: Event) -> None:
        """Print what the event tells (by its type: `_on_<EventName>`); other events print nothing."""
        handler = getattr(self, "_on_" + type(event).__name__, None)
        if handler is not None:
            handler(event)

    def finish(self) -> None:
        """Leave the terminal clean when the run ends early (a progress bar still drawn)."""
        self._stop_progress()

    def _on_RunStarted(self, event: RunStarted) -> None:
        banner = Banner(event.server, event.seed, event.budget, event.timeout, len(event.oracles))
        if banner != self.shown:
            for line in banner.lines():
                self.console.print(Text.assemble(*line))

    def _say(self, text: str, style: str | None = None) -> None:
        """A line of the run's progress: kept to a terminal's scrollback, left out with -q."""
        if self.verbosity is not Verbosity.QUIET:
            self.console.print(text, style=style)

    def _on_ProbeDone(self, event: ProbeDone) -> None:
        info = event.server_info or {}
        name = f"{info.get('name', '?')} {info.get('version', '')}".strip()
        tools = ", ".join(event.tools[:8]) + (f" (+{len(event.tools) - 8})" if len(event.tools) > 8 else "")
        started = f", startup {event.startup:.1f}s" if event.startup is not None else ""
        self._say(f"probe: [bold]{event.era}[/] era, protocol {event.protocol_version}, "
                  f"server {escape(name)}{started}, {counted(len(event.tools), 'tool')}"
                  + (f": {escape(tools)}" if tools else ""))

    def _on_TargetsPlanned(self, event: TargetsPlanned) -> None:
        self._call_targets = event.fuzzed
        kinds = {label.partition("/")[0] for label in (*event.fuzzed, *(label for label, _ in event.skipped))}
        for kind in sorted(kinds or {"tool"}):
            names = [label.partition("/")[2] for label in event.fuzzed if label.partition("/")[0] == kind]
            more = f" (+{len(names) - 10})" if len(names) > 10 else ""
            self.console.print(f"{kind}s: {len(names)} to call"
                               + (f": {escape(', '.join(names[:10]))}{more}" if names else ""))
            skipped = [(label.partition("/")[2], reason) for label, reason in event.skipped
                       if label.partition("/")[0] == kind]
            risky = [(label, hint) for label, hint in event.risky if label.partition("/")[0] == kind]
            if self.verbosity is Verbosity.QUIET:
                if len(skipped) > len(risky):
                    self.console.print(f"  {counted(len(skipped) - len(risky), kind)} skipped (the default output "
                                       "says why)", style="yellow")
                if risky:
                    self.console.print(f"  {counted(len(risky), kind)} skipped for the server's risk hints: "
                                       f"{escape(left_out_words(risky))}", style="yellow")
                continue
            for name, reason in skipped[:MAX_SKIPPED_LINES]:
                self.console.print(f"  skipped {escape(name)}: {escape(reason)}", style="yellow")
            if len(skipped) > MAX_SKIPPED_LINES:
                self.console.print(f"  ... and {len(skipped) - MAX_SKIPPED_LINES} more skipped", style="yellow")
        self._risky = event.risky
        if event.risky:
            nothing = "" if event.fuzzed else "nothing will be called: the targets left are all annotated as risky; "
            self.console.print(f"{nothing}mcpfuzz leaves out targets annotated destructiveHint or openWorldHint "
                               "(--include-tool NAME calls one)", style="yellow")

    def _on_PhaseStarted(self, event: PhaseStarted) -> None:
        self._stop_progress()
        self._phase_started, self._phase_seconds, self._phase_cases = event.timestamp, event.seconds, 0
        if event.total is None:
            if event.detail:
                self._say(f"{event.name}: {escape(event.detail)}")
            if self._live and event.seconds:
                # A timed phase: what it is doing now, how fast, how long it has left, what it found.
                self._progress = Progress(TextColumn("{task.description:<10}"), TextColumn("{task.fields[status]}"),
                                          console=self.console, transient=True)
                self._progress.start()
                self._task = self._progress.add_task(event.name, total=None, status="starting")
            return
        if self._live:
            self._progress = Progress(TextColumn("{task.description:<10}"), BarColumn(), MofNCompleteColumn(),
                                      TimeElapsedColumn(), TextColumn("{task.fields[found]}"),
                                      console=self.console, transient=True)
            self._progress.start()
            self._task = self._progress.add_task(event.name, total=event.total, found="")
        else:
            self._say(f"{event.name}: {counted(event.total, 'case')}")

    def _on_CaseDone(self, event: CaseDone) -> None:
        target = event.exchange.case.target
        if target in self._call_targets:
            self._calls[target] += 1
        self._phase_cases += 1
        if self._progress is None or self._task is None:
            return
        if self._phase_seconds is None:
            self._progress.advance(self._task)
            return
        elapsed = max(event.timestamp - self._phase_started, 1e-3)
        left = max(0.0, self._phase_seconds - elapsed)
        self._progress.update(self._task, status=f"{counted(self._phase_cases, 'case', grouped=True)} · "
                              f"{self._phase_cases / elapsed:.0f}/s · {escape(target)} · {left:.0f}s left · "
                              f"{counted(self._found, 'finding')} so far")

    def _on_FindingFound(self, event: FindingFound) -> None:
        self._found += 1
        finding = event.finding
        style = SEVERITY_STYLE[finding.severity]
        self._say(f"  [{style}]{finding.severity}[/] {finding.oracle} · {escape(finding.target)}: "
                  f"{escape(message_head(finding))}")

    def _on_StackFound(self, event: StackFound) -> None:
        self._say(f"stack: {escape(event.summary)}")

    def _on_Notice(self, event: Notice) -> None:
        line = f"[yellow]{event.level}:[/] {escape(event.message)}"
        if event.level == "info":
            self._say(line)  # remarks; warnings and errors are shown even with -q
        elif event.level == "error":
            self.errors.print(line)
        else:
            self.console.print(line)

    def _on_CheckpointSaved(self, event: CheckpointSaved) -> None:
        """A soak's progress line, once per checkpoint."""
        finished = event.finished
        stats = finished.stats
        new = sum(1 for f in finished.findings if not f.known)
        parts = [f"{_clock(stats.duration)}", counted(stats.cases, "case", grouped=True),
                 counted(stats.frames_sent, "frame", grouped=True),
                 f"{counted(len(finished.findings), 'finding')} ({new} new)", counted(stats.restarts, "restart")]
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
            self.errors.print(f"[bold red]error:[/] {escape(event.error)}")
            if not event.findings and not event.stats.cases:
                # Nothing was tested: a summary of zeros would read like a result.
                self.errors.print("[bold red]ERROR[/]: the server could not be tested")
                return
        # The server's own findings first; those its SDK ships apart, so the author sees at once what is theirs;
        # last the notes: findings that did not fail again on a fresh server, listed at no severity.
        judged = [f for f in event.findings if not is_note(f)]
        own = sorted((f for f in judged if f.upstream is None), key=lambda f: -f.severity)
        inherited = sorted((f for f in judged if f.upstream is not None), key=lambda f: -f.severity)
        notes = [f for f in event.findings if is_note(f)]
        self._print_causes([*own, *inherited, *notes])
        number = 0
        shown = len(event.findings) if self.verbosity is not Verbosity.NORMAL else MAX_FULL_FINDINGS
        for title, group in (("findings", own), ("from the SDK the server is built on", inherited),
                             ("notes: did not fail again on a fresh server", notes)):
            group = group[:max(0, shown - number)]
            if group:
                self.console.rule(title)
            for finding in group:
                number += 1
                self.findings.full(number, finding, event.corpus_paths.get(finding.fingerprint))
        if number < len(event.findings):
            self.console.print(f"\n{counted(len(event.findings) - number, 'more finding')}, each a line under "
                               "\"causes\" above: -v prints every one in full, as every report file holds it",
                               style="dim")
        self._print_summary(event)

    def _print_causes(self, findings: list[Finding]) -> None:
        """One line per root cause, numbered as the findings below (-q lists each finding in one line already)."""
        if len(findings) < 2 or self.verbosity is Verbosity.QUIET:
            return
        self.console.rule("causes")
        lines = []
        for cause in causes(findings):
            style = "dim" if cause.severity == "note" else SEVERITY_STYLE[Severity.parse(cause.severity)]
            lines.append(f"{cause.number}. [{style}]{escape(cause.describe())}[/]")
        self.console.print("\n".join(lines), soft_wrap=True)  # one print: a thousand causes print at once

    def _print_summary(self, event: RunFinished) -> None:
        counts = Counter(f.severity for f in event.findings if not is_note(f))
        notes = sum(1 for f in event.findings if is_note(f))
        failing = sum(1 for f in event.findings if counts_toward_fail_on(f, self.config.fail_on))
        accepted = sum(1 for f in event.findings if f.baselined)
        stats = event.stats
        self.console.rule("summary")
        self._print_targets(event)
        parts = [f"{counts.get(s, 0)} {s}" for s in sorted(Severity, reverse=True)]
        noted = f" · {counted(notes, 'note')} (did not fail again on a fresh server)" if notes else ""
        self.console.print(f"{counted(len(event.findings) - notes, 'finding')} ({', '.join(parts)}){noted} · "
                           f"{counted(stats.cases, 'case')} ({counted(stats.tool_calls, 'tool call')}) · "
                           f"{counted(stats.frames_sent, 'frame')} · "
                           f"{restarts_said(stats.restarts, stats.planned_restarts)} · "
                           f"{stats.duration:.1f}s · seed {self.config.seed}")
        if event.protocol_version:
            self.console.print(f"protocol {event.protocol_version} ({event.era} era)", style="dim")
        self.console.print(SECURITY_ON if self.config.security else SECURITY_OFF, style="dim")
        split = time_split(stats)
        if split:
            self.console.print(f"time: {split}", style="dim")
        reached = coverage_line(stats.coverage)
        if reached:
            self.console.print(escape(reached), style="dim")
        never = never_called(stats)
        if never and not event.untested:
            self.console.print(f"{escape(never)} (raise --budget to call them)", style="yellow")
        if self._risky and not event.untested:
            self.console.print(f"left out for their risk hints: {escape(left_out_words(self._risky))} "
                               "(--include-tool NAME calls one)", style="yellow")
        if event.corpus_paths and self.config.corpus is not None:
            self.console.print(f"corpus: {counted(len(event.corpus_paths), 'transcript')} in {self.config.corpus} "
                               f"({escape(self.program)} replay {shlex.quote(str(self.config.corpus))})", style="dim")
        if event.stopped:
            self.console.print(f"stopped early: {event.stopped}", style="yellow")
        places = sum(max(f.occurrence_count, 1) for f in event.findings)
        if places > len(event.findings) and self.verbosity is not Verbosity.QUIET:
            targets = len({t for f in event.findings for t in (f.target, *f.also_on)})
            self.console.print(f"one finding per root cause: {counted(len(event.findings), 'cause')} seen "
                               f"{places:,} times on {counted(targets, 'target')}", style="dim")
        inherited = sum(1 for f in event.findings if f.upstream is not None)
        if inherited:
            known = "is a known behaviour" if inherited == 1 else "are known behaviours"
            self.console.print(f"{inherited} of the findings {known} of the server's SDK (marked, "
                               "with upstream links); they still count", style="dim")
        if accepted:
            self.console.print(f"{counted(accepted, 'finding')} accepted in the baseline (reported, not failing)",
                               style="dim")
        for entry in event.stale_baseline:
            self.console.print(f"[bold red]stale baseline entry[/]: {escape(entry)} no longer reproduces; remove it "
                               "from the baseline file (or write it again with `mcpfuzz baseline`)")
        self._print_internal_errors(event)
        if event.error:
            self.errors.print("[bold red]ERROR[/]: the server could not be tested")
        elif failing or event.stale_baseline:
            stale = f" and {counted(len(event.stale_baseline), 'stale baseline entry')}" if event.stale_baseline else ""
            self.console.print(f"[bold red]FAILED[/]: {counted(failing, 'finding')} at or above "
                               f"{self.config.fail_on}{stale}")
            if event.untested:
                self.console.print(f"[bold yellow]and not fully tested[/]: {escape(event.untested)}")
        elif event.untested:
            self.console.print(f"[bold red]UNTESTED[/]: {escape(event.untested)}")
        elif event.stopped:
            self.console.print(f"[bold yellow]INCOMPLETE[/]: no findings at or above {self.config.fail_on} in the "
                               "part that ran")
        else:
            self.console.print(f"[bold green]PASSED[/]: no findings at or above {self.config.fail_on}")

    def _print_internal_errors(self, event: RunFinished) -> None:
        """One line per distinct error of mcpfuzz's own (each ended one case; the run went on)."""
        if not event.internal_errors:
            return
        self.errors.print(f"[bold yellow]{counted(event.stats.internal_errors, 'case')} ended on an internal error "
                          "of mcpfuzz[/] (skipped, the run went on); please report it with the command line:")
        for error in event.internal_errors:
            self.errors.print(f"  internal-error: {escape(error.describe())}", soft_wrap=True)

    def _print_targets(self, event: RunFinished) -> None:
        """A line per call target: how often it was called and what was found on it (-q leaves it out)."""
        if not self._call_targets or self.verbosity is Verbosity.QUIET:
            return
        found = Counter(f.target for f in event.findings)
        # With --workers the cases stay inside the workers: their summed counters tell the calls instead.
        calls = self._calls if self._calls else Counter(event.stats.targets)
        width = min(max(len(label) for label in self._call_targets), 40)
        shown = self._call_targets if self.verbosity is Verbosity.VERBOSE else self._call_targets[:MAX_TARGET_ROWS]
        for label in shown:
            called = "call " if calls[label] == 1 else "calls"  # padded: the counts stay in one column
            self.console.print(f"  {escape(label[:width]):<{width}}  {calls[label]:>6,} {called}  "
                               f"{counted(found[label], 'finding')}", style="dim")
        if len(shown) < len(self._call_targets):
            self.console.print(f"  ... and {len(self._call_targets) - len(shown)} more targets (-v lists them)",
                               style="dim")

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
