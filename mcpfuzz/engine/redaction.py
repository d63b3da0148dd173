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
from mcpfuzz.jsonrpc.exchange import Arrival, Exchange
from mcpfuzz.jsonrpc.frame import Case
from mcpfuzz.jsonrpc.incoming import NOISE, OVERSIZED, Incoming, classify

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


def redacted_exchange(exchange: Exchange, redactor: Redactor) -> Exchange:
    """A copy of `exchange` whose server texts (lines, stderr) are redacted, for oracles to build texts from.

    Oracles cut what they quote (a crash key's exception line, an 80-character message excerpt); a cut made before
    redaction can keep the start of a secret that the whole secret's pattern no longer matches. Judged on this
    copy, every key, message and received line is cut from redacted text. Frames stay as sent (they replay).
    """
    arrivals = [_redacted_arrival(arrival, redactor) for arrival in exchange.arrivals]
    crash = exchange.crash
    if crash is not None:
        crash = replace(crash, stderr_tail=redactor.text(crash.stderr_tail),
                        stderr_context=redactor.text(crash.stderr_context))
    http = exchange.http
    if http is not None and http.body:  # a refusal's text is quoted in received lines too
        body = redactor.text(http.body.decode("utf-8", "surrogateescape")).encode("utf-8", "surrogateescape")
        http = http if body == http.body else replace(http, body=body)
    return replace(exchange, arrivals=arrivals, crash=crash, stderr_tail=redactor.text(exchange.stderr_tail),
                   server_requests=[_redacted_incoming(item, redactor) for item in exchange.server_requests],
                   http=http)


def _redacted_arrival(arrival: Arrival, redactor: Redactor) -> Arrival:
    incoming = _redacted_incoming(arrival.incoming, redactor)
    return arrival if incoming is arrival.incoming else replace(arrival, incoming=incoming)


def _redacted_incoming(incoming: Incoming, redactor: Redactor) -> Incoming:
    """One line with its secrets redacted, read again (a JSON line stays JSON: the marker needs no escaping)."""
    text = incoming.raw.decode("utf-8", "surrogateescape")
    clean = redactor.text(text)
    if clean == text:
        return incoming
    raw = clean.encode("utf-8", "surrogateescape")
    if incoming.kind in (NOISE, OVERSIZED):
        return replace(incoming, raw=raw)
    again = classify(raw)
    if again.kind != incoming.kind:
        return replace(incoming, raw=raw)  # the message as read stays: what it is must not change with redaction
    return replace(incoming, raw=raw, message=again.message)
