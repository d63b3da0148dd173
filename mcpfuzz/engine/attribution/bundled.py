"""The TypeScript SDK bundled into a server's own JavaScript (esbuild, webpack, rollup): read from the bundle's code.

A bundle imports no SDK by name and ships no node_modules for it, so its code is the evidence: the SDK's server
class refuses a capability it was not given with `Server does not support tools (required for ...`, and its stdio
transport `StdioServerTransport already started`; both strings survive minification. 1.x builds its errors as
`MCP error ${code}: ...`, which 2.x no longer does. The exact version is read where a bundler left it: a module
path with a license file naming `@modelcontextprotocol/sdk@X.Y.Z`, or a manifest of the bundled packages beside
the bundle (`"@modelcontextprotocol/server": "2.3.1"`); else the major alone is known (`1.x`, `2.x`).
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from itertools import chain
from pathlib import Path

from mcpfuzz.engine.attribution.sdks import Sdk, SdkInfo

MAX_BUNDLE_BYTES = 32 << 20  # a bundle of a whole app (browser tooling included) stays below this
MAX_BESIDE_BYTES = 1 << 20
MAX_BESIDE_FILES = 16
SERVER_MARKS = (b"Server does not support tools (required for ", b"StdioServerTransport already started")
V1_MARK = b"MCP error ${"
EXPRESS_MARK = b"createMcpExpressApp"  # @modelcontextprotocol/express's app factory, bundled with the server
# `@modelcontextprotocol/sdk@1.2.3`, `"@modelcontextprotocol/server": "2.3.1"`, and an isolated install's store
# folder (pnpm's and Bun's `.pnpm/@modelcontextprotocol+sdk@1.26.0/`), which bundlers keep in module paths.
NAMED_VERSION = re.compile(rb"@modelcontextprotocol[/+](sdk|server|core)[@\"':\s]+\"?(\d+\.\d+\.\d+(?:-[\w.]+)?)")


def bundled_sdk(files: Iterable[Path]) -> SdkInfo | None:
    """The TypeScript SDK one of these files (a server's entry and the files it loads) carries in its own code."""
    for file in files:
        try:
            with open(file, "rb") as handle:
                code = handle.read(MAX_BUNDLE_BYTES)
        except OSError:
            continue
        if not all(mark in code for mark in SERVER_MARKS):
            continue
        major = "1" if V1_MARK in code else "2"
        version = named_version(chain((code,), _beside(file)), major) or f"{major}.x"
        express = frozenset({"@modelcontextprotocol/express"}) if EXPRESS_MARK in code else frozenset()
        return SdkInfo(Sdk.TYPESCRIPT, version, f"bundled in {file}", packages=express)
    return None


def named_version(texts: Iterable[bytes], major: str) -> str | None:
    """The SDK's version of this major that one of these texts names (the bundle, its license file, a manifest
    beside it)."""
    for text in texts:
        for match in NAMED_VERSION.finditer(text):
            package, version = match.group(1).decode(), match.group(2).decode()
            if (package == "sdk") == (major == "1") and version.split(".")[0] == major:
                return version
    return None


def _beside(file: Path) -> Iterable[bytes]:
    """The bundle's license files (`main.js.LICENSE.txt`) and the JSON manifests in its folder."""
    try:
        siblings = sorted(file.parent.iterdir())
    except OSError:
        return
    wanted = [path for path in siblings if path.name.startswith(file.name + ".LICENSE")]
    wanted += [path for path in siblings if path.suffix == ".json" and path.name != "package.json"]
    for path in wanted[:MAX_BESIDE_FILES]:
        try:
            with open(path, "rb") as handle:
                yield handle.read(MAX_BESIDE_BYTES)
        except OSError:
            continue
