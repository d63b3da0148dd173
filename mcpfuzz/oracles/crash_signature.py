"""A crash's signature from the server's stderr: the exception line and the innermost frames of its stack.

Two crashes with one signature are one root cause, whichever frame set them off; the signature leaves out
line numbers, addresses and quoted values, so the same bug keeps its signature across inputs, and the server's
paths and file names (a frame is named by its function), so it keeps it when the server is renamed, copied or
installed elsewhere.

Values are read as their writers quote them: a quoted value may hold escaped quotes (`"a \\"b\\" c"`), and a
structured log line's field (`error="..."`, Go's and logfmt's) is read unescaped, so a value quoted inside it
(`\\"42\\"`) is one value too; numbers, hex addresses, ids and paths are blanked wherever they stand.
"""

from __future__ import annotations

import re

FRAMES_KEPT = 3  # innermost stack frames in a signature: enough to tell two raise sites apart
# A quoted value, its escaped quotes inside it; a single quote must not touch a letter (the apostrophe of "can't"
# opens no quoted value). Then UUIDs and long hex hashes (whatever letters they happen to hold), hex addresses, any
# word holding a digit (ids, versions' parts), then numbers.
_QUOTED = re.compile(r"(?<!\w)'(?:[^'\\\n]|\\.)*'(?!\w)|\"(?:[^\"\\\n]|\\.)*\"")
_NUMBERS = re.compile(r"\b[0-9a-fA-F]{8}(?:-[0-9a-fA-F]{4}){3}-[0-9a-fA-F]{12}\b|\b[0-9a-fA-F]{16,}\b"
                      r"|0[xX][0-9a-fA-F]+|\b[0-9a-fA-F]*[0-9][0-9a-fA-F]*\b|[0-9]+")
# A structured log line's quoted field (`error="server error: ..."`): its text is the message, not one value.
_FIELD = re.compile(r"(?<![\w\\])(\w+)=\"((?:[^\"\\\n]|\\.)*)\"")
_ESCAPE = re.compile(r"\\(.)")
# A date and time (ISO 8601, RFC 3339, or a log's `2026/01/02 15:04:05`): one value, not six numbers.
_TIMESTAMP = re.compile(r"\b\d{4}[-/]\d{2}[-/]\d{2}(?:[T ]\d{2}:\d{2}(?::\d{2}(?:[.,]\d+)?)?(?:Z|[+-]\d{2}:?\d{2})?)?")
SIGNATURE_LINE = 120  # characters of the exception line kept: a structured log's fields come before its message
VALUE = "#"
# Paths (`/srv/app/server.py`, `C:\app\server.js`, `file:///...`) and bare source file names in an exception line.
_PATHS = re.compile(r"(?<![\w.-])(?:file://|[A-Za-z]:|\.{1,2})?(?:[\\/][^\s\\/:'\"()\[\],]+)+[\\/]?"
                    r"|\b[\w.-]+\.(?:py|pyc|js|mjs|cjs|ts|mts|go|rs|java|kt|cs|rb)\b")
# Python: `  File "/srv/app.py", line 12, in handler`
_PYTHON_FRAME = re.compile(r'^\s*File "([^"]+)", line \d+, in (\S+)')
# JavaScript (V8): `    at handler (/srv/app.js:12:5)` or `    at /srv/app.js:12:5`
_JS_FRAME = re.compile(r"^\s*at (?:(\S+) \()?([^\s()]+?):\d+:\d+\)?\s*$")
# .NET: `   at App.Tools.Handler(String s) in /src/Tools.cs:line 12`; Java: `\tat app.Tools.handler(Tools.java:12)`
_MANAGED_FRAME = re.compile(r"^\s*at ([\w.$<>`|\[\],+-]+)\(")
# Go: `main.handler(...)` followed by a `\t/srv/main.go:12 +0x1d` line
_GO_FRAME = re.compile(r"^([\w./*()-]+)\([^)]*\)\s*$")
# Rust: `   3: app::handler` (RUST_BACKTRACE=1)
_RUST_FRAME = re.compile(r"^\s*\d+: ([\w:<>]+)")


def exception_line(stderr: str) -> str:
    """The line that names what went wrong: the last line of a Python traceback, the first `Error:` line of
    a JavaScript, .NET or Java stack, a Go `panic:` line, a Rust `panicked at` line; else the last non-empty line."""
    lines = [line.strip() for line in stderr.splitlines() if line.strip()]
    if not lines:
        return ""
    for line in lines:
        if line.startswith("panic:") or "panicked at" in line:
            return line
    if any(_is_frame(line) for line in lines):
        for index, line in enumerate(lines):
            if index + 1 < len(lines) and _is_frame(lines[index + 1]) and not _is_frame(line):
                return line
    return lines[-1]


def _is_frame(line: str) -> bool:
    """A line of a JavaScript, .NET or Java stack (the exception line is the one above the first)."""
    return bool(_JS_FRAME.match(line) or _MANAGED_FRAME.match(line))


def innermost_frames(stderr: str) -> list[str]:
    """Up to FRAMES_KEPT function names of the stack, innermost first (any of the languages above); the file a
    function is in is left out, as it names the server's own path."""
    python = [m.group(2) for m in map(_PYTHON_FRAME.match, stderr.splitlines()) if m]
    if python:
        return python[::-1][:FRAMES_KEPT]  # Python prints the innermost frame last
    found: list[str] = []
    for line in stderr.splitlines():
        js = _JS_FRAME.match(line)
        managed = None if js else _MANAGED_FRAME.match(line)
        go = _GO_FRAME.match(line.strip())
        rust = _RUST_FRAME.match(line)
        if js:
            found.append(js.group(1) or "<anonymous>")
        elif managed:
            found.append(managed.group(1))
        elif go and not line.startswith(("\t", " ")):
            found.append(go.group(1))
        elif rust:
            found.append(rust.group(1))
    return found[:FRAMES_KEPT]


def crash_signature(stderr: str) -> str:
    """`ExceptionLine@function<function<function` with values and paths blanked; empty when stderr says nothing."""
    line = blank_values(exception_line(stderr))[:SIGNATURE_LINE]
    frames = innermost_frames(stderr)
    return f"{line}@{'<'.join(frames)}" if frames else line


def blank_values(line: str) -> str:
    """The line with its values blanked: quoted values, paths, hex addresses, ids and numbers each become one mark,
    whatever they held; a structured log field's text is read unescaped and blanked the same way."""
    fields = _FIELD.sub(lambda m: f"{m.group(1)}=[{blank_values(unescaped(m.group(2)))}]", line)
    return _NUMBERS.sub(VALUE, _PATHS.sub("<path>", _QUOTED.sub(VALUE, _TIMESTAMP.sub(VALUE, fields))))


def unescaped(text: str) -> str:
    """A quoted field's text as written before quoting: each backslash escape undone once."""
    return _ESCAPE.sub(lambda m: m.group(1), text)
