"""A small notes MCP server with known bugs, to try mcpfuzz on: ``python -m mcpfuzz.example``."""
