"""`mcpfuzz call TOOL --args JSON`: one call by hand, its answer printed and judged by the oracles of a single call."""

from __future__ import annotations

import json
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from mcpfuzz.cli.config_file import config_file_option
from mcpfuzz.cli.help_sections import SectionedCommand
from mcpfuzz.cli.options import EXIT_CLEAN, EXIT_ERROR, EXIT_FINDINGS, build_config
from mcpfuzz.cli.targets import PROBE_BUDGET, _run_params, with_run_defaults

if TYPE_CHECKING:
    from mcpfuzz.engine.config import RunConfig
    from mcpfuzz.engine.plan.context import RunContext
    from mcpfuzz.engine.session.session import Session
    from mcpfuzz.oracles.base import Failure

# The options of `run` that change how one call reaches the server; target selection and seeds mean nothing for a
# call that names its target and its arguments.
CALL_OPTIONS = frozenset({"timeout", "startup_timeout", "call_timeout", "protocol_version", "cwd", "env_pairs",
                          "header_lines", "launch", "transport", "servers_file", "server_name", "max_line"})


def call_options(command: Any) -> Any:
    """Add the options of `run` that matter to one call, as `run` declares them."""
    command.__click_params__ = [*getattr(command, "__click_params__", []),
                                *(param for param in _run_params() if param.name in CALL_OPTIONS)]
    return command


# Far from the ids the probe uses, as the call phases' own calls are.
CALL_ID = 2**32


@dataclass
class CallOutcome:
    """The call's answer (redacted), the oracles that failed on it, and why it could not be made (`error`)."""

    server: str
    target: str
    valid: bool = True
    answer: Any = None
    failures: list[Failure] = field(default_factory=list)
    error: str = ""


@click.command("call", cls=SectionedCommand, context_settings={"ignore_unknown_options": False})
@click.argument("tool", metavar="TOOL")
@click.argument("server", nargs=-1, type=click.UNPROCESSED, metavar="URL | -- CMD [ARGS]...")
@click.option("--args", "arguments_text", default="{}", show_default=True, metavar="JSON|@FILE",
              help="The call's arguments: JSON text, or @FILE to read it from a file.")
@call_options
@config_file_option
def call(tool: str, server: tuple[str, ...], arguments_text: str, **options: Any) -> None:
    """Call one tool by hand: `mcpfuzz call TOOL --args JSON [OPTIONS] -- CMD [ARGS]...` or `... URL`.

    TOOL is a tool's name, or KIND/NAME for another target (prompt/greet, resource/URI). The server is started
    and negotiated with as a run does; the answer is printed as JSON and judged by the oracles that apply to one
    call. The target is called even when its hints would make a run skip it: naming it is asking for it. Exit
    status: 0 a clean answer, 1 an oracle failed, 2 usage error or a server that could not be called.
    """
    arguments = parse_arguments(arguments_text)
    config = build_config(server, PROBE_BUDGET, with_run_defaults(options))
    outcome = call_once(config, tool, arguments)
    if outcome.error:
        click.echo(f"error: {outcome.error}", err=True)
        sys.exit(EXIT_ERROR)
    kind = "valid" if outcome.valid else "invalid (against its schema)"
    click.echo(f"{outcome.target} on {outcome.server}, {kind} arguments; answer:")
    click.echo(json.dumps(outcome.answer, indent=2, ensure_ascii=False) if outcome.answer is not None
               else "(no answer)")
    for failure in outcome.failures:
        click.echo(f"FAILED {failure.oracle} ({failure.severity}): {failure.message}")
    if not outcome.failures:
        click.echo("ok: no oracle failed on this call")
    sys.exit(EXIT_FINDINGS if outcome.failures else EXIT_CLEAN)


def parse_arguments(text: str) -> Any:
    """--args as JSON: the text itself, or the file named after `@`; a usage error says what is wrong."""
    source = "--args"
    if text.startswith("@"):
        source = text[1:]
        try:
            text = Path(source).read_text(encoding="utf-8")
        except OSError as error:
            raise click.BadParameter(f"cannot read {source}: {error.strerror or error}", param_hint="--args") from None
    try:
        return json.loads(text)
    except json.JSONDecodeError as error:
        raise click.BadParameter(f"{source} is not JSON: {error}; e.g. --args '{{\"query\": \"x\"}}'",
                                 param_hint="--args") from None


