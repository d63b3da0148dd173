"""mcpfuzz: fuzzing and property-based robustness testing for MCP servers."""

__version__ = "0.1.0"
