"""What the `mcpfuzz` fixture is: `run(server, budget=...)` with any option of `mcpfuzz run`, and its result."""

from __future__ import annotations

import difflib
import shlex
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

if TYPE_CHECKING:
    from mcpfuzz.engine.config import RunConfig
    from mcpfuzz.engine.events import EventSink, Finding, RunFinished

# Options of `run` that make no sense from a test, each with what to do instead.
NOT_FROM_TESTS: dict[str, str] = {
    "server": "the server is run()'s first argument",
    "compare_with": "a test fuzzes one server; compare two with `mcpfuzz run --compare`",
    "compare_ignore": "a test fuzzes one server; compare two with `mcpfuzz run --compare`",
    "all_servers": "a test fuzzes one server: call run() once per server",
    "servers_file": "pass the server's command (or URL) as run()'s first argument",
    "server_name": "pass the server's command (or URL) as run()'s first argument",
    "workers": "a test runs in one process; use `mcpfuzz run --workers` outside pytest",
    "exit_first": "a test reports every finding of its run; use pytest's own -x to stop the session, and "
                  "fail_on= to choose what fails",
    "max_findings": "a test reports every finding of its run; use fail_on= to choose what fails",
    "dry_run": "list what a run would call with `mcpfuzz targets`",
}
# Options naming a file a run writes: kept inside the test's temporary folder (REPORT_FILES) so that a test never
# writes into the project, whether the path came from the test or from a config file.
REPORT_FILES = ("json_path", "junit_path", "sarif_path", "summary_path", "html_path", "events_path", "log_frames")


class UsageError(ValueError):
    """An option `run()` cannot take: its name or value, said as `mcpfuzz run` would say it."""


class FindingsFound(AssertionError):
    """`assert_no_findings()` failed: the message holds every finding at or above the threshold, rendered."""


@dataclass(frozen=True)
class FuzzResult:
    """One run's outcome: its findings, seed and error, and the server as reports show it (secrets redacted)."""

    finished: RunFinished
    config: RunConfig = field(repr=False)

    @property
    def findings(self) -> tuple[Finding, ...]:
        """Every finding, whatever its severity."""
        return self.finished.findings

    @property
    def seed(self) -> int:
        """The run's seed: `seed=` given again replays the same inputs."""
        return self.config.seed

    def failing(self, fail_on: str | None = None) -> list[Finding]:
        """The findings at or above `fail_on` (default: the run's --fail-on), worst first; notes (findings that did
        not fail again on a fresh server) never fail."""
        from mcpfuzz.oracles.base import Severity

        threshold = Severity.parse(fail_on) if fail_on is not None else self.config.fail_on
        return sorted((f for f in self.findings if f.severity >= threshold and f.reproducible is not False),
                      key=lambda f: -f.severity)

    def assert_no_findings(self, fail_on: str | None = None) -> None:
        """Fail with the findings rendered (sent, got, reproduction) when any is at or above `fail_on`."""
        __tracebackhide__ = True
        from mcpfuzz.report.finding_text import finding_text

        if self.finished.error:
            raise FindingsFound(f"the server could not be tested: {self.finished.error}")
        failing = self.failing(fail_on)
        if not failing:
            return
        public = self.config.public()
        threshold = fail_on or str(self.config.fail_on)
        parts = [f"mcpfuzz found {len(failing)} findings at or above {threshold} in {public.server_label} "
                 f"(seed {self.seed}):"]
        for number, finding in enumerate(failing, 1):
            text = finding_text(finding, public.target, self.seed, self.finished.corpus_paths.get(finding.fingerprint))
            parts.append(f"\n{number}. {text}")
        raise FindingsFound("\n".join(parts))


