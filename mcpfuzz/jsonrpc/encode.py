"""Build JSON-RPC messages as exact bytes."""

from __future__ import annotations

import json
import sys
from typing import Any

from mcpfuzz.jsonrpc.json_value import ABSENT, Absent, Json


def dumps(value: Json) -> bytes:
    """Compact JSON with ASCII escapes, so lone surrogates survive as `\\ud800` on the wire; an integer of any
    length is written exactly (a server's id of 5,000 digits goes back as it came)."""
    try:
        text = json.dumps(value, separators=(",", ":"), ensure_ascii=True)
    except ValueError:
        limit = _int_digit_limit()
        if not limit:
            raise  # not an integer's length (no limit applies): a real error
        # Python refuses to write integers past its int-to-str digit limit; lifted for this one encoding.
        sys.set_int_max_str_digits(0)
        try:
            text = json.dumps(value, separators=(",", ":"), ensure_ascii=True)
        finally:
            sys.set_int_max_str_digits(limit)
    return text.encode("ascii")


def _int_digit_limit() -> int:
    """Python's limit on the digits of an integer written as text (0: none, as before 3.10.7)."""
    return int(getattr(sys, "get_int_max_str_digits", lambda: 0)())


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
