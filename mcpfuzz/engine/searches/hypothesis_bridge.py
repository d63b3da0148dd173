"""Run a Hypothesis test against the live server: @given in a worker thread, I/O back on the event loop."""

from __future__ import annotations

import atexit
import gc
import math
import os
import subprocess
import sys
import threading
import time
import unicodedata
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar, TypeVar

import anyio.from_thread
import anyio.to_thread
import hypothesis.configuration
from hypothesis import HealthCheck, Phase, Verbosity, given, settings
from hypothesis import seed as hypothesis_seed
from hypothesis import strategies as st
from hypothesis.database import DirectoryBasedExampleDatabase, ExampleDatabase
from hypothesis.errors import UnsatisfiedAssumption

from mcpfuzz.engine.searches.every_module import import_every_module
from mcpfuzz.jsonrpc.call_split import SPLIT

# Hypothesis keeps the examples of a run in memory (a 10,000-entry cache and its data tree), up to
# 150 KB each for a list of tool calls: one search running for minutes grew mcpfuzz by about 60 MB a
# minute. Without --max-examples a search is therefore cut into rounds of this many valid examples,
# each a fresh Hypothesis run with a seed of its own, whose memory goes when it ends. Measured on a
# tool with five string formats, one 20 s search peaked at 175 MB in rounds of 500 and 102 MB in
# rounds of 200, at the same calls/s.
ROUND_EXAMPLES = 200
# Hypothesis' Unicode tables (its charmap, and the UTF-8 codec's intervals hypothesis-jsonschema asks
# for), built once and cached in its home directory; building them peaks at about 240 MB. One test run
# drawing a UTF-8 character builds both through the public API (the file names are checked by the tests).
UNICODE_TABLES = ("charmap", "codec-v2-utf-8")
# The child dies with mcpfuzz however mcpfuzz ends: mcpfuzz kills it at exit, and on Linux the kernel
# kills it when mcpfuzz dies without running its exit handlers (SIGKILL, the OOM killer). Its argument is
# mcpfuzz's pid: a parent that died before prctl took effect is seen by getppid.
BUILD_TABLES = ("import os, sys\n"
                "if sys.platform.startswith('linux'):\n"
                "    import ctypes, signal\n"
                "    ctypes.CDLL(None).prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG\n"
                "    if os.getppid() != int(sys.argv[1]): sys.exit(1)\n"
                "from hypothesis import given, settings, strategies as st\n"
                "given(st.characters(codec='utf-8'))(settings(database=None, max_examples=1)(lambda c: None))()\n")
BUILD_TIMEOUT = 300.0


def hypothesis_home() -> Path | None:
    """Where Hypothesis keeps its caches for mcpfuzz: $HYPOTHESIS_STORAGE_DIRECTORY, else a per-user cache.

    Hypothesis' default is ./.hypothesis in the working directory: a folder left in the user's
    project, and Unicode tables rebuilt in every new folder (the peak memory of a first run there).
    """
    if os.environ.get("HYPOTHESIS_STORAGE_DIRECTORY"):
        return Path(os.environ["HYPOTHESIS_STORAGE_DIRECTORY"])
    cache = os.environ.get("XDG_CACHE_HOME") or (os.environ.get("LOCALAPPDATA") if os.name == "nt" else None)
    try:
        root = Path(cache) if cache else Path.home() / ".cache"
    except RuntimeError:  # no home directory: keep Hypothesis' default
        return None
    return root / "mcpfuzz" / "hypothesis"


def use_hypothesis_home() -> Path | None:
    """Point Hypothesis at `hypothesis_home()` unless its home was already chosen; the home in use."""
    chosen = getattr(hypothesis.configuration, "__hypothesis_home_directory", None)
    if chosen is not None:
        return Path(chosen)
    home = hypothesis_home()
    if home is not None:
        hypothesis.configuration.set_hypothesis_home_dir(home)
    return home


def build_unicode_tables(home: Path | None) -> bool:
    """Build Hypothesis' Unicode tables in a short-lived child process when `home` lacks them.

    The child's peak memory goes with it; this process then only loads the compressed tables.
    False when they could not be built (Hypothesis then builds them here, as before).
    """
    if home is None:
        return False
    folder = home / "unicode_data" / unicodedata.unidata_version  # where Hypothesis caches them
    if all((folder / f"{name}.json.gz").exists() for name in UNICODE_TABLES):
        return True
    with _builder_lock:
        if _builder_stopped:  # the process is ending: start nothing that could outlive it
            return False
        try:
            builder = subprocess.Popen([sys.executable, "-c", BUILD_TABLES, str(os.getpid())],
                                       stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                                       env={**os.environ, "HYPOTHESIS_STORAGE_DIRECTORY": str(home)})
        except OSError:
            return False
        _builders.add(builder)
    try:
        status = builder.wait(timeout=BUILD_TIMEOUT)
    except subprocess.TimeoutExpired:
        status = None
    finally:
        _end_builder(builder)
    return status == 0 and all((folder / f"{name}.json.gz").exists() for name in UNICODE_TABLES)


