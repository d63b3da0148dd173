"""Stable finding codes: one row per oracle, the code a team puts in a ticket, an allow-list or a chat.

A code never changes once given, and is never given again. Adding an oracle is adding its row to `RULES`;
`tests/test_codes.py` fails for an oracle id without one, and for a code that is not unique or not documented in
docs/codes.md. `mcpfuzz explain CODE|ORACLE` prints a row with the oracle's own description.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Rule:
    """An oracle's code, what the rule says (MUST, SHOULD ... or a severity model), where it comes from, why."""

    oracle: str
    code: str
    level: str
    source: str
    why: str


# One row per oracle id (mcpfuzz/jsonrpc/oracle_ids.py): oracle, code, level, source, why it matters.
RULES = (
    Rule("parse-error", "MF-RPC-001", "MUST", "JSON-RPC 2.0 section 5.1: invalid JSON is answered -32700 with id null", "a client that sent a broken line waits for an answer that never comes"),  # noqa: E501
    Rule("invalid-request", "MF-RPC-002", "MUST", "JSON-RPC 2.0 sections 4 and 5.1: an invalid Request object is answered -32600", "a client's malformed request hangs instead of failing, and its id is never freed"),  # noqa: E501
    Rule("method-not-found", "MF-RPC-003", "MUST", "JSON-RPC 2.0 section 5.1: an unknown method is answered -32601", "clients probe optional methods and need -32601 to fall back"),  # noqa: E501
    Rule("invalid-params", "MF-RPC-004", "MUST", "JSON-RPC 2.0 section 5.1 (-32602); MCP server/tools, Error Handling (an isError result, SEP-1303)", "a model's wrong arguments must come back as an error it can read and correct"),  # noqa: E501
    Rule("http-status", "MF-HTTP-001", "MUST", "MCP basic/transports, Streamable HTTP: 202 for notifications, 404 for unknown sessions, 400 for bad headers", "HTTP clients and proxies act on the status before they read the body"),  # noqa: E501
    Rule("session-leak", "MF-HTTP-002", "SHOULD", "MCP basic/transports, Session Management; basic/security_best_practices", "sessions handed out on refused requests pile up in memory and can be hijacked"),  # noqa: E501
    Rule("origin-check", "MF-HTTP-003", "MUST", "MCP basic/transports, Streamable HTTP, Security: validate Origin, refuse with 403", "without it a web page can drive a local server through DNS rebinding"),  # noqa: E501
    Rule("id-preserved", "MF-ID-001", "MUST", "JSON-RPC 2.0 section 5: a response's id is the request's id, same value and type", "a client matches answers to requests by id; a changed id leaves its request hanging"),  # noqa: E501
    Rule("single-response", "MF-ID-002", "MUST", "JSON-RPC 2.0 section 5: one Response object per Request", "a second answer may be matched to a later request that reuses the id"),  # noqa: E501
    Rule("no-internal-leak", "MF-SEC-001", "SHOULD", "MCP basic/security_best_practices; server/tools, Security Considerations", "stack traces and source paths tell an attacker the server's code and layout"),  # noqa: E501
    Rule("memory-growth", "MF-RES-001", "severity model", "a server's memory must not grow with the number of requests it serves", "a leak per request ends in an out-of-memory kill under normal load"),  # noqa: E501
    Rule("notification-silent", "MF-RPC-005", "MUST NOT", "JSON-RPC 2.0 section 4.1: the server MUST NOT reply to a notification", "an unexpected reply confuses clients that match every incoming message"),  # noqa: E501
    Rule("no-crash", "MF-RES-002", "severity model", "JSON-RPC 2.0 section 5: every request is answered; one input must not end the server", "a crash drops every session and call in flight, for every user"),  # noqa: E501
    Rule("no-hang", "MF-RES-003", "MUST", "JSON-RPC 2.0 section 5: every request gets a response", "a request that is never answered blocks the client and the model behind it"),  # noqa: E501
    Rule("stdout-clean", "MF-STDIO-001", "MUST NOT", "MCP basic/transports, stdio: nothing but valid MCP messages on stdout", "a stray line on stdout breaks the client's parser and often the session"),  # noqa: E501
    Rule("response-schema", "MF-SCH-001", "MUST", "JSON-RPC 2.0 section 5; the MCP schema of the negotiated version (schema.ts)", "typed SDK clients reject a result that breaks its method's shape"),  # noqa: E501
    Rule("valid-input-accepted", "MF-SCH-002", "MUST", "MCP server/tools: inputSchema declares the arguments a tool accepts", "a model that follows the schema is refused and cannot use the tool"),  # noqa: E501
    Rule("output-schema", "MF-SCH-003", "MUST", "MCP server/tools, Output Schema: structured results MUST conform to outputSchema", "clients validate structuredContent against the schema and drop what fails"),  # noqa: E501
    Rule("version-negotiation", "MF-LIFE-001", "MUST", "MCP basic/lifecycle, Version Negotiation; 2026-07-28 basic/versioning (-32022)", "a client must learn which version to speak, or it cannot connect at all"),  # noqa: E501
    Rule("resource-not-found", "MF-RSRC-001", "SHOULD (to 2025-11-25), MUST (2026-07-28)", "MCP server/resources, Error Handling: -32002, then -32602", "clients tell a missing resource from a broken server by its code"),  # noqa: E501
    Rule("declared-served", "MF-LIFE-002", "MUST", "MCP basic/lifecycle, Capability Negotiation; basic/utilities/pagination", "a declared capability that is refused, or a cursor that loops, hangs or breaks a client's listing"),  # noqa: E501
    Rule("cancel-respected", "MF-UTIL-001", "SHOULD NOT", "MCP basic/utilities/cancellation: a cancelled request SHOULD NOT be answered", "work the user cancelled keeps running and its answer arrives unwanted"),  # noqa: E501
    Rule("concurrency", "MF-RES-004", "MUST", "JSON-RPC 2.0 section 5 (each response to its own request); MCP basic/transports", "requests in flight together must not swap or lose their answers"),  # noqa: E501
    Rule("lint", "MF-LINT-001", "MUST, SHOULD", "the rules of `mcpfuzz lint` (docs/lint.md): the MCP schema and server pages", "what a server declares is what clients and models rely on before any call"),  # noqa: E501
    Rule("sandbox-escape", "MF-SEC-002", "SHOULD", "MCP client/roots and basic/security_best_practices: stay inside the folders given", "a path escape reads files the user never shared with the server"),  # noqa: E501
    Rule("command-injection", "MF-SEC-003", "MUST", "MCP server/tools, Security Considerations: servers MUST validate all tool inputs", "text from a model (or a prompt injection) runs as a shell command"),  # noqa: E501
    Rule("network-egress", "MF-SEC-004", "SHOULD", "MCP server/tools, ToolAnnotations: openWorldHint; basic/security_best_practices (SSRF)", "a tool that claims a closed world but connects out can be aimed at internal addresses"),  # noqa: E501
    Rule("auth-required", "MF-AUTH-001", "MUST", "MCP basic/authorization, Token Handling and Access Token Usage; RFC 6750, RFC 8707", "a server that serves a missing, forged or foreign token exposes its tools to anyone who reaches it"),  # noqa: E501
    Rule("auth-challenge", "MF-AUTH-002", "MUST", "MCP basic/authorization, Error Handling and Authorization Server Location; RFC 9728, RFC 8414", "without a 401 and its challenge a client cannot find where to authorize"),  # noqa: E501
    Rule("session-isolation", "MF-HTTP-004", "MUST", "JSON-RPC 2.0 section 5 and MCP basic (ids are unique per session only, chosen by each client); basic/transports, Streamable HTTP (a request's answer and related messages on its own stream); 2026-07-28 RequestMetaObject io.modelcontextprotocol/logLevel", "an answer that reaches another client hands one user's data to another (GHSA-345p-7cg4-v4c7)"),  # noqa: E501
    Rule("client-requests", "MF-CLI-001", "MUST", "JSON-RPC 2.0 section 5; MCP client/elicitation, client/sampling, client/roots", "a call whose server asked the client for input must still end, whatever the answer"),  # noqa: E501
    Rule("input-required", "MF-MRTR-001", "MUST", "MCP 2026-07-28 basic/patterns/mrtr: retries with inputResponses and requestState", "a multi-round-trip call that drops or trusts a tampered retry breaks or misleads the client"),  # noqa: E501
    Rule("missing-capability", "MF-MRTR-002", "MUST NOT", "MCP 2026-07-28 basic/patterns/mrtr; client/* pages: ask only for declared capabilities", "a client cannot answer a request it never declared; the call stalls"),  # noqa: E501
    Rule("slow-input", "MF-RES-005", "severity model", "one small input must not stall a server for seconds", "an input that stalls the server is a denial of service any caller can send"),  # noqa: E501
    Rule("read-only-truthful", "MF-ANN-001", "SHOULD", "MCP server/tools, ToolAnnotations: readOnlyHint", "clients call read-only tools without asking the user; a hidden write is unapproved"),  # noqa: E501
    Rule("idempotent-retry", "MF-ANN-002", "SHOULD", "MCP server/tools, ToolAnnotations: idempotentHint", "clients retry idempotent calls after a lost answer; a second effect is a bug"),  # noqa: E501
    Rule("use-after-delete", "MF-ANN-003", "SHOULD", "MCP server/tools, ToolAnnotations: destructiveHint", "a delete that reports success but keeps the item misleads the user"),  # noqa: E501
    Rule("task-ids", "MF-TASK-001", "MUST", "tasks extension (SEP-2663), Error Handling; 2025-11-25 basic/utilities/tasks", "a task id must reach its own task only, or one client reads another's results"),  # noqa: E501
    Rule("list-identity", "MF-LIST-001", "MUST NOT", "MCP 2026-07-28 server/tools, server/prompts, server/resources: lists MUST NOT vary per connection", "clients cache lists; one that differs per connection breaks the cache"),  # noqa: E501
)

