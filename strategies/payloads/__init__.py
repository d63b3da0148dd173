"""Payload families by meaning: values that break what a property says it holds (paths, expressions, ...)."""
