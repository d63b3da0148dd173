"""mcpfuzz's line and branch tracer, run inside a Python server as its `sitecustomize` (standard library only).

mcpfuzz copies this file as `sitecustomize.py` into a temporary folder it puts first on the server's PYTHONPATH;
Python's `site` module imports it at start-up, before the server's own code. It appends one record per line of the
server's code the first time that line runs, to the file named by MCPFUZZ_COVERAGE_FILE (never stdout or stderr:
stdout is the protocol). Records are `LINE<TAB>PATH`, written with one `os.write` each (appended whole), before
the server's answer to the call that ran the line, so mcpfuzz reads them as soon as the answer is in. A branch
outcome taken for the first time is one record `ARC<TAB>PATH<TAB>FROM<TAB>TO`: with settrace, FROM is a line with
more than one possible next line (an `if`, a loop, a `return` inside a condition) and TO the line that ran next
(0: the function returned); with sys.monitoring, FROM is the branching instruction's `LINE.OFFSET` and TO the
destination's, so a branch inside one line (`x = a if c else b`) has two outcomes. A first record
`#tracer<TAB>KIND<TAB>PID` says the tracer is in.

Which files count: those under a folder of MCPFUZZ_COVERAGE_ROOTS (os.pathsep-separated), never the standard
library nor an installed package (site-packages) unless the root itself is inside one; with MCPFUZZ_COVERAGE_SDK=1
every file but the standard library's. On 3.12 and later `sys.monitoring` reports each line once (its location is
disabled after the first event, so a covered line costs nothing after) and each branch outcome once (a branch is
disabled once both outcomes were seen); before, `sys.settrace` traces only the counted files' frames, and stops
tracing a function once every line of it and every outcome of its branching lines (read from its bytecode) was
seen. Until then a traced line costs a call and a set lookup.

Behind a launcher: MCPFUZZ_COVERAGE_ENTRY names a console script (a tool uvx or pipx runs from an environment made at
start-up); the process that runs it adds its package's folder to the roots, and a process with no roots and another
program (the launcher itself) traces nothing. MCPFUZZ_COVERAGE_RELAY=1 (pipx, which removes PYTHONPATH before it
execs the tool) puts this file's folder back on the PYTHONPATH of what the process execs.
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
        # The environment itself too: a project's `.venv` inside the project's folder (`uv run`), its console scripts.
        folders += [paths.get("purelib", ""), paths.get("platlib", ""), sys.prefix]
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
    """Report lines and branch outcomes with sys.monitoring (3.12+); False when it is missing or every tool id is
    taken."""
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
    # 3.14 reports each direction apart (disabling one leaves the other); 3.12 and 3.13 one BRANCH event per
    # location, so a branch is disabled only once both its destinations were seen.
    split = hasattr(events, "BRANCH_LEFT")
    branch_events = events.BRANCH_LEFT | events.BRANCH_RIGHT if split else events.BRANCH
    lines_of: dict[CodeType, dict[int, int]] = {}
    outcomes: dict[tuple[CodeType, int], set[int]] = {}

    def where(code: CodeType, offset: int) -> str:
        table = lines_of.get(code)
        if table is None:
            table = lines_of[code] = {}
            for start, end, number in code.co_lines():
                for position in range(start, end, 2):
                    table[position] = number or 0
        return f"{table.get(offset, 0)}.{offset}"

    def started(code: CodeType, offset: int) -> Any:
        if tracer.counted(code.co_filename) is not None:
            monitoring.set_local_events(tool, code, events.LINE | branch_events)
        return disable

    def line(code: CodeType, number: int) -> Any:
        path = tracer.counted(code.co_filename)
        if path is not None:
            tracer.write(f"{number}\t{path}\n")
        return disable

    def branch(code: CodeType, offset: int, destination: int) -> Any:
        path = tracer.counted(code.co_filename)
        if path is None:
            return disable
        seen = outcomes.setdefault((code, offset), set())
        if destination not in seen:
            seen.add(destination)
            tracer.write(f"ARC\t{path}\t{where(code, offset)}\t{where(code, destination)}\n")
        return disable if split or len(seen) >= 2 else None

    monitoring.register_callback(tool, events.PY_START, started)
    monitoring.register_callback(tool, events.LINE, line)
    for event in ((events.BRANCH_LEFT, events.BRANCH_RIGHT) if split else (events.BRANCH,)):
        monitoring.register_callback(tool, event, branch)
    monitoring.set_events(tool, events.PY_START)
    return True


class _Shape:
    """What of a code object there is to see: its lines, and the possible next lines of its branching lines."""

    __slots__ = ("lines_left", "arcs_left", "branching")

    def __init__(self, code: CodeType) -> None:
        lines, following = _read(code)
        self.branching = frozenset(line for line, nexts in following.items() if len(nexts) > 1)
        self.lines_left = len(lines) or 1
        self.arcs_left = sum(len(following[line]) for line in self.branching)

    @property
    def done(self) -> bool:
        return self.lines_left <= 0 and self.arcs_left <= 0


def _settrace(tracer: _Tracer) -> None:
    """Report lines and branch outcomes with sys.settrace (every thread started from now on too)."""
    import threading

    seen: set[tuple[CodeType, int]] = set()
    arcs: set[tuple[CodeType, int, int]] = set()
    shapes: dict[CodeType, _Shape] = {}
    done: set[CodeType] = set()

    def arc(code: CodeType, shape: _Shape, before: int, after: int) -> None:
        key = (code, before, after)
        if key not in arcs:
            arcs.add(key)
            tracer.write(f"ARC\t{tracer.counted(code.co_filename)}\t{before}\t{after}\n")
            shape.arcs_left -= 1
            if shape.done:
                done.add(code)

    def frame_tracer(code: CodeType, shape: _Shape) -> Any:
        previous = 0  # the frame's last line; its state lives in this closure, one per traced call

        def local(frame: FrameType, event: str, arg: Any) -> Any:
            nonlocal previous
            if event == "line":
                number = frame.f_lineno
                if previous in shape.branching:
                    arc(code, shape, previous, number)
                previous = number
                key = (code, number)
                if key not in seen:
                    seen.add(key)
                    tracer.write(f"{number}\t{tracer.counted(code.co_filename)}\n")
                    shape.lines_left -= 1
                    if shape.done:
                        done.add(code)
            elif event == "return" and previous in shape.branching:
                arc(code, shape, previous, 0)
            return local

        return local

    def calls(frame: FrameType, event: str, arg: Any) -> Any:
        code = frame.f_code
        if code in done or tracer.counted(code.co_filename) is None:
            return None
        shape = shapes.get(code)
        if shape is None:
            shape = shapes[code] = _Shape(code)
        return frame_tracer(code, shape)

    threading.settrace(calls)
    sys.settrace(calls)


_ENDS = frozenset({"RETURN_VALUE", "RETURN_CONST", "RAISE_VARARGS", "RERAISE"})
# A function's prologue: settrace reports no line for it (the `def` line of a plain function is never a "line").
_PROLOGUE = frozenset({"RESUME", "RETURN_GENERATOR", "MAKE_CELL", "COPY_FREE_VARS"})
_ALWAYS = frozenset({"JUMP_FORWARD", "JUMP_BACKWARD", "JUMP_ABSOLUTE", "JUMP_BACKWARD_NO_INTERRUPT", "JUMP",
                     "JUMP_NO_INTERRUPT"})


def _read(code: CodeType) -> tuple[set[int], dict[int, set[int]]]:
    """A code object's lines settrace reports (its own, not its nested functions'), and each line's possible next
    lines (0: the function returns), read from the bytecode: an instruction goes on to the next one unless it
    always jumps or ends the frame, and a jump goes to its target. Entering an exception handler is not a jump
    here (an outcome the function may never have); what a handler runs is."""
    import dis

    try:
        instructions = list(dis.get_instructions(code))
    except Exception:  # an unusual code object: nothing known, so the function is left after its first line
        return set(), {}
    lines: list[int] = []
    current = 0
    for instruction in instructions:
        starts = getattr(instruction, "line_number", None) if sys.version_info >= (3, 13) else instruction.starts_line
        current = starts if isinstance(starts, int) and not isinstance(starts, bool) and starts > 0 else current
        lines.append(current)
    reported = {line for index, line in enumerate(lines) if line and instructions[index].opname not in _PROLOGUE}
    index_of = {instruction.offset: index for index, instruction in enumerate(instructions)}
    jumps = set(dis.hasjrel) | set(dis.hasjabs)
    following: dict[int, set[int]] = {}
    for index, instruction in enumerate(instructions):
        here = lines[index]
        if not here:
            continue
        targets: list[tuple[int, bool]] = []
        if instruction.opname in _ENDS:
            following.setdefault(here, set()).add(0)
            continue
        if instruction.opname not in _ALWAYS and index + 1 < len(instructions):
            targets.append((index + 1, False))
        if instruction.opcode in jumps and isinstance(instruction.argval, int) and instruction.argval in index_of:
            target = index_of[instruction.argval]
            targets.append((target, target <= index))
        for target, backwards in targets:
            there = lines[target]
            if there and (there != here or backwards):
                following.setdefault(here, set()).add(there)
    return reported, following


def _install() -> None:
    log = os.environ.get("MCPFUZZ_COVERAGE_FILE")
    if not log:
        return
    if os.environ.get("MCPFUZZ_COVERAGE_RELAY") == "1":
        _relay()
    folders = [folder for folder in os.environ.get("MCPFUZZ_COVERAGE_ROOTS", "").split(os.pathsep) if folder]
    entry = os.environ.get("MCPFUZZ_COVERAGE_ENTRY")
    if entry:
        found = _entry_folder(entry)
        if found is None and not folders:
            return  # the launcher's own process (pipx), or another program: none of its code counts
        if found is not None:
            folders.append(found)
            os.environ["MCPFUZZ_COVERAGE_ROOTS"] = os.pathsep.join(folders)  # the server's children count it too
    tracer = _Tracer(log, _prefixes(folders), os.environ.get("MCPFUZZ_COVERAGE_SDK") == "1")
    kind = "sys.monitoring" if _monitor(tracer) else "settrace"
    if kind == "settrace":
        _settrace(tracer)
    tracer.write(f"#tracer\t{kind}\t{os.getpid()}\n")


def _entry_folder(entry: str) -> str | None:
    """The folder of the package the console script `entry` runs, when this process is that script (a tool uvx or
    pipx installed in an environment of their own); found without importing it."""
    program = sys.argv[0] if sys.argv else ""
    if os.path.basename(program) != entry:
        return None
    module = None
    with contextlib.suppress(Exception):  # an old importlib.metadata: the script's own import line says it
        from importlib.metadata import entry_points

        module = next(iter(entry_points(group="console_scripts", name=entry))).module
    if module is None:
        import re

        with contextlib.suppress(OSError), open(program, encoding="utf-8", errors="replace") as handle:
            match = re.search(r"^\s*from\s+([A-Za-z_][\w.]*)\s+import\b", handle.read(65536), re.MULTILINE)
            module = match.group(1) if match else None
    if module is None:
        return None
    import importlib.util

    spec = importlib.util.find_spec(module.split(".")[0])
    if spec is None:
        return None
    if spec.submodule_search_locations:
        return os.path.realpath(list(spec.submodule_search_locations)[0])
    return os.path.dirname(os.path.realpath(spec.origin)) if spec.origin else None


def _relay() -> None:
    """A launcher that removes PYTHONPATH before it execs the server (pipx does): this folder is put back first on
    the PYTHONPATH of what it execs, so the server loads the tracer too."""
    here = os.path.dirname(os.path.realpath(__file__))
    execve = os.execve

    def relayed(path: Any, args: Any, env: Any) -> Any:
        env = dict(env)
        env.pop("MCPFUZZ_COVERAGE_RELAY", None)
        paths = [folder for folder in env.get("PYTHONPATH", "").split(os.pathsep) if folder]
        if here not in paths:
            env["PYTHONPATH"] = os.pathsep.join([here, *paths])
        return execve(path, args, env)

    os.execve = relayed  # type: ignore[assignment]  # os.execvpe and the other exec*e functions look it up


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
