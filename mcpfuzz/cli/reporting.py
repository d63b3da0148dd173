"""The handlers `run` and `soak` report through, built from their options, and the run driven through them."""

from __future__ import annotations

import sys
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import click

from mcpfuzz.cli.options import EXIT_ERROR

if TYPE_CHECKING:
    from mcpfuzz.engine.config import RunConfig
    from mcpfuzz.engine.events import EventSink, RunFinished
    from mcpfuzz.report.banner import Banner
    from mcpfuzz.report.console import ConsoleReporter
    from mcpfuzz.report.event_log import EventLog
    from mcpfuzz.report.files import ReportFiles
    from mcpfuzz.report.handlers import FanOut

# `--events -`: the event stream on stdout (report.event_log.STDOUT, not imported: it brings the engine's events).
EVENTS_ON_STDOUT = "-"


class Reporting:
    """The console, the report files asked for and the `--events` stream, fed by one fan-out sink."""

    def __init__(self, config: RunConfig, options: dict[str, Any], *, banner_first: bool = False) -> None:
        """`banner_first`: write the run's banner now, before rich and the reporters are imported (`run`)."""
        if options.get("quiet") and options.get("verbose"):
            raise click.UsageError("-q and -v ask for opposite things; give one of them")
        events_path = options["events_path"]
        # `--events -` keeps stdout for the stream alone: the console moves to stderr.
        to_stderr = events_path == EVENTS_ON_STDOUT
        shown = opening_banner(config) if banner_first else None
        if shown is not None:
            from mcpfuzz.report.banner import write_banner

            shown = shown if write_banner(shown, sys.stderr if to_stderr else sys.stdout) else None

        from rich.console import Console

        from mcpfuzz.report.console import ConsoleReporter
        from mcpfuzz.report.event_log import EventLog
        from mcpfuzz.report.files import ReportFiles, ReportPaths
        from mcpfuzz.report.finding_console import Verbosity
        from mcpfuzz.report.handlers import EventHandler, FanOut

        # Handlers see the run as reports may show it; the events reach them redacted by the engine.
        config = config.public()
        console = Console(highlight=False, soft_wrap=True, stderr=True) if to_stderr else None
        self.files: ReportFiles = ReportFiles(config, ReportPaths(
            options["json_path"], options["junit_path"], options["sarif_path"], options["summary_path"],
            options.get("html_path")),
            warn=lambda problem: click.echo(f"warning: {problem}", err=True))
        self.log: EventLog | None = EventLog(config, events_path) if events_path else None
        verbosity = Verbosity.QUIET if options.get("quiet") else \
            Verbosity.VERBOSE if options.get("verbose") else Verbosity.NORMAL
        self.console: ConsoleReporter = ConsoleReporter(config, console, verbosity=verbosity,
                                                        program=invoked_as(sys.argv[0]), shown=shown)
        handlers: list[EventHandler] = [self.console, self.files]
        if self.log is not None:
            handlers.append(self.log)
        self.sink: FanOut = FanOut(handlers)

    def run(self, engine: Callable[[EventSink], RunFinished]) -> RunFinished:
        """Start the handlers (exit 2 when the event stream cannot be opened), run, finish them whatever happens."""
        try:
            self.sink.start()
        except OSError as error:
            path = self.log.path if self.log is not None else "?"
            click.echo(f"error: cannot write the event stream to {path}: {error.strerror or error}", err=True)
            sys.exit(EXIT_ERROR)
        try:
            finished = engine(self.sink)
        finally:
            self.sink.finish()
        self._point_to_html()
        return finished

    def _point_to_html(self) -> None:
        """The page a person opens after the run, under the console's closing lines (once it is written)."""
        path = self.files.paths.html
        if path and not self.files.problem:
            from pathlib import Path

            from mcpfuzz.report.terminal_text import escape

            if not Path(path).is_file():
                return  # the run ended before its report (an error of mcpfuzz's own was shown)

            self.console.console.print(f"HTML report: {escape(path)}", style="dim")

    def exit_on_problem(self) -> None:
        """Exit 2 when a report or the event stream could not be written."""
        problem = self.files.problem or (self.log.problem if self.log is not None else "")
        if problem:
            click.echo(f"error: {problem}", err=True)
            sys.exit(EXIT_ERROR)


def opening_banner(config: RunConfig) -> Banner | None:
    """The banner the run's `RunStarted` will carry, told before the engine is imported; None when the server's
    command names the workspace --security makes when the run starts."""
    from mcpfuzz.engine.security.placeholder import WORKSPACE_PLACEHOLDER

    if config.security and WORKSPACE_PLACEHOLDER in config.server_label:
        return None
    from mcpfuzz.corpus.redact import Redactor
    from mcpfuzz.report.banner import Banner

    # As the run's sink redacts its events: with the configuration's secrets.
    server = Redactor(config.secrets).text(config.server_label)
    return Banner(server, config.seed, config.budget, config.timeout, len(config.judged().oracles))


def invoked_as(argv0: str) -> str:
    """How mcpfuzz was started, so printed commands work when pasted into the same shell (no venv activated)."""
    import os
    import shlex
    from pathlib import Path

    def near(path: str) -> str:
        relative = os.path.relpath(path)
        return shlex.quote(path if relative.startswith("..") else relative)

    name = Path(argv0).name
    if name == "__main__.py":
        module = "mcpfuzz.cli" if Path(argv0).parent.name == "cli" else "mcpfuzz"
        return f"{near(sys.executable)} -m {module}"
    if name.startswith("mcpfuzz") and os.sep in argv0:
        return near(argv0)
    return "mcpfuzz"
