"""Replies to frames that want none, one cause when the server answers every kind alike.

`notification-silent` files a reply to a notification and a reply to a response object sent to the server as two
causes (`replied:notification`, `replied:response`): a dispatcher may answer one kind and not the other. A server
that answers both with the same reply (a result, or an error with one code) is answering every message without an
`id` in one place: one finding, led by the notifications', with both kinds' frames among its samples and the
response finding's identity kept in `grouped` (a baseline that accepted it still does). Replies that differ, or
only one kind answered, stay apart.
"""

from __future__ import annotations

import json
from dataclasses import replace

from mcpfuzz.engine.events import Finding
from mcpfuzz.engine.judge import MAX_OCCURRENCES, MAX_SAMPLES, with_also_on
from mcpfuzz.jsonrpc.oracle_ids import OracleId

NOTIFICATION_KEY = "replied:notification"
RESPONSE_KEY = "replied:response"
ReplyShape = tuple[str, object]  # ("result", None) or ("error", its code)


def group_replied_frames(findings: tuple[Finding, ...]) -> tuple[Finding, ...]:
    """The replies to notifications and to response objects as one finding when both showed the same reply."""
    lead = _replied(findings, NOTIFICATION_KEY)
    other = _replied(findings, RESPONSE_KEY)
    if lead is None or other is None or lead.upstream != other.upstream:
        return findings
    shape = reply_shape(lead)
    if shape is None or shape != reply_shape(other):
        return findings
    merged = _merged(lead, other)
    return tuple(merged if finding is lead else finding for finding in findings if finding is not other)


def reply_shape(finding: Finding) -> ReplyShape | None:
    """What the first reply a finding received was: a result, or an error and its code (None: no readable reply)."""
    for line in finding.received:
        try:
            message = json.loads(line)
        except ValueError:
            continue
        if not isinstance(message, dict):
            continue
        if "error" in message:
            error = message["error"]
            return "error", error.get("code") if isinstance(error, dict) else None
        if "result" in message:
            return "result", None
    return None


def _replied(findings: tuple[Finding, ...], key: str) -> Finding | None:
    """The server-wide reply finding of one kind of frame, if the run has one."""
    return next((f for f in findings if f.oracle == OracleId.NOTIFICATION_SILENT.value and f.key == key
                 and not f.rule), None)


def _merged(lead: Finding, other: Finding) -> Finding:
    """`lead` carrying `other`: both messages, both kinds' samples (at least one of each), every target."""
    message = f"{_own_message(lead)}; {_own_message(other)}"
    room = MAX_SAMPLES - min(1, len(other.samples))
    samples = (*lead.samples[:room], *other.samples[:MAX_SAMPLES - min(room, len(lead.samples))])
    occurrences = tuple(dict.fromkeys((*lead.occurrences, *other.occurrences)))[:MAX_OCCURRENCES]
    grouped = tuple(dict.fromkeys(g for g in (*lead.grouped, other.fingerprint, *other.grouped)
                                  if g != lead.fingerprint))
    also = tuple(dict.fromkeys(t for t in (*lead.also_on, other.target, *other.also_on) if t != lead.target))
    merged = replace(lead, message=message, also_on=(), samples=samples, grouped=grouped, occurrences=occurrences,
                     sample_count=(lead.sample_count or len(lead.samples)) + (other.sample_count or len(other.samples)),
                     occurrence_count=(lead.occurrence_count or 1) + (other.occurrence_count or 1),
                     severity=max(lead.severity, other.severity))
    return with_also_on(merged, also)


def _own_message(finding: Finding) -> str:
    """A finding's message without the targets `with_also_on` listed after it."""
    return finding.message.rsplit(" (also on ", 1)[0] if finding.also_on else finding.message
