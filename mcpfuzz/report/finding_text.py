"""A finding as plain text (what was sent, what came back, how to reproduce it), for test failures."""

from __future__ import annotations

import shlex

from mcpfuzz.engine.events import Finding
from mcpfuzz.report.reproduce import finding_reproduction
from mcpfuzz.transport.connect import ServerTarget

# A frame longer than this is cut in the text; the corpus transcript has it whole.
MAX_FRAME_CHARS = 400
MAX_LINES_RECEIVED = 5


def finding_text(finding: Finding, target: ServerTarget, seed: int, corpus_path: str | None = None) -> str:
    """Several lines: severity, oracle, target and message; expected, sent, got; the reproduction and replay line."""
    lines = [f"{finding.severity.name} {finding.oracle} on {finding.target} ({finding.case_title})",
             f"  {finding.message}", f"  expected: {finding.expected}"]
    if finding.observed:
        lines += [f"  saw:  {line[:MAX_FRAME_CHARS]}" for line in finding.received[:MAX_LINES_RECEIVED]]
        lines.append(f"  reproduce: run mcpfuzz on this server again (seed {seed}); no single frame replays it")
        return "\n".join(lines)
    for frame in finding.frames[-3:]:
        text = frame.decode("utf-8", "backslashreplace")
        lines.append(f"  sent: {text[:MAX_FRAME_CHARS]}{'...' if len(text) > MAX_FRAME_CHARS else ''}")
    lines += [f"  got:  {line[:MAX_FRAME_CHARS]}" for line in finding.received[:MAX_LINES_RECEIVED]]
    if not finding.received:
        lines.append("  got:  nothing")
    if finding.stderr_tail and not _shown_in(finding.stderr_tail, finding.message):
        lines.append(f"  server stderr (last lines): {finding.stderr_tail.strip()[-MAX_FRAME_CHARS:]}")
    command, notes = finding_reproduction(target, finding)
    if command:
        lines += ["  reproduce:", f"    {command}", *(f"    ({note})" for note in notes)]
    if corpus_path:
        lines.append(f"    mcpfuzz replay {shlex.quote(corpus_path)}")
    return "\n".join(lines)


def _shown_in(stderr_tail: str, message: str) -> bool:
    """Whether the message already quotes the stderr tail (a crash's does): it is printed once."""
    last = stderr_tail.strip().splitlines()[-1:] or [""]
    return bool(last[0].strip()) and last[0].strip() in message