def call_once(config: RunConfig, label: str, arguments: Any) -> CallOutcome:
    """Probe the server as a run does, call `label` once with `arguments`, judge the exchange."""
    import anyio

    from mcpfuzz.cli.probed import writing_nothing

    return anyio.run(_call_once, writing_nothing(config), label, arguments)


async def _call_once(config: RunConfig, label: str, arguments: Any) -> CallOutcome:
    from mcpfuzz.cli.probed import on_probed_server
    from mcpfuzz.engine.plan.plans import plan_for

    outcome = CallOutcome(config.public().server_label, label)
    probe = plan_for(config)[:1]  # the probe alone: nothing else is sent before the call

    async def called(context: RunContext, session: Session) -> None:
        await _call(context, session, label, arguments, outcome)

    context, error = await on_probed_server(config, probe, called, lambda event: None)
    outcome.error = error or outcome.error
    outcome.answer = context.redactor.value(outcome.answer)
    return outcome


async def _call(context: RunContext, session: Session, label: str, arguments: Any, outcome: CallOutcome) -> None:
    """Find the target among the declarations, send the one call, keep its answer and its failed oracles."""
    from mcpfuzz.engine.events import PhaseName
    from mcpfuzz.engine.surface.targets import CallTarget, target_types
    from mcpfuzz.jsonrpc.exchange import ID_CURRENT
    from mcpfuzz.jsonrpc.target_kind import TargetKind
    from mcpfuzz.jsonrpc.versions import Era
    from mcpfuzz.strategies.arguments.call import NEGATIVE, POSITIVE, ArgumentCall
    from mcpfuzz.strategies.messages import FrameBuilder

    assert context.probe is not None
    kinds = {kind.value: kind for kind in TargetKind}
    kind_name, slash, name = label.partition("/")
    kind = kinds.get(kind_name) if slash else None
    if kind is None:
        kind, name = TargetKind.TOOL, label
    target_type = target_types()[kind]
    declarations = context.probe.declared.get(kind, [])
    declaration = next((d for d in declarations if target_type.name_of(d) == name), None)
    outcome.target = kind.label(name)
    if declaration is None:
        listed = ", ".join(sorted(str(target_type.name_of(d)) for d in declarations)) or "(none)"
        outcome.error = f"the server declares no {kind.value} {name!r}; its {kind.value}s: {listed}"
        return
    target = CallTarget(target_type, name, declaration, target_type.safety(declaration), context.config.seed)
    problem = _schema_problem(target_type.schema(declaration), arguments)
    outcome.valid = problem is None
    drawn = ArgumentCall(POSITIVE, arguments, "given with --args") if problem is None else \
        ArgumentCall(NEGATIVE, arguments, f"given with --args: {problem}", rule="given")
    builder = FrameBuilder(session.era or Era.LEGACY, session.version, next_id=CALL_ID)
    exchange = await session.run_case(target.case(builder, drawn))
    answers = [arrival.incoming.message for arrival in exchange.arrivals if arrival.id_tag == ID_CURRENT]
    outcome.answer = answers[0] if answers else None
    outcome.failures = [failure for failure, _, _ in context.judge(PhaseName.COVERAGE, exchange)]


def _schema_problem(schema: object, arguments: Any) -> str | None:
    """Why `arguments` break the target's schema (JSON Schema 2020-12), or None when they keep it."""
    if not isinstance(schema, dict):
        return None
    from jsonschema import Draft202012Validator
    from jsonschema.exceptions import SchemaError, best_match

    try:
        error = best_match(Draft202012Validator(schema).iter_errors(arguments))
    except SchemaError:
        return None
    if error is None:
        return None
    where = "/" + "/".join(str(part) for part in error.absolute_path)
    return f"violates {error.validator} at {where}"
