"""mcpfuzz's side-effect hook, run inside a Python server as its `sitecustomize` (standard library only).

mcpfuzz copies this file as `sitecustomize.py` into a temporary folder on the server's PYTHONPATH; Python's `site`
module imports it at start-up, before the server's own code. An audit hook (`sys.addaudithook`) then reports what
the process does to the file named by MCPFUZZ_OBSERVE_FILE, one JSON object per line written whole with one
`os.write` (never stdout, the protocol): files opened (with their mode), listed, created, deleted, renamed, linked
and chmod-ed; processes started (subprocess, os.exec*, os.system, os.posix_spawn); connections and name lookups.
`os.stat` and `os.access` raise no audit event, so they are wrapped here: an `exists` check reports a
`stat`. Each record carries the monotonic clock (ns, the clock mcpfuzz reads), the pid, the path resolved (symlinks
followed, a deleted or linked name's own last part kept) and, on the mcp 1.x SDK, the id of the request whose task
did it. The records are written before the server answers the call that caused them, so mcpfuzz reads them once the
answer is in. What the import system reads, lists and checks (under a folder of `sys.path` as it was at start-up,
and `__pycache__` anywhere) is not reported. The child processes inherit the PYTHONPATH, so a Python child loads this
hook too.

A first record `{"op": "hello"}` says the hook is in.
"""

from __future__ import annotations

import contextlib
import json
import os
import sys
import threading
import time
from typing import Any

_WRITE_FLAGS = os.O_WRONLY | os.O_RDWR | os.O_CREAT | os.O_TRUNC | os.O_APPEND
# audit event -> (operation, how the path arguments are read): "one" the first argument, "own" the first one
# without following its last part (the link or name itself is what changes), "two" the first two (a rename).
_PATH_EVENTS = {
    "os.remove": ("delete", "own"), "os.rmdir": ("delete", "own"), "shutil.rmtree": ("delete", "own"),
    "os.rename": ("rename", "two"), "shutil.move": ("rename", "two"), "os.mkdir": ("create", "own"),
    "os.symlink": ("link", "link"), "os.link": ("link", "two"), "os.chmod": ("chmod", "one"),
    "os.chown": ("chmod", "one"), "os.truncate": ("write", "one"), "os.utime": ("write", "one"),
    "os.listdir": ("list", "one"), "os.scandir": ("list", "one"), "shutil.copyfile": ("write", "two"),
}


