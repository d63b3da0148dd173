"""The file a package.json's `exports` maps a subpath to, under the conditions Node itself matches at run time.

Node picks, in an `exports` object, the first key (in the object's own order) that is a subpath pattern matching
the import, then, among conditions, the first whose name it knows (`node`, `import`, `require`, `default`); `types`
is TypeScript's alone, so a package's declaration files are never what runs. An array gives fallbacks, `null`
closes a subpath, and `./x/*` maps every file under it.
"""

from __future__ import annotations

RUNTIME_CONDITIONS = frozenset({"node", "import", "require", "default", "node-addons"})
MAX_DEPTH = 16  # nested condition objects looked through


def exported_target(exports: object, subpath: str) -> str | None:
    """The relative path (`./dist/index.js`) `exports` gives for `subpath` (`.` or `./server/stdio.js`), or None
    when the package does not export it."""
    if isinstance(exports, (str, list)) or (isinstance(exports, dict) and not _is_subpath_map(exports)):
        return _conditional(exports, "", 0) if subpath == "." else None
    if not isinstance(exports, dict):
        return None
    if subpath in exports:
        return _conditional(exports[subpath], "", 0)
    best: tuple[str, str] | None = None
    for key in exports:
        if not isinstance(key, str) or key.count("*") != 1:
            continue
        head, tail = key.split("*")
        matches = subpath.startswith(head) and subpath.endswith(tail) and len(subpath) >= len(head) + len(tail)
        if matches and (best is None or len(head) > len(best[0].split("*")[0])):  # the most specific pattern wins
            best = (key, subpath[len(head):len(subpath) - len(tail)])
    if best is None:
        return None
    return _conditional(exports[best[0]], best[1], 0)


def _is_subpath_map(exports: dict) -> bool:
    return any(isinstance(key, str) and key.startswith(".") for key in exports)


def _conditional(target: object, star: str, depth: int) -> str | None:
    """A target: a path (its `*` replaced), the first resolvable of an array, the first known condition's."""
    if depth > MAX_DEPTH:
        return None
    if isinstance(target, str):
        return target.replace("*", star) if target.startswith("./") else None
    if isinstance(target, list):
        for item in target:
            found = _conditional(item, star, depth + 1)
            if found is not None:
                return found
        return None
    if isinstance(target, dict):
        for condition, value in target.items():
            if condition in RUNTIME_CONDITIONS:
                found = _conditional(value, star, depth + 1)
                if found is not None:
                    return found
    return None
