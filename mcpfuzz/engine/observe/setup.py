"""Where the hooks start from: a temporary folder with the Python hook (as `sitecustomize.py`) and the Node one, the
record file, and the environment that makes the server load them."""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from mcpfuzz.engine.coverage.launch import PythonServer, python_server
from mcpfuzz.engine.coverage.node_launch import NodeServer, node_server
from mcpfuzz.transport.target import ServerKind

ENV_FILE = "MCPFUZZ_OBSERVE_FILE"
PYTHON_HOOK = Path(__file__).with_name("hook.py")
NODE_HOOK = Path(__file__).with_name("node_hook.cjs")
NODE_HOOK_NAME = "mcpfuzz-observe.cjs"


@dataclass(frozen=True)
class ObserveSetup:
    """The hooks' folder, their record file, the server's code folders, and the variables the server is started
    with (PYTHONPATH or NODE_OPTIONS kept after the hook's)."""

    folder: Path
    log: Path
    env: dict[str, str]
    code: tuple[str, ...]
    runtime: str  # "python" or "node", in notices

    @classmethod
    def create(cls, server: PythonServer | NodeServer, env: Mapping[str, str]) -> ObserveSetup:
        """The folder made and the hook copied in; `env` is the server's own (--env over mcpfuzz's environment)."""
        folder = Path(tempfile.mkdtemp(prefix="mcpfuzz-observe-")).resolve()
        log = folder / "effects.jsonl"
        log.touch()
        # Both hooks, whatever the server runs on: a Node server's Python child (or the other way round) is seen too.
        hook = folder / NODE_HOOK_NAME
        shutil.copyfile(NODE_HOOK, hook)
        shutil.copyfile(PYTHON_HOOK, folder / "sitecustomize.py")
        existing_node = env.get("NODE_OPTIONS", os.environ.get("NODE_OPTIONS", ""))
        quoted = '"' + str(hook).replace("\\", "\\\\").replace('"', '\\"') + '"'
        existing_path = env.get("PYTHONPATH", os.environ.get("PYTHONPATH", ""))
        added = {ENV_FILE: str(log),
                 "NODE_OPTIONS": " ".join([f"--require {quoted}", *([existing_node] if existing_node else [])]),
                 "PYTHONPATH": os.pathsep.join([str(folder), *([existing_path] if existing_path else [])])}
        if isinstance(server, NodeServer):
            node = shutil.which("node")
            prefix = (str(Path(node).resolve().parent.parent),) if node else ()
            return cls(folder, log, added, (*server.roots, *prefix), "node")
        interpreter = Path(server.interpreter).absolute()
        return cls(folder, log, added, (*server.roots, str(interpreter.parent.parent)), "python")

    def remove(self) -> None:
        """The folder gone."""
        shutil.rmtree(self.folder, ignore_errors=True)


def observed_server(kind: ServerKind, command: tuple[str, ...], launch: tuple[str, ...], cwd: str | None
                    ) -> PythonServer | NodeServer | str:
    """The Python or Node server mcpfuzz starts, or why its side effects cannot be seen, in the user's words."""
    if kind is ServerKind.COMMAND:
        found = node_server(command, cwd) or python_server(command, cwd)
    elif kind is ServerKind.URL and launch:
        found = node_server(launch) or python_server(launch)
    else:
        return "mcpfuzz does not start the server (observation needs a stdio command or an HTTP server's --launch)"
    if isinstance(found, str) and "does not run on Python or Node" in found:
        return "the server is neither a Python nor a Node program (a compiled binary's calls cannot be hooked " \
               "without root)"
    return found
