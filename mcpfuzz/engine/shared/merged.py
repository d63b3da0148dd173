"""What the shared store holds, read back as one: the live machines, and one report of every machine's work."""

from __future__ import annotations

import json
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from mcpfuzz.corpus.store import CorpusStore
from mcpfuzz.engine.events import RunFinished, Stats, StopReason
from mcpfuzz.engine.shared.findings import SharedFinding, read_findings
from mcpfuzz.engine.shared.link import SharedLink
from mcpfuzz.transport.connect import ServerTarget, target_from_json

# Fields of a finding record that only the merge needs: not part of a corpus transcript.
MERGE_FIELDS = ("finding_key", "known", "observed", "server_wide", "scope", "grouped", "machine")


@dataclass(frozen=True)
class Machine:
    """One process's last heartbeat."""

    record: dict[str, Any]

    @property
    def seen_ago(self) -> float:
        """Seconds since its last heartbeat."""
        return max(0.0, time.time() - float(self.record.get("last_seen") or 0))


def read_machines(link: SharedLink) -> list[Machine]:
    """The processes whose heartbeat has not expired, by worker number."""
    client = link.client
    keys = sorted(client.scan_iter(match=link.key("machine", "*"), count=500))
    values = client.mget(keys) if keys else []
    machines = [Machine(json.loads(value)) for value in values if value is not None]
    return sorted(machines, key=lambda m: (m.record.get("number") is None, m.record.get("number") or 0))


def read_counters(link: SharedLink) -> dict[str, int]:
    """The fleet's counters: worker numbers and slices handed out, findings stored."""
    client = link.client
    workers, slices = client.mget([link.key("workers"), link.key("slices")])
    return {"workers": int(workers or 0), "slices": int(slices or 0),
            "findings": int(client.scard(link.key("findings")))}


@dataclass(frozen=True)
class Merged:
    """Every machine's work as one run: the outcome reporters take, and the server it was on."""

    finished: RunFinished
    server: ServerTarget | None
    server_label: str
    seed: int
    findings: list[SharedFinding]


def merge(link: SharedLink) -> Merged:
    """One outcome of the whole shared search: each finding once, counters of every machine summed."""
    client = link.client
    findings = read_findings(link)
    meta = {_text(k): _text(v) for k, v in client.hgetall(link.key("meta")).items()}
    records = [json.loads(v) for v in client.hgetall(link.key("runs")).values()]
    records += [m.record for m in read_machines(link) if m.record.get("state") == "running"]
    stats = Stats()
    stats.cases = sum(int(r.get("cases") or 0) for r in records)
    # The fleet's wall-clock span: from the first start to the last heartbeat.
    stats.duration = max((float(r.get("last_seen") or 0) for r in records), default=0.0) - \
        min((float(r.get("started") or 0) for r in records), default=0.0)
    stats.soak = {"machines": len(records), "slices": read_counters(link)["slices"], "per_machine": [
        {key: r.get(key) for key in ("machine", "number", "cases", "findings", "state", "redis_outages")}
        for r in records]}
    versions = [r.get("protocol_version") for r in records if r.get("protocol_version")]
    server = next((target_from_json(f.transcript["server"]) for f in findings
                   if isinstance(f.transcript.get("server"), dict)), None)
    finished = RunFinished(stats, tuple(f.finding for f in findings), versions[0] if versions else None,
                           next((f.finding.era for f in findings if f.finding.era), None), StopReason.NONE)
    return Merged(finished, server, meta.get("server", ""), int(meta.get("seed") or 0), findings)


def export_corpus(findings: list[SharedFinding], folder: Path) -> dict[str, str]:
    """Write every replayable finding as a corpus transcript in `folder`; fingerprint -> path."""
    store = CorpusStore(folder)
    paths = {}
    for shared in findings:
        if shared.finding.case is None:
            continue  # observed over many requests: nothing to replay
        transcript = {k: v for k, v in shared.transcript.items() if k not in MERGE_FIELDS}
        transcript["reproducible"] = shared.finding.reproducible
        path, _ = store.save(transcript)
        paths[shared.finding.fingerprint] = str(path)
    return paths


def _text(value: Any) -> str:
    return value.decode() if isinstance(value, bytes) else str(value)
