"""Expression payloads: arithmetic that explodes, nesting past parsers' limits, and code that only leaves a mark."""

from __future__ import annotations

from mcpfuzz.strategies.payloads.canaries import CanaryLayout, hit_token
from mcpfuzz.strategies.payloads.family import Payload

INERT: tuple[Payload, ...] = (
    ("a tower of powers", "9**9**9"),
    ("a caret tower of powers", "9^9^9"),
    ("a huge factorial", "factorial(100000)"),
    ("a huge factorial, postfix", "100000!"),
    ("1,000 nested parentheses", "(" * 1000 + "1" + ")" * 1000),
    ("10,000 terms", "+".join(["1"] * 10_000)),
    ("a division by zero", "1/0"),
    ("a number with 10,000 digits", "9" * 10_000),
    ("an unbalanced expression", "((1+2"),
)


def expression_payloads(layout: CanaryLayout | None, site: str) -> tuple[Payload, ...]:
    """The inert expressions, and with a canary layout code that, if evaluated, only creates a canary file."""
    if layout is None:
        return INERT
    python = layout.hit_path(hit_token(layout.nonce, site, "python-eval"))
    node = layout.hit_path(hit_token(layout.nonce, site, "node-eval"))
    return INERT + (
        ("Python code", f"__import__('pathlib').Path('{python}').touch()"),
        ("JavaScript code", f"require('fs').writeFileSync('{node}', '')"),
    )
