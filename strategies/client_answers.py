"""The answers mcpfuzz gives as a client: results for elicitation, sampling and roots, valid or broken on purpose,
and the params of a 2026-07-28 retry (`inputResponses`, `requestState`) with their tampered forms. No I/O."""

from __future__ import annotations

import base64
import binascii
import json
from dataclasses import dataclass
from typing import Any

from mcpfuzz.jsonrpc.client_check import AnswerMode, RetryKind

OVERSIZED = 256 * 1024  # characters: far past any answer a real client sends, well inside every reader's limit
CLIENT_ERROR = -32603  # what a client whose user interface failed might send instead of a result


@dataclass(frozen=True)
class ClientAnswer:
    """One answer to a server's request: a result, an error (code, message), or nothing (both None)."""

    result: dict | None = None
    error: tuple[int, str] | None = None


def client_answer(method: str, params: Any, mode: AnswerMode, roots: tuple[str, ...]) -> ClientAnswer:
    """The answer to the server's `method` request given `mode` (deterministic: the same request, the same answer)."""
    if mode is AnswerMode.SILENCE:
        return ClientAnswer()
    if mode is AnswerMode.ERROR:
        return ClientAnswer(error=(CLIENT_ERROR, "mcpfuzz: the client could not serve this request"))
    params = params if isinstance(params, dict) else {}
    if method == "elicitation/create":
        return ClientAnswer(_elicitation(params, mode))
    if method == "sampling/createMessage":
        return ClientAnswer(_sampling(mode))
    return ClientAnswer(_roots(mode, roots))


def _elicitation(params: dict, mode: AnswerMode) -> dict:
    """2025-11-25 client/elicitation: `action` accept (with `content` of primitives), decline or cancel."""
    schema = params.get("requestedSchema")
    properties = schema.get("properties") if isinstance(schema, dict) else None
    properties = properties if isinstance(properties, dict) else {}
    if mode is AnswerMode.DECLINE:
        return {"action": "decline"}
    if mode is AnswerMode.CANCEL:
        return {"action": "cancel"}
    content = {name: schema_value(spec) for name, spec in properties.items()}
    if mode is AnswerMode.WRONG_TYPES:
        return {"action": "accept", "content": {name: _wrong(value) for name, value in content.items()}
                or "not an object"}
    if mode is AnswerMode.MISSING_FIELDS:
        return {"content": content}  # no action
    if mode is AnswerMode.OVERSIZED:
        strings = [name for name, value in content.items() if isinstance(value, str)]
        for name in strings or ["mcpfuzz"]:
            content[name] = "x" * OVERSIZED
        return {"action": "accept", "content": content}
    return {"action": "accept", "content": content}


def schema_value(spec: Any) -> Any:
    """A value a primitive elicitation schema accepts (its default, first choice, or a bound-respecting value)."""
    if not isinstance(spec, dict):
        return "mcpfuzz"
    if "default" in spec:
        return spec["default"]
    choices = spec.get("enum") or [item.get("const") for item in spec.get("oneOf", []) if isinstance(item, dict)]
    if choices:
        return choices[0]
    kind = spec.get("type")
    if kind in ("number", "integer"):
        low, high = spec.get("minimum"), spec.get("maximum")
        value = low if isinstance(low, (int, float)) else min(0, high) if isinstance(high, (int, float)) else 0
        return int(value) if kind == "integer" else value
    if kind == "boolean":
        return True
    if kind == "array":
        items = spec.get("items")
        items = items if isinstance(items, dict) else {}
        first = items.get("enum") or [item.get("const") for item in items.get("anyOf", []) if isinstance(item, dict)]
        return first[:1]
    text = {"email": "fuzz@example.com", "uri": "https://example.com/", "date": "2025-01-01",
            "date-time": "2025-01-01T00:00:00Z"}.get(spec.get("format", ""), "mcpfuzz")
    least = spec.get("minLength")
    if isinstance(least, int) and len(text) < least:
        text = text + "x" * (least - len(text))
    most = spec.get("maxLength")
    return text[:most] if isinstance(most, int) and most >= 0 else text


def _wrong(value: Any) -> Any:
    """A value of another JSON type than `value`."""
    if isinstance(value, (bool, str)):
        return 12345
    if isinstance(value, (int, float)):
        return "not a number"
    return {"not": "a primitive"}


def _sampling(mode: AnswerMode) -> dict:
    """2025-11-25 client/sampling: a CreateMessageResult with one text message."""
    text = "x" * OVERSIZED if mode is AnswerMode.OVERSIZED else "mcpfuzz sampled text"
    valid = {"role": "assistant", "content": {"type": "text", "text": text}, "model": "mcpfuzz",
             "stopReason": "endTurn"}
    if mode is AnswerMode.WRONG_TYPES:
        return {"role": 7, "content": "not a content block", "model": ["mcpfuzz"]}
    if mode is AnswerMode.MISSING_FIELDS:
        return {"model": "mcpfuzz"}
    return valid


