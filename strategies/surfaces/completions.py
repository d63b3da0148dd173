"""`completion/complete` frames: one target per prompt argument and per template variable, and references to
prompts, templates and arguments that do not exist."""

from __future__ import annotations

from dataclasses import replace

from mcpfuzz.strategies.arguments.call import ArgumentCall
from mcpfuzz.strategies.messages import FrameBuilder
from mcpfuzz.strategies.surfaces.prompts import UNKNOWN_PROMPT, drawn_call_expectation, refused
from mcpfuzz.strategies.surfaces.templates import template_variables

from mcpfuzz.jsonrpc import expectation as ex
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


UNKNOWN_TEMPLATE = "mcpfuzz-missing://{mcpfuzz}"
UNKNOWN_ARGUMENT = "mcpfuzz-no-such-argument"


def _complete(builder: FrameBuilder, rid: int, ref: dict, argument: str) -> bytes:
    return builder.frame(COMPLETE, {"ref": ref, "argument": {"name": argument, "value": ""}}, rid)


def unknown_ref_cases(builder: FrameBuilder, declarations: list[dict]) -> list[Case]:
    """Completions of things that do not exist: a prompt (an error is -32602, as MCP utilities/completion says for
    an invalid prompt name; an empty result is fine too, which is what SDK completion handlers return for anything
    they do not know), a template and, for the first prompt and the first template declared, an argument (no rule
    says which answer: any, but never a crash or silence). Nothing when the server completes nothing."""
    if not declarations:
        return []
    rid = builder.fresh_id()
    cases = [Case("unknown-prompt", COMPLETION_FAMILY, f"complete an argument of {UNKNOWN_PROMPT!r}, a prompt that "
                  "does not exist", _complete(builder, rid, {"type": "ref/prompt", "name": UNKNOWN_PROMPT}, "x"),
                  replace(refused(rid, COMPLETE, "MCP utilities/completion: an invalid prompt name"), result_ok=True),
                  patient=True)]
    rid = builder.fresh_id()
    cases.append(Case("unknown-template", COMPLETION_FAMILY, f"complete a variable of {UNKNOWN_TEMPLATE!r}, a "
                      "template that does not exist", _complete(builder, rid, {"type": "ref/resource",
                                                                               "uri": UNKNOWN_TEMPLATE}, "mcpfuzz"),
                      ex.any_answer(rid, COMPLETE, note="a template that does not exist"), patient=True))
    for kind in ("ref/prompt", "ref/resource"):
        declaration = next((d for d in declarations if d["ref"].get("type") == kind), None)
        if declaration is None:
            continue
        rid = builder.fresh_id()
        subject = declaration["name"].rsplit(":", 1)[0]
        cases.append(Case(f"{subject}:{UNKNOWN_ARGUMENT}", COMPLETION_FAMILY, f"complete {UNKNOWN_ARGUMENT!r}, "
                          f"which {subject} does not declare", _complete(builder, rid, declaration["ref"],
                                                                         UNKNOWN_ARGUMENT),
                          ex.any_answer(rid, COMPLETE, note="an argument the reference does not declare"),
                          patient=True))
    return cases
