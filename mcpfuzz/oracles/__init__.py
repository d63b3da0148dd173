"""Oracles: pure functions that judge one exchange and raise failures."""
