"""The lines and branches a traced server reported, read from the tracer's file as the run goes (new ones per call
target)."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

TRACER_RECORD = "#tracer"
ARC_RECORD = "ARC"  # ARC<TAB>PATH<TAB>FROM<TAB>TO: a branch outcome taken for the first time


@dataclass
class CoverageBook:
    """Every line and branch outcome the server's processes reported (their union), and how many of each every
    call target reached first."""

    log: Path
    lines: set[tuple[str, int]] = field(default_factory=set)
    branches: set[tuple[str, str, str]] = field(default_factory=set)  # (path, from, to) as the tracer wrote them
    by_target: dict[str, int] = field(default_factory=dict)  # target label -> lines its calls reached first
    branches_by_target: dict[str, int] = field(default_factory=dict)  # target label -> branches reached first
    tracer: str | None = None  # how the tracer reports (sys.monitoring or settrace), once it said it is in
    _offset: int = 0
    _partial: bytes = b""
    _new_branches: int = 0  # of the last read

    def read_new(self) -> int:
        """Read what the tracer appended since the last read; how many of its lines and branch outcomes were not
        reached before."""
        self._new_branches = 0
        try:
            with open(self.log, "rb") as handle:
                handle.seek(self._offset)
                data = handle.read()
        except OSError:
            return 0
        self._offset += len(data)
        *records, self._partial = (self._partial + data).split(b"\n")
        lines, branches = len(self.lines), len(self.branches)
        for record in records:
            self._take(record.decode("utf-8", "surrogateescape"))
        self._new_branches = len(self.branches) - branches
        return len(self.lines) - lines + self._new_branches

    def _take(self, record: str) -> None:
        number, _, path = record.partition("\t")
        if number == ARC_RECORD:
            fields = path.split("\t")
            if len(fields) == 3:
                self.branches.add((fields[0], fields[1], fields[2]))
        elif number == TRACER_RECORD:
            self.tracer = self.tracer or path.partition("\t")[0]
        elif number.isdigit() and path:
            self.lines.add((path, int(number)))

    def settle(self) -> None:
        """Take in what arrived between calls (a process starting, work after an answer): no target's."""
        self.read_new()

    def after_call(self, label: str) -> int:
        """The lines and branch outcomes first reached since `settle`, counted for the target whose call ran; how
        many (lines and branches together: either is new code reached)."""
        new = self.read_new()
        lines = new - self._new_branches
        if lines:
            self.by_target[label] = self.by_target.get(label, 0) + lines
        if self._new_branches:
            self.branches_by_target[label] = self.branches_by_target.get(label, 0) + self._new_branches
        return new

    def as_dict(self) -> dict[str, Any]:
        """The JSON report's `stats.coverage`."""
        return {"tracer": self.tracer, "lines": len(self.lines), "branches": len(self.branches),
                "files": len({path for path, _ in self.lines}), "targets": dict(sorted(self.by_target.items())),
                "target_branches": dict(sorted(self.branches_by_target.items()))}
