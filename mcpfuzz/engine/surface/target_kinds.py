"""The built-in kinds of call target, one registration each (a new kind adds its own here)."""

from __future__ import annotations

from dataclasses import replace

from mcpfuzz.engine.surface.targets import CallTarget, Safety, TargetType, register_target_type
from mcpfuzz.jsonrpc.frame import Case
from mcpfuzz.jsonrpc.target_kind import TargetKind
from mcpfuzz.strategies.arguments.call import POSITIVE, ArgumentCall
from mcpfuzz.strategies.arguments.method_calls import method_call_case
from mcpfuzz.strategies.arguments.tool_calls import tool_call_case
from mcpfuzz.strategies.jsonrpc_depth import depth_cases
from mcpfuzz.strategies.messages import FrameBuilder
from mcpfuzz.strategies.surfaces.completions import (
    VALUE_SCHEMA,
    completion_case,
    completion_declarations,
    unknown_ref_cases,
)
from mcpfuzz.strategies.surfaces.prompts import (
    arguments_schema,
    prompt_get_case,
    unknown_prompt_case,
    wrong_type_cases,
)
from mcpfuzz.strategies.surfaces.resources import listed_read_case, missing_read_case, missing_uris, template_read_case
from mcpfuzz.strategies.surfaces.templates import drawn_values, expand, raw_uris, variables_schema
from mcpfuzz.strategies.surfaces.templates import edge_calls as template_edge_calls


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


# -- resources, templates, prompts, completions (MCP server/resources, server/prompts, utilities/completion) --

NO_PARAMS = {"type": "object", "properties": {}, "additionalProperties": False}


def _reads(_: dict) -> Safety:
    return Safety.READ_ONLY  # reading, getting a prompt and completing change nothing on the server


def _resource_case(builder: FrameBuilder, target: CallTarget, call: ArgumentCall, family: str,
                   history: tuple[bytes, ...]) -> Case:
    return listed_read_case(builder, target.name, family=family, history=history)


def _missing_resources(builder: FrameBuilder, targets: list[CallTarget]) -> list[Case]:
    """Reads of URIs next to listed ones that no listing names and no template could produce."""
    templates = [t.name for t in targets if t.kind is TargetKind.TEMPLATE]
    return [missing_read_case(builder, uri) for uri in missing_uris(
        [t.name for t in targets if t.kind is TargetKind.RESOURCE], templates)]


def _template_case(builder: FrameBuilder, target: CallTarget, call: ArgumentCall, family: str,
                   history: tuple[bytes, ...]) -> Case:
    return template_read_case(builder, target.name, expand(target.name, call.arguments), call.description,
                              family=family, history=history)


def _raw_template_reads(builder: FrameBuilder, targets: list[CallTarget]) -> list[Case]:
    """Each template read with every variable plain (its answer time says how long a read takes), then with each
    variable set to a raw path-like value, not encoded (`/`, `%2e%2e`, `../`); calls of the template all."""
    cases = []
    for target in (t for t in targets if t.kind is TargetKind.TEMPLATE):
        raw = raw_uris(target.name)
        if raw:
            plain = template_edge_calls(target.declaration)[0]
            cases.append(target.case(builder, plain))
            cases += [replace(template_read_case(builder, target.name, uri, description), slow_ok=True,
                              shared_ok=True) for description, uri in raw]
    return cases


def _prompt_kind_cases(builder: FrameBuilder, targets: list[CallTarget]) -> list[Case]:
    """A prompt that does not exist; a declared one with arguments of the wrong type."""
    return [unknown_prompt_case(builder), *wrong_type_cases(
        builder, [t.declaration for t in targets if t.kind is TargetKind.PROMPT])]


def _unknown_completions(builder: FrameBuilder, targets: list[CallTarget]) -> list[Case]:
    """Completions of a prompt, a template and arguments that do not exist."""
    return unknown_ref_cases(builder, [t.declaration for t in targets if t.kind is TargetKind.COMPLETION])


def _prompt_case(builder: FrameBuilder, target: CallTarget, call: ArgumentCall, family: str,
                 history: tuple[bytes, ...]) -> Case:
    return prompt_get_case(builder, target.declaration, call, family=family, history=history)


def _completion_case(builder: FrameBuilder, target: CallTarget, call: ArgumentCall, family: str,
                     history: tuple[bytes, ...]) -> Case:
    return completion_case(builder, target.declaration, call, family=family, history=history)


RESOURCES = register_target_type(TargetType(
    kind=TargetKind.RESOURCE, method="resources/read", capability="resources", list_method="resources/list",
    list_key="resources", result_oracle="declared-served", schema=lambda _: NO_PARAMS, safety=_reads,
    make_case=_resource_case, option="--include-target", name_key="uri",
    coverage_calls=lambda _: [ArgumentCall(POSITIVE, {}, "read the listed URI")], fuzzed=False,
    kind_cases=_missing_resources))

TEMPLATES = register_target_type(TargetType(
    kind=TargetKind.TEMPLATE, method="resources/read", capability="resources",
    list_method="resources/templates/list", list_key="resourceTemplates", result_oracle="response-schema",
    schema=variables_schema, safety=_reads, make_case=_template_case, option="--include-target",
    name_key="uriTemplate", coverage_calls=template_edge_calls, fuzz_calls=drawn_values,
    kind_cases=_raw_template_reads))

PROMPTS = register_target_type(TargetType(
    kind=TargetKind.PROMPT, method="prompts/get", capability="prompts", list_method="prompts/list",
    list_key="prompts", result_oracle="response-schema", schema=arguments_schema, safety=_reads,
    make_case=_prompt_case, option="--include-target",
    kind_cases=_prompt_kind_cases))

COMPLETIONS = register_target_type(TargetType(
    kind=TargetKind.COMPLETION, method="completion/complete", capability="completions", list_method=None,
    list_key="", result_oracle="response-schema", schema=lambda _: VALUE_SCHEMA, safety=_reads,
    make_case=_completion_case, option="--include-target", kind_cases=_unknown_completions,
    derive=lambda declared: completion_declarations(declared.get(TargetKind.PROMPT, []),
                                                    declared.get(TargetKind.TEMPLATE, []))))


def method_safety(method: dict) -> Safety:
    """OpenRPC has no standard safety hint; `x-readonly` / `x-safe` (read into `readOnly`) mark a safe one."""
    return Safety.READ_ONLY if method.get("readOnly") is True else Safety.UNKNOWN


def _method_case(builder: FrameBuilder, target: CallTarget, call: ArgumentCall, family: str,
                 history: tuple[bytes, ...]) -> Case:
    return method_call_case(builder, target.declaration, call, family=family, history=history)


def _method_depth(builder: FrameBuilder, targets: list[CallTarget]) -> list[Case]:
    """Each method's name in other letters, its params in the other structure, a wrong array item, a 1 MB line:
    each made from the method's simplest valid params with every property present."""
    return depth_cases(builder, [(t.declaration, (t.populated or t.plain or [{}])[0]) for t in targets
                                 if t.kind is TargetKind.METHOD])


# A plain JSON-RPC method from an OpenRPC document (`run --jsonrpc --openrpc FILE`): no capability, never listed
# by the MCP probe (its capability is the empty string, which no server declares); the document declares it.
METHODS = register_target_type(TargetType(
    kind=TargetKind.METHOD, method="", capability="", list_method="rpc.discover", list_key="methods",
    result_oracle="response-schema", schema=lambda method: method.get("paramsSchema"), safety=method_safety,
    make_case=_method_case, option="--include-target", kind_cases=_method_depth))
