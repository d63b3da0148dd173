"""An MCP server on the real `mcp` 2.x SDK whose bugs answer nothing about themselves (blind), and its clean twin.

    python sdk2_blind_server.py ROOT           the blind bugs
    python sdk2_blind_server.py ROOT --clean   the same tools, done right

ROOT is the folder the server is given. The bugs: `write_note` writes wherever the path leads and answers "saved";
`exists` checks the path with a prefix test (no separator) and answers only true or false; `read_size` checks the
path as written, then opens it through any symlink and answers only a size; `count_lines` runs a shell line holding
its argument and answers a number; `lookup` is annotated read-only and writes a cache file; `ping` is not annotated
openWorldHint and connects to the URL it is given; `delete_file` deletes wherever the path leads.

Kept harmless whatever it is sent: files are written or deleted only inside the system's temporary folder, `ping`
connects only to a loopback address, and the shell runs only lines made of `wc`, `touch` (of files in the temporary
folder) and `echo`.
"""

from __future__ import annotations

import os
import re
import socket
import subprocess
import sys
import tempfile
from urllib.parse import urlsplit

from mcp.server.mcpserver import MCPServer
from mcp.types import ToolAnnotations

ROOT = os.path.realpath(sys.argv[1] if len(sys.argv) > 1 and not sys.argv[1].startswith("-") else os.getcwd())
CLEAN = "--clean" in sys.argv
TEMP = os.path.join(os.path.realpath(tempfile.gettempdir()), "")
LOOPBACK = {"127.0.0.1", "localhost", "::1"}
SEGMENT = re.compile(r"[;|&\n`()$]+")

app = MCPServer("sdk2-blind-server", version="0.1.0")


def confined(path: str) -> str | None:
    """The real path inside ROOT that `path` names, or None (what a right check does)."""
    real = os.path.realpath(os.path.join(ROOT, path))
    return real if os.path.commonpath([real, ROOT]) == ROOT else None


def in_temp(path: str) -> bool:
    """The test's own safety net: nothing outside the temporary folder is ever written or deleted."""
    return os.path.realpath(path).startswith(TEMP)


@app.tool()
def write_note(path: str, text: str) -> str:
    """Save a note at path (relative to the root)."""
    target = confined(path) if CLEAN else os.path.join(ROOT, path)
    if target is None or not in_temp(target):
        return "refused"
    try:
        with open(target, "w", encoding="utf-8") as handle:
            handle.write(text)
    except OSError:
        return "failed"
    return "saved"


@app.tool()
def exists(path: str) -> dict:
    """Whether a file exists under the root."""
    if CLEAN:
        target = confined(path)
        return {"exists": target is not None and os.path.exists(target)}
    full = os.path.abspath(os.path.join(ROOT, path))
    if not full.startswith(ROOT):  # the bug: /root-private starts with /root
        return {"exists": False}
    return {"exists": os.path.exists(full)}


@app.tool()
def read_size(path: str) -> str:
    """The size of a file under the root, in bytes."""
    if CLEAN:
        target = confined(path)
    else:
        full = os.path.abspath(os.path.join(ROOT, path))
        target = full if full.startswith(ROOT + os.sep) else None  # the bug: checked as written, links followed
    if target is None:
        return "refused"
    try:
        with open(target, "rb") as handle:
            return f"{len(handle.read())} bytes"
    except OSError:
        return "unreadable"


def harmless(line: str) -> bool:
    """Only `wc`, `echo` and `touch` of files in the temporary folder: what the test lets a shell run."""
    for segment in SEGMENT.split(line):
        words = [word.strip("'\"") for word in segment.split()]
        words = [word for word in words if word]
        if not words:
            continue
        if words[0] == "touch":
            if not all(word.startswith(TEMP) for word in words[1:]):
                return False
        elif words[0] not in ("wc", "echo", "x", "-l"):
            return False
    return True


@app.tool()
def count_lines(path: str) -> str:
    """How many lines a file under the root has."""
    if CLEAN:
        target = confined(path)
        if target is None:
            return "refused"
        try:
            with open(target, "rb") as handle:
                return str(handle.read().count(b"\n"))
        except OSError:
            return "0"
    line = f"wc -l {path}"
    if not harmless(line):
        return "0"
    done = subprocess.run(["/bin/sh", "-c", line], cwd=ROOT, capture_output=True, text=True, timeout=10)
    return done.stdout.strip().split(" ")[0] or "0"


@app.tool(annotations=ToolAnnotations(readOnlyHint=True))
def lookup(key: str) -> str:
    """Look a key up (read-only)."""
    if not CLEAN:
        with open(os.path.join(ROOT, ".lookup-cache"), "a", encoding="utf-8") as handle:  # the bug: a write
            handle.write(key[:40] + "\n")
    return f"no entry for {key[:40]!r}"


@app.tool()
def ping(url: str) -> str:
    """Tell whether a URL's server is reachable."""
    try:
        parts = urlsplit(url if "//" in url else f"http://{url}")
        host, port = parts.hostname, parts.port or 80
    except ValueError:
        return "invalid"
    if host not in LOOPBACK:
        return "unsupported host"
    if CLEAN:
        return "not checked"
    try:
        with socket.create_connection((host, port), timeout=1):
            return "reachable"
    except OSError:
        return "unreachable"


@app.tool()
def delete_file(path: str) -> str:
    """Delete a file under the root."""
    target = confined(path) if CLEAN else os.path.join(ROOT, path)
    if target is None or not in_temp(target) or not os.path.isfile(target):
        return "no such file"
    os.remove(target)
    return "deleted"


if __name__ == "__main__":
    app.run()
