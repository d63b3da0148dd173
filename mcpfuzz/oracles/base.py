"""Failure classes with identity, and the oracle registry with each oracle's metadata (`Severity` is its own module)."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from enum import Flag, auto

from mcpfuzz.jsonrpc.exchange import ID_CURRENT, Exchange
from mcpfuzz.jsonrpc.incoming import RESPONSE
from mcpfuzz.jsonrpc.oracle_ids import OracleId
from mcpfuzz.jsonrpc.parts.cancel import CancelCheck
from mcpfuzz.jsonrpc.parts.concurrency import ConcurrencyCheck
from mcpfuzz.jsonrpc.parts.listing import ListingCheck
from mcpfuzz.jsonrpc.parts.resource import ResourceCheck
from mcpfuzz.oracles.severity import Severity


class Failure(Exception):
    """One oracle's verdict on one exchange or on the run. Subclassed once per oracle (distinct bugs stay apart)."""

    oracle: str = ""
    title: str = ""

    def __init__(self, severity: Severity, message: str, key: str = "", *, server_wide: bool = False,
                 detail: str = "") -> None:
        super().__init__(message)
        self.severity = severity
        self.message = message
        # Two failures of one oracle on one target with the same key are the same bug; a
        # server-wide failure (noise on stdout, silence on every bad frame) is one bug whatever
        # the target, so it is reported once, not once per frame.
        self.key = key
        self.server_wide = server_wide
        # What this occurrence showed, where one cause shows differently each time (the noise line of one log
        # statement): listed under the finding as its occurrences, never part of its identity.
        self.detail = detail
        # Other oracles' failures on the same frame folded into this one: their oracles, and their (oracle, scope,
        # key) identities (so a baseline that accepted one of them still finds it).
        self.also_judged: tuple[str, ...] = ()
        self.folded: tuple[tuple[str, str, str], ...] = ()


Check = Callable[[Exchange], Iterable[Failure]]


class Scope(Flag):
    """What an oracle judges: one exchange (its check function), or the whole run (a series the engine gathers)."""

    EXCHANGE = auto()
    RUN = auto()


@dataclass(frozen=True)
class Oracle:
    """A registered oracle, declared once: every consumer (the checks run, SARIF rules, `mcpfuzz oracles`,
    docs/oracles.md's table) reads this.

    `severity` is the worst it reports (SARIF's default level); `check` judges one exchange, and is
    None for an oracle that judges only the run (the engine calls its series function itself).
    `quiet_on_plain`: the check never reports on a plain answer (`plain_answer`), so it is not run on one.
    """

    id: str
    title: str
    severity: Severity
    description: str
    scope: Scope
    failure: type[Failure]
    check: Check | None
    quiet_on_plain: bool = False


REGISTRY: dict[str, Oracle] = {}
_ordered: dict[str, Oracle] = {}  # REGISTRY in OracleId order, rebuilt after a registration


def failure_class(oracle_id: OracleId, title: str) -> type[Failure]:
    """Make the failure class of an oracle (named after the id, e.g. `ParseErrorFailure`)."""
    name = "".join(part.capitalize() for part in oracle_id.value.split("-")) + "Failure"
    return type(name, (Failure,), {"oracle": oracle_id.value, "title": title})


def _add(oracle: Oracle) -> None:
    OracleId(oracle.id)  # an id that is no OracleId fails at import, not when a run looks it up
    if oracle.id in REGISTRY:
        raise ValueError(f"oracle {oracle.id!r} registered twice")
    REGISTRY[oracle.id] = oracle
    _ordered.clear()
    _selected_checks.clear()


