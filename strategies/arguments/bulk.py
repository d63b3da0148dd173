"""Valid values of a schema from two Hypothesis choices: a generator compiled once per schema, driven in bulk.

A compiled strategy (compiled.py) makes Hypothesis draw every piece of a value as a choice of its own (a string
is a length and a choice per character; an object a choice per optional member), and Hypothesis' engine pays
for each choice, at the draw and again between examples. Here the same schema shapes are compiled into a plain
Python generator that reads bytes: the bytes of a generator seeded with one choice (the seed), as many as a
second choice allows (the budget), zeros after them. A value costs two choices whatever its size. It stays
Hypothesis' value: the same choices give the same value (a seed's frames do not change from run to run), the
example database stores it, and a failure still shrinks: toward a smaller budget (the parts of the value read
last become their simplest: shortest strings, the number nearest zero, optional members absent) and a zero seed
(the whole value its simplest).

Only what compiled.py understands is compiled here, with the same meaning; any other subschema (and a
`format`) is drawn from its compiled strategy through Hypothesis, as before. The caller validates every value.
"""

from __future__ import annotations

import math
import random
import struct
from collections.abc import Callable
from fractions import Fraction
from typing import Any

from hypothesis import strategies as st
from mcpfuzz.strategies.arguments.compiled import (
    ANNOTATIONS,
    MAX_EXTRA_MEMBERS,
    OPTIONAL_AVERAGE,
    PER_MEMBER_UP_TO,
    UNDERSTOOD,
    Fallback,
    compile_schema,
    float_range,
    has_json_type,
    is_count,
    is_scalar_schema,
    json_identity,
    number_bounds,
)

SEEDS = st.integers(0, 2**64 - 1)
# Random bytes a value may read (then zeros): a 30-property object reads about 300; most budgets cover a value.
BUDGETS = st.integers(0, 2048)
CHUNK = 256  # bytes drawn from the seeded generator at a time
PRINTABLE = "".join(chr(c) for c in range(0x20, 0x7F))
# Characters that break careless code, drawn as often as a printable one of a given byte value: controls, quotes
# and escapes, separators, case-changing and normalising letters, invisible and direction marks, combining marks,
# characters outside the BMP (a surrogate pair in UTF-16, two code units in JavaScript).
SPECIAL = ("\x00", "\n", "\r", "\t", "\x1b", "\x7f", '"', "\\", "'", "/", "%", "<", "&", "\u0085", "\u00a0",
           "\u00e9", "\u00df", "\u0130", "\u0131", "\ufb00", "\u0301", "\u200b", "\u200d", "\u202e", "\u2028",
           "\ufeff", "\ufffd", "\u4e2d", "\u0627", "\U0001d54f", "\U0001f600", "\U0010fffd")
# How a string's length is picked from its first byte (from the minimum up, capped at the maximum).
SHORT, MEDIUM, LONG = 8, 32, 256
# Integers: bytes past these byte values pick a bound, a big magnitude, then any value of the range.
BIG = (2**31 - 1, -(2**31), 2**32, 2**53, -(2**53), 2**63 - 1, -(2**63), 10**20)
FLOATS = (0.5, -1.5, 1e-7, 1e-300, 5e-324, 1e300, -1e300, 1.7976931348623157e308, 3.141592653589793, 1e15, 2.0**53)
Generator = Callable[["Reader", st.DrawFn], Any]


class Unsatisfied(Exception):
    """The bytes could not give a value (unique items ran out): the caller draws the value another way."""


class Reader:
    """The bytes of one value: `budget` bytes of a generator seeded with `seed`, then zeros (all zeros for seed 0)."""

    __slots__ = ("data", "position", "_random", "_left")

    def __init__(self, seed: int, budget: int) -> None:
        self.data = b""
        self.position = 0
        self._random = random.Random(seed) if seed and budget else None
        self._left = budget

    def byte(self) -> int:
        """The next byte."""
        position = self.position
        if position >= len(self.data):
            self._refill(1)
            position = 0
        self.position = position + 1
        return self.data[position]

    def take(self, count: int) -> bytes:
        """The next `count` bytes."""
        if self.position + count > len(self.data):
            self._refill(count)
        start = self.position
        self.position = start + count
        return self.data[start:start + count]

    def below(self, count: int) -> int:
        """An index under `count`, zero for zero bytes."""
        if count <= 1:
            return 0
        if count <= 256:
            return self.byte() % count
        width = (count.bit_length() + 7) // 8 + 1  # one byte more: the modulo's bias stays small
        return int.from_bytes(self.take(width), "big") % count

    def _refill(self, count: int) -> None:
        """At least `count` bytes unread: the rest of the data and a new chunk."""
        chunk = max(count, CHUNK)
        drawn = min(chunk, self._left) if self._random is not None else 0
        self._left -= drawn
        fresh = (self._random.randbytes(drawn) if drawn else b"") + bytes(chunk - drawn)  # type: ignore[union-attr]
        self.data = self.data[self.position:] + fresh
        self.position = 0


