"""The JSON-RPC 2.0 / MCP frame model: ids, versions, frames, expectations, exchanges."""
