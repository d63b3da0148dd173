"""Many soak runs acting as one: a shared example database, findings, work counters and heartbeats in Redis."""
