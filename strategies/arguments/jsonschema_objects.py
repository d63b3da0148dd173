"""hypothesis-jsonschema's object strategy, drawn through Hypothesis' public API only.

hypothesis-jsonschema 0.23.1 (its latest) draws an object's members with `many`, a private Hypothesis
helper whose interface changed in Hypothesis 6.170.10: every object it drew then failed with
`'many' object has no attribute 'more'`. `install` replaces that one function of its module with
`object_schema` below, which draws the member count as an integer and the members in a composite, so
one behaviour holds on every Hypothesis mcpfuzz supports. The rest of hypothesis-jsonschema (its
canonicaliser, merging, regexes) is used as it is.
"""

from __future__ import annotations

import re
from typing import Any

from hypothesis import reject
from hypothesis import strategies as st
from hypothesis_jsonschema import _from_schema as _hjs
from mcpfuzz.strategies.short_repr import TRIES, named_composite

# Members past the required ones an object may get (before maxProperties): hypothesis-jsonschema averaged 5.
MAX_EXTRA_MEMBERS = 10


def install() -> bool:
    """Route hypothesis-jsonschema's object schemas to `object_schema` (once); False when its module differs."""
    current = getattr(_hjs, "object_schema", None)
    if current is object_schema:
        return True
    needed = ("__from_schema", "merged_as_strategies", "make_validator", "from_js_regex", "FALSEY")
    if not callable(current) or not all(hasattr(_hjs, name) for name in needed):
        return False
    _hjs.object_schema = object_schema
    return True


def object_schema(custom_formats: dict[str, st.SearchStrategy[str]], alphabet: Any,
                  schema: dict) -> st.SearchStrategy[dict[str, Any]]:
    """Objects valid under a canonicalised object schema (hypothesis-jsonschema's keywords, its meaning)."""
    required: list[str] = schema.get("required", [])
    min_size = max(len(required), schema.get("minProperties", 0))
    max_size = schema.get("maxProperties", min_size + MAX_EXTRA_MEMBERS)
    names_schema = schema.get("propertyNames", {})
    if names_schema == _hjs.FALSEY:
        return st.builds(dict)
    names_schema = {**names_schema, "type": "string"}
    properties: dict[str, Any] = schema.get("properties", {})
    patterns: dict[str, Any] = schema.get("patternProperties", {})
    additional = schema.get("additionalProperties", {})
    additional_allowed = additional != _hjs.FALSEY
    for pattern in patterns:
        try:
            re.compile(pattern)
        except re.error:
            return st.builds(dict) if min_size == 0 else st.nothing()

    dependencies = schema.get("dependencies", {})
    dependent_names = {name: needs for name, needs in dependencies.items() if isinstance(needs, list)}
    dependent_schemas = {name: sub for name, sub in dependencies.items() if name not in dependent_names}
    valid_name = _hjs.make_validator(names_schema).is_valid
    known = set(filter(valid_name, {*dependent_names, *dependent_schemas, *properties}))
    for name in sorted(known.union(required)):
        alphabet.check_name_allowed(name)
    optional_known = sorted(known - set(required))
    from_schema = getattr(_hjs, "__from_schema")
    name_choices = [
        from_schema(names_schema, custom_formats=custom_formats, alphabet=alphabet) if additional_allowed
        else st.nothing(),
        st.sampled_from(optional_known) if optional_known else st.nothing(),
        *(_hjs.from_js_regex(pattern, alphabet=alphabet).filter(valid_name) for pattern in sorted(patterns)),
    ]
    any_name = st.one_of([choice for choice in name_choices if not choice.is_empty])
    if not additional_allowed and not patterns:
        max_size = min(max_size, len(known.union(required)))  # no other name can be drawn
    if min_size > max_size:
        return st.nothing()
    size = st.integers(min_size, min(max_size, min_size + MAX_EXTRA_MEMBERS))
    dependent_validators = {name: _hjs.make_validator(sub) for name, sub in dependent_schemas.items()}

    def next_name(draw: st.DrawFn, out: dict) -> str:
        """A required or depended-on name missing so far, else any allowed name not yet drawn."""
        missing = next((name for name in required if name not in out), None)
        if missing is None:
            needed = (name for present in sorted(set(dependent_names) & out.keys())
                      for name in dependent_names[present] if name not in out)
            missing = next(needed, None)
        if missing is not None:
            return missing
        for _ in range(TRIES):
            name = draw(any_name)
            if name not in out:
                return name
        reject()
        raise AssertionError("reject returns only by raising")  # pragma: no cover

    def value_strategy(name: str) -> st.SearchStrategy[Any]:
        matching = [patterns[pattern] for pattern in sorted(patterns) if re.search(pattern, name) is not None]
        if name in properties:
            matching.insert(0, properties[name])
        if matching:
            return _hjs.merged_as_strategies(matching, alphabet=alphabet, custom_formats=custom_formats)
        return from_schema(additional, custom_formats=custom_formats, alphabet=alphabet)

    def draw_object(draw: st.DrawFn) -> dict:
        target, refused = draw(size), 0
        out: dict[str, Any] = {}
        while len(out) < target:
            name = next_name(draw, out)
            out[name] = draw(value_strategy(name))
            if any(present in out and not validator.is_valid(out)
                   for present, validator in dependent_validators.items()):
                out.pop(name)
                refused += 1
                if refused > TRIES:
                    reject()
        for present in set(dependent_names) & out.keys():
            if not out.keys() >= set(dependent_names[present]):
                reject()
        return out

    return named_composite("object_schema", draw_object)
