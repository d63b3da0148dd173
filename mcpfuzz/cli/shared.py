"""`mcpfuzz status` and `mcpfuzz report`: the shared search's live machines, and its merged reports and corpus."""

from __future__ import annotations

import sys
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, TypeVar

import click

from mcpfuzz.cli.options import EXIT_ERROR, SEVERITIES

if TYPE_CHECKING:
    from mcpfuzz.engine.shared.link import SharedLink

T = TypeVar("T")


def _store_options(command: Callable[..., Any]) -> Callable[..., Any]:
    """--shared (required here) and --shared-prefix."""
    command = click.option("--shared-prefix", default="mcpfuzz", show_default=True, metavar="NAME",
                           help="Prefix the soaks wrote their keys under.")(command)
    return click.option("--shared", "shared_url", required=True, metavar="URL", envvar="MCPFUZZ_SHARED",
                        help="The Redis the soaks share: redis://[:PASSWORD@]HOST:PORT/DB or rediss:// "
                             "(also $MCPFUZZ_SHARED).")(command)


def _connect(url: str, prefix: str) -> SharedLink:
    """A checked link to the store; exit 2 with why when the URL is wrong or Redis does not answer."""
    from mcpfuzz.engine.shared.link import SharedLink, SharedUnavailable
    from mcpfuzz.engine.shared.options import SharedOptions, SharedUrlError, check_prefix, check_url

    try:
        check_url(url)
        check_prefix(prefix)
    except SharedUrlError as error:
        raise click.BadParameter(str(error), param_hint="--shared") from None
    try:
        link = SharedLink(SharedOptions(url=url, prefix=prefix))
        link.check()
    except SharedUnavailable as error:
        click.echo(f"error: {str(error).replace('; --shared-optional soaks locally meanwhile', '')}", err=True)
        sys.exit(EXIT_ERROR)
    return link


def _read(link: SharedLink, read: Callable[[SharedLink], T]) -> T:
    """`read(link)`, or exit 2 when Redis stops answering half-way."""
    from redis.exceptions import RedisError

    from mcpfuzz.engine.shared.link import describe

    try:
        return read(link)
    except RedisError as error:
        click.echo(f"error: the shared store {link.options.label} stopped answering: "
                   f"{describe(error, link.options)}", err=True)
        sys.exit(EXIT_ERROR)


@click.command("status")
@_store_options
def status(shared_url: str, shared_prefix: str) -> None:
    """Show the machines soaking on a shared store: their cases, findings and when each was last seen."""
    from mcpfuzz.engine.shared.merged import read_counters, read_machines

    link = _connect(shared_url, shared_prefix)
    machines = _read(link, read_machines)
    counters = _read(link, read_counters)
    click.echo(f"shared store {link.options.label}, prefix {shared_prefix}: {len(machines)} machines live, "
               f"{counters['findings']} findings, {counters['slices']} slices, {counters['workers']} worker numbers "
               "handed out")
    if machines:
        click.echo(f"{'#':>3}  {'machine':<36} {'state':<9} {'cases':>9} {'findings':>8}  {'last seen':>9}  target")
    for machine in machines:
        record = machine.record
        number = "?" if record.get("number") is None else str(record["number"])
        lead = "*" if record.get("lead") else " "
        click.echo(f"{number:>3}{lead} {str(record.get('machine'))[:36]:<36} {str(record.get('state')):<9} "
                   f"{int(record.get('cases') or 0):>9} {int(record.get('findings') or 0):>8}  "
                   f"{machine.seen_ago:>7.0f}s  {record.get('target') or '-'}")
    link.close()


@click.command("report")
@_store_options
@click.option("--json", "json_path", type=click.Path(dir_okay=False), default=None, metavar="PATH",
              help="Write the merged JSON report here.")
@click.option("--junit-xml", "junit_path", type=click.Path(dir_okay=False), default=None, metavar="PATH",
              help="Write the merged JUnit XML report here.")
@click.option("--sarif", "sarif_path", type=click.Path(dir_okay=False), default=None, metavar="PATH",
              help="Write the merged SARIF 2.1.0 report here.")
@click.option("--summary-md", "summary_path", type=click.Path(dir_okay=False), default=None, metavar="PATH",
              help="Write the merged Markdown summary here.")
@click.option("--html", "html_path", type=click.Path(dir_okay=False), default=None, metavar="PATH",
              help="Write the merged HTML report here (the findings; the charts are each machine's own).")
@click.option("--export", "export_dir", type=click.Path(file_okay=False), default=None, metavar="DIR",
              help="Write every shared finding as a corpus transcript into DIR (what `mcpfuzz replay DIR` reads).")
@click.option("--fail-on", type=click.Choice(SEVERITIES), default="medium", show_default=True,
              help="Lowest severity that makes the exit status 1.")
def report(shared_url: str, shared_prefix: str, json_path: str | None, junit_path: str | None,
           sarif_path: str | None, summary_path: str | None, html_path: str | None, export_dir: str | None,
           fail_on: str) -> None:
    """Merge what every machine of a shared search found: one report, each finding once, and its corpus.

    Exit status: 0 no finding at or above --fail-on, 1 findings, 2 the store cannot be read or a file written.
    """
    import shlex
    from dataclasses import replace
    from pathlib import Path

    from mcpfuzz.cli.options import exit_status
    from mcpfuzz.corpus.store import CorpusError
    from mcpfuzz.engine.config import RunConfig
    from mcpfuzz.engine.shared.merged import export_corpus, merge
    from mcpfuzz.oracles.base import Severity, all_oracles
    from mcpfuzz.report.files import ReportFiles, ReportPaths
    from mcpfuzz.transport.http_target import HttpTarget
    from mcpfuzz.transport.stdio_target import StdioTarget

    link = _connect(shared_url, shared_prefix)
    merged = _read(link, merge)
    link.close()
    server = merged.server
    config = RunConfig(command=list(server.command) if isinstance(server, StdioTarget)
                       else shlex.split(merged.server_label or "server"),
                       http=server if isinstance(server, HttpTarget) else None, seed=merged.seed,
                       oracles=tuple(all_oracles()), fail_on=Severity.parse(fail_on), corpus=None)
    finished = merged.finished
    if export_dir is not None:
        try:
            finished = replace(finished, corpus_paths=export_corpus(merged.findings, Path(export_dir)))
        except (OSError, CorpusError) as error:
            click.echo(f"error: cannot export the shared corpus to {export_dir}: {error}", err=True)
            sys.exit(EXIT_ERROR)
    files = ReportFiles(config.public(), ReportPaths(json_path, junit_path, sarif_path, summary_path, html_path),
                        events=False)
    problem = files.write(finished)
    if problem:
        click.echo(f"error: {problem}", err=True)
        sys.exit(EXIT_ERROR)
    machines = (finished.stats.soak or {}).get("machines", 0)
    if not machines and not finished.findings:
        click.echo(f"warning: nothing under the prefix {shared_prefix!r} in {link.options.label}; check "
                   "--shared-prefix (the soaks' own) and --shared", err=True)
    click.echo(f"{len(finished.findings)} findings from {machines} machines ({finished.stats.cases} cases) in "
               f"{link.options.label}, prefix {shared_prefix}" +
               (f"; transcripts in {export_dir}" if export_dir is not None else ""))
    for finding in finished.findings:
        verified = "verified" if finding.reproducible else "unverified"
        click.echo(f"  {finding.severity!s:<8} {finding.oracle:<20} {finding.target}  ({verified})")
    sys.exit(exit_status(config, finished))
