"""Turn oracle failures on an exchange into findings, one per root cause, each listing where the cause showed.

A finding's identity is (oracle, scope, cause): the oracle, the target unless the cause is server-wide, and the
failure's key, which names the cause (a crash signature, a noise line's template, a stderr line's template, a
rule or code), never the text of its message.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Hashable
from dataclasses import dataclass, replace

from mcpfuzz.corpus.redact import Redactor
from mcpfuzz.engine.events import Finding, Occurrence, fingerprint_of
from mcpfuzz.engine.redaction import redacted_exchange
from mcpfuzz.jsonrpc.exchange import Exchange
from mcpfuzz.jsonrpc.json_value import long_integers
from mcpfuzz.jsonrpc.oracle_ids import OracleId
from mcpfuzz.oracles.base import Failure, Severity, run_checks

MAX_LISTED_TARGETS = 6
MAX_OCCURRENCES = 1000  # kept per finding (the JSON report lists them); more are counted, not kept
MAX_COUNTED = 100_000  # distinct occurrences told apart per finding; past it every further one is counted
# Oracles whose failure on a frame is a consequence of the frame's own rule being broken, not a cause of its own:
# a fractional id answered as an integer (`1.5` as `1`) was served instead of refused (the frame's judge fails),
# and the changed id is how that serving showed. Folded into the judge's finding, which names them.
FOLDED_INTO_JUDGE = frozenset({OracleId.ID_PRESERVED.value})
FindingKey = tuple[str, str, str]
# One failure an oracle raised on an exchange, its key, and the finding when it is new to the run.
Verdict = tuple[Failure, FindingKey, "Finding | None"]


def counts_toward_fail_on(finding: Finding, fail_on: Severity) -> bool:
    """True when a finding fails the run: at or above --fail-on, not accepted in the baseline, and not a note.

    A finding that did not fail again when re-run on a fresh server (`reproducible` False) is a note: it is
    reported, and kept in the JSON report, but it never fails a run nor counts at its severity.
    """
    return finding.severity >= fail_on and not finding.baselined and finding.reproducible is not False


def is_note(finding: Finding) -> bool:
    """True for a finding that did not fail again on a fresh server: reported as a note, not at its severity."""
    return finding.reproducible is False


def _size(frames: list[bytes] | tuple[bytes, ...]) -> int:
    return sum(len(frame) for frame in frames)


def received_lines(exchange: Exchange, limit: int = 6) -> tuple[str, ...]:
    """What came back while the case was open, as short texts."""
    lines = [a.incoming.text(300) for a in exchange.arrivals[:limit]]
    if exchange.http is not None:
        lines.insert(0, f"<{exchange.http.describe()}>")
    if len(exchange.arrivals) > limit:
        lines.append(f"... and {len(exchange.arrivals) - limit} more")
    if exchange.crash is not None:
        lines.append(f"<the server {exchange.crash.describe()}>")
    elif not exchange.arrivals:
        lines.append("<no reply>")
    return tuple(lines)


def to_finding(failure: Failure, exchange: Exchange) -> Finding:
    """A finding with its reproduction frames."""
    case = exchange.case
    return Finding(
        oracle=failure.oracle, severity=failure.severity, title=failure.title, message=failure.message,
        target=case.target, case_title=case.title, expected=case.expect.describe(),
        frames=tuple(exchange.frames), received=received_lines(exchange), key=failure.key, tool=case.expect.tool,
        stderr_tail=exchange.crash.stderr_tail if exchange.crash else "", case=case, era=exchange.era.value,
        protocol_version=exchange.protocol_version, server_wide=failure.server_wide,
        also_judged=failure.also_judged, grouped=tuple(fingerprint_of(*key) for key in failure.folded),
        folded=tuple((oracle, key) for oracle, _scope, key in failure.folded))


def fold_consequences(exchange: Exchange, failures: list[Failure]) -> list[Failure]:
    """One frame, one cause: when the frame's own judge failed, the failures that follow from it (FOLDED_INTO_JUDGE)
    are named in the judge's failure instead of standing as findings of their own."""
    judge = exchange.case.expect.judge
    ruling = next((f for f in failures if f.oracle == judge), None)
    if ruling is None:
        return failures
    folded = [f for f in failures if f.oracle != judge and f.oracle in FOLDED_INTO_JUDGE]
    if not folded:
        return failures
    ruling.also_judged = tuple(dict.fromkeys((*ruling.also_judged, *(f.oracle for f in folded))))
    ruling.message += "".join(f"; {f.oracle} judged the same frame: {f.message}" for f in folded)
    ruling.folded = (*ruling.folded, *(FindingSet.key_of(f, exchange) for f in folded))
    return [f for f in failures if f not in folded]


