"""A reader that stops early (`mcpfuzz run ... | head -1`) ends the output, never the run or its exit status."""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any, TextIO


class PipeSafeStream:
    """A text stream whose writes to a closed pipe are dropped: the run goes on, its reports and corpus written.

    The first broken write points the file descriptor at the null device, so nothing later (rich, click, the
    interpreter's last flush) meets the closed pipe again or prints a traceback about it.
    """

    def __init__(self, stream: TextIO) -> None:
        self.stream = stream
        self.reader_gone = False

    def write(self, text: str) -> int:
        if not self.reader_gone:
            try:
                return self.stream.write(text)
            except BrokenPipeError:
                self._drop_output()
        return len(text)

    def flush(self) -> None:
        if not self.reader_gone:
            try:
                self.stream.flush()
            except BrokenPipeError:
                self._drop_output()

    def __getattr__(self, name: str) -> Any:
        return getattr(self.stream, name)

    def _drop_output(self) -> None:
        self.reader_gone = True
        try:
            null = os.open(os.devnull, os.O_WRONLY)
        except OSError:
            return
        try:
            os.dup2(null, self.stream.fileno())
        except (OSError, ValueError):
            pass  # a stream without a descriptor of its own (a test's capture): dropping the writes is enough
        finally:
            os.close(null)


@contextmanager
def pipe_safe_output() -> Iterator[None]:
    """stdout and stderr made pipe-safe for the duration of a command."""
    saved = sys.stdout, sys.stderr
    sys.stdout = PipeSafeStream(saved[0])
    sys.stderr = PipeSafeStream(saved[1])
    try:
        yield
    finally:
        sys.stdout, sys.stderr = saved
