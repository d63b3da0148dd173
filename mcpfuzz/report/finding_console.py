"""How one finding is printed on the console, at each verbosity: a line, the essentials, or everything."""

from __future__ import annotations

import re
import shlex
from dataclasses import dataclass, field
from enum import IntEnum

from rich.console import Console

from mcpfuzz.engine.events import Finding
from mcpfuzz.engine.judge import is_note
from mcpfuzz.oracles.base import Severity
from mcpfuzz.report.codes import code_of
from mcpfuzz.report.json_report import rerun_command
from mcpfuzz.report.plural import counted
from mcpfuzz.report.reproduce import finding_reproduction
from mcpfuzz.report.terminal_text import escape
from mcpfuzz.transport.connect import ServerTarget

SEVERITY_STYLE = {Severity.CRITICAL: "bold red", Severity.HIGH: "red", Severity.MEDIUM: "yellow",
                  Severity.LOW: "cyan"}
STDERR_LINES = 5  # of a crash's stderr tail at normal verbosity: the exception and the innermost frames above it
RECEIVED_LINES = {False: 2, True: 6}  # what came back, at normal / verbose
ALSO_ON_SHOWN = 8  # other targets of a cause named at normal verbosity
OCCURRENCES_SHOWN = 2  # of a cause's occurrences (the noise lines of one statement) shown at normal verbosity
_ALSO_ON = re.compile(r" \(also on [^)]*\)$")


class Verbosity(IntEnum):
    """-q, the default, -v."""

    QUIET = -1  # no live progress; one line per finding, then the summary
    NORMAL = 0
    VERBOSE = 1  # every finding in full, the whole stderr tail, every reproduction


@dataclass(frozen=True)
class FindingPrinter:
    """Prints findings for one run: the server's target (for reproductions), how mcpfuzz was started, the seed."""

    console: Console
    target: ServerTarget
    program: str
    seed: int
    verbosity: Verbosity = Verbosity.NORMAL
    _notes_said: set[str] = field(default_factory=set)  # a note common to many reproductions is said once

    def one_line(self, number: int, finding: Finding) -> None:
        """`3. MEDIUM invalid-params on params/string: no reply ...`."""
        style, label = _label(finding)
        tags = _tags(finding)
        self.console.print(f"{number}. [{style}]{label}[/] {finding.oracle} on "
                           f"{escape(finding.target)}: {escape(message_head(finding))}{tags}{_code(finding)}")

    def full(self, number: int, finding: Finding, corpus_path: str | None) -> None:
        """The finding as a person acts on it; an SDK's finding stays short unless -v."""
        if self.verbosity is Verbosity.QUIET:
            self.one_line(number, finding)
            return
        style, label = _label(finding)
        print_ = self.console.print
        print_(f"\n[bold]{number}.[/] [{style}]{label}[/] [bold]{finding.oracle}[/] "
               f"on {escape(finding.target)} ({escape(finding.case_title)}){_tags(finding)}{_code(finding)}")
        print_(f"   {escape(message_head(finding))}")
        if finding.also_on:
            print_(f"   also on: {escape(also_on_line(finding, self.verbosity is Verbosity.VERBOSE))}", style="dim")
        if finding.also_judged:
            print_(f"   also judged by {escape(', '.join(finding.also_judged))} on this frame (the same cause)",
                   style="dim")
        for line in occurrence_lines(finding, self.verbosity is Verbosity.VERBOSE):
            print_(f"   {escape(line)}", style="dim")
        if finding.upstream is not None:
            print_(f"   {escape(finding.upstream.describe())}", style="magenta")
            if self.verbosity is Verbosity.NORMAL:
                self._replay_line(corpus_path)
                return
        if is_note(finding):
            print_(f"   a note, not a finding: it did not fail again when re-run on a fresh server (timing or "
                   f"state), so it does not count at its severity ({finding.severity}) nor toward --fail-on; the "
                   "transcript keeps what was observed", style="yellow")
        self._stderr(finding)
        print_(f"   expected: {escape(finding.expected)}", style="dim")
        if finding.observed:
            for line in finding.received[:RECEIVED_LINES[False]]:
                print_(f"   saw:      {escape(line[:300])}")
            if finding.rule:  # a lint problem: what the server declares, shown again by `mcpfuzz lint`
                print_(f"   reproduce: {escape(rerun_command(self.target, 'lint'))}", style="dim")
                return
            print_(f"   reproduce: run mcpfuzz on this server again (--seed {self.seed}); this "
                   "shows over many requests, so no single frame replays it", style="dim")
            return
        frame = finding.frames[-1] if finding.frames else b""
        print_(f"   sent:     {escape(_show_frame(frame))}")
        for line in finding.received[:RECEIVED_LINES[self.verbosity is Verbosity.VERBOSE]]:
            print_(f"   got:      {escape(line[:300])}")
        command, notes = finding_reproduction(self.target, finding)
        print_(f"   reproduce: {escape(command)}", soft_wrap=True)
        for note in notes:
            if note not in self._notes_said or self.verbosity is Verbosity.VERBOSE:
                self._notes_said.add(note)
                print_(f"     ({escape(note)})", style="dim")
        self._replay_line(corpus_path)

    def _stderr(self, finding: Finding) -> None:
        """A crash's stderr tail, indented under it (its last lines; all of it with -v)."""
        tail = [line for line in finding.stderr_tail.splitlines() if line.strip()]
        if not tail:
            return
        shown = tail if self.verbosity is Verbosity.VERBOSE else tail[-STDERR_LINES:]
        more = f", last {len(shown)} of {len(tail)}" if len(shown) < len(tail) else ""
        self.console.print(f"   server stderr{more}:", style="dim")
        for line in shown:
            self.console.print(f"     {escape(line)}", style="dim")

    def _replay_line(self, corpus_path: str | None) -> None:
        if corpus_path:
            self.console.print(f"   replay:    {escape(self.program)} replay {escape(shlex.quote(corpus_path))}")