def observed_finding(failure: Failure, received: tuple[str, ...], era: str, version: str,
                     expected: str = "the server keeps answering with flat memory") -> Finding:
    """A finding seen over many requests (a leak, a server that stopped answering): no single case replays it."""
    return Finding(
        oracle=failure.oracle, severity=failure.severity, title=failure.title, message=failure.message,
        target="server", case_title="observed over the run, not on one frame",
        expected=expected, frames=(), received=received, key=failure.key,
        era=era, protocol_version=version, observed=True, server_wide=True)


def finding_key(finding: Finding) -> FindingKey:
    """The key `FindingSet` files a finding under (what makes two findings the same bug)."""
    return finding.oracle, "*" if finding.server_wide else finding.target, finding.key


class FindingSet:
    """Distinct findings of a run, in the order found; a repeat is counted, not listed again.

    A server-wide failure (the same wrong code on eight unparseable frames) is one finding that
    names the other frames it was also seen on; the first frame is its reproducer.
    """

    def __init__(self, redactor: Redactor | None = None) -> None:
        """`redactor`: the run's secrets; a failing exchange is judged again on its redacted copy, so that every
        key, message and received line is built from redacted text (redacted before it is cut, never after)."""
        self._by_key: dict[FindingKey, Finding] = {}
        self._also: dict[FindingKey, list[str]] = {}
        self._occurrences: dict[FindingKey, dict[Occurrence, None]] = {}
        self._seen: dict[FindingKey, set[Occurrence]] = {}  # for counting distinct occurrences (bounded)
        self._counts: dict[FindingKey, int] = {}
        self._redactor = redactor

    @staticmethod
    def key_of(failure: Failure, exchange: Exchange) -> FindingKey:
        """What makes two failures the same bug: oracle, target (unless server-wide) and the failure's key."""
        return failure.oracle, "*" if failure.server_wide else exchange.case.target, failure.key

    def add(self, failure: Failure, exchange: Exchange) -> Finding | None:
        """Record a failure; return the finding when it is new (a smaller repeat becomes the reproducer)."""
        target = exchange.case.target
        key = self.key_of(failure, exchange)
        self._occurred(key, Occurrence(target, failure.detail))
        known = self._by_key.get(key)
        if known is not None:
            if failure.severity > known.severity:
                # One root cause seen at its worst here (a valid request, not only malformed ones): this
                # exchange becomes the reproducer and carries the severity; the earlier target is listed.
                self._by_key[key] = to_finding(failure, exchange)
                also = self._also.setdefault(key, [])
                if known.target != target and known.target not in also:
                    also.append(known.target)
            elif target == known.target and _size(exchange.frames) < _size(known.frames):
                self._by_key[key] = to_finding(failure, exchange)
            elif target != known.target:
                also = self._also.setdefault(key, [])
                if target not in also:
                    also.append(target)
            return None
        finding = to_finding(failure, exchange)
        self._by_key[key] = finding
        return finding

    def _occurred(self, key: FindingKey, occurrence: Occurrence) -> None:
        """Count an occurrence of a cause (once per distinct place) and keep the first MAX_OCCURRENCES."""
        seen = self._seen.setdefault(key, set())
        if occurrence in seen:
            return
        if len(seen) < MAX_COUNTED:
            seen.add(occurrence)
        self._counts[key] = self._counts.get(key, 0) + 1
        kept = self._occurrences.setdefault(key, {})
        if len(kept) < MAX_OCCURRENCES:
            kept[occurrence] = None

    def add_observed(self, finding: Finding) -> Finding | None:
        """Record a finding observed over the run (keyed as server-wide); return it when it is new."""
        key = finding_key(finding)
        if key in self._by_key:
            return None
        self._by_key[key] = finding
        return finding

    def restore(self, key: FindingKey, finding: Finding) -> None:
        """Put back a finding of an earlier session (a resumed soak): its repeats are not new."""
        if key not in self._by_key:
            for occurrence in finding.occurrences:
                self._occurred(key, occurrence)
        self._by_key.setdefault(key, finding)

    def merge(self, finding: Finding) -> Finding | None:
        """Add another worker's finding; the smaller reproducer of two wins. Returns it when it is new."""
        key = finding_key(finding)
        for occurrence in finding.occurrences:
            self._occurred(key, occurrence)
        known = self._by_key.get(key)
        if known is None:
            self._by_key[key] = finding
            return finding
        if not finding.observed and _size(finding.frames) < _size(known.frames):
            self._by_key[key] = finding
        return None

    def entries(self) -> list[tuple[FindingKey, Finding]]:
        """Every finding with its key, as recorded (for checkpoints and merging workers)."""
        return list(self._by_key.items())

    def judge(self, exchange: Exchange, oracles: tuple[str, ...]) -> list[Finding]:
        """Run the oracles on an exchange and keep the new findings."""
        return [finding for _, _, finding in self.judge_all(exchange, oracles) if finding is not None]

    def judge_all(self, exchange: Exchange, oracles: tuple[str, ...]) -> list[Verdict]:
        """Every failure on an exchange with its key, and the finding when it is new (a server's integers of up to
        EXACT_DIGITS digits may be shown in messages and keys)."""
        with long_integers():
            failures = list(run_checks(exchange, oracles))
            if failures and self._redactor is not None:
                exchange, failures = self._judged_redacted(exchange, failures)
            if len(failures) > 1:
                failures = fold_consequences(exchange, failures)
            return [(failure, self.key_of(failure, exchange), self.add(failure, exchange)) for failure in failures]

    def _judged_redacted(self, exchange: Exchange, failures: list[Failure]) -> tuple[Exchange, list[Failure]]:
        """The failures again, judged on the redacted copy of the exchange (the rare failing exchanges pay for it).

        Only the oracles that failed are asked again: redacted values must not make a new failure, and an oracle
        whose failure the redaction hid keeps the failure it raised on the exchange as it was.
        """
        assert self._redactor is not None
        public = redacted_exchange(exchange, self._redactor)
        failed = tuple(dict.fromkeys(failure.oracle for failure in failures))
        again = list(run_checks(public, failed))
        kept = {failure.oracle for failure in again}
        return public, again + [failure for failure in failures if failure.oracle not in kept]

    def mark(self, finding: Finding, reproducible: bool) -> None:
        """Record whether a finding failed again when re-run on a fresh server."""
        for key, known in self._by_key.items():
            if known.fingerprint == finding.fingerprint:
                self._by_key[key] = replace(known, reproducible=reproducible)
                return

    def all(self) -> list[Finding]:
        """Every distinct finding, naming the other targets where it was seen too, with its occurrences."""
        result = []
        for key, finding in self._by_key.items():
            kept = self._occurrences.get(key)
            if kept:
                finding = replace(finding, occurrences=tuple(kept), occurrence_count=self._counts.get(key, len(kept)))
            also = self._also.get(key)
            if also:
                finding = with_also_on(finding, tuple(also))
            result.append(finding)
        return result


