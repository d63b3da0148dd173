"""`mcpfuzz lint`: static checks of what a server declares, in seconds; text, JSON or SARIF."""

from __future__ import annotations

import sys
from collections.abc import Callable
from typing import Any

import click

from mcpfuzz.cli.config_file import applied_config, config_file_option
from mcpfuzz.cli.durations import Seconds
from mcpfuzz.cli.help_sections import SectionedCommand
from mcpfuzz.cli.options import EXIT_CLEAN, EXIT_ERROR, EXIT_FINDINGS, http_target, parse_env
from mcpfuzz.transport.base import AUTO, TRANSPORT_CHOICES

FORMATS = ("text", "json", "sarif")


@click.command(cls=SectionedCommand, context_settings={"ignore_unknown_options": False})
@click.argument("server", nargs=-1, type=click.UNPROCESSED, metavar="URL | -- CMD [ARGS]...")
@click.option("--format", "output_format", type=click.Choice(FORMATS), default="text", show_default=True,
              help="text for people, json for scripts, sarif (2.1.0) for code scanning.")
@click.option("--output", "output_path", type=click.Path(dir_okay=False, writable=True), default=None,
              metavar="PATH", help="Write the report here instead of stdout.")
@click.option("--strict", is_flag=True, default=False, help="Warnings fail too (exit status 1).")
@click.option("--rules", "list_rules", is_flag=True, default=False, help="List every rule and exit.")
@click.option("--timeout", type=Seconds(min=0, min_open=True), default=5.0, show_default=True, metavar="DURATION",
              help="How long one request may take before it counts as unanswered.")
@click.option("--budget", type=Seconds(min=0, min_open=True), default=60.0, show_default=True, metavar="DURATION",
              help="Wall-clock cap for the whole lint.")
@click.option("--protocol-version", default=None, metavar="VERSION",
              help="Force a protocol version instead of negotiating.")
@click.option("--env", "env_pairs", multiple=True, metavar="NAME=VALUE",
              help="Extra environment variable for the server (repeatable).")
@click.option("--header", "header_lines", multiple=True, metavar="'NAME: VALUE'",
              help="HTTP: header sent with every request (repeatable).")
@click.option("--launch", default=None, metavar="'CMD'", help="HTTP: start the server with this command.")
@click.option("--transport", type=click.Choice(TRANSPORT_CHOICES), default=AUTO, show_default=True,
              help="HTTP: streamable HTTP, legacy HTTP+SSE, or detect.")
@click.option("--servers-file", type=click.Path(dir_okay=False, exists=True), default=None, metavar="FILE",
              help="Take the server from an MCP client's config (mcpServers or VS Code's servers JSON).")
@click.option("--server", "server_name", default=None, metavar="NAME",
              help="With --servers-file: the server to lint, launched as the client launches it.")
@config_file_option
def lint(server: tuple[str, ...], output_format: str, output_path: str | None, strict: bool, list_rules: bool,
         timeout: float, budget: float, protocol_version: str | None, env_pairs: tuple[str, ...],
         header_lines: tuple[str, ...], launch: str | None, transport: str, servers_file: str | None,
         server_name: str | None) -> None:
    """Check what a server declares, without fuzzing: `mcpfuzz lint [OPTIONS] -- CMD [ARGS]...` or `... URL`.

    Without a server, the config file's `command` or `url` is linted. Exit status: 0 no errors (and no
    warnings with --strict), 1 errors (or warnings with --strict), 2 usage error or a server that could
    not be linted.
    """
    if list_rules:
        from mcpfuzz.report.lint_report import rules_text

        click.echo(rules_text())
        sys.exit(EXIT_CLEAN)
    import os

    from mcpfuzz.cli.servers_file import resolve_server

    given = {"servers_file": servers_file, "server_name": server_name, "env_pairs": env_pairs,
             "header_lines": header_lines, "transport": transport}
    server, chosen, secrets = resolve_server(server, given, os.environ)
    env_pairs, header_lines, transport = chosen["env_pairs"], chosen["header_lines"], chosen["transport"]
    if not server:
        raise click.UsageError("no server given. Put the server command after `--`, e.g.\n"
                               "  mcpfuzz lint -- python my_server.py\nor give the URL of an HTTP server:\n"
                               "  mcpfuzz lint http://127.0.0.1:8000/mcp\nor name one with --servers-file FILE "
                               "--server NAME, or set `command` or `url` in mcpfuzz.toml\n"
                               "(`mcpfuzz lint --rules` lists the rules)")
    _check_version(protocol_version)
    target: Any = http_target(list(server), header_lines, launch, transport, parse_env(env_pairs))
    if target is None:
        from mcpfuzz.transport.stdio_target import StdioTarget

        target = StdioTarget(tuple(server))
    import anyio

    from mcpfuzz.corpus.redact import Redactor
    from mcpfuzz.engine.lint_run import lint_server
    from mcpfuzz.engine.session.session import SessionOptions

    config = applied_config()
    # Values taken from the environment (the config file's ${VAR}, a servers file's env) are never shown.
    redact = Redactor((*(config.secrets if config else ()), *secrets)).known
    options = SessionOptions(timeout=timeout, env=parse_env(env_pairs) or None)
    outcome = anyio.run(lambda: lint_server(target, options, forced_version=protocol_version, budget=budget))
    if outcome.error:
        if output_format != "text" or output_path:  # the JSON and SARIF reports say why too, for CI
            _write(output_format, output_path, outcome, redact)
        click.echo(redact(f"error: the server could not be linted: {outcome.error}"), err=True)
        sys.exit(EXIT_ERROR)
    _write(output_format, output_path, outcome, redact)
    failing = {"error", "warning"} if strict else {"error"}
    sys.exit(EXIT_FINDINGS if any(str(p.severity) in failing for p in outcome.problems) else EXIT_CLEAN)


def _check_version(version: str | None) -> None:
    from mcpfuzz.jsonrpc.versions import KNOWN_VERSIONS

    if version is not None and version not in KNOWN_VERSIONS:
        raise click.BadParameter(f"{version!r} is not an MCP protocol version mcpfuzz knows; use one of "
                                 f"{', '.join(KNOWN_VERSIONS)}.", param_hint="--protocol-version")


def _write(output_format: str, output_path: str | None, outcome: Any, redact: Callable[[str], str]) -> None:
    """The report in its format, to the file (atomically) or stdout."""
    import json

    from mcpfuzz.report.lint_report import lint_json, lint_sarif, lint_text

    if output_format == "text":
        text = lint_text(outcome)
    else:
        text = json.dumps(lint_json(outcome) if output_format == "json" else lint_sarif(outcome), indent=2)
    text = redact(text)
    if output_path is None:
        click.echo(text)
        return
    from pathlib import Path

    from mcpfuzz.report.json_report import write_atomic

    try:
        write_atomic(Path(output_path), text + "\n")
    except OSError as error:
        click.echo(f"error: cannot write {output_path}: {error.strerror or error}", err=True)
        sys.exit(EXIT_ERROR)
