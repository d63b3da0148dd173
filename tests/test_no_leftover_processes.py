"""mcpfuzz leaves no process behind: a run that ends early while Hypothesis' Unicode tables are still being built
in a child ends that child before mcpfuzz exits."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import psutil
import pytest

pytestmark = pytest.mark.process

ROOT = Path(__file__).resolve().parent.parent
SERVER = ROOT / "tests" / "servers" / "fails_beside_child.py"


def test_an_early_exit_ends_the_table_builder(tmp_path: Path) -> None:
    """A fresh HOME (no Unicode tables yet) and a server that fails its handshake once the builder runs."""
    home = tmp_path / "home"
    home.mkdir()
    sibling = tmp_path / "sibling.txt"
    env = {key: value for key, value in os.environ.items()
           if key not in ("HYPOTHESIS_STORAGE_DIRECTORY", "XDG_CACHE_HOME")}
    env.update(HOME=str(home), SIBLING_PID_FILE=str(sibling))
    run = subprocess.Popen([sys.executable, "-m", "mcpfuzz", "run", "--budget", "60", "--corpus",
                            str(tmp_path / "corpus"), "--", sys.executable, str(SERVER)],
                           cwd=tmp_path, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    mcpfuzz = psutil.Process(run.pid)
    descendants: dict[int, psutil.Process] = {}
    while run.poll() is None:
        try:
            descendants.update((child.pid, child) for child in mcpfuzz.children(recursive=True))
        except psutil.NoSuchProcess:
            break
        time.sleep(0.01)
    assert run.wait(timeout=300) == 2
    # The server saw the table builder beside it: the run ended while the tables were being built.
    pid, command = sibling.read_text().split("\n", 1)
    assert "st.characters(codec='utf-8')" in command
    assert int(pid) in descendants
    alive = [process.pid for process in descendants.values()
             if process.is_running() and process.status() != psutil.STATUS_ZOMBIE]
    assert alive == []
