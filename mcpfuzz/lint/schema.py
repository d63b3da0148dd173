"""Schema rules: each tool's inputSchema and outputSchema, checked as JSON Schema and as MCP requires."""

from __future__ import annotations

import functools
import json
import math
import re
import warnings
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from mcpfuzz.lint.declarations import TOOLS, listed, short
from mcpfuzz.lint.model import Category, Declared, Found, LintSeverity
from mcpfuzz.lint.registry import rule
from mcpfuzz.lint.schema_walk import object_schemas, subschemas
from mcpfuzz.strategies.arguments.schema_prep import DIALECTS, dialect_of

S, ERROR, WARNING, INFO = Category.SCHEMA, LintSeverity.ERROR, LintSeverity.WARNING, LintSeverity.INFO
TYPES = frozenset({"null", "boolean", "object", "array", "number", "string", "integer"})
# Metaschema complaints these rules explain better: SCHEMA-001 leaves them to SCHEMA-006 and SCHEMA-007.
OWNED_KEYWORDS = frozenset({"type", "required"})
COMPOSED = ("allOf", "anyOf", "oneOf", "$ref", "if", "dependentSchemas")


@dataclass(frozen=True)
class ToolSchema:
    """One schema a tool declares: where it is, whose it is, and the schema."""

    location: str
    target: str | None
    schema: Any


def tool_schemas(declared: Declared) -> Iterator[ToolSchema]:
    """Every tool's inputSchema (when it is an object: PROTO-005 reports the others) and outputSchema."""
    for item in listed(declared, TOOLS):
        if not isinstance(item.value, dict):
            continue
        for member in ("inputSchema", "outputSchema"):
            schema = item.value.get(member)
            if isinstance(schema, dict) or (member == "outputSchema" and member in item.value):
                yield ToolSchema(f"{item.location}.{member}", item.target, schema)


def _path(location: str, parts: Any) -> str:
    return location + "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in parts)


# Checking a schema against its metaschema costs about 3 ms: distinct schemas beyond this many are not checked
# (a server listing 10,000 different tools is linted in seconds, and says what it left out).
MAX_METASCHEMA_CHECKS = 300


@functools.cache
def _metaschema_validator(cls: Any) -> Any:
    return cls(cls.META_SCHEMA)


@functools.lru_cache(maxsize=MAX_METASCHEMA_CHECKS)
def _metaschema_errors(text: str) -> tuple[tuple[tuple[Any, ...], str], ...]:
    """(path, message) of each metaschema error of a schema given as canonical JSON; cached (tools share schemas)."""
    schema = json.loads(text)
    validator = _metaschema_validator(DIALECTS[dialect_of(schema)])
    return tuple((tuple(error.absolute_path), error.message) for error in validator.iter_errors(schema))


def _canonical(schema: Any) -> str | None:
    try:
        return json.dumps(schema, sort_keys=True)
    except (TypeError, ValueError):
        return None


def metaschema_errors(schema: dict, checked: set[str]) -> tuple[tuple[tuple[Any, ...], str], ...] | None:
    """The schema's metaschema errors, or None when it was left out (`checked` holds the schemas seen so far)."""
    text = _canonical(schema)
    if text is None:
        return None
    if text not in checked and len(checked) >= MAX_METASCHEMA_CHECKS:
        return None
    checked.add(text)
    return _metaschema_errors(text)


@rule("SCHEMA-001", "valid-json-schema", S, ERROR)
def valid_json_schema(declared: Declared) -> Iterator[Found]:
    """Every tool schema is valid JSON Schema in its dialect (2020-12 unless `$schema` says otherwise)."""
    checked: set[str] = set()
    left_out = 0
    for tool in tool_schemas(declared):
        if not isinstance(tool.schema, dict):
            yield Found(tool.location, f"the schema is {short(tool.schema)}, not a JSON object", "declare an object "
                        'schema, e.g. `{"type": "object", "properties": {...}}`', tool.target)
            continue
        errors = metaschema_errors(tool.schema, checked)
        if errors is None:
            left_out += 1
            continue
        for parts, message in errors:
            if parts and parts[-1] in OWNED_KEYWORDS:
                continue
            yield Found(_path(tool.location, parts), f"invalid JSON Schema: {message}",
                        "fix the keyword so the schema validates against its dialect's metaschema", tool.target)
    if left_out:
        yield Found("tools", f"{left_out} schemas beyond the first {MAX_METASCHEMA_CHECKS} distinct ones were not "
                    "checked against their metaschema", "lint fewer tools at a time to check them all",
                    severity=INFO)


