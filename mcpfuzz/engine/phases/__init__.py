"""Searches and phases: the probe, Hypothesis searches over frames and call targets, coverage, stateful."""