class _Observer:
    """Where records go, and the state that keeps the hook from reporting its own work."""

    def __init__(self, log: str) -> None:
        self.fd = os.open(log, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
        self.local = threading.local()
        self.pid = os.getpid()
        self.program = " ".join(sys.argv[:2]) if sys.argv else sys.executable
        self.library = tuple(os.path.join(os.path.realpath(entry), "") for entry in sys.path if entry)

    def write(self, record: dict[str, Any]) -> None:
        record["t"] = time.monotonic_ns()
        record["pid"] = os.getpid()
        if record["pid"] != self.pid:  # a fork: the child's own program is not known; it says so on exec
            self.pid = record["pid"]
        record["prog"] = self.program
        request = _request_id()
        if request is not None:
            record["req"] = request
        with contextlib.suppress(OSError, ValueError, TypeError):
            os.write(self.fd, (json.dumps(record, default=str) + "\n").encode("utf-8", "surrogateescape"))

    def busy(self) -> bool:
        return getattr(self.local, "busy", False)


def _request_id() -> Any:
    """The id of the request whose handler runs now: read from the mcp 1.x SDK's `request_ctx`, when it is set."""
    module = sys.modules.get("mcp.server.lowlevel.server")
    context = getattr(module, "request_ctx", None)
    if context is None:
        return None
    with contextlib.suppress(LookupError, AttributeError):
        return context.get().request_id
    return None


def _text(value: Any) -> str | None:
    if isinstance(value, bytes):
        return value.decode("utf-8", "surrogateescape")
    if isinstance(value, str):
        return value
    if hasattr(value, "__fspath__"):
        return _text(value.__fspath__())
    return None


def _resolved(value: Any, follow: bool = True) -> str | None:
    """The absolute path a call names, links followed (`follow=False`: all but its last part)."""
    path = _text(value)
    if path is None or not path:
        return None
    path = os.path.abspath(path)
    if follow:
        return os.path.realpath(path)
    head, tail = os.path.split(path)
    return os.path.join(os.path.realpath(head), tail)


def _open_mode(args: tuple[Any, ...]) -> str:
    """"write" for an open that may change the file (a mode with w, a, x or +; flags with a write bit)."""
    mode, flags = (args[1] if len(args) > 1 else None), (args[2] if len(args) > 2 else 0)
    if isinstance(mode, str) and any(letter in mode for letter in "wax+"):
        return "write"
    if isinstance(flags, int) and flags & _WRITE_FLAGS:
        return "write"
    return "read"


def _argv(value: Any) -> list[str]:
    if isinstance(value, (str, bytes)):
        return [_text(value) or ""]
    if isinstance(value, (list, tuple)):
        return [_text(item) or str(item) for item in value]
    return [] if value is None else [str(value)]


def _imported(path: str) -> bool:
    """A path the import system reads or lists: under a folder of sys.path as it was at start-up."""
    return path.startswith(_observer.library) or path + os.sep in _observer.library


def _record(event: str, args: tuple[Any, ...]) -> dict[str, Any] | None:
    """The record of one audit event, or None for an event not reported."""
    if event == "open":
        path = _resolved(args[0]) if args else None
        if path is None:
            return None
        op = _open_mode(args)
        return None if op == "read" and _imported(path) else {"op": op, "path": path}
    if event in _PATH_EVENTS:
        op, how = _PATH_EVENTS[event]
        if how == "link":  # os.symlink(target, name): the name is created; the target is only text
            return {"op": op, "path": _resolved(args[1], follow=False) if len(args) > 1 else None,
                    "to": _text(args[0]) if args else None}
        if how == "two":
            return {"op": op, "path": _resolved(args[0], follow=False) if args else None,
                    "to": _resolved(args[1], follow=False) if len(args) > 1 else None}
        path = _resolved(args[0] if args and args[0] is not None else ".", follow=how != "own")
        if path is None or (op == "list" and _imported(path)):
            return None
        return {"op": op, "path": path}
    if event == "subprocess.Popen":
        return {"op": "exec", "argv": _argv(args[1] if len(args) > 1 else None), "exe": _text(args[0])}
    if event in ("os.exec", "os.posix_spawn"):
        return {"op": "exec", "argv": _argv(args[1] if len(args) > 1 else None), "exe": _text(args[0])}
    if event == "os.system":
        return {"op": "exec", "argv": ["/bin/sh", "-c", _text(args[0]) or ""], "exe": "/bin/sh"}
    if event == "socket.connect":
        address = args[1] if len(args) > 1 else None
        if isinstance(address, tuple) and len(address) >= 2:
            return {"op": "connect", "addr": f"{address[0]}:{address[1]}"}
        return {"op": "connect", "addr": str(address)}  # a Unix socket's path
    if event in ("socket.getaddrinfo", "socket.gethostbyname", "socket.gethostbyname_ex"):
        return {"op": "dns", "addr": _text(args[0]) or str(args[0]) if args else ""}
    return None


def _byte_code(path: str) -> bool:
    """True for the import system's byte code: a `__pycache__` folder (made as a module is first imported) or a file
    in one."""
    return "/__pycache__/" in path or path.endswith("/__pycache__")


def _hook(event: str, args: tuple[Any, ...]) -> None:
    if _observer.busy():
        return
    _observer.local.busy = True
    try:
        record = _record(event, args)
        if record is not None and not _byte_code(str(record.get("path"))):
            _observer.write(record)
    except Exception:  # noqa: S110  (a hook that raises would break the server's own call)
        pass
    finally:
        _observer.local.busy = False


def _wrap_stat(name: str) -> None:
    """`os.<name>` reports a `stat` of its path first (no audit event covers it); an open file descriptor is not."""
    original = getattr(os, name)

    def observed(path: Any, *args: Any, **kwargs: Any) -> Any:
        if not _observer.busy() and not isinstance(path, int):
            _observer.local.busy = True
            try:
                resolved = _resolved(path, follow=False)  # a link inside is looked at, not yet followed
                if resolved is not None and not _imported(resolved):
                    _observer.write({"op": "stat", "path": resolved})
            except Exception:  # noqa: S110
                pass
            finally:
                _observer.local.busy = False
        return original(path, *args, **kwargs)

    observed.__wrapped__ = original  # type: ignore[attr-defined]
    setattr(os, name, observed)


def _install() -> _Observer | None:
    log = os.environ.get("MCPFUZZ_OBSERVE_FILE")
    if not log or getattr(sys, "_mcpfuzz_observing", False):
        return None
    observer = _Observer(log)
    sys._mcpfuzz_observing = True  # type: ignore[attr-defined]  # a chained sitecustomize installs it once
    return observer


def _chain() -> None:
    """Run the sitecustomize on the path after this one (the environment's own, if there is one)."""
    import importlib.machinery
    import importlib.util

    here = os.path.dirname(os.path.realpath(__file__))
    folders = [os.path.realpath(entry or os.curdir) for entry in sys.path]
    after = sys.path[folders.index(here) + 1:] if here in folders else []
    spec = importlib.machinery.PathFinder.find_spec("sitecustomize", after)
    if spec is not None and spec.loader is not None:
        module = importlib.util.module_from_spec(spec)
        with contextlib.suppress(Exception):
            spec.loader.exec_module(module)


_observer: _Observer = None  # type: ignore[assignment]
with contextlib.suppress(Exception):  # never stop the server: without a hello record, mcpfuzz says it sees nothing
    _found = _install()
    if _found is not None:
        _observer = _found
        for _name in ("stat", "access"):  # not lstat: realpath calls it on every part of the paths it resolves
            _wrap_stat(_name)
        sys.addaudithook(_hook)
        _observer.write({"op": "hello", "argv": list(sys.argv), "ppid": os.getppid()})
_chain()
