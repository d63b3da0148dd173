"""The `mcpfuzz` command line. Heavy imports wait until a command runs, so `--help` stays fast."""

from __future__ import annotations

import difflib
import sys
from typing import TYPE_CHECKING

import click

if TYPE_CHECKING:
    from mcpfuzz.engine.config import RunConfig
    from mcpfuzz.engine.events import RunFinished

EXIT_CLEAN, EXIT_FINDINGS, EXIT_ERROR = 0, 1, 2
SEVERITIES = ("low", "medium", "high", "critical")
# The phases after the probe, in the order they run (mcpfuzz.engine.config.PHASES; kept here for a fast --help).
RUN_PHASES = ("catalogue", "lifecycle", "coverage", "fuzz", "stateful")


def _oracle_ids() -> list[str]:
    from mcpfuzz.oracles.base import all_oracles

    return list(all_oracles())


def _parse_oracle_list(value: str | None, option: str) -> list[str]:
    """Read a comma-separated list of oracle ids; unknown ids fail with the closest valid ones."""
    if value is None:
        return []
    known = _oracle_ids()
    chosen = [part.strip() for part in value.split(",") if part.strip()]
    for oracle_id in chosen:
        if oracle_id not in known:
            close = difflib.get_close_matches(oracle_id, known, n=2)
            hint = f" Did you mean {' or '.join(repr(c) for c in close)}?" if close else ""
            raise click.BadParameter(f"unknown oracle {oracle_id!r}.{hint} Known oracles: {', '.join(known)} "
                                     "(see `mcpfuzz oracles`).", param_hint=option)
    return chosen


def _check_version(ctx: click.Context, param: click.Parameter, value: str | None) -> str | None:
    from mcpfuzz.jsonrpc.versions import KNOWN_VERSIONS

    if value is not None and value not in KNOWN_VERSIONS:
        raise click.BadParameter(f"{value!r} is not an MCP protocol version mcpfuzz knows; use one of "
                                 f"{', '.join(KNOWN_VERSIONS)}.")
    return value


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="mcp-wirefuzz", prog_name="mcpfuzz")
def main() -> None:
    """Find robustness bugs in MCP servers: malformed frames, odd ids, lifecycle abuse, checked by oracles."""


@main.command(context_settings={"ignore_unknown_options": False})
@click.argument("server", nargs=-1, type=click.UNPROCESSED, metavar="URL | -- CMD [ARGS]...")
@click.option("--seed", type=int, default=None, help="Seed for generation (printed in the summary).")
@click.option("--budget", type=click.FloatRange(min=0, min_open=True), default=60.0, show_default=True,
              metavar="SECONDS", help="Wall-clock cap for the whole run.")
@click.option("--timeout", type=click.FloatRange(min=0, min_open=True), default=5.0, show_default=True,
              metavar="SECONDS", help="How long one request may take before it counts as unanswered.")
@click.option("--json", "json_path", type=click.Path(dir_okay=False, writable=True), default=None,
              metavar="PATH", help="Write the JSON report here.")
@click.option("--junit-xml", "junit_path", type=click.Path(dir_okay=False, writable=True), default=None,
              metavar="PATH", help="Write a JUnit XML report here (a test case per oracle and target).")
@click.option("--sarif", "sarif_path", type=click.Path(dir_okay=False, writable=True), default=None,
              metavar="PATH", help="Write a SARIF 2.1.0 report here (for GitHub code scanning).")
@click.option("--summary-md", "summary_path", type=click.Path(dir_okay=False, writable=True), default=None,
              metavar="PATH", help="Write a Markdown summary here (e.g. \"$GITHUB_STEP_SUMMARY\").")
@click.option("--oracles", default=None, metavar="IDS", help="Run only these oracles (comma-separated ids).")
@click.option("--exclude-oracles", default=None, metavar="IDS", help="Skip these oracles (comma-separated ids).")
@click.option("--fail-on", type=click.Choice(SEVERITIES), default="medium", show_default=True,
              help="Lowest severity that makes the exit status 1.")
