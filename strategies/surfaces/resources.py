"""`resources/read` frames: a listed URI, a URI expanded from a template, and a URI that exists nowhere."""

from __future__ import annotations

import re
from collections.abc import Iterable

from mcpfuzz.strategies.messages import FrameBuilder

from mcpfuzz.jsonrpc import expectation as ex
from mcpfuzz.jsonrpc.expectation import Expectation
from mcpfuzz.jsonrpc.frame import Case
from mcpfuzz.jsonrpc.oracle_ids import OracleId
from mcpfuzz.jsonrpc.parts.resource import ResourceCheck
from mcpfuzz.jsonrpc.versions import Era

READ = "resources/read"
RESOURCE_FAMILY = "resource"
TEMPLATE_FAMILY = "template"
MISSING_SUFFIX = "-mcpfuzz-missing"


def not_found_code(era: Era) -> int:
    """The error code a server of `era` answers a read of a URI that does not exist with."""
    return ex.INVALID_PARAMS if era is Era.MODERN else ex.LEGACY_NOT_FOUND


def listed_read_case(builder: FrameBuilder, uri: str, *, family: str = RESOURCE_FAMILY,
                     history: tuple[bytes, ...] = ()) -> Case:
    """Read a URI resources/list named: a result whose contents carry that URI."""
    rid = builder.fresh_id()
    expect = Expectation(judge=OracleId.DECLARED_SERVED, id=rid, result_ok=True, error_ok=True, well_formed=True,
                         method=READ, note="listed by resources/list", parts=(ResourceCheck(uri, listed=True),))
    return Case(uri, family, f"read the listed resource {uri}", builder.frame(READ, {"uri": uri}, rid), expect,
                history=history, patient=True)


def template_read_case(builder: FrameBuilder, template: str, uri: str, description: str, *,
                       family: str = TEMPLATE_FAMILY, history: tuple[bytes, ...] = ()) -> Case:
    """Read a URI expanded from a template: any result or error (it may not exist), never a crash or silence."""
    rid = builder.fresh_id()
    expect = Expectation(judge=OracleId.NO_HANG, id=rid, result_ok=True, error_ok=True, well_formed=True,
                         method=READ, parts=(ResourceCheck(uri),))
    return Case(template, family, f"{uri[:120]} ({description})", builder.frame(READ, {"uri": uri}, rid), expect,
                history=history, patient=True)


def missing_read_case(builder: FrameBuilder, uri: str) -> Case:
    """Read a URI that exists nowhere: the era's resource-not-found error."""
    rid = builder.fresh_id()
    code = not_found_code(builder.era)
    expect = Expectation(judge=OracleId.RESOURCE_NOT_FOUND, id=rid, codes=frozenset({code}), result_ok=True,
                         error_ok=True, well_formed=True, method=READ, note="the resource does not exist",
                         parts=(ResourceCheck(uri, missing=True),))
    return Case(uri, RESOURCE_FAMILY, f"read {uri}, which does not exist", builder.frame(READ, {"uri": uri}, rid),
                expect, patient=True)


def template_pattern(template: str) -> re.Pattern[str]:
    """A pattern matching every URI a template can expand to (each expression matches anything)."""
    parts = re.split(r"\{[^}]*\}", template)
    return re.compile(".*".join(re.escape(part) for part in parts), re.DOTALL)


def missing_uris(listed: Iterable[str], templates: Iterable[str], limit: int = 2) -> list[str]:
    """URIs next to listed ones that no listing names and no template could produce (one per scheme)."""
    listed = list(listed)
    patterns = [template_pattern(template) for template in templates]
    found: dict[str, str] = {}
    for uri in listed:
        scheme = uri.partition(":")[0]
        candidate = uri + MISSING_SUFFIX
        if scheme in found or candidate in listed or any(p.fullmatch(candidate) for p in patterns):
            continue
        found[scheme] = candidate
        if len(found) == limit:
            break
    return list(found.values())


LINKED_FAMILY = "linked"


def linked_read_case(builder: FrameBuilder, uri: str, *, history: tuple[bytes, ...] = ()) -> Case:
    """Read a URI an earlier result linked to (a `resource_link`): any result or error, never a crash or silence.

    The spec does not promise a linked resource stays readable (it need not be listed), so only robustness is judged.
    """
    rid = builder.fresh_id()
    expect = Expectation(judge=OracleId.NO_HANG, id=rid, result_ok=True, error_ok=True, well_formed=True,
                         method=READ, note="linked by an earlier result", parts=(ResourceCheck(uri),))
    return Case(uri, LINKED_FAMILY, f"read {uri[:120]}, which an earlier result linked to",
                builder.frame(READ, {"uri": uri}, rid), expect, history=history, patient=True, slow_ok=True)
