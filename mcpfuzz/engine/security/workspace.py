"""The temporary folders of a security run: a workspace for the server, canary files around it, a hits folder."""

from __future__ import annotations

import contextlib
import os
import secrets
import tempfile
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from mcpfuzz.engine.config import RunConfig
from mcpfuzz.engine.security.placeholder import WORKSPACE_PLACEHOLDER
from mcpfuzz.jsonrpc.frame import Case
from mcpfuzz.strategies.payloads.canaries import (
    LINK_NAME,
    LINKED_FILE,
    PARENT_FILE,
    SIBLING_FILE,
    WORKSPACE_FILE,
    CanaryLayout,
    Place,
    canary_token,
)
from mcpfuzz.transport.connect import ServerTarget
from mcpfuzz.transport.http_target import HttpTarget
from mcpfuzz.transport.stdio_target import StdioTarget


@dataclass(frozen=True)
class SecurityWorkspace:
    """Folders planted for one run, removed by `remove` (only these: each was made by `create`)."""

    layout: CanaryLayout

    @classmethod
    def create(cls) -> SecurityWorkspace:
        """A fresh root holding the workspace, its prefix-sharing sibling and a parent canary; a hits folder."""
        root = Path(tempfile.mkdtemp(prefix="mcpfuzz-workspace-")).resolve()
        hits = Path(tempfile.mkdtemp(prefix="mcpfuzz-canary-")).resolve()
        layout = CanaryLayout(str(root), str(hits), secrets.token_hex(8))
        for folder, name, place in ((Path(layout.workspace), WORKSPACE_FILE, Place.WORKSPACE),
                                    (Path(layout.sibling), SIBLING_FILE, Place.SIBLING),
                                    (root, PARENT_FILE, Place.PARENT),
                                    (Path(layout.linked), LINKED_FILE, Place.LINKED)):
            folder.mkdir(exist_ok=True)
            (folder / name).write_text(canary_token(place, layout.nonce) + "\n", encoding="utf-8")
        # A name inside the workspace that leads out of it: a check of the path as written passes, the file opened
        # is the linked folder's (CVE-2025-53109's shape).
        (Path(layout.workspace) / LINK_NAME).symlink_to(layout.linked, target_is_directory=True)
        return cls(layout)

    def listening(self, url: str) -> SecurityWorkspace:
        """The same folders, with URL payloads pointed at the run's loopback listener `url`."""
        return SecurityWorkspace(replace(self.layout, listener=url))

    @property
    def folder(self) -> str:
        """The workspace: the server's working directory and `{workspace}` in its command."""
        return self.layout.workspace

    def command(self, words: list[str] | tuple[str, ...]) -> list[str]:
        """`words` with `{workspace}` replaced by the workspace folder."""
        return [word.replace(WORKSPACE_PLACEHOLDER, self.folder) for word in words]

    def remove(self) -> None:
        """Delete the run's own temporary folders (nothing else), however deep the server nested folders in them."""
        for folder in (self.layout.root, self.layout.hits):
            remove_tree(folder)

    def place(self, target: ServerTarget) -> ServerTarget:
        """A saved server put in this workspace: `{workspace}` replaced in its command (or launch command) and
        cwd, a stdio server with no cwd of its own started in the workspace."""
        if isinstance(target, StdioTarget):
            cwd = target.cwd.replace(WORKSPACE_PLACEHOLDER, self.folder) if target.cwd is not None else self.folder
            return replace(target, command=tuple(self.command(target.command)), cwd=cwd)
        if isinstance(target, HttpTarget) and target.launch:
            return replace(target, launch=tuple(self.command(target.launch)))
        return target

    def relocate(self, case: Case, saved: CanaryLayout) -> Case:
        """`case` with the saved run's root and hits folders in its frames made this workspace's, so that a path
        or shell payload aims where the canaries now are."""
        pairs = ((saved.root.encode(), self.layout.root.encode()), (saved.hits.encode(), self.layout.hits.encode()))

        def moved(frame: bytes) -> bytes:
            for old, new in pairs:
                frame = frame.replace(old, new)
            return frame

        return replace(case, data=moved(case.data), setup=tuple(moved(frame) for frame in case.setup),
                       history=tuple(moved(frame) for frame in case.history))


def remove_tree(root: str) -> None:
    """Delete `root` and everything under it without following links; what cannot be deleted is left.

    Iterative: a server given a workspace may nest folders a thousand deep (`a/a/a/...`), past the recursion
    `shutil.rmtree` needs (one level of the stack per level of folders).
    """
    stack, failed = [root], set()
    while stack:
        folder = stack[-1]
        try:
            entries = list(os.scandir(folder))
        except OSError:
            failed.add(stack.pop())
            continue
        inner = [entry.path for entry in entries if entry.is_dir(follow_symlinks=False) and entry.path not in failed]
        for entry in entries:
            if not entry.is_dir(follow_symlinks=False):
                with contextlib.suppress(OSError):
                    os.unlink(entry.path)
        if inner:
            stack.extend(inner)  # the folder is looked at again once they are gone
            continue
        try:
            os.rmdir(folder)
        except OSError:
            failed.add(folder)
        stack.pop()


def layout_to_json(layout: CanaryLayout) -> dict[str, str]:
    """A transcript's `security` block: the folders its frames name, so a replay can move them to its own."""
    return {"root": layout.root, "hits": layout.hits, "nonce": layout.nonce}


def layout_from_json(value: Any) -> CanaryLayout | None:
    """The `security` block of a transcript (None: not a security run's transcript, or a block without folders)."""
    if not isinstance(value, dict):
        return None
    root, hits, nonce = value.get("root"), value.get("hits"), value.get("nonce", "")
    if not isinstance(root, str) or not isinstance(hits, str) or not root or not hits:
        return None
    return CanaryLayout(root, hits, str(nonce))



def secured(config: RunConfig, workspace: SecurityWorkspace) -> RunConfig:
    """The run's server put in the workspace: `{workspace}` replaced in its command (or --launch command), and a
    stdio server started there unless --cwd names another folder."""
    if config.server is not None:
        return config
    if config.http is not None:
        return replace(config, http=replace(config.http, launch=tuple(workspace.command(config.http.launch))))
    return replace(config, command=workspace.command(config.command), cwd=config.cwd or workspace.folder)