def with_also_on(finding: Finding, also: tuple[str, ...]) -> Finding:
    """The finding naming the other targets its cause showed on (in `also_on`, and briefly in its message)."""
    listed = ", ".join(also[:MAX_LISTED_TARGETS])
    more = f" and {len(also) - MAX_LISTED_TARGETS} more" if len(also) > MAX_LISTED_TARGETS else ""
    message = finding.message
    if finding.also_on:  # named already: the list is said again, whole
        message = message.rsplit(" (also on ", 1)[0]
    return replace(finding, message=f"{message} (also on {listed}{more})", also_on=also)


def group_by_upstream(findings: tuple[Finding, ...]) -> tuple[Finding, ...]:
    """One SDK behaviour is one cause: findings of one oracle marked with the same known behaviour (the same SDK
    row) on several targets become one, the worst that failed again (then the first) carrying it, the others in
    `also_on`.

    The grouped findings' fingerprints stay in `grouped` (a baseline that accepted one of them still accepts it).
    """
    def cause(finding: Finding) -> Hashable | None:
        upstream = finding.upstream
        if upstream is None or finding.rule:
            return None
        return finding.oracle, upstream.link, upstream.behaviour

    return _group_by(findings, cause)


def group_under_tools(findings: tuple[Finding, ...]) -> tuple[Finding, ...]:
    """A tool's failure seen again through a mutated frame (`frames/envelope` calling the same tool) is the tool's
    cause: findings of one oracle and key on one tool become one, led by the tool's own target.

    SDK-marked findings are left to `group_by_upstream`; a finding whose frame names no tool stays as it is.
    """
    def cause(finding: Finding) -> Hashable | None:
        if finding.upstream is not None or finding.rule or finding.server_wide or finding.observed:
            return None
        tool = finding_tool(finding)
        return None if tool is None else (finding.oracle, finding.key, tool)

    return _group_by(findings, cause)


