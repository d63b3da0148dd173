"""Protocol version negotiation in both eras."""

from __future__ import annotations

from collections.abc import Iterator

from mcpfuzz.jsonrpc.exchange import ID_CURRENT, Exchange
from mcpfuzz.jsonrpc.oracle_ids import OracleId
from mcpfuzz.jsonrpc.parts.version_check import VersionCheck
from mcpfuzz.jsonrpc.versions import (
    MODERN_VERSIONS,
    UNSUPPORTED_VERSION_CODE,
    UNSUPPORTED_VERSION_CODE_RC,
)
from mcpfuzz.oracles.answers import case_answers
from mcpfuzz.oracles.base import Failure, Severity, failure_class, register

VersionNegotiationFailure = failure_class(OracleId.VERSION_NEGOTIATION,
                                          "Protocol version not negotiated as the spec requires")


@register(VersionNegotiationFailure, Severity.MEDIUM)
def version_negotiation(exchange: Exchange) -> Iterator[Failure]:
    """Modern: -32022 with data.supported; legacy: initialize answers a version the server supports."""
    check = exchange.case.expect.part(VersionCheck)
    answers = [a for a in case_answers(exchange) if a.id_tag == ID_CURRENT]
    for arrival in answers:
        message = arrival.incoming.message
        if check is not None and check.unsupported is not None:
            yield from _unsupported_version(arrival.incoming.error_code, message, check.unsupported)
        if check is not None and check.initialize is not None:
            yield from _initialize_version(message, check.initialize, check.refusal_ok)
        if check is not None and check.discover_failed and isinstance(message.get("result"), dict):
            version = message["result"].get("protocolVersion")
            if version in MODERN_VERSIONS:
                yield VersionNegotiationFailure(
                    Severity.MEDIUM, f"initialize answered protocol {version}, but server/discover (a MUST "
                    "in that revision) failed", "no-discover")
        if exchange.case.expect.method == "server/discover" and isinstance(message.get("result"), dict):
            yield from _discover_versions(message["result"])


def _unsupported_version(code: object, message: dict, requested: str) -> Iterator[Failure]:
    if "result" in message:
        yield VersionNegotiationFailure(Severity.MEDIUM, f"a request for unsupported protocol version "
                                        f"{requested!r} was served with a result instead of error -32022",
                                        "served")
        return
    if code == UNSUPPORTED_VERSION_CODE_RC:
        yield VersionNegotiationFailure(Severity.LOW, "answered -32004 (the release candidate's code) "
                                        "instead of -32022 for an unsupported protocol version", "rc-code")
    elif code != UNSUPPORTED_VERSION_CODE:
        yield VersionNegotiationFailure(Severity.MEDIUM, f"answered error {code} instead of -32022 for an "
                                        "unsupported protocol version", f"code:{code}")
        return
    data = message.get("error", {}).get("data") if isinstance(message.get("error"), dict) else None
    supported = data.get("supported") if isinstance(data, dict) else None
    if not (isinstance(supported, list) and supported and all(isinstance(v, str) for v in supported)):
        yield VersionNegotiationFailure(Severity.MEDIUM, "the unsupported-version error lacks "
                                        "`data.supported` (a list of the versions the server speaks)",
                                        "no-supported")


def _initialize_version(message: dict, requested: str, refusal_ok: bool) -> Iterator[Failure]:
    if "error" in message:
        if refusal_ok:
            return  # a modern-only server need not speak the legacy handshake at all
        yield VersionNegotiationFailure(Severity.MEDIUM, f"initialize with unsupported version {requested!r} "
                                        "was refused with an error; the server MUST answer with a version it "
                                        "supports (basic/lifecycle)", "refused")
        return
    result = message.get("result")
    version = result.get("protocolVersion") if isinstance(result, dict) else None
    if version == requested:
        yield VersionNegotiationFailure(Severity.MEDIUM, f"initialize echoed the unsupported version "
                                        f"{requested!r} instead of one the server supports", "echo")


def _discover_versions(result: dict) -> Iterator[Failure]:
    supported = result.get("supportedVersions")
    if not (isinstance(supported, list) and supported and all(isinstance(v, str) for v in supported)):
        yield VersionNegotiationFailure(Severity.MEDIUM, f"server/discover `supportedVersions` is "
                                        f"{supported!r}, not a non-empty list of version strings",
                                        "supported-versions")
