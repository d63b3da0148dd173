"""What `mcpfuzz run --compare` prints: the frames whose outcome differs between the two servers."""

from __future__ import annotations

from rich.console import Console

from mcpfuzz.engine.compare import Comparison
from mcpfuzz.report.terminal_text import escape

_console = Console(highlight=False, soft_wrap=True)


def print_comparison(comparison: Comparison, first: str, second: str, console: Console | None = None) -> None:
    """A block per differing frame, then one summary line."""
    console = console or _console
    width = max(len(first), len(second))
    for number, difference in enumerate(comparison.differences, 1):
        frame = difference.frame.decode("utf-8", "backslashreplace")
        frame = frame if len(frame) <= 200 else frame[:200] + f"... ({len(difference.frame)} bytes)"
        console.print(f"\n[bold]{number}. {escape(difference.target)}[/] ({escape(difference.title)})")
        console.print(f"   sent:  {escape(frame)}", style="dim")
        console.print(f"   {escape(first.ljust(width))}  {escape(difference.first)}")
        console.print(f"   {escape(second.ljust(width))}  {escape(difference.second)}")
    if comparison.only_one:
        console.print(f"\nnot compared (sent to one server only): {escape(', '.join(comparison.only_one))}",
                      style="dim")
    if comparison.stopped:
        console.print(f"\nthe call phases were not compared to the end: {escape(comparison.stopped)}", style="yellow")
    total = comparison.compared + comparison.calls
    verdict = "[bold green]same outcome for every frame[/]" if not comparison.differences else \
        f"[bold red]{len(comparison.differences)} of {total} frames differ[/]"
    calls = f" and {comparison.calls} calls (whole envelopes)" if comparison.calls else ""
    console.print(f"\ncompared {comparison.compared} frames{calls}: {verdict}")
