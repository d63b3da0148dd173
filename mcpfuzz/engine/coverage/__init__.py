"""--coverage: a line tracer injected into a Python server mcpfuzz launches, and the lines it reports."""