_builders: set[subprocess.Popen[bytes]] = set()
_builder_lock = threading.Lock()
_builder_stopped = False


def _end_builder(builder: subprocess.Popen[bytes]) -> None:
    """Kill and reap one table builder (nothing when it already ended)."""
    if builder.poll() is None:
        builder.kill()
    builder.wait()
    with _builder_lock:
        _builders.discard(builder)


def stop_table_builders() -> None:
    """End every table builder this process started and start no more: called when the process exits, however
    the run ended (a normal end, an early exit, Ctrl-C, an exception), so that no child of mcpfuzz outlives it."""
    global _builder_stopped
    with _builder_lock:
        _builder_stopped = True
        running = list(_builders)
    for builder in running:
        _end_builder(builder)


atexit.register(stop_table_builders)


# Before any strategy is imported: hypothesis-jsonschema touches Hypothesis' storage at import, which
# would otherwise settle on ./.hypothesis. Only a path is set here; nothing is built or started.
use_hypothesis_home()
_prepared = False
_preparing = threading.Lock()


def prepare_hypothesis() -> None:
    """Before the first draw of a process: Hypothesis' home chosen and its Unicode tables built (once).

    Never at import: importing the engine starts no process. A run calls it through HypothesisWarmup, in the
    background from its start.
    """
    global _prepared
    with _preparing:
        if not _prepared:
            build_unicode_tables(use_hypothesis_home())
            _prepared = True


def first_draw() -> None:
    """One tiny Hypothesis run: what the first run of a process pays once (the Unicode tables read in, the
    constants of loaded modules collected; about 50 ms) is paid here instead of by a target's first draw."""

    @settings(database=None, max_examples=1, phases=[Phase.generate], deadline=None,
              suppress_health_check=list(HealthCheck), verbosity=Verbosity.quiet)
    @given(st.text(st.characters(codec="utf-8"), max_size=1))
    def draw(_: str) -> None:
        pass

    draw()


def settle_heap() -> None:
    """Move every object alive now (the modules, Hypothesis' tables) out of the cyclic collector's sight, once.

    They live as long as the process, yet each full collection walks them all: on a heap of every module loaded, a
    full collection takes a fifth of a second, and Hypothesis runs one (`gc.collect`) the first time each new
    thread draws. Objects made later are collected as before.
    """
    gc.freeze()


class HypothesisWarmup:
    """Hypothesis made ready in a thread of its own from the start of a run, so that building its Unicode tables
    (seconds, on a machine that never ran mcpfuzz) overlaps the probe and the catalogue.

    `start()` at the start of a run; `await ready()` (or `wait()` in a worker thread) before the first draw.
    One per process: a second run's `start()` gets the same one, ready at once.
    """

    _current: ClassVar[HypothesisWarmup | None] = None
    _starting: ClassVar[threading.Lock] = threading.Lock()

    def __init__(self) -> None:
        self._done = threading.Event()
        self.error: BaseException | None = None  # what stopped the warm-up (the first draw then pays for it)

    @classmethod
    def start(cls) -> HypothesisWarmup:
        """The process's warm-up, started in a daemon thread unless it was started before."""
        with cls._starting:
            if cls._current is None:
                cls._current = cls()
                threading.Thread(target=cls._current._run, name="mcpfuzz-hypothesis-warmup", daemon=True).start()
            return cls._current

    def _run(self) -> None:
        try:
            import_every_module()
            prepare_hypothesis()
            first_draw()
        except Exception as error:  # never fatal: Hypothesis builds what it lacks at the first draw, as before
            self.error = error
        finally:
            settle_heap()
            self._done.set()

    @property
    def is_ready(self) -> bool:
        """Whether the warm-up is over."""
        return self._done.is_set()

    def wait(self) -> None:
        """Block until the warm-up is over (from a worker thread, never the event loop)."""
        self._done.wait()

    async def ready(self) -> None:
        """Wait until the warm-up is over without holding the event loop (cancellable: Ctrl-C, the budget)."""
        if not self._done.is_set():
            await anyio.to_thread.run_sync(self._done.wait, abandon_on_cancel=True)


class OutOfTime(BaseException):
    """Raised inside the test body when the slice is spent; a BaseException so Hypothesis does not shrink it."""


