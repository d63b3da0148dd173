"""Oracles: pure checks of one exchange (or of a series over the run), each registered once with its metadata."""
