"""The isolation phase's clients: several at once on one HTTP server, the same JSON-RPC ids on each."""
