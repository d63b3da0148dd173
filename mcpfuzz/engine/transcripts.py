"""Findings as corpus transcripts (secrets redacted), and transcripts back as replayable cases."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from mcpfuzz.corpus.redact import Redactor
from mcpfuzz.corpus.store import CorpusStore
from mcpfuzz.engine.events import Finding
from mcpfuzz.engine.security.workspace import layout_from_json, layout_to_json
from mcpfuzz.jsonrpc.case_json import CaseFormatError, case_from_json, case_to_json, frame_from_json, frame_to_json
from mcpfuzz.jsonrpc.frame import Case
from mcpfuzz.jsonrpc.versions import Era
from mcpfuzz.strategies.payloads.canaries import CanaryLayout
from mcpfuzz.transport.connect import ServerTarget, target_from_json
from mcpfuzz.transport.target import TargetDescription


@dataclass(frozen=True)
class Replayable:
    """A transcript read back: the case to run, its era, and what it found before."""

    path: Path
    case: Case
    era: Era
    version: str
    oracle: str
    key: str
    server: ServerTarget | None  # None: the transcript names no server
    message: str
    # A --security run's folders as its frames name them: a replay needs a workspace of its own in their place.
    security: CanaryLayout | None = None


def to_transcript(finding: Finding, *, command: TargetDescription, seed: int, redactor: Redactor,
                  security: CanaryLayout | None = None) -> dict[str, Any]:
    """A finding as a human-readable transcript; frames keep their exact bytes (known secrets aside).

    A --security run gives `command` with `{workspace}` unexpanded and its `security` folders, which the frames
    name and which are gone once the run ends."""
    frames = [frame_to_json(frame) for frame in finding.frames]
    # Frames are ours, but a stateful sequence may reuse a value the server returned: known secrets
    # only, so that token-shaped fuzz strings still replay byte for byte.
    frames = [redactor.known(f) if isinstance(f, str) else f for f in frames]
    transcript = {
        "target": finding.target,
        "oracle": finding.oracle,
        "fingerprint": finding.fingerprint,
        "severity": str(finding.severity),
        "title": finding.title,
        "message": redactor.text(finding.message),
        "key": redactor.text(finding.key),  # built from server text (a crash's exception line)
        "tool": finding.tool,
        "case_title": redactor.text(finding.case_title),
        "expected": finding.expected,
        "received": [redactor.text(line) for line in finding.received],
        "stderr_tail": redactor.text(finding.stderr_tail),
        "reproducible": finding.reproducible,
        "status": "failing",
        "seed": seed,
        "server": command.to_json(redactor),
        "protocol": {"era": finding.era, "version": finding.protocol_version},
        "case": case_to_json(finding.case) if finding.case is not None else None,
        "frames": frames,
    }
    if security is not None:
        transcript["security"] = layout_to_json(security)
    return transcript


def save_findings(store: CorpusStore, findings: list[Finding], *, command: TargetDescription, seed: int,
                  redactor: Redactor, counted: set[str] | None = None,
                  security: CanaryLayout | None = None, written: dict[str, tuple[str, str]] | None = None
                  ) -> dict[str, str]:
    """Write one transcript per finding (the same failure updates its file); fingerprint -> path.

    `counted` holds the fingerprints this run has already written: writing one again (a smaller
    reproducer, the verdict of its re-run) does not count as another run that saw it. `written` holds what this
    run last wrote for each fingerprint (its text and path): a transcript that has not changed since is not
    written again.
    """
    paths: dict[str, str] = {}
    pending: list[tuple[str, str, dict]] = []
    for finding in findings:
        if finding.case is None:
            continue
        transcript = to_transcript(finding, command=command, seed=seed, redactor=redactor, security=security)
        text = json.dumps(transcript, sort_keys=True, default=str)
        last = written.get(finding.fingerprint) if written is not None else None
        if last is not None and last[0] == text and Path(last[1]).is_file():
            paths[finding.fingerprint] = last[1]
            continue
        pending.append((finding.fingerprint, text, transcript))
    saved = store.save_many([(transcript, counted is None or fingerprint not in counted)
                             for fingerprint, _, transcript in pending])
    for (fingerprint, text, _), (path, _) in zip(pending, saved, strict=True):
        if counted is not None:
            counted.add(fingerprint)
        if written is not None:
            written[fingerprint] = (text, str(path))
        paths[fingerprint] = str(path)
    return paths


def from_transcript(path: Path, data: dict) -> Replayable:
    """A transcript as a case to replay (CaseFormatError when it cannot be)."""
    raw_frames = data.get("frames")
    if not isinstance(raw_frames, list) or not raw_frames:
        raise CaseFormatError("the transcript has no frames")
    frames = [frame_from_json(frame) for frame in raw_frames]
    case = case_from_json(data.get("case"), frames)
    protocol = _dict(data.get("protocol"))
    try:
        era = Era(protocol.get("era") or "legacy")
    except ValueError:
        raise CaseFormatError(f"unknown protocol era {protocol.get('era')!r}") from None
    server = _dict(data.get("server"))
    return Replayable(path, case, era, str(protocol.get("version") or ""), str(data.get("oracle")),
                      str(data.get("key", "")), target_from_json(server), str(data.get("message", "")),
                      layout_from_json(data.get("security")))


def _dict(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}
