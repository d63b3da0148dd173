"""`prompts/get` frames: arguments drawn from a prompt's declared arguments, and a prompt that does not exist."""

from __future__ import annotations

from mcpfuzz.strategies.arguments.call import NEGATIVE, ArgumentCall
from mcpfuzz.strategies.messages import FrameBuilder

from mcpfuzz.jsonrpc import expectation as ex
from mcpfuzz.jsonrpc.expectation import Expectation
from mcpfuzz.jsonrpc.frame import Case
from mcpfuzz.jsonrpc.oracle_ids import OracleId
from mcpfuzz.jsonrpc.parts.leniency import Lenient

GET = "prompts/get"
PROMPT_FAMILY = "prompt"
UNKNOWN_PROMPT = "mcpfuzz-no-such-prompt"
# A surplus argument breaks the drawing schema's `additionalProperties`, but no revision says it is an error.
LENIENT_RULES = frozenset({"additionalProperties"})


def arguments_schema(prompt: dict) -> dict:
    """The JSON Schema arguments are drawn from: each declared argument a string, the required ones required."""
    declared = [a for a in prompt.get("arguments") or [] if isinstance(a, dict) and isinstance(a.get("name"), str)]
    return {"type": "object", "properties": {a["name"]: {"type": "string"} for a in declared},
            "required": [a["name"] for a in declared if a.get("required") is True],
            "additionalProperties": False}


def refused(rid: int, method: str, note: str) -> Expectation:
    """Params a correct server refuses with -32602; the spec says SHOULD, so another answer is low."""
    return Expectation(judge=OracleId.INVALID_PARAMS, id=rid, codes=frozenset({ex.INVALID_PARAMS}), well_formed=True,
                       method=method, note=note, wrong_answer="low")


def unicode_unsafe(rid: int, method: str) -> Expectation:
    """A lone surrogate: RFC 8259 section 8.2 leaves its handling open, so a parser may refuse the frame
    (-32700, id null) or answer it; silence is parse-error's (low), as for tool arguments."""
    return Expectation(judge=OracleId.PARSE_ERROR, id=rid, codes=frozenset({ex.PARSE_ERROR, ex.INVALID_PARAMS}),
                       result_ok=True, null_id_ok=True, method=method, parts=(Lenient(),))


def drawn_call_expectation(rid: int, method: str, call: ArgumentCall, refusal: str) -> Expectation:
    """What a drawn call of a prompt or completion is due: a lone surrogate may be refused as unparseable; arguments
    that break a rule (not a lenient one) get -32602 (`refusal` says which rule); anything else any answer."""
    if call.unicode_unsafe:
        return unicode_unsafe(rid, method)
    if call.kind == NEGATIVE and call.rule not in LENIENT_RULES:
        return refused(rid, method, refusal)
    return ex.any_answer(rid, method)


def prompt_get_case(builder: FrameBuilder, prompt: dict, call: ArgumentCall, *, family: str = PROMPT_FAMILY,
                    history: tuple[bytes, ...] = ()) -> Case:
    """One prompts/get: valid arguments get any answer (a prompt may refuse values), broken ones -32602."""
    rid = builder.fresh_id()
    name = prompt["name"]
    frame = builder.frame(GET, {"name": name, "arguments": call.arguments}, rid)
    expect = drawn_call_expectation(rid, GET, call, "MCP server/prompts: invalid prompt arguments")
    # Not patient for a lone surrogate: parsers that refuse it stay silent, and the barrier's answer says so.
    return Case(name, family, f"{name}: {call.description}", frame, expect, history=history,
                patient=not call.unicode_unsafe)


def unknown_prompt_case(builder: FrameBuilder) -> Case:
    """prompts/get of a name no listing has: -32602."""
    rid = builder.fresh_id()
    return Case(UNKNOWN_PROMPT, PROMPT_FAMILY, "a prompt that does not exist",
                builder.frame(GET, {"name": UNKNOWN_PROMPT, "arguments": {}}, rid),
                refused(rid, GET, "MCP server/prompts: an unknown prompt name"), patient=True)


WRONG_TYPED_VALUE = 42  # MCP server/prompts: argument values are strings


def wrong_type_cases(builder: FrameBuilder, prompts: list[dict]) -> list[Case]:
    """The first prompt that declares arguments, with a number for its first argument, and with `arguments` an
    array instead of an object: -32602 (MCP server/prompts: prompt arguments are a map of strings)."""
    prompt = next((p for p in prompts if arguments_schema(p)["properties"]), None)
    if prompt is None:
        return []
    schema = arguments_schema(prompt)
    name, first = prompt["name"], next(iter(schema["properties"]))
    plain = {argument: "mcpfuzz" for argument in schema["required"]}
    cases = []
    for description, arguments in ((f"`{first}` a number, not a string", {**plain, first: WRONG_TYPED_VALUE}),
                                   ("`arguments` an array, not an object", list(plain.values()) or ["mcpfuzz"])):
        rid = builder.fresh_id()
        cases.append(Case(name, PROMPT_FAMILY, f"{name}: {description}",
                          builder.frame(GET, {"name": name, "arguments": arguments}, rid),
                          refused(rid, GET, "MCP server/prompts: argument values are strings"), patient=True))
    return cases