class BulkValues:
    """A schema's values from a seed and a budget (two choices); Unsatisfied when they give no value."""

    def __init__(self, generation: Any, fallback: Fallback, formats: dict[str, st.SearchStrategy[str]]) -> None:
        compiler = _Compiler(fallback, formats)
        self.generate = compiler.compile(generation)
        # Bulk only where it replaces more choices than its own two: an object of one string is two choices of
        # Hypothesis' already (a string is one), and a schema left wholly to Hypothesis keeps its strategy.
        self.useful = compiler.compiled > 2
        # Every part from the bytes: valid by construction where the schema is drawn exactly (no note, no filter).
        self.whole = compiler.leaves == 0

    def draw(self, draw: st.DrawFn) -> Any:
        """One value (Unsatisfied when the choices cannot give one)."""
        return self.generate(Reader(draw(SEEDS), draw(BUDGETS)), draw)


class _Compiler:
    """compiled.py's understanding of a schema, as generators of values from bytes."""

    def __init__(self, fallback: Fallback, formats: dict[str, st.SearchStrategy[str]]) -> None:
        self.fallback = fallback
        self.formats = formats
        self.compiled = 0  # subschemas drawn from the bytes
        self.leaves = 0  # subschemas drawn through Hypothesis

    def compile(self, schema: Any) -> Generator:
        built = self._compile(schema)
        if built is None:
            return self._leaf(schema)
        self.compiled += 1
        return built

    def _leaf(self, schema: Any) -> Generator:
        """A subschema drawn by its compiled strategy, through Hypothesis (choices of its own)."""
        self.leaves += 1
        strategy = compile_schema(schema, self.fallback, self.formats)
        if strategy.is_empty:
            return _impossible
        return lambda reader, draw: draw(strategy)

    def _compile(self, schema: Any) -> Generator | None:
        if not isinstance(schema, dict):
            return None
        keys = schema.keys() - ANNOTATIONS
        if "enum" in keys or "const" in keys:
            return self._choices(schema, keys)
        kind = schema.get("type")
        if not isinstance(kind, str) or kind not in UNDERSTOOD or not keys <= UNDERSTOOD[kind]:
            return None
        return getattr(self, f"_{kind}")(schema)

    def _choices(self, schema: dict, keys: set[str]) -> Generator | None:
        if not keys <= {"enum", "const", "type"} or ("enum" in keys) == ("const" in keys):
            return None
        values = schema["enum"] if "enum" in keys else [schema["const"]]
        kind = schema.get("type")
        if not isinstance(values, list) or kind is not None and (not isinstance(kind, str) or kind not in
                                                                  ("string", "boolean", "null", "object", "array",
                                                                   "integer", "number")):
            return None
        if kind is not None:
            values = [v for v in values if has_json_type(v, kind)]
        if not values:
            return _impossible
        if len(values) == 1:
            only = values[0]
            return lambda reader, draw: only
        return lambda reader, draw: values[reader.below(len(values))]

    def _object(self, schema: dict) -> Generator | None:
        properties = schema.get("properties", {})
        required = schema.get("required", [])
        extra = schema.get("additionalProperties", True)
        if not isinstance(properties, dict) or not isinstance(required, list) or not set(required) <= properties.keys():
            return None
        if any(sub is False for sub in properties.values()):
            return None  # a member that cannot be present: compiled.py's rules (left to it)
        members = [(name, self.compile(properties[name]), name in required) for name in properties]
        optional = sum(1 for _, _, needed in members if not needed)
        # Each optional member present half the time up to PER_MEMBER_UP_TO of them, then OPTIONAL_AVERAGE on
        # average (compiled.py's odds), one byte each.
        threshold = 128 if optional <= PER_MEMBER_UP_TO else max(1, 256 * OPTIONAL_AVERAGE // optional)
        if extra is True:
            self.compiled += 2  # members nobody declared, of any JSON value: the costliest strategy to draw from
        extras = None if extra is False else _extra_members(
            _any_json if extra is True else self.compile(extra), frozenset(properties))

        def generate(reader: Reader, draw: st.DrawFn) -> dict:
            value = {name: member(reader, draw) for name, member, needed in members
                     if needed or reader.byte() >= 256 - threshold}
            if extras is None:
                return value
            return {**extras(reader, draw), **value}

        return generate

    def _array(self, schema: dict) -> Generator | None:
        items = schema.get("items")
        low, high = schema.get("minItems", 0), schema.get("maxItems")
        if not isinstance(items, dict) or not is_count(low) or high is not None and not is_count(high):
            return None
        unique = schema.get("uniqueItems") is True
        if unique and not is_scalar_schema(items):
            return None
        if high is not None and high < low:
            return _impossible
        element = self.compile(items)
        cap = high if high is not None else low + MEDIUM

        def generate(reader: Reader, draw: st.DrawFn) -> list:
            count = _length(reader.byte(), low, cap, short=4)
            if not unique:
                return [element(reader, draw) for _ in range(count)]
            values: list = []
            seen: set = set()
            for _ in range(3 * count + 3):
                if len(values) >= count:
                    break
                value = element(reader, draw)
                key = json_identity(value)
                if key not in seen:
                    seen.add(key)
                    values.append(value)
            if len(values) < low:
                raise Unsatisfied
            return values

        return generate

    def _string(self, schema: dict) -> Generator | None:
        low, high = schema.get("minLength", 0), schema.get("maxLength")
        if not is_count(low) or high is not None and not is_count(high):
            return None
        if "format" in schema:
            return None  # the format's own strategy (Hypothesis), as compiled.py draws it
        if high is not None and high < low:
            return _impossible
        cap = high if high is not None else max(low, LONG * 4)
        return lambda reader, draw: _text(reader, _length(reader.byte(), low, cap, short=SHORT))

    def _integer(self, schema: dict) -> Generator | None:
        bounds = number_bounds(schema)
        step = schema.get("multipleOf", 1)
        if bounds is None or not isinstance(step, int) or isinstance(step, bool) or step <= 0:
            return None
        (low, low_open), (high, high_open) = bounds
        first = None if low is None else math.floor(Fraction(low)) + 1 if low_open else math.ceil(Fraction(low))
        last = None if high is None else math.ceil(Fraction(high)) - 1 if high_open else math.floor(Fraction(high))
        first = None if first is None else -(-first // step)
        last = None if last is None else last // step
        if first is not None and last is not None and first > last:
            return _impossible
        return lambda reader, draw: _integer(reader, first, last) * step

    def _number(self, schema: dict) -> Generator | None:
        span = float_range(schema)
        if span is None:
            return None
        if span.empty:
            return _impossible
        return lambda reader, draw: _number(reader, span.low, span.low_open, span.high, span.high_open)

    def _boolean(self, schema: dict) -> Generator:
        return lambda reader, draw: bool(reader.byte() & 1)

    def _null(self, schema: dict) -> Generator:
        return lambda reader, draw: None


def _extra_members(value: Generator, names: frozenset[str]) -> Generator:
    """Members no property names, of `value`'s values: none mostly, MAX_EXTRA_MEMBERS at most."""

    def generate(reader: Reader, draw: st.DrawFn) -> dict:
        count = max(0, reader.byte() - 223) % (MAX_EXTRA_MEMBERS + 1)
        found: dict = {}
        for _ in range(count):
            name = _short_text(reader, 8)
            if name not in names:
                found[name] = value(reader, draw)
        return found

    return generate


def _impossible(reader: Reader, draw: st.DrawFn) -> Any:
    raise Unsatisfied


def _int(value: Any, default: int) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) else default


def _length(byte: int, low: int, high: int, *, short: int) -> int:
    """A length in [low, high] from one byte: the minimum for 0, short ones mostly, now and then long."""
    if byte == 0 or high <= low:
        return low
    if byte < 176:
        wanted = low + 1 + byte % short
    elif byte < 232:
        wanted = low + short + byte % (MEDIUM - short)
    elif byte < 252:
        wanted = low + MEDIUM + (byte * 37) % LONG
    else:
        wanted = high if high - low <= LONG * 4 else low + LONG * 4  # the longest allowed
    return min(wanted, high)


def _character(reader: Reader) -> str:
    byte = reader.byte()
    if byte < 190:
        return PRINTABLE[byte % len(PRINTABLE)]
    if byte < 190 + len(SPECIAL):
        return SPECIAL[byte - 190]
    # Any code point UTF-8 can encode (never a lone surrogate: that is the edge strategy's).
    point = int.from_bytes(reader.take(3), "big") % 0x110000
    return chr(point if not 0xD800 <= point <= 0xDFFF else point - 0x800)


def _text(reader: Reader, length: int) -> str:
    """`length` characters: each from the bytes up to SHORT * 2, then a run of printable ones."""
    head = min(length, SHORT * 2)
    text = "".join([_character(reader) for _ in range(head)])
    if length > head:
        tail = random.Random(reader.take(4))
        text += "".join(tail.choices(PRINTABLE, k=length - head))
    return text


def _short_text(reader: Reader, most: int) -> str:
    return "".join([_character(reader) for _ in range(reader.byte() % (most + 1))])


def _integer(reader: Reader, first: int | None, last: int | None) -> int:
    """An integer in [first, last] (either open): zero (or the bound nearest it) for a zero byte, then small ones,
    the bounds, big magnitudes, any of the range."""
    byte = reader.byte()
    if byte == 0:  # the simplest: zero, or the bound nearest it
        return max(first, 0) if first is not None and (last is None or first > 0) else min(last, 0) \
            if last is not None else 0
    if byte < 128:
        wanted = byte % 21 - 10
    elif byte < 160:
        edges = [b for b in (first, last, None if first is None else first + 1, None if last is None else last - 1)
                 if b is not None]
        wanted = edges[byte % len(edges)] if edges else BIG[byte % len(BIG)]
    elif byte < 192:
        wanted = BIG[byte % len(BIG)] + byte % 3 - 1
    elif first is not None and last is not None:
        wanted = first + reader.below(last - first + 1)
    else:
        wanted = int.from_bytes(reader.take(8), "big", signed=True) >> (byte % 48)
    if first is not None and last is not None:
        return wanted if first <= wanted <= last else first + (wanted - first) % (last - first + 1)
    if first is not None and wanted < first:
        return first + (first - wanted) - 1
    if last is not None and wanted > last:
        return last - (wanted - last) + 1
    return wanted


def _number(reader: Reader, low: float | None, low_open: bool, high: float | None, high_open: bool) -> float:
    """A finite float within the bounds: zero (or the nearest allowed) first, then small, special and any."""
    byte = reader.byte()
    if byte == 0 and (low is None or low < 0 or low == 0 and not low_open) and (high is None or high > 0
                                                                            or high == 0 and not high_open):
        return 0.0
    wanted: float
    if byte == 0:  # the simplest allowed: the bound nearest zero
        wanted = low if low is not None and low >= 0 else high if high is not None else 0.0
    elif byte < 96:
        wanted = (byte % 41 - 20) / (1, 2, 4, 10)[byte % 4]
    elif byte < 160:
        wanted = FLOATS[byte % len(FLOATS)] * (-1 if byte & 1 else 1)
    elif byte < 192 and (low is not None or high is not None):
        wanted = low if low is not None and (byte & 1 or high is None) else high if high is not None else 0.0
    else:
        wanted = struct.unpack(">d", reader.take(8))[0]
        if not math.isfinite(wanted):
            wanted = float(byte)
    if low is not None and high is not None and not low <= wanted <= high:
        wanted = low + (high - low) * (byte / 255.0)
    elif low is not None and wanted < low:
        wanted = low + abs(wanted - low)
    elif high is not None and wanted > high:
        wanted = high - abs(wanted - high)
    if low is not None and (wanted < low or low_open and wanted == low):
        wanted = math.nextafter(low, math.inf) if high is None or math.nextafter(low, math.inf) <= high else low
    if high is not None and (wanted > high or high_open and wanted == high):
        wanted = math.nextafter(high, -math.inf)
    if not math.isfinite(wanted) or low is not None and wanted < low or high is not None and wanted > high:
        raise Unsatisfied
    return wanted if wanted != 0 else 0.0


def _any_json(reader: Reader, draw: st.DrawFn, depth: int = 0) -> Any:
    """Any JSON value (an object member nobody declared): mostly scalars, shallow containers."""
    byte = reader.byte()
    kind = byte % 7 if depth < 2 else byte % 5
    if kind == 0:
        return None
    if kind == 1:
        return bool(byte & 8)
    if kind == 2:
        return _integer(reader, None, None)
    if kind == 3:
        return _number(reader, None, False, None, False)
    if kind == 4:
        return _short_text(reader, 12)
    if kind == 5:
        return [_any_json(reader, draw, depth + 1) for _ in range(reader.byte() % 4)]
    return {_short_text(reader, 6): _any_json(reader, draw, depth + 1) for _ in range(reader.byte() % 4)}
