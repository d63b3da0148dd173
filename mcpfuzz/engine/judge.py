"""Turn oracle failures on an exchange into findings, one per root cause, each listing where the cause showed.

A finding's identity is (oracle, scope, cause): the oracle, where the fix goes (the target, every target of a kind,
or the whole server: engine/causes.py), and the failure's key, which names the cause (a crash signature, a stderr
line's template, a rule or code), never the text of its message.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Hashable, Iterable
from dataclasses import dataclass, replace

from mcpfuzz.corpus.redact import Redactor
from mcpfuzz.engine.causes import SERVER, Cause, cause_of, claims, kind_noun
from mcpfuzz.engine.events import Finding, Occurrence, Sample, fingerprint_of
from mcpfuzz.engine.redaction import redacted_exchange
from mcpfuzz.jsonrpc.exchange import Exchange
from mcpfuzz.jsonrpc.http_reply import HttpReply
from mcpfuzz.jsonrpc.json_value import long_integers
from mcpfuzz.jsonrpc.oracle_ids import OracleId
from mcpfuzz.jsonrpc.parts.tool_call import ToolCallCheck
from mcpfuzz.oracles.base import Failure, Severity, run_checks

MAX_LISTED_TARGETS = 6
MAX_OCCURRENCES = 1000  # kept per finding (the JSON report lists them); more are counted, not kept
MAX_COUNTED = 100_000  # distinct occurrences told apart per finding; past it every further one is counted
MAX_SAMPLES = 5  # distinct pieces of evidence kept per finding (each with its count, one example, its frames)
MAX_LEGACY = 100  # identities of earlier versions a finding answers for (a baseline written then still matches)
# Failures on a frame that are a consequence of the frame's own rule being broken, not a cause of their own, by
# oracle (None: any key): a fractional id answered as an integer (`1.5` as `1`) was served instead of refused (the
# frame's judge fails), and the changed id is how that serving showed; an HTTP 5xx on a frame whose judge failed is
# the same failing answer (a -32603 where -32700 was due, sent with 500). Folded into the judge's finding, which
# names them.
FOLDED_INTO_JUDGE: dict[str, frozenset[str] | None] = {
    OracleId.ID_PRESERVED.value: None,
    OracleId.HTTP_STATUS.value: frozenset({"5xx"}),
}
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
        body = body_text(exchange.http)
        if body:  # a refusal's own words (a plain-text 400): what tells one server's or SDK's refusal from another
            lines.insert(1, f"<body: {body}>")
    if len(exchange.arrivals) > limit:
        lines.append(f"... and {len(exchange.arrivals) - limit} more")
    if exchange.crash is not None:
        lines.append(f"<the server {exchange.crash.describe()}>")
    elif not exchange.arrivals:
        lines.append("<no reply>")
    return tuple(lines)


MAX_BODY_CHARS = 200


def body_text(http: HttpReply) -> str:
    """The start of an HTTP body that held no JSON-RPC message, as one line of text ("" when there is none)."""
    if http.messages or not http.body:
        return ""
    return " ".join(http.body.decode("utf-8", "replace").split())[:MAX_BODY_CHARS]


def to_finding(failure: Failure, exchange: Exchange, cause: Cause | None = None) -> Finding:
    """A finding with its reproduction frames, filed under its cause."""
    case = exchange.case
    cause = cause or cause_of(failure, case)
    server_wide = failure.server_wide or cause.scope == SERVER
    return Finding(
        oracle=failure.oracle, severity=failure.severity, title=failure.title, message=failure.message,
        target=case.target, case_title=case.title, expected=case.expect.describe(),
        frames=tuple(exchange.frames), received=received_lines(exchange), key=cause.key,
        tool=call.tool if (call := case.expect.part(ToolCallCheck)) is not None else None,
        stderr_tail=exchange.crash.stderr_tail if exchange.crash else "",
        stderr_context=exchange.crash.stderr_context if exchange.crash else "", case=case, era=exchange.era.value,
        protocol_version=exchange.protocol_version, server_wide=server_wide,
        also_judged=failure.also_judged, grouped=tuple(fingerprint_of(*key) for key in failure.folded),
        folded=tuple((oracle, key) for oracle, _scope, key in failure.folded),
        scope="" if cause.scope in (SERVER, case.target) else cause.scope)


def fold_consequences(exchange: Exchange, failures: list[Failure]) -> list[Failure]:
    """One frame, one cause: when the frame's own judge failed, the failures that follow from it (FOLDED_INTO_JUDGE)
    are named in the judge's failure instead of standing as findings of their own."""
    judge = exchange.case.expect.judge
    ruling = next((f for f in failures if f.oracle == judge), None)
    if ruling is None:
        return failures
    folded = [f for f in failures if f.oracle != judge and _follows_from_judge(f)]
    if not folded:
        return failures
    ruling.also_judged = tuple(dict.fromkeys((*ruling.also_judged, *(f.oracle for f in folded))))
    ruling.message += "".join(f"; {f.oracle} judged the same frame: {f.message}" for f in folded)
    ruling.folded = (*ruling.folded, *(FindingSet.key_of(f, exchange) for f in folded))
    return [f for f in failures if f not in folded]


