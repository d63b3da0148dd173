"""The process stays up, keeps answering, and writes only JSON-RPC to stdout."""

from __future__ import annotations

import re
from collections.abc import Iterator

from mcpfuzz.jsonrpc.exchange import Exchange
from mcpfuzz.jsonrpc.ids import show_id
from mcpfuzz.jsonrpc.incoming import NOISE, OVERSIZED
from mcpfuzz.jsonrpc.oracle_ids import OracleId
from mcpfuzz.jsonrpc.parts.past_limit import PastLimit
from mcpfuzz.oracles.answers import case_answers
from mcpfuzz.oracles.base import Failure, Severity, failure_class, register
from mcpfuzz.oracles.crash_signature import crash_signature
from mcpfuzz.oracles.templates import line_template

NoCrashFailure = failure_class(OracleId.NO_CRASH, "Server process died")
NoHangFailure = failure_class(OracleId.NO_HANG, "Request got no reply")
StdoutCleanFailure = failure_class(OracleId.STDOUT_CLEAN, "Non-JSON-RPC output on stdout")
TEMPLATE_SOURCE = 65536  # bytes of a noise line its template is made from (a long quoted value closes in them)


@register(NoCrashFailure, Severity.CRITICAL, quiet_on_plain=True)
def no_crash(exchange: Exchange) -> Iterator[Failure]:
    """The server must survive any input; one finding per crash signature, with exit status and stderr tail."""
    end = exchange.crash
    if end is None:
        return
    tail = f"\nstderr tail:\n{end.stderr_tail}" if end.stderr_tail else " (stderr was empty)"
    signature = crash_signature(end.stderr_tail)
    # One exception raised at one place is one bug, whichever frame reached it: grouped over the whole run
    # (the finding lists the other frames). A crash that leaves no trace is keyed per target.
    yield NoCrashFailure(Severity.CRITICAL, f"the server {end.describe()} after this frame{tail}",
                         "crash:" + signature, server_wide=bool(signature))


@register(NoHangFailure, Severity.CRITICAL, quiet_on_plain=True)
def no_hang(exchange: Exchange) -> Iterator[Failure]:
    """A valid request gets a reply within --timeout; a barrier tells a dropped request from a stuck server."""
    expect = exchange.case.expect
    if exchange.write_error:
        yield NoHangFailure(Severity.CRITICAL, f"writing the frame failed: {exchange.write_error}", "write")
        return
    past = expect.part(PastLimit)
    limit = past.limit if past is not None else None
    if limit is not None and exchange.http is not None and exchange.http.refused:
        return  # refused at the HTTP level (413: as too large): the response ended, so no client waits for anything
    if limit is not None and expect.reply and expect.id_recoverable and not case_answers(exchange) \
            and exchange.barrier_answered:
        # A reader may refuse such a frame; losing its id silently is unhelpful, not a hang (low).
        yield NoHangFailure(Severity.LOW, f"no reply to a frame {limit.describe()}: refusing it is allowed, but "
                            f"without an error (id null is fine) a client waits for id {show_id(expect.id)} "
                            "forever", f"limit:{limit.value}", server_wide=True)
        return
    if expect.well_formed and expect.reply and not case_answers(exchange):
        if exchange.http is not None and exchange.http.refused:
            return  # refused at the HTTP level: an answer, judged by http-status
        if exchange.extended and exchange.progress_count() and exchange.barrier_answered:
            return  # still reporting progress at the call limit: working, not dropped (mcpfuzz cancelled it)
        if exchange.cut_short and (exchange.barrier_answered or exchange.blocked):
            # The phase ended before --call-timeout did: too early to call it dropped, or (a server whose one
            # thread is busy with the call) stuck.
            return
        if exchange.barrier_answered:
            if exchange.extended:
                message = (f"no reply after {exchange.waited:.1f}s (--call-timeout) and no progress notification, "
                           "although the server kept answering other requests: it dropped this request (or takes "
                           "longer than --call-timeout without saying so; raise it for slow tools)")
            else:
                message = (f"no reply after {exchange.waited:.1f}s, although a request sent after it was answered: "
                           "the server dropped this request")
            yield NoHangFailure(Severity.CRITICAL, message, "dropped")
        else:
            yield _stopped(exchange, NoHangFailure(
                Severity.CRITICAL, f"no reply within {exchange.waited:.1f}s, and the server stopped answering "
                f"other requests too{_wedge_evidence(exchange)}", "stuck"))
        return
    if exchange.barrier_answered is False and not (exchange.cut_short and exchange.blocked):
        # (A call still busy when its phase ended is not judged: its --call-timeout had not passed.)
        yield _stopped(exchange, NoHangFailure(
            Severity.CRITICAL, f"after this frame the server stopped answering: a request sent after it got no "
            f"reply within {exchange.waited:.1f}s", "stuck-after"))


