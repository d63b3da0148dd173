"""mcpfuzz as an MCP client: the capabilities it declares and the answers it gives to what a server asks of it."""
