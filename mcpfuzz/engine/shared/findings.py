"""Findings shared across machines, one record per fingerprint; the first to find or verify one writes it.

A finding's record is a Redis hash `PREFIX:finding:<fingerprint>`: `owner` (the machine that
found it first), `found` (its transcript as first found) and `verified` (the transcript of the first
machine whose re-run on a fresh server failed again). Each field is set with HSETNX, so two machines
that find or verify the same bug at once write it once; every other machine counts it as known.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, replace
from typing import Any

from mcpfuzz.corpus.redact import Redactor
from mcpfuzz.engine.events import Finding
from mcpfuzz.engine.judge import FindingKey, finding_key
from mcpfuzz.engine.shared.link import SharedLink
from mcpfuzz.engine.soak.checkpoint import finding_from_json, finding_to_json
from mcpfuzz.transport.target import TargetDescription

OWNER, FOUND, VERIFIED, VERIFIED_BY = "owner", "found", "verified", "verified_by"


@dataclass(frozen=True)
class Publisher:
    """What a machine writes with its findings: who it is, its server and seed, and how to redact."""

    machine: str
    server: TargetDescription
    seed: int
    redactor: Redactor


def publish(link: SharedLink, publisher: Publisher, findings: list[Finding]) -> dict[str, str] | None:
    """Write each finding once (first finder, first verifier); fingerprint -> owner, or None when Redis is down."""
    if not findings:
        return {}
    index, ttl = link.key("findings"), int(link.options.ttl)

    def write(client: Any) -> list[Any]:
        pipe = client.pipeline(transaction=True)
        for finding in findings:
            key = link.key("finding", finding.fingerprint)
            data = json.dumps(_as_json(finding, publisher), ensure_ascii=True)
            pipe.hsetnx(key, OWNER, publisher.machine)
            pipe.hsetnx(key, FOUND, data)
            if finding.reproducible:
                pipe.hsetnx(key, VERIFIED, data)
                pipe.hsetnx(key, VERIFIED_BY, publisher.machine)
            pipe.expire(key, ttl)
            pipe.hget(key, OWNER)
            pipe.sadd(index, finding.fingerprint)
        pipe.expire(index, ttl)
        return list(pipe.execute())

    answers = link.call(write)
    if answers is None:
        return None
    owners: dict[str, str] = {}
    position = 0
    for finding in findings:
        position += 5 if finding.reproducible else 3  # the HSETNX and EXPIRE answers before the owner
        owners[finding.fingerprint] = _text(answers[position])
        position += 2  # the owner, then SADD
    return owners


def _as_json(finding: Finding, publisher: Publisher) -> dict[str, Any]:
    data = finding_to_json(finding_key(finding), finding, publisher.server, publisher.seed, publisher.redactor)
    data["machine"] = publisher.machine
    return data


def _text(value: Any) -> str:
    return value.decode() if isinstance(value, bytes) else str(value or "")


@dataclass(frozen=True)
class SharedFinding:
    """One finding as the shared store holds it: the best transcript, who found it, who verified it."""

    key: FindingKey
    finding: Finding
    transcript: dict[str, Any]
    owner: str
    verified_by: str


def read_findings(link: SharedLink) -> list[SharedFinding]:
    """Every finding in the store (the verified transcript where there is one), in fingerprint order."""
    client = link.client
    fingerprints = sorted(_text(f) for f in client.smembers(link.key("findings")))
    pipe = client.pipeline(transaction=False)
    for fingerprint in fingerprints:
        pipe.hgetall(link.key("finding", fingerprint))
    result = []
    for record in pipe.execute():
        fields = {_text(name): value for name, value in record.items()}
        raw = fields.get(VERIFIED) or fields.get(FOUND)
        if raw is None:
            continue  # expired between the two reads
        data = json.loads(raw)
        key, finding = finding_from_json(data)
        if fields.get(VERIFIED) is not None:
            finding = replace(finding, reproducible=True)
        result.append(SharedFinding(key, finding, data, _text(fields.get(OWNER)), _text(fields.get(VERIFIED_BY))))
    return result
