"""The `mcpfuzz` group and its `run`, `replay` and `oracles` commands (`soak` lives in its own module)."""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING, Any

import click

from mcpfuzz.cli.baseline import baseline
from mcpfuzz.cli.call import call
from mcpfuzz.cli.closed_pipe import pipe_safe_output
from mcpfuzz.cli.config_file import config_file_option
from mcpfuzz.cli.durations import Seconds
from mcpfuzz.cli.explain import explain
from mcpfuzz.cli.help_sections import SectionedCommand
from mcpfuzz.cli.jsonrpc import jsonrpc_methods, jsonrpc_options
from mcpfuzz.cli.lint import lint
from mcpfuzz.cli.options import (
    EXIT_CLEAN,
    EXIT_ERROR,
    EXIT_FINDINGS,
    build_config,
    exit_status,
    http_target,
    parse_env,
    parse_headers,
    server_options,
)
from mcpfuzz.cli.reporting import Reporting
from mcpfuzz.cli.shared import report as shared_report
from mcpfuzz.cli.shared import status as shared_status
from mcpfuzz.cli.snapshot import add_to_run_reports, snapshot, snapshot_in_run, snapshot_run_options
from mcpfuzz.cli.soak import soak
from mcpfuzz.cli.targets import show_dry_run, targets

if TYPE_CHECKING:
    from mcpfuzz.engine.config import RunConfig
    from mcpfuzz.engine.events import EventSink, RunFinished


class _Mcpfuzz(click.Group):
    """The command group; a closed stdout or stderr (`| head -1`) drops the output and keeps the exit status."""

    def main(self, *args: Any, **kwargs: Any) -> Any:
        with pipe_safe_output():
            return super().main(*args, **kwargs)


@click.group(cls=_Mcpfuzz, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="mcp-wirefuzz", prog_name="mcpfuzz")
def main() -> None:
    """Find robustness bugs in MCP servers: malformed frames, odd ids, lifecycle abuse, checked by oracles."""


@main.command(cls=SectionedCommand, context_settings={"ignore_unknown_options": False})
@click.argument("server", nargs=-1, type=click.UNPROCESSED, metavar="URL | -- CMD [ARGS]...")
@click.option("--budget", type=Seconds(min=0, min_open=True), default=60.0, show_default=True,
              metavar="DURATION", help="Wall-clock cap for the whole run (e.g. 90, 30s, 2m).")
@server_options
@click.option("--compare", "compare_with", default=None, metavar="URL|'CMD'",
              help="Send the catalogue to this second server too and list every frame whose outcome differs.")
@click.option("--all-servers", is_flag=True, default=False,
              help="With --servers-file: fuzz every server in it in turn (reports and corpus per server).")
@click.option("--compare-ignore", "compare_ignore", multiple=True, metavar="JSONPATH",
              help="With --compare: a member of the envelopes that may differ, e.g. $.result.timestamp (repeatable).")
@click.option("--workers", type=click.IntRange(min=1, max=64), default=1, show_default=True, metavar="N",
              help="Fuzz N server instances in parallel processes, each searching with seeds of its own (the "
                   "catalogue, lifecycle and coverage run once); about N times the calls on N free cores.")
@click.option("-x", "--exitfirst", "exit_first", is_flag=True, default=False,
              help="Stop at the first finding at or above --fail-on (--max-findings 1).")
@click.option("--max-findings", type=click.IntRange(min=1), default=None, metavar="N",
              help="Stop at the N-th finding at or above --fail-on; what was found is reported and saved.")
@click.option("--dry-run", is_flag=True, default=False,
              help="Probe the server and list the targets the run would call (and why it skips the others); call "
                   "nothing (as `mcpfuzz targets`).")
