"""Which paths a server may touch without escaping: the folders it was given, its runtime's, its own start-up's.

A path is judged in this order: inside a folder the server was given (the workspace, --allow-path) or one of
mcpfuzz's own (the hook's folder, the canary hits folder: a shell's marker is command-injection's evidence) is fine;
inside a folder the run planted outside the workspace is an escape, whatever else says; a path the server touched
before its first call (or a folder of one), a place its runtime reads (the interpreter, installed packages,
/usr, /etc, ...) or writes (the temporary folder, /dev) is fine; anything else is an escape.
"""

from __future__ import annotations

import os
import tempfile
from dataclasses import dataclass, field, replace
from pathlib import Path

from mcpfuzz.jsonrpc.effects import CHANGES, Op

# Read by interpreters, resolvers and libraries on their own: locale, time zones, certificates, /proc/self.
RUNTIME_READ = ("/usr/", "/lib/", "/lib64/", "/bin/", "/sbin/", "/etc/", "/proc/", "/sys/", "/dev/", "/opt/",
                "/nix/", "/snap/", "/var/lib/", "/run/")
RUNTIME_WRITE = ("/dev/", "/proc/self/", "/proc/thread-self/")
# Path parts that mark an installed package or an environment (read at call time by lazy imports).
LIBRARY_PARTS = ("/site-packages/", "/dist-packages/", "/node_modules/", "/.venv/", "/venv/", "/lib/python",
                 "/.nvm/", "/.pyenv/", "/.cache/", "/.npm/", "/.local/share/uv/", "/.local/lib/")


MIN_DEPTH = 3  # path separators a folder learnt from start-up has at least: `/home/user/.config`


def _folder(path: str) -> str:
    """A folder as a prefix: real, with one trailing separator."""
    return os.path.join(os.path.realpath(path), "")


def _under(path: str, folders: tuple[str, ...] | list[str] | set[str]) -> bool:
    with_separator = os.path.join(path, "")
    return any(with_separator.startswith(folder) for folder in folders)


@dataclass
class Places:
    """The folders that decide whether a touched path is outside what the server was given."""

    given: tuple[str, ...]  # the workspace and the --allow-path folders
    planted: tuple[str, ...] = ()  # what the run planted outside the workspace: always judged
    own: tuple[str, ...] = ()  # the hook's folder, the hits folder
    code: tuple[str, ...] = ()  # the server's own code and its interpreter: read, never written, at call time
    startup: set[str] = field(default_factory=set)  # paths touched before the first call
    startup_folders: set[str] = field(default_factory=set)

    @classmethod
    def create(cls, given: list[str], *, planted: list[str], own: list[str], code: list[str]) -> Places:
        """Folders made real and prefix-safe (`/a/workspace/` never holds `/a/workspace-private`)."""
        return cls(tuple(_folder(path) for path in given if path), tuple(_folder(path) for path in planted if path),
                   tuple(_folder(path) for path in own if path), tuple(_folder(path) for path in code if path))

    def with_given(self, given: list[str], planted: list[str], own: list[str]) -> Places:
        """The same runtime and start-up knowledge for a server given other folders (a re-check's workspace)."""
        return Places(tuple(_folder(path) for path in given), tuple(_folder(path) for path in planted),
                      tuple(_folder(path) for path in own) + self.own, self.code, self.startup, self.startup_folders)

    def allowing(self, folders: list[str]) -> Places:
        """These places with more folders given (the --allow-path folders a saved case names)."""
        more = tuple(folder for folder in (_folder(path) for path in folders if path) if folder not in self.given)
        return replace(self, given=self.given + more) if more else self

    def learn_startup(self, path: str) -> None:
        """A path the server touched before its first call: it, and its folder unless that folder holds a folder
        the server was given or the run planted (the workspace's parent is never learnt)."""
        if not path or _under(path, self.planted) or _under(path, self.given):
            return
        self.startup.add(path)
        folder = os.path.dirname(path)
        broad = {str(Path.home()), tempfile.gettempdir(), "/tmp", "/var/tmp"}
        # A shallow folder (`/`, `/home/user`, `/srv`) holds too much to be allowed for one file read there.
        holds_kept = any(kept.startswith(os.path.join(folder, "")) for kept in self.given + self.planted)
        if folder in broad or folder.rstrip("/").count("/") < MIN_DEPTH or holds_kept:
            return
        self.startup_folders.add(os.path.join(folder, ""))

    def outside(self, op: Op, path: str) -> bool:
        """True when touching `path` this way leaves the folders the server was given."""
        if not path or _under(path, self.given) or _under(path, self.own):
            return False
        if op is Op.STAT and any(folder.startswith(os.path.join(path, "")) for folder in self.given):
            return False  # a folder above the workspace, looked at on the way to it (makedirs, resolving)
        if _under(path, self.planted):
            return True
        if path in self.startup or _under(path, self.startup_folders):
            return False
        if op in CHANGES:
            return not (path.startswith(RUNTIME_WRITE) or _under(path, (_folder(tempfile.gettempdir()),)))
        return not (path.startswith(RUNTIME_READ) or any(part in path for part in LIBRARY_PARTS)
                    or _under(path, self.code) or _under(path, (_folder(tempfile.gettempdir()),)))