@rule("SCHEMA-002", "root-type-object", S, ERROR)
def root_type_object(declared: Declared) -> Iterator[Found]:
    """A tool's inputSchema (and, up to 2025-11-25, its outputSchema) has `"type": "object"` at the root."""
    # 2026-07-28 (SEP-2106): an outputSchema may be any JSON Schema 2020-12, and structuredContent any JSON value.
    modern = declared.era == "modern"
    for tool in tool_schemas(declared):
        if modern and tool.location.endswith(".outputSchema"):
            continue
        if isinstance(tool.schema, dict) and tool.schema.get("type") != "object":
            yield Found(f"{tool.location}.type", f"the root `type` is {short(tool.schema.get('type', '(missing)'))}"
                        ', not "object"', 'add `"type": "object"` at the root: tool arguments and structured results '
                        "are JSON objects", tool.target,
                        covered_by="response-schema" if tool.location.endswith(".inputSchema") else None)


@rule("SCHEMA-003", "object-properties", S, INFO)
def object_properties(declared: Declared) -> Iterator[Found]:
    """An object schema says what it holds: `properties`, `patternProperties` or `additionalProperties`."""
    for tool in tool_schemas(declared):
        for node, where in object_schemas(tool.schema, tool.location):
            if not any(key in node for key in ("properties", "patternProperties", "additionalProperties",
                                               *COMPOSED)):
                yield Found(where, "an object schema without `properties`: clients and models cannot tell what "
                            "to send", 'list the properties, or say `"additionalProperties": false` for no '
                            "arguments (or a schema for free-form values)", tool.target)


@rule("SCHEMA-004", "required-in-properties", S, WARNING)
def required_in_properties(declared: Declared) -> Iterator[Found]:
    """Every name in `required` is a property the schema defines in `properties`."""
    for tool in tool_schemas(declared):
        for node, where in object_schemas(tool.schema, tool.location):
            required, properties = node.get("required"), node.get("properties", {})
            if not isinstance(required, list) or not isinstance(properties, dict) or "patternProperties" in node \
                    or any(key in node for key in COMPOSED):
                continue
            for name in required:
                if isinstance(name, str) and name not in properties:
                    yield Found(f"{where}.required", f"`required` names {name!r}, which `properties` does not define",
                                f"define {name!r} under `properties`, or drop it from `required`", tool.target)


@rule("SCHEMA-005", "tool-description", S, INFO)
def tool_description(declared: Declared) -> Iterator[Found]:
    """Every tool has a description (models choose tools by it)."""
    for item in listed(declared, TOOLS):
        if isinstance(item.value, dict) and item.name and not _has_text(item.value.get("description")):
            yield Found(f"{item.location}.description", "the tool has no description",
                        "say what the tool does and when to use it", item.target)


def _has_text(value: Any) -> bool:
    return isinstance(value, str) and bool(value.strip())


@rule("SCHEMA-006", "type-keyword", S, ERROR)
def type_keyword(declared: Declared) -> Iterator[Found]:
    """`type` is one of the seven JSON Schema types, or a non-empty array of distinct ones."""
    for tool in tool_schemas(declared):
        for node, where in subschemas(tool.schema, tool.location):
            if not isinstance(node, dict) or "type" not in node:
                continue
            kind = node["type"]
            kinds = kind if isinstance(kind, list) else [kind]
            if not kinds or len(set(map(str, kinds))) != len(kinds) or \
                    any(not isinstance(k, str) or k not in TYPES for k in kinds):
                yield Found(f"{where}.type", f"`type` is {short(kind)}", "use one of " + ", ".join(sorted(TYPES)) +
                            ' (e.g. "integer", not "int"), or an array of distinct ones', tool.target)


@rule("SCHEMA-007", "required-array", S, ERROR)
def required_array(declared: Declared) -> Iterator[Found]:
    """`required` is an array of distinct strings (not a boolean on the property, as in draft 3)."""
    for tool in tool_schemas(declared):
        for node, where in subschemas(tool.schema, tool.location):
            if not isinstance(node, dict) or "required" not in node:
                continue
            required = node["required"]
            if not isinstance(required, list) or not all(isinstance(n, str) for n in required) \
                    or len(set(required)) != len(required):
                yield Found(f"{where}.required", f"`required` is {short(required)}", 'list the names of the '
                            'required properties on the object: `"required": ["name"]`', tool.target)


