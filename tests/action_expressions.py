"""GitHub Actions expressions (`${{ ... }}`), as far as action.yml uses them, evaluated as a runner would.

Only the forms the action needs: literals, context properties (`inputs.x`, `github.event.a.b`), `!`, `==`,
`!=`, `&&`, `||`, parentheses and the status functions. Anything else (other functions, indexing, `<`)
raises `UnsupportedExpression`, so a change to action.yml that this evaluator would get wrong fails the
test loudly instead of passing quietly.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass

Value = object  # None, bool, float, str or a mapping: what an expression evaluates to
STATUS_FUNCTIONS = ("success", "failure", "always", "cancelled")
TEMPLATE = re.compile(r"\$\{\{(.*?)\}\}", re.DOTALL)
TOKEN = re.compile(r"""\s*(?:
    (?P<string>'(?:[^']|'')*')
  | (?P<number>-?\d+(?:\.\d+)?)
  | (?P<name>[A-Za-z_][A-Za-z0-9_-]*)
  | (?P<op>==|!=|&&|\|\||[!().])
  | (?P<bad>\S)
)""", re.VERBOSE)


class UnsupportedExpression(ValueError):
    """An expression form this evaluator does not implement (the runner would, so the test must not guess)."""


@dataclass(frozen=True)
class Scope:
    """What an expression can read: the contexts by name, and the status functions' answers."""

    contexts: Mapping[str, Value]
    status: Callable[[str], bool]


def truthy(value: Value) -> bool:
    """GitHub's truthiness: null, false, 0, NaN and '' are false, everything else true."""
    if value is None or value is False or value == "":
        return False
    if isinstance(value, float):
        return value != 0 and not math.isnan(value)
    return True


def as_number(value: Value) -> float:
    """GitHub's number coercion, used when `==` compares values of different types."""
    if value is None:
        return 0.0
    if isinstance(value, bool):
        return 1.0 if value else 0.0
    if isinstance(value, float):
        return value
    if isinstance(value, str):
        try:
            return float(value.strip()) if value.strip() else 0.0
        except ValueError:
            return math.nan
    return math.nan


def equal(left: Value, right: Value) -> bool:
    """GitHub's `==`: strings case-insensitively, other types through numbers, objects by identity."""
    if isinstance(left, str) and isinstance(right, str):
        return left.casefold() == right.casefold()
    if type(left) is type(right) and not isinstance(left, Mapping):
        return left == right
    if isinstance(left, Mapping) or isinstance(right, Mapping):
        return left is right
    return as_number(left) == as_number(right)


def as_text(value: Value) -> str:
    """A value put into a string, as `${{ }}` inside a longer string does."""
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        return str(int(value)) if value.is_integer() else repr(value)
    if isinstance(value, str):
        return value
    raise UnsupportedExpression(f"an object in a string: {value!r}")


def member(value: Value, name: str) -> Value:
    """`value.name`: property names are case-insensitive; a missing one (or one of null) is null."""
    if not isinstance(value, Mapping):
        return None
    for key, item in value.items():
        if str(key).casefold() == name.casefold():
            return normalize(item)
    return None


def normalize(value: object) -> Value:
    """A Python value from a context (int from JSON, say) as the expression type it stands for."""
    if isinstance(value, bool) or value is None or isinstance(value, (str, float, Mapping)):
        return value
    if isinstance(value, int):
        return float(value)
    raise UnsupportedExpression(f"a context value of type {type(value).__name__}: {value!r}")


