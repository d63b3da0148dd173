"""mcpfuzz inside a test suite: the pytest plugin, its `mcpfuzz` fixture, `fuzz_suite` and the result a test
asserts on."""

from mcpfuzz.testing.suite import FuzzSuite, fuzz_suite

__all__ = ["FuzzSuite", "fuzz_suite"]
