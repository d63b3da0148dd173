"""Answers to `tools/call`: valid arguments accepted, structuredContent true to the outputSchema."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator, Mapping
from functools import lru_cache
from typing import Any

from jsonschema import Draft202012Validator, validators
from jsonschema.exceptions import SchemaError

from mcpfuzz.jsonrpc.exchange import ID_CURRENT, Exchange
from mcpfuzz.jsonrpc.expectation import INVALID_PARAMS
from mcpfuzz.jsonrpc.oracle_ids import OracleId
from mcpfuzz.jsonrpc.parts.tool_call import ToolCallCheck
from mcpfuzz.oracles.answers import case_answers
from mcpfuzz.oracles.base import Failure, Severity, failure_class, register

ValidInputAcceptedFailure = failure_class(OracleId.VALID_INPUT_ACCEPTED, "Schema-valid tool arguments rejected")
OutputSchemaFailure = failure_class(OracleId.OUTPUT_SCHEMA, "structuredContent breaks the tool's outputSchema")


@register(ValidInputAcceptedFailure, Severity.MEDIUM)
def valid_input_accepted(exchange: Exchange) -> Iterator[Failure]:
    """A call whose arguments the tool's own inputSchema accepts must not be refused as invalid params."""
    call = exchange.case.expect.part(ToolCallCheck)
    if call is None or not call.valid or call.unicode_unsafe:
        return
    for arrival in case_answers(exchange):
        if arrival.incoming.is_error and arrival.incoming.error_code == INVALID_PARAMS:
            message = _error_text(arrival.incoming.message)
            if schema_words(message):
                yield ValidInputAcceptedFailure(
                    Severity.MEDIUM, f"arguments valid under the tool's inputSchema were rejected with -32602 by a "
                    f"check of types or shapes the schema does not declare: {message!r}", "rejected")
            else:
                yield ValidInputAcceptedFailure(
                    Severity.LOW, f"arguments valid under the tool's inputSchema were refused with -32602 for a rule "
                    f"of the tool's own ({message!r}); a refusal is allowed, but the schema could say the rule, or "
                    "an isError result could tell the model how to fix its call", "rejected")
            return


# Words of a type, shape or bound check (JSON Schema, zod, pydantic, a range check): the server checks what the
# schema could say (a type, `required`, `maximum`, `maxLength`) and disagrees with what it declares. A refusal
# without them is a rule the tool states in its own words (one of two fields, a date's content, a lookup).
_SCHEMA_WORDS = re.compile(r"\b(?:is not of type|invalid[_ ]type|expected (?:a |an )?(?:string|number|integer|"
                           r"boolean|object|array)|should be a valid|validation errors? for|is a required property|"
                           r"required property|additional propert|must be (?:a |an )?(?:string|number|integer|"
                           r"boolean|object|array)|(?:type|input) mismatch|below|above|at most|at least|maximum|"
                           r"minimum|greater than|less than|exceeds?|out of range|too (?:long|short|large|small|"
                           r"many|few)|length)\b", re.IGNORECASE)


def schema_words(message: str) -> bool:
    """Whether a refusal reads as a type or shape validator's, rather than a rule the tool states itself (or no
    message at all, which says nothing either way: a validator's, as before)."""
    return message == "(no message)" or not message.strip() or bool(_SCHEMA_WORDS.search(message))


@register(OutputSchemaFailure, Severity.MEDIUM)
def output_schema(exchange: Exchange) -> Iterator[Failure]:
    """MCP 2025-06-18 server/tools: a tool with an outputSchema returns conforming structuredContent."""
    call = exchange.case.expect.part(ToolCallCheck)
    schema = call.output_schema if call is not None else None
    if schema is None:
        return
    for arrival in exchange.responses():
        message = arrival.incoming.message
        result = message.get("result") if arrival.id_tag == ID_CURRENT and isinstance(message, dict) else None
        if not isinstance(result, dict) or result.get("resultType", "complete") != "complete":
            continue
        failed = result.get("isError") is True
        if "structuredContent" not in result:
            if not failed:
                yield OutputSchemaFailure(Severity.MEDIUM, "the tool declares an outputSchema, but this successful "
                                          "result has no structuredContent", "missing")
            continue
        problem = schema_problem(schema, result["structuredContent"])
        if problem is not None:
            where, text, keyword = problem
            yield OutputSchemaFailure(Severity.MEDIUM, f"structuredContent breaks the outputSchema at {where}: "
                                      f"{text}", f"{keyword}:{where}")


@lru_cache(maxsize=256)
def _validator(schema_text: str) -> Any:
    schema = json.loads(schema_text)
    cls = validators.validator_for(schema, default=Draft202012Validator)
    try:
        cls.check_schema(schema)
    except SchemaError:
        return None  # an invalid outputSchema is a listing problem, not something to judge results by
    return cls(schema)


# A declared schema (the same object on every call of its tool) -> its validator: the schema is not written out
# as JSON again for each answer. Declarations are read from the server once and never changed during a run.
_by_schema: dict[int, tuple[Mapping[str, Any], Any]] = {}


def _validator_of(schema: Mapping[str, Any]) -> Any:
    """The validator of `schema` (None for an invalid schema), found by the object itself before its JSON text."""
    known = _by_schema.get(id(schema))
    if known is not None and known[0] is schema:  # the very object (the entry keeps it alive: its id is not reused)
        return known[1]
    validator = _validator(json.dumps(schema, sort_keys=True))
    if len(_by_schema) >= 256:
        _by_schema.clear()
    _by_schema[id(schema)] = (schema, validator)
    return validator


def schema_problem(schema: Mapping[str, Any], value: Any) -> tuple[str, str, str] | None:
    """Where `value` first breaks `schema`, what is wrong, the keyword; None when it conforms (or the schema is
    invalid: a declaration problem, not one of the answer)."""
    validator = _validator_of(schema)
    if validator is None:
        return None
    error = next(iter(validator.iter_errors(value)), None)
    if error is None:
        return None
    where = "/" + "/".join(str(p) for p in error.absolute_path) if error.absolute_path else "the top level"
    return where, error.message[:200], str(error.validator)


def _error_text(message: Any) -> str:
    error = message.get("error") if isinstance(message, dict) else None
    text = error.get("message") if isinstance(error, dict) else None
    return str(text)[:160] if text is not None else "(no message)"
