"""Static checks of what an MCP server declares: rules with stable ids, run by `mcpfuzz lint` and `run`."""