class Fuzzer:
    """Runs mcpfuzz from a test: keyword options are `mcpfuzz run`'s (`fail_on="high"`, `exclude_tool=["x"]`).

    With `files` (pytest's temporary folder of the test), every file the run writes goes there: a report path
    given by the test or by a config file, relative ones under it, and the corpus when none is given.
    """

    def __init__(self, defaults: Mapping[str, Any] | None = None, *, files: Path | None = None,
                 brief_console: bool = False) -> None:
        self.defaults = dict(defaults or {})
        self.files = files
        # In a test the failure message renders each finding in full: the console says one line per finding
        # (unless the test asks for quiet or verbose itself), so nothing, a crash's stderr included, shows twice.
        self.brief_console = brief_console

    def run(self, server: Sequence[str] | str, **options: Any) -> FuzzResult:
        """Fuzz `server` (a command as a list of words or a shell line, or a URL) and return the result."""
        from mcpfuzz.cli.main import main
        from mcpfuzz.cli.main import run as run_command

        words = shlex.split(server) if isinstance(server, str) else [str(word) for word in server]
        if not words:
            raise UsageError("no server given: pass its command, e.g. [\"python\", \"server.py\"], or its URL")
        chosen = {**self.defaults, **options}
        if self.brief_console and not {"quiet", "verbose", "q", "v"} & chosen.keys():
            chosen["quiet"] = True
        args = command_line(run_command, chosen)
        try:
            # Under the group, as on the command line: a config file's tables of the other commands are known.
            with click.Context(main, info_name="mcpfuzz") as parent, \
                    run_command.make_context("run", [*args, "--", *words], parent=parent) as ctx:
                if self.files is not None:
                    _keep_files_in(ctx, self.files)
                return _execute(ctx.params)
        except click.ClickException as error:
            raise UsageError(error.format_message()) from None


def _keep_files_in(ctx: click.Context, folder: Path) -> None:
    """Every file the run writes inside `folder`: a config file's report paths by their name, the test's relative
    ones under it, the corpus (unless the test or the plugin named one) in `folder/corpus`."""
    from click.core import ParameterSource

    params = ctx.params
    for name in REPORT_FILES:
        value = params.get(name)
        if not value or value == "-":
            continue
        if ctx.get_parameter_source(name) is not ParameterSource.COMMANDLINE:
            params[name] = str(folder / Path(value).name)
        elif not Path(value).is_absolute():
            params[name] = str(folder / value)
    if ctx.get_parameter_source("corpus_dir") is not ParameterSource.COMMANDLINE:
        params["corpus_dir"] = str(folder / "corpus")


def command_line(command: click.Command, options: Mapping[str, Any]) -> list[str]:
    """Keyword options as the command line `command` takes: `budget=5` is `--budget 5`, a list repeats."""
    by_name: dict[str, click.Option] = {}
    for declared in command.params:
        if isinstance(declared, click.Option) and declared.name:
            # The parameter's name (`exclude_tools`) or the option's (`exclude_tool` for --exclude-tool).
            by_name[declared.name] = declared
            for opt in declared.opts:
                by_name.setdefault(opt.lstrip("-").replace("-", "_"), declared)
    args: list[str] = []
    for name, value in options.items():
        param = by_name.get(name)
        refused = NOT_FROM_TESTS.get(param.name or "") if param is not None else NOT_FROM_TESTS.get(name)
        if refused is not None:
            raise UsageError(f"run() does not take {name}=: {refused}")
        if param is None:
            allowed = sorted(key for key, option in by_name.items() if option.name not in NOT_FROM_TESTS)
            close = difflib.get_close_matches(name, allowed, n=1)
            hint = f"; did you mean {close[0]}=?" if close else ""
            raise UsageError(f"run() got an unknown option {name}={value!r}{hint}")
        flag = param.opts[0]
        if param.is_flag:
            if value:
                args.append(flag)
            continue
        if value is None:
            continue
        values = value if isinstance(value, (list, tuple)) and param.multiple else [value]
        for item in values:
            args += [flag, str(item)]
    return args


def _execute(params: dict[str, Any]) -> FuzzResult:
    """Run as `mcpfuzz run` does (the console goes to stdout, which pytest captures), without exiting."""
    from mcpfuzz.cli.options import build_config
    from mcpfuzz.cli.reporting import Reporting

    options = {name: value for name, value in params.items() if name not in ("server", "budget", "compare_with")}
    config = build_config(params["server"], params["budget"], options)
    reporting = Reporting(config, options)
    finished = reporting.run(lambda sink: _run_engine(config, sink))
    problem = reporting.files.problem or (reporting.log.problem if reporting.log is not None else "")
    if problem:
        raise UsageError(problem)
    return FuzzResult(finished, config)


def _run_engine(config: RunConfig, sink: EventSink) -> RunFinished:
    import anyio

    from mcpfuzz.engine.runner import run as run_engine

    return anyio.run(run_engine, config, sink)


def default_corpus(cache_dir: Path | None, node_id: str) -> str | None:
    """A corpus folder per test under pytest's cache, so the next session replays what this one found first."""
    if cache_dir is None:
        return None
    safe = "".join(c if c.isalnum() or c in "-_." else "_" for c in node_id)[-120:]
    return str(cache_dir / safe)
