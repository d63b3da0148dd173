"""The selected targets prepared in a background thread while the catalogue runs, awaited before the call phases."""

from __future__ import annotations

import threading

import anyio.to_thread

from mcpfuzz.engine.searches.hypothesis_bridge import HypothesisWarmup
from mcpfuzz.engine.surface.targets import TargetPlan, prepare_targets


class PreparationCancelled(Exception):
    """Raised inside the preparing thread once the run no longer needs it."""


class TargetPreparation:
    """`prepare_targets` on a plan, in a daemon thread started as soon as the probe has listed the targets.

    Preparing takes milliseconds for most targets (seconds for a deep schema that is not drawn exactly), so by
    the time the catalogue and lifecycle are done every target is usually ready and the call phases start at
    once. The thread waits for Hypothesis' warm-up before its first draw.
    """

    def __init__(self, plan: TargetPlan, warmup: HypothesisWarmup) -> None:
        self.plan = plan
        self._warmup = warmup
        self._stop = threading.Event()
        self._done = threading.Event()
        self._result: TargetPlan | None = None
        self._error: BaseException | None = None

    @classmethod
    def start(cls, plan: TargetPlan, warmup: HypothesisWarmup) -> TargetPreparation:
        """Start preparing `plan`'s targets now, in a thread of their own."""
        preparation = cls(plan, warmup)
        threading.Thread(target=preparation._run, name="mcpfuzz-prepare-targets", daemon=True).start()
        return preparation

    def _run(self) -> None:
        try:
            self._warmup.wait()
            self._result = prepare_targets(self.plan, check_cancelled=self._check)
        except BaseException as error:  # handed to whoever awaits the result (PreparationCancelled included)
            self._error = error
        finally:
            self._done.set()

    def _check(self) -> None:
        if self._stop.is_set():
            raise PreparationCancelled

    def cancel(self) -> None:
        """Stop preparing before the next target (the run was stopped, or ended without calling targets)."""
        self._stop.set()

    async def finished(self) -> TargetPlan:
        """The plan to call once every target is prepared (see `prepare_targets`); cancelling the wait (Ctrl-C,
        SIGTERM, the budget) stops the preparation too."""
        try:
            await anyio.to_thread.run_sync(self._done.wait, abandon_on_cancel=True)
        except BaseException:
            self.cancel()
            raise
        if self._error is not None:
            raise self._error
        assert self._result is not None
        return self._result
