"""Which calls of a sequence the semantic oracles judge, and the requests that observe the state around them.

Only tools the run already calls are judged, and the observations use only what the run calls too: the resource
list, reads of listed resources and read-only tools. A tool without annotations is never judged.
"""

from __future__ import annotations

import re
from typing import Any

from mcpfuzz.engine.surface.targets import CallTarget
from mcpfuzz.jsonrpc.oracle_ids import OracleId
from mcpfuzz.jsonrpc.parts.state import StateCheck
from mcpfuzz.jsonrpc.target_kind import TargetKind
from mcpfuzz.strategies.arguments.harvest import id_sites
from mcpfuzz.strategies.arguments.schema_prep import SchemaProblem
from mcpfuzz.strategies.arguments.sites import set_at

MAX_OBSERVED = 8  # observing requests per judged call: each is sent 3 to 5 times around it
MAX_READS = 3  # listed resources read as observations
DELETES = re.compile(r"delet|remov", re.IGNORECASE)


def hints(target: CallTarget) -> dict:
    """A tool's annotations (MCP server/tools `ToolAnnotations`); empty for every other kind."""
    annotations = target.declaration.get("annotations") if target.kind is TargetKind.TOOL else None
    return annotations if isinstance(annotations, dict) else {}


def read_only(target: CallTarget) -> bool:
    """True for a tool annotated readOnlyHint: true."""
    return hints(target).get("readOnlyHint") is True


def semantic_oracle(target: CallTarget) -> OracleId | None:
    """The oracle that judges a call of the target by its annotations, or None (no annotation says what to expect).

    Read-only first: the spec gives destructive and idempotent hints a meaning only when readOnlyHint is false."""
    annotations = hints(target)
    if read_only(target):
        return OracleId.READ_ONLY_TRUTHFUL
    if annotations.get("destructiveHint") is True and _deletes(target):
        return OracleId.USE_AFTER_DELETE
    if annotations.get("idempotentHint") is True:
        return OracleId.IDEMPOTENT_RETRY
    return None


def _deletes(target: CallTarget) -> bool:
    description = target.declaration.get("description")
    return bool(DELETES.search(target.name) or (isinstance(description, str) and DELETES.search(description)))


def state_check(targets: list[CallTarget], target: CallTarget, arguments: dict, created: list[Any]
                ) -> StateCheck | None:
    """The check of one call of `target` with `arguments`, or None when no oracle judges it. A delete needs an
    argument that a call earlier in the same sequence returned (`created`: what calls of tools that are not read-only
    returned): the item it removes, made by frames the finding's transcript holds, so a replay makes it again."""
    oracle = semantic_oracle(target)
    if oracle is None:
        return None
    item = ""
    if oracle is OracleId.USE_AFTER_DELETE:
        returned = {value for value in created if isinstance(value, str)}
        item = next((value for value in _strings(arguments) if value in returned), "")
        if not item:
            return None
    observe = observations(targets, target, item)
    return StateCheck(oracle, observe, item) if observe else None


def observations(targets: list[CallTarget], subject: CallTarget, item: str = "") -> tuple[tuple[str, Any], ...]:
    """The requests that show the state: the resource list, listed resources read, and every other read-only tool
    called with its simplest arguments (and with `item` in its id-like arguments, where one is given)."""
    observed: list[tuple[str, Any]] = []
    resources = [t for t in targets if t.kind is TargetKind.RESOURCE]
    if resources or any(t.kind is TargetKind.TEMPLATE for t in targets):
        observed.append(("resources/list", {}))
    observed += [("resources/read", {"uri": t.name}) for t in resources[:MAX_READS]]
    for target in targets:
        if target is subject or not read_only(target):
            continue
        try:
            simplest = target.plain[0]
            schema = target.schema
        except (SchemaProblem, IndexError):
            continue
        observed.append(("tools/call", {"name": target.name, "arguments": simplest}))
        for site in id_sites(schema) if item else ():
            given = set_at(simplest, site.path, item)
            if given is not None and given != simplest and schema.is_valid(given):
                observed.append(("tools/call", {"name": target.name, "arguments": given}))
    return tuple(observed[:MAX_OBSERVED])


def _strings(value: Any) -> list[str]:
    if isinstance(value, str):
        return [value]
    if isinstance(value, dict):
        return [text for member in value.values() for text in _strings(member)]
    if isinstance(value, list):
        return [text for member in value for text in _strings(member)]
    return []
