"""mcpfuzz inside a test suite: the pytest plugin, its `mcpfuzz` fixture and the result a test asserts on."""
