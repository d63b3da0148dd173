"""Protocol rules: the handshake result, the JSON-RPC envelope, list items' required members, capabilities."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from mcpfuzz.jsonrpc.versions import KNOWN_VERSIONS, LEGACY_VERSIONS
from mcpfuzz.lint.declarations import PROMPTS, RESOURCES, TEMPLATES, TOOLS, listed, short
from mcpfuzz.lint.model import Category, Declared, Found, LintSeverity
from mcpfuzz.lint.registry import rule

P, ERROR, WARNING = Category.PROTOCOL, LintSeverity.ERROR, LintSeverity.WARNING
METHOD_NOT_FOUND = -32601
SERVER_INFO_META = "io.modelcontextprotocol/serverInfo"


def _is_text(value: Any) -> bool:
    return isinstance(value, str) and bool(value)


@rule("PROTO-001", "jsonrpc-envelope", P, ERROR, covered_by="response-schema")
def jsonrpc_envelope(declared: Declared) -> Iterator[Found]:
    """Every response is a JSON-RPC 2.0 envelope: `jsonrpc` is "2.0" and it holds exactly one of result and error."""
    for number, message in enumerate(declared.responses, 1):
        if not isinstance(message, dict):
            continue
        where = f"responses[{number}]"
        if message.get("jsonrpc") != "2.0":
            yield Found(where, f"a response has `jsonrpc` {short(message.get('jsonrpc', '(missing)'))}, not \"2.0\"",
                        'write `"jsonrpc": "2.0"` in every message (JSON-RPC 2.0 section 5)', value=message)
        if ("result" in message) == ("error" in message):
            has = "both `result` and `error`" if "result" in message else "neither `result` nor `error`"
            yield Found(where, f"a response has {has}", "a response carries exactly one of the two", value=message)


@rule("PROTO-002", "protocol-version", P, ERROR)
def protocol_version(declared: Declared) -> Iterator[Found]:
    """The handshake names MCP protocol versions the server really speaks (a revision date mcpfuzz knows)."""
    result = declared.handshake
    if not isinstance(result, dict):
        return
    if declared.handshake_method == "initialize":
        version = result.get("protocolVersion")
        where = "initialize.result.protocolVersion"
        if not isinstance(version, str):
            yield Found(where, f"initialize's result has no string `protocolVersion` ({short(version)})",
                        "answer initialize with the version the session will speak, e.g. \"2025-11-25\"",
                        covered_by="response-schema")
        elif version not in LEGACY_VERSIONS:
            yield Found(where, f"initialize answered protocolVersion {version!r}, which is no MCP revision that "
                        f"uses initialize ({', '.join(LEGACY_VERSIONS)})",
                        "answer with the requested version when supported, else the latest one the server supports")
        return
    supported = result.get("supportedVersions")
    where = "server/discover.result.supportedVersions"
    if not isinstance(supported, list) or not supported or not all(isinstance(v, str) for v in supported):
        yield Found(where, f"server/discover has no non-empty list of version strings ({short(supported)})",
                    "list every protocol version the server speaks in `supportedVersions`")
        return
    for version in supported:
        if version not in KNOWN_VERSIONS:
            yield Found(where, f"supportedVersions names {version!r}, which is no MCP revision",
                        f"name revisions by their dates: {', '.join(KNOWN_VERSIONS)}")
    if declared.version not in supported:
        yield Found(where, f"the server answered a {declared.version} request but does not list {declared.version} "
                    f"in supportedVersions ({short(supported)})", "list every version the server answers")
    if declared.announced is not None:
        version, reply = declared.announced
        result = reply.get("result") if isinstance(reply, dict) else None
        answered = result.get("protocolVersion") if isinstance(result, dict) else None
        if answered != version:
            what = f"answered with version {answered!r}" if isinstance(result, dict) else \
                f"refused: {short(reply)}" if reply is not None else "not answered"
            yield Found(where, f"supportedVersions lists {version}, but initialize asking for {version} was {what}",
                        f"serve {version} through initialize, or drop it from supportedVersions", value=reply)


@rule("PROTO-003", "server-info", P, ERROR, covered_by="response-schema")
def server_info(declared: Declared) -> Iterator[Found]:
    """initialize's result carries `serverInfo` with a `name` and a `version` (in 2026-07-28, `_meta` may)."""
    result = declared.handshake
    if not isinstance(result, dict):
        return
    if declared.handshake_method == "initialize":
        info, where = result.get("serverInfo"), "initialize.result.serverInfo"
        if not isinstance(info, dict):
            yield Found(where, "initialize's result has no `serverInfo` object (the schema requires it)",
                        'add `"serverInfo": {"name": ..., "version": ...}`', value=info)
            return
    else:  # modern: identity SHOULD be in `_meta`; absent is no problem, malformed is
        meta = result.get("_meta")
        info = meta.get(SERVER_INFO_META) if isinstance(meta, dict) else None
        where = f"server/discover.result._meta.{SERVER_INFO_META}"
        if info is None:
            return
        if not isinstance(info, dict):
            yield Found(where, "the server's identity is not an object", "give `name` and `version` in an object",
                        severity=WARNING, value=info)
            return
    missing = [key for key in ("name", "version") if not _is_text(info.get(key))]
    if missing:
        yield Found(where, f"serverInfo has no {' or '.join(f'`{m}`' for m in missing)} string", "name the server "
                    "and its version: clients show them and key caches on them", severity=WARNING, value=info)


