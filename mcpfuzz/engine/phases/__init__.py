"""Searches and phases: the probe, Hypothesis searches over frames and call targets, coverage, stateful."""

# First of the package: Hypothesis' home is chosen before any module here imports a strategy.
from mcpfuzz.engine.phases import hypothesis_bridge as _hypothesis_bridge  # noqa: F401
