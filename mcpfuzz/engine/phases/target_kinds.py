"""The built-in kinds of call target, one registration each (a new kind adds its own here)."""

from __future__ import annotations

from mcpfuzz.engine.phases.targets import CallTarget, Safety, TargetType, register_target_type
from mcpfuzz.jsonrpc.frame import Case
from mcpfuzz.jsonrpc.target_kind import TargetKind
from mcpfuzz.strategies.arguments.call import ArgumentCall
from mcpfuzz.strategies.arguments.method_calls import method_call_case
from mcpfuzz.strategies.arguments.tool_calls import tool_call_case
from mcpfuzz.strategies.messages import FrameBuilder


def tool_safety(tool: dict) -> Safety:
    """MCP server/tools annotations are hints; only an explicit `true` says a call may do harm."""
    annotations = tool.get("annotations")
    if not isinstance(annotations, dict):
        return Safety.UNKNOWN
    if annotations.get("destructiveHint") is True:
        return Safety.DESTRUCTIVE
    if annotations.get("openWorldHint") is True:
        return Safety.OPEN_WORLD
    if annotations.get("readOnlyHint") is True:
        return Safety.READ_ONLY
    return Safety.UNKNOWN


def _tool_case(builder: FrameBuilder, target: CallTarget, call: ArgumentCall, family: str,
               history: tuple[bytes, ...]) -> Case:
    return tool_call_case(builder, target.declaration, call, family=family, history=history)


TOOLS = register_target_type(TargetType(
    kind=TargetKind.TOOL, method="tools/call", capability="tools", list_method="tools/list", list_key="tools",
    result_oracle="output-schema", schema=lambda tool: tool.get("inputSchema"), safety=tool_safety,
    make_case=_tool_case, option="--include-tool"))


def method_safety(method: dict) -> Safety:
    """OpenRPC has no standard safety hint; `x-readonly` / `x-safe` (read into `readOnly`) mark a safe one."""
    return Safety.READ_ONLY if method.get("readOnly") is True else Safety.UNKNOWN


def _method_case(builder: FrameBuilder, target: CallTarget, call: ArgumentCall, family: str,
                 history: tuple[bytes, ...]) -> Case:
    return method_call_case(builder, target.declaration, call, family=family, history=history)


# A plain JSON-RPC method from an OpenRPC document (`run --jsonrpc --openrpc FILE`): no capability, never listed
# by the MCP probe (its capability is the empty string, which no server declares); the document declares it.
METHODS = register_target_type(TargetType(
    kind=TargetKind.METHOD, method="", capability="", list_method="rpc.discover", list_key="methods",
    result_oracle="response-schema", schema=lambda method: method.get("paramsSchema"), safety=method_safety,
    make_case=_method_case, option="--include-target"))
