"""`mcpfuzz run --servers-file FILE --all-servers`: every server of a client's config, one run each."""

from __future__ import annotations

import functools
import os
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from mcpfuzz.cli.options import EXIT_CLEAN, EXIT_ERROR, EXIT_FINDINGS, build_config, exit_status
from mcpfuzz.cli.reporting import Reporting
from mcpfuzz.cli.servers_file import read_servers

if TYPE_CHECKING:
    from mcpfuzz.engine.config import RunConfig
    from mcpfuzz.engine.events import EventSink, RunFinished

# Report options whose file names get the server's name, so that runs do not overwrite each other.
REPORT_PATHS = ("json_path", "junit_path", "sarif_path", "summary_path", "html_path", "events_path", "log_frames")


def run_all_servers(server: tuple[str, ...], budget: float, compare_with: str | None,
                    options: dict[str, Any]) -> int:
    """Run each enabled server in turn; the exit status is the worst one (findings before errors)."""
    if not options.get("servers_file"):
        raise click.UsageError("--all-servers fuzzes the servers of a servers file; tip: add --servers-file FILE")
    if server or options.get("server_name"):
        raise click.UsageError("--all-servers runs every server of the file; leave out --server and SERVER")
    if compare_with is not None:
        raise click.UsageError("--compare compares two servers; leave out --all-servers")
    if options.get("events_path") == "-":
        raise click.UsageError("--events - streams one run; with --all-servers give a file name")
    entries = [entry for entry in read_servers(Path(options["servers_file"]), os.environ).values()
               if not entry.disabled]
    if not entries:
        raise click.UsageError(f"{options['servers_file']} has no enabled server to fuzz")

    statuses = []
    for entry in entries:
        click.echo(f"== server {entry.name}", err=True)
        own = {**options, "server_name": entry.name,
               "corpus_dir": str(Path(options["corpus_dir"]) / file_safe(entry.name))}
        for key in REPORT_PATHS:
            if own.get(key):
                own[key] = per_server_path(own[key], entry.name)
        config = build_config((), budget, own)
        reporting = Reporting(config, own)
        finished = reporting.run(functools.partial(_run_engine, config))
        reporting.exit_on_problem()
        statuses.append(exit_status(config, finished))
    return EXIT_FINDINGS if EXIT_FINDINGS in statuses else EXIT_ERROR if EXIT_ERROR in statuses else EXIT_CLEAN


def per_server_path(path: str, name: str) -> str:
    """`mcpfuzz.json` as `mcpfuzz.NAME.json`: one report file per server."""
    given = Path(path)
    return str(given.with_name(f"{given.stem}.{file_safe(name)}{given.suffix}"))


def file_safe(name: str) -> str:
    """A server's name as one file or folder name (names are free text in clients' files)."""
    safe = "".join(c if c.isalnum() or c in "-_" else "_" for c in name)
    return safe or "server"


def _run_engine(config: RunConfig, sink: EventSink) -> RunFinished:
    import anyio

    from mcpfuzz.engine.runner import run as run_engine

    return anyio.run(run_engine, config, sink)
