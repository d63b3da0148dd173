"""Every list method a server may serve (tools, resources, templates, prompts), every page, declared or not.

The lint rules need what each list method answers, also when its capability is not declared (a method
served but not declared is a problem too). When the probe lists every kind itself, this module can read
the probe's lists instead; nothing else depends on how they were read.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from mcpfuzz.engine.session.session import Session
from mcpfuzz.jsonrpc import expectation as ex
from mcpfuzz.jsonrpc.exchange import ID_CURRENT, Exchange
from mcpfuzz.jsonrpc.frame import Case
from mcpfuzz.lint.model import ListOutcome

MAX_PAGES = 100
# (method, result member, capability): what MCP servers list.
LIST_METHODS = (("tools/list", "tools", "tools"), ("resources/list", "resources", "resources"),
                ("resources/templates/list", "resourceTemplates", "resources"), ("prompts/list", "prompts", "prompts"))


@dataclass
class Listings:
    """What each list method answered, and every exchange it took."""

    outcomes: dict[str, ListOutcome] = field(default_factory=dict)
    exchanges: list[Exchange] = field(default_factory=list)


async def list_everything(session: Session, capabilities: object) -> Listings:
    """Each list method, every page while results come; an undeclared kind is asked once, for its first page."""
    declared = capabilities if isinstance(capabilities, dict) else {}
    listings = Listings()
    for method, key, capability in LIST_METHODS:
        listings.outcomes[method] = await _list(session, listings, method, key, capability, capability in declared)
    return listings


async def _list(session: Session, listings: Listings, method: str, key: str, capability: str,
                declared: bool) -> ListOutcome:
    items: list = []
    cursor: str | None = None
    seen: set[str] = set()
    for page in range(MAX_PAGES):
        rid = session.next_id()
        case = Case(f"{method.replace('/', '-')}-{page + 1}", "lint", method,
                    session.message(method, {"cursor": cursor} if cursor else {}, rid),
                    ex.any_answer(rid, method), patient=True)
        exchange = await session.run_case(case)
        listings.exchanges.append(exchange)
        reply = next((a.incoming for a in exchange.arrivals if a.id_tag == ID_CURRENT), None)
        if reply is None:
            return ListOutcome(method, key, capability, declared, answered=page > 0)
        result = reply.message.get("result") if reply.is_result else None
        if not isinstance(result, dict):
            return ListOutcome(method, key, capability, declared, answered=True, error_code=reply.error_code)
        listed = result.get(key)
        items += listed if isinstance(listed, list) else []
        cursor = result.get("nextCursor")
        if isinstance(cursor, str) and cursor in seen:
            return ListOutcome(method, key, capability, declared, answered=True, items=items, looped=True)
        if not declared or not isinstance(cursor, str) or not cursor:
            break
        seen.add(cursor)
    return ListOutcome(method, key, capability, declared, answered=True, items=items)
