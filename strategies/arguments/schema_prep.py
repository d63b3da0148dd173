"""Read a tool's inputSchema: its dialect, a validator for it, and a draft-7 copy a generator can draw from."""

from __future__ import annotations

import copy
import json
import threading
from collections import OrderedDict
from dataclasses import dataclass, field
from typing import Any

from jsonschema import (
    Draft4Validator,
    Draft6Validator,
    Draft7Validator,
    Draft201909Validator,
    Draft202012Validator,
    validators,
)
from jsonschema.exceptions import SchemaError
from jsonschema.protocols import Validator
from mcpfuzz.strategies.arguments.formats import format_checker

# A recursive $ref is unrolled this many times, then cut (drawn values stay finite).
RECURSION_DEPTH = 3

DIALECTS: dict[str, type] = {
    "draft/2020-12": Draft202012Validator,
    "draft/2019-09": Draft201909Validator,
    "draft-07": Draft7Validator,
    "draft-06": Draft6Validator,
    "draft-04": Draft4Validator,
}
# Subschema-holding keywords, by how they hold them.
_ONE = ("additionalProperties", "additionalItems", "items", "contains", "propertyNames", "not", "if", "then",
        "else", "unevaluatedProperties", "unevaluatedItems")
_MANY = ("allOf", "anyOf", "oneOf", "prefixItems")
_BY_NAME = ("properties", "patternProperties", "dependentSchemas", "$defs", "definitions")
# Keywords the generator cannot honour: dropped from the generator's copy, enforced by the validator.
_FILTER_ONLY = ("unevaluatedProperties", "unevaluatedItems", "minContains", "maxContains")
_META = ("$schema", "$id", "$anchor", "$comment", "$defs", "definitions", "$vocabulary")


class SchemaProblem(Exception):
    """A schema mcpfuzz cannot draw arguments from, in the user's terms."""

    def __init__(self, keyword: str, message: str, tip: str) -> None:
        super().__init__(message)
        self.keyword = keyword
        self.message = message
        self.tip = tip


@dataclass
class PreparedSchema:
    """The original schema, its validator, and the generator's draft-7 copy."""

    original: Any
    validator: Validator
    generation: Any
    dialect: str
    notes: list[str] = field(default_factory=list)


def dialect_of(schema: Any) -> str:
    """The `$schema` dialect; MCP's default (no `$schema`) is JSON Schema 2020-12."""
    uri = schema.get("$schema", "") if isinstance(schema, dict) else ""
    for name in DIALECTS:
        if isinstance(uri, str) and name in uri:
            return name
    return "draft/2020-12"


def validator_for(schema: Any) -> Validator:
    """A validator of the schema's own dialect, with format checks (SchemaProblem when the schema is invalid)."""
    cls: Any = DIALECTS[dialect_of(schema)]
    try:
        if not _meets_meta_schema(cls, schema):
            cls.check_schema(schema)  # the error, exactly as jsonschema reports it
    except SchemaError as error:
        where = "/" + "/".join(str(p) for p in error.absolute_path) if error.absolute_path else "the root"
        raise SchemaProblem(str(error.validator), f"the schema is invalid at {where}: {error.message}",
                            "fix the tool's inputSchema; it must be valid JSON Schema") from None
    return cls(schema, format_checker=format_checker())


# Subschemas already checked against their dialect's meta-schema, by dialect and JSON text.
META_CACHE_SIZE = 4096
_meta_checked: OrderedDict[tuple[str, str], bool] = OrderedDict()
_meta_validators: dict[str, Any] = {}
_meta_lock = threading.Lock()


def _meets_meta_schema(cls: Any, schema: Any) -> bool:
    """Whether `schema` is valid under its dialect's meta-schema, each distinct subschema checked once.

    The meta-schemas judge a subschema the same wherever it stands, so a schema is valid when it is, with its
    subschemas blanked, and each subschema is. jsonschema's own check descends into every property through
    the meta-schema's references (about 9 ms for 50 properties in 2020-12); this is a few times faster, and
    faster still for the shapes a server repeats. A False sends the caller to jsonschema's check for its error.
    """
    try:
        key = (cls.__name__, json.dumps(schema, sort_keys=True))
    except (TypeError, ValueError):
        return False
    with _meta_lock:
        known = _meta_checked.get(key)
    if known is not None:
        return known
    blank: Any = {} if cls is Draft4Validator else True  # draft-04 has no boolean schemas
    stub, subschemas = _blanked(schema, blank)
    meta = _meta_validators.get(cls.__name__)
    if meta is None:
        meta_cls: Any = validators.validator_for(cls.META_SCHEMA, default=cls)
        meta = _meta_validators[cls.__name__] = meta_cls(cls.META_SCHEMA, format_checker=meta_cls.FORMAT_CHECKER)
    valid = meta.is_valid(stub) and all(_meets_meta_schema(cls, sub) for sub in subschemas)
    with _meta_lock:
        _meta_checked[key] = valid
        if len(_meta_checked) > META_CACHE_SIZE:
            _meta_checked.popitem(last=False)
    return valid


