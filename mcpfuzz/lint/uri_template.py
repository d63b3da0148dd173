"""RFC 6570 URI Template syntax: why a template is not one (no expansion, just the grammar of section 2)."""

from __future__ import annotations

import re

OPERATORS = "+#./;?&"
RESERVED_OPERATORS = "=,!@|"  # section 2.2: reserved for future extensions, so invalid today
VARNAME = re.compile(r"(?:[A-Za-z0-9_]|%[0-9A-Fa-f]{2})(?:\.?(?:[A-Za-z0-9_]|%[0-9A-Fa-f]{2}))*")
PREFIX = re.compile(r":[1-9][0-9]{0,3}")
# Section 2.1: literals are any Unicode character except CTL, SP, DQUOTE, "'", "%" (unless pct-encoded), "<",
# ">", "\", "^", "`", "{", "|", "}".
FORBIDDEN_LITERALS = set(" \"'<>\\^`{|}")


def template_problem(template: str) -> str | None:
    """What makes `template` invalid under RFC 6570 section 2, or None."""
    index = 0
    while index < len(template):
        char = template[index]
        if char == "{":
            end = template.find("}", index)
            if end < 0:
                return f"the expression at position {index} is never closed with `}}`"
            problem = _expression(template[index + 1:end])
            if problem:
                return f"in {{{template[index + 1:end]}}}: {problem}"
            index = end + 1
            continue
        if char == "}":
            return f"a `}}` at position {index} closes no expression"
        if char == "%":
            if not re.fullmatch(r"%[0-9A-Fa-f]{2}", template[index:index + 3]):
                return f"`%` at position {index} starts no percent-encoding"
        elif char in FORBIDDEN_LITERALS or ord(char) < 0x20 or ord(char) == 0x7F:
            return f"the character {char!r} at position {index} may not appear outside an expression"
        index += 1
    return None


def _expression(body: str) -> str | None:
    if not body:
        return "an empty expression"
    if body[0] in RESERVED_OPERATORS:
        return f"the operator {body[0]!r} is reserved"
    if body[0] in OPERATORS:
        body = body[1:]
    for varspec in body.split(","):
        name = varspec
        if varspec.endswith("*"):
            name = varspec[:-1]
        elif ":" in varspec:
            name, _, length = varspec.partition(":")
            if not PREFIX.fullmatch(":" + length):
                return f"the prefix length {length!r} is not 1 to 9999"
        if not VARNAME.fullmatch(name):
            return f"{name!r} is not a variable name (letters, digits, `_`, `.` between them, %XX)"
    return None
