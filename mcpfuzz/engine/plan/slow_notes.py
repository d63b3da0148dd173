"""SlowNotes: a valid call answered after --timeout by a live (or busy) server is slow, not a hang; said once."""

from __future__ import annotations

from mcpfuzz.engine.events import EventSink, Notice
from mcpfuzz.jsonrpc.exchange import ID_CURRENT, Exchange


class SlowNotes:
    """Tells the person running mcpfuzz, once per target, that a target is slow (or was cut short unjudged)."""

    def __init__(self, timeout: float, call_timeout: float, emit: EventSink) -> None:
        self.timeout = timeout
        self.call_timeout = call_timeout
        self.emit = emit
        self.noted: set[str] = set()

    def note(self, exchange: Exchange) -> None:
        """Say so when `exchange` is a slow call of a target not yet said to be slow."""
        if not exchange.extended:
            return  # nearly every case: answered within --timeout
        target = exchange.case.target
        if target in self.noted:
            return
        answers = [a for a in exchange.responses() if a.id_tag == ID_CURRENT]
        if not answers and exchange.cut_short and (exchange.barrier_answered or exchange.blocked):
            self.noted.add(target)
            self.emit(Notice(f"{target} was still unanswered after {exchange.waited:.1f}s when its share of the run "
                             f"ended, before --call-timeout ({self.call_timeout:g}s): not judged (raise "
                             "--budget, or give the target a shorter timeout in the config file to judge it)",
                             level="info"))
            return
        if not answers:
            return
        self.noted.add(target)
        progress = f", with {exchange.progress_count()} progress notifications" if exchange.progress_count() else ""
        meanwhile = ("it answered nothing else meanwhile (its one thread was busy with the call: other requests "
                     "wait), but it answered, so it is slow" if exchange.blocked else
                     "the server answered pings meanwhile, so it is slow")
        self.emit(Notice(f"{target} answered after {answers[0].at:.1f}s{progress}: slower than --timeout "
                         f"({self.timeout:g}s), but {meanwhile}, not a hang (calls get up to --call-timeout, "
                         f"{self.call_timeout:g}s)", level="info"))
