"""MCP server over stdio whose bugs only known values reach: values its schemas name, ids it returns, and values only
the user knows.

Usage: ``python tests/servers/seeded_server.py [--clean]``

- ``find_product(sku)``: the schema's ``examples`` name ``SKU-4417``, the one product whose record lacks its price;
  looking it up crashes the process (a KeyError nothing catches).
- ``list_items()`` returns the ids of the stored items; ``get_item(id)`` crashes on the first of them
  (``itm-5b1c9``, a record whose owner was deleted). No schema names that id: only a result holds it.
- ``close_account(account)``: ``account`` is a free string; the one account the server knows, ``acct-93``, is given
  to mcpfuzz only with ``--args`` (as a user who knows a valid account would); closing it crashes.

With ``--clean`` each of those answers correctly (a correct server: zero findings). Drawn strings never hit these
values; everything else comes from ``mcp_server.Server``.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from mcp_server import Server, check_arguments, main, text_item, tool_error  # noqa: E402

CLEAN = False
PRODUCTS: dict[str, dict[str, Any]] = {"SKU-4417": {"name": "lamp"}, "SKU-1000": {"name": "chair", "price": 40}}
ITEMS: dict[str, dict[str, Any]] = {"itm-5b1c9": {"title": "orphan"}, "itm-88e02": {"title": "kept", "owner": "ann"}}
ACCOUNTS = {"acct-93": {"open": True}}


def _object(properties: dict[str, Any], required: list[str]) -> dict[str, Any]:
    return {"type": "object", "properties": properties, "required": required, "additionalProperties": False}


class SeededServer(Server):
    """Three tools whose bugs hide behind values a drawn string never is."""

    TOOLS: list[dict[str, Any]] = [
        {"name": "find_product", "description": "Look a product up by its SKU.",
         "inputSchema": _object({"sku": {"type": "string", "description": "The product's SKU.",
                                         "examples": ["SKU-4417"]}}, ["sku"])},
        {"name": "list_items", "description": "The ids of every stored item.", "inputSchema": _object({}, [])},
        {"name": "get_item", "description": "One stored item by id.",
         "inputSchema": _object({"id": {"type": "string", "description": "An item id from list_items."}}, ["id"])},
        {"name": "close_account", "description": "Close an account.",
         "inputSchema": _object({"account": {"type": "string"}}, ["account"])},
    ]

    def call_tool(self, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
        """Each tool's lookup; the bugs index a record's missing member (a crash unless --clean)."""
        tool = next(t for t in self.TOOLS if t["name"] == name)
        problem = check_arguments(tool["inputSchema"], arguments)
        if problem is not None:
            return tool_error(f"invalid arguments: {problem}")
        if name == "list_items":
            return {"content": [text_item(json.dumps({"ids": sorted(ITEMS)}))], "isError": False}
        table: dict[str, dict[str, Any]] = {"find_product": PRODUCTS, "get_item": ITEMS,
                                            "close_account": ACCOUNTS}[name]
        key = next(iter(arguments.values()))
        record = table.get(key)
        if record is None:
            return tool_error("not found")
        read = {"find_product": price_of, "get_item": owner_of, "close_account": balance_of}[name]
        return {"content": [text_item(json.dumps(read(record)))], "isError": False}


# One function per bug, so that each crash has a signature of its own (one finding each).
def price_of(record: dict[str, Any]) -> Any:
    """The product's price (its record may lack one)."""
    return record.get("price") if CLEAN else record["price"]


def owner_of(record: dict[str, Any]) -> Any:
    """The item's owner (its record may lack one)."""
    return record.get("owner") if CLEAN else record["owner"]


def balance_of(record: dict[str, Any]) -> Any:
    """The account's balance (its record lacks one)."""
    return record.get("balance") if CLEAN else record["balance"]


if __name__ == "__main__":
    if "--clean" in sys.argv:
        CLEAN = True
        sys.argv.remove("--clean")
    sys.exit(main(server_class=SeededServer))
