"""A case part: what one oracle needs to know about a case, a frozen dataclass that writes itself into a transcript.

A part is registered under a key, the member of the transcript's `extra` object it is written under (a new part's
key is its oracle's id). `CasePart` writes every field but the observed ones under that key and reads them back by
their types; a part that keeps an older transcript shape overrides `to_extra` and `from_extra`.
"""

from __future__ import annotations

import dataclasses
import types
import typing
from collections.abc import Callable, Mapping
from enum import Enum
from typing import Any, ClassVar, TypeVar

# A field with this metadata is filled in by the engine around the case and never saved: a replay observes again.
OBSERVED: Mapping[str, bool] = types.MappingProxyType({"observed": True})

P = TypeVar("P", bound="CasePart")

_REGISTRY: dict[str, type[CasePart]] = {}


class PartFormatError(ValueError):
    """A transcript's part cannot be read back."""


class CasePart:
    """Base of every part (subclasses are frozen dataclasses, registered with `case_part`)."""

    key: ClassVar[str]

    def to_extra(self) -> dict[str, Any]:
        """The members this part adds to the transcript's `extra`."""
        return {self.key: to_json(self)}

    def describe(self) -> str | None:
        """What a correct server answers, when this part decides it alone (None: the expectation says it)."""
        return None

    @classmethod
    def from_extra(cls: type[P], extra: Mapping[str, Any]) -> P | None:
        """The part written by `to_extra` into `extra`, or None when `extra` has none."""
        value = extra.get(cls.key)
        return None if value is None else from_json(cls, value)


def case_part(key: str) -> Callable[[type[P]], type[P]]:
    """Register a part class under `key` (each key once)."""
    def register(cls: type[P]) -> type[P]:
        if key in _REGISTRY and _REGISTRY[key] is not cls:
            raise ValueError(f"two case parts are registered as {key!r}")
        cls.key = key
        _REGISTRY[key] = cls
        return cls
    return register


def registered() -> tuple[type[CasePart], ...]:
    """Every registered part class, in the order they were registered."""
    return tuple(_REGISTRY.values())


def to_json(value: Any) -> Any:
    """A part (or a value inside one) as JSON: enums by value, tuples as lists, observed fields left out."""
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {f.name: to_json(getattr(value, f.name)) for f in dataclasses.fields(value)
                if not f.metadata.get("observed")}
    if isinstance(value, Enum):
        return value.value
    if isinstance(value, (tuple, list)):
        return [to_json(item) for item in value]
    if isinstance(value, Mapping):
        return {str(name): to_json(item) for name, item in value.items()}
    return value


def from_json(cls: type[P], data: Any) -> P:
    """The part `to_json` wrote: each saved field converted back to its declared type, the others defaulted."""
    if not isinstance(data, dict):
        raise PartFormatError(f"the {cls.key} part must be an object, not {type(data).__name__}")
    hints = typing.get_type_hints(cls)
    values = {f.name: _typed(hints[f.name], data[f.name]) for f in dataclasses.fields(cls)  # type: ignore[arg-type]
              if f.name in data and not f.metadata.get("observed")}
    try:
        return cls(**values)
    except TypeError as error:
        raise PartFormatError(f"the {cls.key} part cannot be read: {error}") from None


def _typed(hint: Any, value: Any) -> Any:
    """`value` read as JSON, converted to the type `hint` names (tuples, enums, nested dataclasses, optionals)."""
    origin, arguments = typing.get_origin(hint), typing.get_args(hint)
    if origin in (typing.Union, types.UnionType):
        if value is None and type(None) in arguments:
            return None
        kinds = [argument for argument in arguments if argument is not type(None)]
        return _typed(kinds[0], value) if len(kinds) == 1 else value
    if origin is tuple and isinstance(value, list):
        if len(arguments) == 2 and arguments[1] is Ellipsis:
            return tuple(_typed(arguments[0], item) for item in value)
        return tuple(_typed(kind, item) for kind, item in zip(arguments, value, strict=False)) if arguments \
            else tuple(value)
    if isinstance(hint, type) and issubclass(hint, Enum):
        return hint(value)
    if isinstance(hint, type) and dataclasses.is_dataclass(hint) and isinstance(value, dict):
        inner = typing.get_type_hints(hint)
        return hint(**{f.name: _typed(inner[f.name], value[f.name]) for f in dataclasses.fields(hint)
                       if f.name in value})
    if hint is float and isinstance(value, int) and not isinstance(value, bool):
        return float(value)
    return value