KNOWN_DIALECTS = ("json-schema.org/draft/2020-12/schema", "json-schema.org/draft/2019-09/schema",
                  "json-schema.org/draft-07/schema", "json-schema.org/draft-06/schema",
                  "json-schema.org/draft-04/schema")


@rule("SCHEMA-008", "schema-dialect", S, WARNING)
def schema_dialect(declared: Declared) -> Iterator[Found]:
    """`$schema`, when given, names a JSON Schema dialect clients know (draft-04 to 2020-12)."""
    for tool in tool_schemas(declared):
        if isinstance(tool.schema, dict) and "$schema" in tool.schema:
            uri = tool.schema["$schema"]
            if not isinstance(uri, str) or not any(d in uri for d in KNOWN_DIALECTS):
                yield Found(f"{tool.location}.$schema", f"`$schema` is {short(uri)}, a dialect clients do not know",
                            "drop `$schema` (MCP's default is 2020-12) or name "
                            "https://json-schema.org/draft/2020-12/schema", tool.target)


@rule("SCHEMA-009", "unresolvable-ref", S, ERROR)
def unresolvable_ref(declared: Declared) -> Iterator[Found]:
    """Every `$ref` resolves inside the schema (clients do not fetch remote schemas)."""
    for tool in tool_schemas(declared):
        anchors = {node.get("$anchor") for node, _ in subschemas(tool.schema, "") if isinstance(node, dict)}
        for node, where in subschemas(tool.schema, tool.location):
            if not isinstance(node, dict) or "$ref" not in node:
                continue
            ref = node["$ref"]
            if not isinstance(ref, str):
                continue  # SCHEMA-001 says so
            if not ref.startswith("#"):
                yield Found(f"{where}.$ref", f"`$ref` {ref!r} points outside the schema; clients do not fetch it",
                            "copy the referenced schema under `$defs` and refer to it as `#/$defs/...`",
                            tool.target, severity=WARNING)
            elif ref.startswith("#/") or ref == "#":
                if not _resolves(tool.schema, ref):
                    yield Found(f"{where}.$ref", f"`$ref` {ref!r} points nowhere in the schema",
                                "check the name under `$defs` (or `definitions`) it refers to", tool.target)
            elif ref[1:] not in anchors:
                yield Found(f"{where}.$ref", f"`$ref` {ref!r} names no `$anchor` of the schema",
                            "add the `$anchor` or refer to the subschema by its JSON pointer", tool.target)


def _resolves(root: Any, ref: str) -> bool:
    from urllib.parse import unquote

    node = root
    for raw in ref[2:].split("/") if ref != "#" else []:
        part = unquote(raw).replace("~1", "/").replace("~0", "~")
        if isinstance(node, dict) and part in node:
            node = node[part]
        elif isinstance(node, list) and part.isdigit() and int(part) < len(node):
            node = node[int(part)]
        else:
            return False
    return True


BOUNDS = (("minimum", "maximum"), ("minLength", "maxLength"), ("minItems", "maxItems"),
          ("minProperties", "maxProperties"))


def _number(value: Any) -> bool:
    if isinstance(value, bool):
        return False
    # An integer of 400 digits is valid JSON: compared exactly, never through a float (which overflows).
    return isinstance(value, int) or (isinstance(value, float) and math.isfinite(value))


def _unsatisfiable(node: Any) -> str | None:
    """Why nothing can be valid against this one schema node (checked alone), or None."""
    if node is False:
        return "the schema is `false`"
    if not isinstance(node, dict):
        return None
    if node.get("not") in (True, {}):
        return "`not` holds a schema every value matches"
    if isinstance(node.get("enum"), list) and not node["enum"]:
        return "`enum` is empty"
    if "const" in node and isinstance(node.get("enum"), list) and node["const"] not in node["enum"]:
        return "`const` is not one of the `enum` values"
    for low, high in BOUNDS:
        if _number(node.get(low)) and _number(node.get(high)) and node[low] > node[high]:
            return f"`{low}` {node[low]} is above `{high}` {node[high]}"
    above: Any = node.get("exclusiveMinimum")
    below: Any = node.get("exclusiveMaximum")
    if _number(above) and _number(below) and above >= below:
        return f"`exclusiveMinimum` {above} is not below `exclusiveMaximum` {below}"
    required, properties = node.get("required"), node.get("properties")
    if isinstance(required, list) and isinstance(properties, dict):
        for name in required:
            if isinstance(name, str) and properties.get(name) is False:
                return f"the required property {name!r} has the schema `false`"
    if isinstance(required, list) and _number(node.get("maxProperties")) and \
            len(set(map(str, required))) > node["maxProperties"]:
        return f"{len(required)} properties are required but `maxProperties` is {node['maxProperties']}"
    return None


