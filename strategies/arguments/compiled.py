"""Direct Hypothesis strategies for the common schema shapes; anything else goes to a fallback per subschema.

hypothesis-jsonschema canonicalises and resolves a subschema on each draw of an object (about 1 ms
per object even for one property, memoised or not); an object of typed, bounded properties is what
most tools declare, and a direct strategy draws a one-string object in half the time. The compiler
understands only the keywords listed below, each exactly as JSON Schema 2020-12 defines it; any
other keyword sends that subschema (never its siblings) to the fallback, hypothesis-jsonschema.
The caller still validates every drawn value with the schema's own validator.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

from hypothesis import strategies as st
from hypothesis.errors import InvalidArgument
from mcpfuzz.strategies.short_repr import named_composite

Fallback = Callable[[Any], st.SearchStrategy[Any]]

# Keywords that never constrain a value.
ANNOTATIONS = frozenset({"title", "description", "default", "examples", "$comment", "readOnly", "writeOnly",
                         "deprecated"})
# What the compiler understands, per `type` (exactly one type: a list of types goes to the fallback).
UNDERSTOOD: dict[str, frozenset[str]] = {
    "object": frozenset({"type", "properties", "required", "additionalProperties"}),
    "array": frozenset({"type", "items", "minItems", "maxItems", "uniqueItems"}),
    "string": frozenset({"type", "minLength", "maxLength", "format"}),
    "integer": frozenset({"type", "minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "multipleOf"}),
    "number": frozenset({"type", "minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum"}),
    "boolean": frozenset({"type"}),
    "null": frozenset({"type"}),
}
# The characters hypothesis-jsonschema draws strings from (its default: any code point UTF-8 can encode,
# NUL included, so no lone surrogate). The edge strings (a lone surrogate among them) are mixed in by
# the edge strategy, as before.
ALPHABET = st.characters(codec="utf-8")
# Extra members of an object that allows them: few, as hypothesis-jsonschema draws them.
MAX_EXTRA_MEMBERS = 3
# Optional members drawn per object, on average, past PER_MEMBER_UP_TO (below it, each is present half the
# time): hypothesis-jsonschema's average, and Hypothesis' for a list, so that a tool with 30 optional
# properties gets calls of a few of them (each call of all of them is the populated strategy's).
OPTIONAL_AVERAGE = 5
PER_MEMBER_UP_TO = 12
_PY_TYPES: dict[str, tuple[type, ...]] = {"string": (str,), "boolean": (bool,), "null": (type(None),),
                                          "object": (dict,), "array": (list,), "integer": (int,),
                                          "number": (int, float)}


def compile_schema(schema: Any, fallback: Fallback, formats: dict[str, st.SearchStrategy[str]]
                   ) -> st.SearchStrategy[Any]:
    """A strategy of values for `schema` (a draft-7 generation copy: refs inlined), direct where it can be."""
    return _Compiler(fallback, formats).compile(schema)


def compiled_fully(schema: Any, formats: dict[str, st.SearchStrategy[str]]) -> bool:
    """True when no part of `schema` needs the fallback (tests tell with it which path drew)."""
    used: list[Any] = []

    def note(sub: Any) -> st.SearchStrategy[Any]:
        used.append(sub)
        return st.nothing()

    compile_schema(schema, note, formats)
    return not used


class _Compiler:
    def __init__(self, fallback: Fallback, formats: dict[str, st.SearchStrategy[str]]) -> None:
        self.fallback = fallback
        self.formats = formats

    def compile(self, schema: Any) -> st.SearchStrategy[Any]:
        if schema is False:
            return st.nothing()
        if not isinstance(schema, dict):
            return self.fallback(schema)
        keys = schema.keys() - ANNOTATIONS
        if "enum" in keys or "const" in keys:
            return self._choices(schema, keys)
        kind = schema.get("type")
        if not isinstance(kind, str) or kind not in UNDERSTOOD or not keys <= UNDERSTOOD[kind]:
            return self.fallback(schema)
        built = getattr(self, f"_{kind}")(schema)
        return self.fallback(schema) if built is None else built

    def _choices(self, schema: dict, keys: set[str]) -> st.SearchStrategy[Any]:
        """`enum` or `const`, with at most a `type` beside it (values of another type are never drawn)."""
        if not keys <= {"enum", "const", "type"} or ("enum" in keys) == ("const" in keys):
            return self.fallback(schema)
        values = schema["enum"] if "enum" in keys else [schema["const"]]
        kind = schema.get("type")
        if not isinstance(values, list) or kind is not None and (not isinstance(kind, str) or kind not in _PY_TYPES):
            return self.fallback(schema)
        if kind is not None:
            values = [v for v in values if has_json_type(v, kind)]
        return st.sampled_from(values) if values else st.nothing()

    def _object(self, schema: dict) -> st.SearchStrategy[dict] | None:
        properties = schema.get("properties", {})
        required = schema.get("required", [])
        extra = schema.get("additionalProperties", True)
        if not isinstance(properties, dict) or not isinstance(required, list) or not set(required) <= properties.keys():
            return None  # a required name with no property schema: the fallback draws any value for it
        members = [(name, self.compile(properties[name]), name in required) for name in properties]
        fixed = _members(members)
        if extra is False:
            return fixed
        extra_names = st.text(ALPHABET, max_size=8).filter(lambda name: name not in properties)
        extras = st.dictionaries(extra_names, self.compile({} if extra is True else extra), max_size=MAX_EXTRA_MEMBERS)
        return st.tuples(fixed, extras).map(lambda pair: {**pair[1], **pair[0]})

    def _array(self, schema: dict) -> st.SearchStrategy[list] | None:
        items = schema.get("items")
        low, high = schema.get("minItems", 0), schema.get("maxItems")
        if not isinstance(items, dict) or not is_count(low) or high is not None and not is_count(high):
            return None  # no `items`, or the tuple form: any JSON per item, the fallback's
        unique = schema.get("uniqueItems") is True
        if unique and not is_scalar_schema(items):
            return None
        element = self.compile(items)
        if high is not None and high < low:
            return st.nothing()
        if element.is_empty:
            return st.just([]) if low == 0 else st.nothing()
        drawn = st.lists(element, min_size=low, max_size=high, unique_by=json_identity if unique else None)
        try:
            drawn.validate()
        except InvalidArgument:  # more unique items required than the items' schema has values
            return st.nothing()
        return drawn

    def _string(self, schema: dict) -> st.SearchStrategy[str] | None:
        low, high = schema.get("minLength", 0), schema.get("maxLength")
        if not is_count(low) or high is not None and not is_count(high):
            return None
        if "format" in schema:
            drawn = self.formats.get(schema["format"])
            if drawn is None or "minLength" in schema or "maxLength" in schema:
                return None  # formats of hypothesis-jsonschema's own, or lengths a format must be filtered by
            return drawn
        return st.text(ALPHABET, min_size=low, max_size=high) if high is None or low <= high else st.nothing()

    def _integer(self, schema: dict) -> st.SearchStrategy[int] | None:
        bounds = number_bounds(schema)
        if bounds is None:
            return None
        (low, low_open), (high, high_open) = bounds
        first = None if low is None else math.floor(Fraction(low)) + 1 if low_open else math.ceil(Fraction(low))
        last = None if high is None else math.ceil(Fraction(high)) - 1 if high_open else math.floor(Fraction(high))
        step = schema.get("multipleOf", 1)
        if not isinstance(step, int) or isinstance(step, bool) or step <= 0:
            return None  # a fractional step: exact arithmetic the fallback does
        first = None if first is None else -(-first // step)
        last = None if last is None else last // step
        if first is not None and last is not None and first > last:
            return st.nothing()
        return st.integers(first, last) if step == 1 else st.integers(first, last).map(lambda k: k * step)

    def _number(self, schema: dict) -> st.SearchStrategy[float] | None:
        span = float_range(schema)
        if span is None:
            return None
        if span.empty:
            return st.nothing()
        low, high = span.low, span.high
        # -0.0 is not a JSON number of its own: drawn as 0.0, as hypothesis-jsonschema does.
        return st.floats(low, high, allow_nan=False, allow_infinity=False,
                         exclude_min=span.low_open and low is not None,
                         exclude_max=span.high_open and high is not None).map(lambda n: n if n != 0 else abs(n))

    def _boolean(self, schema: dict) -> st.SearchStrategy[bool]:
        return st.booleans()

    def _null(self, schema: dict) -> st.SearchStrategy[None]:
        return st.none()


Bound = tuple[Any, bool]  # (the bound or None, whether it is exclusive)


def _members(members: list[tuple[str, st.SearchStrategy[Any], bool]]) -> st.SearchStrategy[dict]:
    """An object of these members, in this order: the required ones and some of the optional ones.

    Not st.fixed_dictionaries: its optional keys cost a counter and a pick each, and it shuffles the key
    order (n more choices per object; JSON objects have no order). Up to PER_MEMBER_UP_TO optional members,
    each is present half the time (one choice each, shrinking to absent); past that, one draw per member
    would be most of an object's draw, so the members present are one list of distinct indexes,
    OPTIONAL_AVERAGE of them on average (Hypothesis' average list size), shrinking toward none.
    """
    # A member that cannot be drawn (`false`, a recursion cut by the inliner) is never present; a
    # required one makes the object impossible.
    if any(required and strategy.is_empty for _, strategy, required in members):
        return st.nothing()
    members = [member for member in members if member[2] or not member[1].is_empty]
    optional = [index for index, (_, _, required) in enumerate(members) if not required]
    per_member = len(optional) <= PER_MEMBER_UP_TO
    # sampled_from: one integer choice without the lazy wrapper st.integers is unwrapped through on each draw.
    present_or_not = st.sampled_from((False, True))
    chosen = st.lists(st.sampled_from(optional), unique=True, max_size=len(optional))

    def draw_members(draw: st.DrawFn) -> dict:
        if per_member:
            return {name: draw(strategy) for name, strategy, required in members
                    if required or draw(present_or_not)}
        present = set(draw(chosen))
        return {name: draw(strategy) for index, (name, strategy, required) in enumerate(members)
                if required or index in present}

    return named_composite("members", draw_members)


@dataclass(frozen=True)
class FloatRange:
    """A number schema's bounds as floats; a bound of None is open-ended."""

    low: float | None
    low_open: bool
    high: float | None
    high_open: bool

    @property
    def empty(self) -> bool:
        """No number fits (a minimum above the maximum, or one point excluded)."""
        low, high = self.low, self.high
        if low is None or high is None:
            return False
        return low > high or low == high and (self.low_open or self.high_open)


def float_range(schema: dict) -> FloatRange | None:
    """The bounds of a number schema as floats; None when a bound is not a finite number."""
    bounds = number_bounds(schema)
    if bounds is None:
        return None
    (low, low_open), (high, high_open) = bounds
    # + 0.0: a bound of -0.0 is 0 (JSON has one zero); Hypothesis orders -0.0 below 0.0 and would find no
    # float between a minimum of 0.0 and a maximum of -0.0.
    return FloatRange(None if low is None else float(low) + 0.0, low_open,
                      None if high is None else float(high) + 0.0, high_open)


def number_bounds(schema: dict) -> tuple[Bound, Bound] | None:
    """The tightest lower and upper bound (2020-12: exclusive bounds are numbers); None for a non-number."""
    values = [schema.get(k) for k in ("minimum", "exclusiveMinimum", "maximum", "exclusiveMaximum")]
    if any(v is not None and (isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v))
           for v in values):
        return None
    return _tightest(values[0], values[1], max), _tightest(values[2], values[3], min)


