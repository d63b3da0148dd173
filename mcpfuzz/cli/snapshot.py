"""`mcpfuzz snapshot`: write the server's declared surface to a file, or check it against one (`--check FILE`)."""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from mcpfuzz.cli.config_file import config_file_option
from mcpfuzz.cli.durations import Seconds
from mcpfuzz.cli.help_sections import SectionedCommand
from mcpfuzz.cli.options import EXIT_CLEAN, EXIT_ERROR, EXIT_FINDINGS, build_config
from mcpfuzz.cli.targets import with_run_defaults

if TYPE_CHECKING:
    from mcpfuzz.engine.config import RunConfig
    from mcpfuzz.report.snapshot_report import CheckResult

FAIL_ON_CHOICES = ("breaking", "compatible", "any")
# The options of `run` that decide how the server is started and spoken to; a snapshot plans no target.
SERVER_PARAMS = frozenset({"timeout", "startup_timeout", "protocol_version", "cwd", "env_pairs", "header_lines",
                           "launch", "transport", "servers_file", "server_name", "max_line"})
# The check's own report paths: not read from a config file's top level, where `json`, `sarif` and `junit-xml`
# name the run's reports (one file must not receive two reports).
REPORT_PARAMS = ("check_json_path", "check_sarif_path", "check_junit_path")


def _server_params(command: Callable[..., Any]) -> Callable[..., Any]:
    from mcpfuzz.cli.targets import _run_params

    params: Any = command
    params.__click_params__ = [*getattr(command, "__click_params__", []),
                               *(param for param in _run_params() if param.name in SERVER_PARAMS)]
    return command


def snapshot_run_options(command: Callable[..., Any]) -> Callable[..., Any]:
    """`run --snapshot FILE` and `--fail-on-change`: the surface checked against FILE as part of the run."""
    command = click.option("--fail-on-change", "fail_on_change", type=click.Choice(FAIL_ON_CHOICES),
                           default="breaking", show_default=True,
                           help="With --snapshot: the least change of the surface that makes the exit status 1 "
                                "(breaking, compatible, any).")(command)
    return click.option("--snapshot", "snapshot_path", type=click.Path(dir_okay=False, exists=True), default=None,
                        metavar="FILE", help="Also check the server's surface against this snapshot (written by "
                        "`mcpfuzz snapshot`); a change at or above --fail-on-change fails the run.")(command)


@click.command("snapshot", cls=SectionedCommand, context_settings={"ignore_unknown_options": False})
@click.argument("server", nargs=-1, type=click.UNPROCESSED, metavar="URL | -- CMD [ARGS]...")
@click.option("-o", "--output", "output_path", type=click.Path(dir_okay=False, writable=True), default=None,
              metavar="PATH", help="Write the snapshot here instead of stdout.")
@click.option("--check", "check_path", type=click.Path(dir_okay=False), default=None, metavar="FILE",
              help="Compare the server with this snapshot: every change ranked breaking, compatible or cosmetic.")
@click.option("--update", is_flag=True, default=False,
              help="With --check: show the changes, then write the server's surface to FILE (exit 0).")
@click.option("--fail-on-change", "--fail-on", "fail_on_change", type=click.Choice(FAIL_ON_CHOICES),
              default="breaking", show_default=True,
              help="The least change that makes the exit status 1: breaking, compatible (breaking too) or any "
                   "(cosmetic too).")
@click.option("--json", "check_json_path", type=click.Path(dir_okay=False, writable=True), default=None,
              metavar="PATH", help="With --check: write the changes as JSON here.")
@click.option("--sarif", "check_sarif_path", type=click.Path(dir_okay=False, writable=True), default=None,
              metavar="PATH", help="With --check: write a SARIF 2.1.0 report here (a result per change).")
@click.option("--junit-xml", "check_junit_path", type=click.Path(dir_okay=False, writable=True), default=None,
              metavar="PATH", help="With --check: write a JUnit XML report here (a test case per tool, prompt ...).")
@click.option("--budget", type=Seconds(min=0, min_open=True), default=60.0, show_default=True, metavar="DURATION",
              help="Wall-clock cap for starting the server and reading its surface.")
