"""A stdio MCP server whose answers come after random delays: what a loaded machine does to a correct server.

Usage: ``python tests/servers/jittery.py [--stall SECONDS] [--odds P] [--slow-start SECONDS] -- SERVER COMMAND...``

Runs SERVER COMMAND as its child and passes the client's lines to it unchanged; every line the child
writes is passed on in order after a short random hold (up to 10 ms), and one line in 1/P stalls for
between 0.3 and ``--stall`` seconds, as when the machine is busy elsewhere. The times come from the
operating system's randomness, so no two runs wait alike. ``--slow-start`` holds the first line that long, as
a start on a loaded machine. Standard library only.
"""

from __future__ import annotations

import argparse
import os
import queue
import subprocess
import sys
import threading
import time

SHORT = 0.01  # seconds: the longest ordinary hold
STALL_FROM = 0.3  # seconds: the shortest stall


def uniform() -> float:
    """A random number in [0, 1], never the same sequence from one run to the next."""
    return int.from_bytes(os.urandom(2), "big") / 0xFFFF


def held_time(stall: float, odds: float) -> float:
    """How long to hold one line: a few milliseconds, or with `odds` a stall of STALL_FROM..`stall` seconds."""
    if uniform() < odds:
        return STALL_FROM + (stall - STALL_FROM) * uniform()
    return SHORT * uniform()


def forward_input(child: subprocess.Popen[bytes]) -> None:
    """The client's lines to the child, as they come; the child's stdin is closed at our EOF."""
    assert child.stdin is not None
    for line in sys.stdin.buffer:
        try:
            child.stdin.write(line)
            child.stdin.flush()
        except BrokenPipeError:
            return
    child.stdin.close()


def read_output(child: subprocess.Popen[bytes], lines: queue.Queue[bytes | None]) -> None:
    """Every line the child writes, then None at its EOF."""
    assert child.stdout is not None
    for line in child.stdout:
        lines.put(line)
    lines.put(None)


def main() -> None:
    parser = argparse.ArgumentParser(description="Pass a server's answers on after random delays.")
    parser.add_argument("--stall", type=float, default=1.5, help="longest stall of one line (seconds)")
    parser.add_argument("--odds", type=float, default=0.03, help="the share of lines that stall")
    parser.add_argument("--slow-start", type=float, default=0.0, help="how long to hold the first line (seconds)")
    parser.add_argument("command", nargs=argparse.REMAINDER, help="the server command, after --")
    options = parser.parse_args()
    command = options.command[1:] if options.command[:1] == ["--"] else options.command
    child = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    lines: queue.Queue[bytes | None] = queue.Queue()
    threading.Thread(target=forward_input, args=(child,), daemon=True).start()
    threading.Thread(target=read_output, args=(child, lines), daemon=True).start()
    first = True
    while (line := lines.get()) is not None:
        time.sleep(options.slow_start if first else held_time(options.stall, options.odds))
        first = False
        sys.stdout.buffer.write(line)
        sys.stdout.buffer.flush()
    sys.exit(child.wait())


if __name__ == "__main__":
    main()
