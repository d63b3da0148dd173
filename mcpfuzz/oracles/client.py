"""mcpfuzz as a client: the server's handling of answers to its own requests (legacy), of 2026-07-28 retries after
`input_required`, and of the client capabilities a request declared."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from mcpfuzz.jsonrpc.client_check import AnswerMode, RetryKind
from mcpfuzz.jsonrpc.exchange import Exchange
from mcpfuzz.jsonrpc.expectation import INVALID_PARAMS, INVALID_REQUEST
from mcpfuzz.jsonrpc.oracle_ids import OracleId
from mcpfuzz.jsonrpc.parts.client import ClientCheck
from mcpfuzz.oracles.answers import case_answers
from mcpfuzz.oracles.base import Failure, Severity, failure_class, register

ClientRequestsFailure = failure_class(OracleId.CLIENT_REQUESTS, "Answer to the server's own request mishandled")
InputRequiredFailure = failure_class(OracleId.INPUT_REQUIRED, "Multi round-trip retry mishandled")
MissingCapabilityFailure = failure_class(OracleId.MISSING_CAPABILITY, "Input asked for an undeclared capability")

# The request method each client capability covers (2025-11-25 client/*; 2026-07-28 basic/patterns/mrtr).
CAPABILITY_OF = {"elicitation/create": "elicitation", "sampling/createMessage": "sampling", "roots/list": "roots"}


def _silent_while_serving(exchange: Exchange) -> bool:
    """The case's call got no answer while the server went on answering others (not stuck, not dead, not cut short)."""
    return (not case_answers(exchange) and exchange.barrier_answered is True and exchange.crash is None
            and not exchange.write_error and not exchange.cut_short)


@register(ClientRequestsFailure, Severity.CRITICAL)
def client_requests(exchange: Exchange) -> Iterator[Failure]:
    """Legacy: a call whose server asked mcpfuzz for input is answered, whatever mcpfuzz answered (bar silence)."""
    check = exchange.case.expect.part(ClientCheck)
    if check is None or check.retry is not None or not exchange.server_requests:
        return
    if check.mode is AnswerMode.SILENCE or not _silent_while_serving(exchange):
        return  # waiting for a client that never answers is allowed; a crash or a stuck server is no-crash/no-hang's
    asked = ", ".join(sorted({str(r.message.get("method")) for r in exchange.server_requests}))
    if check.mode.valid:
        yield ClientRequestsFailure(
            Severity.CRITICAL, f"mcpfuzz answered the server's {asked} request validly ({check.mode.value}), and the "
            "call that asked was never answered, although the server kept answering other requests",
            f"dropped:{check.mode.value}")
        return
    # JSON-RPC 2.0 section 5: every request gets a response; a bad answer to the server's request is an error of
    # the call that made it, not a reason to drop the call. An oversized answer may pass a reader's limit (low).
    severity = Severity.LOW if check.mode is AnswerMode.OVERSIZED else Severity.MEDIUM
    yield ClientRequestsFailure(
        severity, f"mcpfuzz answered the server's {asked} request with a bad answer ({check.mode.value}), and the "
        "call that asked was never answered: the server should turn a bad answer into an error of the call",
        f"dropped:{check.mode.value}")


@register(InputRequiredFailure, Severity.CRITICAL)
def input_required(exchange: Exchange) -> Iterator[Failure]:
    """2026-07-28 basic/patterns/mrtr: a valid retry is served; a tampered requestState is never trusted blindly."""
    check = exchange.case.expect.part(ClientCheck)
    if check is None or check.retry is None:
        return
    kind = check.retry
    if _silent_while_serving(exchange):
        severity = (Severity.CRITICAL if kind is RetryKind.VALID
                    else Severity.LOW if kind is RetryKind.OVERSIZED_STATE else Severity.MEDIUM)
        yield InputRequiredFailure(severity, f"the retry ({kind.value}) was never answered, although the server "
                                   "kept answering other requests", f"dropped:{kind.value}")
        return
    answers = case_answers(exchange)
    if not answers:
        return
    reply = answers[0].incoming
    if kind is RetryKind.VALID and reply.error_code in (INVALID_PARAMS, INVALID_REQUEST):
        yield InputRequiredFailure(
            Severity.MEDIUM, f"a retry carrying inputResponses under the asked keys and the requestState echoed "
            f"exactly was refused with error {reply.error_code}: the spec's retry is a valid request",
            "valid-refused")
        return
    if kind.tampered and reply.is_result:
        yield from _tampered_accepted(check, reply.message.get("result"))


def _tampered_accepted(check: ClientCheck, result: Any) -> Iterator[Failure]:
    """A tampered state is a finding only when it was provably used: a successful result unlike the untouched
    state's. The same result means the state did not matter (tampering "can cause nothing worse than request
    failure", where the spec lets integrity protection be omitted); an error or isError result is a rejection."""
    if not (_successful(result) and _successful(check.baseline)):
        return
    if _outcome(result) == _outcome(check.baseline):
        return
    assert check.retry is not None
    yield InputRequiredFailure(
        Severity.MEDIUM, f"a tampered requestState ({check.retry.value}) was accepted: the retry succeeded with a "
        "different result than with the state the server wrote, so the state drives the result without integrity "
        "protection (2026-07-28 basic/patterns/mrtr: state that fails verification MUST be rejected)",
        f"tampered:{check.retry.value}")


def _successful(result: Any) -> bool:
    """A complete result that is not an isError tool result."""
    return (isinstance(result, dict) and result.get("resultType", "complete") == "complete"
            and result.get("isError") is not True)


def _outcome(result: dict) -> Any:
    """What a result says, without members that may change between two identical calls (`_meta`)."""
    return {key: value for key, value in result.items() if key != "_meta"}


@register(MissingCapabilityFailure, Severity.HIGH)
def missing_capability(exchange: Exchange) -> Iterator[Failure]:
    """A server asks only for input the client declared it can give (else -32021 in 2026-07-28)."""
    check = exchange.case.expect.part(ClientCheck)
    if check is None:
        return
    asked = [str(r.message.get("method")) for r in exchange.server_requests]
    for arrival in case_answers(exchange):
        result = arrival.incoming.message.get("result") if arrival.incoming.is_result else None
        if isinstance(result, dict) and result.get("resultType") == "input_required":
            requests = result.get("inputRequests")
            if isinstance(requests, dict):
                asked += [str(r.get("method")) for r in requests.values() if isinstance(r, dict)]
    undeclared = sorted({m for m in asked if m in CAPABILITY_OF and CAPABILITY_OF[m] not in check.declared})
    if undeclared:
        needed = ", ".join(CAPABILITY_OF[m] for m in undeclared)
        declared = ", ".join(check.declared) or "none"
        yield MissingCapabilityFailure(
            Severity.HIGH, f"the server asked for {', '.join(undeclared)} although the client declared only "
            f"[{declared}]: a server MUST NOT ask for input the client did not declare ({needed}); in 2026-07-28 "
            "it refuses the request with -32021 instead", "undeclared:" + ",".join(undeclared))
