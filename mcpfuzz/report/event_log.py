"""`--events PATH`: every event as one line of JSON (NDJSON), flushed at once, secrets redacted."""

from __future__ import annotations

import json
import os
import sys
from typing import TextIO

from mcpfuzz.corpus.redact import Redactor
from mcpfuzz.engine.config import RunConfig
from mcpfuzz.engine.events import Event
from mcpfuzz.report.event_json import event_json

STDOUT = "-"


class EventLog:
    """Streams the run to a file, or to stdout for `-`, so that another program can follow it live.

    Everything passes the redaction the corpus uses (the --env and --header values, credential
    shapes). A write that fails (disk full, a reader that went away) ends the stream, not the run:
    `problem` says what happened.
    """

    def __init__(self, config: RunConfig, path: str) -> None:
        self.config = config
        self.path = path
        self.problem = ""
        self._redactor = Redactor(config.secrets)
        self._out: TextIO | None = None

    def start(self) -> None:
        """Open the file (truncated); OSError when it cannot be, before the run starts."""
        self._out = sys.stdout if self.path == STDOUT else open(self.path, "w", encoding="utf-8")  # noqa: SIM115

    def handle(self, event: Event) -> None:
        """One line per event, flushed, so a reader sees each event as it happens."""
        if self._out is None:
            return
        # ASCII escapes: a server's reply may hold lone surrogates, which no UTF-8 file can store.
        line = json.dumps(self._redactor.value(event_json(event, self.config)), allow_nan=False)
        try:
            self._out.write(line + "\n")
            self._out.flush()
        except OSError as error:
            self.problem = f"cannot write the event stream to {self.path}: {error.strerror or error}"
            if self._out is sys.stdout:
                # A reader that went away (`| head`): later writes and the flush at exit must not fail too.
                devnull = os.open(os.devnull, os.O_WRONLY)
                os.dup2(devnull, sys.stdout.fileno())
                os.close(devnull)
            self._close()

    def finish(self) -> None:
        """Close the file (stdout stays open)."""
        self._close()

    def _close(self) -> None:
        out, self._out = self._out, None
        if out is not None and out is not sys.stdout:
            out.close()
