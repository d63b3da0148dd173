"""Valid tool arguments from an inputSchema: the one module that talks to hypothesis-jsonschema."""

from __future__ import annotations

import contextlib
import json
import threading
import warnings
from collections import Counter, OrderedDict
from collections.abc import Callable
from functools import cached_property
from typing import Any, cast

from hypothesis import HealthCheck, Phase, Verbosity, given, settings
from hypothesis import seed as hypothesis_seed
from hypothesis import strategies as st
from hypothesis.errors import HypothesisException
from hypothesis_jsonschema import _from_schema as _hjs
from hypothesis_jsonschema import from_schema
from mcpfuzz.strategies.arguments import jsonschema_objects
from mcpfuzz.strategies.arguments.compiled import ANNOTATIONS, compile_schema
from mcpfuzz.strategies.arguments.formats import CUSTOM_FORMATS
from mcpfuzz.strategies.arguments.schema_prep import PreparedSchema, SchemaProblem, all_required, prepare
from mcpfuzz.strategies.arguments.sites import MISSING, Path, Site, delete_at, get_at, object_paths, set_at, sites
from mcpfuzz.strategies.short_repr import kept

# Below this share of accepted draws, a schema is reported as one mcpfuzz cannot fuzz well.
MIN_ACCEPTED_SHARE = 0.25
# Values a schema's check draws: pairs of (any valid value, a fully populated one), half this many, in one
# Hypothesis run; and the fully populated values whose array items the coverage boundaries reuse.
PREFLIGHT_DRAWS = 12
# A schema's check stops drawing once its values hold this many characters of JSON (after at least
# PREFLIGHT_MIN_DRAWS of them): a deep schema's values take a second each to draw. Sizes depend on the seed
# only, so the same seed stops at the same value.
PREFLIGHT_CHARACTERS = 8_000
PREFLIGHT_MIN_DRAWS = 3
# Sub-strategies kept by the memo below (a few per property of each tool's schema).
STRATEGY_CACHE_SIZE = 4096
# Object keywords that judge an object member by member (or not at all): under objects using only
# these, changing one member can only break that member's schema, `required` (removed) or
# `additionalProperties` (added), so an edit is validated on the member alone (`edit_errors`).
MEMBERWISE_KEYWORDS = frozenset({
    "type", "properties", "required", "additionalProperties", "title", "description", "default", "examples",
    "$comment", "$schema", "$id", "$defs", "definitions", "readOnly", "writeOnly", "deprecated"})


def _memoized(build: Callable[..., st.SearchStrategy[Any]], cache: OrderedDict) -> Callable[..., Any]:
    """`build(schema_or_schemas, alphabet=..., custom_formats=...)`, built once per equal input.

    hypothesis-jsonschema's object strategy rebuilds the strategy of every property on every draw
    (canonicalising and resolving the subschema, and a new `st.composite` for a nested object, whose
    creation parses the function's source): that was most of a draw. A strategy is a pure description,
    so the one built first draws exactly what a rebuilt one would. The alphabet and format strategies
    are per top-level schema: they are part of the key by identity and kept alive by the entry.
    """
    lock = threading.Lock()

    def cached(schema: Any, *, alphabet: Any, custom_formats: Any) -> st.SearchStrategy[Any]:
        try:
            key = (id(alphabet), id(custom_formats), json.dumps(schema))
        except (TypeError, ValueError):
            return build(schema, alphabet=alphabet, custom_formats=custom_formats)
        with lock:
            entry = cache.get(key)
            if entry is not None and entry[0] is alphabet and entry[1] is custom_formats:
                cache.move_to_end(key)
                return entry[2]
        strategy = build(schema, alphabet=alphabet, custom_formats=custom_formats)
        with lock:
            cache[key] = (alphabet, custom_formats, strategy)
            if len(cache) > STRATEGY_CACHE_SIZE:
                cache.popitem(last=False)
        return strategy

    cached.mcpfuzz_memo = True  # type: ignore[attr-defined]
    cached.__wrapped__ = build  # type: ignore[attr-defined]
    return cached