@jsonrpc_options
@snapshot_run_options
@config_file_option
def run(server: tuple[str, ...], budget: float, compare_with: str | None, all_servers: bool,
        compare_ignore: tuple[str, ...], workers: int, exit_first: bool, max_findings: int | None, dry_run: bool,
        plain_jsonrpc: bool, openrpc_path: str | None,
        method_names: tuple[str, ...], params_schemas: tuple[str, ...], snapshot_path: str | None,
        fail_on_change: str, **options: Any) -> None:
    """Fuzz an MCP server: `mcpfuzz run [OPTIONS] -- CMD [ARGS]...` (stdio) or `mcpfuzz run [OPTIONS] URL`.

    A stdio server inherits mcpfuzz's environment and working directory. Exit status: 0 no findings
    at or above --fail-on, 1 findings, 2 usage error or unusable server.
    """
    limit = _finding_limit(exit_first, max_findings)
    if snapshot_path and (all_servers or compare_with is not None or dry_run):
        raise click.UsageError("--snapshot checks the surface of the one server a run fuzzes; leave out --all-servers, "
                               "--compare and --dry-run (or use `mcpfuzz snapshot --check FILE`)")
    if limit is not None and (all_servers or compare_with is not None):
        raise click.UsageError("-x/--max-findings stops one run; --all-servers and --compare run several (leave "
                               "one of them out)")
    if all_servers:
        if dry_run:
            raise click.UsageError("--dry-run lists one server's targets; --all-servers runs them all (give one "
                                   "with --server NAME)")
        if workers > 1:
            raise click.UsageError("--workers applies to one server; --all-servers fuzzes them in turn (leave one "
                                   "of them out)")
        from mcpfuzz.cli.all_servers import run_all_servers

        sys.exit(run_all_servers(server, budget, compare_with, options))
    config = build_config(server, budget, options)
    config.jsonrpc_methods = jsonrpc_methods(plain_jsonrpc, openrpc_path, method_names, params_schemas)
    if dry_run:
        if compare_with is not None:
            raise click.UsageError("--dry-run lists one server's targets; --compare runs two (leave one of them out)")
        show_dry_run(config, as_json=False)

    if compare_ignore and compare_with is None:
        raise click.UsageError("--compare-ignore applies to --compare; give the second server with --compare")
    if compare_with is not None:
        if options["events_path"]:
            raise click.UsageError("--events streams one run; --compare runs two (leave one of them out)")
        _compare(config, compare_with, compare_ignore)
    if workers > 1:
        _check_workers(config)
    drift = snapshot_in_run(config, snapshot_path, fail_on_change) if snapshot_path else None
    reporting = Reporting(config, options, banner_first=True)

    def stopping(sink: EventSink) -> EventSink:
        if limit is None:
            return sink
        from mcpfuzz.cli.max_findings import StopAtFindings

        return StopAtFindings(sink, limit, config.fail_on)

    finished = reporting.run(lambda sink: _run(config, workers, stopping(sink)))
    reporting.exit_on_problem()
    status = exit_status(config, finished)
    if drift is not None:
        add_to_run_reports(*drift, options)
        status = EXIT_FINDINGS if drift[0].failing() and status == EXIT_CLEAN else status
    sys.exit(status)


def _finding_limit(exit_first: bool, max_findings: int | None) -> int | None:
    """How many findings at or above --fail-on end the run; None: the budget does."""
    if exit_first and max_findings not in (None, 1):
        raise click.UsageError(f"-x is --max-findings 1, which --max-findings {max_findings} contradicts; give one "
                               "of them")
    return 1 if exit_first else max_findings


def _check_workers(config: RunConfig) -> None:
    """`--workers N` needs N servers: refuse what would make them one (exit 2, with the way out)."""
    http = config.http
    if http is not None and http.launch and not http.picks_port:
        raise click.UsageError("--workers with --launch would start every worker's server on the same port; tip: "
                               "write {port} in the URL and the launch command (each worker then starts its server "
                               "on a free port of its own)")
    if http is not None and not http.launch:
        raise click.UsageError("--workers needs a server per worker, and a URL without --launch is one server; tip: "
                               "give --launch 'CMD' with {port} in it and the URL, or fuzz a stdio command")


def _run(config: RunConfig, workers: int, sink: EventSink) -> RunFinished:
    """The run in this process, or in `workers` processes whose events are relayed to `sink`."""
    import anyio

    if workers > 1:
        from mcpfuzz.engine.run_workers import run_in_workers

        return run_in_workers(config, workers, sink)
    from mcpfuzz.engine.runner import run as run_engine

    return anyio.run(run_engine, config, sink)


class _CommandAfterDashes(SectionedCommand):
    """Keeps what follows `--` apart (the server command), so that paths and the command can both be given."""

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        if "--" in args:
            split = args.index("--")
            ctx.meta["server_command"] = args[split + 1:]
            args = args[:split]
        return super().parse_args(ctx, args)


@main.command(cls=_CommandAfterDashes)
@click.argument("paths", nargs=-1, type=click.Path(exists=True), metavar="[FILE|DIR]...")
@click.option("--timeout", type=Seconds(min=0, min_open=True), default=5.0, show_default=True,
              metavar="DURATION", help="How long any answer may take before mcpfuzz checks that the server "
              "is alive.")
@click.option("--call-timeout", type=Seconds(min=0, min_open=True), default=30.0, show_default=True,
              metavar="DURATION", help="How long a valid call to a live server may take before it counts as dropped.")
@click.option("--env", "env_pairs", multiple=True, metavar="NAME=VALUE",
              help="Extra environment variable for the server (repeatable).")
@click.option("--header", "header_lines", multiple=True, metavar="'NAME: VALUE'",
              help="HTTP: header sent with every request (transcripts never hold header values).")
