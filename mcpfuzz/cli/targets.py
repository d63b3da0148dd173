"""`mcpfuzz targets` (and `run --dry-run`): what a run would call, and why it skips the rest, without calling it."""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import click

from mcpfuzz.cli.config_file import config_file_option
from mcpfuzz.cli.help_sections import SectionedCommand
from mcpfuzz.cli.options import EXIT_CLEAN, EXIT_ERROR, build_config, server_options

if TYPE_CHECKING:
    from mcpfuzz.cli.dry_run import DryRun
    from mcpfuzz.engine.config import RunConfig

# The options of `run` that change which server is started and which targets it plans; the rest keep run's defaults.
PLANNING_OPTIONS = frozenset({
    "seed", "timeout", "startup_timeout", "protocol_version", "phases", "include_tools", "exclude_tools",
    "include_targets", "exclude_targets", "read_only", "cwd", "env_pairs", "header_lines", "launch", "transport",
    "servers_file", "server_name", "max_line",
})
# A called target's safety hint in words (Safety's values; `unknown`: the server annotates nothing either way).
SAFETY_WORDS = {"read-only": "read-only", "unknown": "no safety hint", "destructive": "destructive (named)",
                "open-world": "open-world (named)"}
PROBE_BUDGET = 60.0  # seconds for the start, the handshake and every list


def _run_params() -> list[click.Parameter]:
    """Fresh copies of run's server options (each command owns its parameter objects)."""
    holder: Any = server_options(lambda: None)
    return list(holder.__click_params__)


def planning_options(command: Callable[..., Any]) -> Callable[..., Any]:
    """Add the options of `run` that decide the server and its targets, as `run` declares them."""
    params: Any = command
    chosen = [param for param in _run_params() if param.name in PLANNING_OPTIONS]
    params.__click_params__ = [*getattr(command, "__click_params__", []), *chosen]
    return command


def with_run_defaults(options: dict[str, Any]) -> dict[str, Any]:
    """`options` completed with run's defaults for every server option this command does not take."""
    context = click.Context(click.Command("run"))
    full = dict(options)
    for param in _run_params():
        if param.name is not None and param.name not in full:
            default = param.get_default(context)
            # A repeatable option nobody gave is an empty tuple, as click passes it.
            if param.multiple:
                full[param.name] = tuple(default) if isinstance(default, (list, tuple)) else ()
            else:
                full[param.name] = param.type_cast_value(context, default)
    return full


@click.command("targets", cls=SectionedCommand, context_settings={"ignore_unknown_options": False})
@click.argument("server", nargs=-1, type=click.UNPROCESSED, metavar="URL | -- CMD [ARGS]...")
@click.option("--format", "output_format", type=click.Choice(("text", "json")), default="text", show_default=True,
              help="text for people; json for scripts (every target with `called` and `skipped_because`).")
# `--json` was a flag here and is a report path in `run` (and a config file's `json` key): one name, two meanings.
@click.option("--json", "as_json", is_flag=True, default=False, hidden=True)
@planning_options
@config_file_option
def targets(server: tuple[str, ...], output_format: str, as_json: bool, **options: Any) -> None:
    """List what `run` would call: `mcpfuzz targets [OPTIONS] -- CMD [ARGS]...` or `... URL`.

    Starts the server, negotiates and reads every list as a run does, and plans the targets with the same
    selection options (--exclude-tool, --include-target, --read-only, --phases ...); calls none of them. Each
    skipped target says why. Exit status: 0 listed, 2 usage error or a server that could not be probed.
    """
    if as_json:
        click.echo("warning: `targets --json` is now --format json (`run --json PATH` writes a report)", err=True)
    config = build_config(server, PROBE_BUDGET, with_run_defaults(options))
    show_dry_run(config, as_json or output_format == "json")


def show_dry_run(config: RunConfig, as_json: bool) -> None:
    """Probe and plan, print the listing (text or JSON), exit 0; exit 2 with the error on stderr."""
    from mcpfuzz.cli.dry_run import dry_run

    outcome = dry_run(config)
    if outcome.error:
        if as_json:
            click.echo(json.dumps(outcome.to_json(), indent=2))
        click.echo(f"error: the server could not be probed: {outcome.error}", err=True)
        sys.exit(EXIT_ERROR)
    click.echo(json.dumps(outcome.to_json(), indent=2) if as_json else listing_text(outcome))
    sys.exit(EXIT_CLEAN)


def listing_text(outcome: DryRun) -> str:
    """The listing for people: the server, the targets called with their kind and hints, the skipped ones and why."""
    from mcpfuzz.report.plural import counted

    version = outcome.protocol_version or ""
    # A plain JSON-RPC server has no MCP era: its "version" says JSON-RPC 2.0.
    era = f" ({version})" if version.startswith("JSON-RPC") else \
        f" ({outcome.era} era, protocol {version})" if outcome.era else ""
    lines = [f"server: {outcome.server}{era}"]
    width = max((len(target.label) for target in outcome.targets), default=0)
    called, skipped = outcome.called, outcome.skipped
    verb = "would call" if outcome.calls_run else "would plan (no call phase in --phases, so none is called)"
    lines.append(f"{verb} {counted(len(called), 'target')}:" if called else "no target to call")
    for target in called:
        lines.append(f"  {target.label:<{width}}  {target.kind:<10}  {SAFETY_WORDS.get(target.safety or '', '')}")
    if skipped:
        lines.append(f"skipped {counted(len(skipped), 'target')}:")
    for target in skipped:
        lines.append(f"  {target.label:<{width}}  {target.kind:<10}  {target.skipped_because}")
    if outcome.catalogue_tool is not None:
        lines.append(f"the catalogue also sends malformed tools/call frames to {outcome.catalogue_tool}")
    for warning in outcome.warnings:
        lines.append(f"warning: {warning}")
    return "\n".join(lines)
