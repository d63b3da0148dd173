"""Which MCP SDK (and version) a server is built on, read from the files its command runs (nothing is run).

A Python command's virtual environment holds `mcp-X.Y.Z.dist-info` (and `fastmcp-X.Y.Z.dist-info` for a server
on the standalone FastMCP, which is built on `mcp`), when the entry file imports it; a Node command's entry script
(or the bin of npx's cached package) names the MCP package it imports, resolved as Node resolves it (node.py).
A compiled server (reached directly, through an npm `bin` link or a PyPI script, or as the platform package an npm
wrapper lists in its optionalDependencies) tells by its own bytes: Go's build information, rmcp's source paths, a
.NET deps.json, a Bun executable's embedded sources; a `java` command by its jars. Each of those readers lives in
its own module.
"""

from __future__ import annotations

import os
import re
import shutil
from collections.abc import Iterator, Sequence
from pathlib import Path

from mcpfuzz.engine.attribution.binfile import is_executable_image
from mcpfuzz.engine.attribution.bun import bun_sdk
from mcpfuzz.engine.attribution.dotnet import dotnet_sdk
from mcpfuzz.engine.attribution.golang import go_sdk
from mcpfuzz.engine.attribution.java import java_sdk
from mcpfuzz.engine.attribution.node import node_stack, read_manifest
from mcpfuzz.engine.attribution.rust import rust_sdk
from mcpfuzz.engine.attribution.sdks import Sdk, SdkInfo

__all__ = ["Sdk", "SdkInfo", "detect_sdk", "binary_sdk"]

_DIST_INFO = re.compile(r"^mcp-(\d[\w.+-]*)\.dist-info$")
_FASTMCP_DIST_INFO = re.compile(r"^fastmcp(?:_slim)?-(\d[\w.+-]*)\.dist-info$")
_NPX_CACHE = Path.home() / ".npm" / "_npx"
MAX_NPX_CACHES = 200  # npx keeps one folder per package set; more is a machine we should not crawl


def detect_sdk(command: Sequence[str]) -> SdkInfo | None:
    """The SDK behind a server command (a stdio command, or an HTTP server's --launch), or None."""
    command = without_env(command)
    if not command:
        return None
    program = which(command[0])
    if program is not None and not is_runtime(program) and is_executable_image(Path(program).resolve()):
        return binary_sdk(Path(program).resolve())  # the server itself: no interpreter's packages apply
    for reader in (_python_sdk, _node_sdk, _jvm_or_dotnet_sdk):
        found = reader(command)
        if found is not None:
            return found
    return None


_RUNTIMES = re.compile(r"^(?:node|nodejs|bun|deno|java|javaw|dotnet|uv|uvx|pipx|python[\d.]*)(?:\.exe)?$")


def is_runtime(program: str) -> bool:
    """A runtime or launcher that runs the server's code (its own bytes say nothing about the server)."""
    return bool(_RUNTIMES.match(Path(program).name) or _RUNTIMES.match(Path(program).resolve().name))


def binary_sdk(binary: Path) -> SdkInfo | None:
    """The SDK a compiled server was built with: Go's build information, rmcp's source paths, .NET's deps.json, the
    sources a Bun executable embeds."""
    for reader in (go_sdk, rust_sdk, dotnet_sdk, bun_sdk):
        found = reader(binary)
        if found is not None:
            return found
    return None


def _jvm_or_dotnet_sdk(command: Sequence[str]) -> SdkInfo | None:
    """`java ... -jar app.jar` / `java -cp ...`, or `dotnet server.dll`."""
    name = Path(command[0]).name.removesuffix(".exe")
    if name in ("java", "javaw"):
        return java_sdk(command[1:])
    if name == "dotnet":
        dll = next((word for word in command[1:] if word.endswith(".dll")), None)
        return None if dll is None else dotnet_sdk(Path(dll))
    return None


_ASSIGNMENT = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*=")


_WRAPPERS = {"env", "nice", "setsid", "unshare", "timeout", "stdbuf", "ionice", "taskset"}
_WRAPPER_VALUES = {"nice": {"-n"}, "timeout": {"-s", "-k", "--signal", "--kill-after"}, "ionice": {"-c", "-n"}}


def without_env(command: Sequence[str]) -> Sequence[str]:
    """`env PORT=3001 node server.js` (a usual --launch command) is `node server.js`; so are the other wrappers that
    run a command unchanged (`unshare -n`, `timeout 60`, `nice -n 5`, `setsid`)."""
    words = list(command)
    while words and Path(words[0]).name in _WRAPPERS:
        wrapper = Path(words.pop(0)).name
        while words and words[0].startswith("-"):
            option = words.pop(0)
            if option in _WRAPPER_VALUES.get(wrapper, ()) and words:
                words.pop(0)
        if wrapper == "timeout" and words:
            words.pop(0)  # the duration
        elif wrapper == "taskset" and words:
            words.pop(0)  # the CPU mask
        while wrapper == "env" and words and _ASSIGNMENT.match(words[0]):
            words.pop(0)
    while words and _ASSIGNMENT.match(words[0]):
        words = words[1:]
    return words


