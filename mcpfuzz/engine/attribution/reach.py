"""The MCP SDK a Node server reaches through packages of its own vendor: entry -> `@vendor/cli` -> `@vendor/core` ->
the SDK, followed the way Node loads them.

Each package the entry's files import is resolved from the importing file's folder (node_modules above it), its
file found through its package.json (`exports` under Node's run-time conditions, else `main`), and that file and
the local files it imports are read for what they import in turn, breadth first, within bounds (package hops,
packages, files, bytes). Only code that runs counts: a declaration file, a type-only import or a package.json's
`dependencies` never do, so a library that lists the SDK without importing it at run time (a UI helper bundling
its own code) brings no SDK.

The rule when several are reached: the nearest hop at which an MCP package is imported decides; there, one
version is the stack; two versions of the SDK are told apart only when exactly one of them is imported through a
transport module (`.../stdio`, `.../streamableHttp.js`: the code that reads the frames); otherwise none is named,
since naming the wrong one would mark the server's own findings as the SDK's. The packages imported on the way
(up to the deciding hop) are kept by name too: an optional package of the SDK (its Express app) counts only where
it is seen loaded.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

from mcpfuzz.engine.attribution.node import (
    ALIASES,
    KNOWN,
    known_package,
    local_module,
    package_file,
    package_name,
    resolve_package,
    specifiers_of,
)
from mcpfuzz.engine.attribution.sdks import SdkInfo

MAX_HOPS = 4  # packages between the entry and the SDK (a vendor's cli, core, runner)
MAX_PACKAGES = 96  # packages entered
MAX_FILES = 800  # files read over all of them
MAX_BYTES = 24 << 20  # bytes read over all of them
MAX_FILE_BYTES = 1 << 20
# Hops walked past the one that names the SDK, for the names of the SDK's optional packages loaded deeper in; 0:
# a hop further costs about ten times the walk so far (mongodb-mcp-server: 0.46 s of CPU against 0.05 s).
AFTER_DECIDING = 0
_TRANSPORT = re.compile(r"(?:^|/)(?:stdio|sse|streamableHttp|webStandardStreamableHttp)(?:\.[cm]?js)?$", re.I)


@dataclass
class _Budget:
    """What is left to read: files and bytes over every package followed."""

    files: int = MAX_FILES
    bytes: int = MAX_BYTES

    def take(self, file: Path) -> int:
        """The bytes this file may be read up to (0: the budget is spent)."""
        if self.files <= 0 or self.bytes <= 0:
            return 0
        try:
            size = min(file.stat().st_size, MAX_FILE_BYTES, self.bytes)
        except OSError:
            return 0
        self.files -= 1
        self.bytes -= size
        return size


@dataclass(frozen=True)
class Reached:
    """A known MCP package imported at run time by a followed package, and whether through its transport."""

    stack: SdkInfo
    transport: bool


@dataclass
class _Hop:
    """What one hop of the walk met: the known packages imported, and the specifiers to follow next."""

    reached: list[Reached] = field(default_factory=list)
    onward: list[tuple[str, Path]] = field(default_factory=list)


@dataclass(frozen=True)
class Walk:
    """What following the packages found: the MCP packages of the nearest hop importing any, and the names of
    every package imported on the way (within the bounds)."""

    reached: list[Reached]
    imported: frozenset[str]


def reached_packages(imports: list[tuple[str, Path]]) -> list[Reached]:
    """The known MCP packages imported at the nearest hop that imports any (`imports`: specifier, and the folder
    of the file importing it); `pick` names the stack among them by the rule above."""
    return walk_packages(imports).reached


def walk_packages(imports: list[tuple[str, Path]]) -> Walk:
    """Follow the imported packages hop by hop, up to the deciding one (and AFTER_DECIDING more, same bounds)."""
    budget = _Budget()
    entered: set[Path] = set()
    names: set[str] = set()
    reached: list[Reached] | None = None
    frontier = [(specifier, start) for specifier, start in imports if package_name(specifier) not in KNOWN]
    last = MAX_HOPS
    for index in range(MAX_HOPS):
        if index > last:
            break
        hop = _Hop()
        for specifier, start in frontier:
            if len(entered) >= MAX_PACKAGES:
                break
            _enter(specifier, start, entered, budget, hop)
        names.update(package_name(specifier) for specifier, _ in hop.onward)
        if reached is None and hop.reached:
            reached, last = hop.reached, index + AFTER_DECIDING
        if not hop.onward:
            break
        frontier = hop.onward
    return Walk(reached or [], frozenset(names))


def pick(reached: list[Reached]) -> SdkInfo | None:
    """One stack of those reached at one hop: the only one, else the only one imported through its transport."""
    distinct = _distinct(reached)
    if len(distinct) == 1:
        return distinct[0].stack
    carried = _distinct([item for item in distinct if item.transport])
    return carried[0].stack if len(carried) == 1 else None


def _distinct(reached: list[Reached]) -> list[Reached]:
    """One per stack (SDK and version), transport-imported ones kept in preference."""
    by_stack: dict[tuple[str, str], Reached] = {}
    for item in reached:
        key = (item.stack.sdk.value, item.stack.version)
        if key not in by_stack or (item.transport and not by_stack[key].transport):
            by_stack[key] = item
    return list(by_stack.values())


def _enter(specifier: str, start: Path, entered: set[Path], budget: _Budget, hop: _Hop) -> None:
    """Read the file a package specifier loads and the local files it imports, noting what they import."""
    name = package_name(specifier)
    package = resolve_package(name, start)
    file = package_file(package, specifier) if package is not None else None
    if file is None or file in entered:
        return
    entered.add(file)
    pending = [file]
    seen: set[Path] = set()
    while pending:
        current = pending.pop(0)
        if current in seen:
            continue
        seen.add(current)
        limit = budget.take(current)
        if limit <= 0:
            return
        for imported in specifiers_of(current, limit):
            if imported.startswith((".", "/")):
                local = local_module(current.parent, imported)
                if local is not None and local not in seen:
                    pending.append(local)
            elif not imported.startswith(("node:", "data:", "http:", "https:")):
                _note(imported, current.parent, hop)


def _note(specifier: str, start: Path, hop: _Hop) -> None:
    """A known MCP package is reached (with whether a transport module of it is what is imported); any other
    package is followed at the next hop."""
    name = ALIASES.get(package_name(specifier), package_name(specifier))
    if name in KNOWN:
        stack = known_package(name, start)
        if stack is not None:
            hop.reached.append(Reached(stack, bool(_TRANSPORT.search(specifier[len(name):]))))
        return
    hop.onward.append((specifier, start))