def register(failure: type[Failure], severity: Severity, *, scope: Scope = Scope.EXCHANGE,
             quiet_on_plain: bool = False) -> Callable[[Check], Check]:
    """Register a check of one exchange under its failure class's oracle id; its docstring is the description.

    `scope` adds `Scope.RUN` when the engine also judges the oracle on a series over the run. `quiet_on_plain`
    declares that the check cannot report on a plain answer (`plain_answer`): it is skipped on one, and
    tests/test_oracles_pure.py proves that skipping it changes no verdict.
    """

    def decorate(check: Check) -> Check:
        description = (check.__doc__ or "").strip()
        if not description:
            raise ValueError(f"the check of {failure.oracle!r} needs a docstring: it is the oracle's description")
        _add(Oracle(failure.oracle, failure.title, severity, description, scope | Scope.EXCHANGE, failure, check,
                    quiet_on_plain))
        return check

    return decorate


def register_run_check(failure: type[Failure], severity: Severity, description: str) -> None:
    """Register an oracle that judges only the whole run (a series of samples), never one exchange."""
    _add(Oracle(failure.oracle, failure.title, severity, description, Scope.RUN, failure, None))


def all_oracles() -> dict[str, Oracle]:
    """Every oracle, with the built-in ones imported, in `OracleId` order (whatever imported them first)."""
    from mcpfuzz.oracles import builtin  # noqa: F401  (registers on import)

    if not _ordered:
        missing = [oracle_id.value for oracle_id in OracleId if oracle_id.value not in REGISTRY]
        if missing:
            raise LookupError(f"oracle ids without a registered oracle: {', '.join(missing)}")
        _ordered.update((oracle_id.value, REGISTRY[oracle_id.value]) for oracle_id in OracleId)
    return _ordered


def run_checks(exchange: Exchange, selected: Iterable[str]) -> Iterator[Failure]:
    """Run the selected oracles on one exchange. A crash silences all but `no-crash` (one finding); a plain answer
    skips the oracles quiet on one."""
    crashed = exchange.crash is not None
    every, loud = _checks_of(selected)
    if len(loud) < len(every) and plain_answer(exchange):  # (read only when some selected oracle could be skipped)
        every = loud
    for oracle_id, check in every:
        if crashed and oracle_id != OracleId.NO_CRASH:
            continue
        yield from check(exchange)


def plain_answer(exchange: Exchange) -> bool:
    """True for the common exchange: a request of the case answered once with its own id, and nothing else arrived.

    No crash, write error, HTTP reply or unanswered barrier; the case is not about cancellation, concurrency, a
    listing or a resource. What it answered (a result or an error, its shape) is still judged by the oracles
    that read answers; only those registered `quiet_on_plain` are skipped.
    """
    arrivals = exchange.arrivals
    if len(arrivals) != 1 or exchange.crash is not None or exchange.write_error or exchange.http is not None \
            or exchange.barrier_answered is False:
        return False
    arrival = arrivals[0]
    if arrival.id_tag != ID_CURRENT or arrival.answer_count > 1 or arrival.incoming.kind != RESPONSE:
        return False
    expect = exchange.case.expect
    return expect.reply and not any(expect.has(kind) for kind in (CancelCheck, ConcurrencyCheck, ListingCheck,
                                                                   ResourceCheck))


Checks = tuple[tuple[str, Check], ...]
# A selection (the run's oracle tuple) -> its checks of one exchange, in order, and those of them not quiet on a
# plain answer: looked up once, not per exchange.
_selected_checks: dict[tuple[str, ...], tuple[Checks, Checks]] = {}


def _checks_of(selected: Iterable[str]) -> tuple[Checks, Checks]:
    """The selected oracles that judge one exchange, with their checks, and those that may report on a plain
    answer (an unknown id raises KeyError)."""
    key = selected if isinstance(selected, tuple) else None
    checks = _selected_checks.get(key) if key is not None else None
    if checks is None:
        oracles = all_oracles()
        every = tuple((oracle_id, check) for oracle_id in selected if (check := oracles[oracle_id].check) is not None)
        loud = tuple((oracle_id, check) for oracle_id, check in every if not oracles[oracle_id].quiet_on_plain)
        checks = every, loud
        if key is not None:
            _selected_checks[key] = checks
    return checks