BY_ORACLE = {rule.oracle: rule for rule in RULES}
BY_CODE = {rule.code: rule for rule in RULES}


def code_of(oracle: str) -> str:
    """The oracle's code, or "" for an id without a row (reports then show the id alone)."""
    rule = BY_ORACLE.get(oracle)
    return rule.code if rule else ""


def find_rule(name: str) -> Rule | None:
    """The row for a code (any letter case) or an oracle id."""
    return BY_CODE.get(name.strip().upper()) or BY_ORACLE.get(name.strip().lower())


INTRO = """# Finding codes

Every oracle has a stable code, shown with its id: on the console's finding line (`1. CRITICAL no-crash on
tool/search: ... [MF-RES-002]`, at the end so the line keeps its shape for scripts), in the JSON report (`code`
beside `oracle` on each finding), in SARIF (each rule's `properties.code` and help text, and each result's
properties; the rule id stays the oracle id, so code-scanning alerts keep their history) and in JUnit (a `code:`
line in each failure). A code is never changed nor given
again: quote it in a ticket, an allow-list or a chat. `mcpfuzz explain CODE` (or `mcpfuzz explain ORACLE`) prints
the rule, its source, why it matters, how each known SDK behaves and where the fix goes, and how to silence it
(`--exclude-oracles ID` for a run, `--baseline FILE` for findings you accept). `mcpfuzz oracles` lists ids and
codes.

The table lives in `mcpfuzz/report/codes.py`, one row per oracle: adding an oracle is adding its row there and
regenerating this page with `python -m mcpfuzz.report.codes > docs/codes.md` (`tests/test_codes.py` checks that
every oracle id has a code, every code is unique, and this page is current).
"""
OUTRO = """
Snapshot changes (`mcpfuzz snapshot --check`) have codes of their own, `MF-SNAP-NNN`, listed in
[snapshot.md](snapshot.md); `mcpfuzz explain MF-SNAP-004` explains one too.
"""


def codes_markdown() -> str:
    """docs/codes.md: the introduction, then a table row per code."""
    rows = [f"| `{rule.code}` | `{rule.oracle}` | {rule.level} | {rule.source} |" for rule in RULES]
    return "\n".join([INTRO, "| code | oracle | level | source |", "| --- | --- | --- | --- |", *rows, OUTRO])


if __name__ == "__main__":
    print(codes_markdown(), end="")