@dataclass
class GivenOutcome:
    """How one @given run ended: "exhausted" (nothing new to try), "round-done" (ROUND_EXAMPLES valid
    examples, no failure), "failed" (shrunk), "out-of-time"."""

    ended: str
    examples: int
    error: str = ""

    @property
    def go_on(self) -> bool:
        """Whether the search should go on with another round (a new seed) while time is left."""
        return self.ended in ("failed", "round-done")


def fuzz_settings(database: Path | ExampleDatabase | None, max_examples: int = ROUND_EXAMPLES) -> settings:
    """Explicit settings only: under CI=true Hypothesis' default profile would derandomize and drop the database."""
    return settings(
        database=DirectoryBasedExampleDatabase(str(database)) if isinstance(database, Path) else database,
        max_examples=max_examples,
        deadline=None,
        derandomize=False,
        # Phase.target acts only on searches that report a `target()` (the fuzz phase's latency, for slow answers).
        phases=(Phase.reuse, Phase.generate, Phase.target, Phase.shrink),
        suppress_health_check=list(HealthCheck),
        verbosity=Verbosity.quiet,
        report_multiple_bugs=False,
        print_blob=False,
    )


T = TypeVar("T")


class _Cancelled(Exception):
    """The search's cancel scope was cancelled before a call on the event loop could start."""


def on_loop(func: Callable[..., Awaitable[T]], *args: Any) -> T:
    """`func(*args)` run on the event loop from the Hypothesis thread; OutOfTime when the run or the phase that
    started the search was cancelled already (Ctrl-C, SIGTERM, the budget)."""
    try:
        return anyio.from_thread.run(_unless_cancelled, func, *args)
    except _Cancelled:
        raise OutOfTime from None


async def _unless_cancelled(func: Callable[..., Awaitable[T]], *args: Any) -> T:
    """Not started when the search's cancel scope is cancelled: a task started in a scope cancelled earlier is
    never handed the cancellation, and anyio's next checkpoint (a lock's) would wait for it forever."""
    if anyio.current_effective_deadline() == -math.inf:
        raise _Cancelled
    return await func(*args)


def check_deadline(deadline: float) -> None:
    """Stop the Hypothesis run (without shrinking) once the slice is spent."""
    if time.monotonic() >= deadline:
        raise OutOfTime


async def run_given(strategy: st.SearchStrategy[Any], body: Callable[[Any], BaseException | None], *,
                    seed: int, deadline: float, database: Path | ExampleDatabase | None,
                    max_examples: int | None = None) -> GivenOutcome:
    """Run `body` on values of `strategy` until a failure is shrunk, the space is exhausted, `deadline`,
    or (without `max_examples`) ROUND_EXAMPLES valid examples.

    `body` runs in the worker thread (draws happen there) and reaches the server through
    `anyio.from_thread.run`; it returns the failure to raise (Hypothesis then shrinks toward it) or
    None. Every example re-checks the deadline, so a slice overruns by one example at most.
    """
    examples = rejected = 0
    cancelled = anyio.get_cancelled_exc_class()

    def test_body(value: Any) -> None:
        nonlocal examples, rejected
        check_deadline(deadline)
        try:
            # Ctrl-C, SIGTERM or the budget cancelled the run: stop now, not at the end of the slice.
            anyio.from_thread.check_cancelled()
        except cancelled:
            raise OutOfTime from None
        examples += 1
        if SPLIT.on:
            SPLIT.example_starts()
        try:
            failure = body(value)
        except UnsatisfiedAssumption:
            rejected += 1  # Hypothesis does not count it toward max_examples either
            raise
        finally:
            if SPLIT.on:
                SPLIT.example_ends()
        if failure is not None:
            raise failure

    cap = max_examples or ROUND_EXAMPLES
    # Settings outermost: `@seed` alone switches the example database off (Hypothesis sets database=None
    # for a seeded test), and failing examples must be saved to be replayed first by the next search.
    test = fuzz_settings(database, cap)(hypothesis_seed(seed)(given(strategy)(test_body)))

    def in_thread() -> GivenOutcome:
        try:
            test()
        except OutOfTime:
            return GivenOutcome("out-of-time", examples)
        except Exception as error:  # the shrunk failure, or Flaky when it did not reproduce
            return GivenOutcome("failed", examples, f"{type(error).__name__}: {error}"[:300])
        # A round that reached its cap was cut short; with --max-examples the cap is the user's limit.
        capped = max_examples is None and examples - rejected >= cap
        return GivenOutcome("round-done" if capped else "exhausted", examples)

    return await anyio.to_thread.run_sync(in_thread)
