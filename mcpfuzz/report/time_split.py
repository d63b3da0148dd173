"""What a run's plan did, in one line each: where the time went ("probe 4%, catalogue 9%, calls 78%"), and the
targets it planned but never called."""

from __future__ import annotations

from mcpfuzz.engine.events import Stats

# The phases that call targets, shown together: their share is what a run is for.
CALL_PHASES = frozenset({"coverage", "fuzz", "stateful", "soak"})
SHOWN_FROM = 0.01  # shares below one percent are left out


def phase_shares(stats: Stats) -> dict[str, float]:
    """Each phase's share of the run's wall-clock time, the call phases summed as `calls`, in the order run."""
    shares: dict[str, float] = {}
    for phase in (stats.plan or {}).get("phases", []):
        name = "calls" if phase.get("name") in CALL_PHASES else str(phase.get("name"))
        shares[name] = shares.get(name, 0.0) + float(phase.get("share", 0.0))
    return {name: share for name, share in shares.items() if share >= SHOWN_FROM}


def time_split(stats: Stats) -> str:
    """The shares as one line of text; "" when the run recorded none (a merged report of workers)."""
    return ", ".join(f"{name} {share:.0%}" for name, share in phase_shares(stats).items())


def never_called(stats: Stats, shown: int = 5) -> str:
    """"3 of 30 targets were never called: tool/a, tool/b, tool/c"; "" when every planned target was called."""
    targets = (stats.plan or {}).get("targets") or {}
    missing = [str(label) for label in targets.get("not_called", [])]
    if not missing:
        return ""
    planned = len(targets.get("planned", []))
    listed = ", ".join(missing[:shown]) + (f" and {len(missing) - shown} more" if len(missing) > shown else "")
    return f"{len(missing)} of {planned} targets were never called: {listed}"
