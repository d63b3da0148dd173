"""--coverage counts branch outcomes: a condition whose outcomes run only lines already seen still counts as new.

Real processes: a small script started with the tracer's environment, its records read back by the book.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from mcpfuzz.engine.coverage.book import CoverageBook
from mcpfuzz.engine.coverage.launch import CoverageSetup, PythonServer
from mcpfuzz.report.coverage_summary import coverage_html, coverage_line

pytestmark = pytest.mark.slow

ANSWER_TIMEOUT = 60.0  # generous: a loaded machine starting Python

SCRIPT = '''\
import sys


def choose(flag):
    value = 0
    if flag:
        value = 1
    return sys._getframe().f_trace is not None


for word in sys.argv[1:]:
    print(choose(word == "yes"))
'''


def _run(script: Path, setup: CoverageSetup, *words: str) -> list[str]:
    env = {name: value for name, value in os.environ.items() if name != "PYTHONPATH"}
    done = subprocess.run([sys.executable, str(script), *words], capture_output=True, text=True,
                          env={**env, **setup.env}, timeout=ANSWER_TIMEOUT, check=True)
    return done.stdout.split()


def test_an_outcome_that_runs_only_seen_lines_is_a_new_branch(tmp_path: Path) -> None:
    script = tmp_path / "choose.py"
    script.write_text(SCRIPT)
    setup = CoverageSetup.create(PythonServer(sys.executable, (str(tmp_path),)), include_sdk=False, env={})
    try:
        book = CoverageBook(setup.log)
        _run(script, setup, "yes")
        book.settle()
        lines, branches = set(book.lines), set(book.branches)
        assert branches, "the `if` taken one way is an outcome"
        _run(script, setup, "no")
        assert book.after_call("tool/choose") >= 1
        assert book.lines == lines  # every line had run already: only the branch is new
        assert len(book.branches) > len(branches)
        assert all(path == str(script.resolve()) for path, _, _ in book.branches)
        stats = book.as_dict()
        assert stats["branches"] == len(book.branches) and stats["target_branches"]["tool/choose"] >= 1
        assert "tool/choose 0/" in str(coverage_line(stats)) and "<th>branches</th>" in coverage_html(stats)
        _run(script, setup, "yes", "no")
        assert book.after_call("tool/choose") == 0  # each outcome counts once for the run
    finally:
        setup.remove()


@pytest.mark.skipif(sys.version_info >= (3, 12), reason="sys.monitoring disables each event itself")
def test_settrace_leaves_a_function_once_its_lines_and_outcomes_were_seen(tmp_path: Path) -> None:
    script = tmp_path / "choose.py"
    script.write_text(SCRIPT)
    setup = CoverageSetup.create(PythonServer(sys.executable, (str(tmp_path),)), include_sdk=False, env={})
    try:
        # Traced while the `if` had one outcome only; no longer once it had both.
        assert _run(script, setup, "yes", "yes", "no", "yes", "no") == ["True", "True", "True", "False", "False"]
    finally:
        setup.remove()
