"""Build JSON-RPC messages as exact bytes."""

from __future__ import annotations

import json
from typing import Any

from mcpfuzz.jsonrpc.json_value import ABSENT, Absent, Json, long_integers


def dumps(value: Json) -> bytes:
    """Compact JSON with ASCII escapes, so lone surrogates survive as `\\ud800` on the wire; an integer a server
    sent is written back exactly (its id of 5,000 digits goes back as it came: see long_integers)."""
    try:
        text = json.dumps(value, separators=(",", ":"), ensure_ascii=True)
    except ValueError:  # an integer past Python's int-to-str limit (a circular value cannot be decoded JSON)
        with long_integers():
            text = json.dumps(value, separators=(",", ":"), ensure_ascii=True)
    return text.encode("ascii")


def request(method: Json | Absent, params: Json | Absent = ABSENT, id: Json | Absent = ABSENT, *,
            jsonrpc: Json | Absent = "2.0") -> dict[str, Json]:
    """A request object; members given as ABSENT are left out (id left out makes a notification)."""
    message: dict[str, Json] = {}
    if jsonrpc is not ABSENT:
        message["jsonrpc"] = jsonrpc
    if id is not ABSENT:
        message["id"] = id
    if method is not ABSENT:
        message["method"] = method
    if params is not ABSENT:
        message["params"] = params
    return message


def with_meta(params: Json | Absent, meta: dict | None) -> Json | Absent:
    """Add modern-era `_meta` to object params (other params are left as they are)."""
    if meta is None:
        return params
    if params is ABSENT:
        return {"_meta": meta}
    if isinstance(params, dict) and "_meta" not in params:
        return {**params, "_meta": meta}
    return params


def response(id: Any, result: Any) -> dict:
    """A success response object."""
    return {"jsonrpc": "2.0", "id": id, "result": result}


def error_response(id: Any, code: int, message: str) -> dict:
    """An error response object."""
    return {"jsonrpc": "2.0", "id": id, "error": {"code": code, "message": message}}