def _follows_from_judge(failure: Failure) -> bool:
    """True for a failure FOLDED_INTO_JUDGE names: its oracle, with any key or one of the keys listed."""
    if failure.oracle not in FOLDED_INTO_JUDGE:
        return False
    keys = FOLDED_INTO_JUDGE[failure.oracle]
    return keys is None or failure.key in keys


def observed_finding(failure: Failure, received: tuple[str, ...], era: str, version: str,
                     expected: str = "the server keeps answering with flat memory") -> Finding:
    """A finding seen over many requests (a leak, a server that stopped answering): no single case replays it."""
    return Finding(
        oracle=failure.oracle, severity=failure.severity, title=failure.title, message=failure.message,
        target="server", case_title="observed over the run, not on one frame",
        expected=expected, frames=(), received=received, key=failure.key,
        era=era, protocol_version=version, observed=True, server_wide=True)


def frames_through(target: str) -> str:
    """`tool/search` -> `frames/tool-calls`: the frames a frame reader's finding was seen on, without the tool they
    called (the reader refused the frame before any tool ran)."""
    return f"frames/{target.partition('/')[0]}-calls"


def finding_key(finding: Finding) -> FindingKey:
    """The key `FindingSet` files a finding under (what makes two findings the same bug)."""
    return finding.oracle, finding.where, finding.key