def _wedge_evidence(exchange: Exchange) -> str:
    """What the fresh-request check saw, when one was made (empty otherwise)."""
    if not exchange.wedged:
        return ""
    cpu = f", its process using {exchange.cpu_share:.0%} of a core meanwhile" \
        if exchange.cpu_share is not None else ""
    return (f": past the fair wait for this call (its target answered in far less before), a fresh request went "
            f"unanswered as well while the process ran{cpu}: it is wedged, not slow")


# Words of a line that tells why a server stopped (`Error running MCP server: invalid character ...`).
_ERROR_WORDS = re.compile(r"error|exception|panic|fatal|invalid|fail|unexpected|cannot|can't|refused|closed|"
                          r"terminat", re.IGNORECASE)


def stderr_evidence(stderr_tail: str) -> str:
    """The last line of a server's stderr tail that says something went wrong; empty when none does."""
    for line in reversed(stderr_tail.splitlines()):
        if line.strip() and _ERROR_WORDS.search(line):
            return line.strip()
    return ""


def _stopped(exchange: Exchange, failure: Failure) -> Failure:
    """A server that stopped answering, keyed by what its stderr said as it stopped, when it said anything.

    A transport that ends its session on the first line it cannot decode stops the same way on every malformed
    frame: the same stderr line (its values masked) is one cause, wherever it showed (the server is restarted after
    each stop, so the line is this stop's). A stop that leaves no trace keeps a finding per target.
    """
    evidence = stderr_evidence(exchange.stderr_tail)
    if not evidence:
        return failure
    return NoHangFailure(failure.severity, f"{failure.message}; the server's stderr said: {evidence[:200]}",
                         f"{failure.key}:{line_template(evidence)}", server_wide=True, detail=evidence[:200])


@register(StdoutCleanFailure, Severity.HIGH, quiet_on_plain=True)
def stdout_clean(exchange: Exchange) -> Iterator[Failure]:
    """MCP stdio transport: the server MUST NOT write anything to stdout that is not an MCP message."""
    said: set[str] = set()
    for arrival in exchange.arrivals:
        incoming = arrival.incoming
        if incoming.kind == NOISE:
            # One log statement is one cause whatever it printed: keyed by the line's template, the line listed
            # (each statement once per frame: two statements on one frame are two causes).
            key = "noise:" + line_template(incoming.raw[:TEMPLATE_SOURCE].decode("utf-8", "replace"))
            if key not in said:
                said.add(key)
                yield StdoutCleanFailure(Severity.HIGH, f"wrote a line that is not JSON-RPC: "
                                         f"{incoming.text(120)!r}", key, server_wide=True, detail=incoming.text(200))
        elif incoming.kind == OVERSIZED and "oversized" not in said:
            said.add("oversized")
            yield StdoutCleanFailure(Severity.LOW, f"wrote a line of {incoming.size} bytes, over the "
                                     "--max-line limit; it was not parsed", "oversized", server_wide=True)

