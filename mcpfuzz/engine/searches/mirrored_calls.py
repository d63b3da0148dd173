"""The tool call the x-mcp-header cases send: a selected tool that mirrors an argument, with valid arguments."""

from __future__ import annotations

from mcpfuzz.engine.surface.targets import CallTarget
from mcpfuzz.jsonrpc.param_headers import header_text, param_headers, value_at
from mcpfuzz.jsonrpc.target_kind import TargetKind
from mcpfuzz.strategies.arguments.schema_prep import SchemaProblem
from mcpfuzz.strategies.http_cases import MirroredCall


def mirrors_any(targets: list[CallTarget]) -> bool:
    """Whether a selected tool's inputSchema mirrors an argument (x-mcp-header): a read of the declaration, no draw,
    so it needs no prepared target."""
    return any(target.kind is TargetKind.TOOL and param_headers(target.declaration.get("inputSchema"))
               for target in targets)


def mirrored_call(targets: list[CallTarget]) -> MirroredCall | None:
    """The first selected tool whose inputSchema mirrors an argument (x-mcp-header), with its simplest valid
    arguments that hold a value for it (plain first, then fully populated); None when no tool has one.

    Prepares the tool if it is not yet (CPU work: run it off the event loop).
    """
    for target in targets:
        headers = param_headers(target.declaration.get("inputSchema")) if target.kind is TargetKind.TOOL else ()
        if not headers:
            continue
        try:
            prepared = target.prepare()
        except SchemaProblem:
            continue
        for arguments in (*prepared.plain[:1], *prepared.populated[:1]):
            if not isinstance(arguments, dict) or not prepared.schema.is_valid(arguments):
                continue
            for header in headers:
                if header_text(value_at(arguments, header.path)) is not None:
                    return MirroredCall(target.name, arguments, header)
    return None