@click.option("--protocol-version", default=None, callback=_check_version, metavar="VERSION",
              help="Force a protocol version instead of negotiating (e.g. 2025-06-18 or 2026-07-28).")
@click.option("--phases", default=",".join(RUN_PHASES), show_default=True, metavar="NAMES",
              help="Phases to run after the probe (comma-separated).")
@click.option("--include-tool", "include_tools", multiple=True, metavar="NAME",
              help="Call this tool even if it is annotated destructiveHint or openWorldHint (repeatable).")
@click.option("--exclude-tool", "exclude_tools", multiple=True, metavar="NAME",
              help="Never call this tool (repeatable).")
@click.option("--strict-types", is_flag=True, default=False,
              help="Also send type changes lax servers may coerce (\"5\" for 5, 1.5 for an integer, null).")
@click.option("--corpus", "corpus_dir", type=click.Path(file_okay=False), default="corpus", show_default=True,
              metavar="DIR", help="Corpus folder (Hypothesis' example database lives in DIR/.hypothesis).")
@click.option("--no-replay", is_flag=True, default=False,
              help="Do not replay the corpus before fuzzing (by default saved failures run first).")
@click.option("--log-frames", type=click.Path(dir_okay=False, writable=True), default=None, metavar="PATH",
              help="Write every frame sent, one per line, to PATH (same seed and options: same bytes).")
@click.option("--max-examples", type=click.IntRange(min=1), default=None, metavar="N",
              help="Cap each Hypothesis search at N examples (for runs that must be identical; default: time).")
@click.option("--grace", type=click.FloatRange(min=0), default=0.25, show_default=True, metavar="SECONDS",
              help="After a later request is answered, how long to still wait for a frame's own reply.")
@click.option("--max-line", type=click.IntRange(min=1024), default=8 * 1024 * 1024, show_default=True,
              metavar="BYTES", help="Longest stdout line parsed; longer lines are reported and skipped.")
@click.option("--env", "env_pairs", multiple=True, metavar="NAME=VALUE",
              help="Extra environment variable for the server (repeatable).")
@click.option("--header", "header_lines", multiple=True, metavar="'NAME: VALUE'",
              help="HTTP: header sent with every request, e.g. for auth (repeatable; values are never written).")
@click.option("--launch", default=None, metavar="'CMD'",
              help="HTTP: start the server with this shell-quoted command, restart it after crashes, watch it.")
@click.option("--transport", type=click.Choice(["auto", "http", "sse"]), default="auto", show_default=True,
              help="HTTP: streamable HTTP, legacy HTTP+SSE (2024-11-05), or detect from the URL's answers.")
@click.option("--compare", "compare_with", default=None, metavar="URL|'CMD'",
              help="Send the catalogue to this second server too and list every frame whose outcome differs.")