def finding_tool(finding: Finding) -> str | None:
    """The tool a finding's case called: its own, a `tool/NAME` target, or the `tools/call` of its last frame."""
    if finding.tool:
        return finding.tool
    if finding.target.startswith("tool/"):
        return finding.target.removeprefix("tool/")
    if not finding.frames:
        return None
    try:
        message = json.loads(finding.frames[-1])
    except ValueError:
        return None
    if not isinstance(message, dict) or message.get("method") != "tools/call":
        return None
    params = message.get("params")
    name = params.get("name") if isinstance(params, dict) else None
    return name if isinstance(name, str) else None


def _group_by(findings: tuple[Finding, ...], cause_of: Callable[[Finding], Hashable | None]) -> tuple[Finding, ...]:
    """Findings of one cause become one: the one that failed again, then the worst, then a tool's own target,
    then the first leads; the others' targets go to `also_on`, their fingerprints to `grouped`."""
    groups: dict[Hashable, list[Finding]] = {}
    order: list[Hashable | Finding] = []
    for finding in findings:
        cause = cause_of(finding)
        if cause is None:
            order.append(finding)
            continue
        if cause not in groups:
            order.append(_Cause(cause))
        groups.setdefault(cause, []).append(finding)
    result = []
    for item in order:
        if isinstance(item, Finding):
            result.append(item)
            continue
        assert isinstance(item, _Cause)
        members = groups[item.cause]
        # max keeps the first of equals.
        lead = max(members, key=lambda f: (f.reproducible is not False, f.severity, f.target.startswith("tool/")))
        if len(members) == 1:
            result.append(lead)
            continue
        others = [f for f in members if f is not lead]
        also = tuple(dict.fromkeys(t for f in members for t in (f.target, *f.also_on) if t != lead.target))
        occurrences = tuple(dict.fromkeys(o for f in (lead, *others) for o in f.occurrences))[:MAX_OCCURRENCES]
        grouped = tuple(dict.fromkeys(g for f in (lead, *others) for g in (f.fingerprint, *f.grouped)
                                      if g != lead.fingerprint))
        merged = replace(lead, occurrences=occurrences, grouped=grouped,
                         occurrence_count=sum(f.occurrence_count or 1 for f in members))
        result.append(with_also_on(merged, also))
    return tuple(result)


@dataclass(frozen=True)
class _Cause:
    """A place in the findings' order held for a cause's group."""

    cause: Hashable