@config_file_option
@click.pass_context
def replay(ctx: click.Context, paths: tuple[str, ...], timeout: float, call_timeout: float,
           env_pairs: tuple[str, ...],
           header_lines: tuple[str, ...]) -> None:
    """Re-run saved failures: `mcpfuzz replay [FILE|DIR]... [-- CMD [ARGS]... | -- URL]`.

    Each transcript is sent to a fresh server (its own command or URL, or the one given) and judged by the same
    oracles: FIXED, FAILED or ERROR. Exit status: 0 all fixed, 1 some still fail, 2 some could
    not be replayed. Without paths, ./corpus is replayed.
    """
    import os
    from dataclasses import replace
    from pathlib import Path

    import anyio

    from mcpfuzz.cli.replay_env import missing_env, with_env_tip
    from mcpfuzz.engine.replay import ERROR, FAILED, load_replayables, replay_one
    from mcpfuzz.engine.session.session import SessionOptions
    from mcpfuzz.oracles.base import all_oracles
    from mcpfuzz.report.plural import counted
    from mcpfuzz.report.replay_console import print_outcome
    from mcpfuzz.transport.connect import ServerTarget
    from mcpfuzz.transport.stdio_target import StdioTarget
    from mcpfuzz.transport.target import ServerKind

    words = ctx.meta.get("server_command") or []
    given: ServerTarget | None = None
    if words:
        given = http_target(words, header_lines, None, "auto") or StdioTarget(tuple(words))
    targets = [Path(p) for p in paths] or [Path("corpus")]
    if not paths and not targets[0].is_dir():
        raise click.UsageError("no transcript given and no ./corpus folder here; name a FILE or DIR to replay")
    replayables, outcomes = load_replayables(targets)
    if not replayables and not outcomes:
        # Nothing replayed is nothing shown fixed: a wrong folder must not pass a CI step.
        click.echo(f"error: no transcript to replay in {', '.join(str(t) for t in targets)} (transcripts are the "
                   "*.json files `mcpfuzz run` writes to its --corpus folder)", err=True)
        sys.exit(EXIT_ERROR)
    options = SessionOptions(timeout=timeout, call_timeout=call_timeout, env=parse_env(env_pairs) or None)
    oracles = tuple(all_oracles())
    for outcome in outcomes:
        print_outcome(outcome)
    for replayable in replayables:
        server = given or replayable.server
        if header_lines and server is not None and server.kind is ServerKind.URL:
            # A transcript keeps header names only: the values come from this command line.
            server = replace(server, headers=parse_headers(header_lines))
        outcome = anyio.run(replay_one, replayable, server, options, oracles)
        outcome = with_env_tip(outcome, missing_env(server, os.environ, options.env or {}))
        outcomes.append(outcome)
        print_outcome(outcome)
    statuses = [o.status for o in outcomes]
    counts = ", ".join(f"{statuses.count(s)} {s.lower()}" for s in ("FIXED", FAILED, ERROR))
    click.echo(f"replayed {counted(len(statuses), 'transcript')}: {counts}")
    sys.exit(EXIT_FINDINGS if FAILED in statuses else EXIT_ERROR if ERROR in statuses else EXIT_CLEAN)


def _compare(config: RunConfig, other: str, ignore: tuple[str, ...] = ()) -> None:
    """`run --compare`: the protocol phases against both servers, then the first one's coverage and stateful calls
    sent to the second; exit 1 when any frame's outcome (or any call's envelope) differs."""
    import shlex
    from dataclasses import replace

    import anyio

    from mcpfuzz.engine.compare import compare
    from mcpfuzz.engine.json_paths import PathError, parse_path
    from mcpfuzz.report.compare_console import print_comparison

    try:
        paths = tuple(parse_path(path) for path in ignore)
    except PathError as error:
        raise click.BadParameter(str(error), param_hint="--compare-ignore") from None

    try:
        words = shlex.split(other)
    except ValueError as error:
        raise click.BadParameter(f"cannot split {other!r} into words: {error}", param_hint="--compare") from None
    if not words:
        raise click.BadParameter("give a URL or a server command to compare with", param_hint="--compare")
    http = http_target(words, (), None, "auto")
    second = replace(config, command=[] if http else words, http=http)
    first_label, second_label = config.server_label, second.server_label
    click.echo(f"comparing\n  A: {first_label}\n  B: {second_label}\n(catalogue and lifecycle on each, then A's "
               f"coverage and stateful calls sent to B too; seed {config.seed})")
    comparison = anyio.run(compare, config, second, lambda event: None, paths)
    for label, finished in (("A", comparison.first), ("B", comparison.second)):
        if finished.error:
            click.echo(f"error: server {label} could not be tested: {finished.error}", err=True)
            sys.exit(EXIT_ERROR)
    print_comparison(comparison, "A", "B")
    sys.exit(EXIT_FINDINGS if comparison.differences else EXIT_CLEAN)


@main.command("oracles")
def list_oracles() -> None:
    """List the oracle ids and what each one checks."""
    from mcpfuzz.oracles.base import all_oracles
    from mcpfuzz.report.codes import code_of

    for oracle in all_oracles().values():
        click.echo(f"{oracle.id:<22} {code_of(oracle.id):<13} {oracle.title}")


main.add_command(soak)
main.add_command(baseline)
main.add_command(shared_status)
main.add_command(shared_report)
main.add_command(lint)
main.add_command(targets)
main.add_command(call)
main.add_command(snapshot)
main.add_command(explain)
