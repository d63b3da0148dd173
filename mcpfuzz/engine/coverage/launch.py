"""Whether a server command runs Python, which of its folders count, and the tracer's start-up folder for it."""

from __future__ import annotations

import os
import re
import shutil
import tempfile
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from mcpfuzz.engine.attribution.detect import site_packages, which, without_env
from mcpfuzz.engine.coverage.launchers import Launched, launched

ENV_FILE = "MCPFUZZ_COVERAGE_FILE"
ENV_ROOTS = "MCPFUZZ_COVERAGE_ROOTS"
ENV_SDK = "MCPFUZZ_COVERAGE_SDK"
ENV_ENTRY = "MCPFUZZ_COVERAGE_ENTRY"  # a console script whose package counts, found by the process that runs it
ENV_RELAY = "MCPFUZZ_COVERAGE_RELAY"  # "1": a launcher clears PYTHONPATH; the tracer puts itself back for its child
TRACER = Path(__file__).with_name("tracer.py")
MAX_SCRIPT_BYTES = 64 * 1024  # a console script is a few lines; more is not one
_MAPPED = re.compile(r"""['"][\w.]+['"]\s*:\s*['"]([^'"]+)['"]""")
# A console script uv writes: `#!/bin/sh`, then `'''exec' "$(dirname -- "$(realpath -- "$0")")"/'python' "$0" "$@"`.
_SH_RELAUNCH = re.compile(r"\A#![^\n]*\n'''exec' [^\n]*/'(python[\w.]*)' \"\$0\"")
_IMPORT = re.compile(r"^\s*from\s+([A-Za-z_][\w.]*)\s+import\b", re.MULTILINE)


@dataclass(frozen=True)
class PythonServer:
    """A server command that runs on a Python interpreter, and the folders holding its own code."""

    interpreter: str  # the python that runs it, or the launcher (uvx, pipx run) that picks one at start-up
    roots: tuple[str, ...]
    # A launcher's tool (uvx, pipx run) runs from an environment made at start-up: its console script's package is
    # found by the tracer in the process that runs it.
    entry: str | None = None
    relay: bool = False  # the launcher clears PYTHONPATH before it starts the server (pipx)


def python_server(command: Sequence[str], cwd: str | None = None) -> PythonServer | str:
    """The Python server `command` starts (`python server.py`, `python -m package`, a console script of a
    virtual environment, a script with a python `#!`, or any of them behind `uv run`, `uvx` or `pipx run`), or
    why it is none, in the user's words."""
    words = list(without_env(command))
    if not words:
        return "there is no command to start (coverage needs a server mcpfuzz launches over stdio)"
    base = Path(cwd) if cwd else Path.cwd()
    through_launcher = _launcher_server(words, base)
    if through_launcher is not None:
        return through_launcher
    program = which(words[0]) or (str(base / words[0]) if (base / words[0]).is_file() else None)
    if program is None:
        return f"{words[0]} was not found"
    if Path(program).name.startswith("python"):
        return PythonServer(program, _interpreter_roots(words[1:], base, Path(program)))
    interpreter, text = _shebang(program)
    if interpreter is None:
        return f"{Path(words[0]).name} does not run on Python or Node (coverage reaches Python and Node servers)"
    return PythonServer(interpreter, (_script_root(text, interpreter) or str(base),))


def _launcher_server(words: list[str], base: Path) -> PythonServer | str | None:
    """The Python server a launcher (`uv run`, `uvx`, `uv tool run`, `pipx run`) starts, why it cannot be traced,
    or None when `words` start no launcher."""
    found = launched(words, base)
    if found is None or isinstance(found, str):
        return found
    if found.entry is not None or found.script is not None:
        roots = (str(found.script.parent),) if found.script is not None else ()
        return PythonServer(found.launcher, roots, entry=found.entry, relay=found.clears_pythonpath)
    return _uv_run_server(found)


def _uv_run_server(found: Launched) -> PythonServer:
    """`uv run`: python with a script or `-m`, a script, or a console script of the project's environment."""
    environment = (found.project or found.folder) / ".venv"
    interpreter = environment / "bin" / "python"
    command = list(found.command)
    if found.module is not None:
        return PythonServer(str(interpreter), _interpreter_roots(["-m", found.module], found.folder, interpreter))
    if Path(command[0]).name.startswith("python"):
        return PythonServer(str(interpreter), _interpreter_roots(command[1:], found.folder, interpreter))
    if command[0].endswith(".py"):
        return PythonServer(str(interpreter), (str((found.folder / command[0]).resolve().parent),))
    # A console script: the project's own code (an editable install), and the script's package once it runs.
    return PythonServer(str(interpreter), (str(found.project or found.folder),), entry=Path(command[0]).name)


def _interpreter_roots(arguments: list[str], base: Path, interpreter: Path) -> tuple[str, ...]:
    """`python server.py`: the script's folder; `python -m package`: the package's; else the working folder."""
    if "-m" in arguments and arguments.index("-m") + 1 < len(arguments):
        module = arguments[arguments.index("-m") + 1]
        entry = _module_entry(module, base, interpreter)
        if entry is not None:
            return (str(_top_folder(entry.resolve(), module)),)
        return (str(base),)
    script = next((word for word in arguments if word.endswith(".py")), None)
    return (str((base / script).resolve().parent),) if script is not None else (str(base),)