def _blanked(schema: Any, blank: Any) -> tuple[Any, list[Any]]:
    """`schema` with its subschemas (objects in subschema places) replaced by `blank`, and those subschemas.

    Anything else in a subschema place (a boolean, which draft-04 refuses) stays for the meta-schema to judge.
    """
    if not isinstance(schema, dict):
        return schema, []
    stub, subschemas = dict(schema), []
    for key, value in schema.items():
        if key in _ONE and isinstance(value, dict):
            stub[key] = blank
            subschemas.append(value)
        elif key in _MANY and isinstance(value, list):
            stub[key] = [blank if isinstance(item, dict) else item for item in value]
            subschemas += [item for item in value if isinstance(item, dict)]
        elif key in _BY_NAME and isinstance(value, dict):
            # Names are kept where the meta-schema judges them (patternProperties' keys are regular expressions).
            stub[key] = {name: blank if isinstance(sub, dict) else sub for name, sub in value.items()
                         if key == "patternProperties" or not isinstance(sub, dict)}
            subschemas += [sub for sub in value.values() if isinstance(sub, dict)]
    return stub, subschemas


# Keywords whose value is a number mcpfuzz computes with (bounds, steps, lengths, counts).
NUMERIC_KEYWORDS = frozenset({"minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "multipleOf",
                              "minLength", "maxLength", "minItems", "maxItems", "minProperties", "maxProperties"})


def check_numbers(node: Any, path: str = "") -> None:
    """SchemaProblem for a numeric keyword beyond what a double holds (RFC 8259 section 6: not interoperable).

    JSON allows `"minimum": 1e400` written as 400 digits; Python reads it as an exact integer, and every
    computation with it as a float overflows.
    """
    if isinstance(node, dict):
        for key, value in node.items():
            if key in NUMERIC_KEYWORDS and isinstance(value, int) and not isinstance(value, bool):
                try:
                    float(value)
                except OverflowError:
                    raise SchemaProblem(key, f"`{key}` at {path or '/'} is a number of {len(str(abs(value)))} "
                                        "digits, beyond what a JSON number holds interoperably",
                                        f"give `{key}` a value within ±1.7e308 (RFC 8259 section 6)") from None
            check_numbers(value, f"{path}/{key}")
    elif isinstance(node, list):
        for index, item in enumerate(node):
            check_numbers(item, f"{path}/{index}")


# Properties in one schema, at most: Hypothesis draws an object of 600 string properties in under a
# second and one of 800 in about a minute (its per-example size limit makes it retry and retry).
MAX_PROPERTIES = 600


def check_size(schema: Any) -> None:
    """SchemaProblem for a schema with more properties than values can be drawn for in reasonable time."""
    count = 0
    stack = [schema]
    while stack:
        node = stack.pop()
        if isinstance(node, dict):
            properties = node.get("properties")
            if isinstance(properties, dict):
                count += len(properties)
            stack.extend(node.values())
        elif isinstance(node, list):
            stack.extend(node)
    if count > MAX_PROPERTIES:
        raise SchemaProblem("properties", f"the schema has {count} properties; drawing values for more than "
                            f"{MAX_PROPERTIES} takes minutes per call",
                            "exclude the tool with --exclude-tool, or give it fewer arguments")


# Prepared schemas kept by their JSON text: servers often declare one schema for many tools, and checking a
# schema against its dialect's meta-schema is most of preparing it (about 9 ms for 50 properties in 2020-12).
PREPARED_CACHE_SIZE = 256
_prepared: OrderedDict[str, PreparedSchema] = OrderedDict()
_prepared_lock = threading.Lock()


def prepare(schema: Any) -> PreparedSchema:
    """Validate the schema and make the generator's copy (refs inlined, 2020-12 keywords translated).

    An equal schema prepared before gives the same PreparedSchema (it is never changed once made).
    """
    try:
        key = json.dumps(schema, sort_keys=True)
    except (TypeError, ValueError):
        return _prepare(schema)
    with _prepared_lock:
        known = _prepared.get(key)
        if known is not None:
            _prepared.move_to_end(key)
            return known
    made = _prepare(schema)
    with _prepared_lock:
        _prepared[key] = made
        if len(_prepared) > PREPARED_CACHE_SIZE:
            _prepared.popitem(last=False)
    return made


def _prepare(schema: Any) -> PreparedSchema:
    check_numbers(schema)
    check_size(schema)
    validator = validator_for(schema)
    notes: list[str] = []
    generation = _Inliner(schema, notes).walk(schema, ())
    return PreparedSchema(schema, validator, generation, dialect_of(schema), notes)


def resolve_pointer(root: Any, ref: str) -> Any:
    """A local `#/a/b` reference inside `root` (SchemaProblem for remote or broken ones)."""
    if not ref.startswith("#"):
        raise SchemaProblem("$ref", f"the reference {ref!r} is not local to the schema",
                            "inline the referenced schema under $defs; mcpfuzz never fetches schemas")
    node = root
    for raw in ref[1:].split("/")[1:] if ref != "#" else []:
        part = raw.replace("~1", "/").replace("~0", "~")
        if isinstance(node, dict) and part in node:
            node = node[part]
        elif isinstance(node, list) and part.isdigit() and int(part) < len(node):
            node = node[int(part)]
        else:
            raise SchemaProblem("$ref", f"the reference {ref!r} points nowhere in the schema",
                                "check the $defs names the tool's inputSchema refers to")
    return node


