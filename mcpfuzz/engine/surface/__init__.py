"""What the server declares and what a run calls: the probe, the list methods, lint's phase, the targets."""

# Hypothesis' home is chosen before any module here imports a strategy.
from mcpfuzz.engine.searches import hypothesis_bridge as _hypothesis_bridge  # noqa: F401