def _module_entry(module: str, base: Path, interpreter: Path) -> Path | None:
    """The file `python -m module` runs: in the working folder, the environment, or a folder an editable install
    puts on the path (a `.pth` file's lines); found by reading, never by running the interpreter."""
    sites = site_packages(interpreter.absolute())
    folders = [base, *sites, *_path_files_folders(sites)]
    relative = Path(*module.split("."))
    for folder in folders:
        for candidate in (folder / relative / "__main__.py", (folder / relative).with_suffix(".py")):
            if candidate.is_file():
                return candidate
    return None


def _path_files_folders(sites: list[Path]) -> list[Path]:
    """The folders the `.pth` files of site-packages add to the path (an editable install's project)."""
    folders = []
    for site in sites:
        for pth in sorted(site.glob("*.pth")):
            try:
                lines = pth.read_text(errors="replace").splitlines()
            except OSError:
                continue
            folders += [Path(line.strip()) for line in lines
                        if line.strip() and not line.startswith(("#", "import")) and Path(line.strip()).is_dir()]
        for finder in sorted(site.glob("__editable__*finder.py")):  # setuptools' editable installs: a MAPPING
            try:
                text = finder.read_text(errors="replace")
            except OSError:
                continue
            folders += [Path(path).parent for path in _MAPPED.findall(text) if Path(path).is_dir()]
    return folders


def _top_folder(entry: Path, module: str) -> Path:
    """The folder that holds a module's top package (`a.b` found at .../a/b.py: .../a)."""
    depth = len(module.split(".")) - (0 if entry.name == "__main__.py" else 1)
    folder = entry.parent
    for _ in range(max(depth - 1, 0)):
        folder = folder.parent
    return folder


def _shebang(program: str) -> tuple[str | None, str]:
    """The python a script's `#!` names (`#!/path/python` or `#!/usr/bin/env python3`), and the script's text."""
    try:
        with open(program, "rb") as handle:
            head = handle.read(MAX_SCRIPT_BYTES)
    except OSError:
        return None, ""
    if not head.startswith(b"#!"):
        return None, ""
    words = head[2:].split(b"\n", 1)[0].decode("utf-8", "replace").split()
    relaunch = _SH_RELAUNCH.search(head.decode("utf-8", "replace"))
    if words and Path(words[0]).name == "sh" and relaunch is not None:  # uv's console scripts
        words = [str(Path(program).resolve().parent / relaunch.group(1))]
    if words and Path(words[0]).name == "env":
        words = [word for word in words[1:] if not word.startswith("-")]
        found = which(words[0]) if words else None
        words = [found] if found else []
    if not words or not Path(words[0]).name.startswith("python"):
        return None, ""
    return words[0], head.decode("utf-8", "replace")


def _script_root(text: str, interpreter: str) -> str | None:
    """A console script's package (`from server_pkg.main import run`): its folder in the environment."""
    match = _IMPORT.search(text)
    if match is None:
        return None
    module = match.group(1)
    entry = _module_entry(module, Path.cwd(), Path(interpreter))
    return str(_top_folder(entry.resolve(), module)) if entry is not None else None


@dataclass(frozen=True)
class CoverageSetup:
    """The temporary folder the server's tracer starts from (its `sitecustomize.py` and the lines file), and the
    environment that makes a Python server load it."""

    folder: Path
    log: Path
    env: dict[str, str]

    @classmethod
    def create(cls, server: PythonServer, *, include_sdk: bool, env: Mapping[str, str]) -> CoverageSetup:
        """The folder made, the tracer copied in; `env` is the server's own (--env over mcpfuzz's environment),
        whose PYTHONPATH is kept after the tracer's folder."""
        folder = Path(tempfile.mkdtemp(prefix="mcpfuzz-coverage-"))
        shutil.copyfile(TRACER, folder / "sitecustomize.py")
        log = folder / "lines.tsv"
        log.touch()
        existing = env.get("PYTHONPATH", os.environ.get("PYTHONPATH", ""))
        added = {"PYTHONPATH": os.pathsep.join([str(folder), *([existing] if existing else [])]),
                 ENV_FILE: str(log), ENV_ROOTS: os.pathsep.join(server.roots), ENV_SDK: "1" if include_sdk else "0",
                 **_launcher_env(server)}
        return cls(folder, log, added)

    def remove(self) -> None:
        """The folder gone (a server still running writes on into the removed file, unseen)."""
        shutil.rmtree(self.folder, ignore_errors=True)


def _launcher_env(server: PythonServer) -> dict[str, str]:
    """What the tracer needs for a server behind a launcher: the console script to find, the relay past pipx."""
    return {**({ENV_ENTRY: server.entry} if server.entry else {}), **({ENV_RELAY: "1"} if server.relay else {})}