class Parser:
    """Recursive descent over the tokens of one expression; evaluates as it parses (`&&`, `||` short-circuit)."""

    def __init__(self, text: str, scope: Scope) -> None:
        self.text = text
        self.scope = scope
        self.tokens = self.tokenize(text)
        self.position = 0

    def tokenize(self, text: str) -> list[tuple[str, str]]:
        tokens = []
        for match in TOKEN.finditer(text):
            kind = match.lastgroup
            if kind is None:
                continue
            if kind == "bad":
                raise UnsupportedExpression(f"{match.group(kind)!r} in {text!r}")
            tokens.append((kind, match.group(kind)))
        if not tokens:
            raise UnsupportedExpression(f"an empty expression: {text!r}")
        return tokens

    def peek(self) -> tuple[str, str]:
        return self.tokens[self.position] if self.position < len(self.tokens) else ("end", "")

    def take(self, op: str | None = None) -> tuple[str, str]:
        token = self.peek()
        if op is not None and token != ("op", op):
            raise UnsupportedExpression(f"expected {op!r}, found {token[1] or 'the end'!r} in {self.text!r}")
        self.position += 1
        return token

    def evaluate(self) -> Value:
        value = self.disjunction()
        if self.peek()[0] != "end":
            raise UnsupportedExpression(f"{self.peek()[1]!r} after a complete expression in {self.text!r}")
        return value

    def disjunction(self) -> Value:
        value = self.conjunction()
        while self.peek() == ("op", "||"):
            self.take()
            right = self.conjunction()
            value = value if truthy(value) else right
        return value

    def conjunction(self) -> Value:
        value = self.comparison()
        while self.peek() == ("op", "&&"):
            self.take()
            right = self.comparison()
            value = right if truthy(value) else value
        return value

    def comparison(self) -> Value:
        value = self.unary()
        while self.peek() in (("op", "=="), ("op", "!=")):
            _, op = self.take()
            same = equal(value, self.unary())
            value = same if op == "==" else not same
        return value

    def unary(self) -> Value:
        if self.peek() == ("op", "!"):
            self.take()
            return not truthy(self.unary())
        return self.primary()

    def primary(self) -> Value:
        kind, text = self.take()
        if kind == "string":
            return text[1:-1].replace("''", "'")
        if kind == "number":
            return float(text)
        if (kind, text) == ("op", "("):
            value = self.disjunction()
            self.take(")")
            return value
        if kind != "name":
            raise UnsupportedExpression(f"{text or 'the end'!r} where a value belongs in {self.text!r}")
        if text in ("true", "false"):
            return text == "true"
        if text == "null":
            return None
        if self.peek() == ("op", "("):
            return self.call(text)
        if text not in self.scope.contexts:
            raise UnsupportedExpression(f"the context {text!r} in {self.text!r}")
        value = normalize(self.scope.contexts[text])
        while self.peek() == ("op", "."):
            self.take()
            kind, name = self.take()
            if kind != "name":
                raise UnsupportedExpression(f"{name!r} after '.' in {self.text!r}")
            value = member(value, name)
        return value

    def call(self, name: str) -> Value:
        if name not in STATUS_FUNCTIONS:
            raise UnsupportedExpression(f"the function {name}() in {self.text!r}")
        self.take("(")
        self.take(")")
        return self.scope.status(name)


def evaluate(expression: str, scope: Scope) -> Value:
    """The value of one expression (the text inside `${{ }}`, or a bare `if:`)."""
    return Parser(expression, scope).evaluate()


def render(text: str, scope: Scope) -> str:
    """A string with every `${{ expression }}` replaced by its value as text."""
    return TEMPLATE.sub(lambda match: as_text(evaluate(match.group(1), scope)), text)


def condition(text: str, scope: Scope) -> bool:
    """An `if:`: with or without `${{ }}`; without a status function it means `success() && (...)`."""
    stripped = text.strip()
    whole = TEMPLATE.fullmatch(stripped)
    expression = whole.group(1) if whole else stripped
    if "${{" in expression:
        raise UnsupportedExpression(f"an if: mixing text and expressions: {text!r}")
    if not any(re.search(rf"\b{name}\s*\(", expression) for name in STATUS_FUNCTIONS):
        expression = f"success() && ({expression})"
    return truthy(evaluate(expression, scope))
