"""Python launchers (`uv run`, `uvx` / `uv tool run`, `pipx run`): what they will start, read from the command."""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

# Options of `uv run`, `uv tool run` / `uvx` and `pipx run` that take a value (as `--opt VALUE`; `--opt=VALUE` and
# flags need no list). An option missing here is read as a flag, so its value would be taken for the command.
_UV_VALUES = frozenset({
    "--with", "--with-editable", "--with-requirements", "--python", "-p", "--project", "--directory", "--package",
    "--env-file", "--extra", "--group", "--no-group", "--only-group", "--index", "--default-index", "--index-url",
    "--extra-index-url", "-i", "--find-links", "-f", "--index-strategy", "--keyring-provider", "--resolution",
    "--prerelease", "--fork-strategy", "--exclude-newer", "--exclude-newer-package", "--no-build-package",
    "--no-binary-package", "--only-binary-package", "--link-mode", "--config-setting", "-C", "--reinstall-package",
    "--upgrade-package", "-P", "--refresh-package", "--cache-dir", "--config-file", "--color", "--python-preference",
    "--allow-insecure-host", "--python-platform", "--from", "--build-constraints", "--constraints", "--overrides",
    "-c", "-b", "--torch-backend", "--no-extra",
})
_PIPX_VALUES = frozenset({"--spec", "--python", "--pip-args", "--index-url", "-i", "--backend"})
_VERSIONED = re.compile(r"^([A-Za-z0-9][A-Za-z0-9._-]*)")  # `pkg@1.0`, `pkg==1.0`, `pkg[extra]`: the name


@dataclass(frozen=True)
class Launched:
    """What a Python launcher will start: a command in a project's environment (`uv run`), or a console script
    from an environment the launcher makes for it (`uvx`, `pipx run`), whose package is found only once it runs."""

    launcher: str  # as the user would say it: "uv run", "uvx", "pipx run"
    command: tuple[str, ...]  # uv run: the command it runs (python server.py, server.py, a console script)
    folder: Path  # the folder the command runs in (uv run --directory), where its relative paths start
    project: Path | None  # uv run: the project whose .venv runs the command (none: no pyproject.toml found)
    module: str | None = None  # uv run -m MODULE
    entry: str | None = None  # uvx / pipx run: the console script it runs
    script: Path | None = None  # pipx run script.py: a script run by the environment's python
    clears_pythonpath: bool = False  # pipx removes PYTHONPATH before it starts the command


def launched(words: Sequence[str], base: Path) -> Launched | str | None:
    """The launcher `words` start (its wrappers already removed), why it cannot be traced, or None when the
    command is no Python launcher."""
    if not words:
        return None
    name = Path(words[0]).name
    rest = list(words[1:])
    if name == "uv" and rest[:1] == ["run"]:
        return _uv_run(rest[1:], base)
    if name == "uv" and rest[:2] == ["tool", "run"]:
        return _tool("uv tool run", rest[2:], base)
    if name == "uvx":
        return _tool("uvx", rest, base)
    if name == "pipx" and rest[:1] == ["run"]:
        return _pipx_run(rest[1:], base)
    return None


def _split(arguments: list[str], values: frozenset[str]) -> tuple[dict[str, str], list[str]]:
    """A launcher's options (name -> value, "" for a flag) and the command after them."""
    options: dict[str, str] = {}
    index = 0
    while index < len(arguments) and arguments[index].startswith("-"):
        word = arguments[index]
        index += 1
        if word == "--":
            break
        name, equals, value = word.partition("=")
        if not equals and name in values and index < len(arguments):
            value = arguments[index]
            index += 1
        options[name] = value
    return options, arguments[index:]


def _uv_run(arguments: list[str], base: Path) -> Launched | str:
    options, command = _split(arguments, _UV_VALUES)
    folder = (base / options["--directory"]).resolve() if options.get("--directory") else base
    module = None
    if "--module" in options or "-m" in options:
        module, command = (command[0], command[1:]) if command else (None, command)
    if not command and module is None:
        return "uv run names no command to run"
    start = (folder / options["--project"]).resolve() if options.get("--project") else folder
    project = None if "--no-project" in options or "--script" in options or "-s" in options else _project(start)
    return Launched("uv run", tuple(command), folder, project, module=module)


def _project(start: Path) -> Path | None:
    """The project uv runs in: the nearest folder from `start` up that holds a pyproject.toml."""
    for folder in (start, *start.parents):
        if (folder / "pyproject.toml").is_file():
            return folder
    return None


def _tool(launcher: str, arguments: list[str], base: Path) -> Launched | str:
    options, command = _split(arguments, _UV_VALUES)
    if not command:
        return f"{launcher} names no tool to run"
    match = _VERSIONED.match(command[0])
    if match is None:
        return f"{launcher}: {command[0]} is not a tool name"
    return Launched(launcher, (), base, None, entry=match.group(1))


def _pipx_run(arguments: list[str], base: Path) -> Launched | str:
    options, command = _split(arguments, _PIPX_VALUES)
    if not command:
        return "pipx run names no app to run"
    if command[0].endswith(".py") and (base / command[0]).is_file():
        return Launched("pipx run", (), base, None, script=(base / command[0]).resolve(), clears_pythonpath=True)
    match = _VERSIONED.match(command[0])
    if match is None or "://" in command[0]:
        return f"pipx run: {command[0]} is not an app name"
    return Launched("pipx run", (), base, None, entry=match.group(1), clears_pythonpath=True)
