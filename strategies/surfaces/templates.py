"""URI templates (RFC 6570, expanded by the `uritemplate` library): their variables and the values drawn for them."""

from __future__ import annotations

from typing import Any

from hypothesis import strategies as st
from mcpfuzz.strategies.arguments.call import POSITIVE, ArgumentCall
from uritemplate import URITemplate

# Values that break servers which build paths, keys or queries from a URI's parts.
EDGE_VALUES: tuple[tuple[str, str], ...] = (
    ("empty", ""),
    ("a space", "a b"),
    ("a parent segment", ".."),
    ("a path that climbs", "../../../../etc/passwd"),
    ("a percent-encoded value", "%2e%2e%2f%00"),
    ("a lone percent sign", "%"),
    ("reserved characters", ":/?#[]@!$&'()*+,;="),
    ("non-ASCII text", "na\u00efve \u65e5\u672c\u8a9e"),
    ("an emoji", "\U0001f600"),
    ("right-to-left override", "\u202eabc"),
    ("a NUL character", "a\x00b"),
    ("a very long value", "x" * 5000),
)
PLAIN_VALUE = "mcpfuzz"
# Values put into the URI as they are, not percent-encoded as RFC 6570 expands them: what a client that builds
# URIs by pasting text sends, and what reaches a server's path handling undecoded.
RAW_VALUES: tuple[tuple[str, str], ...] = (
    ("a bare slash", "/"),
    ("an encoded parent segment", "%2e%2e"),
    ("a parent segment and a slash", "../"),
    ("an encoded climb", "%2e%2e%2f%2e%2e%2fetc%2fpasswd"),
)
PLACEHOLDER = "mcpfuzzrawvalue"  # unreserved characters: expanded as they are, then replaced by the raw value


def template_variables(template: str) -> list[str]:
    """The variable names of a URI template, in order (empty when it cannot be parsed)."""
    try:
        return list(dict.fromkeys(URITemplate(template).variable_names))
    except (ValueError, TypeError, AttributeError):
        return []


def variables_schema(template: dict) -> dict:
    """The JSON Schema values are drawn from: every variable a string (RFC 6570 expands strings)."""
    names = template_variables(str(template.get("uriTemplate", "")))
    return {"type": "object", "properties": {name: {"type": "string"} for name in names},
            "required": names, "additionalProperties": False}


def expand(template: str, values: Any) -> str:
    """The URI for these values (a value that is no string is expanded as its text)."""
    variables: dict[str, Any] = {str(k): v if isinstance(v, str) else str(v) for k, v in values.items()} \
        if isinstance(values, dict) else {}
    return str(URITemplate(template).expand(variables))


def edge_calls(template: dict) -> list[ArgumentCall]:
    """Every variable set to a plain value, then each variable alone set to each edge value."""
    names = template_variables(str(template.get("uriTemplate", "")))
    plain = dict.fromkeys(names, PLAIN_VALUE)
    calls = [ArgumentCall(POSITIVE, plain, "every variable a plain value")]
    for name in names:
        for label, value in EDGE_VALUES:
            calls.append(ArgumentCall(POSITIVE, {**plain, name: value}, f"{label} as `{name}`"))
    return calls


def drawn_values(template: dict) -> st.SearchStrategy[ArgumentCall]:
    """Values for every variable: drawn text or an edge value, each variable independently."""
    names = template_variables(str(template.get("uriTemplate", "")))
    value = st.one_of(st.text(max_size=40), st.sampled_from([edge for _, edge in EDGE_VALUES]))
    return st.fixed_dictionaries({name: value for name in names}).map(
        lambda values: ArgumentCall(POSITIVE, values, "drawn values"))


def raw_uris(template: str) -> list[tuple[str, str]]:
    """(description, URI) for each variable set to each raw value, the others plain, the value not encoded."""
    names = template_variables(template)
    uris = []
    for name in names:
        values = {**dict.fromkeys(names, PLAIN_VALUE), name: PLACEHOLDER}
        expanded = expand(template, values)
        if PLACEHOLDER not in expanded:
            continue
        for label, value in RAW_VALUES:
            uris.append((f"{label} as `{name}`, not encoded", expanded.replace(PLACEHOLDER, value)))
    return uris
