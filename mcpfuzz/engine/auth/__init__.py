"""The auth phase's probes: bad tokens made from the run's good one, sent with each request kind."""
