"""The semantic oracles: a tool's annotations (MCP server/tools `ToolAnnotations`) against the state it changed.

Each judges a call the stateful phase sent between observations of the server's state (`StateCheck`): a resource
list, reads of listed resources, read-only tools called with fixed arguments. They compare what was observed and
never guess: an observation that changed by itself between the two taken before the call is left out, and a change
counts only when sending the call once more changed it again. A tool without annotations is never judged.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from typing import Any

from mcpfuzz.jsonrpc.exchange import ID_CURRENT, Exchange
from mcpfuzz.jsonrpc.oracle_ids import OracleId
from mcpfuzz.jsonrpc.parts.state import StateCheck
from mcpfuzz.oracles.base import Failure, Severity, failure_class, register
from mcpfuzz.oracles.observed import read_only_changes

ReadOnlyTruthfulFailure = failure_class(OracleId.READ_ONLY_TRUTHFUL, "A read-only tool changes state")
IdempotentRetryFailure = failure_class(OracleId.IDEMPOTENT_RETRY, "An idempotent tool changes state when retried")
UseAfterDeleteFailure = failure_class(OracleId.USE_AFTER_DELETE, "A deleted item is still returned")

SHOWN = 120  # characters of an observed answer quoted in a message
# Where a text that is not JSON splits into words: an id in "Notes: a1, b2" is the word `a1`.
WORD_BREAK = re.compile(r"[\s,;:'\"()\[\]{}<>|=]+")


def _state(exchange: Exchange, judge: OracleId) -> StateCheck | None:
    state = exchange.case.expect.part(StateCheck)
    return state if state is not None and state.judge is judge else None


def _what(state: StateCheck, index: int) -> str:
    """One observation in words: `resources/list`, `resources/read file:///a`, `tools/call get_count {...}`."""
    method, params = state.observe[index]
    if not isinstance(params, dict):
        return method
    if method == "tools/call":
        return f"{method} {params.get('name')} {json.dumps(params.get('arguments', {}), sort_keys=True)[:80]}"
    if "uri" in params:
        return f"{method} {params['uri']}"
    return method


def _short(result: Any) -> str:
    """An observed result as a person reads it: its structured content, else its first text, else all of it."""
    shown: Any = result
    if isinstance(result, dict) and "structuredContent" in result:
        shown = result["structuredContent"]
    elif isinstance(result, dict) and isinstance(result.get("content"), list) and result["content"] \
            and isinstance(result["content"][0], dict) and isinstance(result["content"][0].get("text"), str):
        shown = result["content"][0]["text"]
    text = shown if isinstance(shown, str) else json.dumps(shown, sort_keys=True, default=str)
    return text if len(text) <= SHOWN else text[:SHOWN] + "..."


def _changed_message(state: StateCheck, index: int) -> str:
    return (f"{_what(state, index)} answered {_short(state.after[index])} after it, "
            f"{_short(state.again[index])} before (the same twice); sent {len(state.resent)} more times, the call "
            "changed it each time")


@register(ReadOnlyTruthfulFailure, Severity.MEDIUM)
def read_only_truthful(exchange: Exchange) -> Iterator[Failure]:
    """A readOnlyHint: true tool's call changes what is listed or read, or (seen by the hook) a file or a process."""
    for message, key, detail in read_only_changes(exchange):
        yield ReadOnlyTruthfulFailure(Severity.MEDIUM, message, key, detail=detail)
        return
    state = _state(exchange, OracleId.READ_ONLY_TRUTHFUL)
    if state is None or not state.confirmed():
        return
    yield ReadOnlyTruthfulFailure(Severity.MEDIUM, "annotated readOnlyHint: true, but calling it changed the "
                                                   f"server's state: {_changed_message(state, state.confirmed()[0])}")


@register(IdempotentRetryFailure, Severity.MEDIUM)
def idempotent_retry(exchange: Exchange) -> Iterator[Failure]:
    """A tool annotated idempotentHint: true, called again with the same arguments, changes the state again."""
    state = _state(exchange, OracleId.IDEMPOTENT_RETRY)
    if state is None or not state.confirmed():
        return
    yield IdempotentRetryFailure(Severity.MEDIUM, "annotated idempotentHint: true, but the same call repeated (as a "
                                                  "client retries a lost answer) changed the server's state again: "
                                                  f"{_changed_message(state, state.confirmed()[0])}")


@register(UseAfterDeleteFailure, Severity.MEDIUM)
def use_after_delete(exchange: Exchange) -> Iterator[Failure]:
    """An item a destructive delete-like tool removed with success is still returned by a list or a read after it."""
    state = _state(exchange, OracleId.USE_AFTER_DELETE)
    if state is None or not state.item or not _succeeded(exchange):
        return
    index = _still_returned(state)
    if index is not None:
        yield UseAfterDeleteFailure(Severity.MEDIUM, f"the delete of {state.item!r} answered success, but "
                                                     f"{_what(state, index)} still returns it: "
                                                     f"{_short(state.after[index])}")


def _still_returned(state: StateCheck) -> int | None:
    """The observation that still returns the item after the delete, or None.

    A read of the item itself (the item among its arguments) that answered the same success before and after counts
    alone. Otherwise the delete must have changed nothing about the item: one observation holds it before and after,
    and no other lost it (a name the store shares with another thing, a tag of that name, stays where it was).
    """
    item = state.item
    held = [(index, item in _words(before), item in _words(after))
            for index, (before, after) in enumerate(zip(state.again, state.after, strict=False))]
    for index, _, has_after in held:
        if has_after and state.after[index] == state.again[index] and item in _values(state.observe[index][1]):
            return index
    if any(has_before and not has_after for _, has_before, has_after in held):
        return None
    return next((index for index, has_before, has_after in held if has_before and has_after), None)


def _succeeded(exchange: Exchange) -> bool:
    """The call got a result of its own that is not a tool error (`isError`)."""
    answer = next((arrival.incoming.message for arrival in exchange.responses() if arrival.id_tag == ID_CURRENT),
                  None)
    if not isinstance(answer, dict) or not isinstance(answer.get("result"), dict):
        return False
    return answer["result"].get("isError") is not True


def _values(value: Any) -> list[str]:
    """Every string a request's params hold, as it is."""
    if isinstance(value, str):
        return [value]
    if isinstance(value, dict):
        return [text for member in value.values() for text in _values(member)]
    if isinstance(value, list):
        return [text for member in value for text in _values(member)]
    return []


def _words(result: Any) -> set[str]:
    """Every string a successful result holds: JSON values, text contents read as JSON or split into words."""
    if not isinstance(result, dict) or result.get("isError") is True:
        return set()
    found: set[str] = set()
    _collect(result, found)
    return found


def _collect(value: Any, found: set[str]) -> None:
    if isinstance(value, dict):
        for member in value.values():
            _collect(member, found)
    elif isinstance(value, list):
        for member in value:
            _collect(member, found)
    elif isinstance(value, str):
        found.add(value)
        try:
            parsed = json.loads(value)
        except ValueError:
            found.update(word for word in WORD_BREAK.split(value) if word)
            return
        if isinstance(parsed, (dict, list)):
            _collect(parsed, found)