def run(server: tuple[str, ...], seed: int | None, budget: float, timeout: float, json_path: str | None,
        junit_path: str | None, sarif_path: str | None, summary_path: str | None, oracles: str | None,
        exclude_oracles: str | None, fail_on: str, protocol_version: str | None,
        phases: str, include_tools: tuple[str, ...], exclude_tools: tuple[str, ...], strict_types: bool,
        corpus_dir: str, no_replay: bool, log_frames: str | None, max_examples: int | None, grace: float,
        max_line: int, env_pairs: tuple[str, ...], header_lines: tuple[str, ...], launch: str | None,
        transport: str, compare_with: str | None) -> None:
    """Fuzz an MCP server: `mcpfuzz run [OPTIONS] -- CMD [ARGS]...` (stdio) or `mcpfuzz run [OPTIONS] URL`.

    A stdio server inherits mcpfuzz's environment and working directory. Exit status: 0 no findings
    at or above --fail-on, 1 findings, 2 usage error or unusable server.
    """
    command = list(server)
    if not command:
        raise click.UsageError("no server given. Put the server command after `--`, e.g.\n"
                               "  mcpfuzz run -- python my_server.py\nor give the URL of an HTTP server:\n"
                               "  mcpfuzz run http://127.0.0.1:8000/mcp")
    http = _http_target(command, header_lines, launch, transport)
    if http is not None:
        command = []
    both = sorted(set(include_tools) & set(exclude_tools))
    if both:
        raise click.BadParameter(f"{', '.join(both)} is both included and excluded; keep one of the two.",
                                 param_hint="--include-tool/--exclude-tool")
    selected = _select_oracles(oracles, exclude_oracles)
    phase_names = _parse_phases(phases)
    env = _parse_env(env_pairs)

    import secrets
    from pathlib import Path

    import anyio

    from mcpfuzz.engine.config import RunConfig
    from mcpfuzz.engine.runner import run as run_engine
    from mcpfuzz.oracles.base import Severity
    from mcpfuzz.report.console import ConsoleReporter
    from mcpfuzz.report.json_report import write_report

    config = RunConfig(command=command, seed=secrets.randbelow(2**32) if seed is None else seed, budget=budget,
                       timeout=timeout, grace=grace, oracles=tuple(selected), fail_on=Severity.parse(fail_on),
                       protocol_version=protocol_version, phases=("probe", *phase_names), max_line=max_line,
                       env=env, include_tools=include_tools, exclude_tools=exclude_tools, strict_types=strict_types,
                       corpus=_check_corpus(corpus_dir), replay_corpus=not no_replay,
                       log_frames=Path(log_frames) if log_frames else None, max_examples=max_examples, http=http)
    if compare_with is not None:
        _compare(config, compare_with)
    reporter = ConsoleReporter(config)
    finished = anyio.run(run_engine, config, reporter)
    if json_path:
        try:
            write_report(Path(json_path), config, finished)
        except OSError as error:
            click.echo(f"error: cannot write the JSON report to {json_path}: {error.strerror}", err=True)
            sys.exit(EXIT_ERROR)
    _write_ci_reports(config, finished, junit_path, sarif_path, summary_path)
    failing = [f for f in finished.findings if f.severity >= config.fail_on]
    if failing:
        sys.exit(EXIT_FINDINGS)
    sys.exit(EXIT_ERROR if finished.error else EXIT_CLEAN)


def _write_ci_reports(config: RunConfig, finished: RunFinished, junit_path: str | None, sarif_path: str | None,
                      summary_path: str | None) -> None:
    """Write the JUnit, SARIF and Markdown reports asked for, all from the JSON report's data (exit 2 on failure)."""
    if not (junit_path or sarif_path or summary_path):
        return
    from pathlib import Path

    from mcpfuzz.report.json_report import report_json
    from mcpfuzz.report.junit import write_junit
    from mcpfuzz.report.sarif import write_sarif
    from mcpfuzz.report.summary_md import write_summary

    report = report_json(config, finished)
    oracles = config.oracles
    writers = (("JUnit XML report", junit_path, lambda p: write_junit(p, report, oracles)),
               ("SARIF report", sarif_path, lambda p: write_sarif(p, report, oracles)),
               ("Markdown summary", summary_path, lambda p: write_summary(p, report)))
    for what, path, write in writers:
        if not path:
            continue
        try:
            write(Path(path))
        except OSError as error:
            click.echo(f"error: cannot write the {what} to {path}: {error.strerror}", err=True)
            sys.exit(EXIT_ERROR)


class _CommandAfterDashes(click.Command):
    """Keeps what follows `--` apart (the server command), so that paths and the command can both be given."""

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        if "--" in args:
            split = args.index("--")
            ctx.meta["server_command"] = args[split + 1:]
            args = args[:split]
        return super().parse_args(ctx, args)