@_server_params
@config_file_option
def snapshot(server: tuple[str, ...], output_path: str | None, check_path: str | None, update: bool,
             fail_on_change: str, check_json_path: str | None, check_sarif_path: str | None,
             check_junit_path: str | None, budget: float, **options: Any) -> None:
    """Record or check the server's declared surface: `mcpfuzz snapshot [OPTIONS] -- CMD [ARGS]...` or `... URL`.

    Without --check, prints the surface (server info, capabilities, tools with their schemas and annotations,
    prompts, resources, templates) as sorted JSON for a repository to commit. With --check FILE, compares the
    server with FILE and lists each change. Exit status: 0 no change at or above --fail-on-change (or --update),
    1 such changes, 2 usage error, unreadable snapshot or a server that could not be read.
    """
    if update and check_path is None:
        raise click.UsageError("--update rewrites the snapshot that --check names; give --check FILE")
    if check_path is not None and output_path is not None:
        raise click.UsageError("--check compares with FILE (and --update rewrites it); --output writes a new "
                               "snapshot: give one of them")
    reports = (check_json_path, check_sarif_path, check_junit_path)
    if check_path is None and any(reports):
        raise click.UsageError("--json, --sarif and --junit-xml report a check; give --check FILE")
    config = build_config(server, budget, with_run_defaults(options))
    surface = read_surface(config)
    if check_path is None:
        _write_surface(surface, output_path)
        sys.exit(EXIT_CLEAN)
    result = check_file(Path(check_path), surface, config, fail_on_change, update=update)
    write_reports(result, surface, *reports)
    sys.exit(EXIT_FINDINGS if result.failing() and not update else EXIT_CLEAN)


def read_surface(config: RunConfig) -> dict[str, Any]:
    """The server's surface; exit 2 with why when it could not be read."""
    import anyio

    from mcpfuzz.engine.snapshot.capture import capture

    outcome = anyio.run(capture, config)
    if outcome.surface is None:
        click.echo(f"error: the server's surface could not be read: {outcome.error}", err=True)
        sys.exit(EXIT_ERROR)
    for note in outcome.notes:
        click.echo(f"note: {note}", err=True)
    return outcome.surface


def _write_surface(surface: dict[str, Any], path: str | None) -> None:
    from mcpfuzz.engine.snapshot.surface import dumps

    text = dumps(surface)
    if path is None:
        click.echo(text, nl=False)
        return
    _write(Path(path), text)
    click.echo(f"wrote the surface of {surface['server'].get('name', 'the server')} to {path}: "
               f"{_sizes(surface)}", err=True)


def _sizes(surface: dict[str, Any]) -> str:
    from mcpfuzz.engine.snapshot.surface import SECTIONS
    from mcpfuzz.report.plural import counted

    # A section is named as the list method calls it ("resourceTemplates"): one item reads in the singular.
    return ", ".join(counted(len(surface.get(section, {})), section.removesuffix("s")) for section in SECTIONS)


def _write(path: Path, text: str) -> None:
    from mcpfuzz.report.json_report import write_atomic

    try:
        write_atomic(path, text)
    except OSError as error:
        click.echo(f"error: cannot write {path}: {error.strerror or error}", err=True)
        sys.exit(EXIT_ERROR)


def check_file(path: Path, surface: dict[str, Any], config: RunConfig, fail_on: str, *,
               update: bool = False) -> CheckResult:
    """Compare `surface` with the snapshot at `path` and print the diff; with `update` the file then holds it."""
    from mcpfuzz.engine.snapshot.changes import compare
    from mcpfuzz.engine.snapshot.surface import SnapshotError, dumps, loads
    from mcpfuzz.report.snapshot_report import CheckResult, check_text

    server = config.public().server_label
    if not path.is_file():
        if update:
            _write(path, dumps(surface))
            click.echo(f"wrote a new snapshot {path}: {_sizes(surface)}")
            return CheckResult(str(path), server, (), fail_on)
        click.echo(f"error: no snapshot at {path}; tip: write it with `mcpfuzz snapshot --check {path} --update` "
                   "(or --output) and commit it", err=True)
        sys.exit(EXIT_ERROR)
    try:
        old = loads(path.read_text(encoding="utf-8"), str(path))
    except (OSError, UnicodeDecodeError) as error:
        click.echo(f"error: cannot read {path}: {error}", err=True)
        sys.exit(EXIT_ERROR)
    except SnapshotError as error:
        click.echo(f"error: {error}", err=True)
        sys.exit(EXIT_ERROR)
    result = CheckResult(str(path), server, tuple(compare(old, surface)), fail_on)
    click.echo(check_text(result))
    if update and result.changes:
        _write(path, dumps(surface))
        click.echo(f"updated {path} (review the diff above before committing it)")
    return result


