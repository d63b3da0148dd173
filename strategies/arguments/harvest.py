"""Stateful sequences: strings that results returned, and arguments that reuse them."""

from __future__ import annotations

import json
import re
from typing import Any

from hypothesis import strategies as st
from mcpfuzz.strategies.arguments.sites import MISSING, get_at, set_at
from mcpfuzz.strategies.payloads.canaries import carries_canary

from mcpfuzz.jsonrpc.exchange import ID_CURRENT, Exchange

POOL_SIZE = 32
MAX_VALUE_LENGTH = 200
UUID = re.compile(r"\b[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}\b")


def _strings(value: Any, found: list[str]) -> None:
    if isinstance(value, str):
        if 0 < len(value) <= MAX_VALUE_LENGTH and not carries_canary(value):
            found.append(value)
    elif isinstance(value, dict):
        for item in value.values():
            _strings(item, found)
    elif isinstance(value, list):
        for item in value[:50]:
            _strings(item, found)


def harvest(exchange: Exchange, pool: list[Any]) -> list[Any]:
    """The pool with the strings of this exchange's result added (structuredContent, JSON text, UUIDs in text;
    every string of a plain JSON-RPC result, which has no MCP shape). A string holding a --security canary is never
    kept: sent back (as a file name, say), the server would echo it, and a run must never plant its own evidence."""
    found: list[str] = []
    for arrival in exchange.responses():
        message = arrival.incoming.message
        result = message.get("result") if arrival.id_tag == ID_CURRENT and isinstance(message, dict) else None
        if not isinstance(result, dict) or not ("content" in result or "structuredContent" in result):
            _strings(result, found)
            continue
        if result.get("isError") is True:
            continue
        _strings(result.get("structuredContent"), found)
        for item in result.get("content") or []:
            text = item.get("text") if isinstance(item, dict) else None
            if not isinstance(text, str):
                continue
            try:
                _strings(json.loads(text), found)
            except ValueError:
                found += UUID.findall(text)
                if len(text) <= 64 and " " not in text.strip() and not carries_canary(text):
                    found.append(text.strip())
    # Newest first, so a value just returned (an id just created) is the likeliest pick.
    merged = list(dict.fromkeys([*reversed(found), *pool]))
    return merged[:POOL_SIZE]


def _id_like(site: Any) -> bool:
    name = site.name.lower()
    return site.schema.get("format") == "uuid" or name in ("id", "uri", "name", "key") or \
        name.endswith(("id", "_ids", "ids", "_key", "_name", "uri"))


def id_sites(schema: Any) -> list[Any]:
    """The string argument sites that look like an id (where a value a result returned is worth putting)."""
    return [site for site in schema.sites if (not site.types or "string" in site.types) and _id_like(site)]


def takes_ids(schema: Any) -> bool:
    """True when some string argument looks like an id (the tools a sequence should feed)."""
    return bool(id_sites(schema))


def substitute(schema: Any, arguments: dict, pool: list[Any], data: Any) -> dict:
    """Replace some string arguments with pooled values, keeping the arguments valid."""
    if not pool:
        return arguments
    for site in schema.sites:
        if site.types and "string" not in site.types:
            continue
        # Ids are what sequences are about (create, then delete, then read): reuse them 4 times in 5.
        odds = 4 if _id_like(site) else 1
        if get_at(arguments, site.path) is MISSING or data.draw(st.integers(0, 4), label="reuse") >= odds:
            continue
        # Only the pooled values this site accepts: a result's other strings ("deleted", a title) are often newer
        # than the id a sequence should reuse, and a pick the schema refuses would leave the drawn value in place.
        fitting = [candidate for value in pool
                   if (candidate := set_at(arguments, site.path, value)) is not None and schema.is_valid(candidate)]
        if fitting:
            arguments = data.draw(st.sampled_from(fitting), label="reused value")
    return arguments


MAX_LINKS = 8


def linked_uris(exchange: Exchange, links: list[str]) -> list[str]:
    """The links with the URIs this exchange's result pointed to added: `resource_link` items and embedded
    resources of a tools/call or prompts/get result (newest first, at most MAX_LINKS)."""
    found: list[str] = []
    for arrival in exchange.responses():
        message = arrival.incoming.message
        result = message.get("result") if arrival.id_tag == ID_CURRENT and isinstance(message, dict) else None
        if not isinstance(result, dict):
            continue
        items = list(result.get("content") or []) if isinstance(result.get("content"), list) else []
        items += [m.get("content") for m in result.get("messages") or [] if isinstance(m, dict)] \
            if isinstance(result.get("messages"), list) else []
        for item in items:
            if not isinstance(item, dict):
                continue
            resource = item.get("resource") if item.get("type") == "resource" else item
            uri = resource.get("uri") if isinstance(resource, dict) and item.get("type") in (
                "resource_link", "resource") else None
            if isinstance(uri, str) and 0 < len(uri) <= 2048 and not carries_canary(uri):
                found.append(uri)
    return list(dict.fromkeys([*reversed(found), *links]))[:MAX_LINKS]