@main.command(cls=_CommandAfterDashes)
@click.argument("paths", nargs=-1, type=click.Path(exists=True), metavar="[FILE|DIR]...")
@click.option("--timeout", type=click.FloatRange(min=0, min_open=True), default=5.0, show_default=True,
              metavar="SECONDS", help="How long one request may take before it counts as unanswered.")
@click.option("--env", "env_pairs", multiple=True, metavar="NAME=VALUE",
              help="Extra environment variable for the server (repeatable).")
@click.option("--header", "header_lines", multiple=True, metavar="'NAME: VALUE'",
              help="HTTP: header sent with every request (transcripts never hold header values).")
@click.pass_context
def replay(ctx: click.Context, paths: tuple[str, ...], timeout: float, env_pairs: tuple[str, ...],
           header_lines: tuple[str, ...]) -> None:
    """Re-run saved failures: `mcpfuzz replay [FILE|DIR]... [-- CMD [ARGS]... | -- URL]`.

    Each transcript is sent to a fresh server (its own command or URL, or the one given) and judged by the same
    oracles: FIXED, FAILED or ERROR. Exit status: 0 all fixed, 1 some still fail, 2 some could
    not be replayed. Without paths, ./corpus is replayed.
    """
    from dataclasses import replace
    from pathlib import Path

    import anyio

    from mcpfuzz.engine.replay import ERROR, FAILED, load_replayables, replay_one
    from mcpfuzz.engine.session import SessionOptions
    from mcpfuzz.oracles.base import all_oracles
    from mcpfuzz.report.replay_console import print_outcome
    from mcpfuzz.transport.http_target import HttpTarget

    override = ctx.meta.get("server_command") or []
    http_override = _http_target(override, header_lines, None, "auto") if override else None
    targets = [Path(p) for p in paths] or [Path("corpus")]
    if not paths and not targets[0].is_dir():
        raise click.UsageError("no transcript given and no ./corpus folder here; name a FILE or DIR to replay")
    replayables, outcomes = load_replayables(targets)
    if not replayables and not outcomes:
        click.echo(f"nothing to replay in {', '.join(str(t) for t in targets)}")
        sys.exit(EXIT_CLEAN)
    options = SessionOptions(timeout=timeout, env=_parse_env(env_pairs) or None)
    oracles = tuple(all_oracles())
    for outcome in outcomes:
        print_outcome(outcome)
    for replayable in replayables:
        server = http_override or list(override) or replayable.server
        if header_lines and isinstance(server, HttpTarget):
            server = replace(server, headers=_parse_headers(header_lines))
        outcome = anyio.run(replay_one, replayable, server, options, oracles)
        outcomes.append(outcome)
        print_outcome(outcome)
    statuses = [o.status for o in outcomes]
    counts = ", ".join(f"{statuses.count(s)} {s.lower()}" for s in ("FIXED", FAILED, ERROR))
    click.echo(f"replayed {len(statuses)} transcripts: {counts}")
    sys.exit(EXIT_FINDINGS if FAILED in statuses else EXIT_ERROR if ERROR in statuses else EXIT_CLEAN)


def _compare(config: RunConfig, other: str) -> None:
    """`run --compare`: the protocol phases against both servers; exit 1 when any frame's outcome differs."""
    import shlex
    from dataclasses import replace

    import anyio

    from mcpfuzz.engine.compare import compare
    from mcpfuzz.report.compare_console import print_comparison

    try:
        words = shlex.split(other)
    except ValueError as error:
        raise click.BadParameter(f"cannot split {other!r} into words: {error}", param_hint="--compare") from None
    if not words:
        raise click.BadParameter("give a URL or a server command to compare with", param_hint="--compare")
    http = _http_target(words, (), None, "auto")
    second = replace(config, command=[] if http else words, http=http)
    first_label, second_label = config.server_label, second.server_label
    click.echo(f"comparing\n  A: {first_label}\n  B: {second_label}\n(catalogue and lifecycle on each; seed "
               f"{config.seed})")
    comparison = anyio.run(compare, config, second, lambda event: None)
    for label, finished in (("A", comparison.first), ("B", comparison.second)):
        if finished.error:
            click.echo(f"error: server {label} could not be tested: {finished.error}", err=True)
            sys.exit(EXIT_ERROR)
    print_comparison(comparison, "A", "B")
    sys.exit(EXIT_FINDINGS if comparison.differences else EXIT_CLEAN)