# Enum values the generator and the coverage phase use at most: hypothesis-jsonschema's canonical form
# costs quadratic time in the enum's length (4,000 integers: 8 s to prepare; 50,000: tens of minutes).
MAX_ENUM_VALUES = 256


def enum_sample(values: list[Any]) -> list[Any]:
    """All of a short enum; of a long one, the first and last values and an even spread between, in order."""
    if len(values) <= MAX_ENUM_VALUES:
        return values
    head, tail = MAX_ENUM_VALUES // 2, MAX_ENUM_VALUES // 4
    middle = MAX_ENUM_VALUES - head - tail
    step = (len(values) - head - tail) / (middle + 1)
    spread = (head + int(step * (i + 1)) for i in range(middle))
    picked = [*range(head), *spread, *range(len(values) - tail, len(values))]
    return [values[index] for index in sorted(set(picked))]


class _Inliner:
    """Copies a schema for the generator: local refs inlined (recursion cut), keywords of 2019+ translated."""

    def __init__(self, root: Any, notes: list[str]) -> None:
        self.root = root
        self.notes = notes
        self.draft4 = dialect_of(root) == "draft-04"

    def walk(self, node: Any, refs: tuple[str, ...]) -> Any:
        if not isinstance(node, dict):
            return node
        for keyword in ("$dynamicRef", "$recursiveRef"):
            if keyword in node:
                raise SchemaProblem(keyword, f"`{keyword}` is not supported",
                                    "use a plain local $ref to a $defs entry")
        if "$ref" in node and isinstance(node["$ref"], str):
            return self._inline_ref(node, refs)
        out: dict[str, Any] = {}
        for key, value in node.items():
            if key in _META:
                continue
            if key in _FILTER_ONLY:
                self._note(f"`{key}` is enforced by filtering drawn values, not while drawing them")
                continue
            if key in _ONE:
                out[key] = self.walk(value, refs)
            elif key in _MANY and isinstance(value, list):
                out[key] = [self.walk(item, refs) for item in value]
            elif key in _BY_NAME and isinstance(value, dict) or key == "dependencies" and isinstance(value, dict):
                out[key] = {name: self.walk(sub, refs) for name, sub in value.items()}
            elif key == "enum" and isinstance(value, list) and len(value) > MAX_ENUM_VALUES:
                self._note(f"an `enum` of {len(value)} values is drawn from {MAX_ENUM_VALUES} of them")
                out[key] = copy.deepcopy(enum_sample(value))
            else:
                out[key] = copy.deepcopy(value)
        return self._translate(out)

    def _inline_ref(self, node: dict, refs: tuple[str, ...]) -> Any:
        ref = node["$ref"]
        if refs.count(ref) >= RECURSION_DEPTH:
            return False  # cut the recursion: the generator must not take this branch again
        target = self.walk(resolve_pointer(self.root, ref), (*refs, ref))
        siblings = {k: v for k, v in node.items() if k != "$ref"}
        if not siblings or self.draft4 or dialect_of(self.root) in ("draft-06", "draft-07"):
            return target  # before 2019-09, keywords beside $ref are ignored
        return {"allOf": [target, self.walk(siblings, refs)]}

    def _translate(self, node: dict) -> dict:
        """2019-09/2020-12 keywords into their draft-7 spelling."""
        if "prefixItems" in node:
            rest = node.pop("items", None)
            node["items"] = node.pop("prefixItems")
            if rest is not None:
                node["additionalItems"] = rest
        if "dependentRequired" in node or "dependentSchemas" in node:
            merged = dict(node.pop("dependentRequired", {}) or {})
            merged.update(node.pop("dependentSchemas", {}) or {})
            node["dependencies"] = {**node.get("dependencies", {}), **merged}
        if self.draft4:
            for bound, exclusive in (("maximum", "exclusiveMaximum"), ("minimum", "exclusiveMinimum")):
                if node.get(exclusive) is True and bound in node:
                    node[exclusive] = node.pop(bound)
                elif isinstance(node.get(exclusive), bool):
                    node.pop(exclusive)
        return node

    def _note(self, text: str) -> None:
        if text not in self.notes:
            self.notes.append(text)


def all_required(schema: Any) -> Any:
    """A copy in which every listed property of every object is required (draws a fully populated value)."""
    if not isinstance(schema, dict):
        return schema
    out = dict(schema)
    for key in _ONE:
        if key in out:
            out[key] = all_required(out[key])
    for key in _MANY:
        if isinstance(out.get(key), list):
            out[key] = [all_required(item) for item in out[key]]
    properties = schema.get("properties")
    if isinstance(properties, dict) and properties:
        out["properties"] = {name: all_required(sub) for name, sub in properties.items()}
        out["required"] = sorted(set(schema.get("required") or []) | set(properties))
    return out
