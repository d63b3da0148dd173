"""Which cases may share a window with others: their answer is matched by id alone and they cannot break the stream."""

from __future__ import annotations

import json
import re
from functools import lru_cache
from typing import TYPE_CHECKING, Any

from mcpfuzz.jsonrpc.ids import id_key, is_valid_mcp_id
from mcpfuzz.jsonrpc.parts.cancel import CancelCheck
from mcpfuzz.jsonrpc.parts.concurrency import ConcurrencyCheck
from mcpfuzz.jsonrpc.parts.http_rule import HttpRule
from mcpfuzz.jsonrpc.parts.past_limit import PastLimit
from mcpfuzz.jsonrpc.parts.version_check import VersionCheck

if TYPE_CHECKING:
    from mcpfuzz.jsonrpc.frame import Case

# Above this a frame is sent alone: a big frame is slow to read and is where readers set limits.
MAX_SHARED_BYTES = 64 * 1024
# A case with one of these parts is about a reader's limit, timing, HTTP or versions: it is sent alone.
_UNSHARED_PARTS = (PastLimit, CancelCheck, ConcurrencyCheck, HttpRule, VersionCheck)
# Deeper than this a frame is sent alone (RFC 8259 lets a reader limit nesting; a deep frame may kill a parser).
MAX_SHARED_DEPTH = 8
# Requests that change what the server answers next: run alone, in order, so a server that handles requests
# concurrently cannot reorder them (a call to a tool may have effects; its callers opt in, see `Case.shared_ok`).
# (logging/setLevel is not: its own answer depends on nothing before it, and the log notifications it lets
# through belong to no case, so they send a window back to be run alone.)
STATEFUL_METHODS = frozenset({"initialize", "tools/call", "resources/subscribe", "resources/unsubscribe",
                              "notifications/cancelled", "tasks/cancel"})
SURROGATE_ESCAPE = re.compile(r"\\u[dD][89a-fA-F]")


def isolation_reason(case: Case) -> str | None:
    """Why `case` must be judged in a window of its own; None when a pipelined window may hold it.

    A shared window routes each answer by its id, so a case qualifies only when what it is due can be told
    by id alone (its own readable MCP id, or nothing at all for a notification; never id null), its frame
    is a plain, small JSON object that cannot break the stream, and it changes nothing the next case's
    answer depends on. Anything a window cannot attribute sends its cases back to be run alone.
    """
    expect = case.expect
    if case.fresh or case.setup or case.http_headers or case.era is not None:
        return "needs a process, a setup or HTTP of its own"
    if expect.reply and (not expect.id_recoverable or expect.null_id_ok or not is_valid_mcp_id(expect.id)):
        return "its answer cannot be told by id alone"
    if expect.batch_ids or any(expect.has(kind) for kind in _UNSHARED_PARTS):
        return "a batch, a frame past a reader's limit, or a case about timing, HTTP or versions"
    if len(case.data) > MAX_SHARED_BYTES or b"\r" in case.data or b"\n" in case.data:
        return "a big frame, or one with line breaks"
    message = _plain_object(case.data)
    if message is None:
        return "not a plain JSON object"
    if not expect.reply and "id" in message:
        return "a response sent to the server, whose id could be mistaken for a case's"
    if expect.reply and ("id" not in message or id_key(message["id"]) != id_key(expect.id)):
        return "does not carry the id its answer is due"
    method = message.get("method")
    if isinstance(method, str) and method in STATEFUL_METHODS and not (method == "tools/call" and case.shared_ok):
        return f"{method} may change what the server answers next"
    token = _progress_token(message)
    if token is not None and not is_valid_mcp_id(token):
        return "asks for progress notifications under a token no notification can be matched by"
    return None


def post_isolation_reason(case: Case) -> str | None:
    """Why `case` must be alone over streamable HTTP; None when it may be one of several POSTs in flight at once.

    There each case is a POST of its own and every answer is told by the POST it came on, not by its id, so
    frames that are not JSON, answers with id null and ids of any type may share a window. Still alone: what
    needs a process, a setup or HTTP of its own, a frame of several POSTs, batches, frames past a reader's
    limit or big, cases about timing, HTTP or versions, and requests that change what later ones get.
    """
    from mcpfuzz.jsonrpc.frame import Posting  # frame.py imports this module when a case first asks

    expect = case.expect
    if case.fresh or case.setup or case.http_headers or case.era is not None or case.posts is not Posting.ONE:
        return "needs a process, a setup or HTTP of its own"
    if expect.batch_ids or any(expect.has(kind) for kind in _UNSHARED_PARTS):
        return "a batch, a frame past a reader's limit, or a case about timing, HTTP or versions"
    if len(case.data) > MAX_SHARED_BYTES:
        return "a big frame"
    message = _plain_object(case.data)
    if message is None:
        # Which method a lenient reader finds in bytes that are not one plain object is its own choice: any
        # stateful method named in them (a slash escaped or not) keeps the case alone.
        raw = case.data.replace(b"\\/", b"/")
        named = [method for method in STATEFUL_METHODS if method.encode() in raw]
        return f"{named[0]} may change what the server answers next" if named else None
    method = message.get("method")
    if isinstance(method, str) and method in STATEFUL_METHODS and not (method == "tools/call" and case.shared_ok):
        return f"{method} may change what the server answers next"
    return None


def progress_token(case: Case) -> Any:
    """The `progressToken` the case's request carries (its progress notifications are its own), or None."""
    message = _plain_object(case.data)
    return _progress_token(message) if message is not None else None


def _progress_token(message: dict[str, Any]) -> Any:
    params = message.get("params")
    meta = params.get("_meta") if isinstance(params, dict) else None
    return meta.get("progressToken") if isinstance(meta, dict) else None


# A case's frame is read here twice in a row (whether it may share a window, then its progress token): once
# (a few frames of at most MAX_SHARED_BYTES kept).
# The dict returned is shared by those callers, which only read it.
@lru_cache(maxsize=16)
def _plain_object(data: bytes) -> dict[str, Any] | None:
    """The frame as a JSON object when it is strict UTF-8 JSON with no duplicate keys, no NaN and little nesting."""
    try:
        text = data.decode("utf-8", errors="strict")
        value = json.loads(text, object_pairs_hook=_no_duplicates, parse_constant=_no_constant)
    except (UnicodeDecodeError, ValueError):
        return None
    if not isinstance(value, dict) or _depth(value) > MAX_SHARED_DEPTH or SURROGATE_ESCAPE.search(text):
        return None  # a surrogate escape (a lone one above all) is where parsers part ways
    return value


def _no_duplicates(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    keys = [key for key, _ in pairs]
    if len(set(keys)) != len(keys):
        raise ValueError("duplicate key")  # which one a server reads is its own choice: the id is not certain
    return dict(pairs)


def _no_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


def _depth(value: Any) -> int:
    if isinstance(value, dict):
        return 1 + max((_depth(v) for v in value.values()), default=0)
    if isinstance(value, list):
        return 1 + max((_depth(v) for v in value), default=0)
    return 0

