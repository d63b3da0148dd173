"""The lines a traced server reported, read from the tracer's file as the run goes (new ones per call target)."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

TRACER_RECORD = "#tracer"


@dataclass
class CoverageBook:
    """Every line the server's processes reported (their union), and how many each call target reached first."""

    log: Path
    lines: set[tuple[str, int]] = field(default_factory=set)
    by_target: dict[str, int] = field(default_factory=dict)  # target label -> lines its calls reached first
    tracer: str | None = None  # how the tracer reports (sys.monitoring or settrace), once it said it is in
    _offset: int = 0
    _partial: bytes = b""

    def read_new(self) -> int:
        """Read what the tracer appended since the last read; how many of its lines were not reached before."""
        try:
            with open(self.log, "rb") as handle:
                handle.seek(self._offset)
                data = handle.read()
        except OSError:
            return 0
        self._offset += len(data)
        *records, self._partial = (self._partial + data).split(b"\n")
        before = len(self.lines)
        for record in records:
            self._take(record.decode("utf-8", "surrogateescape"))
        return len(self.lines) - before

    def _take(self, record: str) -> None:
        number, _, path = record.partition("\t")
        if number == TRACER_RECORD:
            self.tracer = self.tracer or path.partition("\t")[0]
        elif number.isdigit() and path:
            self.lines.add((path, int(number)))

    def settle(self) -> None:
        """Take in what arrived between calls (a process starting, work after an answer): no target's."""
        self.read_new()

    def after_call(self, label: str) -> int:
        """The lines first reached since `settle`, counted for the target whose call ran; how many."""
        new = self.read_new()
        if new:
            self.by_target[label] = self.by_target.get(label, 0) + new
        return new

    def as_dict(self) -> dict[str, Any]:
        """The JSON report's `stats.coverage`."""
        return {"tracer": self.tracer, "lines": len(self.lines), "files": len({path for path, _ in self.lines}),
                "targets": dict(sorted(self.by_target.items()))}
