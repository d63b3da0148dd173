"""`completion/complete` frames: one target per prompt argument and per template variable."""

from __future__ import annotations

from mcpfuzz.strategies.arguments.call import ArgumentCall
from mcpfuzz.strategies.messages import FrameBuilder
from mcpfuzz.strategies.surfaces.prompts import drawn_call_expectation
from mcpfuzz.strategies.surfaces.templates import template_variables

from mcpfuzz.jsonrpc.frame import Case

COMPLETE = "completion/complete"
COMPLETION_FAMILY = "completion"
# The drawn part of a request: the partial value typed so far.
VALUE_SCHEMA = {"type": "object", "properties": {"value": {"type": "string"}}, "required": ["value"],
                "additionalProperties": False}


def completion_declarations(prompts: list[dict], templates: list[dict]) -> list[dict]:
    """A declaration per completable argument: `{name, ref, argument}`, named `prompt:P:ARG` or `template:T:VAR`."""
    found = []
    for prompt in prompts:
        for argument in prompt.get("arguments") or []:
            if isinstance(prompt.get("name"), str) and isinstance(argument, dict) \
                    and isinstance(argument.get("name"), str):
                found.append({"name": f"prompt:{prompt['name']}:{argument['name']}", "argument": argument["name"],
                              "ref": {"type": "ref/prompt", "name": prompt["name"]}})
    for template in templates:
        uri = template.get("uriTemplate")
        if isinstance(uri, str):
            for variable in template_variables(uri):
                found.append({"name": f"template:{uri}:{variable}", "argument": variable,
                              "ref": {"type": "ref/resource", "uri": uri}})
    return found


def completion_case(builder: FrameBuilder, declaration: dict, call: ArgumentCall, *,
                    family: str = COMPLETION_FAMILY, history: tuple[bytes, ...] = ()) -> Case:
    """One completion/complete: a partial value gets any answer; a request missing its value gets -32602."""
    rid = builder.fresh_id()
    drawn = call.arguments if isinstance(call.arguments, dict) else {"value": call.arguments}
    argument = {"name": declaration["argument"], **drawn}
    frame = builder.frame(COMPLETE, {"ref": declaration["ref"], "argument": argument}, rid)
    expect = drawn_call_expectation(rid, COMPLETE, call, "MCP completion: the argument needs a string `value`")
    return Case(declaration["name"], family, f"{declaration['name']}: {call.description}", frame, expect,
                history=history, patient=not call.unicode_unsafe)