@rule("SCHEMA-010", "unsatisfiable", S, ERROR)
def unsatisfiable(declared: Declared) -> Iterator[Found]:
    """Some value is valid: no empty `enum`, crossed bounds, `false` root or `not: {}` makes a schema unsatisfiable."""
    for tool in tool_schemas(declared):
        for node, where in subschemas(tool.schema, tool.location):
            if node is False and where != tool.location:
                continue  # `false` under additionalProperties, not, ... forbids something; only at the root all
            why = _unsatisfiable(node)
            if why is not None:
                yield Found(where, f"no value can be valid: {why}", "relax the keyword so that some value "
                            "passes (an unsatisfiable argument makes every call fail)", tool.target)


# ECMA-262 forms Python's `re` spells differently (or lacks); translated before compiling, so they are no errors.
_ECMA_FORMS = ((re.compile(r"\(\?<(?=[A-Za-z_$])"), "(?P<"), (re.compile(r"\\[pP]\{[^}]*\}"), "x"),
               (re.compile(r"\[\^\]"), r"[\\s\\S]"), (re.compile(r"\\c[A-Za-z]"), "x"), (re.compile(r"\\k<"), "(?P="))


def regex_problem(pattern: str) -> str | None:
    """Why a `pattern` is no valid regular expression, or None (ECMA-262 forms Python lacks are accepted)."""
    text = pattern
    for form, replacement in _ECMA_FORMS:
        text = form.sub(replacement, text)
    text = re.sub(r"\(\?P=([A-Za-z_$][\w$]*)>", r"(?P=\1)", text)
    try:
        with warnings.catch_warnings():  # "possible nested set" and the like: advice about a valid expression
            warnings.simplefilter("ignore")
            re.compile(text)
    except re.error as error:
        return str(error)
    except (RecursionError, OverflowError):
        return None  # too large for Python's compiler, not necessarily invalid
    return None


@rule("SCHEMA-011", "invalid-pattern", S, ERROR)
def invalid_pattern(declared: Declared) -> Iterator[Found]:
    """Every `pattern` and `patternProperties` name is a valid regular expression."""
    for tool in tool_schemas(declared):
        for node, where in subschemas(tool.schema, tool.location):
            if not isinstance(node, dict):
                continue
            patterns: list[tuple[str, str]] = [(f"{where}.pattern", node["pattern"])] \
                if isinstance(node.get("pattern"), str) else []
            if isinstance(node.get("patternProperties"), dict):
                patterns += [(f"{where}.patternProperties", key) for key in node["patternProperties"]]
            for location, pattern in patterns:
                why = regex_problem(pattern)
                if why is not None:
                    yield Found(location, f"{pattern!r} is not a valid regular expression ({why})",
                                "fix the expression (ECMA-262 syntax); validators reject every value otherwise",
                                tool.target)


@rule("SCHEMA-012", "default-examples-valid", S, WARNING)
def default_examples_valid(declared: Declared) -> Iterator[Found]:
    """A `default` and every `examples` value are valid against the schema they sit in."""
    seen: set[str] = set()
    for tool in tool_schemas(declared):
        annotated = [(node, where) for node, where in subschemas(tool.schema, tool.location)
                     if isinstance(node, dict) and ("default" in node or isinstance(node.get("examples"), list))]
        if not annotated or not isinstance(tool.schema, dict) or metaschema_errors(tool.schema, seen) != ():
            continue  # nothing to check, or an invalid schema (SCHEMA-001's), or one left unchecked
        root = DIALECTS[dialect_of(tool.schema)](tool.schema)
        for node, where in annotated:
            checked = [("default", node["default"])] if "default" in node else []
            if isinstance(node.get("examples"), list):
                checked += [(f"examples[{i}]", value) for i, value in enumerate(node["examples"])]
            for keyword, value in checked:
                problem = _first_error(root, node, value)
                if problem is not None:
                    yield Found(f"{where}.{keyword}", f"`{keyword}` {short(value, 60)} is not valid against its own "
                                f"schema: {problem}", "fix the value, or the schema around it", tool.target)


def _first_error(root: Any, node: dict, value: Any) -> str | None:
    try:
        error = next(iter(root.evolve(schema=node).iter_errors(value)), None)
    except Exception:  # noqa: BLE001  (an unresolvable $ref is SCHEMA-009's to report)
        return None
    return None if error is None else error.message

