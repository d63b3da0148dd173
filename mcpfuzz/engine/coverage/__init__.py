"""--coverage: a line tracer injected into a Python or Node server mcpfuzz launches, and the lines it reports."""
