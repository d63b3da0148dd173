"""`sandbox-escape` and `command-injection`: canaries planted by `--security` that only a real escape can reveal.

Both are silent unless the run planted canaries, so neither can fire on what a server says by itself:
- `sandbox-escape`: an answer quotes the token of a canary file outside the workspace the server was given (the
  sibling folder that shares the workspace's name as a prefix, or the parent folder). mcpfuzz never sends a token
  (values read back from answers are never reused when they hold one), so the server read the file. A token the run
  did send, or one naming a file or folder inside the workspace (something created it there; a listing quotes it),
  proves nothing and is passed over (`Exchange.canaries_echoed`). A server meant to read any file on the machine has
  no sandbox to escape: this oracle is for servers that confine file access to their root.
- `command-injection`: a file named by the token of one payload appeared in the watched canary folder; only a
  shell (or an evaluator) running that payload creates it, and the payload went out in this call's frame. A
  shell that runs after the answer is sent (in the background) may create the file too late to be tied to its call.
"""

from __future__ import annotations

import json
from collections.abc import Iterator

from mcpfuzz.jsonrpc.exchange import Exchange
from mcpfuzz.jsonrpc.oracle_ids import OracleId
from mcpfuzz.oracles.base import Failure, Severity, failure_class, register
from mcpfuzz.oracles.observed import escapes, injections
from mcpfuzz.strategies.payloads.canaries import CANARY_TOKEN, OUTSIDE, Place

SandboxEscapeFailure = failure_class(OracleId.SANDBOX_ESCAPE, "A file outside the server's workspace was read")
CommandInjectionFailure = failure_class(OracleId.COMMAND_INJECTION, "A shell ran text from the arguments")
_OUTSIDE = {place.value for place in OUTSIDE}
_WHERE = {Place.SIBLING.value: "the sibling folder sharing the workspace's name as a prefix",
          Place.LINKED.value: "the folder a symlink inside the workspace points to"}


@register(SandboxEscapeFailure, Severity.HIGH)
def sandbox_escape(exchange: Exchange) -> Iterator[Failure]:
    """The hook in the server saw a path outside its folders touched; unhooked, an answer quotes an outside canary."""
    if exchange.observation is not None:
        for message, key, detail in escapes(exchange):
            yield SandboxEscapeFailure(Severity.HIGH, message, key, detail=detail)
        return
    sent = b"".join(exchange.frames) or exchange.case.data
    echoed = set(exchange.canaries_echoed)
    seen: set[str] = set()
    for arrival in exchange.arrivals:
        text = arrival.incoming.raw.decode("utf-8", "replace")
        for match in CANARY_TOKEN.finditer(text):
            place, token = match.group("place"), match.group(0)
            if place in _OUTSIDE and place not in seen and token not in echoed and token.encode() not in sent:
                seen.add(place)
                where = _WHERE.get(place, "the workspace's parent folder")
                yield SandboxEscapeFailure(
                    Severity.HIGH, f"the answer holds the canary planted in {where}, outside the workspace the "
                                   "server was given: the call read a file its sandbox should have refused", place)


@register(CommandInjectionFailure, Severity.HIGH, quiet_on_plain=False)
def command_injection(exchange: Exchange) -> Iterator[Failure]:
    """A canary file only this call's shell payload makes appeared, or the hook saw input run as program or shell."""
    sent = b"".join(exchange.frames) or exchange.case.data
    for name in exchange.canary_files:
        if name.encode() in sent:
            yield CommandInjectionFailure(
                Severity.HIGH, f"the file {json.dumps(name)} appeared in mcpfuzz's canary folder: a shell (or an "
                               "evaluator) ran the command this call put in its arguments", "shell",
                detail=name)
            return
    for message, key, detail in injections(exchange):  # no hit file: the process the hook saw start is the evidence
        yield CommandInjectionFailure(Severity.HIGH, message, key, detail=detail)
        return