@rule("PROTO-004", "capabilities", P, ERROR)
def capabilities(declared: Declared) -> Iterator[Found]:
    """The handshake result has a `capabilities` object, and each declared capability is an object."""
    if not isinstance(declared.handshake, dict):
        return
    caps, where = declared.capabilities, f"{declared.handshake_method}.result.capabilities"
    if not isinstance(caps, dict):
        yield Found(where, f"the handshake result has no `capabilities` object ({short(caps)})",
                    'declare what the server offers, e.g. `"capabilities": {"tools": {}}` (or `{}` for nothing)',
                    covered_by="response-schema")
        return
    for name, value in caps.items():
        if not isinstance(value, dict):
            yield Found(f"{where}.{name}", f"capability `{name}` is {short(value)}, not an object",
                        f'declare it as an object, e.g. `"{name}": {{}}`', value=value)


@rule("PROTO-005", "tool-definition", P, ERROR, covered_by="response-schema")
def tool_definition(declared: Declared) -> Iterator[Found]:
    """Every tool has a non-empty string `name` and an `inputSchema` object."""
    for item in listed(declared, TOOLS):
        tool = item.value
        if not isinstance(tool, dict):
            yield Found(item.location, f"a tools/list item is {short(tool)}, not an object", "list tool objects")
            continue
        if item.name is None:
            yield Found(f"{item.location}.name", f"a tool has no non-empty string name ({short(tool.get('name'))})",
                        "give every tool a unique name", value=tool)
        if not isinstance(tool.get("inputSchema"), dict):
            yield Found(f"{item.location}.inputSchema", "the tool has no inputSchema object "
                        f"({short(tool.get('inputSchema', '(missing)'))})", 'every tool needs one; a tool without '
                        'arguments declares `{"type": "object", "additionalProperties": false}`', item.target)


@rule("PROTO-006", "resource-definition", P, ERROR)
def resource_definition(declared: Declared) -> Iterator[Found]:
    """Every resource has a string `uri` and `name`; every template a string `uriTemplate` and `name`."""
    for method, key in ((RESOURCES, "uri"), (TEMPLATES, "uriTemplate")):
        for item in listed(declared, method):
            value = item.value
            if not isinstance(value, dict):
                yield Found(item.location, f"a {method} item is {short(value)}, not an object", "list objects")
                continue
            for member in (key, "name"):
                if not _is_text(value.get(member)):
                    yield Found(f"{item.location}.{member}", f"`{member}` is {short(value.get(member, '(missing)'))},"
                                " not a non-empty string", f"give every entry a `{member}`", item.target, value=value)
            if "mimeType" in value and not isinstance(value["mimeType"], str):
                yield Found(f"{item.location}.mimeType", "`mimeType` is not a string", "write a MIME type string",
                            item.target)