def _tightest(inclusive: Any, exclusive: Any, pick: Callable[..., Any]) -> Bound:
    """Of an inclusive and an exclusive bound, the one that excludes more (the exclusive one on a tie)."""
    if inclusive is None or exclusive is None:
        return (exclusive, True) if inclusive is None else (inclusive, False)
    if Fraction(inclusive) == Fraction(exclusive):
        return exclusive, True
    tighter = pick(Fraction(inclusive), Fraction(exclusive))
    return (inclusive, False) if tighter == Fraction(inclusive) else (exclusive, True)


def is_count(value: Any) -> bool:
    """A JSON Schema count (minLength, maxItems...): a non-negative integer, not a boolean."""
    return isinstance(value, int) and not isinstance(value, bool) and value >= 0


def is_scalar_schema(schema: dict) -> bool:
    """A subschema whose values are never arrays or objects (uniqueness is then simple to key)."""
    values = schema.get("enum", [schema["const"]] if "const" in schema else None)
    if isinstance(values, list):
        return all(not isinstance(v, (dict, list)) for v in values)
    return schema.get("type") in ("string", "integer", "number", "boolean", "null")


def json_identity(value: Any) -> tuple[str, Any]:
    """Equal under JSON Schema's uniqueItems: 1 and 1.0 are one number, true and 1 are not."""
    if isinstance(value, bool) or value is None or isinstance(value, str):
        return type(value).__name__, value
    if isinstance(value, float) and value.is_integer():
        return "number", int(value)
    return "number", value


def has_json_type(value: Any, kind: str) -> bool:
    """`value` is of JSON Schema type `kind` (a boolean is no number; 2.0 is an integer)."""
    if isinstance(value, bool) and kind not in ("boolean",):
        return False
    if kind == "integer" and isinstance(value, float):
        return value.is_integer()
    return isinstance(value, _PY_TYPES[kind])
