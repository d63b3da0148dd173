"""Oracles on what a call was seen doing (`Exchange.observation`), not on what it answered.

- sandbox-escape: a file touched (read, listed, stat-ed, written, created, deleted, renamed, linked) outside the
  folders the server was given; the engine decided `Effect.outside` (start-up and runtime places are not escapes).
- command-injection: a process whose program is a string of the call's input, or a shell whose command line holds
  an input string with shell syntax in it (`;`, `|`, `&`, `$`, a backtick, a line break, a redirection).
- read-only-truthful: a tool annotated readOnlyHint: true changed a file or started a process.
- network-egress (registered here): a tool not annotated openWorldHint: true opened a connection or looked a name up.

The first three are parts of the oracles of the same ids (canaries.py, semantic.py), which yield these failures.
An effect charged to several calls in flight at once (`Effect.ambiguous`) is evidence against none of them: the
engine runs such calls again alone before any is judged on it.
"""

from __future__ import annotations

import contextlib
import ipaddress
import os
from collections.abc import Iterator

from mcpfuzz.jsonrpc.effects import CHANGES, NETWORK, Effect, Op
from mcpfuzz.jsonrpc.exchange import Exchange
from mcpfuzz.jsonrpc.oracle_ids import OracleId
from mcpfuzz.oracles.base import Failure, Severity, failure_class, register

NetworkEgressFailure = failure_class(OracleId.NETWORK_EGRESS, "A closed-world tool reached the network")
SHELLS = frozenset({"sh", "bash", "dash", "zsh", "ksh", "ash", "fish", "busybox", "cmd", "cmd.exe", "powershell",
                    "pwsh"})
SHELL_SYNTAX = frozenset(";|&`$\n<>")
MIN_INPUT = 3  # shorter strings of the input (`a`, `1`) are in many command lines by chance
RUNTIME_FILES = ("/dev/", "/proc/")
# A finding's identity: what kind of access, so that reads and changes outside are two bugs of one tool.
_ACCESS = {Op.READ: "read", Op.LIST: "read", Op.STAT: "read"}


def escapes(exchange: Exchange) -> Iterator[tuple[str, str, str]]:
    """(message, key, detail) for the call's worst access outside the given folders: a change, else a read."""
    observation = exchange.observation
    if observation is None:
        return
    outside = [effect for effect in _certain(observation.effects) if effect.outside]
    if not outside:
        return
    effect = next((effect for effect in outside if effect.op not in _ACCESS), outside[0])
    kind = _ACCESS.get(effect.op, "change")
    given = f" {observation.workspace}" if observation.workspace else ""
    yield (f"the server touched a path outside the folders it was given{given} (whatever it answered): "
           f"{effect.line()}", f"observed-{kind}", effect.line())


def injections(exchange: Exchange) -> Iterator[tuple[str, str, str]]:
    """(message, key, detail) for the first process the call's input chose or wrote into a shell line."""
    observation = exchange.observation
    if observation is None:
        return
    inputs = [text.strip() for text in observation.inputs if len(text.strip()) >= MIN_INPUT]
    for effect in _certain(observation.effects):
        if effect.op is not Op.EXEC or not effect.argv:
            continue
        program = effect.argv[0]
        if any(text in (program, os.path.basename(program)) for text in inputs):
            yield (f"the call started the program its input named: {effect.line()}", "program",
                   effect.line())
            return
        line = _shell_line(effect)
        if line is None:
            continue
        for text in inputs:
            if text in line and SHELL_SYNTAX.intersection(text):
                yield (f"a shell ran a command line holding the call's input {text[:80]!r}: {effect.line()}",
                       "shell", effect.line())
                return


def read_only_changes(exchange: Exchange) -> Iterator[tuple[str, str, str]]:
    """(message, key, detail) for the first change a tool annotated readOnlyHint: true made."""
    observation = exchange.observation
    if observation is None or not observation.read_only:
        return
    for effect in _certain(observation.effects):
        if effect.op is Op.EXEC or (effect.op in CHANGES and not effect.path.startswith(RUNTIME_FILES)):
            what = "started a process" if effect.op is Op.EXEC else "changed a file"
            yield (f"annotated readOnlyHint: true, but the call {what}: {effect.line()}", f"observed-{effect.op.value}",
                   effect.line())
            return


def _certain(effects: tuple[Effect, ...]) -> list[Effect]:
    """The effects known to be this call's (not charged to every call in flight with it)."""
    return [effect for effect in effects if not effect.ambiguous]


def _shell_line(effect: Effect) -> str | None:
    """The command line a shell was given (`sh -c LINE`), or None when the program is no shell."""
    if os.path.basename(effect.argv[0]) not in SHELLS:
        return None
    return " ".join(effect.argv[1:])


def _egress(effect: Effect) -> bool:
    """A connection to a host or a name looked up (a Unix socket's path is neither, nor an address "looked up")."""
    if effect.op not in NETWORK or not effect.address or effect.address.startswith(("/", "\x00", "@")):
        return False
    if effect.op is Op.DNS:
        with contextlib.suppress(ValueError):
            ipaddress.ip_address(effect.address.strip("[]"))
            return False
    return True


@register(NetworkEgressFailure, Severity.MEDIUM, quiet_on_plain=False)
def network_egress(exchange: Exchange) -> Iterator[Failure]:
    """A tool not annotated openWorldHint: true opened a connection or looked a name up (seen by the hook)."""
    observation = exchange.observation
    if observation is None or observation.open_world or not exchange.case.target.startswith("tool/"):
        return
    reached = sorted((effect for effect in _certain(observation.effects) if _egress(effect)),
                     key=lambda e: e.op is Op.DNS)
    if reached:
        effect = reached[0]  # a connection rather than the lookup before it
        yield NetworkEgressFailure(
            Severity.MEDIUM, "not annotated openWorldHint: true (a closed world), but the call reached the "
                             f"network: {effect.line()}", "observed-network", detail=effect.line())
