"""Listeners of the event stream: the `EventHandler` contract and the sink that feeds every handler."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

from mcpfuzz.engine.events import Event


class EventHandler(Protocol):
    """One listener: `start` before the first event, `handle` for each, `finish` after the last (also on errors)."""

    def start(self) -> None: ...

    def handle(self, event: Event) -> None: ...

    def finish(self) -> None: ...


class FanOut:
    """The `EventSink` the engine is given: every event to every handler, in their order.

    It is a handler itself: `start` starts them all (when one fails, the ones already started are
    finished again), `finish` finishes the started ones, last started first.
    """

    def __init__(self, handlers: Sequence[EventHandler]) -> None:
        self.handlers = tuple(handlers)
        self._started: list[EventHandler] = []

    def __call__(self, event: Event) -> None:
        self.handle(event)

    def start(self) -> None:
        """Start every handler in order."""
        try:
            for handler in self.handlers:
                handler.start()
                self._started.append(handler)
        except BaseException:
            self.finish()
            raise

    def handle(self, event: Event) -> None:
        """The event to each handler."""
        for handler in self.handlers:
            handler.handle(event)

    def finish(self) -> None:
        """Finish the started handlers (also after an error, so files are closed and progress stopped)."""
        while self._started:
            self._started.pop().finish()
