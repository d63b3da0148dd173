"""What `mcpfuzz replay` prints for each transcript: FIXED, FAILED (with a reproduction) or ERROR."""

from __future__ import annotations

import shlex

from rich.console import Console

from mcpfuzz.engine.replay import FAILED, FIXED, ReplayOutcome
from mcpfuzz.report.reproduce import finding_reproduction
from mcpfuzz.report.terminal_text import escape

STYLES = {FIXED: "bold green", FAILED: "bold red"}
_console = Console(highlight=False, soft_wrap=True)


def print_outcome(outcome: ReplayOutcome, console: Console | None = None) -> None:
    """One transcript's verdict; a failure ends with the shell reproduction and the replay line."""
    console = console or _console
    style = STYLES.get(outcome.status, "bold yellow")
    what = ""
    if outcome.replayable is not None:
        what = f" ({outcome.replayable.oracle} on {outcome.replayable.case.target})"
    console.print(f"[{style}]{outcome.status}[/] {escape(str(outcome.path))}{escape(what)}")
    if outcome.reason:
        console.print(f"   {escape(outcome.reason)}")
    if outcome.status != FAILED or outcome.replayable is None or outcome.server is None:
        return
    same = [f for f in outcome.findings if f.oracle == outcome.replayable.oracle]
    for finding in same[:1]:
        console.print(f"   {escape(finding.message)}")
        command, notes = finding_reproduction(outcome.server, finding)
        console.print("   reproduce:", style="dim")
        console.print(f"     {escape(command)}")
        for note in notes:
            console.print(f"     ({escape(note)})", style="dim")
    console.print(f"     mcpfuzz replay {escape(shlex.quote(str(outcome.path)))}")
