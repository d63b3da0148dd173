"""`run --compare` over the call phases: the first server's coverage and stateful calls sent to the second in the
same order, whole envelopes compared (key order aside), `--compare-ignore` paths left out."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from mcpfuzz.engine.json_paths import PathError, parse_path, without
from tests.conftest import REPO_ROOT, run_cli

pytestmark = pytest.mark.slow

SERVERS = REPO_ROOT / "tests" / "servers"
CLEAN = f"{sys.executable} {SERVERS / 'mcp_server.py'}"
VARIANT = f"{sys.executable} {SERVERS / 'echo_variant.py'}"
ENVELOPE = {"jsonrpc": "2.0", "id": 1, "result": {"at": 5, "items": [{"id": 1, "x": 2}, {"id": 3}],
                                                  "_meta": {"at": 9}}}


@pytest.mark.parametrize(("path", "expected"), [
    ("$.result.at", {"items": [{"id": 1, "x": 2}, {"id": 3}], "_meta": {"at": 9}}),
    ("$.result.items[*].id", {"at": 5, "items": [{"x": 2}, {}], "_meta": {"at": 9}}),
    ("$..at", {"items": [{"id": 1, "x": 2}, {"id": 3}], "_meta": {}}),
    ("$['result']['items'][0]", {"at": 5, "items": [{"id": 3}], "_meta": {"at": 9}}),
    ("$.result._meta", {"at": 5, "items": [{"id": 1, "x": 2}, {"id": 3}]}),
])
def test_ignore_paths_remove_what_they_name(path: str, expected: dict) -> None:
    assert without(ENVELOPE, parse_path(path)) == {"jsonrpc": "2.0", "id": 1, "result": expected}


@pytest.mark.parametrize("path", ["result.at", "$", "$.result[", "$.a b"])
def test_paths_outside_the_subset_are_refused(path: str) -> None:
    with pytest.raises(PathError):
        parse_path(path)


def compare(*extra: str, second: str = VARIANT, tmp_path: Path) -> str:
    # Counted examples, not the default budget's time: the call sequences end by their number on any machine.
    done = run_cli(["run", "--timeout", "2", "--seed", "5", "--phases", "coverage,stateful", "--max-examples", "5",
                    "--budget", "120", "--compare", second, *extra, "--", *CLEAN.split()], cwd=tmp_path, timeout=240)
    assert done.returncode in (0, 1), done.stdout + done.stderr
    assert "Traceback" not in done.stdout + done.stderr
    return done.stdout


def test_the_same_server_twice_has_the_same_envelopes(tmp_path: Path) -> None:
    out = compare(second=CLEAN, tmp_path=tmp_path)
    assert "calls (whole envelopes): same outcome for every frame" in out


def test_a_field_that_legitimately_differs_is_ignored_only_when_named(tmp_path: Path) -> None:
    """Every result of the variant carries a timestamp: each call differs, until `--compare-ignore` names it."""
    assert "servedAt" in compare(tmp_path=tmp_path)
    assert "same outcome for every frame" in compare("--compare-ignore", "$.result._meta", tmp_path=tmp_path)


def test_a_real_difference_shows_both_envelopes(tmp_path: Path) -> None:
    out = compare("--compare-ignore", "$.result._meta", second=f"{VARIANT} --bug upper", tmp_path=tmp_path)
    assert "tool/echo (call" in out and "frames differ" in out
    assert "tool/add (call" not in out  # only echo differs


def test_bad_ignore_paths_are_usage_errors(tmp_path: Path) -> None:
    bad = run_cli(["run", "--compare", CLEAN, "--compare-ignore", "result.x", "--", *CLEAN.split()], cwd=tmp_path)
    assert bad.returncode == 2 and "does not start with `$`" in bad.stderr
    alone = run_cli(["run", "--compare-ignore", "$.result.x", "--", *CLEAN.split()], cwd=tmp_path)
    assert alone.returncode == 2 and "applies to --compare" in alone.stderr