def write_reports(result: CheckResult, surface: dict[str, Any], json_path: str | None, sarif_path: str | None,
                  junit_path: str | None) -> None:
    """The check's JSON, SARIF and JUnit reports, each where asked."""
    import json

    from mcpfuzz.report.snapshot_report import check_json, check_junit, check_sarif, surface_items

    if json_path:
        _write(Path(json_path), json.dumps(check_json(result), indent=2, ensure_ascii=False) + "\n")
    if sarif_path:
        _write(Path(sarif_path), json.dumps(check_sarif(result), indent=2, ensure_ascii=False) + "\n")
    if junit_path:
        _write(Path(junit_path), check_junit(result, surface_items(surface, *_old_items(result))))


def _old_items(result: CheckResult) -> list[dict[str, Any]]:
    """The removed items' sections, so that the JUnit report keeps a (failed) case for each."""
    from mcpfuzz.engine.snapshot.surface import KIND_OF_SECTION

    sections = {kind: section for section, kind in KIND_OF_SECTION.items()}
    old: dict[str, Any] = {}
    for change in result.changes:
        kind, _, name = change.item.partition("/")
        if kind in sections and name:
            old.setdefault(sections[kind], {})[name] = True
    return [old]


def snapshot_in_run(config: RunConfig, path: str, fail_on: str) -> tuple[CheckResult, dict[str, Any]]:
    """`run --snapshot FILE`: read the surface and print the check, before the run; the check and the surface."""
    from dataclasses import replace

    from mcpfuzz.cli.probed import writing_nothing

    surface = read_surface(replace(writing_nothing(config), budget=min(config.budget, 60.0)))
    return check_file(Path(path), surface, config, fail_on), surface


def add_to_run_reports(result: CheckResult, surface: dict[str, Any], options: dict[str, Any]) -> None:
    """The check in the run's own reports: `snapshot` in the JSON report, a second run in the SARIF log (its rules
    the change codes), a `mcpfuzz.snapshot` suite in the JUnit XML. A report the run did not write is left alone."""
    import json
    import xml.etree.ElementTree as ET

    from mcpfuzz.report.snapshot_report import check_json, check_junit, check_sarif, surface_items

    json_path, sarif_path, junit_path = (options.get(key) for key in ("json_path", "sarif_path", "junit_path"))
    if json_path and Path(json_path).is_file():
        report = json.loads(Path(json_path).read_text(encoding="utf-8"))
        report["snapshot"] = check_json(result)
        _write(Path(json_path), json.dumps(report, indent=2, ensure_ascii=False) + "\n")
    if sarif_path and Path(sarif_path).is_file():
        log = json.loads(Path(sarif_path).read_text(encoding="utf-8"))
        log["runs"].append(check_sarif(result)["runs"][0])
        _write(Path(sarif_path), json.dumps(log, indent=2, ensure_ascii=False) + "\n")
    if junit_path and Path(junit_path).is_file():
        tree = ET.parse(junit_path)
        root = tree.getroot()
        suite = ET.fromstring(check_junit(result, surface_items(surface, *_old_items(result)))).find("testsuite")
        if root.tag == "testsuites" and suite is not None:
            root.append(suite)
            for attribute in ("tests", "failures"):
                root.set(attribute, str(int(root.get(attribute, "0")) + int(suite.get(attribute, "0"))))
            ET.indent(root)
            _write(Path(junit_path), '<?xml version="1.0" encoding="UTF-8"?>\n' +
                   ET.tostring(root, encoding="unicode") + "\n")
