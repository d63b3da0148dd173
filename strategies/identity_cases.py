"""list-identity cases: each list method of a declared capability sent on fresh connections or processes."""

from __future__ import annotations

from mcpfuzz.strategies.messages import FrameBuilder

from mcpfuzz.jsonrpc.expectation import Expectation
from mcpfuzz.jsonrpc.frame import Case
from mcpfuzz.jsonrpc.oracle_ids import OracleId
from mcpfuzz.jsonrpc.parts.identity import IdentityCheck
from mcpfuzz.jsonrpc.versions import Era

FAMILY = "identity"
# Three fresh connections per list: a list that depends on the connection rarely agrees three times by chance,
# and each one costs a fresh process on stdio.
CONNECTIONS = 3
# 2026-07-28 server/tools, server/prompts, server/resources: "MUST NOT vary per-connection". Only tools carry
# the deterministic-order SHOULD (server/tools, "Servers SHOULD return tools in a deterministic order").
LISTS: tuple[tuple[str, str, str, str, bool], ...] = (
    ("tools", "tools/list", "tools", "name", True),
    ("prompts", "prompts/list", "prompts", "name", False),
    ("resources", "resources/list", "resources", "uri", False),
)


def list_identity_cases(b: FrameBuilder, capabilities: dict, connections: int = CONNECTIONS) -> list[Case]:
    """Each declared list's first page on `connections` fresh connections, round-robin over the lists (so that a
    budget that cuts the fresh cases short still compares every list once); none before 2026-07-28, whose
    sessions may serve different lists."""
    if b.era is not Era.MODERN:
        return []
    declared = [entry for entry in LISTS if isinstance(capabilities.get(entry[0]), dict)]
    cases = []
    for round_number in range(1, connections + 1):
        for capability, method, key, name_key, ordered in declared:
            rid = b.fresh_id()
            expect = Expectation(judge=OracleId.LIST_IDENTITY, id=rid, result_ok=True, error_ok=True,
                                 well_formed=True, method=method,
                                 note=f"the server declares `{capability}`: its list must not vary per connection",
                                 parts=(IdentityCheck(key, name_key, ordered),))
            cases.append(Case(f"list-identity-{capability}-{round_number}", FAMILY,
                              f"{method} on fresh connection {round_number}", b.frame(method, {}, rid), expect,
                              fresh=True, patient=True, era=Era.MODERN))
    return cases
