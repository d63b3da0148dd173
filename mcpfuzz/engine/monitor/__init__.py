"""Watching the server over many requests: resource samples, liveness pings, session pile-up."""
