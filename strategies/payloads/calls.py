"""Payload calls of one schema: each family's values put at each property it fits, in a valid base."""

from __future__ import annotations

from typing import Any

from mcpfuzz.strategies.arguments.call import ArgumentCall
from mcpfuzz.strategies.arguments.edges import edge_call
from mcpfuzz.strategies.arguments.sites import Site
from mcpfuzz.strategies.payloads.canaries import CanaryLayout
from mcpfuzz.strategies.payloads.classifier import families_of, is_string_site
from mcpfuzz.strategies.payloads.commands import command_payloads, shell_payloads
from mcpfuzz.strategies.payloads.expressions import expression_payloads
from mcpfuzz.strategies.payloads.family import Family, Payload
from mcpfuzz.strategies.payloads.paths import path_payloads
from mcpfuzz.strategies.payloads.regexes import REGEX_PAYLOADS
from mcpfuzz.strategies.payloads.urls import url_payloads


def site_payloads(site: Site, layout: CanaryLayout | None, target: str) -> list[tuple[Family, Payload]]:
    """The payloads for one property: its families' values; with a canary layout, every free string also gets the
    shell forms (any string may end up in a command line)."""
    where = f"{target}{site.pointer}"
    found: list[tuple[Family, Payload]] = []
    for family in families_of(site.name, site.schema):
        if family is Family.PATH:
            found += [(family, p) for p in path_payloads(layout)]
        elif family is Family.EXPRESSION:
            found += [(family, p) for p in expression_payloads(layout, where)]
        elif family is Family.COMMAND:
            found += [(family, p) for p in command_payloads(layout, where)]
        elif family is Family.REGEX:
            found += [(family, p) for p in REGEX_PAYLOADS]
        else:
            found += [(family, p) for p in url_payloads(layout)]
    if layout is not None and Family.COMMAND not in families_of(site.name, site.schema) and is_string_site(site.schema):
        found += [(Family.COMMAND, p) for p in shell_payloads(layout, where)]
    return found


def payload_description(family: Family, site: Site, label: str) -> str:
    """What a payload call says it does, e.g. `path payload: a parent escape at /properties/path`."""
    return f"{family.value} payload: {label} at {site.pointer}"


def payload_calls(schema: Any, bases: list[dict], layout: CanaryLayout | None, target: str) -> list[ArgumentCall]:
    """Every payload at every property it fits, each placed in the first base that takes it (none when the schema
    refuses the value there: a maxLength, a pattern)."""
    calls = []
    for site in schema.sites:
        for family, (label, value) in site_payloads(site, layout, target):
            for base in bases:
                call = edge_call(schema, base, site, label, value)
                if call is not None:
                    calls.append(ArgumentCall(call.kind, call.arguments, payload_description(family, site, label)))
                    break
    return calls
