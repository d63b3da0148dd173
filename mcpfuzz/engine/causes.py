"""Where the fix goes: a failure's cause, (scope, key), read from its structure, never from its message.

An oracle's key names what failed (a code, a rule, a result's shape); this module decides where that failure's fix
belongs, so that one fix is one finding:

- stdout noise: the process writing to stdout is the one writer to fix, whatever it printed. One finding per
  server; each line's shape is evidence (a sample), not a cause.
- an oracle of how the server's shared machinery treats a class of input (argument validation, error mapping,
  result shapes): the same key on many targets of one kind is one cause, `tool/*`, naming the targets. A key that
  differs (another error code, another place in a result) is another cause.
- a reply to a frame that wants none: one cause per kind of frame (notifications, responses), whatever the method.
- anything else keeps the identity its oracle gave it: its target, or the whole server when the oracle says so.

A finding of how the server reads a frame (its parse, its envelope) is the frame reader's: it names the frames it
showed on, never a tool, resource or prompt a mutated frame happened to call (`claims`).

The identity a failure had before (its target, its oracle's key) stays known as `legacy`, so a baseline written
then still accepts its cause.
"""

from __future__ import annotations

import json
from dataclasses import dataclass

from mcpfuzz.jsonrpc.frame import Case
from mcpfuzz.jsonrpc.oracle_ids import OracleId
from mcpfuzz.jsonrpc.target_kind import TargetKind
from mcpfuzz.oracles.base import Failure

SERVER = "*"
NOISE_PREFIX = "noise:"
NOISE_KEY = "noise"
SHAPE_LENGTH = 40  # of a noise line's shape: its first words, enough to tell statements apart in a sample list
# Oracles judging what the server's shared code does with a class of input: the same failure on many targets of
# one kind is the shared code's, one fix. Oracles of a target's own behaviour (its annotations, its time, what it
# does with a path or a command) stay per target.
ACROSS_TARGETS = frozenset({
    OracleId.INVALID_PARAMS.value, OracleId.VALID_INPUT_ACCEPTED.value, OracleId.OUTPUT_SCHEMA.value,
    OracleId.RESPONSE_SCHEMA.value, OracleId.RESOURCE_NOT_FOUND.value,
})

# Oracles of how the server reads a frame, whatever the frame asks for: the fix is in the frame reader.
FRAME_LEVEL = frozenset({OracleId.PARSE_ERROR.value, OracleId.INVALID_REQUEST.value})
CALLABLE_KINDS = frozenset(kind.value for kind in TargetKind)  # what a server declares, as opposed to frame families


@dataclass(frozen=True)
class Cause:
    """A failure's identity within its oracle: where the fix goes (`scope`) and what failed (`key`); `evidence`
    tells its occurrences apart in the finding's samples; `legacy` is the (scope, key) older versions filed it
    under."""

    scope: str
    key: str
    evidence: str
    legacy: tuple[str, str]


def cause_of(failure: Failure, case: Case) -> Cause:
    """The cause of one failure on one case."""
    own_scope = SERVER if failure.server_wide else case.target
    legacy = (own_scope, failure.key)
    if failure.oracle == OracleId.STDOUT_CLEAN.value and failure.key.startswith(NOISE_PREFIX):
        return Cause(SERVER, NOISE_KEY, line_shape(failure.key.removeprefix(NOISE_PREFIX)), legacy)
    if failure.oracle == OracleId.NOTIFICATION_SILENT.value and not failure.server_wide:
        return Cause(SERVER, f"{failure.key}:{frame_kind(case)}", case.target, legacy)
    if failure.oracle in ACROSS_TARGETS and not failure.server_wide:
        return Cause(kind_scope(case.target), failure.key, case.target, legacy)
    return Cause(own_scope, failure.key, case.target, legacy)


def claims(oracle: str, target: str) -> bool:
    """Whether a finding of `oracle` names `target` among the places its cause showed: a frame reader's finding
    names frames, not the tools (resources, prompts) a mutated frame called."""
    return oracle not in FRAME_LEVEL or target.partition("/")[0] not in CALLABLE_KINDS


def kind_noun(kind: str, count: int) -> str:
    """A target kind as a counted noun: `1 tool`, `2 tools`, `params` either way."""
    return kind if count == 1 or kind.endswith("s") else f"{kind}s"


def kind_scope(target: str) -> str:
    """`tool/search` -> `tool/*`: every target of the kind; a frame of the catalogue (`params/string`) or a target
    without a kind is its own scope (a family of frames is no kind of target a server declares)."""
    kind, slash, _ = target.partition("/")
    return f"{kind}/*" if slash and kind in CALLABLE_KINDS else target


def line_shape(template: str) -> str:
    """A noise line's shape from its template: its first word (two when the first is a value or punctuation).

    Only a sample's label: lines of one writer are one cause whatever their shape, so a free text tail (a path, a
    message) is neither a cause nor a shape of its own.
    """
    words = template.split()
    if not words:
        return ""
    count = 1 if any(ch.isalpha() for ch in words[0]) and words[0] != "#" else 2
    return " ".join(words[:count])[:SHAPE_LENGTH]


def frame_kind(case: Case) -> str:
    """What a frame that wants no reply is: `notification`, `response`, `batch`, or `frame` (unreadable)."""
    try:
        message = json.loads(case.data)
    except (ValueError, UnicodeDecodeError, TypeError):
        return "frame"
    if isinstance(message, list):
        return "batch"
    if not isinstance(message, dict):
        return "frame"
    if "method" in message:
        return "notification"
    if "result" in message or "error" in message:
        return "response"
    return "frame"