@dataclass
class _Evidence:
    """One sample as it is gathered: how often it showed, where first, what it showed, its smallest frames."""

    count: int
    target: str
    detail: str
    frames: tuple[bytes, ...]

    def sample(self, evidence: str) -> Sample:
        return Sample(evidence, self.count, self.target, self.detail, self.frames)


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
        self._samples: dict[FindingKey, dict[str, _Evidence]] = {}
        self._evidence_seen: dict[FindingKey, set[str]] = {}  # distinct evidence, counted up to MAX_COUNTED
        self._legacy: dict[FindingKey, dict[str, None]] = {}
        self._through: set[FindingKey] = set()  # frame readers' findings no frame of their own has shown yet
        self._redactor = redactor

    @staticmethod
    def key_of(failure: Failure, exchange: Exchange) -> FindingKey:
        """What makes two failures the same bug: oracle, where the fix goes, and what failed (engine/causes.py)."""
        cause = cause_of(failure, exchange.case)
        return failure.oracle, cause.scope, cause.key

    def add(self, failure: Failure, exchange: Exchange) -> Finding | None:
        """Record a failure; return the finding when it is new (a smaller repeat becomes the reproducer)."""
        target = exchange.case.target
        cause = cause_of(failure, exchange.case)
        key = failure.oracle, cause.scope, cause.key
        if claims(failure.oracle, target):
            self._occurred(key, Occurrence(target, failure.detail))
            self._sampled(key, cause, failure, exchange)
        known = self._by_key.get(key)
        if known is None and not claims(failure.oracle, target):
            # A frame reader's finding seen first through a tool's frame: filed under the frames that reach the
            # tool, never under the tool, until a frame of its own shows it.
            finding = replace(to_finding(failure, exchange, cause), target=frames_through(target), tool=None)
            self._by_key[key] = finding
            self._through.add(key)
            return finding
        if known is not None and not claims(failure.oracle, target):
            return None  # a frame reader's finding seen again through a tool's frame: the tool is not a place of it
        if known is not None and (key in self._through or not claims(failure.oracle, known.target)):
            # First seen through a tool's frame: a frame of its own leads from now on.
            self._through.discard(key)
            self._by_key[key] = to_finding(failure, exchange, cause)
            return None
        if known is not None:
            if failure.severity > known.severity:
                # One root cause seen at its worst here (a valid request, not only malformed ones): this
                # exchange becomes the reproducer and carries the severity; the earlier target is listed.
                self._by_key[key] = to_finding(failure, exchange, cause)
                also = self._also.setdefault(key, [])
                if known.target != target and known.target not in also:
                    also.append(known.target)
            elif target == known.target and _size(exchange.frames) < _size(known.frames):
                self._by_key[key] = to_finding(failure, exchange, cause)
            elif target != known.target:
                also = self._also.setdefault(key, [])
                if target not in also:
                    also.append(target)
            return None
        finding = to_finding(failure, exchange, cause)
        self._by_key[key] = finding
        return finding

    def _sampled(self, key: FindingKey, cause: Cause, failure: Failure, exchange: Exchange) -> None:
        """Count the failure's evidence; keep the first MAX_SAMPLES kinds, each with its smallest frames; remember
        the identity older versions gave it."""
        legacy = fingerprint_of(failure.oracle, *cause.legacy)
        if cause.legacy != key[1:]:
            known = self._legacy.setdefault(key, {})
            if len(known) < MAX_LEGACY:
                known[legacy] = None
        kept = self._samples.setdefault(key, {})
        evidence = kept.get(cause.evidence)
        if evidence is not None:
            evidence.count += 1
            if _size(exchange.frames) < _size(evidence.frames):
                evidence.frames = tuple(exchange.frames)
            return
        seen = self._evidence_seen.setdefault(key, set())
        if len(seen) < MAX_COUNTED:
            seen.add(cause.evidence)
        if len(kept) < MAX_SAMPLES:
            detail = failure.detail or (failure.message.splitlines() or [""])[0][:200]
            kept[cause.evidence] = _Evidence(1, exchange.case.target, detail, tuple(exchange.frames))

    def _absorb(self, key: FindingKey, finding: Finding) -> None:
        """Take in what another record of the cause gathered (another worker's, an earlier session's): its
        occurrences, its samples and the identities it answers for."""
        for occurrence in finding.occurrences:
            self._occurred(key, occurrence)
        kept = self._samples.setdefault(key, {})
        for sample in finding.samples:
            evidence = kept.get(sample.evidence)
            if evidence is not None:
                evidence.count += sample.count
            elif len(kept) < MAX_SAMPLES:
                kept[sample.evidence] = _Evidence(sample.count, sample.target, sample.detail, sample.frames)
        if finding.samples:
            seen = self._evidence_seen.setdefault(key, set())
            seen.update(sample.evidence for sample in finding.samples)
        legacy = self._legacy.setdefault(key, {})
        for fingerprint in finding.grouped:
            if len(legacy) < MAX_LEGACY:
                legacy[fingerprint] = None

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
            self._absorb(key, finding)
        self._by_key.setdefault(key, finding)

    def merge(self, finding: Finding) -> Finding | None:
        """Add another worker's finding; the smaller reproducer of two wins. Returns it when it is new."""
        key = finding_key(finding)
        self._absorb(key, finding)
        known = self._by_key.get(key)
        if known is None:
            self._by_key[key] = finding
            return finding
        lead = finding if not finding.observed and _size(finding.frames) < _size(known.frames) else known
        self._by_key[key] = lead
        # Each worker saw the cause on targets of its own: the merged finding names them all.
        seen = (known.target, *known.also_on, *self._also.get(key, ()), finding.target, *finding.also_on)
        self._also[key] = [target for target in dict.fromkeys(seen)
                           if target != lead.target and claims(lead.oracle, target)]
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
            samples = self._samples.get(key)
            if samples:
                finding = replace(finding, samples=tuple(e.sample(name) for name, e in samples.items()),
                                  sample_count=max(len(self._evidence_seen.get(key, ())), len(samples)))
            legacy = self._legacy.get(key)
            if legacy:
                finding = replace(finding, grouped=tuple(dict.fromkeys(
                    (*finding.grouped, *(f for f in legacy if f != finding.fingerprint)))))
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
    cause: findings of one oracle and key on one tool become one, led by the tool's own target. A finding filed
    for every tool (`tool/*`) takes in the frames calling any of its tools.

    SDK-marked findings are left to `group_by_upstream`; a finding whose frame names no tool stays as it is.
    """
    every_tool: dict[tuple[str, str, str], Hashable] = {}
    for finding in findings:
        if finding.scope == "tool/*" and finding.upstream is None:
            for target in (finding.target, *finding.also_on):
                if target.startswith("tool/"):
                    every_tool[finding.oracle, finding.key, target.removeprefix("tool/")] = \
                        (finding.oracle, finding.key, finding.scope)

    def cause(finding: Finding) -> Hashable | None:
        if finding.upstream is not None or finding.rule or finding.server_wide or finding.observed:
            return None
        if finding.scope == "tool/*":
            return finding.oracle, finding.key, finding.scope
        tool = finding_tool(finding)
        if tool is None:
            return None
        return every_tool.get((finding.oracle, finding.key, tool), (finding.oracle, finding.key, tool))

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


def name_the_share(findings: tuple[Finding, ...], called: Iterable[str]) -> tuple[Finding, ...]:
    """A finding filed for every target of a kind says how many of the kind's targets it showed on: `3 of 16 tools:
    invalid arguments were accepted ...` (`called`: the labels of the targets the run called)."""
    labels = set(called)
    named = []
    for finding in findings:
        kind = finding.scope.removesuffix("/*") if finding.scope.endswith("/*") else ""
        if kind:
            on = {t for t in (finding.target, *finding.also_on) if t.startswith(kind + "/")}
            total = max(len(on), sum(1 for label in labels if label.startswith(kind + "/")))
            message = _SHARE.sub("", finding.message, count=1)  # a worker's count, said again for the whole run
            finding = replace(finding, message=f"{len(on)} of {total} {kind_noun(kind, total)}: {message}")
        named.append(finding)
    return tuple(named)


_SHARE = re.compile(r"^\d+ of \d+ [\w-]+s: ")
