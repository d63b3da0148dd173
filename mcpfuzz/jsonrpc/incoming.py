"""Classify what a server wrote: responses, requests, notifications, or noise."""

from __future__ import annotations

import json
import sys
from dataclasses import dataclass
from decimal import Decimal
from typing import Any

from mcpfuzz.jsonrpc.json_value import ABSENT, EXACT_DIGITS, Absent

NOT_JSON: Any = type("NotJson", (), {"__repr__": lambda self: "<not json>"})()

RESPONSE = "response"
REQUEST = "request"
NOTIFICATION = "notification"
RESPONSE_BATCH = "response-batch"
NOISE = "noise"
OVERSIZED = "oversized"


@dataclass(frozen=True)
class Incoming:
    """One line the server wrote, decoded and classified."""

    raw: bytes
    size: int
    message: Any
    kind: str
    # `NaN`, `Infinity` or `-Infinity` where the line held one: not JSON (RFC 8259 section 6), though Python
    # reads it; the message is kept so that the answer still counts, and response-schema reports the number.
    non_json_number: str = ""

    @property
    def id(self) -> Any | Absent:
        """The message's id member, or ABSENT (never to be written back as it is: narrow it first)."""
        return self.message.get("id", ABSENT) if isinstance(self.message, dict) else ABSENT

    @property
    def error_code(self) -> Any:
        """The error code of an error response, else None."""
        error = self.message.get("error") if isinstance(self.message, dict) else None
        return error.get("code") if isinstance(error, dict) else None

    @property
    def is_error(self) -> bool:
        """True for a response carrying an `error` member."""
        return isinstance(self.message, dict) and "error" in self.message

    @property
    def is_result(self) -> bool:
        """True for a response carrying a `result` member and no `error`."""
        return isinstance(self.message, dict) and "result" in self.message and "error" not in self.message

    def text(self, limit: int = 300) -> str:
        """The line as text, shortened for display."""
        text = self.raw.decode("utf-8", "backslashreplace")
        if self.size > len(self.raw):
            return f"{text[:limit]}... ({self.size} bytes, truncated)"
        return text if len(text) <= limit else f"{text[:limit]}... ({len(text)} chars)"


def classify(line: bytes, size: int | None = None) -> Incoming:
    """Decode one stdout line; anything not a JSON object or array is noise."""
    size = len(line) if size is None else size
    if size > len(line):
        return Incoming(line, size, NOT_JSON, OVERSIZED)
    try:
        text = line.decode("utf-8")
    except UnicodeDecodeError:
        return Incoming(line, size, NOT_JSON, NOISE)
    if _plain_decoding_exact() and "NaN" not in text and "Infinity" not in text:
        # The common line: no constant to note, and every integer Python's int() takes is one read_integer reads
        # the same, so the shared decoder's C paths give the same value; anything it refuses is read carefully.
        try:
            message = _PLAIN.decode(text)
        except RecursionError:
            return Incoming(line, size, NOT_JSON, NOISE)
        except ValueError:
            pass
        else:
            return Incoming(line, size, message, kind_of(message))
    constants: list[str] = []

    def constant(name: str) -> float:
        constants.append(name)
        return float(name)

    try:
        message = json.loads(text, parse_int=read_integer, parse_constant=constant)
    except (ValueError, RecursionError):
        return Incoming(line, size, NOT_JSON, NOISE)
    return Incoming(line, size, message, kind_of(message), constants[0] if constants else "")


_PLAIN = json.JSONDecoder()  # built once: json.loads with hooks builds a decoder per call


# Python's limit on the digits int() reads (0: none, as before 3.10.7, which has no such function).
_int_digit_limit = getattr(sys, "get_int_max_str_digits", lambda: 0)


def _plain_decoding_exact() -> bool:
    """True when Python's int() reads exactly the integers read_integer reads exactly (its digit limit is on and
    within EXACT_DIGITS), so the plain decoder and read_integer agree on every integer the plain one accepts."""
    limit = _int_digit_limit()
    return 0 < limit <= EXACT_DIGITS


def read_integer(text: str) -> int:
    """A JSON integer of any length: exact up to EXACT_DIGITS digits (past Python's 4300-digit str limit,
    through Decimal), beyond that its sign and order of magnitude (exact conversion is quadratic)."""
    digits = len(text) - text.startswith("-")
    if digits <= 4000:
        return int(text)
    sign = -1 if text.startswith("-") else 1
    if digits <= EXACT_DIGITS:
        return int(Decimal(text))
    return sign * 10 ** (digits - 1)


def kind_of(message: Any) -> str:
    """The JSON-RPC role of a decoded value."""
    if isinstance(message, list):
        return RESPONSE_BATCH if message and all(isinstance(m, dict) and "method" not in m for m in message) \
            else NOISE
    if not isinstance(message, dict):
        return NOISE
    if "method" in message:
        return REQUEST if "id" in message else NOTIFICATION
    return RESPONSE


def split_batch(incoming: Incoming) -> list[Incoming]:
    """Expand a response array into one Incoming per element (same raw line)."""
    if incoming.kind != RESPONSE_BATCH:
        return [incoming]
    return [Incoming(incoming.raw, incoming.size, m, kind_of(m)) for m in incoming.message]

