"""`mcpfuzz baseline`: write the accepted findings of a JSON report to a baseline file for `--baseline`."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import click


@click.command()
@click.argument("report", type=click.Path(exists=True, dir_okay=False))
@click.option("-o", "--output", type=click.Path(dir_okay=False), default="mcpfuzz-baseline.json", show_default=True,
              metavar="FILE", help="Where to write the baseline.")
@click.option("--reason", default="", metavar="TEXT", help="Why these findings are accepted (kept in each entry).")
@click.option("--severity-below", type=click.Choice(("low", "medium", "high", "critical")), default=None,
              help="Accept only findings below this severity (e.g. `high`: low and medium ones).")
def baseline(report: str, output: str, reason: str, severity_below: str | None) -> None:
    """Accept the findings of a JSON report (`mcpfuzz run --json REPORT.json`) into a baseline FILE.

    Later runs given `--baseline FILE` report those findings but do not fail on them, and fail when an
    entry no longer reproduces. Each entry keeps its corpus transcript when the report points to one, so
    runs replay it first. Commit the file next to your server.
    """
    from dataclasses import replace

    from mcpfuzz.engine.baseline import BaselineError, entries_from_report, write_baseline
    from mcpfuzz.oracles.base import Severity

    path = Path(report)
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, ValueError) as error:
        raise click.UsageError(f"{path}: not a readable JSON report ({error})") from None
    try:
        entries = entries_from_report(data, path)
        if severity_below is not None:
            limit = Severity.parse(severity_below)
            entries = [e for e in entries if e.severity and Severity.parse(e.severity) < limit]
        entries = [replace(e, reason=reason) for e in entries]
        write_baseline(Path(output), entries)
    except BaselineError as error:
        raise click.UsageError(str(error)) from None
    replayable = sum(1 for e in entries if e.transcript is not None)
    click.echo(f"wrote {output}: {len(entries)} accepted finding{'s' if len(entries) != 1 else ''} "
               f"({replayable} with a transcript a run replays first)")
    if entries and replayable < len(entries):
        click.echo("tip: run with --corpus DIR (the default ./corpus) so every finding has a transcript",
                   err=True)
    sys.exit(0)
