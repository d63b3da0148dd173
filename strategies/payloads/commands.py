"""Command and query payloads: quotes, shell metacharacters and SQL comment tokens; with a canary folder, shell
forms whose only effect is to create a file there."""

from __future__ import annotations

from mcpfuzz.strategies.payloads.canaries import CanaryLayout, hit_token
from mcpfuzz.strategies.payloads.family import Payload

INERT: tuple[Payload, ...] = (
    ("a single quote", "'"),
    ("a double quote", '"'),
    ("an SQL tautology", "' OR '1'='1"),
    ("an SQL comment", "1; --"),
    ("an SQL block comment", "1 /* x */"),
    ("a statement separator", "a; b"),
    ("a dangling backslash", "a\\"),
    ("an unclosed substitution", "$("),
    ("a field separator variable", "a${IFS}b"),
    ("format directives", "%s%s%s%n"),
)
# Each shell form wraps `touch FILE` so that any shell that runs the argument (bare, or in either kind of quotes)
# creates the file; its label goes into the finding.
SHELL_FORMS: tuple[tuple[str, str], ...] = (
    ("a `;` command", "x; touch {file}"),
    ("a `$(...)` substitution", "$(touch {file})"),
    ("a backtick substitution", "`touch {file}`"),
    ("a pipe", "x | touch {file}"),
    ("an `&&` command", "x && touch {file}"),
    ("a line break", "x\ntouch {file}"),
    ("a single-quote breakout", "x'; touch {file}; '"),
    ("a double-quote breakout", 'x"; touch {file}; "'),
)


def shell_payloads(layout: CanaryLayout, site: str) -> tuple[Payload, ...]:
    """The shell forms, each naming a file of its own (its token) in the layout's canary folder."""
    return tuple((label, form.format(file=layout.hit_path(hit_token(layout.nonce, site, label))))
                 for label, form in SHELL_FORMS)


def command_payloads(layout: CanaryLayout | None, site: str) -> tuple[Payload, ...]:
    """The inert ones, and with a canary layout the shell forms too."""
    return INERT if layout is None else INERT + shell_payloads(layout, site)
