"""One process's part in a shared search: who it is, its work numbers, its findings and heartbeats.

Nothing here coordinates: every process claims what it needs with one atomic Redis command (a
worker number and slice numbers from counters, the lead role with SET NX, each finding with
HSETNX) and goes on alone when Redis is gone, keeping what it would have written until it is back.
"""

from __future__ import annotations

import json
import os
import secrets
import socket
import threading
import time
from collections.abc import Callable
from functools import partial
from typing import Any

import anyio
import anyio.to_thread
from hypothesis.database import ExampleDatabase

from mcpfuzz.corpus.redact import Redactor
from mcpfuzz.engine.events import EventSink, Finding, Notice
from mcpfuzz.engine.shared.examples import SharedExamples
from mcpfuzz.engine.shared.findings import Publisher, publish
from mcpfuzz.engine.shared.link import SharedLink
from mcpfuzz.engine.shared.options import SharedOptions
from mcpfuzz.transport.target import TargetDescription

# Slice numbers a process takes while Redis is down: far above any counter value, one band per process.
LOCAL_EPOCHS = 1 << 40
LOCAL_BAND = 1 << 20
Status = Callable[[], dict[str, Any]]


class SharedHub:
    """This process's link to the shared search (one per soak process, or per `run`)."""

    def __init__(self, options: SharedOptions, *, server: TargetDescription, seed: int, redactor: Redactor,
                 link: SharedLink | None = None) -> None:
        self.options = options
        self.link = link if link is not None else SharedLink(options)
        self.machine = f"{socket.gethostname()}-{os.getpid()}-{secrets.token_hex(3)}"
        self.examples = SharedExamples(self.link)
        self.publisher = Publisher(self.machine, server, seed, redactor)
        self.server_label = redactor.text(server.label)
        self.started = time.time()
        self.elsewhere: set[str] = set()  # fingerprints another machine found first
        self._pending: dict[str, Finding] = {}  # findings not yet written (Redis was down)
        self._found: dict[str, Finding] = {}  # every finding of this process, written again after a lost Redis
        self._last_epoch = 0
        self._local_epochs = LOCAL_EPOCHS + secrets.randbelow(LOCAL_BAND) * LOCAL_BAND
        self._reported_down = False
        self._lock = threading.Lock()  # findings are shared from the event loop and from the heartbeat's thread
        self.lead = False
        self.number = self._claim_number()
        self._write_meta()

    # -- claims ----------------------------------------------------------------------------------

    def _claim_number(self) -> int | None:
        """A worker number no other process of this prefix has (None while Redis is down)."""
        number = self.link.call(lambda client: client.incr(self.link.key("workers")))
        self.link.call(lambda client: client.expire(self.link.key("workers"), int(self.options.ttl)))
        return None if number is None else int(number) - 1

    def claim_lead(self) -> bool:
        """The lead runs a soak's once-only work (corpus replay, catalogue, coverage): whoever claims it first.

        The claim lives as long as the lead's heartbeat, so a later soak with the same prefix leads anew.
        Without Redis this process leads itself: it soaks alone.
        """
        claimed = self.link.call(lambda client: bool(client.set(self.link.key("lead"), self.machine, nx=True,
                                                                ex=int(self.options.heartbeat_ttl))))
        self.lead = claimed is None or claimed
        return self.lead

    def next_epoch(self) -> int:
        """A slice number no other process uses: the shared counter, or this process's own band without Redis."""
        value = self.link.call(lambda client: client.incr(self.link.key("slices")))
        if value is not None:
            self._last_epoch = int(value)
            return self._last_epoch
        self._local_epochs += 1
        return self._local_epochs

    def _write_meta(self) -> None:
        meta = {"server": self.server_label, "seed": str(self.publisher.seed)}

        def write(client: Any) -> Any:
            pipe = client.pipeline(transaction=False)
            for name, value in meta.items():
                pipe.hsetnx(self.link.key("meta"), name, value)
            pipe.expire(self.link.key("meta"), int(self.options.ttl))
            return pipe.execute()

        self.link.call(write)

    # -- examples and findings -------------------------------------------------------------------

    def example_database(self, local: Any) -> ExampleDatabase:
        """A search's example database: the local folder and its shared twin."""
        return self.examples.database(local)

    def publish(self, findings: list[Finding]) -> None:
        """Share findings (each fingerprint written once); kept for later when Redis is down."""
        with self._lock:
            for finding in findings:
                self._pending[finding.fingerprint] = finding
                self._found[finding.fingerprint] = finding
            batch = dict(self._pending)
        owners = publish(self.link, self.publisher, list(batch.values()))
        if owners is None:
            return
        with self._lock:
            for fingerprint, finding in batch.items():
                if self._pending.get(fingerprint) is finding:  # not replaced by a newer version meanwhile
                    del self._pending[fingerprint]
            self.elsewhere.update(fp for fp, owner in owners.items() if owner and owner != self.machine)

    @property
    def pending(self) -> int:
        """Findings and example saves waiting for Redis."""
        return len(self._pending) + self.examples.pending

    # -- heartbeats ------------------------------------------------------------------------------

    async def heartbeats(self, status: Status, emit: EventSink) -> None:
        """Every heartbeat interval: say this process is alive, notice a lost or returned Redis, resync."""
        while True:
            for notice in await anyio.to_thread.run_sync(self.beat, status()):
                emit(notice)
            await anyio.sleep(self.options.heartbeat_every)

    def beat(self, status: dict[str, Any], *, state: str = "running") -> list[Notice]:
        """One heartbeat (a blocking call: run it off the event loop); the notices it has for the run."""
        notices = []
        alive = self.link.call(lambda client: client.ping(), probe=True) is not None
        if not alive:
            if not self._reported_down:
                self._reported_down = True
                notices.append(Notice(f"lost the shared store {self.options.label} ({self.link.last_error}): "
                                      "fuzzing on locally; findings stay in the corpus and are shared when it is "
                                      "back", level="warning"))
            return notices
        if self._reported_down or self.pending:
            examples = self.examples.resync()
            findings = len(self._pending)
            if self._reported_down:
                # Redis may have come back empty (restarted without persistence): write everything again
                # (each record is written once whatever happens), and keep the counters above what we used.
                self._restore_counters()
                with self._lock:
                    self._pending.update(self._found)
            self.publish([])
            if self._reported_down:
                notices.append(Notice(f"the shared store is back: {findings} findings and {examples} examples "
                                      "shared", level="info"))
            self._reported_down = False
        self._heartbeat(status, state)
        return notices

    def _restore_counters(self) -> None:
        """Raise the shared counters back above the numbers this process took, should Redis have lost them."""
        for name, used in (("slices", self._last_epoch), ("workers", (self.number or 0) + 1)):
            self.link.call(partial(_raise_counter, self.link.key(name), used))

    def _heartbeat(self, status: dict[str, Any], state: str) -> None:
        record = {"machine": self.machine, "host": socket.gethostname(), "pid": os.getpid(), "number": self.number,
                  "lead": self.lead, "server": self.server_label, "started": self.started, "last_seen": time.time(),
                  "state": state, "redis_outages": self.link.outages, "redis_calls": self.link.calls,
                  "redis_seconds": round(self.link.seconds, 3), **status}
        ttl = int(self.options.heartbeat_ttl)

        def write(client: Any) -> Any:
            pipe = client.pipeline(transaction=False)
            pipe.set(self.link.key("machine", self.machine), json.dumps(record), ex=ttl)
            if self.lead and state == "running":
                pipe.set(self.link.key("lead"), self.machine, ex=ttl)
            if state != "running":  # the final counters stay for the merged report
                pipe.hset(self.link.key("runs"), self.machine, json.dumps(record))
                pipe.expire(self.link.key("runs"), int(self.options.ttl))
            return pipe.execute()

        self.link.call(write)

    def close(self, status: dict[str, Any]) -> list[Notice]:
        """The last heartbeat (its counters kept for the report); what could not be shared is said."""
        notices = self.beat(status, state="finished")
        if self.pending:
            notices.append(Notice(f"{len(self._pending)} findings and {self.examples.pending} examples could not be "
                                  f"shared ({self.options.label} is unreachable); the findings are in the local "
                                  "corpus", level="warning"))
        self.link.close()
        return notices


def _raise_counter(key: str, least: int, client: Any) -> None:
    """Make the counter at `key` at least `least` (INCRBY: racing processes may overshoot, never go back)."""
    current = int(client.get(key) or 0)
    if current < least:
        client.incrby(key, least - current)
