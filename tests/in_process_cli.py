"""`mcpfuzz ARGS...` run inside the test's own process, for commands that end without a run of their own (usage
errors, `targets`, `call`, `snapshot`, `replay`): the same command and output as `run_cli`, without a Python start
and mcpfuzz's imports for each (a second or more of CPU on a loaded machine). A `run` that fuzzes keeps its
subprocess: it handles signals and ends like a user's.
"""

from __future__ import annotations

import contextlib
import subprocess
import tempfile
from collections.abc import Mapping, Sequence
from pathlib import Path

from click.testing import CliRunner

from mcpfuzz.cli.main import main
from tests.conftest import TERMINAL_VARIABLES

PROGRAM = "python -m mcpfuzz.cli"  # as `run_cli` starts it, so usage lines read the same


def cli_in_process(args: Sequence[str], env: Mapping[str, str] | None = None,
                   cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    """Run `mcpfuzz ARGS...` in this process, in `cwd` (a fresh empty folder by default, as `run_cli`), with our
    environment less the terminal overrides plus `env`; an exception of mcpfuzz's own is raised, not captured."""
    folder = cwd or Path(tempfile.mkdtemp(prefix="mcpfuzz-cli-"))
    environment: dict[str, str | None] = dict.fromkeys(TERMINAL_VARIABLES)
    environment.update(env or {})
    with contextlib.chdir(folder):
        result = CliRunner().invoke(main, list(args), env=environment, prog_name=PROGRAM, catch_exceptions=False)
    return subprocess.CompletedProcess([PROGRAM, *args], result.exit_code, result.stdout, result.stderr)
