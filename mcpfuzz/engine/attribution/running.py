"""The MCP stack a live server process runs, read from the process tree after the handshake (Linux's /proc).

What a command line says is a guess at what will run; the running processes say what does. Each process of the
server's tree is asked in turn, the root first: a Node process by the entry script of its own command line (npx's
and tsx's children included), resolved from its own working folder; a Python process by the site-packages its
loaded extension modules come from (`/proc/PID/maps`: the environment it really imports from, `uv run` and `uvx`
included) and its entry file's imports; any other process by its executable's own bytes (Go build information,
rmcp's paths, .NET's deps.json). A wrapper (npm, uv, a shell) names nothing, so the first process that names a
stack is the server.
"""

from __future__ import annotations

import re
from dataclasses import replace
from pathlib import Path

import psutil

from mcpfuzz.engine.attribution.binfile import is_executable_image
from mcpfuzz.engine.attribution.detect import binary_sdk, is_runtime, node_entries, python_stack, site_packages
from mcpfuzz.engine.attribution.node import node_stack
from mcpfuzz.engine.attribution.sdks import SdkInfo

MAX_PROCESSES = 32  # processes of the tree looked at (a server's tree is a handful: a launcher, the server, a shell)
MAX_MAPS_BYTES = 4 << 20
_SITE = re.compile(r"\s(/\S*/site-packages)/")
_NODE = re.compile(r"^(?:node|nodejs|bun)(?:\.exe)?$")
_PYTHON = re.compile(r"^python[\d.]*(?:\.exe)?$")


def running_stack(pid: int) -> SdkInfo | None:
    """The stack the first process of the tree rooted at `pid` runs, with that process as evidence; None when no
    process of it names one (or the processes cannot be read)."""
    try:
        root = psutil.Process(pid)
        processes = [root, *root.children(recursive=True)][:MAX_PROCESSES]
    except psutil.Error:
        return None
    for process in processes:
        try:
            found = process_stack(process)
            command = process.cmdline()
        except psutil.Error:
            continue
        if found is not None:
            return replace(found, runtime=f"process {process.pid}: {' '.join(command)[:200]}")
    return None


def process_stack(process: psutil.Process) -> SdkInfo | None:
    """The stack one process runs, from its executable, command line and loaded files."""
    exe = Path(process.exe())
    command = process.cmdline()
    if not command:
        return None
    cwd = Path(process.cwd())
    if _NODE.match(exe.name) or _NODE.match(Path(command[0]).name):
        for entry in node_entries(["node", *command[1:]], cwd):
            found = node_stack(entry)
            if found is not None:
                return found
        return None
    if _PYTHON.match(exe.name) or _PYTHON.match(Path(command[0]).name):
        return python_stack(command, loaded_sites(process.pid, command[0], cwd), cwd)
    if not is_runtime(str(exe)) and is_executable_image(exe):
        return binary_sdk(exe)
    return None


def loaded_sites(pid: int, argv0: str, cwd: Path) -> list[Path]:
    """The site-packages folders a Python process loaded extension modules from, then those of the environment its
    `argv[0]` belongs to (a venv's python is a link to the system's, so /proc/PID/exe does not tell)."""
    sites: list[Path] = []
    try:
        with open(f"/proc/{pid}/maps", encoding="utf-8", errors="replace") as handle:
            text = handle.read(MAX_MAPS_BYTES)
    except OSError:
        text = ""
    for match in _SITE.finditer(text):
        site = Path(match.group(1))
        if site not in sites:
            sites.append(site)
    for site in site_packages(cwd / argv0 if "/" in argv0 else Path(argv0)):
        if site not in sites:
            sites.append(site)
    return sites
