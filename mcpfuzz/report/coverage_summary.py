"""--coverage in the console summary and the HTML report: lines of the server's code reached, and by which target."""

from __future__ import annotations

from html import escape
from typing import Any

MAX_LISTED = 5  # targets named in the console line; the HTML table lists them all


def coverage_line(coverage: dict[str, Any] | None) -> str | None:
    """`coverage: 318 lines in 2 files (settrace); first reached by tool/route 11, ...`, or None without --coverage."""
    if not coverage:
        return None
    targets = sorted(coverage.get("targets", {}).items(), key=lambda item: (-item[1], item[0]))
    listed = ", ".join(f"{label} {lines}" for label, lines in targets[:MAX_LISTED])
    more = f", {len(targets) - MAX_LISTED} more" if len(targets) > MAX_LISTED else ""
    by = f"; first reached by {listed}{more}" if targets else "; no call reached a line start-up had not"
    return f"coverage: {coverage.get('lines', 0)} lines in {coverage.get('files', 0)} files " \
           f"({coverage.get('tracer')}){by}"


def coverage_html(coverage: dict[str, Any] | None) -> str:
    """A small section: the lines reached in all, and a table of the lines each target's calls reached first."""
    if not coverage:
        return ""
    rows = "".join(f"<tr><td><code>{escape(label)}</code></td><td>{lines:,}</td></tr>"
                   for label, lines in sorted(coverage.get("targets", {}).items(), key=lambda item: -item[1]))
    table = (f'<table class="coverage"><thead><tr><th>target</th><th>lines its calls reached first</th></tr></thead>'
             f"<tbody>{rows}</tbody></table>") if rows else ""
    tracer = escape(str(coverage.get("tracer")))
    return (f'<section class="coverage"><h2>Coverage</h2><p>{coverage.get("lines", 0):,} lines of the server\'s own '
            f'code in {coverage.get("files", 0):,} files were reached (traced with {tracer}; lines run at start-up '
            f"count for no target).</p>{table}</section>")
