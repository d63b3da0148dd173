"""Path payloads: traversal out of the workspace (only toward mcpfuzz's own canaries), NUL, very long names."""

from __future__ import annotations

from mcpfuzz.strategies.payloads.canaries import (
    LINK_NAME,
    LINKED_FILE,
    PARENT_FILE,
    SIBLING_FILE,
    SIBLING_NAME,
    WORKSPACE_FILE,
    CanaryLayout,
)
from mcpfuzz.strategies.payloads.family import Payload

# Inert anywhere: none leaves the folder it is resolved in.
INERT: tuple[Payload, ...] = (
    ("a NUL inside a path", f"{WORKSPACE_FILE}\x00.png"),
    ("a 4,096-character file name", "a" * 4096 + ".txt"),
    ("300 nested folders", "a/" * 300 + "b.txt"),
    ("doubled separators", f".//{WORKSPACE_FILE}"),
    ("a symlink-like name", f"link -> {WORKSPACE_FILE}"),
    ("a trailing dot and space", f"{WORKSPACE_FILE}. "),
    ("a name with shell characters", "a;b|c&d$(e).txt"),
    ("a percent-encoded name", "notes%2etxt"),
)


def path_payloads(layout: CanaryLayout | None) -> tuple[Payload, ...]:
    """The inert paths, and with a canary layout the escapes toward its sibling and parent canaries.

    Every escape stays inside the layout's root: `..` goes one level up from the workspace, never two, and
    absolute paths name the root's own files.
    """
    if layout is None:
        return INERT
    root, workspace = layout.root, layout.workspace
    climbed = root.rstrip("/").rsplit("/", 1)[-1]
    return INERT + (
        ("a symlink inside the workspace pointing out", f"{LINK_NAME}/{LINKED_FILE}"),
        ("an absolute path through a symlink pointing out", f"{workspace}/{LINK_NAME}/{LINKED_FILE}"),
        ("a climb past the root and back", f"../../{climbed}/{PARENT_FILE}"),
        ("a percent-encoded parent escape", f"..%2f{PARENT_FILE}"),
        ("a double-encoded parent escape", f"%252e%252e%252f{PARENT_FILE}"),
        ("a sibling-prefix escape", f"../{SIBLING_NAME}/{SIBLING_FILE}"),
        ("an absolute sibling-prefix path", f"{layout.sibling}/{SIBLING_FILE}"),
        ("the workspace, then up to its sibling", f"{workspace}/../{SIBLING_NAME}/{SIBLING_FILE}"),
        ("a parent escape", f"../{PARENT_FILE}"),
        ("a parent escape after a file", f"{WORKSPACE_FILE}/../../{PARENT_FILE}"),
        ("a dotted parent escape", f"./../{PARENT_FILE}"),
        ("an absolute path outside", f"{root}/{PARENT_FILE}"),
        ("the workspace, then up", f"{workspace}/../{PARENT_FILE}"),
        ("a backslash escape", f"..\\{PARENT_FILE}"),
    )
