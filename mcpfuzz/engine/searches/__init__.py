"""The searches: Hypothesis runs over frames and call targets (coverage, fuzz, stateful) and their checks."""

# First of the package: Hypothesis' home is chosen before any module here imports a strategy.
from mcpfuzz.engine.searches import hypothesis_bridge as _hypothesis_bridge  # noqa: F401
