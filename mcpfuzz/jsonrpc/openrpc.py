"""OpenRPC 1.x documents: the methods of a plain JSON-RPC 2.0 server, their params, results and errors.

Pure: a parsed document in, method declarations out (the dicts a `method/NAME` call target is made from).
"""

from __future__ import annotations

from typing import Any

BY_NAME, BY_POSITION, EITHER = "by-name", "by-position", "either"


class OpenRpcError(Exception):
    """A document mcpfuzz cannot read, said in its terms (where, what)."""


def _resolve(document: dict, node: Any, seen: tuple[str, ...] = ()) -> Any:
    """Follow a local `$ref` (`#/components/...`); a remote one is refused."""
    while isinstance(node, dict) and isinstance(node.get("$ref"), str):
        ref = node["$ref"]
        if not ref.startswith("#/") or ref in seen:
            raise OpenRpcError(f"the reference {ref!r} is not a local, non-circular `#/...` pointer")
        seen = (*seen, ref)
        target: Any = document
        for part in ref[2:].split("/"):
            part = part.replace("~1", "/").replace("~0", "~")
            if not isinstance(target, dict) or part not in target:
                raise OpenRpcError(f"the reference {ref!r} points nowhere in the document")
            target = target[part]
        node = target
    return node


def _components(document: dict) -> dict:
    """The document's `components.schemas`, their refs rewritten to `#/$defs/...` (where a schema root keeps them)."""
    components = document.get("components")
    schemas = components.get("schemas") if isinstance(components, dict) else None
    return {name: _rewrite_refs(value) for name, value in schemas.items()} if isinstance(schemas, dict) else {}


def _with_defs(schema: Any, defs: dict) -> Any:
    """A schema root with the document's component schemas under `$defs` (its refs rewritten to point there)."""
    if not isinstance(schema, dict):
        return schema
    rewritten = _rewrite_refs(schema)
    return {**rewritten, "$defs": defs} if defs else rewritten


def _rewrite_refs(node: Any) -> Any:
    if isinstance(node, dict):
        return {key: (value.replace("#/components/schemas/", "#/$defs/") if key == "$ref" and isinstance(value, str)
                      else _rewrite_refs(value)) for key, value in node.items()}
    if isinstance(node, list):
        return [_rewrite_refs(item) for item in node]
    return node


def read_methods(document: Any) -> list[dict]:
    """The declaration of every method: name, paramsSchema (an object schema), paramOrder, paramStructure,
    result (its schema or None), errors (declared codes), readOnly (an `x-readonly`/`safe` hint)."""
    if not isinstance(document, dict) or not isinstance(document.get("methods"), list):
        raise OpenRpcError("an OpenRPC document is an object with a `methods` array")
    methods = []
    defs = _components(document)
    for index, raw in enumerate(document["methods"]):
        method = _resolve(document, raw)
        where = f"methods[{index}]"
        if not isinstance(method, dict) or not isinstance(method.get("name"), str) or not method["name"]:
            raise OpenRpcError(f"{where} has no string `name`")
        where = f"method {method['name']!r}"
        params = method.get("params", [])
        if not isinstance(params, list):
            raise OpenRpcError(f"{where}: `params` is not an array of content descriptors")
        properties: dict[str, Any] = {}
        required: list[str] = []
        for position, raw_param in enumerate(params):
            param = _resolve(document, raw_param)
            if not isinstance(param, dict) or not isinstance(param.get("name"), str):
                raise OpenRpcError(f"{where}: params[{position}] has no string `name`")
            schema = param.get("schema", {})
            properties[param["name"]] = _rewrite_refs(schema)
            if param.get("required") is True:
                required.append(param["name"])
        structure = method.get("paramStructure", EITHER)
        if structure not in (BY_NAME, BY_POSITION, EITHER):
            raise OpenRpcError(f"{where}: `paramStructure` is {structure!r}, not by-name, by-position or either")
        result = _resolve(document, method.get("result")) if "result" in method else None
        errors = [_resolve(document, error) for error in method.get("errors", []) or []]
        methods.append({
            "name": method["name"],
            "paramsSchema": _with_defs({"type": "object", "properties": properties, "required": required,
                                        "additionalProperties": False}, defs),
            "paramOrder": list(properties),
            "paramStructure": structure,
            "result": _with_defs(result.get("schema"), defs) if isinstance(result, dict) else None,
            "errors": sorted({e["code"] for e in errors if isinstance(e, dict) and isinstance(e.get("code"), int)}),
            "readOnly": method.get("x-readonly") is True or method.get("x-safe") is True,
        })
    if not methods:
        raise OpenRpcError("the document declares no method")
    return methods


def method_declaration(name: str, params_schema: dict) -> dict:
    """A declaration from a bare params schema (`--method NAME --params-schema JSON`): by name, nothing else known
    (`errors` None: no error code is judged)."""
    properties = params_schema.get("properties")
    return {"name": name, "paramsSchema": params_schema, "paramOrder": list(properties) if isinstance(
        properties, dict) else [], "paramStructure": BY_NAME, "result": None, "errors": None, "readOnly": False}
