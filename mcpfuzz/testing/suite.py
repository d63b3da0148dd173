"""`fuzz_suite(server, **options)`: one run per session, one pytest item per root cause it found, plus the run."""

from __future__ import annotations

import contextlib
import io
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import pytest

if TYPE_CHECKING:
    from mcpfuzz.engine.events import Finding
    from mcpfuzz.testing.fuzzer import FuzzResult

# The item that stands for the run itself: it fails when the server could not be tested.
RUN_ITEM = "run"


@dataclass(frozen=True)
class FuzzSuite:
    """A server and `mcpfuzz run` options; assigned to a `test_*` name, the plugin collects it as a suite."""

    server: tuple[str, ...] | str
    options: Mapping[str, Any] = field(default_factory=dict)


def fuzz_suite(server: Sequence[str] | str, **options: Any) -> FuzzSuite:
    """Fuzz `server` once when pytest collects this name; each root cause found becomes a test of its own.

    `test_server = fuzz_suite([sys.executable, "server.py"], budget=30)` gives `test_server::run` and one item
    per finding, named `ORACLE[TARGET]` (`no-crash[tool/search]`), so `-k` picks them and `--lf` re-runs them.
    """
    words = server if isinstance(server, str) else tuple(str(word) for word in server)
    return FuzzSuite(words, dict(options))


def item_names(findings: Sequence[Finding]) -> list[str]:
    """A stable name per finding: oracle and target (and lint rule); the fingerprint's start tells equal names apart."""
    names = []
    for finding in findings:
        where = finding.target or "server"
        rule = f"{finding.rule} " if finding.rule else ""
        names.append(f"{finding.oracle}[{rule}{where}]")
    for index, name in enumerate(names):
        if names.count(name) > 1:
            names[index] = f"{name[:-1]} {findings[index].fingerprint[:8]}]"
    return names


class SuiteCollector(pytest.Collector):
    """Runs the suite's server once (at collection, so the findings are known) and yields an item per finding."""

    def __init__(self, *, suite: FuzzSuite, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.suite = suite

    def collect(self) -> Iterator[pytest.Item]:
        from mcpfuzz.testing.fuzzer import Fuzzer, UsageError
        from mcpfuzz.testing.pytest_plugin import session_defaults, temporary_folder

        defaults = session_defaults(self.config, self.nodeid)
        fuzzer = Fuzzer(defaults, files=temporary_folder(self.config, self.name))
        # pytest captures nothing while a collector below a module collects: the console is kept for the run's
        # item, shown with its report as a test's captured output is.
        console = io.StringIO()
        try:
            with contextlib.redirect_stdout(console), contextlib.redirect_stderr(console):
                result = fuzzer.run(self.suite.server, **self.suite.options)
        except UsageError as error:
            yield RunItem.from_parent(self, name=RUN_ITEM, result=None, problem=f"mcpfuzz usage error: {error}",
                                      console=console.getvalue())
            return
        yield RunItem.from_parent(self, name=RUN_ITEM, result=result, problem="", console=console.getvalue())
        findings = result.findings
        for name, finding in zip(item_names(findings), findings, strict=True):
            # The node id as text, parsed as pytest parses the ids --lf keeps (a `[...]` part is its params).
            yield FindingItem.from_parent(self, name=name, nodeid=f"{self.nodeid}::{name}", result=result,
                                          finding=finding)


class SuiteFailure(AssertionError):
    """A suite item failed: the message is the whole story (no traceback into mcpfuzz is shown)."""


class _SuiteItem(pytest.Item):
    def repr_failure(self, excinfo: pytest.ExceptionInfo[BaseException], style: Any = None) -> Any:
        if isinstance(excinfo.value, SuiteFailure):
            return str(excinfo.value)
        return super().repr_failure(excinfo)

    def reportinfo(self) -> tuple[Any, int | None, str]:
        return self.path, None, f"mcpfuzz {self.nodeid.rpartition('::')[0].rpartition('::')[2]}::{self.name}"


class RunItem(_SuiteItem):
    """The run itself: passes when the server was tested, fails when it could not be (or the options are wrong)."""

    def __init__(self, *, result: FuzzResult | None, problem: str, console: str = "", **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.result = result
        self.problem = problem
        if console:
            self.add_report_section("call", "mcpfuzz console", console)

    def runtest(self) -> None:
        if self.problem:
            raise SuiteFailure(self.problem)
        assert self.result is not None
        finished = self.result.finished
        if finished.error:
            raise SuiteFailure(f"the server could not be tested: {finished.error}")
        if finished.untested:
            raise SuiteFailure(f"the run could not test what the server declares: {finished.untested}")


class FindingItem(_SuiteItem):
    """One root cause: fails when it counts toward fail_on, skipped (with why) when it does not."""

    def __init__(self, *, result: FuzzResult, finding: Finding, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.result = result
        self.finding = finding

    def runtest(self) -> None:
        from mcpfuzz.engine.judge import counts_toward_fail_on
        from mcpfuzz.report.finding_text import finding_text

        finding, config = self.finding, self.result.config
        if not counts_toward_fail_on(finding, config.fail_on):
            pytest.skip(_why_not_failing(finding, str(config.fail_on)))
        public = config.public()
        path = self.result.finished.corpus_paths.get(finding.fingerprint)
        raise SuiteFailure(f"mcpfuzz found in {public.server_label} (seed {self.result.seed}):\n"
                           f"{finding_text(finding, public.target, self.result.seed, path)}")


def _why_not_failing(finding: Finding, fail_on: str) -> str:
    if finding.baselined:
        return "accepted in the baseline"
    if finding.reproducible is False:
        return "a note: it did not fail again on a fresh server"
    first_line = finding.message.splitlines()[0] if finding.message else ""
    return f"{finding.severity} is below fail_on={fail_on}: {first_line}"
