"""Whether a server command runs a Node script, which folder holds its own code, and the V8 preload's folder for it."""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from mcpfuzz.engine.attribution.detect import which, without_env
from mcpfuzz.engine.coverage.launch import ENV_FILE, ENV_ROOTS, ENV_SDK, CoverageSetup

PRELOAD = Path(__file__).with_name("node_preload.cjs")
PRELOAD_NAME = "mcpfuzz-v8cov.cjs"
NODES = ("node", "nodejs")
RUNNERS = ("tsx", "ts-node", "ts-node-esm")  # npm bins that run the script they are given, as node does
NPX_CACHE = Path.home() / ".npm" / "_npx"
MAX_NPX_CACHES = 200  # npx keeps one folder per package set; more is a machine we should not crawl
SHEBANG_BYTES = 512
# node's options that take the next word as their value (`node -r x.cjs server.js`: the script is server.js).
_VALUED = {"-r", "--require", "--import", "--loader", "--experimental-loader", "-C", "--conditions", "--env-file",
           "--input-type", "--title", "--stack-size", "--max-old-space-size", "--inspect-port"}
_NO_SCRIPT = {"-e", "--eval", "-p", "--print", "-i", "--interactive", "-c", "--check", "--test"}
_NPX_VALUED = {"-p", "--package", "-c", "--call", "--registry", "--cache", "--prefix", "-w", "--workspace"}
SCRIPT_SUFFIXES = (".js", ".mjs", ".cjs")


@dataclass(frozen=True)
class NodeServer:
    """A server command that runs a Node script, and the folders holding its own code."""

    entry: str  # the script node runs, or the package folder of `npx PACKAGE` (its bin is npm's to choose)
    roots: tuple[str, ...]


def node_server(command: Sequence[str], cwd: str | None = None) -> NodeServer | str | None:
    """The Node server `command` starts (`node server.js`, an npm bin whose `#!` names node, `npx [-y] PACKAGE` once
    npx has fetched it), why a Node command has none, in the user's words, or None when the command is not Node's."""
    words = list(without_env(command))
    if not words:
        return None
    base = Path(cwd) if cwd else Path.cwd()
    name = Path(words[0]).name
    if name in NODES:
        return _node_script(words[1:], base)
    if name == "npx":
        return _npx_script(words[1:], base)
    program = which(words[0]) or (str(base / words[0]) if (base / words[0]).is_file() else None)
    if program is None:
        return None
    script = Path(program).resolve()
    if not _runs_on_node(script):
        return None
    if name in RUNNERS:  # `tsx server.ts`: the server is the runner's script, not the runner's own package
        return _node_script(words[1:], base)
    return NodeServer(str(script), (str(package_root(script)),))


def _node_script(arguments: list[str], base: Path) -> NodeServer | str:
    """`node [options] script [arguments]`: the script, skipping node's own options and their values."""
    index = 0
    while index < len(arguments):
        word = arguments[index]
        if word in _NO_SCRIPT:
            return f"node {word} runs no script file of the server's"
        if word == "--":
            index += 1
            break
        if not word.startswith("-"):
            break
        index += 2 if word in _VALUED else 1
    if index >= len(arguments):
        return "no script file of the server's is given to node"
    script = (base / arguments[index]).resolve()
    if not script.is_file():
        return f"{arguments[index]} was not found"
    return NodeServer(str(script), (str(package_root(script)),))


def _npx_script(arguments: list[str], base: Path) -> NodeServer | str:
    """`npx [-y] PACKAGE`: the package in the working folder's node_modules (its bin by the package's name, or its
    folder), as npx looks there first, else npx's newest cached copy of it; `npx tsx script`: the script."""
    package = None
    index = 0
    while index < len(arguments) and package is None:
        word = arguments[index]
        if word in ("-p", "--package") and index + 1 < len(arguments):
            package = arguments[index + 1]
        elif word.startswith("--package="):
            package = word.partition("=")[2]
        elif not word.startswith("-"):
            package = word
        index += 2 if word in _NPX_VALUED else 1
    if package is None:
        return "npx is given no package to run"
    bare = _bare_package(package)
    if bare in RUNNERS:  # `npx tsx server.ts`
        return _node_script(arguments[index:], base)
    local = base / "node_modules" / ".bin" / bare.rpartition("/")[2]
    if local.is_file() and _runs_on_node(local.resolve()):
        return NodeServer(str(local.resolve()), (str(package_root(local.resolve())),))
    copies = [base / "node_modules" / bare] if (base / "node_modules" / bare).is_dir() else _npx_copies(bare)
    if copies:
        return NodeServer(str(copies[0]), (str(copies[0].resolve()),))
    return f"npx has not fetched {bare} yet (run the server once without --coverage so that npx caches it)"


def _npx_copies(package: str) -> list[Path]:
    """npx's cached copies of `package`, newest first."""
    try:
        caches = sorted(NPX_CACHE.iterdir(), key=lambda path: path.stat().st_mtime, reverse=True)[:MAX_NPX_CACHES]
    except OSError:
        return []
    return [cache / "node_modules" / package for cache in caches if (cache / "node_modules" / package).is_dir()]


def _bare_package(spec: str) -> str:
    """`@scope/name@1.2` -> `@scope/name`; `name@latest` -> `name`."""
    scoped = spec.startswith("@")
    head = spec[1:].partition("@")[0] if scoped else spec.partition("@")[0]
    return "@" + head if scoped else head


def _runs_on_node(script: Path) -> bool:
    """A JavaScript file, or a script whose `#!` names node (`#!/usr/bin/env node`, `#!/usr/bin/env -S node ...`)."""
    if script.suffix in SCRIPT_SUFFIXES:
        return script.is_file()
    try:
        with open(script, "rb") as handle:
            first = handle.readline(SHEBANG_BYTES)
    except OSError:
        return False
    if not first.startswith(b"#!"):
        return False
    words = first[2:].decode("utf-8", "replace").split()
    if words and Path(words[0]).name == "env":
        words = [word for word in words[1:] if not word.startswith("-")]
    return bool(words) and Path(words[0]).name in NODES


def package_root(script: Path) -> Path:
    """The folder of the nearest package.json above a script (its package: `dist/index.js` counts `src/` too), looked
    for up to the repository's top; else the script's own folder."""
    for folder in script.parents:
        if (folder / "package.json").is_file():
            return folder
        if folder.name == "node_modules" or (folder / ".git").exists():
            break
    return script.parent


def node_setup(server: NodeServer, *, include_sdk: bool, env: Mapping[str, str]) -> CoverageSetup:
    """The folder made, the preload copied in, and the environment that makes node load it: `--require` first in
    NODE_OPTIONS, the server's own NODE_OPTIONS (from --env or mcpfuzz's environment) kept after it."""
    folder = Path(tempfile.mkdtemp(prefix="mcpfuzz-coverage-"))
    preload = folder / PRELOAD_NAME
    shutil.copyfile(PRELOAD, preload)
    log = folder / "lines.tsv"
    log.touch()
    existing = env.get("NODE_OPTIONS", os.environ.get("NODE_OPTIONS", ""))
    quoted = '"' + str(preload).replace("\\", "\\\\").replace('"', '\\"') + '"'
    options = " ".join([f"--require {quoted}", *([existing] if existing else [])])
    added = {"NODE_OPTIONS": options, ENV_FILE: str(log), ENV_ROOTS: os.pathsep.join(server.roots),
             ENV_SDK: "1" if include_sdk else "0"}
    return CoverageSetup(folder, log, added)
