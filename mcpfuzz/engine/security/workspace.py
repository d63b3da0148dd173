"""The temporary folders of a security run: a workspace for the server, canary files around it, a hits folder."""

from __future__ import annotations

import secrets
import shutil
import tempfile
from dataclasses import dataclass, replace
from pathlib import Path

from mcpfuzz.engine.config import RunConfig
from mcpfuzz.strategies.payloads.canaries import (
    PARENT_FILE,
    SIBLING_FILE,
    WORKSPACE_FILE,
    CanaryLayout,
    Place,
    canary_token,
)

WORKSPACE_PLACEHOLDER = "{workspace}"


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
                                    (root, PARENT_FILE, Place.PARENT)):
            folder.mkdir(exist_ok=True)
            (folder / name).write_text(canary_token(place, layout.nonce) + "\n", encoding="utf-8")
        return cls(layout)

    @property
    def folder(self) -> str:
        """The workspace: the server's working directory and `{workspace}` in its command."""
        return self.layout.workspace

    def command(self, words: list[str] | tuple[str, ...]) -> list[str]:
        """`words` with `{workspace}` replaced by the workspace folder."""
        return [word.replace(WORKSPACE_PLACEHOLDER, self.folder) for word in words]

    def remove(self) -> None:
        """Delete the run's own temporary folders (nothing else)."""
        for folder in (self.layout.root, self.layout.hits):
            shutil.rmtree(folder, ignore_errors=True)



def secured(config: RunConfig, workspace: SecurityWorkspace) -> RunConfig:
    """The run's server put in the workspace: `{workspace}` replaced in its command (or --launch command), and a
    stdio server started there unless --cwd names another folder."""
    if config.server is not None:
        return config
    if config.http is not None:
        return replace(config, http=replace(config.http, launch=tuple(workspace.command(config.http.launch))))
    return replace(config, command=workspace.command(config.command), cwd=config.cwd or workspace.folder)
