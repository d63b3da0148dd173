"""A server that fails its handshake only once its parent has started another child (mcpfuzz's Unicode-table
builder on a fresh Hypothesis home): the run then ends early while that child is still working.

It writes the sibling's pid and command line to the file named by $SIBLING_PID_FILE and exits with status 1
without answering.
"""

from __future__ import annotations

import os
import sys
import time

import psutil

DEADLINE = 120.0  # seconds to wait for the sibling; a machine under load may start it late


def main() -> int:
    me = psutil.Process()
    parent = me.parent()
    stop = time.monotonic() + DEADLINE
    while parent is not None and time.monotonic() < stop:
        siblings = [child for child in parent.children() if child.pid != me.pid]
        if siblings:
            with open(os.environ["SIBLING_PID_FILE"], "w") as out:
                out.write(f"{siblings[0].pid}\n{' '.join(siblings[0].cmdline())}")
            break
        time.sleep(0.05)
    sys.stdin.close()
    return 1


if __name__ == "__main__":
    sys.exit(main())