@rule("PROTO-007", "prompt-definition", P, ERROR)
def prompt_definition(declared: Declared) -> Iterator[Found]:
    """Every prompt has a string `name`; its `arguments` are objects with a string `name`."""
    for item in listed(declared, PROMPTS):
        prompt = item.value
        if not isinstance(prompt, dict) or item.name is None:
            yield Found(f"{item.location}.name", f"a prompt has no non-empty string name ({short(prompt)})",
                        "give every prompt a unique name", value=prompt)
            continue
        arguments = prompt.get("arguments", [])
        if not isinstance(arguments, list):
            yield Found(f"{item.location}.arguments", "`arguments` is not an array", "list the prompt's arguments",
                        item.target)
            continue
        for index, argument in enumerate(arguments):
            if not isinstance(argument, dict) or not _is_text(argument.get("name")):
                yield Found(f"{item.location}.arguments[{index}]", f"an argument has no string name "
                            f"({short(argument)})", "give every argument a name", item.target)
            elif "required" in argument and not isinstance(argument["required"], bool):
                yield Found(f"{item.location}.arguments[{index}].required", "`required` is not a boolean",
                            "write true or false", item.target)


@rule("PROTO-008", "capability-consistency", P, ERROR)
def capability_consistency(declared: Declared) -> Iterator[Found]:
    """A declared capability is served (its list method is not -32601), and a served one is declared."""
    for outcome in declared.lists.values():
        where = f"capabilities.{outcome.capability}"
        if outcome.declared and outcome.error_code == METHOD_NOT_FOUND:
            # resources/templates/list is optional in practice: a server with only static resources may lack it.
            severity = WARNING if outcome.method == TEMPLATES else None
            yield Found(where, f"`{outcome.capability}` is declared but {outcome.method} answers -32601 "
                        "(method not found)", f"serve {outcome.method}, or stop declaring `{outcome.capability}`",
                        severity=severity, covered_by="declared-served")
        elif not outcome.declared and outcome.items:  # an empty list served undeclared hides nothing from clients
            yield Found(where, f"{outcome.method} is served ({len(outcome.items)} items) but `{outcome.capability}`"
                        " is not declared, so clients never ask for them", f"declare `\"{outcome.capability}\": {{}}`"
                        " in the capabilities", severity=WARNING)


@rule("PROTO-011", "unknown-response-id", P, ERROR, covered_by="id-preserved")
def unknown_response_id(declared: Declared) -> Iterator[Found]:
    """Every response answers a request that was sent: no response carries an id never used."""
    for rid in declared.unknown_ids:
        yield Found("responses", f"a response carries the id {short(rid)}, which no request had",
                    "answer each request once, with its own id (JSON-RPC 2.0 section 5)", value=rid)


@rule("PROTO-012", "http-session", P, ERROR)
def http_session(declared: Declared) -> Iterator[Found]:
    """HTTP: a session id holds only visible ASCII (0x21-0x7E); a 2026-07-28 server hands out none."""
    for session_id in declared.session_ids:
        if not session_id or any(not 0x21 <= ord(c) <= 0x7E for c in session_id):
            yield Found("Mcp-Session-Id", f"the session id {session_id!r} has characters outside visible ASCII",
                        "use a UUID or a token of characters 0x21-0x7E (streamable HTTP, session management)")
        if declared.era == "modern":
            yield Found("Mcp-Session-Id", "a 2026-07-28 (stateless) exchange was given a session id",
                        "drop Mcp-Session-Id from modern-era responses: the era has no sessions", severity=WARNING)
            break