def also_on_line(finding: Finding, every: bool) -> str:
    """The other targets of a cause: a few, then how many more (all of them with -v)."""
    also = finding.also_on
    if every or len(also) <= ALSO_ON_SHOWN:
        return ", ".join(also)
    return f"{', '.join(also[:ALSO_ON_SHOWN])} and {len(also) - ALSO_ON_SHOWN} more"


def occurrence_lines(finding: Finding, every: bool) -> list[str]:
    """What a cause showed where it showed different things: the lines of one writer by shape (each shape's count
    and first line), then how many lines on how many targets; every kept line with -v."""
    shapes = [s for s in finding.samples if s.detail and s.evidence != s.target]
    shown = [o for o in finding.occurrences if o.detail]
    if not shown and not shapes:
        return []
    count = max(finding.occurrence_count, len(finding.occurrences))
    lines = [f"{s.count} like {s.detail[:160]!r} (first on {s.target})" for s in shapes]
    first = shown if every or not shapes else []
    if not shapes and not every:
        first = shown[:OCCURRENCES_SHOWN]
    lines += [f"seen: {o.detail[:160]!r} on {o.target}" for o in first]
    left = finding.sample_count - len(shapes)
    if shapes and (left > 0 or count > len(first)):
        targets = {o.target for o in finding.occurrences}
        other = f", {left} more {'shape' if left == 1 else 'shapes'}" if left > 0 else ""
        lines.append(f"{counted(count, 'line')} in all{other} on {counted(len(targets), 'target')}"
                     + ("" if every else " (all in the JSON report; -v lists them)"))
        return lines
    rest = [o for o in finding.occurrences if o not in first]
    if rest or count > len(finding.occurrences):
        more = count - len(first)
        targets = {o.target for o in rest}
        on = f" on {counted(len(targets), 'target')}" if targets else ""
        lines.append(f"and {more} more {'line' if more == 1 else 'lines'}{on}"
                     + ("" if every else " (all in the JSON report; -v lists them)"))
    return lines


def message_head(finding: Finding) -> str:
    """The message without the stderr tail it may embed and without its "also on" list (shown apart)."""
    head = finding.message.split("\nstderr tail:", 1)[0]
    head = head.splitlines()[0] if head else ""
    return _ALSO_ON.sub("", head) if finding.also_on else head


def _label(finding: Finding) -> tuple[str, str]:
    """The style and word a finding is listed under: its severity, or NOTE for one that did not fail again."""
    if is_note(finding):
        return "dim", "NOTE"
    return SEVERITY_STYLE[finding.severity], finding.severity.name


def _code(finding: Finding) -> str:
    """The oracle's stable code at the line's end (`mcpfuzz explain` takes it); the lines keep their shape."""
    code = code_of(finding.oracle)
    return f" [dim]\\[{code}][/]" if code else ""


def _tags(finding: Finding) -> str:
    tags = []
    if finding.baselined:
        tags.append("accepted in the baseline")
    if finding.upstream is not None:
        tags.append("from the SDK")
    return f" [dim]({'; '.join(tags)})[/]" if tags else ""


def _show_frame(frame: bytes, limit: int = 240) -> str:
    text = frame.decode("utf-8", "backslashreplace")
    return text if len(text) <= limit else f"{text[:limit]}... ({len(frame)} bytes)"