def _memoize_subschema_strategies() -> None:
    """Route hypothesis-jsonschema's per-draw rebuilds through bounded memos (once per process)."""
    for name in ("__from_schema", "merged_as_strategies"):
        build = getattr(_hjs, name, None)
        if callable(build) and not getattr(build, "mcpfuzz_memo", False):
            setattr(_hjs, name, _memoized(build, OrderedDict()))


_memoize_subschema_strategies()
# Its object strategy rebuilt on public Hypothesis API (its own needs a private helper that changed).
jsonschema_objects.install()


class ArgumentSchema:
    """A tool's inputSchema: validation in its own dialect, and strategies of values valid under it."""

    def __init__(self, schema: Any) -> None:
        self.schema = schema
        self.prepared: PreparedSchema = prepare(schema)
        self.rejections: Counter[str] = Counter()
        self.accepted = 0
        self._parents: dict[Path, dict | None] = {}
        self._member_validators: dict[int, tuple[Any, Any]] = {}  # id(member schema) -> (it, its validator)
        self._samples: dict[int, list[dict]] = {}  # seed -> fully populated values drawn from it

    def is_valid(self, value: Any) -> bool:
        """Valid under the original schema (2020-12 unless `$schema` says otherwise), formats included."""
        return isinstance(value, dict) and self.prepared.validator.is_valid(value)

    def errors(self, value: Any) -> list:
        """The validation errors of a value, most specific first."""
        return sorted(self.prepared.validator.iter_errors(value), key=lambda e: -len(e.absolute_path))

    def edit_errors(self, base: dict, path: Path, new: Any) -> list[str] | None:
        """The keywords broken once the member at `path` of `base` (a valid value) is `new` (MISSING: removed).

        None when the edit cannot be made (a parent object is absent, or nothing to remove), as
        `set_at` / `delete_at` say. A negative or edge draw checks dozens of edits of one value: where
        every object down to the member's parent judges members one by one, only the member is
        validated (against its property schema), not the whole value again.
        """
        if new is MISSING:
            if get_at(base, path) is MISSING:
                return None
        elif not isinstance(get_at(base, path[:-1]) if len(path) > 1 else base, dict):
            return None
        parent = self._memberwise_parent(path[:-1])
        if parent is None:
            edited = delete_at(base, path) if new is MISSING else set_at(base, path, new)
            return [str(error.validator) for error in self.prepared.validator.iter_errors(edited)]
        name = path[-1]
        if new is MISSING:
            return ["required"] if name in parent.get("required", ()) else []
        properties = parent.get("properties", {})
        member = properties[name] if name in properties else parent.get("additionalProperties", True)
        if member is True:
            return []
        if member is False and name not in properties:
            return ["additionalProperties"]  # one error naming the extra member, as jsonschema gives
        return [str(error.validator) for error in self._member_validator(member).iter_errors(new)]

    def member_accepts(self, path: Path, value: Any) -> bool | None:
        """Whether the member at `path` may hold `value` whatever its siblings are; None when that depends on them.

        Known only where every object down to the member judges members one by one (`edit_errors`).
        """
        parent = self._memberwise_parent(path[:-1])
        if parent is None:
            return None
        properties = parent.get("properties", {})
        member = properties[path[-1]] if path[-1] in properties else parent.get("additionalProperties", True)
        if isinstance(member, bool):
            return member
        return self._member_validator(member).is_valid(value)

    def _member_validator(self, member: Any) -> Any:
        """The schema's validator for one member's schema, built once (a negative or edge draw checks several)."""
        entry = self._member_validators.get(id(member))
        if entry is None or entry[0] is not member:
            entry = (member, self.prepared.validator.evolve(schema=member))
            self._member_validators[id(member)] = entry
        return entry[1]

    def _memberwise_parent(self, path: Path) -> dict | None:
        """The original schema of the object at `path` when it and every object above it are memberwise."""
        if path not in self._parents:
            node: Any = self.prepared.original
            for name in (None, *path):
                if name is not None:
                    properties = node.get("properties")
                    node = properties.get(name) if isinstance(properties, dict) else None
                if not _memberwise(node):
                    node = None
                    break
            self._parents[path] = node
        return self._parents[path]

    def _keep(self, value: Any) -> bool:
        """The filter of drawn values; counts why values were rejected, for the warning."""
        if self.is_valid(value):
            self.accepted += 1
            return True
        errors = self.errors(value) if isinstance(value, dict) else []
        self.rejections[str(errors[0].validator) if errors else "type"] += 1
        return False

    def _strategy(self, generation: Any) -> st.SearchStrategy[dict]:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # hypothesis-jsonschema warns when formats are overridden
            try:
                # The common shapes drawn directly, the rest by hypothesis-jsonschema, subschema by subschema.
                # An object schema (prepared so): every value drawn is a dict.
                base = cast("st.SearchStrategy[dict]", compile_schema(generation, hypothesis_jsonschema_strategy,
                                                                      CUSTOM_FORMATS))
            except (HypothesisException, ValueError, TypeError, RecursionError) as error:
                raise SchemaProblem(_keyword_in(str(error)), f"no generator for this schema: {error}"[:300],
                                    "simplify the schema (a plain object of typed properties draws best)"
                                    ) from None
        return kept(base, self._keep, "schema_values")

    @cached_property
    def sites(self) -> list[Site]:
        """Every property site (nested objects included)."""
        return sites(self.prepared.generation)

    @cached_property
    def objects(self) -> list[tuple[Path, dict]]:
        """The root object schema and every nested one, with their paths."""
        return object_paths(self.prepared.generation)

    @cached_property
    def positive(self) -> st.SearchStrategy[dict]:
        """Any argument object valid under the schema."""
        return self._strategy(self.prepared.generation)

    @cached_property
    def populated(self) -> st.SearchStrategy[dict]:
        """Valid argument objects with every listed property present (where the schema allows it)."""
        return self._strategy(all_required(self.prepared.generation))

    @cached_property
    def exact(self) -> bool:
        """Every value the strategies draw is valid by construction, so no draw is needed to learn that they
        draw well: nothing was left to filtering, and each subschema is compiled, or is left to
        hypothesis-jsonschema only as "any value" or as an `anyOf` of such subschemas (Optional[X] in pydantic)."""
        return not self.prepared.notes and _exactly_drawn(self.prepared.generation)

    def preflight(self, seed: int) -> tuple[list[dict], list[dict]]:
        """([the simplest valid arguments], [the simplest with every listed property present]); SchemaProblem when
        the schema resists drawing.

        The first example of a Hypothesis run is the simplest (every choice its simplest), whatever the seed. A
        schema that is `exact` draws valid values only, so one run of one example gives both values. Any other
        schema draws up to PREFLIGHT_DRAWS values (fewer once they are large, see `enough_drawn`), which tells
        how many drawn values its validator rejects, then the simplest fully populated one in a run of its own
        (a pair in one run would give other values whenever a fully populated value is rejected); the other
        fully populated values are drawn only where the coverage boundaries need them (`populated_samples`).
        """
        if self.exact:
            pairs: st.SearchStrategy[tuple[dict, dict]] = (
                self.positive.map(lambda value: (value, value)) if self.populated.is_empty
                else st.tuples(self.positive, self.populated))
            drawn = draw_examples(pairs, 1, seed)
            if drawn:
                return [drawn[0][0]], [drawn[0][1]]
        plain = draw_examples(self.positive, PREFLIGHT_DRAWS, seed, enough=enough_drawn)
        populated = draw_examples(self.populated, 1, seed)
        attempts = self.accepted + sum(self.rejections.values())
        if not plain:
            keyword = self.rejections.most_common(1)[0][0] if self.rejections else "type"
            raise SchemaProblem(keyword, "no valid arguments could be drawn (the schema may be unsatisfiable)",
                                f"check the `{keyword}` constraints of the inputSchema")
        if attempts and self.accepted / attempts < MIN_ACCEPTED_SHARE and self.rejections:
            keyword = self.rejections.most_common(1)[0][0]
            raise SchemaProblem(keyword, f"{sum(self.rejections.values())} of {attempts} drawn values broke "
                                f"`{keyword}`", f"mcpfuzz cannot draw `{keyword}` well; simplify that part of "
                                "the schema or exclude the tool with --exclude-tool")
        return plain[:1], (populated or plain)[:1]

    def populated_samples(self, seed: int, simplest: dict) -> list[dict]:
        """Up to PREFLIGHT_DRAWS // 2 fully populated values (fewer once they are large, see `enough_drawn`), the
        first the simplest (`simplest` when none can be drawn), drawn from `seed`: the coverage boundaries reuse
        their array items."""
        if seed not in self._samples:
            self._samples[seed] = draw_examples(self.populated, PREFLIGHT_DRAWS // 2, seed, enough=enough_drawn)
        return self._samples[seed] or [simplest]


def enough_drawn(values: list[Any]) -> bool:
    """Whether a schema's check has drawn enough: PREFLIGHT_MIN_DRAWS values at least, holding PREFLIGHT_CHARACTERS
    characters of JSON together."""
    return len(values) >= PREFLIGHT_MIN_DRAWS and sum(len(json.dumps(value)) for value in values) >= \
        PREFLIGHT_CHARACTERS


def hypothesis_jsonschema_strategy(schema: Any) -> st.SearchStrategy[Any]:
    """hypothesis-jsonschema's strategy for a subschema the compiler leaves to it."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # it warns when formats are overridden
        return from_schema(schema, custom_formats=CUSTOM_FORMATS)


class _Enough(BaseException):
    """Ends a run of `draw_examples` at once (a BaseException, so Hypothesis neither reports nor replays it)."""


def draw_examples(strategy: st.SearchStrategy[Any], count: int, seed: int,
                  enough: Callable[[list[Any]], bool] | None = None) -> list[Any]:
    """`count` values drawn deterministically from `seed` (fewer once `enough` of those drawn says so); the first
    is the simplest the strategy has."""
    values: list[Any] = []

    @settings(database=None, max_examples=count, phases=[Phase.generate], deadline=None, derandomize=False,
              suppress_health_check=list(HealthCheck), verbosity=Verbosity.quiet)
    @hypothesis_seed(seed)
    @given(strategy)
    def collect(value: Any) -> None:
        values.append(value)
        if enough is not None and enough(values):
            raise _Enough

    with contextlib.suppress(HypothesisException, _Enough):  # unsatisfiable: the caller sees too few values
        collect()
    return values


def _exactly_drawn(schema: Any) -> bool:
    """Whether the compiled strategy of `schema` draws valid values only (see ArgumentSchema.exact)."""
    loose: list[Any] = []

    def note(sub: Any) -> st.SearchStrategy[Any]:
        loose.append(sub)
        return st.nothing()

    compile_schema(schema, note, CUSTOM_FORMATS)
    return all(_any_value(sub) or _union_of_exact(sub) or _annotated(sub) for sub in loose)


def _any_value(schema: Any) -> bool:
    return schema is True or isinstance(schema, dict) and not schema.keys() - ANNOTATIONS


def _union_of_exact(schema: Any) -> bool:
    """`anyOf` (beside annotations only) whose every branch is drawn exactly: any value drawn is valid."""
    if not isinstance(schema, dict) or schema.keys() - ANNOTATIONS != {"anyOf"}:
        return False
    branches = schema["anyOf"]
    return isinstance(branches, list) and bool(branches) and all(_exactly_drawn(branch) for branch in branches)


def _annotated(schema: Any) -> bool:
    """`allOf` of one subschema drawn exactly and annotations (how 2020-12 `{"$ref": ..., "description": ...}`
    is inlined): the same values as that subschema alone."""
    if not isinstance(schema, dict) or schema.keys() - ANNOTATIONS != {"allOf"}:
        return False
    if not isinstance(schema["allOf"], list):
        return False
    constraining = [branch for branch in schema["allOf"] if not _any_value(branch)]
    return len(constraining) == 1 and _exactly_drawn(constraining[0])


def _memberwise(node: Any) -> bool:
    return (isinstance(node, dict) and node.keys() <= MEMBERWISE_KEYWORDS
            and isinstance(node.get("properties", {}), dict) and isinstance(node.get("required", []), list)
            and isinstance(node.get("additionalProperties", True), (bool, dict)))


def _keyword_in(message: str) -> str:
    for keyword in ("$ref", "pattern", "format", "allOf", "anyOf", "oneOf", "not", "if", "dependencies"):
        if keyword in message:
            return keyword
    return "inputSchema"
