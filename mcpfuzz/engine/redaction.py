"""One redaction point for what a run reports: every event is redacted before any handler sees it.

A server may print a secret it was given (an `--env` value, a header, a password in its URL) on
stderr or in an error message; findings embed those texts. Redacting at the sink, not in each
writer, means no console line, report file or event stream can hold one.
"""

from __future__ import annotations

from dataclasses import fields, is_dataclass, replace
from enum import Enum
from typing import Any

from mcpfuzz.corpus.redact import Redactor
from mcpfuzz.engine.events import Event, EventSink, Stats
from mcpfuzz.jsonrpc.exchange import Exchange
from mcpfuzz.jsonrpc.frame import Case

# Fields never shown as text: a finding's identity (its key), the bytes that replay it (frames and
# case, which the corpus writes with known secrets only), and the corpus' own file names.
KEPT_FIELDS = frozenset({"key", "frames", "case", "corpus_paths"})
# Values carried for the machine, not for people.
KEPT_TYPES = (Exchange, Case, Stats, Enum, bytes, bool, int, float)


class RedactingSink:
    """Passes every event on with its texts redacted (an event with nothing to hide passes unchanged)."""

    def __init__(self, sink: EventSink, redactor: Redactor) -> None:
        self.sink = sink
        self.redactor = redactor

    def __call__(self, event: Event) -> None:
        self.sink(redact(event, self.redactor))


def redact(value: Any, redactor: Redactor) -> Any:
    """`value` with every string in it redacted; dataclasses (events, findings) copied only when something changed."""
    if value is None or isinstance(value, KEPT_TYPES):
        return value
    if isinstance(value, str):
        return redactor.text(value)
    if isinstance(value, tuple):
        items = tuple(redact(item, redactor) for item in value)
        return value if items == value else items
    if isinstance(value, (list, dict)):
        return redactor.value(value)
    names = _text_fields(type(value))
    if names is None:
        return value
    changes = {}
    for name in names:
        old = getattr(value, name)
        new = redact(old, redactor)
        if new is not old and new != old:
            changes[name] = new
    return replace(value, **changes) if changes else value


# A dataclass type -> the fields redaction reads (None for any other type): fields() once per type, not per event.
_FIELDS: dict[type, tuple[str, ...] | None] = {}


def _text_fields(cls: type) -> tuple[str, ...] | None:
    """The init fields of a dataclass type that may hold text, in order; None when `cls` is no dataclass."""
    try:
        return _FIELDS[cls]
    except KeyError:
        pass
    names = None
    if is_dataclass(cls):
        names = tuple(field.name for field in fields(cls) if field.init and field.name not in KEPT_FIELDS)
    _FIELDS[cls] = names
    return names