def _python_sdk(command: Sequence[str]) -> SdkInfo | None:
    """`python ...` or a console script: the `mcp` package (or FastMCP over it) of that interpreter's environment."""
    program = which(command[0])
    if program is None:
        return None
    interpreter = program if Path(program).name.startswith("python") else _shebang_python(program)
    if interpreter is None:
        return None
    return python_stack(command, site_packages(Path(interpreter)), Path.cwd())


def python_stack(command: Sequence[str], sites: list[Path], cwd: Path) -> SdkInfo | None:
    """The `mcp` (or FastMCP over it) of these site-packages that a Python command runs: only when its entry file
    imports it (`cwd`: where the command's relative paths start)."""
    entry = _entry_text(command, sites, cwd)
    if entry is not None and _MCP_IMPORT.search(entry) is None:
        return None
    mcp = _dist_info(sites, "mcp-*.dist-info", _DIST_INFO, Sdk.PYTHON)
    # The standalone FastMCP: the entry imports `fastmcp` (a console script of its environment: installed
    # at all). `from mcp.server.fastmcp import FastMCP` is mcp's own copy, so mcp's.
    if entry is None or _FASTMCP_IMPORT.search(entry) is not None:
        fastmcp = _dist_info(sites, "fastmcp*.dist-info", _FASTMCP_DIST_INFO, Sdk.FASTMCP)
        if fastmcp is not None:
            return SdkInfo(fastmcp.sdk, fastmcp.version, fastmcp.source, base=mcp)
    return mcp


def _dist_info(sites: list[Path], pattern: str, name: re.Pattern[str], sdk: Sdk) -> SdkInfo | None:
    """The first `NAME-VERSION.dist-info` of a package in the environment's site-packages, as an SdkInfo."""
    for site in sites:
        for entry in sorted(site.glob(pattern)):
            match = name.match(entry.name)
            if match:
                return SdkInfo(sdk, match.group(1), str(entry))
    return None


_MCP_IMPORT = re.compile(rb"^\s*(?:from|import)\s+(?:mcp|fastmcp)\b", re.MULTILINE)
_FASTMCP_IMPORT = re.compile(rb"^\s*(?:from|import)\s+fastmcp\b", re.MULTILINE)
MAX_SCRIPT_BYTES = 1 << 20
MAX_PACKAGE_FILES = 200  # modules of a `python -m` package read for its imports


def _entry_text(command: Sequence[str], sites: list[Path], cwd: Path) -> bytes | None:
    """The start of the server's own entry file, b"" when unreadable, None for a console script (its package is
    the server's). A Python server counts only when its entry file imports mcp or fastmcp: an environment that
    merely has `mcp` installed (a test suite's) says nothing about a hand-written server."""
    words = list(command[1:])
    if "-m" in words and words.index("-m") + 1 < len(words):
        entry = _module_file(words[words.index("-m") + 1], sites, cwd)
    else:
        script = next((word for word in words if word.endswith(".py")), None)
        if script is None:
            return None  # a console script of the environment: its package is the server's
        entry = cwd / script
    if entry is None:
        return b""
    # `python -m package` runs its __main__.py, which mostly calls into the package (mcp-server-time's imports
    # only its own `main`): the package's modules together are the entry, read up to the same bound.
    files = sorted(entry.parent.rglob("*.py")) if entry.name == "__main__.py" else [entry]
    text = b""
    for path in files[:MAX_PACKAGE_FILES]:
        try:
            with open(path, "rb") as handle:
                text += handle.read(MAX_SCRIPT_BYTES - len(text)) + b"\n"
        except OSError:
            continue
        if len(text) >= MAX_SCRIPT_BYTES:
            break
    return text


def _module_file(module: str, sites: list[Path], cwd: Path) -> Path | None:
    """The file `python -m module` runs, found in the working folder or the environment (never imported)."""
    relative = Path(*module.split("."))
    for root in (cwd, *sites):
        for candidate in (root / relative / "__main__.py", root.joinpath(*relative.parts[:-1],
                                                                          relative.name + ".py")):
            if candidate.is_file():
                return candidate
    return None


def _node_sdk(command: Sequence[str]) -> SdkInfo | None:
    """`node [options] script.js`, `tsx src/index.ts`, a bin from node_modules, or `npx [-y] PACKAGE`: the MCP
    package the entry script imports (node.py), or the binary an npm wrapper runs."""
    entries = node_entries(command)
    for entry in entries:
        for binary in _platform_binaries(entry.parent):
            found = binary_sdk(binary)
            if found is not None:
                return found
    for entry in entries:
        found = node_stack(entry)
        if found is not None:
            return found
    return None


