"""The MCP package a Node server runs, found the way Node finds it: from what the entry script imports.

The entry script and the local files it imports (relative specifiers, followed up to a bound) name the packages
they import; each known MCP package among them is resolved from the importing file's folder through the
`node_modules` folders above it, as Node resolves a bare specifier, and its package.json says the version. A
framework (FastMCP, mcp-framework, @mastra/mcp) names the SDK it is built on: the SDK its own package resolves.
When the entry's own files import none, the packages they import are followed (reach.py): a vendor's command
package that imports its core package that imports the SDK. A bundled entry imports nothing by name: then the
entry package's `dependencies` (never its devDependencies, which a server keeps for types and tests) say what it
runs. Nothing else in node_modules counts: a package that is merely installed is not one the server runs.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Iterable, Iterator
from dataclasses import replace
from pathlib import Path

from mcpfuzz.engine.attribution.bundled import bundled_sdk
from mcpfuzz.engine.attribution.node_exports import exported_target
from mcpfuzz.engine.attribution.sdks import Sdk, SdkInfo

# Known MCP packages, frameworks first: a server on FastMCP imports the TypeScript SDK's types too, and runs both.
FRAMEWORKS = {"fastmcp": Sdk.FASTMCP_TS, "tmcp": Sdk.TMCP, "mcp-framework": Sdk.MCP_FRAMEWORK,
              "@mastra/mcp": Sdk.MASTRA}
# The TypeScript SDK: 2.x is split into @modelcontextprotocol/server (and core), 1.x is one package.
SDKS = {"@modelcontextprotocol/server": Sdk.TYPESCRIPT, "@modelcontextprotocol/sdk": Sdk.TYPESCRIPT}
KNOWN = {**FRAMEWORKS, **SDKS}
# Packages of the TypeScript SDK 2.x a server adds for a transport; a known behaviour of one is the SDK's only where
# the server loads it (the same Express error page from a server's own express.json() is the server's).
OPTIONAL_PACKAGES = frozenset({"@modelcontextprotocol/express", "@modelcontextprotocol/node",
                               "@modelcontextprotocol/hono"})
# tmcp's transports come in packages of their own: importing one runs tmcp.
ALIASES = {"@tmcp/transport-stdio": "tmcp", "@tmcp/transport-http": "tmcp", "@tmcp/adapter-zod": "tmcp"}

MAX_FILES = 200  # local modules followed from the entry
MAX_FILE_BYTES = 1 << 20
MAX_MANIFEST_BYTES = 1 << 20
_SPECIFIER = re.compile(
    r"""(?:\bfrom\s*|\bimport\s*|\b(?:import|require)\s*\(\s*)["']([^"'\n]{1,300})["']""")
# TypeScript erases these: a server's source that imports the SDK's types only does not run it.
_TYPE_KEYWORD = re.compile(r"\b(?:import|export)\s+type\s")
_FROM = re.compile(r"""\bfrom\s*["']([^"'\n]{1,300})["']""")
_STATEMENT_END = re.compile(r";|\b(?:import|export)\b")
_TYPE_CLAUSE_CHARS = 4000  # a type-only import naming many types over many lines
_SOURCE_SUFFIXES = ("", ".js", ".mjs", ".cjs", ".ts", ".mts", ".cts", "/index.js", "/index.mjs", "/index.cjs",
                    "/index.ts")


def node_stack(entry: Path) -> SdkInfo | None:
    """The known MCP package (and what it is built on) that a Node entry script runs, or None."""
    script = _existing(entry)
    if script is None:
        return None
    entry = script
    imported, _, deep = _walk(entry)
    found = _known_of(imported)
    if found is not None:
        return with_packages(found, imported)
    found = bundled_sdk(loaded_files(entry))  # a bundle: the SDK's own code inside what the entry runs
    if found is not None:
        return found
    # A vendor's own packages between the entry and the SDK. Imported here: reach.py is built on this module.
    from mcpfuzz.engine.attribution.reach import pick, walk_packages
    walk = walk_packages([*imported.items(), *deep])
    found = pick(walk.reached)
    if found is not None:
        return with_packages(found, {*imported, *walk.imported})
    # A bundle: its package's runtime dependencies say what it carries.
    package = _package_root(entry)
    manifest = read_manifest(package / "package.json") if package is not None else None
    dependencies = manifest.get("dependencies") if manifest is not None else None
    if package is not None and isinstance(dependencies, dict):
        named = {name: package for name in dependencies if isinstance(name, str)}
        found = _known_of(named)
        if found is not None:
            return with_packages(found, named)
    return None


def with_packages(found: SdkInfo, names: Iterable[str]) -> SdkInfo:
    """The stack, with the SDK's optional packages among the names the server's code imports (on every layer)."""
    seen = frozenset(name for name in names if name in OPTIONAL_PACKAGES)
    base = with_packages(found.base, seen) if found.base is not None else None
    return replace(found, packages=seen, base=base)


def imported_packages(entry: Path) -> dict[str, Path]:
    """Package name -> the folder of the first file that imports it, over the entry and the local files it imports."""
    return _walk(entry)[0]


def loaded_files(entry: Path) -> list[Path]:
    """The files a Node entry runs: itself, the local files it imports, and the file each package path it imports
    names (`playwright-core/lib/utilsBundle`: a bundle that package ships), in the order met."""
    _, files, deep = _walk(entry)
    for specifier, start in deep:
        name = package_name(specifier)
        package = resolve_package(name, start)
        if package is not None:
            found = _local_module(package, "./" + specifier[len(name) + 1:])
            if found is not None and found not in files:
                files.append(found)
    return files


def _walk(entry: Path) -> tuple[dict[str, Path], list[Path], list[tuple[str, Path]]]:
    """Over the entry and the local files it imports (up to MAX_FILES): the packages imported (name -> the folder
    of the first file importing it), the files read, and the package paths imported (`pkg/lib/x`, with the
    importing file's folder)."""
    packages: dict[str, Path] = {}
    deep: list[tuple[str, Path]] = []
    seen: list[Path] = []
    pending = [entry]
    while pending and len(seen) < MAX_FILES:
        file = pending.pop(0)
        if file in seen:
            continue
        seen.append(file)
        for specifier in _specifiers(file):
            if specifier.startswith((".", "/")):
                local = _local_module(file.parent, specifier)
                if local is not None and local not in seen:
                    pending.append(local)
            elif not specifier.startswith(("node:", "data:", "http:", "https:")):
                name = ALIASES.get(package_name(specifier), package_name(specifier))
                packages.setdefault(name, file.parent)
                if specifier != package_name(specifier) and len(deep) < MAX_FILES:
                    deep.append((specifier, file.parent))
    return packages, seen, deep


def package_name(specifier: str) -> str:
    """`@scope/name/sub/path.js` -> `@scope/name`; `name/sub` -> `name`."""
    parts = specifier.split("/")
    return "/".join(parts[:2]) if specifier.startswith("@") else parts[0]


def resolve_package(name: str, start: Path) -> Path | None:
    """The folder Node loads package `name` from, for a file in `start`: `node_modules/NAME` here or in any folder
    above (symbolic links followed: a linked package resolves its own imports from where it really is)."""
    for folder in (start, *start.parents):
        base = folder if folder.name == "node_modules" else folder / "node_modules"
        candidate = base / name
        if (candidate / "package.json").is_file():
            return candidate.resolve()
    return None


def _known_of(imported: dict[str, Path]) -> SdkInfo | None:
    """The first known package among `imported` (frameworks first) that resolves, with its SDK underneath."""
    for name in KNOWN:
        start = imported.get(name)
        found = known_package(name, start) if start is not None else None
        if found is not None:
            return found
    return None


def known_package(name: str, start: Path) -> SdkInfo | None:
    """The known MCP package `name` as a file in `start` loads it (with the SDK a framework is built on)."""
    package = resolve_package(name, start)
    version = _version(package) if package is not None else None
    if package is None or version is None:
        return None
    base = _sdk_under(package) if name in FRAMEWORKS else None
    return SdkInfo(KNOWN[name], version, str(package / "package.json"), base=base)


def package_file(package: Path, specifier: str) -> Path | None:
    """The file Node loads for `specifier` (`pkg`, `@scope/pkg/sub/path.js`) from the package's folder: what its
    `exports` maps the subpath to when it has `exports`, else the path itself, or `main` (then index.js)."""
    subpath = specifier[len(package_name(specifier)):].lstrip("/")
    manifest = read_manifest(package / "package.json") or {}
    if "exports" in manifest:
        target = exported_target(manifest["exports"], "./" + subpath if subpath else ".")
        return None if target is None else _existing(package / target)
    if subpath:
        return _local_module(package, "./" + subpath)
    main = manifest.get("main")
    return _local_module(package, "./" + main if isinstance(main, str) else "./index.js") or \
        _local_module(package, "./index.js")


def _sdk_under(framework: Path) -> SdkInfo | None:
    """The TypeScript SDK a framework package depends on, resolved from the framework's own folder."""
    manifest = read_manifest(framework / "package.json") or {}
    dependencies = {**_names(manifest.get("peerDependencies")), **_names(manifest.get("dependencies"))}
    for name, sdk in SDKS.items():
        if name not in dependencies:
            continue
        package = resolve_package(name, framework)
        version = _version(package) if package is not None else None
        if package is not None and version is not None:
            return SdkInfo(sdk, version, str(package / "package.json"))
    return None


def _names(value: object) -> dict[str, object]:
    return value if isinstance(value, dict) else {}


def _specifiers(file: Path) -> Iterator[str]:
    yield from specifiers_of(file, MAX_FILE_BYTES)


def specifiers_of(file: Path, limit: int) -> Iterator[str]:
    """What a file (its first `limit` bytes) imports or requires, but for type-only imports."""
    try:
        with open(file, "rb") as handle:
            text = handle.read(limit).decode("utf-8", "replace")
    except OSError:
        return
    erased = _type_only(text)
    for match in _SPECIFIER.finditer(text):
        if match.start(1) not in erased:
            yield match.group(1)


def _type_only(text: str) -> set[int]:
    """Where the specifiers of type-only imports start (`import type {...} from "x"`, `export type * from "x"`):
    each such statement's own `from`, with no other statement between."""
    erased: set[int] = set()
    for keyword in _TYPE_KEYWORD.finditer(text):
        found = _FROM.search(text, keyword.end(), keyword.end() + _TYPE_CLAUSE_CHARS)
        if found is not None and not _STATEMENT_END.search(text, keyword.end(), found.start()):
            erased.add(found.start(1))
    return erased


def local_module(folder: Path, specifier: str) -> Path | None:
    """The file a relative import names from `folder`, as Node and TypeScript resolve it."""
    return _local_module(folder, specifier)


def _local_module(folder: Path, specifier: str) -> Path | None:
    """The file a relative import names, with Node's and TypeScript's extensions (`./x.js` may be `x.ts`)."""
    base = os.path.join(folder, specifier)  # strings: a walk over a vendor's packages tries thousands of these
    candidates = [base + suffix for suffix in _SOURCE_SUFFIXES]
    stem, suffix = os.path.splitext(base)
    if suffix in (".js", ".mjs", ".cjs"):
        candidates.append(stem + suffix.replace("js", "ts"))
    for candidate in candidates:
        try:
            if os.path.isfile(candidate):
                return Path(os.path.realpath(candidate))
        except (OSError, ValueError):
            continue
    return None


def _existing(path: Path) -> Path | None:
    try:
        return path.resolve() if path.is_file() else None
    except OSError:
        return None


def _package_root(file: Path) -> Path | None:
    """The folder of the package.json nearest above a file: the package the file belongs to."""
    for folder in file.parents:
        if (folder / "package.json").is_file():
            return folder
    return None


def _version(package: Path) -> str | None:
    manifest = read_manifest(package / "package.json")
    version = manifest.get("version") if manifest is not None else None
    return version if isinstance(version, str) else None


def read_manifest(manifest: Path) -> dict | None:
    """A package.json's object, None when missing, too large or not JSON."""
    try:
        if manifest.stat().st_size > MAX_MANIFEST_BYTES:
            return None
        data = json.loads(manifest.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, ValueError):
        return None
    return data if isinstance(data, dict) else None
