"""The process stays up, keeps answering, and writes only JSON-RPC to stdout."""

from __future__ import annotations

from collections.abc import Iterator

from mcpfuzz.jsonrpc.exchange import Exchange
from mcpfuzz.jsonrpc.ids import show_id
from mcpfuzz.jsonrpc.incoming import NOISE, OVERSIZED
from mcpfuzz.jsonrpc.oracle_ids import OracleId
from mcpfuzz.oracles.answers import case_answers
from mcpfuzz.oracles.base import Failure, Severity, failure_class, register
from mcpfuzz.oracles.crash_signature import crash_signature

NoCrashFailure = failure_class(OracleId.NO_CRASH, "Server process died")
NoHangFailure = failure_class(OracleId.NO_HANG, "Request got no reply")
StdoutCleanFailure = failure_class(OracleId.STDOUT_CLEAN, "Non-JSON-RPC output on stdout")


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
    limit = expect.past_limit
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
            yield NoHangFailure(Severity.CRITICAL,
                                f"no reply within {exchange.waited:.1f}s, and the server stopped answering "
                                "other requests too", "stuck")
        return
    if exchange.barrier_answered is False:
        yield NoHangFailure(Severity.CRITICAL,
                            f"after this frame the server stopped answering: a request sent after it got no "
                            f"reply within {exchange.waited:.1f}s", "stuck-after")


@register(StdoutCleanFailure, Severity.HIGH, quiet_on_plain=True)
def stdout_clean(exchange: Exchange) -> Iterator[Failure]:
    """MCP stdio transport: the server MUST NOT write anything to stdout that is not an MCP message."""
    for arrival in exchange.arrivals:
        incoming = arrival.incoming
        if incoming.kind == NOISE:
            yield StdoutCleanFailure(Severity.HIGH, f"wrote a line that is not JSON-RPC: {incoming.text(120)!r}",
                                     "noise:" + _shape(incoming.raw), server_wide=True)
            return
        if incoming.kind == OVERSIZED:
            yield StdoutCleanFailure(Severity.LOW, f"wrote a line of {incoming.size} bytes, over the "
                                     "--max-line limit; it was not parsed", "oversized", server_wide=True)
            return


def _shape(line: bytes) -> str:
    """The gist of a noise line, so that one log statement is one finding whatever its numbers."""
    import re

    return re.sub(rb"[0-9]+", b"#", line[:40]).decode("utf-8", "replace")
