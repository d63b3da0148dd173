"""Turn oracle failures on an exchange into findings, one per distinct bug."""

from __future__ import annotations

from dataclasses import replace

from mcpfuzz.engine.events import Finding
from mcpfuzz.jsonrpc.exchange import Exchange
from mcpfuzz.oracles.base import Failure, run_checks

MAX_LISTED_TARGETS = 6


def received_lines(exchange: Exchange, limit: int = 6) -> tuple[str, ...]:
    """What came back while the case was open, as short texts."""
    lines = [a.incoming.text(300) for a in exchange.arrivals[:limit]]
    if len(exchange.arrivals) > limit:
        lines.append(f"... and {len(exchange.arrivals) - limit} more")
    if exchange.crash is not None:
        lines.append(f"<the server {exchange.crash.describe()}>")
    elif not exchange.arrivals:
        lines.append("<no reply>")
    return tuple(lines)


def to_finding(failure: Failure, exchange: Exchange, tool: str | None = None) -> Finding:
    """A finding with its reproduction frames."""
    case = exchange.case
    return Finding(
        oracle=failure.oracle, severity=failure.severity, title=failure.title, message=failure.message,
        target=case.target, case_title=case.title, expected=case.expect.describe(),
        frames=tuple(exchange.frames), received=received_lines(exchange), key=failure.key, tool=tool,
        stderr_tail=exchange.crash.stderr_tail if exchange.crash else "")


class FindingSet:
    """Distinct findings of a run, in the order found; a repeat is counted, not listed again.

    A server-wide failure (the same wrong code on eight unparseable frames) is one finding that
    names the other frames it was also seen on; the first frame is its reproducer.
    """

    def __init__(self) -> None:
        self._by_key: dict[tuple[str, ...], Finding] = {}
        self._also: dict[tuple[str, ...], list[str]] = {}

    def add(self, failure: Failure, exchange: Exchange, tool: str | None = None) -> Finding | None:
        """Record a failure; return the finding when it is new."""
        target = exchange.case.target
        key = (failure.oracle, "*" if failure.server_wide else target, failure.key)
        if key in self._by_key:
            also = self._also.setdefault(key, [])
            if target != self._by_key[key].target and target not in also:
                also.append(target)
            return None
        finding = to_finding(failure, exchange, tool)
        self._by_key[key] = finding
        return finding

    def judge(self, exchange: Exchange, oracles: tuple[str, ...], tool: str | None = None) -> list[Finding]:
        """Run the oracles on an exchange and keep the new findings."""
        new = []
        for failure in run_checks(exchange, oracles):
            finding = self.add(failure, exchange, tool)
            if finding is not None:
                new.append(finding)
        return new

    def all(self) -> list[Finding]:
        """Every distinct finding, naming the other targets where it was seen too."""
        result = []
        for key, finding in self._by_key.items():
            also = self._also.get(key)
            if also:
                listed = ", ".join(also[:MAX_LISTED_TARGETS])
                more = f" and {len(also) - MAX_LISTED_TARGETS} more" if len(also) > MAX_LISTED_TARGETS else ""
                finding = replace(finding, message=f"{finding.message} (also on {listed}{more})")
            result.append(finding)
        return result
