"""--coverage in the console summary and the HTML report: lines and branches of the server's code reached, and by
which target."""

from __future__ import annotations

from html import escape
from typing import Any

MAX_LISTED = 5  # targets named in the console line; the HTML table lists them all


def coverage_line(coverage: dict[str, Any] | None) -> str | None:
    """`coverage: 318 lines, 40 branches in 2 files (settrace); first reached by tool/route 11/4, ...` (lines/branches),
    or None without --coverage."""
    if not coverage:
        return None
    branches = coverage.get("target_branches", {})
    labels = set(coverage.get("targets", {})) | set(branches)
    targets = sorted(((label, coverage.get("targets", {}).get(label, 0), branches.get(label, 0)) for label in labels),
                     key=lambda item: (-item[1] - item[2], item[0]))
    listed = ", ".join(f"{label} {lines}/{arcs}" for label, lines, arcs in targets[:MAX_LISTED])
    more = f", {len(targets) - MAX_LISTED} more" if len(targets) > MAX_LISTED else ""
    by = f"; first reached (lines/branches) by {listed}{more}" if targets else \
        "; no call reached a line or branch start-up had not"
    return f"coverage: {coverage.get('lines', 0)} lines, {coverage.get('branches', 0)} branches in " \
           f"{coverage.get('files', 0)} files ({coverage.get('tracer')}){by}"


def coverage_html(coverage: dict[str, Any] | None) -> str:
    """A small section: the lines reached in all, and a table of the lines each target's calls reached first."""
    if not coverage:
        return ""
    lines_of, branches_of = coverage.get("targets", {}), coverage.get("target_branches", {})
    labels = sorted(set(lines_of) | set(branches_of),
                    key=lambda label: (-lines_of.get(label, 0) - branches_of.get(label, 0), label))
    rows = "".join(f"<tr><td><code>{escape(label)}</code></td><td>{lines_of.get(label, 0):,}</td>"
                   f"<td>{branches_of.get(label, 0):,}</td></tr>" for label in labels)
    table = (f'<table class="coverage"><thead><tr><th>target</th><th>lines its calls reached first</th>'
             f"<th>branches</th></tr></thead><tbody>{rows}</tbody></table>") if rows else ""
    tracer = escape(str(coverage.get("tracer")))
    return (f'<section class="coverage"><h2>Coverage</h2><p>{coverage.get("lines", 0):,} lines and '
            f'{coverage.get("branches", 0):,} branch outcomes of the server\'s own code in '
            f'{coverage.get("files", 0):,} files were reached (traced with {tracer}; what start-up ran counts for no '
            f"target).</p>{table}</section>")
