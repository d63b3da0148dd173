"""The README's sample output is what its first command prints: the command is run and its stable lines compared."""

from __future__ import annotations

import re
import shlex
import sys
from collections import Counter
from pathlib import Path

import pytest

from tests.conftest import run_cli

pytestmark = pytest.mark.slow

README = Path(__file__).resolve().parent.parent / "README.md"
FINDING = re.compile(r"^(\d+)\. (CRITICAL|HIGH|MEDIUM|LOW) (\S+) on (\S+): ")
# Lines whose numbers depend on the machine's speed: only their start is compared.
SPEED_DEPENDENT = (re.compile(r"^(\d+ findings? \([^)]*\)) · "), re.compile(r"^(time:) "),
                   re.compile(r"^(corpus: \d+ transcripts? in \S+) \("))
VENV_MCPFUZZ, VENV_PYTHON = ".venv/bin/mcpfuzz", ".venv/bin/python"


def readme_block(heading: str) -> list[str]:
    """The lines of the first fenced block under a README heading."""
    text = README.read_text(encoding="utf-8")
    section = text[text.index(f"\n{heading}\n"):]
    start = section.index("```\n") + 4
    return section[start:section.index("```", start)].rstrip("\n").splitlines()


def stable(lines: list[str]) -> tuple[list[str], Counter[tuple[str, str, str]]]:
    """The lines a run must print exactly, and its findings as (severity, oracle, target)."""
    kept, findings = [], Counter[tuple[str, str, str]]()
    for line in lines:
        match = FINDING.match(line)
        if match:
            findings[match.group(2), match.group(3), match.group(4)] += 1
            continue
        for pattern in SPEED_DEPENDENT:
            head = pattern.match(line)
            if head:
                line = head.group(1)
                break
        kept.append(line)
    return kept, findings


def test_the_sample_is_the_first_command_with_quiet_and_a_seed() -> None:
    """The sample's `$` line is the set-up command's run, with `-q --seed 7` added and nothing else."""
    setup = readme_block("## Set up")[0]
    first_run = setup.split(" && ")[-1]
    sample = readme_block("## What you see")[0].removeprefix("$ ")
    words = shlex.split(sample)
    assert words[:2] == shlex.split(first_run)[:2]
    assert words[2:5] == ["-q", "--seed", "7"]
    assert [*words[:2], *words[5:]] == shlex.split(first_run)


def test_the_readme_sample_output_is_what_the_first_command_prints(tmp_path: Path) -> None:
    """Run the sample's command (the venv's python being this one) and compare every stable line."""
    block = readme_block("## What you see")
    words = shlex.split(block[0].removeprefix("$ "))
    assert words[0] == VENV_MCPFUZZ and VENV_PYTHON in words
    server = [sys.executable if word == VENV_PYTHON else word for word in words[words.index("--") + 1:]]
    result = run_cli([*words[1:words.index("--")], "--", *server], cwd=tmp_path, timeout=300)
    assert result.returncode == 1, result.stdout + result.stderr
    printed = result.stdout.replace(shlex.join(server), shlex.join(words[words.index("--") + 1:]))
    expected_lines, expected_findings = stable(block[1:])
    got_lines, got_findings = stable(printed.splitlines())
    assert got_findings == expected_findings, (
        f"the README's findings differ from the run's; update README.md's sample from:\n{result.stdout}")
    assert got_lines == expected_lines, f"update README.md's sample from this run:\n{result.stdout}"
    numbers = [int(m.group(1)) for m in map(FINDING.match, printed.splitlines()) if m]
    assert numbers == list(range(1, len(numbers) + 1))



def test_the_readme_installs_from_a_checkout() -> None:
    """No claim of a package on an index (there is none); pip, pipx, the extras and `python -m mcpfuzz` are shown."""
    text = README.read_text(encoding="utf-8")
    assert "is published" not in text and "pip install mcp-wirefuzz" not in text
    for line in ("pipx install .", "pip install -e '.[pytest]'", "python -m mcpfuzz --help"):
        assert line in text, line
    pyproject = (README.parent / "pyproject.toml").read_text(encoding="utf-8")
    assert 'pytest = ["pytest>=8"]' in pyproject  # the extra the pytest plugin's docs install
    assert "pip install -e '.[pytest]'" in (README.parent / "docs" / "pytest.md").read_text(encoding="utf-8")
