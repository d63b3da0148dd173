"""mcpfuzz's line tracer, run inside a Python server as its `sitecustomize` (standard library only).

mcpfuzz copies this file as `sitecustomize.py` into a temporary folder it puts first on the server's PYTHONPATH;
Python's `site` module imports it at start-up, before the server's own code. It appends one record per line of the
server's code the first time that line runs, to the file named by MCPFUZZ_COVERAGE_FILE (never stdout or stderr:
stdout is the protocol). Records are `LINE<TAB>PATH`, written with one `os.write` each (appended whole), before
the server's answer to the call that ran the line, so mcpfuzz reads them as soon as the answer is in. A first
record `#tracer<TAB>KIND<TAB>PID` says the tracer is in.

Which files count: those under a folder of MCPFUZZ_COVERAGE_ROOTS (os.pathsep-separated), never the standard
library nor an installed package (site-packages) unless the root itself is inside one; with MCPFUZZ_COVERAGE_SDK=1
every file but the standard library's. On 3.12 and later `sys.monitoring` reports each line once (its location is
disabled after the first event, so a covered line costs nothing after); before, `sys.settrace` traces only the
counted files' frames, and stops tracing a function once every line of it was seen.
"""

from __future__ import annotations

import contextlib
import os
import sys
from types import CodeType, FrameType
from typing import Any


def _prefixes(folders: list[str]) -> tuple[str, ...]:
    return tuple(os.path.join(os.path.realpath(folder), "") for folder in folders if folder)


def _library_folders(include_sdk: bool) -> list[str]:
    """The standard library's folders, and (unless SDK code counts) the installed packages' ones."""
    import site
    import sysconfig

    paths = sysconfig.get_paths()
    # Not "platstdlib": in a virtual environment it is the environment's lib folder, which holds site-packages.
    folders = [paths.get("stdlib", ""), os.path.dirname(os.__file__)]
    if not include_sdk:
        folders += [paths.get("purelib", ""), paths.get("platlib", "")]
        with contextlib.suppress(AttributeError):  # an old virtualenv's `site` module lacks them
            folders += [*site.getsitepackages(), site.getusersitepackages()]
    return folders


class _Tracer:
    """Which files count, and the records written for their lines."""

    def __init__(self, log: str, roots: tuple[str, ...], include_sdk: bool) -> None:
        self.fd = os.open(log, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
        self.roots = roots
        self.include_sdk = include_sdk
        # A library folder that holds a root (a console script's own package in site-packages) excludes nothing.
        self.excluded = tuple(folder for folder in _prefixes(_library_folders(include_sdk))
                              if not any(root.startswith(folder) for root in roots))
        self.own = os.path.realpath(__file__)
        self.files: dict[str, str | None] = {}  # a code object's file name -> its real path, None when not counted

    def counted(self, filename: str) -> str | None:
        """The real path of a file whose lines count, else None (decided once per file name)."""
        if filename in self.files:
            return self.files[filename]
        real: str | None = None
        if not filename.startswith("<"):
            path = os.path.realpath(filename)
            inside = self.include_sdk or path.startswith(self.roots)
            if inside and path != self.own and not path.startswith(self.excluded):
                real = path
        self.files[filename] = real
        return real

    def write(self, text: str) -> None:
        with contextlib.suppress(OSError):  # a full disk: the server goes on, its lines unreported
            os.write(self.fd, text.encode("utf-8", "surrogateescape"))


def _monitor(tracer: _Tracer) -> bool:
    """Report lines with sys.monitoring (3.12+); False when it is missing or every tool id is taken."""
    monitoring = getattr(sys, "monitoring", None)
    if monitoring is None:
        return False
    for tool in (monitoring.COVERAGE_ID, 3, 4):
        try:
            monitoring.use_tool_id(tool, "mcpfuzz")
            break
        except ValueError:
            continue
    else:
        return False
    events = monitoring.events
    disable = monitoring.DISABLE

    def started(code: CodeType, offset: int) -> Any:
        if tracer.counted(code.co_filename) is not None:
            monitoring.set_local_events(tool, code, events.LINE)
        return disable

    def line(code: CodeType, number: int) -> Any:
        path = tracer.counted(code.co_filename)
        if path is not None:
            tracer.write(f"{number}\t{path}\n")
        return disable

    monitoring.register_callback(tool, events.PY_START, started)
    monitoring.register_callback(tool, events.LINE, line)
    monitoring.set_events(tool, events.PY_START)
    return True


def _settrace(tracer: _Tracer) -> None:
    """Report lines with sys.settrace (every thread started from now on too)."""
    import threading

    seen: set[tuple[CodeType, int]] = set()
    left: dict[CodeType, int] = {}  # a code object -> how many of its lines were not seen yet
    done: set[CodeType] = set()

    def local(frame: FrameType, event: str, arg: Any) -> Any:
        if event == "line":
            code = frame.f_code
            key = (code, frame.f_lineno)
            if key not in seen:
                seen.add(key)
                tracer.write(f"{frame.f_lineno}\t{tracer.counted(code.co_filename)}\n")
                left[code] = left.get(code, 1) - 1
                if left[code] <= 0:
                    done.add(code)
        return local

    def calls(frame: FrameType, event: str, arg: Any) -> Any:
        code = frame.f_code
        if code in done or tracer.counted(code.co_filename) is None:
            return None
        if code not in left:
            left[code] = _line_count(code)
        return local

    threading.settrace(calls)
    sys.settrace(calls)


def _line_count(code: CodeType) -> int:
    """How many distinct lines a code object has (its own, not its nested functions')."""
    try:
        numbers = {number for _, _, number in code.co_lines() if number is not None}
    except AttributeError:  # before 3.10
        import dis

        numbers = {number for _, number in dis.findlinestarts(code)}
    return len(numbers) or 1


def _install() -> None:
    log = os.environ.get("MCPFUZZ_COVERAGE_FILE")
    if not log:
        return
    roots = _prefixes(os.environ.get("MCPFUZZ_COVERAGE_ROOTS", "").split(os.pathsep))
    tracer = _Tracer(log, roots, os.environ.get("MCPFUZZ_COVERAGE_SDK") == "1")
    kind = "sys.monitoring" if _monitor(tracer) else "settrace"
    if kind == "settrace":
        _settrace(tracer)
    tracer.write(f"#tracer\t{kind}\t{os.getpid()}\n")


def _chain() -> None:
    """Run the sitecustomize this file shadows (a distribution's or the environment's own), if there is one."""
    import importlib.machinery
    import importlib.util

    here = os.path.dirname(os.path.realpath(__file__))
    others = [entry for entry in sys.path if os.path.realpath(entry or os.curdir) != here]
    spec = importlib.machinery.PathFinder.find_spec("sitecustomize", others)
    if spec is not None and spec.loader is not None:
        module = importlib.util.module_from_spec(spec)
        with contextlib.suppress(Exception):  # as `site` does: a broken sitecustomize must not stop the server
            spec.loader.exec_module(module)


with contextlib.suppress(Exception):  # never stop the server: without a #tracer record, mcpfuzz turns coverage off
    _install()
_chain()