def _roots(mode: AnswerMode, roots: tuple[str, ...]) -> dict:
    """2025-11-25 client/roots: `roots`, each a `file://` URI with a name."""
    listed = [{"uri": uri, "name": f"mcpfuzz-root-{index}"} for index, uri in enumerate(roots, 1)]
    if mode is AnswerMode.WRONG_TYPES:
        return {"roots": "file:///"}
    if mode is AnswerMode.MISSING_FIELDS:
        return {"roots": [{"name": "no uri"}]}
    if mode is AnswerMode.OVERSIZED:
        return {"roots": listed + [{"uri": "file:///" + "x" * OVERSIZED, "name": "long"}]}
    return {"roots": listed}


def input_responses(requests: Any, mode: AnswerMode, roots: tuple[str, ...]) -> dict:
    """2026-07-28 `inputResponses`: each asked key answered as a legacy request of its method would be."""
    responses: dict = {}
    if not isinstance(requests, dict):
        return responses
    for key, asked in requests.items():
        asked = asked if isinstance(asked, dict) else {}
        answer = client_answer(str(asked.get("method", "")), asked.get("params"), mode, roots)
        if answer.result is not None:
            responses[key] = answer.result
        elif answer.error is not None:
            responses[key] = {"error": {"code": answer.error[0], "message": answer.error[1]}}
    return responses


def retry_params(original: dict, asked: dict, kind: RetryKind, roots: tuple[str, ...]) -> dict:
    """The params of a retry of `original` (its params) after the `input_required` result `asked`."""
    params = {key: value for key, value in original.items() if key not in ("inputResponses", "requestState")}
    responses = input_responses(asked.get("inputRequests"), AnswerMode.ACCEPT, roots)
    state = asked.get("requestState")
    if kind is RetryKind.NO_RESPONSES:
        responses = {}
    elif kind is RetryKind.WRONG_KEYS:
        responses = {f"mcpfuzz-unknown-{key}": value for key, value in responses.items()} or {"mcpfuzz": {}}
    if kind is not RetryKind.NO_RESPONSES:
        params["inputResponses"] = responses
    if isinstance(state, str) and kind is not RetryKind.NO_STATE:
        params["requestState"] = tampered_state(state, kind)
    if kind is RetryKind.EXTRA_PARAMS:
        params["mcpfuzzExtra"] = {"nested": [1, "two", None]}
    return params


def tampered_state(state: str, kind: RetryKind) -> str:
    """`state` as the retry kind sends it: exact, cut in half, one character changed, a value edited, padded."""
    if kind is RetryKind.TRUNCATED_STATE:
        return state[: len(state) // 2]
    if kind is RetryKind.FLIPPED_STATE:
        middle = len(state) // 2
        if not state:
            return "A"
        swap = "B" if state[middle] != "B" else "C"
        return state[:middle] + swap + state[middle + 1:]
    if kind is RetryKind.EDITED_STATE:
        return edited_state(state) or tampered_state(state, RetryKind.FLIPPED_STATE)
    if kind is RetryKind.OVERSIZED_STATE:
        return state + "A" * OVERSIZED
    return state


def edited_state(state: str) -> str | None:
    """A readable state (JSON, or base64 of JSON) with its first string or number value changed; None if opaque."""
    decoded = _json(state)
    if decoded is not None:
        changed = _edit(decoded)
        return json.dumps(changed, separators=(",", ":")) if changed != decoded else None
    for decode, encode in ((base64.urlsafe_b64decode, base64.urlsafe_b64encode),
                           (base64.b64decode, base64.b64encode)):
        try:
            raw = decode(state + "=" * (-len(state) % 4))
        except (binascii.Error, ValueError):
            continue
        inner = _json(raw.decode("utf-8", "replace"))
        if inner is None:
            continue
        changed = _edit(inner)
        if changed == inner:
            return None
        text = encode(json.dumps(changed, separators=(",", ":")).encode()).decode()
        return text if state.endswith("=") else text.rstrip("=")
    return None


def _json(text: str) -> Any:
    try:
        value = json.loads(text)
    except ValueError:
        return None
    return value if isinstance(value, (dict, list)) else None


def _edit(value: Any) -> Any:
    """The same JSON with its first string or number leaf changed (depth first, keys in order)."""
    done = False

    def walk(node: Any) -> Any:
        nonlocal done
        if done:
            return node
        if isinstance(node, dict):
            return {key: walk(item) for key, item in node.items()}
        if isinstance(node, list):
            return [walk(item) for item in node]
        if isinstance(node, bool) or node is None:
            return node
        done = True
        if isinstance(node, str):
            return node + "-mcpfuzz"
        return node + 1

    return walk(value)