def _http_target(server: list[str], header_lines: tuple[str, ...], launch: str | None, transport: str) -> object:
    """The HTTP target when SERVER is one URL; the HTTP-only options are refused for stdio servers."""
    import shlex
    from urllib.parse import urlsplit

    from mcpfuzz.transport.http_target import HttpTarget, is_url

    if not (len(server) == 1 and is_url(server[0])):
        if any(is_url(part) for part in server[:1]):
            raise click.UsageError("give either one URL or a command after `--`, not both")
        used = [name for name, value in (("--header", header_lines), ("--launch", launch),
                                         ("--transport", transport != "auto")) if value]
        if used:
            raise click.UsageError(f"{', '.join(used)} only applies to an HTTP URL; this server is a stdio command")
        return None
    try:
        argv = tuple(shlex.split(launch)) if launch else ()
    except ValueError as error:
        raise click.BadParameter(f"cannot split {launch!r} into words: {error}", param_hint="--launch") from None
    url = server[0]
    if not urlsplit(url).hostname:
        raise click.BadParameter(f"{url!r} has no host; e.g. http://127.0.0.1:8000/mcp", param_hint="URL")
    return HttpTarget(url, _parse_headers(header_lines), argv, transport)


def _parse_headers(lines: tuple[str, ...]) -> tuple[tuple[str, str], ...]:
    """`Name: value` lines as pairs, refused early when malformed."""
    headers = []
    for line in lines:
        name, sep, value = line.partition(":")
        if not sep or not name.strip() or any(c.isspace() for c in name.strip()):
            raise click.BadParameter(f"{line!r} is not 'Name: value'.", param_hint="--header")
        headers.append((name.strip(), value.strip()))
    return tuple(headers)


def _check_corpus(folder: str) -> object:
    """The corpus folder, refused early (exit 2) when it cannot be used."""
    from pathlib import Path

    from mcpfuzz.corpus.store import CorpusError, CorpusStore

    try:
        CorpusStore(Path(folder))
    except CorpusError as error:
        raise click.BadParameter(str(error), param_hint="--corpus") from None
    return Path(folder)


@main.command("oracles")
def list_oracles() -> None:
    """List the oracle ids and what each one checks."""
    from mcpfuzz.oracles.base import all_oracles

    for oracle in all_oracles().values():
        click.echo(f"{oracle.id:<22} {oracle.title}")


def _select_oracles(only: str | None, exclude: str | None) -> list[str]:
    chosen = _parse_oracle_list(only, "--oracles") or _oracle_ids()
    skipped = set(_parse_oracle_list(exclude, "--exclude-oracles"))
    selected = [o for o in chosen if o not in skipped]
    if not selected:
        raise click.BadParameter("no oracle left to run after --exclude-oracles.", param_hint="--exclude-oracles")
    return selected


def _parse_phases(value: str) -> list[str]:
    known = RUN_PHASES
    names = [part.strip() for part in value.split(",") if part.strip()]
    for name in names:
        if name not in known:
            raise click.BadParameter(f"unknown phase {name!r}; phases are {', '.join(known)}.",
                                     param_hint="--phases")
    return names


def _parse_env(pairs: tuple[str, ...]) -> dict[str, str]:
    env = {}
    for pair in pairs:
        name, sep, value = pair.partition("=")
        if not sep or not name:
            raise click.BadParameter(f"{pair!r} is not NAME=VALUE.", param_hint="--env")
        env[name] = value
    return env


if __name__ == "__main__":
    main()
