"""The client capabilities mcpfuzz declares (`--client-capabilities`) and the request methods each one covers."""

from __future__ import annotations

from enum import Enum


class ClientCapability(str, Enum):
    """A client capability a server may need: it asks for elicitation, sampling or roots only when declared."""

    ELICITATION = "elicitation"
    SAMPLING = "sampling"
    ROOTS = "roots"


ALL_CAPABILITIES = frozenset(ClientCapability)

# The server-to-client request each capability allows (2025-11-25 client/*; 2026-07-28 inputRequests' methods).
METHOD_CAPABILITY = {
    "elicitation/create": ClientCapability.ELICITATION,
    "sampling/createMessage": ClientCapability.SAMPLING,
    "roots/list": ClientCapability.ROOTS,
}


def parse_client_capabilities(text: str) -> frozenset[ClientCapability]:
    """`all`, `none`, or a comma list such as `elicitation,roots`; ValueError names what is accepted."""
    words = [word.strip().lower() for word in text.split(",") if word.strip()]
    if words == ["all"]:
        return ALL_CAPABILITIES
    if words == ["none"] or not words:
        return frozenset()
    known = {capability.value: capability for capability in ClientCapability}
    unknown = [word for word in words if word not in known]
    if unknown:
        raise ValueError(f"unknown client capability {unknown[0]!r}: use all, none, or a comma list of "
                         f"{', '.join(known)}")
    return frozenset(known[word] for word in words)


def declared_capabilities(capabilities: frozenset[ClientCapability]) -> dict:
    """The `capabilities` object of `initialize` (or of `_meta` in 2026-07-28) declaring these."""
    declared: dict = {}
    if ClientCapability.ELICITATION in capabilities:
        declared["elicitation"] = {"form": {}}  # 2025-11-25 client/elicitation: form mode (URL mode not served)
    if ClientCapability.SAMPLING in capabilities:
        declared["sampling"] = {}
    if ClientCapability.ROOTS in capabilities:
        declared["roots"] = {}
    return declared


def describe(capabilities: frozenset[ClientCapability]) -> str:
    """The capabilities in words, in a fixed order (`none` for the empty set)."""
    names = [capability.value for capability in ClientCapability if capability in capabilities]
    return ",".join(names) or "none"