_NODE_RUNNERS = {"node", "nodejs", "tsx", "ts-node", "ts-node-esm", "bun"}
# Node's options that take the next word as their value (the rest are `--flag` or `--flag=value`).
_NODE_VALUE_OPTIONS = {"-r", "--require", "--import", "--loader", "--experimental-loader", "--env-file",
                       "--conditions", "-C", "--input-type", "--stack-size", "--max-old-space-size", "--tsconfig"}


def node_entries(command: Sequence[str], cwd: Path | None = None) -> list[Path]:
    """The script files a Node command runs (relative paths from `cwd`, else the working folder): the runner's
    first operand, a bin's target, npx's package's bins."""
    name = Path(command[0]).name
    if name in _NODE_RUNNERS:
        words = list(command[1:])
        while words and words[0].startswith("-"):
            option = words.pop(0)
            if option in _NODE_VALUE_OPTIONS and words:
                words.pop(0)
        return [((cwd or Path.cwd()) / words[0]).resolve()] if words else []
    if name in ("npx", "pnpx", "bunx"):
        package = next((word for word in command[1:] if not word.startswith("-")), None)
        if package is None:
            return []
        return [bin_file for folder in _npx_packages(_bare_package(package)) for bin_file in _bin_files(folder)]
    program = which(command[0])
    return [] if program is None else [Path(program).resolve()]


MAX_PLATFORM_PACKAGES = 16


def _platform_binaries(start: Path) -> Iterator[Path]:
    """The compiled programs an npm wrapper runs: the `bin` files of the platform packages its package.json lists
    as optionalDependencies (`@azure/mcp` -> `@azure/mcp-linux-x64`), those installed here."""
    for folder in (start, *start.parents):
        manifest = read_manifest(folder / "package.json")
        if manifest is None:
            continue
        optional = manifest.get("optionalDependencies")
        names = list(optional)[:MAX_PLATFORM_PACKAGES] if isinstance(optional, dict) else []
        for name in names:
            package = _installed_package(folder, name)
            if package is None:
                continue
            for binary in _bin_files(package):
                if is_executable_image(binary):
                    yield binary
        return  # the nearest package.json is the wrapper's


def _installed_package(package_folder: Path, name: str) -> Path | None:
    """Where node would find `name` from a package: its own node_modules, then each node_modules above."""
    for folder in (package_folder, *package_folder.parents):
        candidate = folder / name if folder.name == "node_modules" else folder / "node_modules" / name
        if (candidate / "package.json").is_file():
            return candidate
    return None


def _bin_files(package: Path) -> list[Path]:
    """The files a package.json's `bin` names (a string or a name -> path map)."""
    manifest = read_manifest(package / "package.json") or {}
    entries = manifest.get("bin")
    paths = [entries] if isinstance(entries, str) else list(entries.values()) if isinstance(entries, dict) else []
    return [(package / path).resolve() for path in paths if isinstance(path, str)]


def _npx_packages(package: str) -> Iterator[Path]:
    """npx's cached copies of `package`, newest first."""
    try:
        caches = sorted(_NPX_CACHE.iterdir(), key=lambda p: p.stat().st_mtime, reverse=True)[:MAX_NPX_CACHES]
    except OSError:
        return
    for cache in caches:
        folder = cache / "node_modules" / package
        if folder.is_dir():
            yield folder


def _bare_package(spec: str) -> str:
    """`@scope/name@1.2` -> `@scope/name`; `name@latest` -> `name`."""
    head, at, _ = spec[1:].partition("@") if spec.startswith("@") else spec.partition("@")
    return ("@" + head) if spec.startswith("@") else head


def which(program: str) -> str | None:
    found = shutil.which(program)
    return os.path.abspath(found) if found else None


def _shebang_python(script: str) -> str | None:
    """The interpreter a console script's `#!` line names (pip and uv write the venv's python there)."""
    try:
        with open(script, "rb") as handle:
            first = handle.readline(512)
    except OSError:
        return None
    if not first.startswith(b"#!"):
        return None
    words = first[2:].decode("utf-8", "replace").split()
    return words[0] if words and Path(words[0]).name.startswith("python") else None


def site_packages(interpreter: Path) -> list[Path]:
    """The site-packages folders of the virtual environment an interpreter belongs to (none for a system one)."""
    root = interpreter.parent.parent
    if not (root / "pyvenv.cfg").exists():
        return []
    return sorted(root.glob("lib/python*/site-packages")) + sorted(root.glob("Lib/site-packages"))
