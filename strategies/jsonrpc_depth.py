"""Plain JSON-RPC 2.0 cases made from one declared method and a valid call of it: its name in other letter cases,
its params by position where the OpenRPC document allows it (and where it does not), one array item of the wrong
type, and a valid request on a line of about a megabyte."""

from __future__ import annotations

import json
from dataclasses import replace
from typing import Any

from mcpfuzz.strategies.arguments.call import NEGATIVE, POSITIVE, ArgumentCall
from mcpfuzz.strategies.arguments.method_calls import METHOD_FAMILY, method_expectation, positional
from mcpfuzz.strategies.messages import FrameBuilder

from mcpfuzz.jsonrpc import expectation as ex
from mcpfuzz.jsonrpc.encode import dumps
from mcpfuzz.jsonrpc.frame import Case
from mcpfuzz.jsonrpc.openrpc import BY_NAME, BY_POSITION, EITHER

DEPTH_FAMILY = METHOD_FAMILY  # on the method's own label: `method/NAME`
BIG_LINE = 1 << 20  # bytes: a request line of about a megabyte
# A value of another JSON type than the one an array's items declare.
WRONG_ITEMS: dict[str, Any] = {"string": 12345, "integer": "not a number", "number": "not a number",
                               "boolean": "true", "object": "not an object", "array": "not an array",
                               "null": "not null"}


def other_case_name(name: str, declared: set[str]) -> str | None:
    """The method's name in other letters (`Store_Memory` for `store_memory`), or None when every variant is
    declared too (JSON-RPC 2.0 matches names exactly, so a variant is an unknown method)."""
    titled = "_".join(part[:1].upper() + part[1:] for part in name.split("_"))
    for variant in (titled, name.swapcase(), name.upper()):
        if variant != name and variant not in declared:
            return variant
    return None


def _request(rid: Any, method: str, params: Any) -> bytes:
    return dumps({"jsonrpc": "2.0", "id": rid, "method": method, "params": params})


def other_case_case(builder: FrameBuilder, method: dict, arguments: dict, declared: set[str]) -> Case | None:
    """The method called with valid params under its name in other letters: -32601."""
    variant = other_case_name(method["name"], declared)
    if variant is None:
        return None
    rid = builder.fresh_id()
    params = positional(method, arguments) if method.get("paramStructure") == BY_POSITION else arguments
    return Case(method["name"], DEPTH_FAMILY, f"{variant}: the method's name in other letters (names match "
                "exactly)", _request(rid, variant, params), ex.method_not_found(rid), patient=True)


def structure_case(builder: FrameBuilder, method: dict, arguments: dict) -> Case | None:
    """Valid values in the structure the document does not say by default: by position where it says `either`
    (accepted like by name), by position where it says `by-name` and by name where it says `by-position` (-32602)."""
    structure, order = method.get("paramStructure", EITHER), method.get("paramOrder") or []
    if not order or not arguments:
        return None
    rid = builder.fresh_id()
    name = method["name"]
    if structure == BY_NAME:
        call = ArgumentCall(NEGATIVE, arguments, "valid values by position; the document says by-name",
                            rule="paramStructure")
        expect = replace(ex.invalid_params(rid, note="OpenRPC paramStructure by-name: callers MUST pass an object"),
                         wrong_answer="low")
        return Case(name, DEPTH_FAMILY, f"{name}: {call.description}", _request(rid, name, positional(
            method, arguments)), expect, patient=True)
    if structure == BY_POSITION:
        call = ArgumentCall(NEGATIVE, arguments, "valid values by name; the document says by-position",
                            rule="paramStructure")
        expect = replace(ex.invalid_params(rid, note="OpenRPC paramStructure by-position: callers MUST pass an "
                                           "array"), wrong_answer="low")
        return Case(name, DEPTH_FAMILY, f"{name}: {call.description}", _request(rid, name, arguments), expect,
                    patient=True)
    call = ArgumentCall(POSITIVE, arguments, "valid values by position; the document says either")
    return Case(name, DEPTH_FAMILY, f"{name}: {call.description}", _request(rid, name, positional(
        method, arguments)), method_expectation(rid, call, method), patient=True)


def _item_type(schema: Any) -> str | None:
    """The one JSON type an array schema's items declare, or None."""
    if not isinstance(schema, dict) or schema.get("type") != "array":
        return None
    items = schema.get("items")
    kind = items.get("type") if isinstance(items, dict) else None
    return kind if isinstance(kind, str) and kind in WRONG_ITEMS else None


def wrong_item_cases(builder: FrameBuilder, method: dict, arguments: dict) -> list[Case]:
    """For each array param whose items have one type: valid params but one item of another type (-32602)."""
    schema = method.get("paramsSchema")
    properties = schema.get("properties") if isinstance(schema, dict) else None
    if not isinstance(properties, dict):
        return []
    cases = []
    for prop, subschema in properties.items():
        kind = _item_type(subschema)
        if kind is None:
            continue
        given = arguments.get(prop)
        kept = given if isinstance(given, list) else []
        wrong = WRONG_ITEMS[kind]
        broken = {**arguments, prop: [*kept[:1], wrong]}
        call = ArgumentCall(NEGATIVE, broken, f"`{prop}` with one item {json.dumps(wrong)} among {kind} items",
                            rule="items")
        rid = builder.fresh_id()
        params = positional(method, broken) if method.get("paramStructure") == BY_POSITION else broken
        cases.append(Case(method["name"], DEPTH_FAMILY, f"{method['name']}: {call.description}",
                          _request(rid, method["name"], params), method_expectation(rid, call, method),
                          patient=True))
    return cases


def big_line_case(builder: FrameBuilder, method: dict, arguments: dict) -> Case:
    """A valid request padded with whitespace between its members to about a megabyte: still valid JSON, so it
    is answered (a result, or a clean error such as a size limit), never a crash or silence."""
    rid = builder.fresh_id()
    params = positional(method, arguments) if method.get("paramStructure") == BY_POSITION else arguments
    frame = _request(rid, method["name"], params)
    padded = frame[:1] + b" " * max(0, BIG_LINE - len(frame)) + frame[1:]
    expect = ex.any_answer(rid, note="a valid request on a line of about 1 MB (whitespace between members)")
    return Case(method["name"], DEPTH_FAMILY, f"{method['name']}: a valid request on a {len(padded)}-byte line",
                padded, expect, patient=True)


def depth_cases(builder: FrameBuilder, methods: list[tuple[dict, dict]]) -> list[Case]:
    """The depth cases, in order; `methods` pairs each declaration with valid params by name. One name in other
    letters (the first method's) and one megabyte line (the first read-only method's, else the first one's) in all;
    the param structure and wrong array items per method."""
    declared = {method["name"] for method, _ in methods}
    cases: list[Case] = []
    # Names are matched by the server's one dispatcher: one method in other letters tells for all of them.
    renamed = next((made for method, arguments in methods
                    if (made := other_case_case(builder, method, arguments, declared)) is not None), None)
    if renamed is not None:
        cases.append(renamed)
    for method, arguments in methods:
        structure = structure_case(builder, method, arguments)
        if structure is not None:
            cases.append(structure)
        cases += wrong_item_cases(builder, method, arguments)
    if methods:
        method, arguments = next((pair for pair in methods if pair[0].get("readOnly") is True), methods[0])
        cases.append(big_line_case(builder, method, arguments))
    return cases
