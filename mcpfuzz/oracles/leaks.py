"""Error messages and error results must not carry stack traces or the server's file paths."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from typing import Any

from mcpfuzz.jsonrpc.exchange import Exchange
from mcpfuzz.jsonrpc.oracle_ids import OracleId
from mcpfuzz.oracles.base import Failure, Severity, failure_class, register

NoInternalLeakFailure = failure_class(OracleId.NO_INTERNAL_LEAK, "Stack trace or server file path in an error")

# (what, pattern). Each pattern is specific to one runtime's trace format, so prose does not match.
TRACE_PATTERNS: tuple[tuple[str, re.Pattern[str]], ...] = (
    ("a Python traceback", re.compile(r"Traceback \(most recent call last\)|File \"[^\"]+\", line \d+")),
    ("a JavaScript stack trace", re.compile(r"\bat (?:async )?[\w.$<>\[\] ]*\(?(?:file://)?/?[\w./\\-]+\.[cm]?[jt]s"
                                            r":\d+:\d+\)?")),
    ("a Java stack trace", re.compile(r"\bat [\w.$]+\([\w$]+\.(?:java|kt):\d+\)")),
    ("a Go panic", re.compile(r"goroutine \d+ \[running\]")),
    ("a Rust panic", re.compile(r"thread '[^']*' panicked at")),
    ("a .NET stack trace", re.compile(r"\bat [\w.`<>]+\(.*\) in .+:line \d+")),
)
# An absolute path to a source file, not preceded by a URL's host or another path character.
SOURCE_PATH = re.compile(
    r"(?<![\w:/.~-])(?:/(?:[\w.@+-]+/)+[\w.@+-]+|[A-Za-z]:\\(?:[\w .@+-]+\\)+[\w.@+-]+)"
    r"\.(?:py|pyc|js|mjs|cjs|ts|go|rb|java|kt|rs|php|cs|ex|exs)\b")


def leaked_texts(exchange: Exchange) -> Iterator[str]:
    """Texts meant for the client that describe a failure: error messages and data, isError results."""
    for arrival in exchange.responses():
        message = arrival.incoming.message
        if not isinstance(message, dict):
            continue
        error = message.get("error")
        if isinstance(error, dict):
            yield _as_text(error.get("message"))
            if "data" in error:
                yield _as_text(error["data"])
        result = message.get("result")
        if isinstance(result, dict) and result.get("isError") is True:
            for item in result.get("content") or []:
                if isinstance(item, dict) and isinstance(item.get("text"), str):
                    yield item["text"]


def _as_text(value: Any) -> str:
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)


@register(NoInternalLeakFailure, Severity.MEDIUM)
def no_internal_leak(exchange: Exchange) -> Iterator[Failure]:
    """Internals in an error help attackers and confuse models: report traces and source paths (medium)."""
    sent: list[str] = []  # what was sent, as text: read only when a pattern matches (most answers leak nothing)

    def was_sent(found: str) -> bool:
        if not sent:
            sent.append(b"\n".join(exchange.frames).decode("utf-8", "replace"))
        return found in sent[0]

    for text in leaked_texts(exchange):
        for what, pattern in TRACE_PATTERNS:
            match = pattern.search(text)
            if match and not was_sent(match.group(0)):
                yield NoInternalLeakFailure(Severity.MEDIUM, f"an error carries {what}: {_around(text, match)}",
                                            "trace", server_wide=True)
                return
        match = SOURCE_PATH.search(text)
        if match and not was_sent(match.group(0)):
            yield NoInternalLeakFailure(Severity.MEDIUM, f"an error carries a server file path: "
                                        f"{_around(text, match)}", "path", server_wide=True)
            return


def _around(text: str, match: re.Match[str]) -> str:
    start = max(0, match.start() - 30)
    return repr(text[start:match.end() + 30])
