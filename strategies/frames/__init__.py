"""Malformed and unusual JSON-RPC frames: families, drafts built at send time, expectations from bytes."""
