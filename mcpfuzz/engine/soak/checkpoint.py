"""A soak's checkpoint: seed, slice counter, counters and findings so far, written atomically, read on --resume."""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from mcpfuzz.corpus.redact import Redactor
from mcpfuzz.corpus.store import write_json_atomic
from mcpfuzz.engine.events import Finding
from mcpfuzz.engine.judge import FindingKey
from mcpfuzz.engine.transcripts import to_transcript
from mcpfuzz.jsonrpc.case_json import CaseFormatError, case_from_json, frame_from_json
from mcpfuzz.oracles.base import Severity
from mcpfuzz.transport.target import TargetDescription

KIND = "mcpfuzz-soak-checkpoint"
FORMAT = 1


class CheckpointError(Exception):
    """A checkpoint that cannot be resumed from: what is wrong, where, and a tip."""

    def __init__(self, path: Path, problem: str, tip: str) -> None:
        super().__init__(f"cannot resume from {path}: {problem}\ntip: {tip}")


@dataclass
class Checkpoint:
    """What a soak must remember to go on where it stopped, without sending the same inputs again."""

    seed: int
    server: str  # the server's label (command line or URL): resuming against another server is refused
    slices: int = 0  # slices run so far: the next slice's seeds continue from here
    elapsed: float = 0.0  # seconds of soaking already done (all earlier sessions together)
    resumes: int = 0
    stopped: str = ""
    complete: bool = False
    stats: dict[str, Any] = field(default_factory=dict)
    scores: dict[str, float] = field(default_factory=dict)
    findings: list[tuple[FindingKey, Finding]] = field(default_factory=list)


def finding_to_json(key: FindingKey, finding: Finding, server: TargetDescription, seed: int,
                    redactor: Redactor) -> dict[str, Any]:
    """A finding as its transcript (secrets redacted) plus what the soak needs to merge it again."""
    data = to_transcript(finding, command=server, seed=seed, redactor=redactor)
    data.update(finding_key=list(key), known=finding.known, observed=finding.observed, server_wide=finding.server_wide,
                stderr_tail=redactor.text(finding.stderr_tail), scope=finding.scope, grouped=list(finding.grouped))
    return data


def finding_from_json(data: dict[str, Any]) -> tuple[FindingKey, Finding]:
    """The finding of `finding_to_json` (CaseFormatError, KeyError or ValueError when it is damaged)."""
    frames = tuple(frame_from_json(frame) for frame in data.get("frames") or [])
    case = case_from_json(data["case"], list(frames)) if data.get("case") else None
    protocol = data.get("protocol") or {}
    key = data["finding_key"]
    if not (isinstance(key, list) and len(key) == 3 and all(isinstance(part, str) for part in key)):
        raise ValueError("finding_key must be three strings")
    finding = Finding(
        oracle=str(data["oracle"]), severity=Severity.parse(str(data["severity"])), title=str(data["title"]),
        message=str(data["message"]), target=str(data["target"]), case_title=str(data.get("case_title", "")),
        expected=str(data.get("expected", "")), frames=frames, received=tuple(map(str, data.get("received", []))),
        key=str(data.get("key", "")), tool=data.get("tool"), stderr_tail=str(data.get("stderr_tail", "")), case=case,
        era=str(protocol.get("era", "")), protocol_version=str(protocol.get("version", "")),
        reproducible=data.get("reproducible"), known=bool(data.get("known")), observed=bool(data.get("observed")),
        server_wide=bool(data.get("server_wide")), scope=str(data.get("scope") or ""),
        grouped=tuple(str(g) for g in data.get("grouped") or ()))
    return (key[0], key[1], key[2]), finding


def write_checkpoint(path: Path, checkpoint: Checkpoint, server: TargetDescription, redactor: Redactor) -> None:
    """Write the checkpoint so that a kill at any moment leaves the previous one or this one."""
    data = {
        "kind": KIND, "format": FORMAT, "seed": checkpoint.seed, "server": redactor.text(checkpoint.server),
        "server_target": server.to_json(redactor), "slices": checkpoint.slices,
        "elapsed_s": round(checkpoint.elapsed, 3), "resumes": checkpoint.resumes, "stopped": checkpoint.stopped,
        "complete": checkpoint.complete, "stats": checkpoint.stats, "scores": checkpoint.scores,
        "findings": [finding_to_json(key, finding, server, checkpoint.seed, redactor)
                     for key, finding in checkpoint.findings],
    }
    path.parent.mkdir(parents=True, exist_ok=True)
    write_json_atomic(path, data)


def mark_stopped(path: Path, reason: str) -> None:
    """Say in the checkpoint at `path` why its soak stopped, unless it says so already; everything else as the
    last write left it (a soak ended by force keeps its last state). A missing or unreadable file is left alone."""
    try:
        data = json.loads(path.read_bytes())
    except (OSError, ValueError):
        return
    if isinstance(data, dict) and data.get("kind") == KIND and not data.get("stopped"):
        write_json_atomic(path, {**data, "stopped": reason})


def read_checkpoint(path: Path) -> Checkpoint:
    """The checkpoint at `path`; CheckpointError (with a tip) when it is missing or damaged."""
    try:
        data = json.loads(path.read_bytes())
    except FileNotFoundError:
        raise CheckpointError(path, "there is no checkpoint there",
                              "start without --resume (a soak writes its checkpoint every minute), or point "
                              "--checkpoint at the file an earlier soak wrote") from None
    except (OSError, ValueError) as error:
        raise CheckpointError(path, f"it cannot be read as JSON ({error})",
                              "delete it and start the soak without --resume") from None
    if not isinstance(data, dict) or data.get("kind") != KIND:
        raise CheckpointError(path, "it is not a mcpfuzz soak checkpoint", "check the --checkpoint path")
    if data.get("format") != FORMAT:
        raise CheckpointError(path, f"its format {data.get('format')!r} is not {FORMAT}",
                              "it was written by another mcpfuzz version; start without --resume")
    try:
        findings = [finding_from_json(item) for item in data.get("findings") or []]
        scores = {str(name): _count(score, f"score of {name}") for name, score in (data.get("scores") or {}).items()}
        return Checkpoint(
            seed=int(data["seed"]), server=str(data["server"]), slices=int(_count(data.get("slices", 0), "slices")),
            elapsed=_count(data.get("elapsed_s", 0.0), "elapsed_s"), resumes=int(_count(data.get("resumes", 0),
                                                                                          "resumes")),
            stopped=str(data.get("stopped") or ""), complete=bool(data.get("complete")),
            stats=dict(data.get("stats") or {}), scores=scores, findings=findings)
    except (KeyError, TypeError, ValueError, CaseFormatError) as error:
        raise CheckpointError(path, f"it is damaged ({type(error).__name__}: {error})",
                              "delete it and start the soak without --resume") from None


def _count(value: object, what: str) -> float:
    """A number a checkpoint holds: finite and not negative (a resumed soak computes its budget from it)."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise ValueError(f"{what} is {value!r}, not a number")
    if not math.isfinite(value) or value < 0:
        raise ValueError(f"{what} is {value!r}, not a finite number of at least 0")
    return float(value)
